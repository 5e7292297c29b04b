/* `hta overlap`: the command-line front of hta_overlap (src/analysis/overlap.c, analyses.md §6).
 * Parses its option, then cli_run_analysis loads, runs and prints. */
#include "cli/cli.h"
#include "hta/breakdown.h"

static hta_overlap_opts g_o;
static int all_stream_rows;

static hta_status run(hta_ctx *ctx, const cli_common *c, hta_result *out, hta_error *err) {
    /* --hta-compat means HTA's numbers, and HTA counts every row with a stream as GPU work (Quirk A2). */
    if (all_stream_rows || c->ctx.hta_compat) g_o.gpu_rows = HTA_GPU_ROWS_ANY_STREAM;
    return hta_overlap(ctx, &g_o, out, err);
}

static int cmd_overlap(int argc, char **argv) {
    hta_overlap_opts_default(&g_o);
    static const cli_opt opts[] = {
        {"all-stream-rows", CLI_FLAG, &all_stream_rows, NULL,
         "count every row on a GPU stream as GPU activity, as HTA does"},
        {0},
    };
    return cli_run_analysis(argc, argv, "PATH [options]",
                            "Communication/computation overlap per rank: the percentage of the time some\n"
                            "communication kernel (NCCL, RCCL, HCCL) runs during which a computation kernel\n"
                            "runs as well, with the three times it comes from.  Null where a rank has no\n"
                            "communication (the percentage of nothing is undefined).",
                            opts, run);
}

HTA_CLI_COMMAND(23, "overlap", "communication/computation overlap per rank", cmd_overlap, &HTA_OVERLAP_TABLE)
