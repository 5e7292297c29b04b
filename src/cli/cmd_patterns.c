#include <stdio.h>

#include "cli/cli.h"
#include "hta/counters.h"

static int cmd_patterns(int argc, char **argv) {
    const char *op = NULL, *overlay = NULL;
    int min_len = 3, top_k = 5, rank = -1;
    const cli_opt opts[] = {
        {"op", CLI_STR, &op, "NAME", "operator: rows whose name contains NAME (required)"},
        {"min-len", CLI_INT, &min_len, "N", "least number of kernels under a call (default 3)"},
        {"top-k", CLI_INT, &top_k, "K", "patterns marked in the overlaid trace (default 5)"},
        {"overlay", CLI_STR, &overlay, "OUTDIR", "write OUTDIR/overlaid_<file>: the trace with args.Patterns"},
        {"rank", CLI_INT, &rank, "R", "rank to analyse (default: the first loaded rank)"},
        {0},
    };
    cli_common c;
    int rc = cli_parse(argc, argv, "PATH --op NAME [options]",
                       "Most frequent CUDA kernel sequences launched under an operator: for each outermost\n"
                       "call whose name contains NAME and that launches at least --min-len kernels, the\n"
                       "pattern 'operator|kernel|kernel|...' (kernels in time order), counted per pattern\n"
                       "with the summed kernel and operator durations.",
                       opts, 1, 1, &c);
    if (rc >= 0) return rc;
    if (!op) {
        fprintf(stderr, "hta patterns: --op NAME is required\nTry 'hta patterns --help'.\n");
        return EXIT_USAGE;
    }
    hta_trace *t;
    if ((rc = cli_load(&c, c.path, &t))) return rc;
    hta_patterns_opts o = {c.opts, op, min_len, top_k, rank, overlay};
    hta_result res;
    hta_result_init(&res);
    hta_error err = {0};
    hta_status st = hta_patterns(t, &o, &res, &err);
    hta_trace_free(t);
    if (st) {
        hta_result_free(&res);
        return cli_fail(argv[0], &err);
    }
    return cli_emit(&c, &res);
}

HTA_CLI_COMMAND(41, "patterns", "most frequent CUDA kernel sequences under an operator; --overlay", cmd_patterns)
