/* HTA's loaded table for one rank (TF§10): aligned, rounded, filtered. */
#include "hta/view.h"

#include <stdlib.h>
#include <string.h>

#include "trace/derive.h"
#include "core/bigbuf.h"
#include "core/hash.h"
#include "hta/vocab.h"

/* The one place a view's times come from: HTA mode applies HTA's whole-us rounding (TF§6), with its
 * -1 us durations of events inside one microsecond (Q6); exact mode keeps the ns as written, a negative
 * duration clamped to 0. */
void hta_row_times(const hta_rank *r, size_t i, hta_time_mode mode, int64_t *ts, int64_t *end) {
    if (mode == HTA_TIME_HTA) {
        hta_round_row_q6(r, i, ts, end);
        return;
    }
    *ts = r->ts[i];
    *end = r->ts[i] + (r->dur[i] > 0 ? r->dur[i] : 0);
}

/* HTA's min_ts (TF§10.1), taken over rounded times as HTA aligns after rounding.  Only --hta-compat uses
 * it; by default the context keeps the trace's own clock (origin 0). */
int64_t hta_trace_origin(const hta_trace *t, hta_time_mode mode) {
    int64_t m = INT64_MAX;
    for (size_t k = 0; k < t->nranks; k++) {
        const hta_rank *r = t->ranks[k];
        for (size_t i = 0; i < r->n; i++) {
            int64_t a, e;
            hta_row_times(r, i, mode, &a, &e);
            if (a < m) m = a;
        }
    }
    return m == INT64_MAX ? 0 : m;
}

int64_t hta_sym_step(const hta_trace *t, uint32_t s, int64_t *memo) {
    if (!memo) return hta_step_number(hta_sym(t->sym, s));
    if (!memo[s]) memo[s] = hta_step_number(hta_sym(t->sym, s)) + 2; /* >= 1: -1 (no step) is 1 */
    return memo[s] - 2;
}

/* Distinct ProfilerStep#N names (HTA's |P|), counted up to 2: the filter only asks whether there are two
 * or more (TF§10.2), so the scan stops at the second. ri == SIZE_MAX counts over all ranks as HTA does
 * (--hta-compat, Q12); one rank's own names are what keeps --ranks from changing the rows of a rank. */
int hta_trace_multi_step(const hta_trace *t, size_t ri) {
    uint32_t seen[2];
    size_t ns = 0;
    size_t k0 = ri == SIZE_MAX ? 0 : ri, k1 = ri == SIZE_MAX ? t->nranks : ri + 1;
    int64_t *memo = calloc(hta_symtab_count(t->sym) + 1, sizeof *memo); /* NULL: no memo, same answer */
    for (size_t k = k0; k < k1 && ns < 2; k++) {
        const hta_rank *r = t->ranks[k];
        for (size_t i = 0; i < r->n && ns < 2; i++) {
            if (hta_sym_step(t, r->name[i], memo) < 0) continue;
            if (ns == 1 && seen[0] == r->name[i]) continue;
            seen[ns++] = r->name[i];
        }
    }
    free(memo);
    return ns >= 2;
}

/* HTA filters MTIA ranks by a rule of their own (TF§10.2) that hta does not implement: such ranks stay
 * unfiltered (docs/differences-from-hta.md).  The test is HTA's first device-type rule (TF§12.1). */
static int is_mtia(const hta_rank *r) {
    for (size_t i = 0; i < r->nmeta; i++)
        if (!strcmp(r->meta[i].key, "distributedInfo") && strstr(r->meta[i].json, "mtia:hccl")) return 1;
    return 0;
}

/* The correlation ids of the kept CPU rows.  TF§10.2 step 4 is an inner join on correlation; a set asks
 * "is it matched" once per GPU row, so a GPU row matched by k CPU rows is kept once, not k times as in
 * HTA.  Kineto's ids are counters, dense from a small number, so the set is a bitmap over the ids' range
 * (an eighth of a byte an id: 1.5 M rows take 200 KB, where a hash table of twice the rows took 24 MB
 * of fresh pages and a cache miss a probe); ids spread wider than 64 a row fall back to open addressing
 * with linear probing, where INT64_MIN marks an empty slot (ids are -1 when absent, else Kineto's
 * non-negative counters). */
typedef struct corr_set {
    uint64_t *bits; /* bitmap mode: id - lo, for ids lo .. hi */
    int64_t lo, hi;
    int64_t *v; /* hash mode */
    size_t mask;
} corr_set;

