/* Stable LSD radix sort of (key, value) pairs: the graph build sorts
 * hundreds of thousands of nodes and call-stack endpoints, the report's
 * profile its intervals and sweep events, where qsort's comparator calls
 * (and glibc's merge-sort buffer) cost more than the work around them.
 * Digits on which every key agrees are skipped, so keys that span few bits
 * (times of one run) take two or three passes. */
#include <string.h>

#include "hta/util.h"

#define BITS 11
#define RADIX (1u << BITS)
#define NDIG ((64 + BITS - 1) / BITS)

/* per digit, the count of each value and then where the next of it goes: per thread, reused */
static _Thread_local uint32_t cnt[NDIG][RADIX];

/* The digits on which keys that differ in the bits diff can differ (dig[0 .. return)), their counts cleared. */
static int digits(uint64_t diff, int dig[NDIG]) {
    int nd = 0;
    for (int d = 0; d < NDIG; d++)
        if ((diff >> (d * BITS)) & (RADIX - 1)) dig[nd++] = d;
    for (int j = 0; j < nd; j++) memset(cnt[j], 0, sizeof cnt[j]);
    return nd;
}

/* Digit j's counts turned into where each value's first key goes. */
static void offsets(int j) {
    uint32_t sum = 0;
    for (uint32_t b = 0; b < RADIX; b++) {
        uint32_t c = cnt[j][b];
        cnt[j][b] = sum;
        sum += c;
    }
}

void hta_rsort(uint64_t *k, uint32_t *v, size_t n, uint64_t *tk, uint32_t *tv) {
    if (n < 2) return;
    uint64_t diff = 0;
    for (size_t i = 1; i < n; i++) diff |= k[i] ^ k[0];
    int dig[NDIG], nd = digits(diff, dig);
    for (size_t i = 0; i < n; i++)
        for (int j = 0; j < nd; j++) cnt[j][(k[i] >> (dig[j] * BITS)) & (RADIX - 1)]++;
    uint64_t *sk = k, *dk = tk;
    uint32_t *sv = v, *dv = tv;
    for (int j = 0; j < nd; j++) {
        offsets(j);
        int sh = dig[j] * BITS;
        for (size_t i = 0; i < n; i++) {
            uint32_t p = cnt[j][(sk[i] >> sh) & (RADIX - 1)]++;
            dk[p] = sk[i];
            if (v) dv[p] = sv[i];
        }
        uint64_t *t64 = sk;
        sk = dk;
        dk = t64;
        uint32_t *t32 = sv;
        sv = dv;
        dv = t32;
    }
    if (sk != k) {
        memcpy(k, sk, n * sizeof *k);
        if (v) memcpy(v, sv, n * sizeof *v);
    }
}

/* The same over records of 16 bytes, an int64 first (a time, kept as it is: its sign bit flipped only
 * to digit it), moved whole, so that the sort needs room for n records, no keys beside them. */
typedef struct rec16 {
    int64_t key;
    uint64_t rest;
} rec16;

void hta_rsort_rec16(void *recs, size_t n, void *tmp) {
    if (n < 2) return;
    rec16 *r = recs;
    uint64_t k0 = hta_rsort_key(r[0].key), diff = 0;
    for (size_t i = 1; i < n; i++) diff |= hta_rsort_key(r[i].key) ^ k0;
    int dig[NDIG], nd = digits(diff, dig);
    for (size_t i = 0; i < n; i++) {
        uint64_t k = hta_rsort_key(r[i].key);
        for (int j = 0; j < nd; j++) cnt[j][(k >> (dig[j] * BITS)) & (RADIX - 1)]++;
    }
    rec16 *s = r, *d = tmp;
    for (int j = 0; j < nd; j++) {
        offsets(j);
        int sh = dig[j] * BITS;
        for (size_t i = 0; i < n; i++) d[cnt[j][(hta_rsort_key(s[i].key) >> sh) & (RADIX - 1)]++] = s[i];
        rec16 *t = s;
        s = d;
        d = t;
    }
    if (s != r) memcpy(r, s, n * sizeof *r);
}

/* An id's key: the int64 at base + id * stride (a field of an array of packed records), digited. */
static inline uint64_t key_at(const unsigned char *base, size_t stride, uint32_t id) {
    int64_t x;
    memcpy(&x, base + (size_t)id * stride, sizeof x);
    return hta_rsort_key(x);
}

void hta_rsort_ids(uint32_t *id, size_t n, uint32_t *tmp, const void *base, size_t stride) {
    if (n < 2) return;
    const unsigned char *b = base;
    uint64_t k0 = key_at(b, stride, id[0]), diff = 0;
    for (size_t i = 1; i < n; i++) diff |= key_at(b, stride, id[i]) ^ k0;
    int dig[NDIG], nd = digits(diff, dig);
    for (size_t i = 0; i < n; i++) {
        uint64_t k = key_at(b, stride, id[i]);
        for (int j = 0; j < nd; j++) cnt[j][(k >> (dig[j] * BITS)) & (RADIX - 1)]++;
    }
    uint32_t *s = id, *d = tmp;
    for (int j = 0; j < nd; j++) {
        offsets(j);
        int sh = dig[j] * BITS;
        for (size_t i = 0; i < n; i++) d[cnt[j][(key_at(b, stride, s[i]) >> sh) & (RADIX - 1)]++] = s[i];
        uint32_t *t = s;
        s = d;
        d = t;
    }
    if (s != id) memcpy(id, s, n * sizeof *id);
}
