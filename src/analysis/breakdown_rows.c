/* GPU rows of one rank for the breakdown analyses (temporal, idle, kernels, overlap; analyses.md §3-§7),
 * each with its kernel type, and the interval unions they are made of.  The rows are copied out of the
 * context's view, so each analysis loops over a dense array of only the rows it needs. */
#include "analysis/breakdown_rows.h"

#include <stdlib.h>
#include <string.h>

/* Kernels, memcpys and memsets: GPU work.  HTA's stream != -1 rule (analyses.md §0.5) also takes cuda_sync
 * records and Triton's stream-0 cpu_ops (Quirk A2); HTA_GPU_ROWS_ANY_STREAM restores it. */
static int activity_class(hta_cat_class c) {
    return c == HTA_CC_KERNEL || c == HTA_CC_MEMCPY || c == HTA_CC_MEMSET;
}

/* By the rank's own rows, not the view: bd_note_empty asks whether the filter removed GPU rows the file
 * has. */
int bd_is_gpu_row(const hta_trace *t, const hta_rank *r, size_t row, hta_gpu_rows sel) {
    if (hta_row_stream(r, row) == -1) return 0;
    if (sel == HTA_GPU_ROWS_ANY_STREAM) return 1;
    return activity_class(hta_cat_classify(hta_sym(t->sym, hta_row_cat_sym(t, r, row))));
}

hta_status bd_rows_build(hta_ctx *ctx, size_t ri, hta_gpu_rows sel,
                         bd_rows *b, hta_error *err) {
    const hta_trace *t = ctx->trace;
    memset(b, 0, sizeof *b);
    b->ctx = ctx;
    b->ri = ri;
    hta_status st = hta_ctx_view(ctx, ri, &b->v, err);
    if (st) return st;
    const hta_rank *r = b->v->r;
    /* the kernel types of the run (hta_ctx_kernel_types): names, --comm-kernel and the launches under
     * c10d's operators, decided once per rank for every analysis */
    const uint8_t *ktype;
    if ((st = hta_ctx_kernel_types(ctx, ri, &ktype, err))) {
        bd_rows_free(b);
        return st;
    }
    uint8_t *catok = malloc(t->ncats ? t->ncats : 1);
    size_t cap = b->v->n ? b->v->n : 1;
    b->pos = malloc(cap * sizeof *b->pos);
    b->ts = malloc(cap * sizeof *b->ts);
    b->dur = malloc(cap * sizeof *b->dur);
    b->type = malloc(cap);
    if (!catok || !b->pos || !b->ts || !b->dur || !b->type) {
        free(catok);
        bd_rows_free(b);
        return hta_oom(err);
    }
    /* Classified once per category, not per row: rows far outnumber categories. */
    for (size_t c = 0; c < t->ncats; c++)
        catok[c] = sel == HTA_GPU_ROWS_ANY_STREAM ||
                   activity_class(hta_cat_classify(hta_sym(t->sym, t->cats[c])));
    size_t m = 0;
    for (size_t k = 0; k < b->v->n; k++) {
        uint32_t i = b->v->row[k];
        if (hta_row_stream(r, i) == -1 || !catok[r->cat[i]]) continue;
        b->pos[m] = (uint32_t)k;
        b->ts[m] = b->v->ts[k];
        b->dur[m] = b->v->dur[k];
        b->type[m] = ktype[i];
        m++;
    }
    b->n = m;
    free(catok);
    return HTA_OK;
}

/* The view goes back to the context with the rows: an analysis going rank by rank holds one view at a time
 * (context.h). */
void bd_rows_free(bd_rows *b) {
    free(b->pos);
    free(b->ts);
    free(b->dur);
    free(b->type);
    if (b->ctx && b->v) hta_ctx_view_done(b->ctx, b->ri);
    memset(b, 0, sizeof *b);
}

