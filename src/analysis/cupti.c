/* CUPTI range-profiler counters attributed to operators (analyses.md §13):
 * the i-th profiled range (in time order) belongs to the i-th
 * cudaLaunchKernel; its operator stack is that launch's cpu_op ancestors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/callgraph.h"
#include "hta/counters.h"
#include "hta/vocab.h"
#include "hta/util.h"


HTA_TABLE_DEFINE(HTA_CUPTI);

/* The part's own tables (hta/table.h, "reducing parts").  The counter columns are the union of every
 * rank's keys, which one rank does not know: the part keeps its rows without them, and each row's values
 * in cupti_part_cells, a marker row (key null) per row of the cupti table and then its values, so that
 * the two stay in step when parts are appended. */
#define HTA_CUPTI_PART(T, C, D)                                                                           \
    T("cupti_part", "per context: its profiled ranges")                                                  \
    C(HTA_CUP_RANGES, "ranges", INT, "", "cuda_profiler_range events of its ranks")
HTA_TABLE_LOCAL(HTA_CUPTI_PART);
#define HTA_CUPTI_PART_KEYS(T, C, D)                                                                      \
    T("cupti_part_keys", "per context: the args keys of its profiled ranges, by name")                   \
    C(HTA_CUK_KEY, "key", STR, "", "args key: a counter column")
HTA_TABLE_LOCAL(HTA_CUPTI_PART_KEYS);
#define HTA_CUPTI_PART_CELLS(T, C, D)                                                                     \
    T("cupti_part_cells", "per row of the cupti table: a marker (key null), then its counter values")    \
    C(HTA_CUC_KEY, "key", STR, "", "counter column; null marks the next row")                            \
    C(HTA_CUC_VALUE, "value", INT, "", "the row's value, -1 where its range lacks the key")
HTA_TABLE_LOCAL(HTA_CUPTI_PART_CELLS);

/* HTA's default arg columns (TF§5.1): the arg each shows and its value when absent.  HTA's output carries
 * every column of its table (§13), so these are printed even though the analysis does not use them.
 * External id has a column of its own in the model, hence the HTA_ARG_KNOWN_COUNT marker. */
static const struct {
    int col;
    hta_arg_key key;
    const char *sdflt;
    int64_t idflt;
} defcols[] = {
    {HTA_CUPTI_BYTES, HTA_ARG_BYTES, NULL, -1},
    {HTA_CUPTI_MEMORY_BW, HTA_ARG_MEMORY_BW, NULL, 0},
    {HTA_CUPTI_WAIT_STREAM, HTA_ARG_WAIT_ON_STREAM, NULL, -1},
    {HTA_CUPTI_WAIT_EVENT, HTA_ARG_WAIT_ON_EVENT_CORR, NULL, -1},
    {HTA_CUPTI_INPUT_DIMS, HTA_ARG_INPUT_DIMS, "-1", 0},
    {HTA_CUPTI_INPUT_TYPE, HTA_ARG_INPUT_TYPE, "-1", 0},
    {HTA_CUPTI_INPUT_STRIDES, HTA_ARG_INPUT_STRIDES, "-1", 0},
    {HTA_CUPTI_EXTERNAL_ID, HTA_ARG_KNOWN_COUNT, NULL, -1}, /* r->external_id */
    {HTA_CUPTI_PYTHON_ID, HTA_ARG_PYTHON_ID, NULL, -1},
    {HTA_CUPTI_PYTHON_PARENT, HTA_ARG_PYTHON_PARENT_ID, NULL, -1},
    {HTA_CUPTI_COLLECTIVE, HTA_ARG_COLLECTIVE_NAME, "", 0},
    {HTA_CUPTI_IN_NELEMS, HTA_ARG_IN_MSG_NELEMS, NULL, 0},
    {HTA_CUPTI_OUT_NELEMS, HTA_ARG_OUT_MSG_NELEMS, NULL, 0},
    {HTA_CUPTI_DTYPE, HTA_ARG_DTYPE, "", 0},
    {HTA_CUPTI_GROUP_SIZE, HTA_ARG_GROUP_SIZE, NULL, 0},
    {HTA_CUPTI_PROCESS_RANK, HTA_ARG_PROCESS_RANK, NULL, -1},
    {HTA_CUPTI_IN_SPLIT, HTA_ARG_IN_SPLIT_SIZE, "[]", 0},
    {HTA_CUPTI_OUT_SPLIT, HTA_ARG_OUT_SPLIT_SIZE, "[]", 0},
};
#define NDEF (sizeof defcols / sizeof *defcols)

