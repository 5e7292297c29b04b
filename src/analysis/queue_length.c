/* Launch-queue length per stream (analyses.md §10.1): +1 at each runtime
 * launch, -1 when the launched activity starts on the device. */
#include <stdlib.h>
#include <string.h>

#include "hta/counters.h"
#include "hta/util.h"
#include "hta/vocab.h"

/* Symbol ids of TF§4.4's "runtime launch" names, -1 where absent. */
#define NLAUNCH 16
static void launch_ids(const hta_trace *t, int64_t *ids) {
    size_t k = 0;
    for (const char *const *nm = hta_runtime_launch_names_hta; *nm && k < NLAUNCH; nm++)
        ids[k++] = hta_symtab_find(t->sym, *nm, strlen(*nm));
    while (k < NLAUNCH) ids[k++] = -1;
}

static int is_launch_name(const int64_t *ids, uint32_t name) {
    for (size_t k = 0; k < NLAUNCH; k++)
        if (ids[k] == (int64_t)name) return 1;
    return 0;
}

typedef struct cp {
    int64_t corr;
    uint32_t pos; /* view position of a device row */
} cp;

static int cp_cmp(const void *a, const void *b) {
    const cp *x = a, *y = b;
    if (x->corr != y->corr) return x->corr < y->corr ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

static size_t cp_lower(const cp *v, size_t n, int64_t corr) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t m = (lo + hi) / 2;
        if (v[m].corr < corr) lo = m + 1;
        else hi = m;
    }
    return lo;
}

void hta_queue_series_free(hta_queue_series *s) {
    free(s->ts);
    free(s->stream);
    free(s->row);
    free(s->dev_row);
    free(s->queue);
    memset(s, 0, sizeof *s);
}

hta_status hta_queue_series_build(const hta_view *v, hta_tie_order ties, hta_queue_series *out,
                                  hta_error *err) {
    const hta_trace *t = v->t;
    const hta_rank *r = v->r;
    memset(out, 0, sizeof *out);
    int64_t ids[NLAUNCH];
    launch_ids(t, ids);

    size_t nv = v->n, ndev = 0;
    cp *dev = malloc((nv ? nv : 1) * sizeof *dev);
    unsigned char *used = calloc(nv ? nv : 1, 1);
    if (!dev || !used) goto oom;
    for (size_t k = 0; k < nv; k++) {
        uint32_t i = v->row[k];
        if (hta_row_stream(r, i) != -1 && r->correlation[i] != -1) dev[ndev++] = (cp){r->correlation[i], (uint32_t)k};
    }
    qsort(dev, ndev, sizeof *dev, cp_cmp);

    /* launches, each once per matching device row (HTA's inner merge on
     * correlation), in table order; then the matched device rows */
    size_t cap = 64, n = 0;
    int64_t *ts = malloc(cap * sizeof *ts), *stream = malloc(cap * sizeof *stream);
    uint32_t *row = malloc(cap * sizeof *row), *drow = malloc(cap * sizeof *drow);
    int8_t *delta = malloc(cap);
    uint32_t *perm = NULL;
#define PUSH(T, S, R, D, X)                                                                       \
    do {                                                                                          \
        if (n == cap) {                                                                           \
            cap *= 2;                                                                             \
            void *a = realloc(ts, cap * sizeof *ts), *b = realloc(stream, cap * sizeof *stream); \
            if (a) ts = a;                                                                        \
            if (b) stream = b;                                                                    \
            void *c = realloc(row, cap * sizeof *row), *d = realloc(drow, cap * sizeof *drow);   \
            if (c) row = c;                                                                       \
            if (d) drow = d;                                                                      \
            void *e = realloc(delta, cap);                                                        \
            if (e) delta = e;                                                                     \
            if (!a || !b || !c || !d || !e) goto oom2;                                            \
        }                                                                                         \
        ts[n] = (T), stream[n] = (S), row[n] = (R), drow[n] = (D), delta[n] = (X);                \
        n++;                                                                                      \
    } while (0)
    if (!ts || !stream || !row || !drow || !delta) goto oom2;
    for (size_t k = 0; k < nv; k++) {
        uint32_t i = v->row[k];
        /* the partner link stands for HTA's index_correlation > 0, except
         * that a launch of event 0 is kept (TF Q7) */
        if (r->partner[i] == HTA_NO_ROW || !is_launch_name(ids, r->name[i]))
            continue;
        for (size_t x = cp_lower(dev, ndev, r->correlation[i]); x < ndev && dev[x].corr == r->correlation[i]; x++) {
            uint32_t j = v->row[dev[x].pos];
            used[dev[x].pos] = 1;
            PUSH(v->ts[k], hta_row_stream(r, j), i, j, 1);
        }
    }
    for (size_t k = 0; k < nv; k++) {
        if (!used[k]) continue;
        uint32_t j = v->row[k];
        PUSH(v->ts[k], hta_row_stream(r, j), j, j, -1);
    }
#undef PUSH
    free(dev);
    free(used);
    dev = NULL;
    used = NULL;

    perm = malloc((n ? n : 1) * sizeof *perm);
    if (!perm) goto oom2;
    if (ties == HTA_TIES_NUMPY) {
        if (hta_argsort_numpy_i64(ts, n, perm)) goto oom2;
    } else {
        for (size_t k = 0; k < n; k++) perm[k] = (uint32_t)k;
        if (hta_stable_sort_idx_i64(perm, n, ts)) goto oom2;
    }
    if (hta_stable_sort_idx_i64(perm, n, stream)) goto oom2; /* group by stream, keeping time order */

    out->n = n;
    out->ts = malloc((n ? n : 1) * sizeof *out->ts);
    out->stream = malloc((n ? n : 1) * sizeof *out->stream);
    out->row = malloc((n ? n : 1) * sizeof *out->row);
    out->dev_row = malloc((n ? n : 1) * sizeof *out->dev_row);
    out->queue = malloc((n ? n : 1) * sizeof *out->queue);
    if (!out->ts || !out->stream || !out->row || !out->dev_row || !out->queue) goto oom2;
    int64_t q = 0;
    for (size_t k = 0; k < n; k++) {
        uint32_t p = perm[k];
        if (k == 0 || stream[p] != out->stream[k - 1]) q = 0;
        q += delta[p];
        out->ts[k] = ts[p];
        out->stream[k] = stream[p];
        out->row[k] = row[p];
        out->dev_row[k] = drow[p];
        out->queue[k] = q;
    }
    free(ts);
    free(stream);
    free(row);
    free(drow);
    free(delta);
    free(perm);
    return HTA_OK;
oom2:
    free(ts);
    free(stream);
    free(row);
    free(drow);
    free(delta);
    free(perm);
oom:
    free(dev);
    free(used);
    hta_queue_series_free(out);
    return hta_oom(err);
}
