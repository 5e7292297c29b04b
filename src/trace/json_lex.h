/* Lexical helpers for the trace parser: strings, numbers, whitespace and a
 * validating skip of any JSON value.  All work on a buffer that ends with a
 * NUL sentinel and at least HTA_LEX_PAD readable bytes after it, so vector
 * loads never fault and every scan stops at the buffer end. */
#ifndef HTA_TRACE_JSON_LEX_H
#define HTA_TRACE_JSON_LEX_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hta/error.h"
#include "trace/json_scan.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define HTA_LEX_PAD 64

/* The lexer's own result, internal to the trace parser and the few readers
 * of raw event text.  It is not a status: LEX_MORE is no failure but "this
 * unit runs past the bytes read so far" (the streaming parser reads more and
 * parses the unit again).  On LEX_ERR the lex holds the failure: its
 * hta_status (HTA_EFORMAT unless LEX_FAIL said otherwise), a static message
 * and the byte it is about.  The parser turns that into hta_status + hta_error
 * naming the file and byte offset at exactly one place (parse.c, run()); the
 * hot paths only test `if (rc) return rc;`. */
typedef enum lex_rc { LEX_OK = 0, LEX_MORE = 1, LEX_ERR = 2 } lex_rc;

typedef struct lex {
    const char *end;  /* the sentinel position: data ends here */
    const char *err_at;
    const char *err;  /* static message */
    hta_status code;  /* of the failure (LEX_ERR) */
    /* Where the structure walk (json_lex.c, json_scan.h) stands: the block it last classified (NULL:
     * none), the carries and masks there.  The parser moves forward through valid text, so a later skip
     * goes on from here; a skip before it, a walk that gave up and a refill (lex_scan_reset) start anew. */
    const char *scan_base;
    scan_state scan_st;
    scan_masks scan_m;
} lex;

static inline void lex_scan_reset(lex *L) { L->scan_base = NULL; }

const char *lex_ws_run(const char *p);

/* Whitespace: Kineto writes none or one space between most tokens, and a
 * newline with indentation between events; only that last case loops. */
static inline const char *lex_ws(const char *p) {
    if ((unsigned char)*p > ' ') return p;
    if (*p == ' ' && (unsigned char)p[1] > ' ') return p + 1;
    return lex_ws_run(p);
}

/* p points after the opening quote.  On LEX_OK *out points at the closing
 * quote; *esc is set when the string has escapes. Validates UTF-8. */
lex_rc lex_string_slow(lex *L, const char *p, const char **out, int *esc);
/* Whether [s, s + n) is valid UTF-8 (what the lexer accepts in a string: no overlong forms, surrogates or
 * code points past U+10FFFF) with no NUL byte. */
int lex_utf8_valid(const char *s, size_t n);
/* Unescapes the string body [p, q) into dst (room for q - p bytes);
 * returns the length. Input was validated by lex_string. */
size_t lex_unescape(const char *p, const char *q, char *dst);

/* Number scanned at p: *out = first byte after it. */
typedef struct lex_num {
    int neg;
    int frac;      /* had a fraction or an exponent */
    uint64_t mant; /* significant digits (at most 19) */
    int exp10;     /* value = mant * 10^exp10 */
    int sticky;    /* non-zero digits were dropped beyond 19 significant */
} lex_num;
lex_rc lex_number_slow(lex *L, const char *p, const char **out, lex_num *n);
/* value * 10^scale as int64, rounding half to even; -1 on overflow. */
int lex_num_scaled(const lex_num *n, int scale, int64_t *v);
/* The value as int64 when it is exactly an integer (1e3 and 2.0 are; 1.5 and 1e30 are not): 0, else -1. */
int lex_num_int(const lex_num *n, int64_t *v);
double lex_num_double(const char *p, const char *q);


/* Skips one JSON value at p, validating it (depth-limited). */
lex_rc lex_skip_value(lex *L, const char *p, const char **out);

