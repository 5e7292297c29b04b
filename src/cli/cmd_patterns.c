/* `hta patterns --op NAME`: the command-line front of hta_patterns (src/analysis/patterns.c,
 * analyses.md §12), with --overlay writing the trace marked with the patterns found.  Its rows and notes
 * are per rank: it runs rank by rank, the ranks' results appended. */
#include "cli/cli.h"
#include "hta/counters.h"

static hta_status run_patterns(hta_ctx *ctx, const cli_common *c, void *user, hta_result *out, hta_error *err) {
    const hta_patterns_opts *o = user;
    if (o->overlay) HTA_TRY(cli_check_derivable(ctx, "--overlay", err));
    return hta_patterns(ctx, o, out, err);
}

static int cmd_patterns(int argc, char **argv) {
    const char *op = NULL, *overlay = NULL;
    hta_patterns_opts o;
    hta_patterns_opts_default(&o);
    const cli_opt opts[] = {
        {"op", CLI_STR, &op, "NAME", "operator: rows whose name contains NAME (required)"},
        {"min-len", CLI_INT, &o.min_len, "N", "least number of kernels under a call (default 3)"},
        {"top-k", CLI_INT, &o.top_k, "K", "patterns marked in the overlaid trace (default 5)"},
        {"overlay", CLI_STR, &overlay, "OUTDIR", "write OUTDIR/overlaid_<file>: the trace with args.Patterns"},
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
    if (!op) return cli_usage("patterns", "--op NAME is required");
    o.op = op;
    o.overlay = overlay;
    const cli_ranks r = {run_patterns, NULL, NULL, NULL, &o, 0};
    return cli_run_ranks(&c, argv[0], &r);
}

HTA_CLI_RANK_COMMAND(41, "patterns", "most frequent CUDA kernel sequences under an operator; --overlay",
                cmd_patterns, &HTA_PATTERNS_TABLE)
