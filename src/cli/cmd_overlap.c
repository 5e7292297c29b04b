/* `hta overlap`: the command-line front of hta_overlap (src/analysis/overlap.c, analyses.md §6).
 * Runs rank by rank (cli_run_ranks), each rank's row appended. */
#include "cli/cli.h"
#include "hta/breakdown.h"

CLI_ANALYSIS(run, hta_overlap)

HTA_CLI_PLAIN_COMMAND(23, "overlap", "communication/computation overlap per rank",
                      "Communication/computation overlap per rank: the percentage of the time some\n"
                      "communication kernel (NCCL, RCCL, HCCL) runs during which a computation kernel\n"
                      "runs as well, with the three times it comes from.  Null where a rank has no\n"
                      "communication (the percentage of nothing is undefined).",
                      run, NULL, &HTA_OVERLAP_TABLE)
