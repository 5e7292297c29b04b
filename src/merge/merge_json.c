#include "merge/merge_json.h"

#include <string.h>

static const char *ws(const char *p, const char *end) {
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) p++;
    return p;
}

/* p after the opening quote; returns the closing quote or NULL. */
static const char *str_end(const char *p, const char *end) {
    for (;;) {
        const char *q = memchr(p, '"', (size_t)(end - p));
        if (!q) return NULL;
        /* an odd number of backslashes before it escapes it */
        const char *b = q;
        while (b > p && b[-1] == '\\') b--;
        if (((q - b) & 1) == 0) return q;
        p = q + 1;
    }
}

const char *mj_skip_value(const char *p, const char *end) {
    if (p >= end) return NULL;
    if (*p == '"') {
        const char *q = str_end(p + 1, end);
        return q ? q + 1 : NULL;
    }
    if (*p == '{' || *p == '[') {
        int depth = 0;
        while (p < end) {
            char c = *p;
            if (c == '"') {
                const char *q = str_end(p + 1, end);
                if (!q) return NULL;
                p = q + 1;
                continue;
            }
            if (c == '{' || c == '[') depth++;
            else if (c == '}' || c == ']') {
                if (--depth == 0) return p + 1;
            }
            p++;
        }
        return NULL;
    }
    const char *s = p;
    while (p < end && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\n' && *p != '\r' &&
           *p != '\t')
        p++;
    return p > s ? p : NULL;
}

int mj_members(const char *p, const char *end, mj_member *m, size_t cap, size_t *n) {
    *n = 0;
    p = ws(p, end);
    if (p >= end || *p != '{') return -1;
    p = ws(p + 1, end);
    if (p < end && *p == '}') return 0;
    for (;;) {
        if (p >= end || *p != '"') return -1;
        const char *kq = str_end(p + 1, end);
        if (!kq) return -1;
        const char *k = p + 1;
        p = ws(kq + 1, end);
        if (p >= end || *p != ':') return -1;
        p = ws(p + 1, end);
        const char *v = p, *ve = mj_skip_value(p, end);
        if (!ve) return -1;
        if (*n >= cap) return -2;
        m[*n] = (mj_member){k, (size_t)(kq - k), v, (size_t)(ve - v)};
        (*n)++;
        p = ws(ve, end);
        if (p < end && *p == ',') {
            p = ws(p + 1, end);
            continue;
        }
        if (p < end && *p == '}') return 0;
        return -1;
    }
}

const mj_member *mj_find(const mj_member *m, size_t n, const char *key) {
    size_t l = strlen(key);
    for (size_t i = 0; i < n; i++)
        if (m[i].kl == l && !memcmp(m[i].k, key, l)) return &m[i];
    return NULL;
}

int mj_int(const char *v, size_t len, int64_t *out) {
    const char *p = v, *e = v + len;
    int neg = 0;
    if (p < e && *p == '-') neg = 1, p++;
    if (p >= e) return -1;
    uint64_t x = 0;
    for (; p < e; p++) {
        if (*p < '0' || *p > '9') return -1;
        unsigned d = (unsigned)(*p - '0');
        if (x > (UINT64_MAX - d) / 10) return -1;
        x = x * 10 + d;
    }
    if (x > (uint64_t)INT64_MAX + (uint64_t)neg) return -1;
    *out = neg ? (int64_t)(0 - x) : (int64_t)x;
    return 0;
}

int mj_us_to_ns(const char *v, size_t len, int64_t *ns) {
    const char *p = v, *e = v + len;
    int neg = 0;
    if (p < e && *p == '-') neg = 1, p++;
    uint64_t mant = 0;
    int ndig = 0, exp10 = 0, sticky = 0, any = 0;
    int last_dropped = -1; /* first dropped digit (for rounding) */
    for (; p < e && *p >= '0' && *p <= '9'; p++, any = 1) {
        if (mant == 0 && *p == '0') continue;
        if (ndig < 19) mant = mant * 10 + (uint64_t)(*p - '0'), ndig++;
        else {
            if (last_dropped < 0) last_dropped = *p - '0';
            else if (*p != '0') sticky = 1;
            exp10++;
        }
    }
    if (p < e && *p == '.') {
        for (p++; p < e && *p >= '0' && *p <= '9'; p++, any = 1) {
            if (mant == 0 && *p == '0') {
                exp10--;
                continue;
            }
            if (ndig < 19) mant = mant * 10 + (uint64_t)(*p - '0'), ndig++, exp10--;
            else if (last_dropped < 0) last_dropped = *p - '0';
            else if (*p != '0') sticky = 1;
        }
    }
    if (!any) return -1;
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        int eneg = 0, ex = 0;
        if (p < e && (*p == '+' || *p == '-')) eneg = *p == '-', p++;
        if (p >= e) return -1;
        for (; p < e && *p >= '0' && *p <= '9'; p++)
            if (ex < 10000) ex = ex * 10 + (*p - '0');
        exp10 += eneg ? -ex : ex;
    }
    if (p != e) return -1;
    /* value = (mant + dropped) * 10^exp10 us; ns = value * 10^3 */
    int sc = exp10 + 3;
    uint64_t x = mant;
    if (sc >= 0) {
        if (mant && sc > 19) return -1;
        for (int i = 0; i < sc; i++) {
            if (x > UINT64_MAX / 10) return -1;
            x *= 10;
        }
        /* dropped digits (beyond 19 significant) sit below 10^sc: only when
         * the text had more than 19 significant integer digits, out of range */
        if (last_dropped > 0 || sticky) {
            if (sc == 0) x += (last_dropped > 5 || (last_dropped == 5 && (sticky || (x & 1)))) ? 1 : 0;
        }
    } else {
        int down = -sc;
        if (down > 19) {
            x = 0;
        } else {
            uint64_t p10 = 1;
            for (int i = 0; i < down; i++) p10 *= 10;
            uint64_t q = x / p10, rem = x % p10, half = p10 / 2;
            int more = sticky || last_dropped > 0;
            if (rem > half || (rem == half && (more || (q & 1)))) q++;
            x = q;
        }
    }
    if (x > (uint64_t)INT64_MAX) return -1;
    *ns = neg ? -(int64_t)x : (int64_t)x;
    return 0;
}

size_t mj_format_us(int64_t ns, char *buf) {
    char tmp[32];
    size_t n = 0;
    int neg = ns < 0;
    uint64_t x = neg ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    unsigned frac = (unsigned)(x % 1000);
    x /= 1000;
    tmp[n++] = (char)('0' + frac % 10);
    tmp[n++] = (char)('0' + frac / 10 % 10);
    tmp[n++] = (char)('0' + frac / 100);
    tmp[n++] = '.';
    do {
        tmp[n++] = (char)('0' + x % 10);
        x /= 10;
    } while (x);
    size_t o = 0;
    if (neg) buf[o++] = '-';
    while (n) buf[o++] = tmp[--n];
    buf[o] = 0;
    return o;
}
