/* numpy's argsort(kind="quicksort") (analyses.md Appendix A): HTA's queue
 * lengths come from a sort by `ts` with this unstable introsort, and the tie
 * order decides whether some kernels get a launch-delay or a kernel-kernel
 * edge.  Reproduced so the edge counts match HTA's. */
#include <stdlib.h>

#include "cpath/internal.h"

#define SMALL 15

static void heap_sift(const int64_t *v, uint32_t *a /* 1-based */, size_t i, size_t n, uint32_t tmp) {
    size_t j = 2 * i;
    while (j <= n) {
        if (j < n && v[a[j]] < v[a[j + 1]]) j++;
        if (v[tmp] < v[a[j]]) {
            a[i] = a[j];
            i = j;
            j = 2 * j;
        } else {
            break;
        }
    }
    a[i] = tmp;
}

static void heap_argsort(const int64_t *v, uint32_t *t, size_t n) {
    uint32_t *a = t - 1; /* 1-based view */
    for (size_t l = n / 2; l >= 1; l--) heap_sift(v, a, l, n, a[l]);
    while (n > 1) {
        uint32_t tmp = a[n];
        a[n] = a[1];
        n--;
        heap_sift(v, a, 1, n, tmp);
    }
}

static int floor_log2(size_t n) {
    int d = 0;
    while (n > 1) n >>= 1, d++;
    return d;
}

#define SWAP(x, y)                                                             \
    do {                                                                       \
        uint32_t s_ = (x);                                                     \
        (x) = (y);                                                             \
        (y) = s_;                                                              \
    } while (0)

int cp_np_argsort(const int64_t *v, uint32_t *t, size_t n) {
    for (size_t i = 0; i < n; i++) t[i] = (uint32_t)i;
    if (n < 2) return 0;
    typedef struct { ptrdiff_t lo, hi; int budget; } frame;
    frame *stack = malloc(sizeof(frame) * 2 * (size_t)(floor_log2(n) + 2) * 2 + 64);
    if (!stack) return -1;
    size_t sp = 0;
    ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1;
    int budget = 2 * floor_log2(n);
    for (;;) {
        if (budget < 0) {
            heap_argsort(v, t + lo, (size_t)(hi - lo + 1));
        } else {
            while (hi - lo > SMALL) {
                ptrdiff_t mid = lo + (hi - lo) / 2;
                if (v[t[mid]] < v[t[lo]]) SWAP(t[mid], t[lo]);
                if (v[t[hi]] < v[t[mid]]) SWAP(t[hi], t[mid]);
                if (v[t[mid]] < v[t[lo]]) SWAP(t[mid], t[lo]);
                int64_t pivot = v[t[mid]];
                ptrdiff_t i = lo, j = hi - 1;
                SWAP(t[mid], t[j]);
                for (;;) {
                    do i++; while (v[t[i]] < pivot);
                    do j--; while (pivot < v[t[j]]);
                    if (i >= j) break;
                    SWAP(t[i], t[j]);
                }
                SWAP(t[i], t[hi - 1]);
                budget--;
                if (i - lo < hi - i) {
                    stack[sp++] = (frame){i + 1, hi, budget};
                    hi = i - 1;
                } else {
                    stack[sp++] = (frame){lo, i - 1, budget};
                    lo = i + 1;
                }
            }
            for (ptrdiff_t k = lo + 1; k <= hi; k++) {
                uint32_t x = t[k];
                ptrdiff_t m = k;
                while (m > lo && v[x] < v[t[m - 1]]) {
                    t[m] = t[m - 1];
                    m--;
                }
                t[m] = x;
            }
        }
        if (!sp) break;
        sp--;
        lo = stack[sp].lo;
        hi = stack[sp].hi;
        budget = stack[sp].budget;
    }
    free(stack);
    return 0;
}
