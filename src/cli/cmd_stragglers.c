/* `hta stragglers`: the command-line front of hta_potential_stragglers (src/analysis/stragglers.c,
 * analyses.md §14).  cli_run_analysis loads, runs and prints; the --steps list is expanded in the
 * analysis callback. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "hta/launch.h"

static hta_straggler_opts g_o;
static const char *g_steps;
static int64_t g_step_list[4096];

/* "551,553-555" -> g_step_list; returns the count or -1. */
static long parse_steps(const char *s) {
    size_t n = 0;
    while (*s) {
        char *e;
        long long a = strtoll(s, &e, 10), b = a;
        if (e == s || a < 0) return -1;
        s = e;
        if (*s == '-') {
            b = strtoll(s + 1, &e, 10);
            if (e == s + 1 || b < a) return -1;
            s = e;
        }
        for (long long v = a; v <= b; v++) {
            if (n >= sizeof g_step_list / sizeof *g_step_list) return -1;
            g_step_list[n++] = v;
        }
        if (*s == ',') s++;
        else if (*s) return -1;
    }
    return (long)n;
}

static hta_status run_stragglers(hta_ctx *ctx, const cli_common *c, hta_result *out, hta_error *err) {
    hta_straggler_opts o = g_o;
    if (g_steps) {
        long n = parse_steps(g_steps);
        if (n < 0) return hta_fail(err, HTA_EINVAL, "bad step list '%s' (e.g. 551,553-555)", g_steps);
        o.steps = g_step_list;
        o.nsteps = (size_t)n;
    }
    return hta_potential_stragglers(ctx, &o, out, err);
}

static int cmd_stragglers(int argc, char **argv) {
    hta_straggler_opts_default(&g_o);
    static const cli_opt opts[] = {
        {"candidates", CLI_INT, &g_o.num_candidates, "N", "how many ranks to report (default 2)"},
        {"steps", CLI_STR, &g_steps, "LIST", "profiler steps to use, e.g. 551,553-555 (default: all)"},
        {0},
    };
    return cli_run_analysis(argc, argv, "PATH [options]",
                            "Potential stragglers (HTA's get_potential_stragglers): picks the collective kernel\n"
                            "whose duration varies most between ranks, and in every profiler step flags the\n"
                            "ranks that start it last (the others wait for them). Every NCCL/RCCL kernel naming\n"
                            "counts as communication (HTA only knows ncclKernel*; --hta-compat applies HTA's\n"
                            "rules: only ncclKernel* names count, step 0 is ignored).",
                            opts, run_stragglers);
}

HTA_CLI_COMMAND(32, "stragglers", "ranks whose collectives start last, step after step", cmd_stragglers,
                &HTA_STRAGGLERS_TABLE, &HTA_STRAGGLER_METRIC_TABLE, &HTA_STRAGGLER_KERNELS_TABLE)
