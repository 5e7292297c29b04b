/* Finding a top-level key of one event's raw JSON object, to rewrite it
 * (overlay flags, re-timed events) without parsing the whole event. */
#include <string.h>

#include "cpath/internal.h"

/* End of the string starting at p (at the opening quote): after the closing quote. */
static const char *skip_str(const char *p, const char *e) {
    for (p++; p < e; p++) {
        if (*p == '\\') p++;
        else if (*p == '"') return p + 1;
    }
    return e;
}

static const char *skip_ws(const char *p, const char *e) {
    while (p < e && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) p++;
    return p;
}

static const char *skip_value(const char *p, const char *e) {
    if (p >= e) return e;
    if (*p == '"') return skip_str(p, e);
    if (*p == '{' || *p == '[') {
        int depth = 0;
        while (p < e) {
            if (*p == '"') {
                p = skip_str(p, e);
                continue;
            }
            if (*p == '{' || *p == '[') depth++;
            else if (*p == '}' || *p == ']') {
                if (--depth == 0) return p + 1;
            }
            p++;
        }
        return e;
    }
    while (p < e && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\n' && *p != '\r' && *p != '\t') p++;
    return p;
}

int cp_obj_find(const char *json, size_t len, const char *key, const char **vs, const char **ve) {
    const char *e = json + len, *p = skip_ws(json, e);
    size_t kl = strlen(key);
    if (p >= e || *p != '{') return 0;
    p++;
    for (;;) {
        p = skip_ws(p, e);
        if (p >= e || *p != '"') return 0;
        const char *ks = p + 1, *kend = skip_str(p, e);
        p = skip_ws(kend, e);
        if (p >= e || *p != ':') return 0;
        p = skip_ws(p + 1, e);
        const char *v = p;
        p = skip_value(p, e);
        if ((size_t)(kend - 1 - ks) == kl && !memcmp(ks, key, kl)) {
            *vs = v;
            *ve = p;
            return 1;
        }
        p = skip_ws(p, e);
        if (p >= e || *p != ',') return 0;
        p++;
    }
}
