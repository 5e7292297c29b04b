#include "cli/cli.h"
#include "hta/breakdown.h"

static int all_stream_rows, top = 10, no_memory, include_memory;
static double ratio = 0.8;

static hta_status run(const hta_trace *t, const cli_common *c, hta_result *out, hta_error *err) {
    hta_kernel_opts o = {c->opts, all_stream_rows ? HTA_GPU_ROWS_ANY_STREAM : HTA_GPU_ROWS_ACTIVITY, top, ratio,
                         include_memory || !no_memory};
    return hta_kernel_breakdown(t, &o, out, err);
}

static int cmd_kernels(int argc, char **argv) {
    static const cli_opt opts[] = {
        {"top", CLI_INT, &top, "N", "kernels shown per type and rank; the rest become \"others\" (default 10)"},
        {"duration-ratio", CLI_DOUBLE, &ratio, "R",
         "also fold kernels past this quantile of cumulative time into \"others\" (default 0.8)"},
        {"include-memory", CLI_FLAG, &include_memory, NULL, "analyse memory kernels too (the default, as HTA)"},
        {"no-memory", CLI_FLAG, &no_memory, NULL, "leave memory kernels (Memcpy, Memset) out"},
        {"all-stream-rows", CLI_FLAG, &all_stream_rows, NULL,
         "count every row on a GPU stream as a kernel, as HTA does (sync records, Triton cpu_ops)"},
        {0},
    };
    if (top < 0) top = 0;
    return cli_run_analysis(argc, argv, "PATH [options]",
                            "GPU kernel breakdown.  Table kernel_type: time per kernel type (COMPUTATION,\n"
                            "COMMUNICATION, MEMORY) over all ranks, overlaps between types as their own rows.\n"
                            "Table all_kernels: per rank, type and kernel name the sum, max, min, stddev, mean\n"
                            "and count of durations (us); the smallest kernels are folded into \"others\".",
                            opts, run);
}

HTA_CLI_COMMAND(22, "kernels", "GPU kernel time by type and by kernel", cmd_kernels)
