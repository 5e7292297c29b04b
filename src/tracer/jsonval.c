/* Checks JSON text given as a value of type HTA_TRACER_JSON (Python lists and
 * dicts arrive this way): it is written into the file verbatim, so it must be
 * exactly one RFC 8259 value, valid UTF-8, or every reader of the file breaks.
 * Recursive descent, nesting capped so that hostile text cannot exhaust the
 * stack. */
#include "internal.h"

#define MAX_DEPTH 64

typedef struct rd {
    const unsigned char *p, *end;
} rd;

static void ws(rd *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
        r->p++;
}

static int hex(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int string(rd *r)
{
    r->p++; /* opening quote */
    while (r->p < r->end) {
        unsigned char c = *r->p;
        if (c == '"') {
            r->p++;
            return 1;
        }
        if (c < 0x20)
            return 0;
        if (c == '\\') {
            if (r->end - r->p < 2)
                return 0;
            unsigned char e = r->p[1];
            if (e == 'u') {
                if (r->end - r->p < 6 || !hex(r->p[2]) || !hex(r->p[3]) || !hex(r->p[4]) || !hex(r->p[5]))
                    return 0;
                r->p += 6;
            } else if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' ||
                       e == 't') {
                r->p += 2;
            } else {
                return 0;
            }
        } else if (c < 0x80) {
            r->p++;
        } else {
            size_t n = htat_utf8_len(r->p, (size_t)(r->end - r->p));
            if (!n)
                return 0;
            r->p += n;
        }
    }
    return 0;
}

static int digits(rd *r)
{
    const unsigned char *s = r->p;
    while (r->p < r->end && *r->p >= '0' && *r->p <= '9')
        r->p++;
    return r->p > s;
}

static int number(rd *r)
{
    if (*r->p == '-')
        r->p++;
    if (r->p < r->end && *r->p == '0')
        r->p++;
    else if (!digits(r))
        return 0;
    if (r->p < r->end && *r->p == '.') {
        r->p++;
        if (!digits(r))
            return 0;
    }
    if (r->p < r->end && (*r->p == 'e' || *r->p == 'E')) {
        r->p++;
        if (r->p < r->end && (*r->p == '+' || *r->p == '-'))
            r->p++;
        if (!digits(r))
            return 0;
    }
    return 1;
}

static int word(rd *r, const char *w)
{
    for (; *w; w++, r->p++)
        if (r->p >= r->end || *r->p != (unsigned char)*w)
            return 0;
    return 1;
}

static int value(rd *r, int depth)
{
    ws(r);
    if (r->p >= r->end)
        return 0;
    unsigned char c = *r->p;
    if (c == '{' || c == '[') {
        unsigned char close = c == '{' ? '}' : ']';
        if (depth >= MAX_DEPTH)
            return 0;
        r->p++;
        ws(r);
        if (r->p < r->end && *r->p == close) {
            r->p++;
            return 1;
        }
        for (;;) {
            if (c == '{') {
                ws(r);
                if (r->p >= r->end || *r->p != '"' || !string(r))
                    return 0;
                ws(r);
                if (r->p >= r->end || *r->p++ != ':')
                    return 0;
            }
            if (!value(r, depth + 1))
                return 0;
            ws(r);
            if (r->p >= r->end)
                return 0;
            if (*r->p == ',') {
                r->p++;
                continue;
            }
            if (*r->p++ != close)
                return 0;
            return 1;
        }
    }
    if (c == '"')
        return string(r);
    if (c == '-' || (c >= '0' && c <= '9'))
        return number(r);
    if (c == 't')
        return word(r, "true");
    if (c == 'f')
        return word(r, "false");
    if (c == 'n')
        return word(r, "null");
    return 0;
}

int htat_json_valid(const char *s, size_t len)
{
    if (!s)
        return 0;
    rd r = {(const unsigned char *)s, (const unsigned char *)s + len};
    if (!value(&r, 0))
        return 0;
    ws(&r);
    return r.p == r.end;
}
