#include "cli/cli.h"
#include "hta/report.h"

static int g_top = 10, g_no_cp;

static hta_status run_report(const hta_trace *t, const cli_common *c, hta_result *out, hta_error *err) {
    hta_report_opts o = {c->opts, g_top, !g_no_cp};
    return hta_report(t, &o, out, err);
}

static int cmd_report(int argc, char **argv) {
    static const cli_opt opts[] = {
        {"top", CLI_INT, &g_top, "N", "kernels in the top_kernels table (default 10)"},
        {"no-critical-path", CLI_FLAG, &g_no_cp, NULL, "skip the critical path of each rank (faster)"},
        {0},
    };
    return cli_run_analysis(argc, argv, "PATH [options]",
                            "The holistic summary: runs every analysis that applies to the traces and says,\n"
                            "per rank, where GPU time went, the largest idle cause, how much communication\n"
                            "overlaps compute, launch-delay outliers, the kernels that dominate and the\n"
                            "straggler ranks, what bounds each rank's critical path, with the figures and\n"
                            "what to look at next.\n"
                            "Tables: findings, ranks, kernel_types, top_kernels, critical_path.",
                            opts, run_report);
}

HTA_CLI_COMMAND(1, "report", "the holistic summary: findings per rank with figures, top kernels", cmd_report)
