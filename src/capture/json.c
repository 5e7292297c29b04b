/* A small JSON reader and writer for the daemon's requests and replies (hta/capture.h).  Requests
 * come from the network, so the reader is strict: one value, bounded nesting, valid escapes, every
 * error with its byte offset.  Trace files never come through here (src/trace/ has their parser). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hta/capture.h"
#include "hta/util.h"

#define MAX_DEPTH 32

typedef struct jp {
    const char *s;
    size_t n, i;
    hta_error *err;
} jp;

static hta_status perr(jp *p, const char *what) {
    return hta_fail(p->err, HTA_EFORMAT, "JSON at byte %zu: %s", p->i, what);
}

static void skip_ws(jp *p) {
    while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' || p->s[p->i] == '\r'))
        p->i++;
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int hex4(jp *p, unsigned *u) {
    if (p->i + 4 > p->n) return -1;
    *u = 0;
    for (int k = 0; k < 4; k++) {
        int h = hexval(p->s[p->i + k]);
        if (h < 0) return -1;
        *u = *u * 16 + (unsigned)h;
    }
    p->i += 4;
    return 0;
}

static hta_status parse_string(jp *p, char **out) {
    p->i++; /* the quote */
    size_t cap = 16, len = 0;
    char *b = malloc(cap);
    if (!b) return hta_oom(p->err);
    for (;;) {
        if (p->i >= p->n) {
            free(b);
            return perr(p, "unterminated string");
        }
        unsigned char c = (unsigned char)p->s[p->i];
        char tmp[4];
        size_t tn = 1;
        if (c == '"') {
            p->i++;
            break;
        } else if (c < 0x20) {
            free(b);
            return perr(p, "control character in string");
        } else if (c == '\\') {
            if (++p->i >= p->n) continue;
            char e = p->s[p->i++];
            unsigned u;
            switch (e) {
            case '"': tmp[0] = '"'; break;
            case '\\': tmp[0] = '\\'; break;
            case '/': tmp[0] = '/'; break;
            case 'b': tmp[0] = '\b'; break;
            case 'f': tmp[0] = '\f'; break;
            case 'n': tmp[0] = '\n'; break;
            case 'r': tmp[0] = '\r'; break;
            case 't': tmp[0] = '\t'; break;
            case 'u':
                if (hex4(p, &u)) {
                    free(b);
                    return perr(p, "bad \\u escape");
                }
                if (u >= 0xD800 && u < 0xDC00) { /* a surrogate pair */
                    unsigned lo;
                    if (p->i + 2 > p->n || p->s[p->i] != '\\' || p->s[p->i + 1] != 'u' || (p->i += 2, hex4(p, &lo)) ||
                        lo < 0xDC00 || lo > 0xDFFF) {
                        free(b);
                        return perr(p, "unpaired surrogate");
                    }
                    u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
                } else if (u >= 0xDC00 && u < 0xE000) {
                    free(b);
                    return perr(p, "unpaired surrogate");
                }
                if (u == 0) {
                    free(b);
                    return perr(p, "\\u0000 in string");
                }
                if (u < 0x80) tmp[0] = (char)u;
                else if (u < 0x800) tmp[0] = (char)(0xC0 | (u >> 6)), tmp[1] = (char)(0x80 | (u & 63)), tn = 2;
                else if (u < 0x10000)
                    tmp[0] = (char)(0xE0 | (u >> 12)), tmp[1] = (char)(0x80 | ((u >> 6) & 63)),
                    tmp[2] = (char)(0x80 | (u & 63)), tn = 3;
                else
                    tmp[0] = (char)(0xF0 | (u >> 18)), tmp[1] = (char)(0x80 | ((u >> 12) & 63)),
                    tmp[2] = (char)(0x80 | ((u >> 6) & 63)), tmp[3] = (char)(0x80 | (u & 63)), tn = 4;
                break;
            default:
                p->i--;
                free(b);
                return perr(p, "bad escape");
            }
        } else {
            tmp[0] = (char)c;
            p->i++;
        }
        if (len + tn + 1 > cap) {
            cap *= 2;
            char *nb = realloc(b, cap);
            if (!nb) {
                free(b);
                return hta_oom(p->err);
            }
            b = nb;
        }
        memcpy(b + len, tmp, tn);
        len += tn;
    }
    b[len] = 0;
    *out = b;
    return HTA_OK;
}

static hta_status parse_value(jp *p, hta_jval *v, int depth);