hta_status bd_union(const bd_rows *b, int type, int64_t **us, int64_t **ue, size_t *nu, hta_error *err) {
    size_t n = 0;
    *nu = 0;
    for (size_t i = 0; i < b->n; i++) n += type < 0 || b->type[i] == type;
    int64_t *ts = malloc((n ? n : 1) * sizeof *ts), *du = malloc((n ? n : 1) * sizeof *du);
    *us = malloc((n ? n : 1) * sizeof **us);
    *ue = malloc((n ? n : 1) * sizeof **ue);
    hta_status st = HTA_OK;
    if (!ts || !du || !*us || !*ue) {
        st = hta_oom(err);
        goto out;
    }
    /* copied into arrays of their own: hta_interval_union wants (ts, dur) arrays of exactly the rows it
     * merges */
    size_t m = 0;
    for (size_t i = 0; i < b->n; i++)
        if (type < 0 || b->type[i] == type) {
            ts[m] = b->ts[i];
            du[m] = b->dur[i];
            m++;
        }
    st = hta_interval_union(ts, du, n, *us, *ue, nu, err);
out:
    free(ts);
    free(du);
    if (st) {
        free(*us);
        free(*ue);
        *us = *ue = NULL;
    }
    return st;
}

void bd_note_empty(const hta_trace *t, const hta_rank *r, hta_gpu_rows sel, const char *what, hta_result *out) {
    size_t n = 0;
    for (size_t i = 0; i < r->n; i++) n += (size_t)bd_is_gpu_row(t, r, i, sel);
    /* Tell the two cases apart: "HTA's filter dropped them" needs a different fix from "there are none". */
    if (n)
        hta_result_note(out, "rank %d has no %s inside the profiled steps (%zu outside: HTA drops the last step "
                        "and what it launched; --include-last-step keeps it)", r->rank, what, n);
    else
        hta_result_note(out, "rank %d has no %s (a CPU-only trace?)", r->rank, what);
}

hta_status bd_union_pair(hta_ctx *ctx, size_t ri, hta_gpu_rows sel, int type_a,
                         int type_b, bd_pair *out, hta_error *err) {
    bd_rows b;
    hta_status st = bd_rows_build(ctx, ri, sel, &b, err);
    if (st) return st;
    int64_t *as = NULL, *ae = NULL, *bs = NULL, *be = NULL;
    size_t na = 0, nb = 0;
    st = bd_union(&b, type_a, &as, &ae, &na, err);
    if (!st) st = bd_union(&b, type_b, &bs, &be, &nb, err);
    /* the rows are done with once both unions are made: the view goes back before the figures are computed */
    bd_rows_free(&b);
    if (!st) {
        out->na = na;
        /* the union is sorted, so its span is the first start to the last end (HTA's kernel_time, §3) */
        out->span = na ? ae[na - 1] - as[0] : 0;
        out->len_a = hta_union_length(as, ae, na);
        out->len_b = hta_union_length(bs, be, nb);
        out->both = hta_union_overlap(as, ae, na, bs, be, nb);
    }
    free(as), free(ae), free(bs), free(be);
    return st;
}

hta_status bd_pair_table(hta_ctx *ctx, const hta_table_def *def, hta_gpu_rows sel, int type_a, int type_b,
                         bd_pair_row_fn row, const void *user, hta_result *out, hta_error *err) {
    hta_table *tb = hta_table_from_def(def);
    if (!tb) return hta_oom(err);
    for (size_t k = 0; k < hta_ctx_nranks(ctx); k++) {
        bd_pair u;
        hta_status st = bd_union_pair(ctx, k, sel, type_a, type_b, &u, err);
        if (st) {
            hta_table_free(tb);
            return st;
        }
        long r = hta_table_add_row(tb);
        if (r < 0) {
            hta_table_free(tb);
            return hta_oom(err);
        }
        row(ctx, k, &u, user, tb, (size_t)r, out);
    }
    return hta_result_add(out, tb) ? hta_oom(err) : HTA_OK;
}
