/* Stable LSD radix sort of (key, value) pairs: the graph build sorts
 * hundreds of thousands of nodes and call-stack endpoints, where qsort's
 * comparator calls (and glibc's merge-sort buffer) cost more than the rest
 * of the build.  Digits on which every key agrees are skipped, so keys that
 * span few bits (times relative to their minimum) take two or three passes. */
#include <string.h>

#include "cpath/internal.h"

#define BITS 11
#define RADIX (1u << BITS)
#define NDIG ((64 + BITS - 1) / BITS)

void cp_rsort(uint64_t *k, uint32_t *v, size_t n, uint64_t *tk, uint32_t *tv) {
    if (n < 2) return;
    uint64_t diff = 0;
    for (size_t i = 1; i < n; i++) diff |= k[i] ^ k[0];
    if (!diff) return;
    static _Thread_local uint32_t cnt[NDIG][RADIX];
    int dig[NDIG], nd = 0;
    for (int d = 0; d < NDIG; d++)
        if ((diff >> (d * BITS)) & (RADIX - 1)) dig[nd++] = d;
    for (int j = 0; j < nd; j++) memset(cnt[j], 0, sizeof cnt[j]);
    for (size_t i = 0; i < n; i++)
        for (int j = 0; j < nd; j++) cnt[j][(k[i] >> (dig[j] * BITS)) & (RADIX - 1)]++;
    uint64_t *sk = k, *dk = tk;
    uint32_t *sv = v, *dv = tv;
    for (int j = 0; j < nd; j++) {
        uint32_t sum = 0;
        for (uint32_t b = 0; b < RADIX; b++) {
            uint32_t c = cnt[j][b];
            cnt[j][b] = sum;
            sum += c;
        }
        int sh = dig[j] * BITS;
        for (size_t i = 0; i < n; i++) {
            uint32_t p = cnt[j][(sk[i] >> sh) & (RADIX - 1)]++;
            dk[p] = sk[i];
            dv[p] = sv[i];
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
        memcpy(v, sv, n * sizeof *v);
    }
}
