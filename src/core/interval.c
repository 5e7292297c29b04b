/* Interval unions (analyses.md §2): the basis of idle, overlap and temporal
 * breakdowns, in exact int64 ns. */
#include "hta/util.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct se {
    int64_t s, e;
} se;

hta_status hta_interval_union_pairs(int64_t *iv, size_t n, int64_t *tmp, size_t *nu, hta_error *err) {
    *nu = 0;
    if (!n) return HTA_OK;
    if (n > UINT32_MAX) return hta_fail(err, HTA_EINVAL, "%zu intervals: too many to sort", n);
    se *v = (se *)iv;
    int sorted = 1;
    for (size_t i = 1; sorted && i < n; i++) sorted = v[i].s >= v[i - 1].s;
    /* by start (a radix sort; the union does not depend on the order of intervals that start together) */
    if (!sorted) {
        se *own = tmp ? NULL : malloc(n * sizeof *own);
        if (!tmp && !own) return hta_oom(err);
        hta_rsort_rec16(v, n, tmp ? (void *)tmp : (void *)own);
        free(own);
    }
    /* merged in place: the union's m-th interval is written where the m-th input was, once read */
    size_t m = 0;
    int64_t maxend = 0;
    for (size_t i = 0; i < n; i++) {
        se x = v[i];
        if (m == 0 || x.s > maxend) {
            v[m++] = x;
            maxend = x.e;
        } else if (x.e > maxend) {
            v[m - 1].e = maxend = x.e;
        }
    }
    *nu = m;
    return HTA_OK;
}

hta_status hta_interval_union(const int64_t *ts, const int64_t *dur, size_t n, int64_t *us, int64_t *ue,
                              size_t *nu, hta_error *err) {
    *nu = 0;
    if (!n) return HTA_OK;
    int64_t *v = malloc(n * sizeof(se));
    if (!v) return hta_oom(err);
    for (size_t i = 0; i < n; i++) v[2 * i] = ts[i], v[2 * i + 1] = ts[i] + dur[i];
    hta_status st = hta_interval_union_pairs(v, n, NULL, nu, err);
    for (size_t i = 0; !st && i < *nu; i++) us[i] = v[2 * i], ue[i] = v[2 * i + 1];
    free(v);
    return st;
}

int64_t hta_union_length(const int64_t *us, const int64_t *ue, size_t n) {
    int64_t s = 0;
    for (size_t i = 0; i < n; i++) s += ue[i] - us[i];
    return s;
}

int64_t hta_union_overlap(const int64_t *as, const int64_t *ae, size_t na, const int64_t *bs,
                          const int64_t *be, size_t nb) {
    size_t i = 0, j = 0;
    int64_t tot = 0;
    while (i < na && j < nb) {
        int64_t lo = as[i] > bs[j] ? as[i] : bs[j];
        int64_t hi = ae[i] < be[j] ? ae[i] : be[j];
        if (hi > lo) tot += hi - lo;
        if (ae[i] < be[j]) i++;
        else j++;
    }
    return tot;
}

/* ---- numpy's introsort argsort (analyses.md Appendix A) ---- */

