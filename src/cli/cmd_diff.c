/* `hta diff CONTROL TEST`: the command-line front of hta_trace_diff (src/analysis/trace_diff.c,
 * analyses.md §15).  The only command that opens two run contexts, one per trace. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "hta/counters.h"

static int cmd_diff(int argc, char **argv) {
    hta_diff_opts o;
    hta_diff_opts_default(&o);
    int cr = -1, tr = -1, cit = -1, tit = -1, top = INT_MIN, exact = 0; /* INT_MIN: --top not given */
    const char *device = "all", *cl = "Control", *tl = "Test", *by = "name";
    const cli_opt opts[] = {
        {"short-names", CLI_FLAG, &o.short_names, NULL, "compare shortened names (templates and arguments removed)"},
        {"by", CLI_STR, &by, "KEY",
         "name (default) or category: GPU rows by vendor-neutral kernel category (gemm, attention, ...), so that "
         "a CUDA and a ROCm run of one model compare"},
        {"device", CLI_STR, &device, "KIND", "gpu, cpu or all (default all): which rows to compare"},
        {"control-rank", CLI_INT, &cr, "R", "rank of the control trace (default: its first rank)"},
        {"test-rank", CLI_INT, &tr, "R", "rank of the test trace (default: its first rank)"},
        {"control-iteration", CLI_INT, &cit, "N", "ProfilerStep of the control trace (default: the first; every row with --window or without steps)"},
        {"test-iteration", CLI_INT, &tit, "N", "ProfilerStep of the test trace (default: the first; every row with --window or without steps)"},
        {"control-label", CLI_STR, &cl, "TEXT", "column prefix of the control trace (default Control)"},
        {"test-label", CLI_STR, &tl, "TEXT", "column prefix of the test trace (default Test)"},
        {"top", CLI_INT, &top, "N", "only the N largest changes (and N names per ops_diff list; default 20, 0: all;\n"
                                    "all with --hta-compat); rows come by the size of the change, largest first\n"
                                    "(HTA's order with --hta-compat)"},
        {"exact-names", CLI_FLAG, &exact, NULL,
         "match names as written (default: memory addresses 0x... and integer template arguments\n"
         "are folded out first, as they differ between two runs of one program; as written with --hta-compat)"},
        {0},
    };
    cli_common c;
    int rc = cli_parse(argc, argv, "CONTROL TEST [options]",
                       "Differences between two traces (HTA's TraceDiff): per operator/kernel name, the counts\n"
                       "and total duration in one iteration of one rank of each trace, and the names added,\n"
                       "deleted, increased, decreased or unchanged, the largest changes first (the 20\n"
                       "largest; --top N, --top 0 for all). Names are matched with memory addresses and integer\n"
                       "template arguments folded out (0x*, N). Traces are compared unfiltered, the last\n"
                       "profiler step included. A\n"
                       "trace without ProfilerStep (inference) is compared whole; with --window each side\n"
                       "compares the rows in the window (and in the iteration, when one is given).\n\n"
                       "examples:\n"
                       "  hta diff before/ after/ --top 20\n"
                       "  hta diff before/ after/ --device gpu --table compare_traces --format csv",
                       opts, 2, 2, &c);
    if (rc >= 0) return rc;
    o.control_rank = cr, o.test_rank = tr, o.control_iteration = cit, o.test_iteration = tit;
    o.control_label = cl, o.test_label = tl;
    if (top < 0 && top != INT_MIN) return cli_usage("diff", "--top must be 0 (all) or more");
    /* a thousand names are no answer: the 20 largest changes unless asked; HTA's every row with --hta-compat */
    o.top = top >= 0 ? (size_t)top : c.ctx.hta_compat ? 0 : 20;
    o.fold_names = !exact && !c.ctx.hta_compat;
    if (!strcmp(by, "category")) o.by_category = 1;
    else if (strcmp(by, "name")) {
        fprintf(stderr, "hta diff: --by must be name or category\n");
        return EXIT_USAGE;
    }
    if (!strcmp(device, "gpu")) o.device = HTA_DIFF_GPU;
    else if (!strcmp(device, "cpu")) o.device = HTA_DIFF_CPU;
    else if (strcmp(device, "all")) {
        fprintf(stderr, "hta diff: --device must be gpu, cpu or all\n");
        return EXIT_USAGE;
    }
    /* each side reads only the rank it compares (when it is given) */
    hta_ctx *a, *b;
    cli_common side = c;
    if (cr >= 0) side.rank_list[0] = cr, side.ctx.ranks = side.rank_list, side.ctx.nranks = 1;
    if ((rc = cli_open(&side, c.pos[0], &a))) return rc;
    side = c;
    if (tr >= 0) side.rank_list[0] = tr, side.ctx.ranks = side.rank_list, side.ctx.nranks = 1;
    if ((rc = cli_open(&side, c.pos[1], &b))) {
        hta_ctx_free(a);
        return rc;
    }
    hta_result res;
    hta_result_init(&res);
    hta_error err = {0};
    hta_status st = hta_trace_diff(a, b, &o, &res, &err);
    hta_ctx_free(a);
    hta_ctx_free(b);
    return cli_finish(&c, argv[0], st, &res, &err);
}

HTA_CLI_COMMAND(42, "diff", "compare two traces: operator counts and durations, ops added/removed", cmd_diff,
                &HTA_DIFF_TABLE, &HTA_OPS_DIFF_TABLE)