/* A failure with status st (HTA_ENOMEM, HTA_ESTOPPED, ...) at byte `at`. */
#define LEX_FAIL(L, at, st, msg) ((L)->err_at = (at), (L)->err = (msg), (L)->code = (st), LEX_ERR)
/* Bytes that are not valid JSON (or not a valid trace): HTA_EFORMAT. */
#define LEX_ERROR(L, at, msg) LEX_FAIL(L, at, HTA_EFORMAT, msg)
/* A NUL at the sentinel means "need more bytes"; elsewhere it is an error. */
#define LEX_END_OR(L, at, msg) ((at) >= (L)->end ? LEX_MORE : LEX_ERROR(L, at, msg))

/* The first byte at or after s that ends plain ASCII string text: a quote,
 * a backslash, a control character (the sentinel NUL is one) or a non-ASCII
 * byte. */
static inline const char *lex_plain_end(const char *s) {
#if defined(__SSE2__)
    for (;;) {
        __m128i v = _mm_loadu_si128((const __m128i *)s);
        __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                                              _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
                                 _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
        unsigned mask = (unsigned)_mm_movemask_epi8(m);
        if (mask) return s + __builtin_ctz(mask);
        s += 16;
    }
#else
    const unsigned char *u = (const unsigned char *)s;
    while (*u != '"' && *u != '\\' && *u >= 0x20 && *u < 0x80) u++;
    return (const char *)u;
#endif
}

/* Strings: the common case (ASCII, no escapes) inline; anything else is
 * scanned again from the start by the careful path. */
static inline lex_rc lex_string(lex *L, const char *p, const char **out, int *esc) {
    const char *s = lex_plain_end(p);
    if (*s == '"') {
        *out = s;
        *esc = 0;
        return LEX_OK;
    }
    return lex_string_slow(L, p, out, esc);
}

static inline int is_digit(char c) { return (unsigned char)(c - '0') < 10; }

/* Eight ASCII digits at once (SWAR): a test and a conversion in a few
 * multiplies instead of eight dependent steps. */
