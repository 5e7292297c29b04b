/* `hta overlap`: the command-line front of hta_overlap (src/analysis/overlap.c, analyses.md §6).
 * Runs rank by rank (cli_run_ranks), each rank's row appended. */
#include "cli/cli.h"
#include "hta/breakdown.h"

CLI_ANALYSIS(run, hta_overlap)

static int cmd_overlap(int argc, char **argv) {
    hta_overlap_opts o;
    hta_overlap_opts_default(&o);
    const cli_ranks r = {run, NULL, NULL, NULL, &o, 0};
    return cli_parse_run_ranks(argc, argv, "PATH [options]",
                            "Communication/computation overlap per rank: the percentage of the time some\n"
                            "communication kernel (NCCL, RCCL, HCCL) runs during which a computation kernel\n"
                            "runs as well, with the three times it comes from.  Null where a rank has no\n"
                            "communication (the percentage of nothing is undefined).",
                            NULL, &r);
}

HTA_CLI_RANK_COMMAND(23, "overlap", "communication/computation overlap per rank", cmd_overlap, &HTA_OVERLAP_TABLE)
