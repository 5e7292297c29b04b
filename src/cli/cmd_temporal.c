/* `hta temporal`: the command-line front of hta_temporal_breakdown (src/analysis/temporal.c,
 * analyses.md §3).  Runs rank by rank (cli_run_ranks), each rank's table appended. */
#include "cli/cli.h"
#include "hta/breakdown.h"

CLI_ANALYSIS(run, hta_temporal_breakdown)

static int cmd_temporal(int argc, char **argv) {
    hta_temporal_opts o;
    hta_temporal_opts_default(&o);
    const cli_ranks r = {run, NULL, NULL, NULL, &o, 0};
    return cli_parse_run_ranks(argc, argv, "PATH [options]",
                            "Temporal breakdown per rank: from the first GPU activity to the last, the time the\n"
                            "GPU is idle, runs a computation kernel, or runs only other work (communication,\n"
                            "memory copies).",
                            NULL, &r);
}

HTA_CLI_RANK_COMMAND(20, "temporal", "GPU time per rank: idle, compute, non-compute", cmd_temporal,
                &HTA_TEMPORAL_TABLE)
