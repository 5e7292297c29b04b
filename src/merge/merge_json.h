/* Small helpers to take one JSON object apart without building anything:
 * what `hta merge` needs to rewrite an event's pid/ts/id and copy the rest
 * byte for byte.  All work on [p, end) without relying on a terminator. */
#ifndef HTA_MERGE_JSON_H
#define HTA_MERGE_JSON_H

#include <stddef.h>
#include <stdint.h>

typedef struct mj_member {
    const char *k; /* key body, without quotes, escapes as written */
    size_t kl;
    const char *v; /* the value's raw JSON */
    size_t vl;
} mj_member;

/* Members of the object at p (leading whitespace allowed).  Returns 0, -1
 * when malformed, -2 when it has more than cap members. */
int mj_members(const char *p, const char *end, mj_member *m, size_t cap, size_t *n);

/* End of the value starting at p (p at its first byte), or NULL. */
const char *mj_skip_value(const char *p, const char *end);

/* A member by key, or NULL. */
const mj_member *mj_find(const mj_member *m, size_t n, const char *key);

/* Decimal microseconds (a JSON number, exponent allowed) to integer ns,
 * exactly; digits past the ns are rounded half to even.  Returns 0, or -1
 * when v is not a number or out of range. */
int mj_us_to_ns(const char *v, size_t len, int64_t *ns);

/* A JSON integer (no fraction/exponent).  Returns 0 or -1. */
int mj_int(const char *v, size_t len, int64_t *out);

/* Writes ns as decimal microseconds with exactly three decimals; returns the
 * length (buf >= 32 bytes). */
size_t mj_format_us(int64_t ns, char *buf);

#endif
