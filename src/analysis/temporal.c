/* Temporal breakdown (analyses.md §3): per rank, the span from the first GPU
 * activity to the last, split into idle (no activity), compute (a
 * COMPUTATION kernel runs) and non-compute (only other activity runs). */
#include <math.h>
#include <stdlib.h>

#include "analysis/breakdown_rows.h"

HTA_TABLE_DEFINE(HTA_TEMPORAL);

void hta_temporal_opts_default(hta_temporal_opts *o) { o->gpu_rows = HTA_GPU_ROWS_ACTIVITY; }

/* ratio of microsecond values, as HTA divides them, so that round() sees the same quotient; null (NaN)
 * when the span is 0: a share of nothing is undefined, as in HTA (Quirk A12) */
static double pctg(int64_t x, int64_t total) {
    return total ? hta_round(100.0 * ((x / 1000.0) / (total / 1000.0)), 2) : NAN;
}

/* rank k's row: union a = every GPU row, union b = the COMPUTATION rows (§3: U and C) */
static void temporal_row(const hta_ctx *ctx, size_t k, const bd_pair *u, const void *user, hta_table *tb,
                         size_t row, hta_result *out) {
    const hta_temporal_opts *o = user;
    const hta_trace *t = ctx->trace;
    int64_t span = u->span, busy = u->len_a, comp = u->len_b;
    /* HTA raises IndexError on a rank without GPU rows (§3, edge); a row of zeros and a note say the
     * same without stopping the other ranks. */
    if (!u->na)
        bd_note_empty(t, t->ranks[k], bd_gpu_rows(ctx, o->gpu_rows), "GPU activity: all times are 0, percentages null",
                      out);
    /* §3: idle = the gaps inside the span; non-compute = busy but no computation kernel
     * (communication, memory).  Exact in int64 ns, so the three parts add up to the span. */
    int64_t idle = span - busy, noncomp = busy - comp;
    hta_table_set_int(tb, row, HTA_TEMPORAL_RANK, t->ranks[k]->rank);
    /* durations, far below 2^53 ns: a plain division rounds once (hta_ns_to_us is for absolute times) */
    hta_table_set_float(tb, row, HTA_TEMPORAL_IDLE_US, idle / 1000.0);
    hta_table_set_float(tb, row, HTA_TEMPORAL_COMPUTE_US, comp / 1000.0);
    hta_table_set_float(tb, row, HTA_TEMPORAL_NON_COMPUTE_US, noncomp / 1000.0);
    hta_table_set_float(tb, row, HTA_TEMPORAL_KERNEL_US, span / 1000.0);
    hta_table_set_float(tb, row, HTA_TEMPORAL_IDLE_PCTG, pctg(idle, span));
    hta_table_set_float(tb, row, HTA_TEMPORAL_COMPUTE_PCTG, pctg(comp, span));
    hta_table_set_float(tb, row, HTA_TEMPORAL_NON_COMPUTE_PCTG, pctg(noncomp, span));
}

hta_status hta_temporal_breakdown(hta_ctx *ctx, const hta_temporal_opts *o, hta_result *out,
                                  hta_error *err) {
    HTA_OPTS_OR_DEFAULT(hta_temporal_opts, o);
    return bd_pair_table(ctx, &HTA_TEMPORAL_TABLE, bd_gpu_rows(ctx, o->gpu_rows), -1, HTA_KT_COMPUTATION,
                         temporal_row, o, out, err);
}
