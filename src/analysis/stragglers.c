/* Potential stragglers (analyses.md §14): the ranks whose significant
 * collective kernel starts late, step after step.  A collective cannot finish
 * before its last participant arrives, so the rank that launches it last is
 * the one the others wait for.
 *
 * Differences from HTA (documented in docs/differences-from-hta.md): every
 * NCCL/RCCL kernel naming counts as communication (HTA knows only
 * `ncclKernel*`, so it finds nothing on NCCL >= 2.19's `ncclDevKernel_*`), and
 * step 0 is not excluded (Quirk A10).  `hta_compat` restores HTA's rules. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hta/launch.h"
#include "hta/util.h"
#include "hta/vocab.h"


HTA_TABLE_DEFINE(HTA_STRAGGLERS);
HTA_TABLE_DEFINE(HTA_STRAGGLER_METRIC);
HTA_TABLE_DEFINE(HTA_STRAGGLER_KERNELS);
HTA_TABLE_DEFINE(HTA_STRAGGLER_SUM_RANKS);
HTA_TABLE_DEFINE(HTA_STRAGGLER_SUM_ITERS);
HTA_TABLE_DEFINE(HTA_STRAGGLER_SUM_COLLS);

void hta_straggler_opts_default(hta_straggler_opts *o) { *o = (hta_straggler_opts){.num_candidates = 2}; }

typedef struct rank_count {
    int32_t rank;
    int64_t flagged, steps;
    double metric_sum;
} rank_count;

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}
static size_t uniq_i64(int64_t *v, size_t n) {
    qsort(v, n, sizeof *v, cmp_i64);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!m || v[m - 1] != v[i]) v[m++] = v[i];
    return m;
}
/* Position of x in the sorted v[0..n), or -1. */
static long find_i64(const int64_t *v, size_t n, int64_t x) {
    size_t lo = HTA_LOWER_BOUND(n, m, v[m] < x);
    return lo < n && v[lo] == x ? (long)lo : -1;
}
static int has_i64(const int64_t *v, size_t n, int64_t x) { return find_i64(v, n, x) >= 0; }

/* Entry of rank in rc[0..n) (ascending rank), or NULL. */
static rank_count *find_rank(rank_count *rc, size_t n, int32_t rank) {
    size_t lo = HTA_LOWER_BOUND(n, m, rc[m].rank < rank);
    return lo < n && rc[lo].rank == rank ? &rc[lo] : NULL;
}

/* One long communication kernel of one rank. */
typedef struct ck {
    int64_t stream, iter, ts, dur; /* ts, dur: ns in the common view frame */
    const char *name;
    int32_t rank;
    uint32_t pos; /* view position: "last in table order" */
    int64_t occ;  /* occurrence of this kernel in this step on this rank, in time order */
} ck;

/* The group a kernel call belongs to: stream, name, step. */
static int cmp_ck_group(const ck *x, const ck *y) {
    if (x->stream != y->stream) return x->stream < y->stream ? -1 : 1;
    int c = strcmp(x->name, y->name);
    if (c) return c;
    if (x->iter != y->iter) return x->iter < y->iter ? -1 : 1;
    return 0;
}

/* HTA's grouping order, and within a group the view position, so that the last element of each (stream,
 * name, step, rank) run is pandas' last() in table order. */
