/* Sorts: numpy's unstable quicksort order (to reproduce HTA's tie order,
 * analyses.md Appendix A) and a stable, thread-safe index merge sort. */
#include "hta/util.h"
#include "hta/error.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Insertion sort of idx[lo, hi) by key[idx[.]], equal keys kept in order: the short ranges of both sorts
 * (key a double or an int64 array). */
#define INSERTION_SORT(idx, lo, hi, key)                                                                    \
    for (size_t k_ = (lo) + 1; k_ < (hi); k_++) {                                                           \
        uint32_t x_ = (idx)[k_];                                                                            \
        size_t m_ = k_;                                                                                     \
        while (m_ > (lo) && (key)[x_] < (key)[(idx)[m_ - 1]]) {                                             \
            (idx)[m_] = (idx)[m_ - 1];                                                                      \
            m_--;                                                                                           \
        }                                                                                                   \
        (idx)[m_] = x_;                                                                                     \
    }

/* Sift tmp down from position i of the 1-based heap a[1..N]. */
static void np_sift(const double *v, uint32_t *a, size_t i, size_t N, uint32_t tmp) {
    for (size_t j = i << 1; j <= N;) {
        if (j < N && v[a[j]] < v[a[j + 1]]) j++;
        if (!(v[tmp] < v[a[j]])) break;
        a[i] = a[j];
        i = j;
        j += j;
    }
    a[i] = tmp;
}

static void np_heap_argsort(const double *v, uint32_t *a0, size_t N) {
    uint32_t *a = a0 - 1; /* 1-based */
    for (size_t l = N >> 1; l > 0; --l) np_sift(v, a, l, N, a[l]);
    for (; N > 1;) {
        uint32_t tmp = a[N];
        a[N] = a[1];
        N -= 1;
        np_sift(v, a, 1, N, tmp);
    }
}

void hta_argsort_numpy(const double *v, size_t n, uint32_t *t) {
    for (size_t i = 0; i < n; i++) t[i] = (uint32_t)i;
    if (n < 2) return;
    int budget = 0;
    for (size_t m = n; m > 1; m >>= 1) budget++;
    budget *= 2;
    struct {
        long lo, hi;
        int budget;
    } stack[128];
    size_t sp = 0;
    long lo = 0, hi = (long)n - 1;
    for (;;) {
        if (budget < 0) {
            np_heap_argsort(v, t + lo, (size_t)(hi - lo + 1));
        } else {
            while (hi - lo > 15) {
                long mid = lo + (hi - lo) / 2;
                uint32_t x;
#define NP_SWAP(a, b) (x = t[a], t[a] = t[b], t[b] = x)
                if (v[t[mid]] < v[t[lo]]) NP_SWAP(mid, lo);
                if (v[t[hi]] < v[t[mid]]) NP_SWAP(hi, mid);
                if (v[t[mid]] < v[t[lo]]) NP_SWAP(mid, lo);
                double pivot = v[t[mid]];
                long i = lo, j = hi - 1;
                NP_SWAP(mid, j);
                for (;;) {
                    do i++;
                    while (v[t[i]] < pivot);
                    do j--;
                    while (pivot < v[t[j]]);
                    if (i >= j) break;
                    NP_SWAP(i, j);
                }
                NP_SWAP(i, hi - 1);
#undef NP_SWAP
                budget--;
                if (i - lo < hi - i) {
                    stack[sp].lo = i + 1, stack[sp].hi = hi, stack[sp].budget = budget, sp++;
                    hi = i - 1;
                } else {
                    stack[sp].lo = lo, stack[sp].hi = i - 1, stack[sp].budget = budget, sp++;
                    lo = i + 1;
                }
            }
            /* hi >= lo - 1 here: the range [lo, hi] may be empty */
            INSERTION_SORT(t, (size_t)lo, (size_t)(hi + 1), v);
        }
        if (!sp) return;
        sp--;
        lo = stack[sp].lo, hi = stack[sp].hi, budget = stack[sp].budget;
    }
}

hta_status hta_argsort_numpy_desc(const double *v, size_t n, uint32_t *perm, hta_error *err) {
    /* pandas nargsort(ascending=False): reverse, argsort ascending, map back, reverse */
    if (n < 2) {
        for (size_t i = 0; i < n; i++) perm[i] = (uint32_t)i;
        return HTA_OK;
    }
    double *rv = malloc(n * sizeof *rv);
    uint32_t *p = malloc(n * sizeof *p);
    if (!rv || !p) {
        free(rv);
        free(p);
        return hta_oom(err);
    }
    for (size_t i = 0; i < n; i++) rv[i] = v[n - 1 - i];
    hta_argsort_numpy(rv, n, p);
    for (size_t i = 0; i < n; i++) perm[n - 1 - i] = (uint32_t)(n - 1 - p[i]);
    free(rv);
    free(p);
    return HTA_OK;
}

/* ---- thread-safe stable index sort ---- */

hta_status hta_stable_sort_idx_i64(uint32_t *idx, size_t n, const int64_t *key, hta_error *err) {
    if (n < 2) return HTA_OK;
    uint32_t *tmp = malloc(n * sizeof *tmp);
    if (!tmp) return hta_oom(err);
    /* bottom-up merge sort; runs of 16 by insertion sort first */
    const size_t RUN = 16;
    for (size_t lo = 0; lo < n; lo += RUN) {
        size_t hi = lo + RUN < n ? lo + RUN : n;
        INSERTION_SORT(idx, lo, hi, key);
    }
    uint32_t *a = idx, *b = tmp;
    for (size_t w = RUN; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi) b[o++] = key[a[j]] < key[a[i]] ? a[j++] : a[i++];
            while (i < mid) b[o++] = a[i++];
            while (j < hi) b[o++] = a[j++];
        }
        uint32_t *s = a;
        a = b;
        b = s;
    }
    if (a != idx) memcpy(idx, a, n * sizeof *idx);
    free(tmp);
    return HTA_OK;
}

hta_status hta_argsort_numpy_i64(const int64_t *v, size_t n, uint32_t *perm, hta_error *err) {
    double *d = malloc((n ? n : 1) * sizeof *d);
    if (!d) return hta_oom(err);
    for (size_t k = 0; k < n; k++) d[k] = (double)v[k];
    hta_argsort_numpy(d, n, perm);
    free(d);
    return HTA_OK;
}
