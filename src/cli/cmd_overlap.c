#include "cli/cli.h"
#include "hta/breakdown.h"

static int all_stream_rows;

static hta_status run(const hta_trace *t, const cli_common *c, hta_result *out, hta_error *err) {
    hta_overlap_opts o = {c->opts, all_stream_rows ? HTA_GPU_ROWS_ANY_STREAM : HTA_GPU_ROWS_ACTIVITY};
    return hta_overlap(t, &o, out, err);
}

static int cmd_overlap(int argc, char **argv) {
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

HTA_CLI_COMMAND(23, "overlap", "communication/computation overlap per rank", cmd_overlap)
