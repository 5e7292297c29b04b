#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "hta/counters.h"

static int cmd_diff(int argc, char **argv) {
    int short_names = 0, cr = -1, tr = -1, cit = -1, tit = -1;
    const char *device = "all", *cl = "Control", *tl = "Test";
    const cli_opt opts[] = {
        {"short-names", CLI_FLAG, &short_names, NULL, "compare shortened names (templates and arguments removed)"},
        {"device", CLI_STR, &device, "KIND", "gpu, cpu or all (default all): which rows to compare"},
        {"control-rank", CLI_INT, &cr, "R", "rank of the control trace (default: its first rank)"},
        {"test-rank", CLI_INT, &tr, "R", "rank of the test trace (default: its first rank)"},
        {"control-iteration", CLI_INT, &cit, "N", "ProfilerStep of the control trace (default: the first)"},
        {"test-iteration", CLI_INT, &tit, "N", "ProfilerStep of the test trace (default: the first)"},
        {"control-label", CLI_STR, &cl, "TEXT", "column prefix of the control trace (default Control)"},
        {"test-label", CLI_STR, &tl, "TEXT", "column prefix of the test trace (default Test)"},
        {0},
    };
    cli_common c;
    int rc = cli_parse(argc, argv, "CONTROL TEST [options]",
                       "Differences between two traces (HTA's TraceDiff): per operator/kernel name, the\n"
                       "counts and total duration in one iteration of one rank of each trace\n"
                       "(compare_traces), and the names added, deleted, increased, decreased or unchanged\n"
                       "(ops_diff).  Traces are compared unfiltered, the last profiler step included.",
                       opts, 2, 2, &c);
    if (rc >= 0) return rc;
    hta_diff_opts o = {short_names, HTA_DIFF_ALL, cr, tr, cit, tit, cl, tl};
    if (!strcmp(device, "gpu")) o.device = HTA_DIFF_GPU;
    else if (!strcmp(device, "cpu")) o.device = HTA_DIFF_CPU;
    else if (strcmp(device, "all")) {
        fprintf(stderr, "hta diff: --device must be gpu, cpu or all\n");
        return EXIT_USAGE;
    }
    hta_trace *a, *b;
    if ((rc = cli_load(&c, c.pos[0], &a))) return rc;
    if ((rc = cli_load(&c, c.pos[1], &b))) {
        hta_trace_free(a);
        return rc;
    }
    hta_result res;
    hta_result_init(&res);
    hta_error err = {0};
    hta_status st = hta_trace_diff(a, b, &o, &res, &err);
    hta_trace_free(a);
    hta_trace_free(b);
    if (st) {
        hta_result_free(&res);
        return cli_fail(argv[0], &err);
    }
    return cli_emit(&c, &res);
}

HTA_CLI_COMMAND(42, "diff", "compare two traces: operator counts and durations, ops added/removed", cmd_diff)