static hta_status set_init(corr_set *s, size_t n, int64_t lo, int64_t hi, hta_error *err) {
    if (lo <= hi && (uint64_t)hi - (uint64_t)lo < 64 * (uint64_t)(n ? n : 1)) {
        size_t words = (size_t)(((uint64_t)hi - (uint64_t)lo) / 64 + 1);
        s->bits = calloc(words, sizeof *s->bits);
        if (!s->bits) return hta_oom(err);
        s->lo = lo, s->hi = hi;
        return HTA_OK;
    }
    /* a power of two (a mask instead of a modulo), at least twice the entries so that probe runs stay
     * short */
    size_t ns = 64;
    while (ns < 2 * n) ns <<= 1;
    s->v = malloc(ns * sizeof *s->v);
    if (!s->v) return hta_oom(err);
    hta_prefault(s->v, ns * sizeof *s->v);
    for (size_t i = 0; i < ns; i++) s->v[i] = INT64_MIN;
    s->mask = ns - 1;
    return HTA_OK;
}
static void set_add(corr_set *s, int64_t x) {
    if (s->bits) { /* every id added lies in lo .. hi, which were taken over them */
        uint64_t d = (uint64_t)x - (uint64_t)s->lo;
        s->bits[d / 64] |= (uint64_t)1 << (d % 64);
        return;
    }
    size_t j = hta_hash_u64((uint64_t)x) & s->mask;
    while (s->v[j] != INT64_MIN && s->v[j] != x) j = (j + 1) & s->mask;
    s->v[j] = x;
}
static int set_has(const corr_set *s, int64_t x) {
    if (s->bits) {
        if (x < s->lo || x > s->hi) return 0;
        uint64_t d = (uint64_t)x - (uint64_t)s->lo;
        return (int)(s->bits[d / 64] >> (d % 64) & 1);
    }
    size_t j = hta_hash_u64((uint64_t)x) & s->mask;
    while (s->v[j] != INT64_MIN) {
        if (s->v[j] == x) return 1;
        j = (j + 1) & s->mask;
    }
    return 0;
}
static void set_free(corr_set *s) {
    free(s->bits);
    free(s->v);
}