static inline uint64_t load8(const char *s) {
    uint64_t v;
    memcpy(&v, s, 8);
    return v;
}
static inline int all_digits8(uint64_t v) {
    return ((v & 0xF0F0F0F0F0F0F0F0ull) | (((v + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) >> 4)) ==
           0x3333333333333333ull;
}
static inline uint64_t digits8(uint64_t v) {
    v -= 0x3030303030303030ull;
    v = v * 10 + (v >> 8);
    v = (((v & 0x000000FF000000FFull) * (100 + (1000000ull << 32))) +
         (((v >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32)))) >> 32;
    return v;
}

/* Bytes of v that are not ASCII digits are non-zero in the result.  A carry
 * out of a non-digit byte can only spoil bytes after it, which are not looked at. */
static inline uint64_t nondigits8(uint64_t v) {
    return ((v & 0xF0F0F0F0F0F0F0F0ull) | (((v + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) >> 4)) ^
           0x3333333333333333ull;
}

/* Digits at s into *m; returns the count.  Stops at the sentinel (a NUL
 * is not a digit) and reads at most 8 bytes past it (the padding). */
static inline int take_digits(const char **sp, uint64_t *m) {
    const char *s = *sp;
    uint64_t acc = *m;
    for (;;) {
        uint64_t v = load8(s), x = nondigits8(v);
        if (!x) {
            acc = acc * 100000000ull + digits8(v);
            s += 8;
            continue;
        }
        int k = __builtin_ctzll(x) >> 3; /* digits before the first non-digit */
        if (k) {
            /* right-align the k digits, '0'-fill in front */
            uint64_t w = (v << (8 * (8 - k))) | (0x3030303030303030ull >> (8 * k));
            static const uint64_t P10[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};
            acc = acc * P10[k] + digits8(w);
            s += k;
        }
        break;
    }
    int n = (int)(s - *sp);
    *sp = s;
    *m = acc;
    return n;
}

/* Fast path for the usual Kineto numbers (at most 19 significant digits);
 * anything else goes to the careful path. */
static inline lex_rc lex_number(lex *L, const char *p, const char **out, lex_num *n) {
    const char *s = p;
    int neg = *s == '-';
    s += neg;
    if (*s == '0' ? is_digit(s[1]) : !is_digit(*s)) return lex_number_slow(L, p, out, n);
    uint64_t m = 0;
    int ni = take_digits(&s, &m), nf = 0, frac = 0;
    if (ni > 19) return lex_number_slow(L, p, out, n);
    if (*s == '.') {
        frac = 1;
        s++;
        const char *f0 = s;
        nf = take_digits(&s, &m);
        if (nf == 0 || ni + nf > 19) return lex_number_slow(L, p, out, n);
        (void)f0;
    }
    if (*s == 'e' || *s == 'E' || s >= L->end) return lex_number_slow(L, p, out, n);
    n->neg = neg;
    n->frac = frac;
    n->mant = m;
    n->exp10 = -nf;
    n->sticky = 0;
    *out = s;
    return LEX_OK;
}

/* An object member's key at p (`"key"`, then ':' with any whitespace).  On
 * LEX_OK the key body is [*k, *k + *kn), *esc tells whether it has escapes,
 * and *out points at the value (whitespace skipped). */
static inline lex_rc lex_key(lex *L, const char *p, const char **k, size_t *kn, int *esc, const char **out) {
    if (*p != '"') return LEX_END_OR(L, p, "expected an object key");
    const char *q;
    lex_rc rc = lex_string(L, p + 1, &q, esc);
    if (rc) return rc;
    *k = p + 1;
    *kn = (size_t)(q - p - 1);
    p = lex_ws(q + 1);
    if (*p != ':') return LEX_END_OR(L, p, "expected ':' after an object key");
    *out = lex_ws(p + 1);
    return LEX_OK;
}

/* A short key (at most 6 bytes, as Kineto's event keys ph, ts, cat, dur, pid, tid, name, args, id are)
 * written plainly and followed at once by ':', found from the 8 bytes at its quote without a scan: the
 * same *k, *kn and *out as lex_key with no escapes.  0 for any other key (longer, escaped, non-ASCII,
 * white space before the ':'), which lex_key then reads.  The 8 bytes stay within the padding. */
static inline int lex_key_short(const char *p, const char **k, size_t *kn, const char **out) {
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    const uint64_t lows = 0x7F7F7F7F7F7F7F7Full;
    if (*p != '"') return 0;
    uint64_t w = load8(p);
    uint64_t q = w ^ (ones * '"');
    /* exactly the '"' bytes (no carry crosses a byte), after the opening one */
    uint64_t z = ~(((q & lows) + lows) | q | lows) & ~0xFFull;
    if (!z) return 0;
    int e = __builtin_ctzll(z) >> 3; /* the closing quote: byte 1 .. 7 */
    uint64_t body = ((1ull << (8 * e)) - 1) & ~0xFFull;
    uint64_t bs = w ^ (ones * '\\');
    /* a byte >= 0x80, < 0x20 or a backslash in the body: lex_key's business (false alarms only cost time) */
    uint64_t bad = (w & highs) | ((w - ones * 0x20) & ~w & highs) | ((bs - ones) & ~bs & highs);
    if ((bad & body) || p[e + 1] != ':') return 0;
    *k = p + 1;
    *kn = (size_t)(e - 1);
    *out = lex_ws(p + e + 2);
    return 1;
}

/* Keys are matched decoded: "n\u0061me" is name, as for every JSON reader (and the rewriters' raw
 * reader, rawobj.c).  The plain key, the case of every Kineto key, stays the bytes in the buffer; an
 * escaped one is decoded into kb when it is short enough to be one of ours (the longest has 33 bytes
 * and an escape writes at least one byte per six it takes, so a key of more than LEX_KEYBUF bytes as
 * written is none of ours: it stays as written, and its backslashes match no key).  Returns 1 when
 * the decoded key holds a NUL (it then matches nothing either, and a caller that would keep it refuses
 * it). */
#define LEX_KEYBUF 256
static inline int lex_key_decode(const char **k, size_t *kn, int *esc, char *kb) {
    if (!*esc || *kn > LEX_KEYBUF) return 0;
    *kn = lex_unescape(*k, *k + *kn, kb);
    *k = kb;
    *esc = 0;
    return memchr(kb, 0, *kn) != NULL;
}

#endif
