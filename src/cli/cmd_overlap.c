/* `hta overlap`: the command-line front of hta_overlap (src/analysis/overlap.c, analyses.md §6).
 * Parses its option, then cli_run_analysis loads, runs and prints. */
#include "cli/cli.h"
#include "hta/breakdown.h"

static hta_overlap_opts g_o;

static hta_status run(hta_ctx *ctx, const cli_common *c, hta_result *out, hta_error *err) {
    return hta_overlap(ctx, &g_o, out, err);
}

static int cmd_overlap(int argc, char **argv) {
    hta_overlap_opts_default(&g_o);
    static const cli_opt opts[] = {
        {0},
    };
    return cli_run_per_rank(argc, argv, "PATH [options]",
                            "Communication/computation overlap per rank: the percentage of the time some\n"
                            "communication kernel (NCCL, RCCL, HCCL) runs during which a computation kernel\n"
                            "runs as well, with the three times it comes from.  Null where a rank has no\n"
                            "communication (the percentage of nothing is undefined).",
                            opts, run);
}

HTA_CLI_COMMAND(23, "overlap", "communication/computation overlap per rank", cmd_overlap, &HTA_OVERLAP_TABLE)