static int starts(const char *s, const char *p) { return !strncmp(s, p, strlen(p)); }

static int sym_cmp(const void *a, const void *b, void *sym) {
    return strcmp(hta_sym(sym, *(const uint32_t *)a), hta_sym(sym, *(const uint32_t *)b));
}

/* Subtree facts of HTA's call graph for every row (TF§14.1 derived columns), from view times, so that
 * kernel_span is right where HTA's uses a stale absolute end (Q1). */
typedef struct sub {
    int32_t *height;
    int64_t *nk, *kdur, *first, *last; /* ns, view times */
} sub;

/* s's arrays and the sort's come from arena a (the caller's scratch). */
static hta_status sub_build(const hta_view *v, const hta_cgraph *g, hta_arena *a, sub *s, hta_error *err) {
    const hta_rank *r = v->r;
    size_t n = r->n ? r->n : 1;
    s->height = HTA_ANEW(a, int32_t, n);
    s->nk = hta_arena_calloc(a, n, sizeof *s->nk);
    s->kdur = hta_arena_calloc(a, n, sizeof *s->kdur);
    s->first = HTA_ANEW(a, int64_t, n);
    s->last = HTA_ANEW(a, int64_t, n);
    uint32_t *ord = HTA_ANEW(a, uint32_t, v->n);
    int64_t *key = HTA_ANEW(a, int64_t, n);
    if (!s->height || !s->nk || !s->kdur || !s->first || !s->last || !ord || !key) return hta_oom(err);
    for (size_t i = 0; i < r->n; i++) s->height[i] = -1, s->first[i] = INT64_MAX, s->last[i] = INT64_MIN;
    for (size_t k = 0; k < v->n; k++) {
        ord[k] = v->row[k];
        key[v->row[k]] = -(int64_t)g->depth[v->row[k]];
    }
    /* Bottom-up in one pass: deepest rows first, so a row's subtree is complete when it is added to its
     * parent; no recursion, whatever the stack depth. */
    HTA_TRY(hta_stable_sort_idx_i64(ord, v->n, key, err)); /* deepest first: children before parents */
    for (size_t k = 0; k < v->n; k++) {
        uint32_t i = ord[k];
        if (g->depth[i] < 0) continue;
        int32_t kp = hta_cgraph_kernel_parent(r, g, i);
        int32_t vp = g->vpos[i];
        /* a kernel: a leaf (height 0) counted into the call that launched it */
        if (kp >= 0) {
            s->height[i] = 0;
            s->nk[kp]++;
            s->kdur[kp] += v->dur[vp];
            if (v->ts[vp] < s->first[kp]) s->first[kp] = v->ts[vp];
            if (v->ts[vp] + v->dur[vp] > s->last[kp]) s->last[kp] = v->ts[vp] + v->dur[vp];
            if (s->height[kp] < 1) s->height[kp] = 1;
            continue;
        }
        /* HTA's height (TF§14.1): a kernel 0, a CPU node at least 1 and one more than its highest child */
        if (s->height[i] < 1) s->height[i] = 1;
        int32_t p = r->parent[i];
        if (p < 0 || g->depth[p] < 0) continue;
        s->nk[p] += s->nk[i];
        s->kdur[p] += s->kdur[i];
        if (s->first[i] < s->first[p]) s->first[p] = s->first[i];
        if (s->last[i] > s->last[p]) s->last[p] = s->last[i];
        if (s->height[p] < s->height[i] + 1) s->height[p] = s->height[i] + 1;
    }
    return HTA_OK;
}

