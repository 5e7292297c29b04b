/* ATen op -> kernel sequences with their delays (analyses.md §9): every
 * kernel launch is attributed to the innermost `aten::` op enclosing it; per
 * op instance the launched kernels form a sequence; per (op, sequence) the
 * number of instances and the mean delays of the first launch (from the op's
 * start) and of the first kernel (from its launch).
 *
 * Differences from HTA: each rank's table holds only that rank's records
 * (HTA accumulates them across ranks, Quirk A5); a trace without any launch
 * inside an ATen op gives an empty table (HTA raises KeyError, A18); a launch
 * whose kernel is missing is skipped (HTA fails on `.item()`). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hta/launch.h"
#include "hta/util.h"
#include "hta/vocab.h"

HTA_TABLE_DEFINE(HTA_ATEN_OPS);

/* The part's own table (hta/table.h, "reducing parts"): one row per context. */
#define HTA_ATEN_OPS_PART(T, C, D)                                                                        \
    T("aten_ops_part", "per context: the launches its ranks skipped, for the notes about the whole run") \
    C(HTA_OP_OUTSIDE, "launches_outside", INT, "", "launches outside every aten:: op")                   \
    C(HTA_OP_NO_KERNEL, "no_kernel", INT, "", "launches inside an op without a kernel in the trace")     \
    C(HTA_OP_MANY, "many_kernels", INT, "", "launches with several GPU activities")
HTA_TABLE_LOCAL(HTA_ATEN_OPS_PART);

void hta_aten_opts_default(hta_aten_opts *o) { memset(o, 0, sizeof *o); }

/* ---- the deepest enclosing op: rightmost op (by start) whose end covers ---- */

/* For every launch L, §9 step 3 asks for the op with the largest start among those with start <= L's start
 * and end >= L's end.  With the ops sorted by start, the first condition is a prefix [0, p]; a segment
 * tree of the largest end answers "rightmost index in the prefix whose end is >= e" in O(log n), instead
 * of scanning every op for every launch. */
typedef struct seg {
    int64_t *mx; /* max end per node, 1-based heap */
    size_t size;
} seg;

static hta_status seg_init(seg *s, const int64_t *end, size_t n, hta_arena *a, hta_error *err) {
    s->size = 1;
    while (s->size < n) s->size <<= 1;
    s->mx = HTA_ANEW(a, int64_t, 2 * s->size);
    if (!s->mx) return hta_oom(err);
    for (size_t i = 0; i < s->size; i++) s->mx[s->size + i] = i < n ? end[i] : INT64_MIN;
    for (size_t i = s->size - 1; i >= 1; i--) s->mx[i] = s->mx[2 * i] > s->mx[2 * i + 1] ? s->mx[2 * i] : s->mx[2 * i + 1];
    return HTA_OK;
}

/* Largest i <= p with end[i] >= e, or -1: right child first, and a subtree whose largest end is below e is
 * skipped whole. */
static long seg_rightmost(const seg *s, size_t node, size_t lo, size_t hi, size_t p, int64_t e) {
    if (lo > p || s->mx[node] < e) return -1;
    if (hi - lo == 1) return (long)lo;
    size_t mid = lo + (hi - lo) / 2;
    long r = seg_rightmost(s, 2 * node + 1, mid, hi, p, e);
    return r >= 0 ? r : seg_rightmost(s, 2 * node, lo, mid, p, e);
}

typedef struct op_ent {
    int64_t ts;
    uint32_t pos;
} op_ent;

static int cmp_op(const void *a, const void *b) {
    const op_ent *x = a, *y = b;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    /* Equal starts (a parent and a child op starting in the same us): HTA's descending sort of the
     * candidates puts the first in table order first (§9 step 3, with at most 16 candidates, as in
     * practice), so it must be the rightmost here. */
    return (x->pos < y->pos) - (x->pos > y->pos);
}

/* ---- records, op instances, (op, sequence) groups ---- */

