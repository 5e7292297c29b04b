/* `hta cupti`: the command-line front of hta_cupti_counters (src/analysis/cupti.c, analyses.md §13).
 * No options of its own; runs rank by rank: each rank's part, reduced (the counter columns of every rank,
 * the note about a run without ranges), printed. */
#include "cli/cli.h"
#include "hta/counters.h"

static hta_status run_cupti(hta_ctx *ctx, const cli_common *c, void *user, hta_result *out, hta_error *err) {
    return hta_cupti_counters_part(ctx, out, err);
}

static hta_status reduce_cupti(const cli_common *c, void *user, hta_result *parts, hta_result *out, hta_error *err) {
    return hta_cupti_counters_reduce(parts, out, err);
}

HTA_CLI_PLAIN_COMMAND(43, "cupti", "CUPTI range-profiler counters per kernel with their operator stacks",
                      "CUPTI range-profiler counters (cuda_profiler_range events, one per profiled\n"
                      "kernel) with the operator stack of the kernel's launch. The i-th range in time\n"
                      "order is paired with the i-th cudaLaunchKernel, as HTA does.",
                      run_cupti, reduce_cupti, &HTA_CUPTI_TABLE)