static hta_status rank_rows(hta_ctx *ctx, size_t ri, const uint32_t *keys, size_t nkeys, hta_table *tb,
                            hta_table *cells, hta_result *out, hta_error *err) {
    const hta_trace *t = ctx->trace;
    const hta_rank *r = t->ranks[ri];
    const hta_view *v = NULL;
    hta_cgraph g = {0};
    sub s = {0};
    uint32_t *P = NULL, *L = NULL;
    char *stack = NULL;
    size_t stack_cap = 0;
    hta_status st = hta_ctx_view(ctx, ri, &v, err);
    if (st) return st;
    /* scratch of this rank: released at `done`, whatever happened */
    hta_arena *A = &ctx->scratch;
    hta_arena_mark mark = hta_arena_save(A);
    size_t np = 0, nl = 0;
    P = HTA_ANEW(A, uint32_t, v->n);
    L = HTA_ANEW(A, uint32_t, v->n);
    if (!P || !L) goto oom;
    HTA_TRY_GOTO(st, hta_cgraph_build(v, A, &g, err), done);
    HTA_TRY_GOTO(st, sub_build(v, &g, A, &s, err), done);
    for (size_t k = 0; k < v->n; k++) {
        uint32_t i = v->row[k];
        const char *cat = hta_sym(t->sym, hta_row_cat_sym(t, r, i));
        /* §13: P = the profiled ranges (one per kernel), L = the kernel launches of category cuda_runtime*
         * (HTA: names starting with cudaLaunchKernel; here every vendor's, the driver's included) */
        if (!strcmp(cat, "cuda_profiler_range")) P[np++] = (uint32_t)k;
        else if (ctx->hta_compat ? starts(cat, "cuda_runtime") && hta_is_cupti_launch_name_hta(hta_sym(t->sym, r->name[i]))
                                 : (hta_sym_api(t, r->name[i]) & HTA_API_KERNEL_LAUNCH) != 0)
            L[nl++] = (uint32_t)k;
    }
    if (!np) goto done;
    /* HTA pairs the i-th range with the i-th launch; with different counts it reports an error and skips
     * the rank (§13). */
    if (np != nl) {
        if (hta_result_note(out, "rank %d: %zu profiled ranges but %zu cudaLaunchKernel calls: rank skipped",
                            r->rank, np, nl))
            goto oom;
        goto done;
    }
    /* both by time, ties in table order */
    HTA_TRY_GOTO(st, hta_stable_sort_idx_i64(P, np, v->ts, err), done);
    HTA_TRY_GOTO(st, hta_stable_sort_idx_i64(L, nl, v->ts, err), done);
    int64_t cpu_op = hta_symtab_find(t->sym, "cpu_op", 6);
    for (size_t k = 0; k < np; k++) {
        uint32_t i = v->row[P[k]], l = v->row[L[k]];
        long row = hta_table_add_row(tb);
        if (row < 0) goto oom;
        size_t R = (size_t)row;
        const hta_thread *th = hta_row_thread(r, i);
        hta_table_set_int(tb, R, HTA_CUPTI_RANK, r->rank);
        hta_table_set_int(tb, R, HTA_CUPTI_INDEX, r->index[i]);
        if (hta_table_set_str(tb, R, HTA_CUPTI_CAT, hta_sym(t->sym, hta_row_cat_sym(t, r, i))) ||
            hta_table_set_str(tb, R, HTA_CUPTI_NAME, hta_sym(t->sym, r->name[i])))
            goto oom;
        hta_table_set_int(tb, R, HTA_CUPTI_PID, th->pid);
        hta_table_set_int(tb, R, HTA_CUPTI_TID, th->tid);
        hta_table_set_float(tb, R, HTA_CUPTI_TS, hta_ns_to_us(v->ts[P[k]]));
        hta_table_set_float(tb, R, HTA_CUPTI_DUR, (double)v->dur[P[k]] / 1000.0);
        hta_table_set_int(tb, R, HTA_CUPTI_STREAM, hta_row_stream(r, i));
        hta_table_set_int(tb, R, HTA_CUPTI_CORRELATION, r->correlation[i]);
        for (size_t d = 0; d < NDEF; d++) {
            int col = defcols[d].col;
            hta_col_type ty = HTA_CUPTI_TABLE.cols[col].type;
            if (defcols[d].key == HTA_ARG_KNOWN_COUNT) hta_table_set_int(tb, R, col, r->external_id[i]);
            else if (ty == HTA_COL_INT)
                hta_table_set_int(tb, R, col, hta_row_arg_int(t, r, i, defcols[d].key, defcols[d].idflt));
            else if (ty == HTA_COL_FLOAT)
                hta_table_set_float(tb, R, col, hta_row_arg_num(t, r, i, defcols[d].key, 0.0));
            else if (hta_table_set_str(tb, R, col, hta_row_arg_text(t, r, i, defcols[d].key, defcols[d].sdflt)))
                goto oom;
        }
        /* the counter columns: HTA's extra Int columns (TF§5.2), -1 where a range lacks the key; the reduce
         * makes them columns */
        if (hta_table_add_row(cells) < 0) goto oom;
        for (size_t q = 0; q < nkeys; q++) {
            const hta_arg *a = hta_row_arg(r, i, keys[q]);
            int64_t val = !a ? -1 : a->type == HTA_V_INT ? a->v.i : a->type == HTA_V_FLOAT ? (int64_t)a->v.f : -1;
            long c = hta_table_add_row(cells);
            if (c < 0 || hta_table_set_str(cells, (size_t)c, HTA_CUC_KEY, hta_sym(t->sym, keys[q]))) goto oom;
            hta_table_set_int(cells, (size_t)c, HTA_CUC_VALUE, val);
        }
        /* index_correlation as HTA writes it (TF§7.2): -1 no correlation id, 0 no partner, else the
         * partner's index.  The model keeps "no partner" apart (Q7); the column is rebuilt for HTA's
         * output. */
        hta_table_set_int(tb, R, HTA_CUPTI_INDEX_CORRELATION,
                          r->correlation[i] == -1 ? -1 : r->partner[i] < 0 ? 0 : (int64_t)r->index[r->partner[i]]);
        /* HTA's NaN iteration (stream-0 device work, TF§8 step 5) prints as null */
        if (r->iteration[i] == HTA_ITER_NAN) hta_table_set_null(tb, R, HTA_CUPTI_ITERATION);
        else hta_table_set_int(tb, R, HTA_CUPTI_ITERATION, r->iteration[i]);
        /* end relative to the same origin as ts; HTA's is left on the trace's clock (Q1) */
        int64_t end_ns = v->ts[P[k]] + v->dur[P[k]] + (ctx->hta_compat ? v->origin_ns : 0);
        hta_table_set_float(tb, R, HTA_CUPTI_END, hta_ns_to_us(end_ns));
        hta_table_set_int(tb, R, HTA_CUPTI_DEPTH, g.depth[i]);
        hta_table_set_int(tb, R, HTA_CUPTI_HEIGHT, s.height[i]);
        int64_t par = -1;
        if (g.depth[i] >= 0) {
            int32_t kp = hta_cgraph_kernel_parent(r, &g, i);
            int32_t p = kp >= 0 ? kp : r->parent[i];
            /* HTA's parent column: the launch for a kernel, the enclosing call for a CPU row, and for a
             * top-level row the id -|tid| of the thread's synthetic root (TF§14.1) */
            par = p >= 0 ? (int64_t)r->index[p] : -llabs(th->tid);
        }
        hta_table_set_int(tb, R, HTA_CUPTI_PARENT, par);
        /* without kernels: kernel_dur_sum and kernel_span 0, first/last -1, as HTA writes them (TF§14.1) */
        int has = s.nk[i] > 0;
        hta_table_set_int(tb, R, HTA_CUPTI_NUM_KERNELS, s.nk[i]);
        hta_table_set_float(tb, R, HTA_CUPTI_KERNEL_DUR, has ? (double)s.kdur[i] / 1000.0 : 0.0);
        hta_table_set_float(tb, R, HTA_CUPTI_KERNEL_SPAN,
                            has ? (double)(s.last[i] - s.first[i]) / 1000.0 : 0.0);
        hta_table_set_float(tb, R, HTA_CUPTI_FIRST_KERNEL, has ? hta_ns_to_us(s.first[i]) : -1.0);
        hta_table_set_float(tb, R, HTA_CUPTI_LAST_KERNEL, has ? hta_ns_to_us(s.last[i]) : -1.0);
        hta_table_set_int(tb, R, HTA_CUPTI_INDEX_RUNTIME, r->index[l]);
        /* Operator stack: the launch's cpu_op ancestors, outermost first, '|'-joined (HTA: a Python list).
         * The ancestors come innermost first, so a first pass measures and a second fills the text from
         * its end. */
        size_t len = 1, nops = 0;
        for (int32_t a = r->parent[l]; a >= 0; a = r->parent[a])
            if ((int64_t)hta_row_cat_sym(t, r, (size_t)a) == cpu_op) len += hta_sym_len(t->sym, r->name[a]) + 1, nops++;
        if (nops) len--; /* separators between names only */
        char *sp = hta_arena_grow(A, stack, &stack_cap, len, 1);
        if (!sp) goto oom;
        stack = sp;
        const char *top = NULL, *bottom = NULL;
        size_t end = len - 1;
        stack[end] = 0;
        for (int32_t a = r->parent[l]; a >= 0; a = r->parent[a]) {
            if ((int64_t)hta_row_cat_sym(t, r, (size_t)a) != cpu_op) continue;
            const char *nm = hta_sym(t->sym, r->name[a]);
            size_t nl2 = strlen(nm);
            end -= nl2;
            memcpy(stack + end, nm, nl2);
            if (--nops) stack[--end] = '|';
            if (!bottom) bottom = nm;
            top = nm;
        }
        if (hta_table_set_str(tb, R, HTA_CUPTI_OP_STACK, stack + end) ||
            hta_table_set_str(tb, R, HTA_CUPTI_TOP_OP, top) || hta_table_set_str(tb, R, HTA_CUPTI_BOTTOM_OP, bottom))
            goto oom;
        /* no cpu_op above the launch: top and bottom stay null, where HTA crashes on the empty stack (§13) */
        if (!top && hta_result_note(out, "rank %d: launch %u of range %u has no cpu_op above it (HTA crashes)",
                                     r->rank, r->index[l], r->index[i]))
            goto oom;
    }
    goto done;
oom:
    st = hta_oom(err);
done:
    hta_arena_reset(A, mark);
    return st;
}

