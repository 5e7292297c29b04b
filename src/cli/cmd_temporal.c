/* `hta temporal`: the command-line front of hta_temporal_breakdown (src/analysis/temporal.c,
 * analyses.md §3).  Parses its option, then cli_run_analysis loads, runs and prints. */
#include "cli/cli.h"
#include "hta/breakdown.h"

static hta_temporal_opts g_o;

static hta_status run(hta_ctx *ctx, const cli_common *c, hta_result *out, hta_error *err) {
    return hta_temporal_breakdown(ctx, &g_o, out, err);
}

static int cmd_temporal(int argc, char **argv) {
    hta_temporal_opts_default(&g_o);
    static const cli_opt opts[] = {
        {0},
    };
    return cli_run_per_rank(argc, argv, "PATH [options]",
                            "Temporal breakdown per rank: from the first GPU activity to the last, the time the\n"
                            "GPU is idle, runs a computation kernel, or runs only other work (communication,\n"
                            "memory copies).",
                            opts, run);
}

HTA_CLI_COMMAND(20, "temporal", "GPU time per rank: idle, compute, non-compute", cmd_temporal,
                &HTA_TEMPORAL_TABLE)
