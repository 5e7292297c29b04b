/* Internal to the analyses that join launch calls to device rows on correlation ids (launch.c,
 * queue_length.c): items (view positions) grouped by id, the items of one id one run in their given
 * order, found in constant time where the ids are dense (Kineto numbers its correlations from 1). */
#ifndef HTA_CORR_RUNS_H
#define HTA_CORR_RUNS_H

#include <stddef.h>
#include <stdint.h>

#include "hta/arena.h"
#include "hta/error.h"

typedef struct corr_runs {
    size_t n;
    uint32_t *pos;   /* the items by (id, given order) */
    int64_t *id;     /* sparse only: the id of each, for the binary search */
    uint32_t *start; /* dense: id c's items are pos[start[c - lo] .. start[c - lo + 1]); NULL: sparse */
    int64_t lo;      /* dense: the least id */
    uint64_t span;   /* dense: ids lo .. lo + span - 1 */
} corr_runs;

/* Groups the n items pos (ids id[i]), from the arena A (the caller's scratch).  id and pos are read only. */
hta_status corr_runs_build(const int64_t *id, const uint32_t *pos, size_t n, hta_arena *A, corr_runs *o,
                           hta_error *err);

/* The run of id c: items [*a, *b) of o->pos (empty: *a == *b). */
static inline void corr_runs_find(const corr_runs *o, int64_t c, size_t *a, size_t *b) {
    if (o->start) {
        uint64_t d = (uint64_t)c - (uint64_t)o->lo;
        if (c < o->lo || d >= o->span) *a = *b = 0;
        else *a = o->start[d], *b = o->start[d + 1];
        return;
    }
    size_t lo = 0, hi = o->n;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (o->id[m] < c) lo = m + 1;
        else hi = m;
    }
    size_t e = lo;
    while (e < o->n && o->id[e] == c) e++;
    *a = lo, *b = e;
}

#endif
