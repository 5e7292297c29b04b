/* Communication/computation overlap (analyses.md §6): per rank, the share of
 * the time some communication kernel runs during which a computation kernel
 * runs too. */
#include <math.h>
#include <stdlib.h>

#include "analysis/breakdown_rows.h"

HTA_TABLE_DEFINE(HTA_OVERLAP);

void hta_overlap_opts_default(hta_overlap_opts *o) { o->gpu_rows = HTA_GPU_ROWS_ACTIVITY; }

/* rank k's row: HTA sweeps the boundaries of both unions with +1/-1 (COMM) and +2/-2 (COMP) and adds the
 * segments where the sum is 3 (§6).  The length of the intersection of the two unions is that same time,
 * found by walking two sorted lists together instead of sorting all boundaries. */
static void overlap_row(const hta_ctx *ctx, size_t k, const bd_pair *u, const void *user, hta_table *tb,
                        size_t row, hta_result *out) {
    int64_t comm = u->len_a, comp = u->len_b, both = u->both;
    int32_t rank = ctx->trace->ranks[k]->rank;
    /* The percentage stays null as in HTA (A12); the note and the three time columns say why. */
    if (!comm)
        hta_result_note(out, "rank %d has no communication kernels: overlap percentage is undefined (null)", rank);
    /* divide microseconds, as HTA does, so the rounding sees the same quotient */
    double comm_us = comm / 1000.0, both_us = both / 1000.0;
    hta_table_set_int(tb, row, HTA_OVERLAP_RANK, rank);
    hta_table_set_float(tb, row, HTA_OVERLAP_PCTG, comm ? hta_round(100.0 * (both_us / comm_us), 2) : NAN);
    hta_table_set_float(tb, row, HTA_OVERLAP_COMM_US, comm_us);
    hta_table_set_float(tb, row, HTA_OVERLAP_COMP_US, comp / 1000.0);
    hta_table_set_float(tb, row, HTA_OVERLAP_BOTH_US, both_us);
}

hta_status hta_overlap(hta_ctx *ctx, const hta_overlap_opts *o, hta_result *out, hta_error *err) {
    HTA_OPTS_OR_DEFAULT(hta_overlap_opts, o);
    return bd_pair_table(ctx, &HTA_OVERLAP_TABLE, bd_gpu_rows(ctx, o->gpu_rows), HTA_KT_COMMUNICATION,
                         HTA_KT_COMPUTATION, overlap_row, o, out, err);
}
