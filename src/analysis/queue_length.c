/* Launch-queue length per stream (analyses.md §10.1): +1 at each runtime
 * launch, -1 when the launched activity starts on the device. */
#include <stdlib.h>
#include <string.h>

#include "analysis/corr_runs.h"
#include "hta/arena.h"
#include "hta/counters.h"
#include "hta/util.h"
#include "hta/vocab.h"

/* Which names put work on a queue, per symbol: every vendor's launches and stream-ordered copies and sets
 * (hta_api_enqueues); with HTA's rules its 12 "runtime launch" names (TF§4.4).  Rows are then tested by
 * symbol, the names compared once.  NULL when out of memory. */
static unsigned char *launch_syms(const hta_trace *t, hta_series_rules rules, hta_arena *A) {
    size_t nsym = hta_symtab_count(t->sym);
    unsigned char *sel = hta_arena_calloc(A, nsym ? nsym : 1, 1);
    if (!sel) return NULL;
    if (rules == HTA_SERIES_HTA) {
        hta_symtab_mark(t->sym, hta_runtime_launch_names_hta, sel);
    } else {
        for (size_t s = 0; s < nsym; s++) sel[s] = (unsigned char)hta_api_enqueues(hta_sym_api(t, (uint32_t)s));
    }
    return sel;
}

void hta_queue_series_free(hta_queue_series *s) {
    free(s->ts);
    free(s->stream);
    free(s->row);
    free(s->dev_row);
    free(s->queue);
    memset(s, 0, sizeof *s);
}

/* Scratch from `scratch` (the caller's per-call arena, or a private one when
 * NULL), released before returning; the series in out is the caller's. */