hta_status hta_cupti_counters_part(hta_ctx *ctx, hta_result *out, hta_error *err) {
    const hta_trace *t = ctx->trace;
    size_t ns = hta_ctx_nranks(ctx);
    /* Counter columns: every args key of every profiled range on any loaded rank (TF§5.2: the union of the
     * keys), sorted by name so that the columns do not depend on which file showed a key first. */
    uint32_t nsym = hta_symtab_count(t->sym);
    hta_arena_mark mark = hta_arena_save(&ctx->scratch);
    unsigned char *seen = hta_arena_calloc(&ctx->scratch, nsym ? nsym : 1, 1);
    uint32_t *keys = HTA_ANEW(&ctx->scratch, uint32_t, nsym);
    hta_table *tb = hta_table_from_def(&HTA_CUPTI_TABLE), *part = hta_table_from_def(&HTA_CUPTI_PART_TABLE);
    hta_table *kt = hta_table_from_def(&HTA_CUPTI_PART_KEYS_TABLE), *cells = hta_table_from_def(&HTA_CUPTI_PART_CELLS_TABLE);
    size_t nkeys = 0, nranges = 0;
    hta_status st = HTA_OK;
    long prow;
    if (!seen || !keys || !tb || !part || !kt || !cells || (prow = hta_table_add_row(part)) < 0) goto oom;
    for (size_t k = 0; k < ns; k++) {
        const hta_rank *r = t->ranks[k];
        for (size_t i = 0; i < r->n; i++) {
            if (hta_cat_classify(hta_sym(t->sym, hta_row_cat_sym(t, r, i))) != HTA_CC_PROFILER_RANGE) continue;
            nranges++;
            for (uint32_t a = r->args_off[i]; a < r->args_off[i + 1]; a++)
                if (!seen[r->args[a].key]) seen[r->args[a].key] = 1, keys[nkeys++] = r->args[a].key;
        }
    }
    qsort_r(keys, nkeys, sizeof *keys, sym_cmp, t->sym);
    for (size_t q = 0; q < nkeys; q++) {
        long row = hta_table_add_row(kt);
        if (row < 0 || hta_table_set_str(kt, (size_t)row, HTA_CUK_KEY, hta_sym(t->sym, keys[q]))) goto oom;
    }
    hta_table_set_int(part, (size_t)prow, HTA_CUP_RANGES, (int64_t)nranges);
    /* without ranges nothing to attribute: the reduce notes it when no rank has any */
    for (size_t k = 0; nranges && k < ns && !st; k++) {
        st = rank_rows(ctx, k, keys, nkeys, tb, cells, out, err);
        hta_ctx_view_done(ctx, k);
    }
    if (st) goto fail;
    hta_arena_reset(&ctx->scratch, mark);
    hta_table *all[] = {tb, part, kt, cells};
    for (size_t k = 0; k < 4; k++)
        if (hta_result_add(out, all[k])) {
            for (size_t j = k + 1; j < 4; j++) hta_table_free(all[j]);
            return hta_oom(err);
        }
    return HTA_OK;
oom:
    st = hta_oom(err);
fail:
    hta_arena_reset(&ctx->scratch, mark);
    hta_table_free(tb);
    hta_table_free(part);
    hta_table_free(kt);
    hta_table_free(cells);
    return st;
}