static hta_status parse_items(jp *p, hta_jval *v, int depth, int obj) {
    char close = obj ? '}' : ']';
    size_t cap = 0;
    p->i++;
    skip_ws(p);
    if (p->i < p->n && p->s[p->i] == close) {
        p->i++;
        return HTA_OK;
    }
    for (;;) {
        if (v->n == cap) {
            size_t nc = cap ? cap * 2 : 4;
            hta_jval *nv = realloc(v->v, nc * sizeof *nv);
            if (!nv) return hta_oom(p->err);
            v->v = nv;
            if (obj) {
                char **nk = realloc(v->k, nc * sizeof *nk);
                if (!nk) return hta_oom(p->err);
                v->k = nk;
            }
            cap = nc;
        }
        skip_ws(p);
        if (obj) {
            if (p->i >= p->n || p->s[p->i] != '"') return perr(p, "expected a member name");
            char *key;
            HTA_TRY(parse_string(p, &key));
            v->k[v->n] = key;
            memset(&v->v[v->n], 0, sizeof v->v[v->n]);
            v->n++; /* counted now, so a failure below frees the key */
            skip_ws(p);
            if (p->i >= p->n || p->s[p->i] != ':') return perr(p, "expected ':'");
            p->i++;
            HTA_TRY(parse_value(p, &v->v[v->n - 1], depth + 1));
        } else {
            memset(&v->v[v->n], 0, sizeof v->v[v->n]);
            v->n++;
            HTA_TRY(parse_value(p, &v->v[v->n - 1], depth + 1));
        }
        skip_ws(p);
        if (p->i < p->n && p->s[p->i] == ',') {
            p->i++;
            continue;
        }
        if (p->i < p->n && p->s[p->i] == close) {
            p->i++;
            return HTA_OK;
        }
        return perr(p, obj ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static hta_status parse_number(jp *p, hta_jval *v) {
    size_t st = p->i;
    if (p->i < p->n && p->s[p->i] == '-') p->i++;
    if (p->i >= p->n || p->s[p->i] < '0' || p->s[p->i] > '9') return perr(p, "bad number");
    int integral = 1;
    while (p->i < p->n && strchr("0123456789.eE+-", p->s[p->i])) {
        if (strchr(".eE", p->s[p->i])) integral = 0;
        p->i++;
    }
    char tmp[64];
    if (p->i - st >= sizeof tmp) return perr(p, "number too long");
    memcpy(tmp, p->s + st, p->i - st);
    tmp[p->i - st] = 0;
    char *end;
    v->type = HTA_JNUM;
    v->d = strtod(tmp, &end);
    if (*end || !isfinite(v->d)) {
        p->i = st;
        return perr(p, *end ? "bad number" : "number out of range");
    }
    if (integral) {
        errno = 0;
        long long x = strtoll(tmp, &end, 10);
        if (!*end && errno == 0) v->is_int = 1, v->i = x;
    }
    return HTA_OK;
}

static hta_status parse_value(jp *p, hta_jval *v, int depth) {
    if (depth > MAX_DEPTH) return perr(p, "nested too deep");
    skip_ws(p);
    if (p->i >= p->n) return perr(p, "unexpected end");
    char c = p->s[p->i];
    if (c == '{') {
        v->type = HTA_JOBJ;
        return parse_items(p, v, depth, 1);
    }
    if (c == '[') {
        v->type = HTA_JARR;
        return parse_items(p, v, depth, 0);
    }
    if (c == '"') {
        v->type = HTA_JSTR;
        return parse_string(p, &v->s);
    }
    static const struct { const char *w; hta_jtype t; int b; } words[] = {
        {"true", HTA_JBOOL, 1}, {"false", HTA_JBOOL, 0}, {"null", HTA_JNULL, 0}};
    for (size_t k = 0; k < 3; k++) {
        size_t wl = strlen(words[k].w);
        if (p->n - p->i >= wl && !memcmp(p->s + p->i, words[k].w, wl)) {
            v->type = words[k].t;
            v->b = words[k].b;
            p->i += wl;
            return HTA_OK;
        }
    }
    return parse_number(p, v);
}

static void free_inner(hta_jval *v) {
    free(v->s);
    for (size_t k = 0; k < v->n; k++) {
        free_inner(&v->v[k]);
        if (v->k) free(v->k[k]);
    }
    free(v->v);
    free(v->k);
}

void hta_json_free(hta_jval *v) {
    if (!v) return;
    free_inner(v);
    free(v);
}

hta_status hta_json_parse(const char *text, size_t len, hta_jval **out, hta_error *err) {
    *out = NULL;
    hta_jval *v = calloc(1, sizeof *v);
    if (!v) return hta_oom(err);
    jp p = {text, len, 0, err};
    hta_status st = parse_value(&p, v, 0);
    if (!st) {
        skip_ws(&p);
        if (p.i != p.n) st = perr(&p, "text after the value");
    }
    if (st) {
        hta_json_free(v);
        return st;
    }
    *out = v;
    return HTA_OK;
}

const hta_jval *hta_json_get(const hta_jval *obj, const char *key) {
    if (!obj || obj->type != HTA_JOBJ) return NULL;
    for (size_t k = obj->n; k-- > 0;)
        if (!strcmp(obj->k[k], key)) return &obj->v[k];
    return NULL;
}

int64_t hta_json_int(const hta_jval *obj, const char *key, int64_t def) {
    const hta_jval *v = hta_json_get(obj, key);
    return v && v->type == HTA_JNUM && v->is_int ? v->i : def;
}

const char *hta_json_str(const hta_jval *obj, const char *key) {
    const hta_jval *v = hta_json_get(obj, key);
    return v && v->type == HTA_JSTR ? v->s : NULL;
}

/* ---- the text buffer ---- */

void hta_sb_add(hta_sbuf *b, const char *s, size_t n) {
    if (b->oom) return;
    if (b->len + n + 1 > b->cap) {
        size_t nc = b->cap ? b->cap : 256;
        while (b->len + n + 1 > nc) nc *= 2;
        char *np = realloc(b->p, nc);
        if (!np) {
            b->oom = 1;
            return;
        }
        b->p = np;
        b->cap = nc;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

void hta_sb_printf(hta_sbuf *b, const char *fmt, ...) {
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof tmp) {
        hta_sb_add(b, tmp, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        b->oom = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    hta_sb_add(b, big, (size_t)n);
    free(big);
}

static int sb_put(void *ctx, const char *s, size_t n) {
    hta_sb_add(ctx, s, n);
    return 0;
}

void hta_sb_quote(hta_sbuf *b, const char *s) { hta_json_quote(s ? s : "", sb_put, b); }

void hta_sb_free(hta_sbuf *b) {
    free(b->p);
    memset(b, 0, sizeof *b);
}
