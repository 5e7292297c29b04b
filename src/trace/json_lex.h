/* Lexical helpers for the trace parser: strings, numbers, whitespace and a
 * validating skip of any JSON value.  All work on a buffer that ends with a
 * NUL sentinel and at least HTA_LEX_PAD readable bytes after it, so vector
 * loads never fault and every scan stops at the buffer end. */
#ifndef HTA_TRACE_JSON_LEX_H
#define HTA_TRACE_JSON_LEX_H

#include <stddef.h>
#include <stdint.h>

#define HTA_LEX_PAD 64

typedef enum lex_rc { LEX_OK = 0, LEX_MORE = 1, LEX_ERR = 2 } lex_rc;

typedef struct lex {
    const char *end;  /* the sentinel position: data ends here */
    const char *err_at;
    const char *err;  /* static message */
} lex;

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
lex_rc lex_string(lex *L, const char *p, const char **out, int *esc);
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
lex_rc lex_number(lex *L, const char *p, const char **out, lex_num *n);
/* value * 10^scale as int64, rounding half to even; -1 on overflow. */
int lex_num_scaled(const lex_num *n, int scale, int64_t *v);
double lex_num_double(const char *p, const char *q);


/* Skips one JSON value at p, validating it (depth-limited). */
lex_rc lex_skip_value(lex *L, const char *p, const char **out);

#define LEX_ERROR(L, at, msg) ((L)->err_at = (at), (L)->err = (msg), LEX_ERR)
/* A NUL at the sentinel means "need more bytes"; elsewhere it is an error. */
#define LEX_END_OR(L, at, msg) ((at) >= (L)->end ? LEX_MORE : LEX_ERROR(L, at, msg))

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

#endif
