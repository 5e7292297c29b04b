/* The one reader of a raw event object's JSON text (hta/rawjson.h): its
 * members split out with decoded keys, found by key, and their values read
 * as ints, exact-ns times or strings.  Used wherever a derived trace rewrites
 * events (overlays, what-if, merge) or a file is re-read for something the
 * loader keeps no slot for (merge anchors).  Numbers and escapes go through
 * the loader's own lexer routines, so a value reads here as it loads. */
#include <stdlib.h>
#include <string.h>

#include "hta/rawjson.h"
#include "trace/json_lex.h"

static const char *skip_ws(const char *p, const char *end) {
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) p++;
    return p;
}

/* p after an opening quote: the closing quote, or NULL.  *esc is set when
 * the string has escapes; a \u escape must have its four digits. */
static const char *str_end(const char *p, const char *end, int *esc) {
    *esc = 0;
    for (; p < end; p++) {
        if (*p == '"') return p;
        if (*p != '\\') continue;
        *esc = 1;
        if (end - p < 2 || (p[1] == 'u' && end - p < 6)) return NULL;
        p++;
    }
    return NULL;
}

/* End of the value at p (its first byte), or NULL. */
static const char *value_end(const char *p, const char *end) {
    int esc;
    if (p >= end) return NULL;
    if (*p == '"') {
        const char *q = str_end(p + 1, end, &esc);
        return q ? q + 1 : NULL;
    }
    if (*p == '{' || *p == '[') {
        int depth = 0;
        for (; p < end; p++) {
            if (*p == '"') {
                if (!(p = str_end(p + 1, end, &esc))) return NULL;
            } else if (*p == '{' || *p == '[') {
                depth++;
            } else if ((*p == '}' || *p == ']') && --depth == 0) {
                return p + 1;
            }
        }
        return NULL;
    }
    const char *s = p;
    while (p < end && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\n' && *p != '\r' && *p != '\t')
        p++;
    return p > s ? p : NULL;
}

static int split(hta_raw_obj *o, const char *json, size_t len) {
    const char *end = json + len, *p = skip_ws(json, end);
    size_t nkeys = 0; /* bytes of o->keys in use */
    if (p >= end || *p != '{') return -1;
    p = skip_ws(p + 1, end);
    while (p >= end || *p != '}') {
        int esc;
        if (o->n && (p >= end || *p++ != ',')) return -1;
        p = skip_ws(p, end);
        if (p >= end || *p != '"') return -1;
        const char *k = p + 1, *kq = str_end(k, end, &esc);
        if (!kq) return -1;
        p = skip_ws(kq + 1, end);
        if (p >= end || *p != ':') return -1;
        const char *v = skip_ws(p + 1, end), *ve = value_end(v, end);
        if (!ve) return -1;
        if (o->n == o->cap) {
            size_t nc = o->cap ? 2 * o->cap : 32;
            hta_raw_member *nm = realloc(o->m, nc * sizeof *nm);
            if (!nm) return -2;
            o->m = nm;
            o->cap = nc;
        }
        hta_raw_member *m = &o->m[o->n++];
        *m = (hta_raw_member){k, (size_t)(kq - k), k, (size_t)(kq - k), v, (size_t)(ve - v)};
        if (esc) { /* decoded into o->keys; key is set below, once o->keys stops moving */
            if (nkeys + m->rklen > o->keys_cap) {
                size_t nc = 2 * (nkeys + m->rklen) + 64;
                char *nk = realloc(o->keys, nc);
                if (!nk) return -2;
                o->keys = nk;
                o->keys_cap = nc;
            }
            m->klen = lex_unescape(k, kq, o->keys + nkeys);
            m->key = NULL;
            nkeys += m->klen;
        }
        p = skip_ws(ve, end);
    }
    o->close = p;
    nkeys = 0;
    for (size_t i = 0; i < o->n; i++)
        if (!o->m[i].key) {
            o->m[i].key = o->keys + nkeys;
            nkeys += o->m[i].klen;
        }
    return 0;
}

int hta_raw_obj_parse(hta_raw_obj *o, const char *json, size_t len) {
    o->n = 0;
    o->close = NULL;
    int rc = split(o, json, len);
    if (rc) { /* nothing half-split is left to read */
        o->n = 0;
        o->close = NULL;
    }
    return rc;
}

void hta_raw_obj_free(hta_raw_obj *o) {
    free(o->m);
    free(o->keys);
    memset(o, 0, sizeof *o);
}

int hta_raw_key_is(const hta_raw_member *m, const char *key) {
    size_t l = strlen(key);
    return m->klen == l && !memcmp(m->key, key, l);
}

const hta_raw_member *hta_raw_obj_get(const hta_raw_obj *o, const char *key) {
    for (size_t i = o->n; i-- > 0;)
        if (hta_raw_key_is(&o->m[i], key)) return &o->m[i];
    return NULL;
}

/* The value's number through the loader's lexer: the text is copied with the
 * terminator and padding the lexer expects. */
static int number(const hta_raw_member *m, lex_num *n) {
    if (!m->vlen || (m->val[0] != '-' && (m->val[0] < '0' || m->val[0] > '9'))) return -1;
    char stack[256 + 2 + HTA_LEX_PAD];
    char *b = m->vlen <= 256 ? stack : malloc(m->vlen + 2 + HTA_LEX_PAD);
    if (!b) return -1;
    memcpy(b, m->val, m->vlen);
    b[m->vlen] = ' '; /* ends the number before the sentinel: no "need more" answer */
    memset(b + m->vlen + 1, 0, 1 + HTA_LEX_PAD);
    lex L = {.end = b + m->vlen + 1};
    const char *q;
    int bad = lex_number(&L, b, &q, n) != LEX_OK || q != b + m->vlen;
    if (b != stack) free(b);
    return bad ? -1 : 0;
}

int hta_raw_int(const hta_raw_member *m, int64_t *v) {
    lex_num n;
    return number(m, &n) || n.frac || lex_num_scaled(&n, 0, v) ? -1 : 0;
}

int hta_raw_time_ns(const hta_raw_member *m, int64_t *ns) {
    lex_num n;
    return number(m, &n) || lex_num_scaled(&n, 3, ns) ? -1 : 0;
}

int hta_raw_str_is(const hta_raw_member *m, const char *s) {
    size_t l = strlen(s);
    int esc;
    if (m->vlen < 2 || m->val[0] != '"' || str_end(m->val + 1, m->val + m->vlen, &esc) != m->val + m->vlen - 1)
        return 0;
    const char *body = m->val + 1;
    size_t bl = m->vlen - 2;
    if (!esc) return bl == l && !memcmp(body, s, l);
    if (bl > 6 * l) return 0; /* an escape writes at least one byte per six */
    char stack[256];
    char *tmp = bl <= sizeof stack ? stack : malloc(bl);
    int same = tmp && lex_unescape(body, body + bl, tmp) == l && !memcmp(tmp, s, l);
    if (tmp != stack) free(tmp);
    return same;
}

size_t hta_raw_format_us(int64_t ns, int fixed3, char *buf) {
    char tmp[32];
    size_t n = 0;
    uint64_t x = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    unsigned frac = (unsigned)(x % 1000);
    x /= 1000;
    int digits = fixed3 ? 3 : frac % 100 == 0 ? 1 : frac % 10 == 0 ? 2 : 3;
    if (!fixed3 && !frac) digits = 0;
    for (int d = 3; d > 0; d--, frac /= 10)
        if (d <= digits) tmp[n++] = (char)('0' + frac % 10);
    if (digits) tmp[n++] = '.';
    do {
        tmp[n++] = (char)('0' + x % 10);
        x /= 10;
    } while (x);
    size_t o = 0;
    if (ns < 0) buf[o++] = '-';
    while (n) buf[o++] = tmp[--n];
    buf[o] = 0;
    return o;
}