static int str_cmp(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

hta_status hta_cupti_counters_reduce(hta_result *parts, hta_result *out, hta_error *err) {
    hta_table *part = NULL, *kt = NULL, *cells = NULL, *tb = NULL;
    const char **names = NULL;
    int *cols = NULL;
    hta_status st;
    if ((st = hta_result_take(parts, &HTA_CUPTI_PART_TABLE, &part, err)) ||
        (st = hta_result_take(parts, &HTA_CUPTI_PART_KEYS_TABLE, &kt, err)) ||
        (st = hta_result_take(parts, &HTA_CUPTI_PART_CELLS_TABLE, &cells, err)) ||
        (st = hta_result_take(parts, &HTA_CUPTI_TABLE, &tb, err)) || (st = hta_result_copy_notes(out, parts, err)))
        goto out;
    if (!hta_table_sum_int(part, HTA_CUP_RANGES) &&
        hta_result_note(out, "no cuda_profiler_range events (CUPTI range profiler): nothing to attribute"))
        goto oom;
    /* the counter columns: every rank's keys, each once, by name (code point order, as sym_cmp) */
    names = malloc((kt->nrows ? kt->nrows : 1) * sizeof *names);
    if (!names) goto oom;
    size_t nk = 0;
    for (size_t r = 0; r < kt->nrows; r++) names[nk++] = hta_table_get_str(kt, r, HTA_CUK_KEY);
    qsort(names, nk, sizeof *names, str_cmp);
    size_t nu = 0;
    for (size_t k = 0; k < nk; k++)
        if (!nu || strcmp(names[nu - 1], names[k])) names[nu++] = names[k];
    cols = malloc((nu ? nu : 1) * sizeof *cols);
    if (!cols) goto oom;
    for (size_t q = 0; q < nu; q++) {
        if ((cols[q] = hta_table_add_dyn_col(tb, names[q], HTA_COL_INT)) < 0) goto oom;
        for (size_t r = 0; r < tb->nrows; r++) hta_table_set_int(tb, r, cols[q], -1);
    }
    /* the values: row by row, each marker starting the next row */
    size_t row = SIZE_MAX;
    for (size_t c = 0; c < cells->nrows; c++) {
        const char *key = hta_table_get_str(cells, c, HTA_CUC_KEY);
        if (!key) {
            row++;
            continue;
        }
        const char **f = bsearch(&key, names, nu, sizeof *names, str_cmp);
        if (!f || row >= tb->nrows) {
            st = hta_fail(err, HTA_EINVAL, "cupti_part_cells does not match the cupti table of the parts");
            goto out;
        }
        hta_table_set_int(tb, row, cols[f - names], hta_table_get_int(cells, c, HTA_CUC_VALUE));
    }
    st = hta_result_add(out, tb) ? hta_oom(err) : HTA_OK;
    tb = NULL;
    goto out;
oom:
    st = hta_oom(err);
out:
    free(names);
    free(cols);
    hta_table_free(part);
    hta_table_free(kt);
    hta_table_free(cells);
    hta_table_free(tb);
    return st;
}

hta_status hta_cupti_counters(hta_ctx *ctx, hta_result *out, hta_error *err) {
    hta_result parts;
    hta_result_init(&parts);
    hta_status st = hta_cupti_counters_part(ctx, &parts, err);
    if (!st) st = hta_cupti_counters_reduce(&parts, out, err);
    hta_result_free(&parts);
    return st;
}
