/* `hta temporal`: the command-line front of hta_temporal_breakdown (src/analysis/temporal.c,
 * analyses.md §3).  Runs rank by rank (cli_run_ranks), each rank's table appended. */
#include "cli/cli.h"
#include "hta/breakdown.h"

CLI_ANALYSIS(run, hta_temporal_breakdown)

HTA_CLI_PLAIN_COMMAND(20, "temporal", "GPU time per rank: idle, compute, non-compute",
                      "Temporal breakdown per rank: from the first GPU activity to the last, the time the\n"
                      "GPU is idle, runs a computation kernel, or runs only other work (communication,\n"
                      "memory copies).",
                      run, NULL, &HTA_TEMPORAL_TABLE)
