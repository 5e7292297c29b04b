/* `hta kernels`: the command-line front of hta_kernel_breakdown (src/analysis/kernels.c,
 * analyses.md §4).  Checks its options, then runs rank by rank: each rank's part, reduced over the ranks
 * (kernel_type sums them), printed. */
#include "cli/cli.h"
#include "hta/breakdown.h"

CLI_ANALYSIS(run, hta_kernel_breakdown_part)
CLI_REDUCE(reduce, hta_kernel_breakdown_reduce)

static int cmd_kernels(int argc, char **argv) {
    hta_kernel_opts o;
    hta_kernel_opts_default(&o);
    int no_memory = 0, include_memory = 0;
    const cli_opt opts[] = {
        {"top", CLI_INT, &o.top, "N", "kernels shown per type and rank; the rest become \"others\" (default 10)"},
        {"duration-ratio", CLI_DOUBLE, &o.duration_ratio, "R",
         "also fold kernels past this quantile of cumulative time into \"others\" (default 0.8)"},
        {"include-memory", CLI_FLAG, &include_memory, NULL, "analyse memory kernels too (the default, as HTA)"},
        {"no-memory", CLI_FLAG, &no_memory, NULL, "leave memory kernels (Memcpy, Memset) out"},
        {0},
    };
    cli_common c;
    int rc = cli_parse(argc, argv, "PATH [options]",
                       "GPU kernel breakdown: the time of each kernel type (COMPUTATION, COMMUNICATION,\n"
                       "MEMORY) over all ranks, overlaps between types as their own rows, and per rank, type\n"
                       "and kernel name the statistics of the kernel durations; the smallest kernels are\n"
                       "folded into \"others\".",
                       opts, 1, 1, &c);
    if (rc >= 0) return rc;
    /* checked after parsing: a negative --top is an error, not "no folding" */
    if (o.top < 0) return cli_usage("kernels", "--top must be >= 0");
    o.include_memory = include_memory || !no_memory;
    o.categories = !c.ctx.hta_compat; /* HTA's table as HTA gives it */
    const cli_ranks r = {run, reduce, NULL, NULL, &o, 0};
    return cli_run_ranks(&c, argv[0], &r);
}

HTA_CLI_RANK_COMMAND(22, "kernels", "GPU kernel time by type and by kernel", cmd_kernels, &HTA_KERNEL_TYPE_TABLE,
                &HTA_ALL_KERNELS_TABLE)
