/* The trace parser's lexer (json_lex.h): UTF-8 and escape checks, number
 * scanning and rounding, validating skips of JSON values. */
#include "trace/json_lex.h"

#include "trace/json_scan.h"

#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Validates one UTF-8 sequence starting at p (a byte >= 0x80).  Returns its
 * length, 0 if invalid, -1 if it runs into the sentinel. */
static int utf8_seq(const unsigned char *p, const unsigned char *end) {
    unsigned c = p[0];
    int n;
    unsigned min;
    if (c >= 0xC2 && c <= 0xDF) n = 2, min = 0x80;
    else if (c >= 0xE0 && c <= 0xEF) n = 3, min = 0x800;
    else if (c >= 0xF0 && c <= 0xF4) n = 4, min = 0x10000;
    else return 0;
    unsigned cp = c & (0x7F >> n);
    for (int i = 1; i < n; i++) {
        if (p + i >= end) return -1;
        if ((p[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (p[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return n;
}

int lex_utf8_valid(const char *s, size_t n) {
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    while (p < end) {
        if (*p < 0x80) {
            if (!*p) return 0;
            p++;
            continue;
        }
        int k = utf8_seq(p, end);
        if (k <= 0) return 0;
        p += k;
    }
    return 1;
}

const char *lex_ws_run(const char *p) {
#if defined(__SSE2__)
    for (;;) {
        __m128i v = _mm_loadu_si128((const __m128i *)p);
        __m128i ws = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')),
                                               _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'))),
                                  _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\r')),
                                               _mm_cmpeq_epi8(v, _mm_set1_epi8('\t'))));
        unsigned mask = (unsigned)_mm_movemask_epi8(ws) ^ 0xFFFFu;
        if (mask) return p + __builtin_ctz(mask); /* the sentinel NUL always stops it */
        p += 16;
    }
#else
    while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t') p++;
    return p;
#endif
}

static int hexval(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

lex_rc lex_string_slow(lex *L, const char *p, const char **out, int *esc) {
    const unsigned char *s = (const unsigned char *)p;
    const unsigned char *end = (const unsigned char *)L->end;
    int e = 0;
    for (;;) {
        s = (const unsigned char *)lex_plain_end((const char *)s);
        unsigned c = *s;
        if (c == '"') {
            *out = (const char *)s;
            *esc = e;
            return LEX_OK;
        }
        if (c == '\\') {
            e = 1;
            if (s + 1 >= end) return LEX_MORE;
            switch (s[1]) {
            case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
                s += 2;
                continue;
            case 'u':
                for (int i = 2; i < 6; i++) {
                    if (s + i >= end) return LEX_MORE;
                    if (hexval(s[i]) < 0) return LEX_ERROR(L, (const char *)s, "invalid \\u escape");
                }
                s += 6;
                continue;
            default:
                return LEX_ERROR(L, (const char *)s, "invalid escape in string");
            }
        }
        if (c >= 0x80) {
            int n = utf8_seq(s, end);
            if (n < 0) return LEX_MORE;
            if (n == 0) return LEX_ERROR(L, (const char *)s, "invalid UTF-8 in string");
            s += n;
            continue;
        }
        /* control character (the NUL sentinel is one) */
        if (s >= end) return LEX_MORE;
        return LEX_ERROR(L, (const char *)s, "control character in string");
    }
}

static size_t put_utf8(char *d, unsigned cp) {
    if (cp < 0x80) { d[0] = (char)cp; return 1; }
    if (cp < 0x800) { d[0] = (char)(0xC0 | (cp >> 6)); d[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        d[0] = (char)(0xE0 | (cp >> 12));
        d[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        d[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    d[0] = (char)(0xF0 | (cp >> 18));
    d[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    d[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    d[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

static unsigned hex4(const char *p) {
    return (unsigned)(hexval(p[0]) << 12 | hexval(p[1]) << 8 | hexval(p[2]) << 4 | hexval(p[3]));
}

size_t lex_unescape(const char *p, const char *q, char *dst) {
    char *d = dst;
    while (p < q) {
        if (*p != '\\') {
            *d++ = *p++;
            continue;
        }
        char c = p[1];
        p += 2;
        switch (c) {
        case 'b': *d++ = '\b'; break;
        case 'f': *d++ = '\f'; break;
        case 'n': *d++ = '\n'; break;
        case 'r': *d++ = '\r'; break;
        case 't': *d++ = '\t'; break;
        case 'u': {
            unsigned cp = hex4(p);
            p += 4;
            if (cp >= 0xD800 && cp <= 0xDBFF && p + 6 <= q && p[0] == '\\' && p[1] == 'u') {
                unsigned lo = hex4(p + 2);
                if (lo >= 0xDC00 && lo <= 0xDFFF) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    p += 6;
                }
            }
            if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD; /* lone surrogate */
            /* \u escapes never expand beyond the 6 input bytes they used */
            d += put_utf8(d, cp);
            break;
        }
        default: *d++ = c; break;
        }
    }
    return (size_t)(d - dst);
}



lex_rc lex_number_slow(lex *L, const char *p, const char **out, lex_num *n) {
    const char *s = p;
    memset(n, 0, sizeof *n);
    if (*s == '-') {
        n->neg = 1;
        s++;
    }
    if (*s < '0' || *s > '9') return LEX_END_OR(L, s, "invalid number");
    int digits = 0; /* significant digits kept */
    if (*s == '0') {
        s++;
        if (*s >= '0' && *s <= '9') return LEX_ERROR(L, s, "leading zero in number");
    } else {
        for (; *s >= '0' && *s <= '9'; s++) {
            if (digits < 19) {
                n->mant = n->mant * 10 + (uint64_t)(*s - '0');
                if (n->mant) digits++;
            } else {
                n->exp10++;
                if (*s != '0') n->sticky = 1;
            }
        }
    }
    if (*s == '.') {
        n->frac = 1;
        s++;
        if (*s < '0' || *s > '9') return LEX_END_OR(L, s, "invalid number");
        for (; *s >= '0' && *s <= '9'; s++) {
            if (digits < 19) {
                n->mant = n->mant * 10 + (uint64_t)(*s - '0');
                n->exp10--;
                if (n->mant) digits++;
            } else if (*s != '0') {
                n->sticky = 1;
            }
        }
    }
    if (*s == 'e' || *s == 'E') {
        n->frac = 1;
        s++;
        int eneg = 0;
        if (*s == '+' || *s == '-') eneg = *s++ == '-';
        if (*s < '0' || *s > '9') return LEX_END_OR(L, s, "invalid number");
        int e = 0;
        for (; *s >= '0' && *s <= '9'; s++)
            if (e < 100000) e = e * 10 + (*s - '0');
        n->exp10 += eneg ? -e : e;
    }
    if (s >= L->end) return LEX_MORE; /* the number may continue in the next block */
    *out = s;
    return LEX_OK;
}

static const uint64_t POW10[20] = {1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull,
    10000000ull, 100000000ull, 1000000000ull, 10000000000ull, 100000000000ull,
    1000000000000ull, 10000000000000ull, 100000000000000ull, 1000000000000000ull,
    10000000000000000ull, 100000000000000000ull, 1000000000000000000ull,
    10000000000000000000ull};

int lex_num_scaled(const lex_num *n, int scale, int64_t *v) {
    int e = n->exp10 + scale;
    uint64_t m = n->mant, r;
    if (m == 0) {
        *v = 0;
        return 0;
    }
    if (e >= 0) {
        if (e > 19) return -1;
        if (m > UINT64_MAX / POW10[e]) return -1;
        r = m * POW10[e];
    } else if (e < -19) {
        r = 0;
    } else {
        uint64_t d = POW10[-e];
        r = m / d;
        uint64_t rem = m % d, half = d / 2;
        if (rem > half || (rem == half && (n->sticky || (r & 1)))) r++;
    }
    if (r > (uint64_t)INT64_MAX) return -1;
    *v = n->neg ? -(int64_t)r : (int64_t)r;
    return 0;
}

int lex_num_int(const lex_num *n, int64_t *v) {
    if (n->sticky) return -1; /* digits were dropped: not exact */
    if (n->mant && n->exp10 < 0) {
        if (n->exp10 < -19 || n->mant % POW10[-n->exp10]) return -1;
    }
    return lex_num_scaled(n, 0, v);
}

double lex_num_double(const char *p, const char *q) {
    char tmp[64];
    size_t n = (size_t)(q - p);
    if (n >= sizeof tmp) return strtod(p, NULL); /* p is followed by a non-number byte */
    memcpy(tmp, p, n);
    tmp[n] = 0;
    return strtod(tmp, NULL);
}

static lex_rc lit(lex *L, const char *p, const char *word, const char **out) {
    size_t n = strlen(word);
    for (size_t i = 0; i < n; i++) {
        if (p + i >= L->end) return LEX_MORE;
        if (p[i] != word[i]) return LEX_ERROR(L, p, "invalid literal");
    }
    *out = p + n;
    return LEX_OK;
}

#define MAX_DEPTH 256

/* A number whose value nobody needs: check the grammar, skip the digits. */
static lex_rc skip_number(lex *L, const char *p, const char **out) {
    const char *s = p + (*p == '-');
    if (*s == '0' ? is_digit(s[1]) : !is_digit(*s)) {
        lex_num n;
        return lex_number_slow(L, p, out, &n); /* reports the error, or handles it */
    }
    for (;;) {
        uint64_t x = nondigits8(load8(s));
        if (x) {
            s += __builtin_ctzll(x) >> 3;
            break;
        }
        s += 8;
    }
    if (*s == '.') {
        s++;
        if (!is_digit(*s)) return LEX_END_OR(L, s, "invalid number");
        while (is_digit(*s)) s++;
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        s += *s == '+' || *s == '-';
        if (!is_digit(*s)) return LEX_END_OR(L, s, "invalid number");
        while (is_digit(*s)) s++;
    }
    if (s >= L->end) return LEX_MORE;
    *out = s;
    return LEX_OK;
}

/* ---------- the structure walk: skipping a container on the SIMD paths (json_scan.h) ----------
 * The walk visits only the bytes the scan marks (structural characters, opening quotes, the first byte of
 * numbers and literals) and checks the grammar between them with a stack of open containers; strings
 * whose bodies are plain printable ASCII are taken whole from the quote masks, other strings, numbers and
 * literals are read by the lexer's own checks.  It accepts exactly what skip_bytes accepts: anything else
 * (a grammar error, a bad string, the end of the bytes read, too deep a nesting) gives WALK_NO, and
 * skip_bytes goes on from where it handed over, byte by byte, to say what is wrong with the same message
 * and offset. */

#define WALK_NO ((lex_rc)3)

/* Classifies blocks in order until the one holding q; 0 when that would pass the block with the sentinel
 * (the padding after it is readable, not text). */
static inline int walk_to(lex *L, scan_block_fn fn, const char *q) {
    while (q >= L->scan_base + 64) {
        if (L->end < L->scan_base + 64) return 0;
        L->scan_base += 64;
        fn(L->scan_base, &L->scan_st, &L->scan_m);
    }
    return 1;
}

/* The first marked byte at or after cur, NULL at the sentinel's block. */
static inline const char *walk_next(lex *L, scan_block_fn fn, const char *cur) {
    for (;;) {
        if (!walk_to(L, fn, cur)) return NULL;
        uint64_t bits = L->scan_m.sig & (~0ull << (cur - L->scan_base));
        if (bits) return L->scan_base + __builtin_ctzll(bits);
        cur = L->scan_base + 64;
    }
}

/* The closing quote of the string opened at o; *careful when a body byte needs the lexer's look. */
static inline const char *walk_close(lex *L, scan_block_fn fn, const char *o, int *careful) {
    const char *cur = o + 1;
    for (;;) {
        if (!walk_to(L, fn, cur)) return NULL;
        uint64_t from = ~0ull << (cur - L->scan_base), c = L->scan_m.close_q & from;
        uint64_t below = c ? (c & (0 - c)) - 1 : ~0ull;
        if (L->scan_m.careful & from & below) *careful = 1;
        if (c) return L->scan_base + __builtin_ctzll(c);
        cur = L->scan_base + 64;
    }
}

/* What a walk expects next: a value; the first value or ']'; the first key or '}'; a key; ':'; ',' or a
 * close. */
enum { W_VALUE, W_FIRST_VALUE, W_FIRST_KEY, W_KEY, W_COLON, W_AFTER };

/* Goes on with a skip at p, a value's first byte, inside the depth containers of stack. */
static lex_rc skip_walk(lex *L, scan_block_fn fn, const char *p, const char *outer, int depth,
                        const char **out) {
    /* the masks of the block holding p serve when there are some; else a new walk starts at p, which is
     * outside any string (going on from an older block would classify every block in between) */
    if (!L->scan_base || p < L->scan_base || p >= L->scan_base + 64) {
        L->scan_base = p;
        memset(&L->scan_st, 0, sizeof L->scan_st);
        fn(p, &L->scan_st, &L->scan_m);
    }
    char stack[MAX_DEPTH]; /* a copy: on WALK_NO the caller goes on with its own */
    memcpy(stack, outer, (size_t)depth);
    int state = W_VALUE;
    const char *cur = p;
    for (;;) {
        const char *t = walk_next(L, fn, cur);
        if (!t) return WALK_NO;
        char c = *t;
        int value = state == W_VALUE || state == W_FIRST_VALUE;
        switch (c) {
        case '{':
        case '[':
            if (!value || depth == MAX_DEPTH) return WALK_NO;
            stack[depth++] = c;
            state = c == '{' ? W_FIRST_KEY : W_FIRST_VALUE;
            cur = t + 1;
            break;
        case '}':
        case ']': {
            char open = c == '}' ? '{' : '[';
            if (!depth || stack[depth - 1] != open) return WALK_NO;
            if (state != W_AFTER && state != (open == '{' ? W_FIRST_KEY : W_FIRST_VALUE)) return WALK_NO;
            cur = t + 1;
            if (--depth == 0) {
                *out = cur;
                return LEX_OK;
            }
            state = W_AFTER;
            break;
        }
        case ',':
            if (state != W_AFTER) return WALK_NO;
            state = stack[depth - 1] == '{' ? W_KEY : W_VALUE;
            cur = t + 1;
            break;
        case ':':
            if (state != W_COLON) return WALK_NO;
            state = W_VALUE;
            cur = t + 1;
            break;
        case '"': { /* marked quotes are opening ones */
            int key = state == W_KEY || state == W_FIRST_KEY, careful = 0, esc;
            if (!key && !value) return WALK_NO;
            const char *q = walk_close(L, fn, t, &careful), *q2;
            if (!q) return WALK_NO;
            if (careful && (lex_string_slow(L, t + 1, &q2, &esc) != LEX_OK || q2 != q)) return WALK_NO;
            state = key ? W_COLON : W_AFTER;
            cur = q + 1;
            break;
        }
        default: {
            if (!value) return WALK_NO;
            /* an integer whose run of other bytes ends in this block: its digits are in the masks */
            int sh = (int)(t - L->scan_base), neg = c == '-';
            uint64_t o = L->scan_m.other >> sh, run = o & ~(o + 1), dg = (L->scan_m.digit >> sh) >> neg;
            uint64_t nd = run >> neg; /* the digits' part of the run */
            if (run != (~0ull >> sh) && nd && (dg & nd) == nd && (t[neg] != '0' || nd == 1)) {
                state = W_AFTER;
                cur = t + __builtin_popcountll(run);
                break;
            }
            const char *e;
            lex_rc rc = c == 't' ? lit(L, t, "true", &e) : c == 'f' ? lit(L, t, "false", &e)
                      : c == 'n' ? lit(L, t, "null", &e) : skip_number(L, t, &e);
            if (rc) return WALK_NO;
            /* the token must be the whole run of other bytes ("1x", "nullx" are not) */
            switch (*e) {
            case ' ': case '\n': case '\r': case '\t': case ',': case ':': case '"':
            case '[': case ']': case '{': case '}':
                break;
            default:
                return WALK_NO;
            }
            state = W_AFTER;
            cur = e;
            break;
        }
        }
    }
}

/* Past a member's key and its ':' (*out), the key not wanted: in an object being skipped. */
static lex_rc skip_key(lex *L, const char *p, const char **out) {
    const char *k;
    size_t kn;
    int esc;
    return lex_key(L, p, &k, &kn, &esc, out);
}

/* The byte-by-byte skip: the whole of the scalar path, the start of every skip on the SIMD paths (Kineto's
 * skipped values are a few bytes: "[[], []]", "[\"\", \"\"]", where setting up a walk costs more than
 * it saves) and the judge of anything the structure walk does not accept.  fn: the walk's classifier (a
 * SIMD path), which takes over the value's rest once it has run scan_walk_after() bytes. */
static lex_rc skip_bytes(lex *L, const char *p, const char **out, scan_block_fn fn) {
    char stack[MAX_DEPTH]; /* '{' or '[' */
    int depth = 0;
    lex_rc rc;
    const char *hand = fn ? p + scan_walk_after() : NULL;
    for (;;) {
        /* expecting a value */
        p = lex_ws(p);
        /* a long value goes on in the structure walk, once */
        if (fn && p >= hand && depth > 0) {
            if (skip_walk(L, fn, p, stack, depth, out) == LEX_OK) return LEX_OK;
            lex_scan_reset(L);
            fn = NULL;
        }
        switch (*p) {
        case '"': {
            int esc;
            if ((rc = lex_string(L, p + 1, &p, &esc))) return rc;
            p++;
            break;
        }
        case '{':
        case '[': {
            if (depth == MAX_DEPTH) return LEX_ERROR(L, p, "JSON nested too deeply");
            char open = *p;
            stack[depth++] = open;
            p = lex_ws(p + 1);
            if (*p == (open == '{' ? '}' : ']')) {
                depth--;
                p++;
                break;
            }
            if (open == '{' && (rc = skip_key(L, p, &p))) return rc;
            continue;
        }
        case 't': if ((rc = lit(L, p, "true", &p))) return rc; break;
        case 'f': if ((rc = lit(L, p, "false", &p))) return rc; break;
        case 'n': if ((rc = lit(L, p, "null", &p))) return rc; break;
        default:
            if ((rc = skip_number(L, p, &p))) return rc;
            break;
        }
        /* after a value: close containers or move to the next element */
        for (;;) {
            if (depth == 0) {
                *out = p;
                return LEX_OK;
            }
            p = lex_ws(p);
            char open = stack[depth - 1];
            if (*p == ',') {
                p = lex_ws(p + 1);
                if (open == '{' && (rc = skip_key(L, p, &p))) return rc;
                break;
            }
            if (*p == (open == '{' ? '}' : ']')) {
                depth--;
                p++;
                continue;
            }
            return LEX_END_OR(L, p, open == '{' ? "expected ',' or '}'" : "expected ',' or ']'");
        }
    }
}

lex_rc lex_skip_value(lex *L, const char *p, const char **out) {
    return skip_bytes(L, p, out, scan_block_get());
}