/* One launch inside an op, with its kernel: HTA's record (§9 step 3). seq is the launch's order in the
 * table, the order HTA appends records in. */
typedef struct rec {
    uint32_t op, launch, kernel; /* view positions */
    uint32_t seq;                /* record order */
} rec;

typedef struct inst {
    int64_t tid, ts;
    uint32_t name; /* symbol */
    uint32_t first, n; /* records recs[first .. first+n) */
    size_t seq_off;    /* kernel sequence text in op_scan.text */
    double launch_delay, runtime_delay; /* us, first record */
} inst;

/* The sorts' context (qsort_r): no global state. */
typedef struct op_scan {
    const hta_trace *t;
    const hta_rank *r;
    const hta_view *v;
    char *text; /* the kernel sequences, NUL-terminated one after the other */
} op_scan;

/* HTA's groupby (thread_id, aten_op_name, aten_op_start) (§9 step 4): groups in key order, names compared
 * as strings, records in their order inside a group so that the first one is the op's first launch. */
static int cmp_rec(const void *a, const void *b, void *ctx) {
    const rec *x = a, *y = b;
    const op_scan *cx = ctx;
    const hta_rank *r = cx->r;
    const hta_view *v = cx->v;
    int64_t tx = hta_row_thread(r, v->row[x->op])->tid, ty = hta_row_thread(r, v->row[y->op])->tid;
    if (tx != ty) return tx < ty ? -1 : 1;
    uint32_t nx = r->name[v->row[x->op]], ny = r->name[v->row[y->op]];
    if (nx != ny) {
        int c = strcmp(hta_sym(cx->t->sym, nx), hta_sym(cx->t->sym, ny));
        if (c) return c;
    }
    if (v->ts[x->op] != v->ts[y->op]) return v->ts[x->op] < v->ts[y->op] ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

static int cmp_inst(const void *a, const void *b, void *ctx) {
    const inst *x = a, *y = b;
    const op_scan *cx = ctx;
    int c = strcmp(hta_sym(cx->t->sym, x->name), hta_sym(cx->t->sym, y->name));
    if (c) return c;
    return strcmp(cx->text + x->seq_off, cx->text + y->seq_off);
}

/* --hta-compat: the op instances of the ranks done so far, kept for the next ranks' tables, since HTA never
 * resets its record list between ranks (Quirk A5).  (HTA groups the accumulated records; here instances
 * are accumulated, which differs only where two ranks have an instance with one thread id, op name and
 * start time.) */
typedef struct inst_acc {
    inst *v;
    size_t n, cap;
    char *text;
    size_t tlen, tcap;
} inst_acc;

static void inst_acc_free(inst_acc *a) {
    free(a->v);
    free(a->text);
}

/* Appends ins[0..n) (sequences in text) to a; then the caller groups a's instances. */
static hta_status inst_acc_add(inst_acc *a, const inst *ins, size_t n, const char *text, size_t tlen,
                               hta_error *err) {
    if (a->n + n > a->cap) {
        size_t c = (a->n + n) * 2;
        inst *q = realloc(a->v, c * sizeof *q);
        if (!q) return hta_oom(err);
        a->v = q, a->cap = c;
    }
    if (a->tlen + tlen > a->tcap) {
        size_t c = (a->tlen + tlen) * 2;
        char *q = realloc(a->text, c ? c : 1);
        if (!q) return hta_oom(err);
        a->text = q, a->tcap = c;
    }
    if (tlen) memcpy(a->text + a->tlen, text, tlen);
    for (size_t j = 0; j < n; j++) {
        a->v[a->n] = ins[j];
        a->v[a->n++].seq_off += a->tlen;
    }
    a->tlen += tlen;
    return HTA_OK;
}

typedef struct grp {
    const char *op, *seq;
    int64_t count;
    double launch_delay, runtime_delay; /* means, us */
} grp;

/* the sort keys: --sort-by names them by their output column (HTA's sort_by) */
enum { K_COUNT, K_LAUNCH, K_RUNTIME };
static const int g_key_col[] = {HTA_ATEN_OPS_COUNT, HTA_ATEN_OPS_LAUNCH_DELAY, HTA_ATEN_OPS_RUNTIME_DELAY};

static double grp_key(const grp *g, int k) {
    return k == K_COUNT ? (double)g->count : k == K_LAUNCH ? g->launch_delay : g->runtime_delay;
}

typedef struct grp_order { /* qsort_r context */
    const grp *groups;
    const int *sort;
    size_t nsort;
} grp_order;

/* Several keys: pandas sorts them lexicographically and stably (§0.6), all descending; ties keep the group
 * order. */
static int cmp_grp_multi(const void *a, const void *b, void *ctx) {
    const grp_order *o = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    for (size_t k = 0; k < o->nsort; k++) {
        double u = grp_key(&o->groups[x], o->sort[k]), w = grp_key(&o->groups[y], o->sort[k]);
        if (u != w) return u > w ? -1 : 1;
    }
    return (x > y) - (x < y);
}

typedef struct notes {
    size_t no_kernel, many_kernels, launches_outside;
} notes;

static hta_status one_rank(hta_ctx *ctx, size_t ri, const hta_aten_opts *o, const unsigned char *kind,
                           const int *sortk, size_t nsort, hta_table *tb, notes *nt, inst_acc *acc,
                           hta_error *err) {
    const hta_trace *t = ctx->trace;
    const hta_rank *r = t->ranks[ri];
    const hta_view *v;
    hta_status st = hta_ctx_view(ctx, ri, &v, err);
    if (st) return st;
    /* scratch of this rank: released at `out`, whatever happened.  The records are scratch too, so each
     * rank's table holds only its own records (HTA keeps them across ranks, Quirk A5). */
    hta_arena *A = &ctx->scratch;
    hta_arena_mark mark = hta_arena_save(A);
    size_t n = v->n;
    op_ent *ops = HTA_ANEW(A, op_ent, n);
    int64_t *oend = HTA_ANEW(A, int64_t, n), *ots = HTA_ANEW(A, int64_t, n);
    int32_t *kern = HTA_ANEW(A, int32_t, r->n); /* launch row -> kernel view pos */
    unsigned char *nkern = hta_arena_calloc(A, r->n ? r->n : 1, 1);
    rec *recs = HTA_ANEW(A, rec, n);
    inst *ins = HTA_ANEW(A, inst, n);
    grp *gs = HTA_ANEW(A, grp, n);
    uint32_t *perm = HTA_ANEW(A, uint32_t, n);
    double *key = HTA_ANEW(A, double, n);
    seg sg = {0};
    op_scan cx = {t, r, v, NULL};
    size_t alen = 0;
    if (!ops || !oend || !ots || !kern || !nkern || !recs || !ins || !gs || !perm || !key) goto oom;

    size_t nops = 0;
    for (size_t k = 0; k < v->n; k++) {
        uint32_t i = v->row[k];
        /* aten:: ops on any thread: HTA does not check that the op and the launch share a thread (§9) */
        if (kind[r->name[i]] & 1) ops[nops++] = (op_ent){v->ts[k], (uint32_t)k};
        /* A launch's kernels are the GPU rows linked to it (HTA: index_correlation == the launch's index).
         * The first is kept, and the count saturates at 2: only none, one or several matter. */
        if (hta_row_stream(r, i) != -1 && r->partner[i] != HTA_NO_ROW) {
            uint32_t l = (uint32_t)r->partner[i];
            if (!nkern[l]++) kern[l] = (int32_t)k;
            if (nkern[l] > 2) nkern[l] = 2;
        }
    }
    qsort(ops, nops, sizeof *ops, cmp_op);
    for (size_t k = 0; k < nops; k++) {
        ots[k] = ops[k].ts;
        oend[k] = ops[k].ts + v->dur[ops[k].pos];
    }
    if (nops && (st = seg_init(&sg, oend, nops, A, err))) goto out;

    size_t nrec = 0;
    for (size_t k = 0; k < v->n; k++) {
        uint32_t i = v->row[k];
        /* launches in table order: the order of HTA's records */
        if (!(kind[r->name[i]] & 2)) continue;
        int64_t a = v->ts[k], e = v->ts[k] + v->dur[k];
        size_t lo = 0, hi = nops; /* last op starting at or before a */
        while (lo < hi) {
            size_t m = lo + (hi - lo) / 2;
            if (ots[m] <= a) lo = m + 1;
            else hi = m;
        }
        if (!lo) {
            nt->launches_outside++;
            continue;
        }
        /* among the ops starting at or before the launch, the latest whose end covers the launch's end:
         * the innermost enclosing op */
        long q = seg_rightmost(&sg, 1, 0, sg.size, lo - 1, e);
        if (q < 0) {
            nt->launches_outside++;
            continue;
        }
        /* HTA fails on .item() here (§9 step 3); the launch is skipped and counted for a note. */
        if (!nkern[i]) {
            nt->no_kernel++;
            continue;
        }
        if (nkern[i] > 1) nt->many_kernels++;
        recs[nrec] = (rec){ops[q].pos, (uint32_t)k, (uint32_t)kern[i], (uint32_t)nrec};
        nrec++;
    }

    /* op instances: records grouped by (tid, op name, op start), record order kept */
    if (nrec) qsort_r(recs, nrec, sizeof *recs, cmp_rec, &cx);
    /* their kernel sequences, " -> "-joined as HTA does: at most every kernel name, " -> " and a NUL each */
    size_t tlen = 1;
    for (size_t j = 0; j < nrec; j++) tlen += hta_sym_len(t->sym, r->name[v->row[recs[j].kernel]]) + 5;
    if (!(cx.text = hta_arena_alloc(A, tlen))) goto oom;
    size_t nin = 0;
    for (size_t a = 0; a < nrec;) {
        size_t b = a + 1;
        uint32_t oa = recs[a].op;
        int64_t tid = hta_row_thread(r, v->row[oa])->tid;
        while (b < nrec && hta_row_thread(r, v->row[recs[b].op])->tid == tid &&
               r->name[v->row[recs[b].op]] == r->name[v->row[oa]] && v->ts[recs[b].op] == v->ts[oa])
            b++;
        inst *in = &ins[nin++];
        in->tid = tid;
        in->ts = v->ts[oa];
        in->name = r->name[v->row[oa]];
        in->first = (uint32_t)a;
        in->n = (uint32_t)(b - a);
        in->seq_off = alen;
        for (size_t j = a; j < b; j++) {
            if (j > a) memcpy(cx.text + alen, " -> ", 4), alen += 4;
            uint32_t kn = r->name[v->row[recs[j].kernel]];
            size_t l = hta_sym_len(t->sym, kn);
            memcpy(cx.text + alen, hta_sym(t->sym, kn), l);
            alen += l;
        }
        cx.text[alen++] = 0;
        /* §9 step 4: an op instance's delays are those of its first record: op start to launch start,
         * launch start to kernel start. */
        in->launch_delay = (double)(v->ts[recs[a].launch] - v->ts[oa]) / 1000.0;
        in->runtime_delay = (double)(v->ts[recs[a].kernel] - v->ts[recs[a].launch]) / 1000.0;
        a = b;
    }

    if (acc) {
        if ((st = inst_acc_add(acc, ins, nin, cx.text, alen, err))) goto out;
        ins = acc->v, nin = acc->n, cx.text = acc->text;
    }
    /* (op name, sequence) groups in key order, as pandas groupby gives them */
    if (nin) qsort_r(ins, nin, sizeof *ins, cmp_inst, &cx);
    size_t ng = 0;
    for (size_t a = 0; a < nin;) {
        size_t b = a;
        double sl = 0, sr = 0;
        while (b < nin && !cmp_inst(&ins[a], &ins[b], &cx)) sl += ins[b].launch_delay, sr += ins[b].runtime_delay, b++;
        gs[ng++] = (grp){hta_sym(t->sym, ins[a].name), cx.text + ins[a].seq_off, (int64_t)(b - a),
                         sl / (double)(b - a), sr / (double)(b - a)};
        a = b;
    }
    if (nsort == 1) {
        /* pandas sorts one key with numpy's unstable quicksort: reproduce its tie order (Appendix A), so
         * that groups with equal counts come in HTA's order, as the goldens record it */
        for (size_t g = 0; g < ng; g++) key[g] = grp_key(&gs[g], sortk[0]);
        if ((st = hta_argsort_numpy_desc(key, ng, perm, err))) goto out;
    } else {
        for (size_t g = 0; g < ng; g++) perm[g] = (uint32_t)g;
        grp_order go = {gs, sortk, nsort};
        qsort_r(perm, ng, sizeof *perm, cmp_grp_multi, &go);
    }
    for (size_t k = 0; k < ng; k++) {
        const grp *g = &gs[perm[k]];
        long row = hta_table_add_row(tb);
        if (row < 0) goto oom;
        hta_table_set_int(tb, row, HTA_ATEN_OPS_RANK, r->rank);
        if (hta_table_set_str(tb, row, HTA_ATEN_OPS_OP, g->op)) goto oom;
        if (hta_table_set_str(tb, row, HTA_ATEN_OPS_SEQUENCE, g->seq)) goto oom;
        hta_table_set_int(tb, row, HTA_ATEN_OPS_COUNT, g->count);
        /* HTA rounds both means to 3 decimals (§9 step 5) */
        hta_table_set_float(tb, row, HTA_ATEN_OPS_LAUNCH_DELAY, hta_round(g->launch_delay, 3));
        hta_table_set_float(tb, row, HTA_ATEN_OPS_RUNTIME_DELAY, hta_round(g->runtime_delay, 3));
    }
    st = HTA_OK;
    goto out;
oom:
    st = hta_oom(err);
out:
    hta_arena_reset(A, mark);
    return st;
}

hta_status hta_aten_op_kernels_part(hta_ctx *ctx, const hta_aten_opts *o, hta_result *out, hta_error *err) {
    HTA_OPTS_OR_DEFAULT(hta_aten_opts, o);
    const hta_trace *t = ctx->trace;
    int sortk[3];
    size_t nsort = 0;
    if (!o->sort_by || !o->nsort) {
        sortk[nsort++] = K_COUNT;
    } else {
        if (o->nsort > 3) return hta_fail(err, HTA_EINVAL, "at most 3 sort columns");
        for (size_t k = 0; k < o->nsort; k++) {
            int f = -1;
            for (int j = 0; j < 3; j++)
                if (!strcmp(o->sort_by[k], HTA_ATEN_OPS_TABLE.cols[g_key_col[j]].name)) f = j;
            if (f < 0)
                return hta_fail(err, HTA_EINVAL,
                                "cannot sort by '%s' (occurrence_count, avg_aten_op_launch_delay, avg_runtime_delay)",
                                o->sort_by[k]);
            sortk[nsort++] = f;
        }
    }
    hta_table *tb = hta_table_from_def(&HTA_ATEN_OPS_TABLE), *part = hta_table_from_def(&HTA_ATEN_OPS_PART_TABLE);
    unsigned char *kind = NULL;
    long prow;
    if (!tb || !part || (prow = hta_table_add_row(part)) < 0) {
        hta_table_free(tb);
        hta_table_free(part);
        return hta_oom(err);
    }
    hta_arena_mark mark = hta_arena_save(&ctx->scratch);
    /* per symbol, decided once: 1 = aten op, 2 = kernel launch (every vendor's kernel and graph launches;
     * with --hta-compat HTA's KERNEL_LAUNCH_CATEGORY_PATTERN, TF§4.4, which misses HIP's) */
    uint32_t nsym = hta_symtab_count(t->sym);
    kind = hta_arena_calloc(&ctx->scratch, nsym ? nsym : 1, 1);
    if (!kind) goto oom;
    for (uint32_t s = 0; s < nsym; s++) {
        const char *nm = hta_sym(t->sym, s);
        int launch = ctx->hta_compat ? hta_is_launch_pattern_hta(nm) : (hta_sym_api(t, s) & HTA_API_LAUNCH) != 0;
        kind[s] = (unsigned char)((!strncmp(nm, "aten::", 6) ? 1 : 0) | (launch ? 2 : 0));
    }
    size_t ns = hta_ctx_nranks(ctx);
    notes nt = {0};
    inst_acc acc = {0};
    for (size_t k = 0; k < ns; k++) {
        hta_status st = one_rank(ctx, k, o, kind, sortk, nsort, tb, &nt, ctx->hta_compat ? &acc : NULL, err);
        hta_ctx_view_done(ctx, k);
        if (st) {
            inst_acc_free(&acc);
            hta_arena_reset(&ctx->scratch, mark);
            hta_table_free(tb);
            hta_table_free(part);
            return st;
        }
    }
    inst_acc_free(&acc);
    hta_arena_reset(&ctx->scratch, mark);
    hta_table_set_int(part, (size_t)prow, HTA_OP_OUTSIDE, (int64_t)nt.launches_outside);
    hta_table_set_int(part, (size_t)prow, HTA_OP_NO_KERNEL, (int64_t)nt.no_kernel);
    hta_table_set_int(part, (size_t)prow, HTA_OP_MANY, (int64_t)nt.many_kernels);
    return HTA_RESULT_ADD(out, &tb, &part) ? hta_oom(err) : HTA_OK;
oom:
    hta_arena_reset(&ctx->scratch, mark);
    hta_table_free(tb);
    hta_table_free(part);
    return hta_oom(err);
}

hta_status hta_aten_op_kernels_reduce(const hta_aten_opts *o, hta_result *parts, hta_result *out, hta_error *err) {
    (void)o;
    hta_table *part, *tb;
    HTA_TRY(hta_result_take(parts, &HTA_ATEN_OPS_PART_TABLE, &part, err));
    long long outside = (long long)hta_table_sum_int(part, HTA_OP_OUTSIDE);
    long long no_kernel = (long long)hta_table_sum_int(part, HTA_OP_NO_KERNEL);
    long long many = (long long)hta_table_sum_int(part, HTA_OP_MANY);
    hta_table_free(part);
    HTA_TRY(hta_result_take(parts, &HTA_ATEN_OPS_TABLE, &tb, err));
    hta_status st = hta_result_copy_notes(out, parts, err);
    if (!st && !tb->nrows)
        hta_result_note(out,
                        "no kernel launch (cuda*LaunchKernel*, cuLaunchKernel*, runFunction*) inside an aten:: op "
                        "with its kernel in the trace (%lld launch%s outside every aten:: op): nothing to report "
                        "(HTA raises KeyError('thread_id') here)",
                        outside, outside == 1 ? "" : "es");
    if (!st && no_kernel)
        hta_result_note(out, "%lld launch%s inside an aten:: op without a kernel in the trace skipped (HTA fails on "
                             "them)",
                        no_kernel, no_kernel == 1 ? "" : "es");
    if (!st && many)
        hta_result_note(out, "%lld launch%s with several GPU activities: the first one is used", many,
                        many == 1 ? "" : "es");
    if (st) {
        hta_table_free(tb);
        return st;
    }
    return hta_result_add(out, tb) ? hta_oom(err) : HTA_OK;
}

HTA_ANALYSIS_WHOLE(aten_op_kernels, hta_aten_opts)
