/* `hta ops`: the command-line front of hta_aten_op_kernels (src/analysis/aten_ops.c, analyses.md §9).
 * --sort-by is split into column names once, after parsing; then it runs rank by rank: each rank's part,
 * reduced (the notes about the whole run), printed. */
#include <string.h>

#include "cli/cli.h"
#include "hta/launch.h"

typedef struct ops_args {
    hta_aten_opts o;
    const char *sort_by; /* --sort-by as given */
    char buf[256];       /* its text, split */
    const char *keys[4]; /* storage of o.sort_by */
    const char *bad;     /* what is wrong with --sort-by: reported as the analysis's error, after the load */
} ops_args;

/* Splits --sort-by into a->keys (a->buf holds the text). */
static void split_sort_by(ops_args *a) {
    if (!a->sort_by) return;
    if (strlen(a->sort_by) >= sizeof a->buf) {
        a->bad = "--sort-by too long";
        return;
    }
    strcpy(a->buf, a->sort_by);
    size_t n = 0;
    char *save = NULL;
    for (char *s = strtok_r(a->buf, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
        if (n == 4) {
            a->bad = "at most 3 sort columns";
            return;
        }
        a->keys[n++] = s;
    }
    a->o.sort_by = a->keys;
    a->o.nsort = n;
}

static hta_status run_ops(hta_ctx *ctx, const cli_common *c, void *user, hta_result *out, hta_error *err) {
    const ops_args *a = user;
    if (a->bad) return hta_fail(err, HTA_EINVAL, "%s", a->bad);
    return hta_aten_op_kernels_part(ctx, &a->o, out, err);
}

static hta_status reduce_ops(const cli_common *c, void *user, hta_result *parts, hta_result *out, hta_error *err) {
    return hta_aten_op_kernels_reduce(&((const ops_args *)user)->o, parts, out, err);
}

static int cmd_ops(int argc, char **argv) {
    ops_args a = {0};
    hta_aten_opts_default(&a.o);
    const cli_opt opts[] = {
        {"sort-by", CLI_STR, &a.sort_by, "COLS",
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
    split_sort_by(&a);
    const cli_ranks r = {run_ops, reduce_ops, NULL, NULL, &a, 0};
    return cli_run_ranks(&c, argv[0], &r);
}

HTA_CLI_RANK_COMMAND(33, "ops", "ATen op -> kernel sequences with launch and runtime delays", cmd_ops,
                &HTA_ATEN_OPS_TABLE)
