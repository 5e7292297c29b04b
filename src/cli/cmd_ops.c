/* `hta ops`: the command-line front of hta_aten_op_kernels (src/analysis/aten_ops.c, analyses.md §9).
 * --sort-by is split into column names once, after parsing; then it runs rank by rank: each rank's part,
 * reduced (the notes about the whole run), printed. */
#include <string.h>

#include "cli/cli.h"
#include "hta/launch.h"

static const char *g_sort_by;
static char g_buf[256];
static const char *g_keys[4];
static size_t g_nkeys;
static const char *g_bad; /* what is wrong with --sort-by: reported as the analysis's error, after the load */

/* Splits --sort-by into g_keys (g_buf holds the text). */
static void split_sort_by(void) {
    if (!g_sort_by) return;
    if (strlen(g_sort_by) >= sizeof g_buf) {
        g_bad = "--sort-by too long";
        return;
    }
    strcpy(g_buf, g_sort_by);
    char *save = NULL;
    for (char *s = strtok_r(g_buf, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
        if (g_nkeys == 4) {
            g_bad = "at most 3 sort columns";
            return;
        }
        g_keys[g_nkeys++] = s;
    }
}

/* the options as given; the statics are only read (the per-rank threads call run_ops) */
static hta_aten_opts given(void) {
    hta_aten_opts o;
    hta_aten_opts_default(&o);
    if (g_sort_by) {
        o.sort_by = g_keys;
        o.nsort = g_nkeys;
    }
    return o;
}

static hta_status run_ops(hta_ctx *ctx, const cli_common *c, hta_result *out, hta_error *err) {
    if (g_bad) return hta_fail(err, HTA_EINVAL, "%s", g_bad);
    hta_aten_opts o = given();
    return hta_aten_op_kernels_part(ctx, &o, out, err);
}

static hta_status reduce_ops(const cli_common *c, hta_result *parts, hta_result *out, hta_error *err) {
    hta_aten_opts o = given();
    return hta_aten_op_kernels_reduce(&o, parts, out, err);
}

static int cmd_ops(int argc, char **argv) {
    static const cli_opt opts[] = {
        {"sort-by", CLI_STR, &g_sort_by, "COLS",
         "descending sort: occurrence_count (default), avg_aten_op_launch_delay, avg_runtime_delay; "
         "comma-separated for several"},
        {0},
    };
    cli_common c;
    int rc = cli_parse(argc, argv, "PATH [options]",
                       "ATen op -> kernel sequences (HTA's get_aten_op_kernels_and_delay): every kernel\n"
                       "launch is attributed to the innermost aten:: op enclosing it in time; each op\n"
                       "instance's launched kernels form a sequence, counted per rank and (op, sequence)\n"
                       "with the mean delays from the op to its first launch and from that launch to its\n"
                       "kernel.",
                       opts, 1, 1, &c);
    if (rc >= 0) return rc;
    split_sort_by();
    return cli_analyse_per_rank(&c, argv[0], run_ops, reduce_ops);
}

HTA_CLI_COMMAND(33, "ops", "ATen op -> kernel sequences with launch and runtime delays", cmd_ops,
                &HTA_ATEN_OPS_TABLE)
