/* `hta launch`: the command-line front of hta_launch_stats (src/analysis/launch.c, analyses.md §8).
 * Parses its options, then runs rank by rank: each rank's part, reduced (the note about a run without
 * launch calls), printed. */
#include "cli/cli.h"
#include "hta/launch.h"

CLI_ANALYSIS(run_launch, hta_launch_stats_part)
CLI_REDUCE(reduce_launch, hta_launch_stats_reduce)

static int cmd_launch(int argc, char **argv) {
    hta_launch_opts o;
    hta_launch_opts_default(&o);
    const cli_opt opts[] = {
        {"runtime-cutoff", CLI_DOUBLE, &o.runtime_cutoff_us, "US",
         "launch calls longer than this are runtime outliers (default 50)"},
        {"launch-delay-cutoff", CLI_DOUBLE, &o.launch_delay_cutoff_us, "US",
         "launch delays longer than this are outliers (default 100)"},
        {"no-memory", CLI_OFF, &o.include_memory_events, NULL, "leave out cudaMemcpyAsync/cudaMemsetAsync"},
        {0},
    };
    cli_common c;
    int rc = cli_parse(argc, argv, "PATH [options]",
                           "CUDA kernel launch statistics (HTA's get_cuda_kernel_launch_stats): every launch\n"
                           "call (cudaLaunchKernel, cudaLaunchKernelExC, MTIA runFunction, and\n"
                           "cudaMemcpyAsync/cudaMemsetAsync unless --no-memory) joined with its GPU activity\n"
                           "by correlation id, flagged as a short kernel, a runtime outlier or a launch-delay\n"
                           "outlier by HTA's rules, and counted per rank.",
                       opts, 1, 1, &c);
    if (rc >= 0) return rc;
    const cli_ranks r = {run_launch, reduce_launch, NULL, NULL, &o, 0};
    return cli_run_ranks(&c, argv[0], &r);
}

HTA_CLI_RANK_COMMAND(30, "launch", "CUDA kernel launch statistics: cpu/gpu duration, launch delay, outliers",
                cmd_launch, &HTA_LAUNCH_STATS_TABLE, &HTA_LAUNCH_SUMMARY_TABLE)
