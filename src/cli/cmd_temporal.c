#include "cli/cli.h"
#include "hta/breakdown.h"

static int all_stream_rows;

static hta_status run(const hta_trace *t, const cli_common *c, hta_result *out, hta_error *err) {
    hta_temporal_opts o = {c->opts, all_stream_rows ? HTA_GPU_ROWS_ANY_STREAM : HTA_GPU_ROWS_ACTIVITY};
    return hta_temporal_breakdown(t, &o, out, err);
}

static int cmd_temporal(int argc, char **argv) {
    static const cli_opt opts[] = {
        {"all-stream-rows", CLI_FLAG, &all_stream_rows, NULL,
         "count every row on a GPU stream as GPU time, as HTA does (sync records, Triton cpu_ops)"},
        {0},
    };
    return cli_run_analysis(argc, argv, "PATH [options]",
                            "Temporal breakdown per rank: from the first GPU activity to the last, the time\n"
                            "the GPU is idle, runs a computation kernel, or runs only other work\n"
                            "(communication, memory copies).  Columns: rank, idle_time(us), compute_time(us),\n"
                            "non_compute_time(us), kernel_time(us) and the three percentages of kernel_time.",
                            opts, run);
}

HTA_CLI_COMMAND(20, "temporal", "GPU time per rank: idle, compute, non-compute", cmd_temporal)
