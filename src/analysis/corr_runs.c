/* Items grouped by correlation id (corr_runs.h): a counting sort over the ids' range where it is at most a
 * few times the items (the ids of one trace are dense), a radix sort and binary searches otherwise; both
 * stable, so an id's items keep their given order.  This replaced qsort and a binary search per row, which
 * were most of the launch statistics' time on a 250 MB rank. */
#include "analysis/corr_runs.h"

#include <string.h>

#include "hta/util.h"

/* A dense table: up to DENSE_PER_ITEM ids of the range per item (4 bytes each), DENSE_SLACK whatever n. */
#define DENSE_PER_ITEM 4
#define DENSE_SLACK 4096

hta_status corr_runs_build(const int64_t *id, const uint32_t *pos, size_t n, hta_arena *A, corr_runs *o,
                           hta_error *err) {
    memset(o, 0, sizeof *o);
    o->n = n;
    if (!(o->pos = HTA_ANEW(A, uint32_t, n))) return hta_oom(err);
    if (!n) {
        o->id = HTA_ANEW(A, int64_t, 1); /* sparse and empty: every search finds nothing */
        return o->id ? HTA_OK : hta_oom(err);
    }
    if (n > UINT32_MAX - 1) return hta_fail(err, HTA_EINVAL, "%zu rows: too many to join", n);
    int64_t lo = id[0], hi = id[0];
    for (size_t i = 1; i < n; i++) lo = id[i] < lo ? id[i] : lo, hi = id[i] > hi ? id[i] : hi;
    uint64_t span = (uint64_t)hi - (uint64_t)lo + 1; /* 0: the whole int64 range */
    if (span && span <= DENSE_PER_ITEM * (uint64_t)n + DENSE_SLACK) {
        uint32_t *st = hta_arena_calloc(A, span + 1, sizeof *st);
        if (!st) return hta_oom(err);
        for (size_t i = 0; i < n; i++) st[(uint64_t)id[i] - (uint64_t)lo + 1]++;
        for (uint64_t c = 1; c <= span; c++) st[c] += st[c - 1];
        /* each item at its id's next place (st[d] moves on to the id's end, then is put back) */
        for (size_t i = 0; i < n; i++) o->pos[st[(uint64_t)id[i] - (uint64_t)lo]++] = pos[i];
        for (uint64_t c = span; c > 0; c--) st[c] = st[c - 1];
        st[0] = 0;
        o->start = st, o->lo = lo, o->span = span;
        return HTA_OK;
    }
    uint64_t *k = HTA_ANEW(A, uint64_t, 2 * n);
    uint32_t *tv = HTA_ANEW(A, uint32_t, n);
    if (!k || !tv || !(o->id = HTA_ANEW(A, int64_t, n))) return hta_oom(err);
    for (size_t i = 0; i < n; i++) k[i] = hta_rsort_key(id[i]), o->pos[i] = pos[i];
    hta_rsort(k, o->pos, n, k + n, tv);
    for (size_t i = 0; i < n; i++) o->id[i] = hta_rsort_unkey(k[i]);
    return HTA_OK;
}
