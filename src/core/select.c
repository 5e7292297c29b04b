/* The k-th smallest of n values, in place (an introselect): the medians that the graph build (launch and
 * gap times) and the report's profile (step times, lags, gaps, queue lengths) take of hundreds of
 * thousands of samples, where a full sort cost several times the work around it.  The value is the sorted
 * array's x[k], whatever the order of equal values; after the call, x[0 .. k) <= x[k] <= x[k + 1 .. n). */
#include <stdlib.h>

#include "hta/util.h"

/* Each type's select: median-of-three pivots and a three-way partition (runs of equal values, common in
 * times, end the search at once), a sort of what is left after 2 log2(n) rounds or below 16 values. */
#define HTA_SELECT(NAME, T, CMP)                                                                            \
    static int CMP(const void *a, const void *b) {                                                          \
        T x = *(const T *)a, y = *(const T *)b;                                                             \
        return (x > y) - (x < y);                                                                           \
    }                                                                                                       \
    T NAME(T *x, size_t n, size_t k) {                                                                      \
        size_t lo = 0, hi = n; /* x[k]'s place is in [lo, hi) */                                            \
        int rounds = 8;                                                                                     \
        for (size_t m = n; m > 1; m >>= 1) rounds += 2;                                                     \
        while (hi - lo > 16 && rounds-- > 0) {                                                              \
            T a = x[lo], b = x[lo + (hi - lo) / 2], c = x[hi - 1];                                          \
            T p = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);                        \
            size_t lt = lo, i = lo, gt = hi; /* [lo, lt) < p, [lt, i) == p, [gt, hi) > p */                 \
            while (i < gt) {                                                                                \
                T v = x[i];                                                                                 \
                if (v < p) x[i++] = x[lt], x[lt++] = v;                                                     \
                else if (v > p) x[i] = x[--gt], x[gt] = v;                                                  \
                else i++;                                                                                   \
            }                                                                                               \
            if (k < lt) hi = lt;                                                                            \
            else if (k >= gt) lo = gt;                                                                      \
            else return p;                                                                                  \
        }                                                                                                   \
        qsort(x + lo, hi - lo, sizeof *x, CMP);                                                             \
        return x[k];                                                                                        \
    }

HTA_SELECT(hta_select_i64, int64_t, cmp_i64)
HTA_SELECT(hta_select_dbl, double, cmp_dbl)