hta_status hta_queue_series_build(const hta_view *v, hta_series_rules rules, hta_arena *scratch, hta_queue_series *out,
                                  hta_error *err) {
    const hta_trace *t = v->t;
    const hta_rank *r = v->r;
    memset(out, 0, sizeof *out);
    hta_arena own = HTA_ARENA_INIT;
    hta_arena *A = scratch ? scratch : &own;
    hta_arena_mark mark = hta_arena_save(A);
    hta_status st = HTA_OK;
    unsigned char *is_launch = launch_syms(t, rules, A);
    if (!is_launch) goto oom;

    /* the device rows by (correlation, position): the device rows of one correlation id form one run, in
     * view order */
    size_t nv = v->n, ndev = 0, x0, x1;
    int64_t *dids = HTA_ANEW(A, int64_t, nv);
    uint32_t *dpos = HTA_ANEW(A, uint32_t, nv);
    uint32_t *lpos = HTA_ANEW(A, uint32_t, nv); /* the launches' positions: the passes below read these alone */
    size_t nlaunch = 0;
    if (!dids || !dpos || !lpos) goto oom;
    for (size_t k = 0; k < nv; k++) {
        uint32_t i = v->row[k];
        if (hta_row_stream(r, i) != -1 && r->correlation[i] != -1)
            dids[ndev] = r->correlation[i], dpos[ndev++] = (uint32_t)k;
        /* the partner link stands for HTA's index_correlation > 0, except that a launch of event 0 is kept
         * (TF Q7); HTA reads index_correlation 0 as "no partner", so it drops the launch of event 0 */
        if (r->partner[i] != HTA_NO_ROW && is_launch[r->name[i]] &&
            !(rules == HTA_SERIES_HTA && r->index[r->partner[i]] == 0))
            lpos[nlaunch++] = (uint32_t)k;
    }
    corr_runs dev;
    HTA_TRY_GOTO(st, corr_runs_build(dids, dpos, ndev, A, &dev, err), fail);
    unsigned char *used = hta_arena_calloc(A, nv ? nv : 1, 1);
    if (!used) goto oom;

    /* launches, each once per matching device row (HTA's inner merge on
     * correlation), in table order; then the matched device rows (at most
     * ndev of them) */
    /* A first pass counts the launch samples so that every array is taken once, at its size. */
    size_t cap = ndev, n = 0;
    for (size_t l = 0; l < nlaunch; l++) {
        corr_runs_find(&dev, r->correlation[v->row[lpos[l]]], &x0, &x1);
        cap += x1 - x0;
    }
    int64_t *ts = HTA_ANEW(A, int64_t, cap), *stream = HTA_ANEW(A, int64_t, cap);
    uint32_t *row = HTA_ANEW(A, uint32_t, cap), *drow = HTA_ANEW(A, uint32_t, cap);
    int8_t *delta = HTA_ANEW(A, int8_t, cap);
    uint32_t *perm = HTA_ANEW(A, uint32_t, cap);
    if (!ts || !stream || !row || !drow || !delta || !perm) goto oom;
#define PUSH(T, S, R, D, X)                                                                       \
    do {                                                                                          \
        ts[n] = (T), stream[n] = (S), row[n] = (R), drow[n] = (D), delta[n] = (X);                \
        n++;                                                                                      \
    } while (0)
    for (size_t l = 0; l < nlaunch; l++) {
        size_t k = lpos[l];
        uint32_t i = v->row[k];
        corr_runs_find(&dev, r->correlation[i], &x0, &x1);
        for (size_t x = x0; x < x1; x++) {
            uint32_t j = v->row[dev.pos[x]];
            used[dev.pos[x]] = 1;
            /* the launch sample takes the stream of the device row it launched (§10.1 step 3) */
            PUSH(v->ts[k], hta_row_stream(r, j), i, j, 1);
        }
    }
    /* Device rows whose correlation a launch has (§10.1 step 4), each once however many launches match it;
     * after every launch, as HTA concatenates them. */
    for (size_t k = 0; k < nv; k++) {
        if (!used[k]) continue;
        uint32_t j = v->row[k];
        PUSH(v->ts[k], hta_row_stream(r, j), j, j, -1);
    }
#undef PUSH

    /* Time order.  Stable by default: equal times keep the concatenation order (launches first, then the
     * trace's order), the same on every machine.  HTA's numpy quicksort orders ties otherwise and its
     * statistics change with it (analyses.md §0.6); HTA_SERIES_HTA reproduces that order to show the
     * difference is ties alone. */
    uint64_t *key = HTA_ANEW(A, uint64_t, 2 * n);
    uint32_t *tv = HTA_ANEW(A, uint32_t, n);
    if (!key || !tv || n > UINT32_MAX) goto oom;
    if (rules == HTA_SERIES_HTA) {
        HTA_TRY_GOTO(st, hta_argsort_numpy_i64(ts, n, perm, err), fail);
    } else {
        /* stable radix sorts, where merge sorts through an index were a fifth of the series' time; times from
         * the earliest, which differ in fewer bits (a pass fewer where the span crosses a multiple of 2^33) */
        int64_t base = INT64_MAX;
        for (size_t k = 0; k < n; k++) base = ts[k] < base ? ts[k] : base;
        for (size_t k = 0; k < n; k++) perm[k] = (uint32_t)k, key[k] = hta_rsort_key(ts[k] - base);
        hta_rsort(key, perm, n, key + n, tv);
    }
    /* group by stream id (ascending, as HTA's groupby; devices not told apart, Quirk A4), keeping time
     * order: a stable sort on the second key */
    for (size_t k = 0; k < n; k++) key[k] = hta_rsort_key(stream[perm[k]]);
    hta_rsort(key, perm, n, key + n, tv);

    out->n = n;
    out->ts = malloc((n ? n : 1) * sizeof *out->ts);
    out->stream = malloc((n ? n : 1) * sizeof *out->stream);
    out->row = malloc((n ? n : 1) * sizeof *out->row);
    out->dev_row = malloc((n ? n : 1) * sizeof *out->dev_row);
    out->queue = malloc((n ? n : 1) * sizeof *out->queue);
    if (!out->ts || !out->stream || !out->row || !out->dev_row || !out->queue) goto oom;
    int64_t q = 0;
    for (size_t k = 0; k < n; k++) {
        uint32_t p = perm[k];
        /* The running sum per stream: at a launch it includes that launch, at a device row it no longer
         * counts that activity (§10.1): the operations enqueued and not yet started. */
        if (k == 0 || stream[p] != out->stream[k - 1]) q = 0;
        q += delta[p];
        out->ts[k] = ts[p];
        out->stream[k] = stream[p];
        out->row[k] = row[p];
        out->dev_row[k] = drow[p];
        out->queue[k] = q;
    }
    goto done;
oom:
    st = hta_oom(err);
fail:
    hta_queue_series_free(out);
done:
    hta_arena_reset(A, mark);
    hta_arena_free(&own);
    return st;
}
