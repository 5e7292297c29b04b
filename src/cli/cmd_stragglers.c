/* `hta stragglers`: the command-line front of hta_potential_stragglers (src/analysis/stragglers.c,
 * analyses.md §14).  It runs rank by rank (docs/scaling.md): each rank's context gives its summary
 * (hta_straggler_summary), and the analysis runs on the summaries of all ranks
 * (hta_stragglers_from_summary); where the plan cannot go file by file, on the whole load.  The --steps
 * list is expanded where the analysis runs, after every rank has loaded, as the whole load does. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "hta/launch.h"

typedef struct stragglers_args {
    hta_straggler_opts o;
    const char *steps;      /* --steps as given */
    int64_t step_list[4096];
} stragglers_args;

/* "551,553-555" -> step_list; returns the count or -1. */
static long parse_steps(const char *s, int64_t *step_list, size_t cap) {
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
            if (n >= cap) return -1;
            step_list[n++] = v;
        }
        if (*s == ',') s++;
        else if (*s) return -1;
    }
    return (long)n;
}

/* The options with the --steps list; the list is expanded where the analysis runs (only one thread does, the
 * whole load's or done's), so that a bad list fails after the load, as the whole load does. */
static hta_status opts_of(stragglers_args *a, hta_straggler_opts *o, hta_error *err) {
    *o = a->o;
    if (a->steps) {
        long n = parse_steps(a->steps, a->step_list, sizeof a->step_list / sizeof *a->step_list);
        if (n < 0) return hta_fail(err, HTA_EINVAL, "bad step list '%s' (e.g. 551,553-555)", a->steps);
        o->steps = a->step_list;
        o->nsteps = (size_t)n;
    }
    return HTA_OK;
}

static hta_status run_stragglers(hta_ctx *ctx, const cli_common *c, void *user, hta_result *out, hta_error *err) {
    hta_straggler_opts o;
    HTA_TRY(opts_of(user, &o, err));
    return hta_potential_stragglers(ctx, &o, out, err);
}

static int whole(cli_common *c, const char *cmd, void *user) { return cli_analyse(c, cmd, run_stragglers, user); }

/* one rank's summary */
static hta_status summarise(hta_ctx *ctx, const cli_common *c, void *user, hta_result *out, hta_error *err) {
    return hta_straggler_summary(ctx, out, err);
}

/* the analysis on every rank's summary */
static int done(cli_common *c, const char *cmd, void *user, const hta_rank_plan *files, hta_result *all) {
    (void)files;
    hta_straggler_opts o;
    hta_result res;
    hta_result_init(&res);
    hta_error err = {0};
    hta_status st = opts_of(user, &o, &err);
    if (!st) st = hta_stragglers_from_summary(all, &o, c->ctx.hta_compat, &res, &err);
    hta_result_free(all);
    return cli_finish(c, cmd, st, &res, &err);
}

static int cmd_stragglers(int argc, char **argv) {
    stragglers_args a = {0};
    hta_straggler_opts_default(&a.o);
    const cli_opt opts[] = {
        {"candidates", CLI_INT, &a.o.num_candidates, "N", "how many ranks to report (default 2)"},
        {"steps", CLI_STR, &a.steps, "LIST", "profiler steps to use, e.g. 551,553-555 (default: all)"},
        {0},
    };
    cli_common c;
    int rc = cli_parse(argc, argv, "PATH [options]",
                       "Potential stragglers (HTA's get_potential_stragglers): picks the collective kernel\n"
                       "whose duration varies most between ranks, and in every profiler step flags the\n"
                       "ranks that start it last (the others wait for them). Every NCCL/RCCL kernel naming\n"
                       "counts as communication (HTA only knows ncclKernel*; --hta-compat applies HTA's\n"
                       "rules: only ncclKernel* names count, step 0 is ignored).",
                       opts, 1, 1, &c);
    if (rc >= 0) return rc;
    const cli_ranks r = {summarise, NULL, done, whole, &a, 0};
    return cli_run_ranks(&c, argv[0], &r);
}

HTA_CLI_RANK_COMMAND(32, "stragglers", "ranks whose collectives start last, step after step", cmd_stragglers,
                &HTA_STRAGGLERS_TABLE, &HTA_STRAGGLER_METRIC_TABLE, &HTA_STRAGGLER_KERNELS_TABLE)