hta_status hta_view_build(const hta_trace *t, size_t ri, const hta_view_opts *o,
                          const hta_view_frame *f, hta_view *v, hta_error *err) {
    static const hta_view_opts dflt;
    if (!o) o = &dflt;
    const hta_rank *r = t->ranks[ri];
    memset(v, 0, sizeof *v);
    v->t = t;
    v->r = r;
    v->origin_ns = f->origin_ns;
    size_t n = r->n;
    v->row = malloc((n ? n : 1) * sizeof *v->row);
    v->ts = malloc((n ? n : 1) * sizeof *v->ts);
    v->dur = malloc((n ? n : 1) * sizeof *v->dur);
    /* v->ts / v->dur hold every row's start and end until the selection is made */
    int64_t *a = v->ts, *e = v->dur;
    unsigned char *gpu = malloc(n ? n : 1);
    corr_set cs = {0};
    if (!v->row || !v->ts || !v->dur || !gpu) goto oom;
    hta_prefault(v->row, n * sizeof *v->row);
    hta_prefault(v->ts, n * sizeof *v->ts);
    hta_prefault(v->dur, n * sizeof *v->dur);
    hta_prefault(gpu, n);
    /* The filter compares times in the view's mode: HTA filters its rounded times. */
    for (size_t i = 0; i < n; i++) hta_row_times(r, i, o->time_mode, &a[i], &e[i]);

    /* HTA filters only with two or more step names (|P| >= 2): with a single step there is no last,
     * incomplete step to drop. */
    int multi = f->multi_step >= 0 ? f->multi_step : hta_trace_multi_step(t, ri);
    int filter = !o->no_filter && multi && !is_mtia(r);
    size_t m = 0;
    if (f->window) {
        /* A window (--window) decides which rows stay, in place of the filter; the filter's rule decides
         * only their order (GPU block first), so that ties break as they would without the window. */
        int split = 0;
        for (size_t i = 0; filter && i < n; i++) {
            gpu[i] = (unsigned char)hta_row_is_gpu_corr(t, r, i);
            split |= !gpu[i];
        }
        for (size_t i = 0; i < n; i++)
            if (f->window[i] && (!split || gpu[i])) v->row[m++] = (uint32_t)i;
        for (size_t i = 0; split && i < n; i++)
            if (f->window[i] && !gpu[i]) v->row[m++] = (uint32_t)i;
    } else if (!filter) {
        for (size_t i = 0; i < n; i++) v->row[m++] = (uint32_t)i;
    } else {
        int any_cpu = 0, any_step = 0;
        int64_t *memo = calloc(hta_symtab_count(t->sym) + 1, sizeof *memo); /* NULL: no memo, same rows */
        int64_t last_start = INT64_MIN, last_end = INT64_MIN, min_cpu = INT64_MAX, max_cpu = INT64_MIN;
        for (size_t i = 0; i < n; i++) {
            /* CPU/GPU split by TF§7.1 (correlation, sync names), not by stream: the split HTA's filter
             * uses, which makes a gpu_user_annotation a CPU row (Q9). */
            gpu[i] = (unsigned char)hta_row_is_gpu_corr(t, r, i);
            if (gpu[i]) continue;
            any_cpu = 1;
            if (a[i] < min_cpu) min_cpu = a[i];
            if (e[i] > max_cpu) max_cpu = e[i];
            if (hta_sym_step(t, r->name[i], memo) >= 0) {
                any_step = 1;
                if (a[i] > last_start) last_start = a[i];
                if (e[i] > last_end) last_end = e[i];
            }
        }
        free(memo);
        /* TF§10.2 step 1: a rank without CPU rows is left as it is. */
        if (!any_cpu) {
            for (size_t i = 0; i < n; i++) v->row[m++] = (uint32_t)i;
        } else {
            /* HTA's fallback when this rank has no step row of its own */
            if (!any_step) last_start = min_cpu, last_end = max_cpu;
            /* By default the last step (usually cut short by the profiler) and everything after its
             * start go.  With include_last_profiler_step HTA compares a relative ts with an absolute end
             * and so keeps every CPU row (Q1); here both are in one frame, so the rows up to the last
             * step's end stay. */
#define KEPT_CPU(i) (!gpu[i] && (o->include_last_profiler_step ? a[i] <= last_end : a[i] < last_start))
            int64_t lo = INT64_MAX, hi = INT64_MIN;
            size_t nkept = 0;
            for (size_t i = 0; i < n; i++)
                if (KEPT_CPU(i)) {
                    int64_t c = r->correlation[i];
                    if (c < lo) lo = c;
                    if (c > hi) hi = c;
                    nkept++;
                }
            if (set_init(&cs, nkept, lo, hi, err)) goto oom;
            for (size_t i = 0; i < n; i++)
                if (KEPT_CPU(i)) set_add(&cs, r->correlation[i]);
            /* HTA's new table is the kept GPU rows, then the kept CPU rows, each in file order (TF§10.2
             * step 5).  Analyses break ties by this row order (TF§11), so the view keeps it. */
            /* a GPU row whose launch is not in the trace: by its own start (unless HTA's join is asked for) */
            for (size_t i = 0; i < n; i++)
                if (gpu[i] && (set_has(&cs, r->correlation[i]) ||
                               (!o->hta_join && r->partner[i] == HTA_NO_ROW &&
                                (o->include_last_profiler_step ? a[i] <= last_end : a[i] < last_start))))
                    v->row[m++] = (uint32_t)i;
            for (size_t i = 0; i < n; i++)
                if (KEPT_CPU(i)) v->row[m++] = (uint32_t)i;
#undef KEPT_CPU
        }
    }
    v->n = m;
    /* the start/end scratch is no longer needed: recompute per kept row (writing in place would clobber
     * starts not yet read, since the kept GPU rows moved to the front) */
    for (size_t k = 0; k < m; k++) {
        int64_t s0, e0;
        hta_row_times(r, v->row[k], o->time_mode, &s0, &e0);
        v->ts[k] = s0 - v->origin_ns;
        v->dur[k] = e0 - s0;
    }
    set_free(&cs);
    free(gpu);
    return HTA_OK;
oom:
    set_free(&cs);
    free(gpu);
    hta_view_free(v);
    return hta_oom(err);
}

void hta_view_free(hta_view *v) {
    free(v->row);
    free(v->ts);
    free(v->dur);
    v->row = NULL;
    v->ts = v->dur = NULL;
    v->n = 0;
}