static int cmp_ck(const void *a, const void *b) {
    const ck *x = a, *y = b;
    int c = cmp_ck_group(x, y);
    if (c) return c;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

/* Each rank's calls of one kernel in one step in time order, to number them (occ). */
static int cmp_ck_time(const void *a, const void *b) {
    const ck *x = a, *y = b;
    int c = cmp_ck_group(x, y);
    if (c) return c;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

/* The j-th calls of all ranks side by side: one collective call per run of equal occ. */
static int cmp_ck_inst(const void *a, const void *b) {
    const ck *x = a, *y = b;
    int c = cmp_ck_group(x, y);
    if (c) return c;
    if (x->occ != y->occ) return x->occ < y->occ ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static int same_kernel(const ck *a, const ck *b) { return a->stream == b->stream && !strcmp(a->name, b->name); }

/* HTA: per (stream, name, step, rank) the last row in table order among the
 * rows at least min_dur long.  On different ranks that can be different
 * collective calls: the rank everybody waits for has short kernels, which
 * the duration filter drops. */
static size_t select_hta(ck *k, size_t n, double min_dur) {
    size_t m = 0;
    /* HTA drops the short rows before it groups, which is what makes it pick different calls on
     * different ranks. */
    for (size_t i = 0; i < n; i++)
        if ((double)k[i].dur >= min_dur) k[m++] = k[i];
    n = m;
    qsort(k, n, sizeof *k, cmp_ck);
    m = 0;
    for (size_t i = 0; i < n; i++) {
        if (i + 1 < n && same_kernel(&k[i], &k[i + 1]) && k[i].iter == k[i + 1].iter && k[i].rank == k[i + 1].rank)
            continue;
        k[m++] = k[i];
    }
    return m;
}

/* Ours: the same collective call on every rank (NCCL issues a communicator's
 * collectives in the same order everywhere, so the j-th call of a kernel in a
 * step is one call); per (stream, name, step) the last call that took at
 * least min_dur on some rank.  Result sorted by (stream, name, step, rank). */
static size_t select_instances(ck *k, size_t n, double min_dur) {
    qsort(k, n, sizeof *k, cmp_ck_time);
    for (size_t i = 0; i < n; i++)
        k[i].occ = i && same_kernel(&k[i], &k[i - 1]) && k[i].iter == k[i - 1].iter && k[i].rank == k[i - 1].rank
                       ? k[i - 1].occ + 1
                       : 0;
    qsort(k, n, sizeof *k, cmp_ck_inst);
    size_t m = 0;
    for (size_t a = 0; a < n;) {
        size_t b = a; /* [a, b): one (stream, name, step) */
        while (b < n && same_kernel(&k[a], &k[b]) && k[b].iter == k[a].iter) b++;
        size_t last = b, last_end = b;
        for (size_t i = a; i < b;) {
            size_t j = i;
            int64_t mx = 0;
            /* A call qualifies when it is long on some rank: on the straggler itself it is short (it waits
             * for nobody), on the ranks waiting for it long. */
            while (j < b && k[j].occ == k[i].occ) mx = k[j].dur > mx ? k[j].dur : mx, j++;
            if ((double)mx >= min_dur) last = i, last_end = j;
            i = j;
        }
        for (size_t i = last; i < last_end; i++) k[m++] = k[i];
        a = b;
    }
    return m;
}

/* pandas' std: sample standard deviation (ddof 1), NaN below two values (§0.2).  Two passes, the mean
 * first: steadier than a sum of squares for values as close together as these. */
static double sample_std(const double *v, size_t n) {
    if (n < 2) return NAN;
    double m = 0, ss = 0;
    for (size_t i = 0; i < n; i++) m += v[i];
    m /= (double)n;
    for (size_t i = 0; i < n; i++) ss += (v[i] - m) * (v[i] - m);
    return sqrt(ss / (double)(n - 1));
}

/* Most flagged first; equal counts by ascending rank, where HTA's order is unspecified (§14.2 step 5). */
static int cmp_rc(const void *a, const void *b) {
    const rank_count *x = a, *y = b;
    if (x->flagged != y->flagged) return x->flagged > y->flagged ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static int cmp_desc_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

/* ---- one rank's summary ----
 * What the cross-rank analysis below reads of a rank, so that a rank's model can be freed before the next
 * is loaded (docs/scaling.md): per iteration, whether a row names it as a step and its rows' span; the
 * rank's candidate communication kernels.  Which steps count (named on any rank, --steps) and which
 * kernels are long enough (1% of the mean step over all ranks) are decided across ranks, so every
 * iteration and every communication kernel of the rank is kept. */

typedef struct iter_span {
    int64_t it, rows, first, end;
    int named;
} iter_span;

/* The entry of iteration it in v[0..*n) (ascending), added when missing. */
static iter_span *span_of(hta_arena *A, iter_span **v, size_t *n, size_t *cap, int64_t it) {
    size_t lo = HTA_LOWER_BOUND(*n, m, (*v)[m].it < it);
    if (lo < *n && (*v)[lo].it == it) return &(*v)[lo];
    if (*n == *cap) {
        iter_span *q = hta_arena_grow(A, *v, cap, *n + 1, sizeof *q);
        if (!q) return NULL;
        *v = q;
    }
    memmove(*v + lo + 1, *v + lo, (*n - lo) * sizeof **v);
    (*n)++;
    (*v)[lo] = (iter_span){it, 0, INT64_MAX, INT64_MIN, 0};
    return &(*v)[lo];
}

static hta_status summarise_rank(hta_ctx *ctx, size_t k, hta_table *rt, hta_table *it, hta_table *ct,
                                 hta_error *err) {
    const hta_trace *t = ctx->trace;
    const hta_rank *r = t->ranks[k];
    const hta_view *v;
    HTA_TRY(hta_ctx_view(ctx, k, &v, err));
    hta_arena *A = &ctx->scratch;
    hta_arena_mark mark = hta_arena_save(A);
    size_t n = 0, cap = 16, last = 0;
    iter_span *sp = HTA_ANEW(A, iter_span, cap);
    /* per name, asked once (rows are many, names few, and each question reads the name's text): its step
     * iteration + 2 (0: not yet), and whether it is a collective kernel's (0: not yet, 1 no, 2 yes) */
    size_t nsym = hta_symtab_count(t->sym);
    int64_t *step_of = hta_arena_calloc(A, nsym ? nsym : 1, sizeof *step_of);
    uint8_t *nccl = hta_arena_calloc(A, nsym ? nsym : 1, 1);
    long row = hta_table_add_row(rt);
    if (!sp || !step_of || !nccl || row < 0) goto oom;
    hta_table_set_int(rt, (size_t)row, HTA_SSUM_RANK, r->rank);
    for (size_t p = 0; p < v->n; p++) {
        uint32_t i = v->row[p];
        uint32_t sym = r->name[i];
        if (!step_of[sym]) step_of[sym] = hta_step_iteration(hta_sym(t->sym, sym)) + 2;
        int64_t s = step_of[sym] - 2;
        iter_span *e;
        if (s >= 0) {
            if (!(e = span_of(A, &sp, &n, &cap, s))) goto oom;
            e->named = 1;
        }
        /* the steps are numbers >= 0: rows of other iterations are in none */
        int64_t itr = r->iteration[i];
        if (itr < 0) continue;
        /* a row is most often of the previous row's iteration: its entry, where no insertion moved it */
        if (last < n && sp[last].it == itr) e = &sp[last];
        else if (!(e = span_of(A, &sp, &n, &cap, itr))) goto oom;
        last = (size_t)(e - sp);
        e->rows++;
        if (v->ts[p] < e->first) e->first = v->ts[p];
        if (v->ts[p] + v->dur[p] > e->end) e->end = v->ts[p] + v->dur[p];
        /* HTA's straggler rule takes stream > 0 (§0.5); --hta-compat: iteration > 0 (Quirk A10) */
        if (hta_row_stream(r, i) <= 0 || (ctx->hta_compat && itr <= 0)) continue;
        const char *nm = hta_sym(t->sym, sym);
        if (!nccl[sym])
            nccl[sym] = ctx->hta_compat ? hta_is_nccl_kernel_name_hta(nm) ? 2 : 1 : hta_is_nccl_kernel_name(nm) ? 2 : 1;
        if (nccl[sym] == 1) continue;
        if ((row = hta_table_add_row(ct)) < 0) goto oom;
        hta_table_set_int(ct, (size_t)row, HTA_SSUM_COLL_RANK, r->rank);
        hta_table_set_int(ct, (size_t)row, HTA_SSUM_COLL_STREAM, hta_row_stream(r, i));
        hta_table_set_int(ct, (size_t)row, HTA_SSUM_COLL_ITER, itr);
        hta_table_set_int(ct, (size_t)row, HTA_SSUM_COLL_TS, v->ts[p]);
        hta_table_set_int(ct, (size_t)row, HTA_SSUM_COLL_DUR, v->dur[p]);
        hta_table_set_int(ct, (size_t)row, HTA_SSUM_COLL_POS, (int64_t)p);
        if (hta_table_set_str(ct, (size_t)row, HTA_SSUM_COLL_NAME, nm)) goto oom;
    }
    for (size_t j = 0; j < n; j++) {
        if ((row = hta_table_add_row(it)) < 0) goto oom;
        hta_table_set_int(it, (size_t)row, HTA_SSUM_ITER_RANK, r->rank);
        hta_table_set_int(it, (size_t)row, HTA_SSUM_ITER, sp[j].it);
        hta_table_set_int(it, (size_t)row, HTA_SSUM_ITER_NAMED, sp[j].named);
        hta_table_set_int(it, (size_t)row, HTA_SSUM_ITER_ROWS, sp[j].rows);
        hta_table_set_int(it, (size_t)row, HTA_SSUM_ITER_FIRST, sp[j].rows ? sp[j].first : 0);
        hta_table_set_int(it, (size_t)row, HTA_SSUM_ITER_END, sp[j].rows ? sp[j].end : 0);
    }
    hta_arena_reset(A, mark);
    hta_ctx_view_done(ctx, k); /* one rank's view at a time */
    return HTA_OK;
oom:
    hta_arena_reset(A, mark);
    hta_ctx_view_done(ctx, k);
    return hta_oom(err);
}

hta_status hta_straggler_summary(hta_ctx *ctx, hta_result *out, hta_error *err) {
    hta_table *rt = hta_table_from_def(&HTA_STRAGGLER_SUM_RANKS_TABLE);
    hta_table *it = hta_table_from_def(&HTA_STRAGGLER_SUM_ITERS_TABLE);
    hta_table *ct = hta_table_from_def(&HTA_STRAGGLER_SUM_COLLS_TABLE);
    hta_status st = !rt || !it || !ct ? hta_oom(err) : HTA_OK;
    for (size_t k = 0; k < hta_ctx_nranks(ctx) && !st; k++) st = summarise_rank(ctx, k, rt, it, ct, err);
    return HTA_RESULT_FINISH(st, out, err, &rt, &it, &ct);
}

#define I64(t, c, r) ((t)->cols[c].v.i[r])

/* ---- the summaries folded as they come ----
 * A job's ranks run the same collective kernels: their names are kept once (straggler_fold_names) and each
 * kernel's row names its name's row instead (straggler_fold_collectives: 56 bytes, not 64 and a copy of the
 * name).  The other columns are the summary's, in its order, so that the analysis reads either. */
#define HTA_SFOLD_NAMES(T, C, D)                                                                             \
    T("straggler_fold_names", "the collective kernels' names, each once")                                    \
    C(HTA_SFN_NAME, "kernel", STR, "", "kernel name")
HTA_TABLE_LOCAL(HTA_SFOLD_NAMES);

#define HTA_SFOLD_COLLS(T, C, D)                                                                             \
    T("straggler_fold_collectives", "straggler_summary_collectives, each name by its row of the names")      \
    HTA_SSUM_KERNEL_COLS(C, HTA_SFC)                                                                         \
    C(HTA_SFC_NAME, "kernel", INT, "", "row of straggler_fold_names")
HTA_TABLE_LOCAL(HTA_SFOLD_COLLS);
_Static_assert((int)HTA_SFC_STREAM == (int)HTA_SSUM_COLL_STREAM && (int)HTA_SFC_POS == (int)HTA_SSUM_COLL_POS &&
                   (int)HTA_SFC_NAME == (int)HTA_SSUM_COLL_NAME,
               "the folded kernels' columns are the summary's");

hta_status hta_straggler_fold(hta_result *acc, hta_result *part, hta_error *err) {
    if (!hta_result_find(part, HTA_STRAGGLER_SUM_COLLS_TABLE.name)) return HTA_OK;
    hta_table *ct, *nm = hta_table_from_def(&HTA_SFOLD_NAMES_TABLE);
    HTA_TRY(hta_result_take(part, &HTA_STRAGGLER_SUM_COLLS_TABLE, &ct, err));
    hta_table *names = hta_result_table_in(acc, &HTA_SFOLD_NAMES_TABLE);
    hta_table *fc = hta_result_table_in(acc, &HTA_SFOLD_COLLS_TABLE);
    size_t n = ct->nrows, *at = malloc((n ? n : 1) * sizeof *at);
    hta_status st = HTA_OK;
    if (!nm || !names || !fc || !at || hta_table_reserve(nm, n ? n : 1) || hta_table_reserve(fc, fc->nrows + n))
        goto oom;
    for (size_t i = 0; i < n; i++)
        if (hta_table_add_row(nm) < 0 || hta_table_set_str(nm, i, HTA_SFN_NAME, ct->cols[HTA_SSUM_COLL_NAME].v.s[i]))
            goto oom;
    static const int key[] = {HTA_SFN_NAME};
    if ((st = hta_table_fold_rows(names, nm, key, 1, NULL, 0, NULL, NULL, at, err))) goto out;
    for (size_t i = 0; i < n; i++) {
        size_t r = (size_t)hta_table_add_row(fc);
        for (int c = HTA_SFC_RANK; c < HTA_SFC_NAME; c++) hta_table_set_int(fc, r, c, I64(ct, c, i));
        hta_table_set_int(fc, r, HTA_SFC_NAME, (int64_t)at[i]);
    }
    goto out;
oom:
    st = hta_oom(err);
out:
    hta_table_free(ct), hta_table_free(nm);
    free(at);
    return st;
}

/* The summary table of declaration d in sum, checked column by column: summaries may come from another
 * process (hta-mpi), where the table arrives without its declaration. */
static hta_status sum_table(const hta_result *sum, const hta_table_def *d, const hta_table **out, hta_error *err) {
    return hta_result_find_as(sum, d, "straggler summaries", out, err);
}

static int cmp_rank(const void *a, const void *b) {
    const rank_count *x = a, *y = b;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* The call's scratch, all of it from one arena. */
typedef struct work {
    hta_arena A;
    int64_t *steps;
    ck *k;
    double *tmp;
    rank_count *rc;
} work;

hta_status hta_potential_stragglers(hta_ctx *ctx, const hta_straggler_opts *o, hta_result *out,
                                    hta_error *err) {
    hta_result sum;
    hta_result_init(&sum);
    hta_status st = hta_straggler_summary(ctx, &sum, err);
    if (!st) st = hta_stragglers_from_summary(&sum, o, ctx->hta_compat, out, err);
    hta_result_free(&sum);
    return st;
}

hta_status hta_stragglers_from_summary(const hta_result *sum, const hta_straggler_opts *o, int hta_compat,
                                       hta_result *out, hta_error *err) {
    HTA_OPTS_OR_DEFAULT(hta_straggler_opts, o);
    const hta_table *RT, *IT, *CT;
    HTA_TRY(sum_table(sum, &HTA_STRAGGLER_SUM_RANKS_TABLE, &RT, err));
    HTA_TRY(sum_table(sum, &HTA_STRAGGLER_SUM_ITERS_TABLE, &IT, err));
    /* the kernels folded (hta_straggler_fold) or as summarised */
    const hta_table *FN = NULL;
    if (hta_result_find(sum, HTA_SFOLD_COLLS_TABLE.name)) {
        HTA_TRY(sum_table(sum, &HTA_SFOLD_COLLS_TABLE, &CT, err));
        HTA_TRY(sum_table(sum, &HTA_SFOLD_NAMES_TABLE, &FN, err));
    } else {
        HTA_TRY(sum_table(sum, &HTA_STRAGGLER_SUM_COLLS_TABLE, &CT, err));
    }
    hta_table *res = hta_table_from_def(&HTA_STRAGGLERS_TABLE);
    hta_table *met = hta_table_from_def(&HTA_STRAGGLER_METRIC_TABLE);
    hta_table *ker = hta_table_from_def(&HTA_STRAGGLER_KERNELS_TABLE);
    work w = {.A = HTA_ARENA_INIT};
    hta_arena *A = &w.A;
    hta_status st = HTA_OK;
    if (!res || !met || !ker) goto oom;
    size_t ns = RT->nrows;
    /* §14.2 step 1: fewer than one candidate means one */
    int k_cand = o->num_candidates < 1 ? 1 : o->num_candidates;

    /* The profiler steps of every rank, by their names, as HTA's get_profiler_steps (§14.1). */
    size_t nsteps = 0;
    w.steps = HTA_ANEW(A, int64_t, IT->nrows);
    if (!w.steps) goto oom;
    for (size_t q = 0; q < IT->nrows; q++)
        if (I64(IT, HTA_SSUM_ITER_NAMED, q)) w.steps[nsteps++] = I64(IT, HTA_SSUM_ITER, q);
    nsteps = uniq_i64(w.steps, nsteps);
    /* §14.2 step 1: the requested steps that exist (all when none are requested). */
    if (o->steps) {
        size_t m = 0;
        for (size_t i = 0; i < nsteps; i++)
            for (size_t j = 0; j < o->nsteps; j++)
                if (o->steps[j] == w.steps[i]) {
                    w.steps[m++] = w.steps[i];
                    break;
                }
        nsteps = m;
    }
    /* A straggler is late relative to the other ranks; with one rank there is nothing to compare.  HTA
     * raises when there are no steps; both cases are notes and empty tables here. */
    if (ns < 2) {
        hta_result_note(out, "%zu rank%s selected: finding stragglers needs at least two ranks to compare", ns,
                        ns == 1 ? "" : "s");
        goto done;
    }
    if (!nsteps) {
        hta_result_note(out, "no %sprofiler steps (ProfilerStep#N) in the analysed part of the trace: nothing to "
                             "compare step by step",
                        o->steps ? "requested " : "");
        goto done;
    }

    /* D = rows in a valid step (§14.2 step 2): its span gives the mean step time, the unit every start and
     * duration is measured in, so that ranks and steps compare. */
    int64_t tmin = INT64_MAX, tmax = INT64_MIN;
    unsigned char *present = hta_arena_calloc(A, nsteps, 1);
    if (!present) goto oom;
    for (size_t q = 0; q < IT->nrows; q++) {
        long si = find_i64(w.steps, nsteps, I64(IT, HTA_SSUM_ITER, q));
        if (si < 0 || !I64(IT, HTA_SSUM_ITER_ROWS, q)) continue;
        present[si] = 1;
        if (I64(IT, HTA_SSUM_ITER_FIRST, q) < tmin) tmin = I64(IT, HTA_SSUM_ITER_FIRST, q);
        if (I64(IT, HTA_SSUM_ITER_END, q) > tmax) tmax = I64(IT, HTA_SSUM_ITER_END, q);
    }
    /* HTA divides by the steps actually present in D */
    size_t nd = 0;
    for (size_t s = 0; s < nsteps; s++) nd += present[s];
    if (!nd) {
        hta_result_note(out, "no events inside the selected profiler steps");
        goto done;
    }
    double iter_ns = (double)(tmax - tmin) / (double)nd;
    /* HTA's min_normalized_duration: kernels under 1% of a step are not significant collectives */
    double min_dur_ns = 0.01 * iter_ns;

    w.k = HTA_ANEW(A, ck, CT->nrows);
    if (!w.k) goto oom;
    size_t nk = 0;
    for (size_t q = 0; q < CT->nrows; q++) {
        int64_t it = I64(CT, HTA_SSUM_COLL_ITER, q);
        if (!has_i64(w.steps, nsteps, it)) continue;
        w.k[nk++] = (ck){I64(CT, HTA_SSUM_COLL_STREAM, q), it, I64(CT, HTA_SSUM_COLL_TS, q),
                         I64(CT, HTA_SSUM_COLL_DUR, q),
                         FN ? FN->cols[HTA_SFN_NAME].v.s[I64(CT, HTA_SFC_NAME, q)]
                            : CT->cols[HTA_SSUM_COLL_NAME].v.s[q],
                         (int32_t)I64(CT, HTA_SSUM_COLL_RANK, q), (uint32_t)I64(CT, HTA_SSUM_COLL_POS, q), 0};
    }
    nk = hta_compat ? select_hta(w.k, nk, min_dur_ns) : select_instances(w.k, nk, min_dur_ns);
    if (!nk) {
        hta_result_note(out,
                        "no communication kernel of at least 1%% of the mean step time (%.3f us) in the selected "
                        "steps%s",
                        min_dur_ns / 1000.0, hta_compat ? " (--hta-compat: only ncclKernel* names count)" : "");
        goto done;
    }

    /* Per (stream, name): mean over steps of the std of normalised durations across ranks.  The kernel
     * whose duration varies most between ranks is the collective where ranks wait for each other; NaN
     * spreads (a step with the kernel on one rank) are ignored as pandas' mean does.  Ties go to the first
     * in (stream, name) order: names, not HTA's hash-seeded symbol ids. */
    w.tmp = HTA_ANEW(A, double, nk);
    w.rc = hta_arena_calloc(A, ns, sizeof *w.rc);
    if (!w.tmp || !w.rc) goto oom;
    for (size_t k = 0; k < ns; k++) w.rc[k].rank = (int32_t)I64(RT, HTA_SSUM_RANK, k);
    qsort(w.rc, ns, sizeof *w.rc, cmp_rank); /* find_rank's order (the ranks come in rank order anyway) */
    size_t best_first = 0, best_n = 0;
    double best = NAN;
    size_t best_rows_first = 0, best_rows = 0; /* fallback when no spread is defined anywhere */
    for (size_t a = 0; a < nk;) {
        size_t b = a;
        while (b < nk && same_kernel(&w.k[a], &w.k[b])) b++;
        double ssum = 0;
        size_t scount = 0, nsteps_k = 0;
        for (size_t i = a; i < b;) {
            size_t j = i;
            size_t n = 0;
            while (j < b && w.k[j].iter == w.k[i].iter) w.tmp[n++] = (double)w.k[j++].dur / iter_ns;
            double sd = sample_std(w.tmp, n);
            if (!isnan(sd)) ssum += sd, scount++;
            nsteps_k++;
            i = j;
        }
        double mean_sd = scount ? ssum / (double)scount : NAN;
        if (!isnan(mean_sd) && (isnan(best) || mean_sd > best)) best = mean_sd, best_first = a, best_n = b - a;
        if (b - a > best_rows) best_rows = b - a, best_rows_first = a;
        /* ranks with this kernel */
        size_t nr = 0;
        for (size_t q = 0; q < ns; q++) w.rc[q].steps = 0;
        for (size_t i = a; i < b; i++) {
            rank_count *e = find_rank(w.rc, ns, w.k[i].rank);
            if (e && !e->steps++) nr++;
        }
        long row = hta_table_add_row(ker);
        if (row < 0) goto oom;
        hta_table_set_int(ker, row, HTA_STRAGGLER_KERNELS_STREAM, w.k[a].stream);
        if (hta_table_set_str(ker, row, HTA_STRAGGLER_KERNELS_KERNEL, w.k[a].name)) goto oom;
        hta_table_set_int(ker, row, HTA_STRAGGLER_KERNELS_RANKS, (int64_t)nr);
        hta_table_set_int(ker, row, HTA_STRAGGLER_KERNELS_STEPS, (int64_t)nsteps_k);
        hta_table_set_float(ker, row, HTA_STRAGGLER_KERNELS_SPREAD, mean_sd);
        a = b;
    }
    /* No spread anywhere: HTA's selection has nothing to go on; the most frequent kernel still gives a
     * metric. */
    if (isnan(best)) {
        best_first = best_rows_first;
        best_n = best_rows;
        hta_result_note(out, "no step has this kernel on two ranks: the kernel chosen is the most frequent one");
    }
    for (size_t r = 0; r < ker->nrows; r++) {
        const char *kn = hta_table_get_str(ker, r, HTA_STRAGGLER_KERNELS_KERNEL);
        double stream = hta_table_get_float(ker, r, HTA_STRAGGLER_KERNELS_STREAM);
        hta_table_set_int(ker, r, HTA_STRAGGLER_KERNELS_CHOSEN,
                          stream == (double)w.k[best_first].stream && !strcmp(kn, w.k[best_first].name));
    }

    /* Flag, per step, the ranks at or above the k-th latest normalised start (§14.2 step 4): the last to
     * arrive at the collective are those the others waited for.  With fewer ranks than k in a step, all of
     * them are flagged. */
    const ck *mk = &w.k[best_first];
    for (size_t k = 0; k < ns; k++) w.rc[k].steps = 0;
    for (size_t i = 0; i < best_n;) {
        size_t j = i, n = 0;
        while (j < best_n && mk[j].iter == mk[i].iter) w.tmp[n++] = (double)(mk[j++].ts - tmin) / iter_ns;
        qsort(w.tmp, n, sizeof *w.tmp, cmp_desc_d);
        double thr = w.tmp[(n < (size_t)k_cand ? n : (size_t)k_cand) - 1];
        for (size_t q = i; q < j; q++) {
            double ms = (double)(mk[q].ts - tmin) / iter_ns;
            int flag = ms >= thr;
            rank_count *e = find_rank(w.rc, ns, mk[q].rank);
            if (e) {
                e->flagged += flag;
                e->steps++;
                e->metric_sum += ms;
            }
            long row = hta_table_add_row(met);
            if (row < 0) goto oom;
            hta_table_set_int(met, row, HTA_STRAGGLER_METRIC_RANK, mk[q].rank);
            hta_table_set_int(met, row, HTA_STRAGGLER_METRIC_STEP, mk[q].iter);
            hta_table_set_int(met, row, HTA_STRAGGLER_METRIC_STREAM, mk[q].stream);
            if (hta_table_set_str(met, row, HTA_STRAGGLER_METRIC_KERNEL, mk[q].name)) goto oom;
            hta_table_set_float(met, row, HTA_STRAGGLER_METRIC_START, hta_ns_to_us(mk[q].ts));
            hta_table_set_float(met, row, HTA_STRAGGLER_METRIC_NORM_START, ms);
            hta_table_set_float(met, row, HTA_STRAGGLER_METRIC_DURATION, (double)mk[q].dur / 1000.0);
            hta_table_set_float(met, row, HTA_STRAGGLER_METRIC_NORM_DURATION, (double)mk[q].dur / iter_ns);
            hta_table_set_int(met, row, HTA_STRAGGLER_METRIC_FLAGGED, flag);
        }
        i = j;
    }
    /* HTA ranks by flag count (nlargest, §14.2 step 5); ranks without the kernel cannot be chosen */
    size_t nrc = 0;
    for (size_t k = 0; k < ns; k++)
        if (w.rc[k].steps) w.rc[nrc++] = w.rc[k];
    qsort(w.rc, nrc, sizeof *w.rc, cmp_rc);
    for (size_t k = 0; k < nrc && k < (size_t)k_cand; k++) {
        long row = hta_table_add_row(res);
        if (row < 0) goto oom;
        hta_table_set_int(res, row, HTA_STRAGGLERS_RANK, w.rc[k].rank);
        hta_table_set_int(res, row, HTA_STRAGGLERS_FLAGGED, w.rc[k].flagged);
        hta_table_set_int(res, row, HTA_STRAGGLERS_STEPS, w.rc[k].steps);
        hta_table_set_float(res, row, HTA_STRAGGLERS_MEAN_START, w.rc[k].metric_sum / (double)w.rc[k].steps);
    }
    hta_result_note(out,
                    "steps %lld..%lld (%zu), mean step time %.3f us; metric: start of '%s' on stream %lld relative "
                    "to the first event, in mean step times; the %d latest starters of each step are flagged",
                    (long long)w.steps[0], (long long)w.steps[nsteps - 1], nd, iter_ns / 1000.0, mk->name,
                    (long long)mk->stream, k_cand);

done:
    hta_arena_free(A);
    if (hta_result_add(out, res)) res = NULL, st = hta_oom(err);
    else res = NULL;
    if (hta_result_add(out, met)) met = NULL, st = hta_oom(err);
    else met = NULL;
    if (hta_result_add(out, ker)) ker = NULL, st = hta_oom(err);
    return st;
oom:
    st = hta_oom(err);
    hta_arena_free(A);
    hta_table_free(res);
    hta_table_free(met);
    hta_table_free(ker);
    return st;
}
