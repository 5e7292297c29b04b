/* `hta ops`: the command-line front of hta_aten_op_kernels (src/analysis/aten_ops.c, analyses.md §9).
 * cli_run_analysis loads, runs and prints; --sort-by is split into column names in the analysis callback. */
#include <string.h>

#include "cli/cli.h"
#include "hta/launch.h"

static const char *g_sort_by;

static hta_status run_ops(hta_ctx *ctx, const cli_common *c, hta_result *out, hta_error *err) {
    hta_aten_opts o;
    hta_aten_opts_default(&o);
    static char buf[256];
    static const char *keys[4];
    if (g_sort_by) {
        if (strlen(g_sort_by) >= sizeof buf) return hta_fail(err, HTA_EINVAL, "--sort-by too long");
        strcpy(buf, g_sort_by);
        size_t n = 0;
        for (char *s = strtok(buf, ","); s; s = strtok(NULL, ",")) {
            if (n == 4) return hta_fail(err, HTA_EINVAL, "at most 3 sort columns");
            keys[n++] = s;
        }
        o.sort_by = keys;
        o.nsort = n;
    }
    return hta_aten_op_kernels(ctx, &o, out, err);
}

static int cmd_ops(int argc, char **argv) {
    static const cli_opt opts[] = {
        {"sort-by", CLI_STR, &g_sort_by, "COLS",
         "descending sort: occurrence_count (default), avg_aten_op_launch_delay, avg_runtime_delay; "
         "comma-separated for several"},
        {0},
    };
    return cli_run_analysis(argc, argv, "PATH [options]",
                            "ATen op -> kernel sequences (HTA's get_aten_op_kernels_and_delay): every kernel\n"
                            "launch is attributed to the innermost aten:: op enclosing it in time; each op\n"
                            "instance's launched kernels form a sequence, counted per rank and (op, sequence)\n"
                            "with the mean delays from the op to its first launch and from that launch to its\n"
                            "kernel.",
                            opts, run_ops);
}

HTA_CLI_COMMAND(33, "ops", "ATen op -> kernel sequences with launch and runtime delays", cmd_ops,
                &HTA_ATEN_OPS_TABLE)
