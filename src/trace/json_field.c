/* Readers of one field of a small JSON object's text (distributedInfo's rank and world_size), for the
 * parser (parse.c), the probe of which files --ranks selects (load.c) and merged traces (merged.c): a leaf
 * on the lexer, so that none of them calls back into another for it. */
#include <stdlib.h>
#include <string.h>

#include "trace/json_field.h"
#include "trace/json_lex.h"

/* An integer member of a small object (distributedInfo's rank and world_size): a JSON integer, or one
 * written as a string ("3"), as exact int64.  obj is the object's text (already checked by
 * lex_skip_value) in a buffer with the lexer's sentinel and padding.  Returns 0 and *v, -1 when the key
 * is absent or null (or a string that is no number, as "n/a": HTA's regex finds no rank there either),
 * or -2 with *at at the value when it is a number that is no exact int64 integer (1.5, 1e30, "1.5"):
 * such a value is refused, never truncated.  A key written twice counts with its last value. */
int json_int_member(lex *L, const char *obj, const char *key, int64_t *v, const char **at) {
    size_t kl = strlen(key);
    const char *p = lex_ws(obj + 1), *val = NULL;
    if (*p == '}') return -1;
    for (;;) {
        const char *k, *q;
        size_t kn;
        int esc;
        char kb[LEX_KEYBUF];
        if (lex_key(L, p, &k, &kn, &esc, &p)) return -1;
        lex_key_decode(&k, &kn, &esc, kb);
        if (!esc && kn == kl && !memcmp(k, key, kl)) val = p;
        if (lex_skip_value(L, p, &q)) return -1;
        p = lex_ws(q);
        if (*p != ',') break;
        p = lex_ws(p + 1);
    }
    if (!val || *val == 'n') return -1;
    *at = val;
    if (*val == '"') {
        /* the digits of a string, all of them: "12x" or "1.5" is no rank */
        const char *s = val + 1;
        int neg = *s == '-';
        s += neg;
        if (!is_digit(*s)) {
            /* text that starts like a number but is none is an error; other text is no rank */
            return *s == '.' ? -2 : -1;
        }
        uint64_t acc = 0;
        for (; is_digit(*s); s++) {
            if (acc > (UINT64_MAX - 9) / 10) return -2;
            acc = acc * 10 + (uint64_t)(*s - '0');
        }
        if (*s != '"' || acc > (uint64_t)INT64_MAX) return -2;
        *v = neg ? -(int64_t)acc : (int64_t)acc;
        return 0;
    }
    if (*val != '-' && !is_digit(*val)) return -2; /* true, an object, ...: no integer */
    lex_num n;
    const char *q;
    if (lex_number(L, val, &q, &n) || lex_num_int(&n, v)) return -2;
    return 0;
}

int64_t hta_json_int_field(const char *json, const char *key) {
    /* the text of a small object (distributedInfo), copied with the sentinel and padding the lexer reads */
    size_t n = strlen(json);
    char *b = malloc(n + 1 + HTA_LEX_PAD);
    if (!b) return -1;
    memcpy(b, json, n);
    memset(b + n, 0, 1 + HTA_LEX_PAD);
    lex L = {.end = b + n};
    int64_t v = -1;
    const char *at, *q;
    const char *p = lex_ws(b);
    if (*p != '{' || lex_skip_value(&L, p, &q) || json_int_member(&L, p, key, &v, &at)) v = -1;
    free(b);
    return v;
}
