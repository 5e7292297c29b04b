/* hta critical-path: the critical path of one rank or of the job, overlay, save/restore and what-if
 * (docs/critical-path.md).  The command parses its options and its rules (once), checks its outputs, and
 * prints what the library answers: one rank's answer (hta_cpath_ask) or the job's (hta_job_*). */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hta/outfile.h"

#include "cli/cli.h"
#include "hta/cpath.h"
#include "hta/sim.h"

typedef struct cp_args {
    const char *annotation;
    const char *instance;
    cli_list data_load;
    int zero_weight;
    int top;
    const char *overlay;
    int all_events, all_edges;
    const char *save, *graph;
    cli_list what_if;
    const char *what_if_trace;
    int all_ranks;
    int all;
} cp_args;

/* "N" or "A:B": HTA's instance_id as an int or an inclusive (a, b) tuple (critical-path.md §1 step 3) */
static int parse_instance(const char *s, int64_t *a, int64_t *b) {
    char *e;
    errno = 0;
    long long x = strtoll(s, &e, 10), y = x;
    if (e == s || errno || x < 0) return -1;
    if (*e == ':') {
        const char *q = e + 1;
        y = strtoll(q, &e, 10);
        if (e == q || errno || y < x) return -1;
    }
    if (*e) return -1;
    *a = x;
    *b = y;
    return 0;
}

/* The --what-if rules, parsed once for every engine.  Returns -1 to go on, or the exit status (2 on a bad rule);
 * *rules holds the *n parsed either way. */
static int parse_rules(const cli_list *l, hta_cpath_rule **rules, size_t *n) {
    if (!(*rules = calloc(l->n ? l->n : 1, sizeof **rules))) {
        fprintf(stderr, "hta critical-path: out of memory\n");
        return 1;
    }
    for (; *n < l->n; ++*n) {
        hta_error e = {0};
        if (hta_cpath_rule_parse(l->v[*n], &(*rules)[*n], &e)) {
            fprintf(stderr, "hta critical-path: %s\n", e.msg);
            return EXIT_USAGE;
        }
    }
    return -1;
}

/* Whether folder dir is the folder of the traces at path (path itself, or the folder of a file): rank files
 * written there would claim the ranks of the files they came from. */
static int same_folder(const char *dir, const char *path) {
    char *d = realpath(dir, NULL), *p = realpath(path, NULL);
    int same = 0;
    if (d && p) {
        struct stat st;
        if (!stat(p, &st) && !S_ISDIR(st.st_mode)) {
            char *slash = strrchr(p, '/');
            if (slash) *(slash == p ? slash + 1 : slash) = 0;
        }
        same = !strcmp(d, p);
    }
    free(d);
    free(p);
    return same;
}

/* --all-ranks: the job's engine (hta_job_*): rank by rank where the plan allows, else over the loaded
 * context; never more than one rank's graph per thread. */
static int job(cli_common *c, const cp_args *a, const hta_cpath_rule *rules, const char *prog) {
    if (!c->path || a->graph || a->save)
        return cli_usage("critical-path", "--all-ranks needs PATH, and takes no --graph or --save");
    if (a->what_if_trace && !a->what_if.n)
        return cli_usage("critical-path", "--what-if-trace needs --what-if RULE");
    hta_error err = {0};
    hta_result res;
    hta_result_init(&res);
    hta_rank_plan plan = {0};
    hta_ctx *ctx = NULL;
    hta_job *jb = NULL;
    size_t failed = SIZE_MAX;
    int in_load = 0, rc = 0;
    hta_job_scenario sc = {rules, a->what_if.n, NULL, 0};
    hta_job_opts jo = {.scn = &sc, .nscn = a->what_if.n ? 1 : 0, .data_load = a->data_load.v,
                       .ndata_load = a->data_load.n, .paths = 1, .threads = c->ctx.threads};
    /* hta-mpi: every process runs this; the plan's passes are shared among them (the overlay is the root's) */
    const cli_dist *cd = cli_distributor && cli_distributor->everyone ? cli_distributor : NULL;
    hta_job_dist jd = {cd && cd->root, cd ? cd->nproc : 1, cd ? cd->share : NULL, cd ? cd->allgather : NULL, NULL};
    char *ovl = NULL;
    hta_status st = HTA_OK;
    if (a->overlay) {
        /* OUTDIR/overlaid_critical_path_all_ranks.json, the folder made as for one rank's overlay */
        if (mkdir(a->overlay, 0777) && errno != EEXIST)
            st = hta_fail(&err, HTA_EIO, "%s: cannot create the folder: %s", a->overlay, strerror(errno));
        else if (asprintf(&ovl, "%s/overlaid_critical_path_all_ranks.json", a->overlay) < 0)
            st = hta_oom(&err), ovl = NULL;
        else
            st = hta_output_check(ovl, c->path, &err);
        jo.overlay = ovl;
    }
    if (!st && a->what_if_trace) {
        /* a folder: every rank's simulated trace under its file's name */
        if (mkdir(a->what_if_trace, 0777) && errno != EEXIST)
            st = hta_fail(&err, HTA_EIO, "%s: cannot create the folder: %s", a->what_if_trace, strerror(errno));
        else if (same_folder(a->what_if_trace, c->path))
            st = hta_fail(&err, HTA_EINVAL, "%s: --what-if-trace must be another folder than the trace's (its files "
                                            "would claim the same ranks)", a->what_if_trace);
        jo.trace_dir = a->what_if_trace;
    }
    int planned = !st && cli_plan(c, &plan);
    if (st) {
        /* an output that cannot be written */
    } else if (planned) {
        for (size_t i = 0; i < plan.nwarnings && !c->quiet; i++) fprintf(stderr, "hta: warning: %s\n", plan.warnings[i]);
        if (cd) jo.dist = &jd;
        /* the job loads the files: their loaders' warnings are the run's (its first pass gives them) */
        hta_ctx_opts co = cli_ctx_opts(c);
        st = hta_job_run_plan(&plan, &co, &jo, &jb, &res, &failed, &in_load, &err);
    } else {
        /* a run the plan cannot share is the root's alone */
        if (cd && !cd->root) goto out;
        if ((rc = cli_open(c, c->path, &ctx))) goto out;
        st = hta_job_run_ctx(ctx, &jo, &jb, &res, &err);
    }
    if (st) {
        if (in_load) fprintf(stderr, "hta: error: %s\n", err.msg), rc = 1;
        else rc = cli_fail(prog, &err);
        hta_result_free(&res);
    } else {
        rc = cli_emit(c, &res);
    }
out:
    hta_rank_plan_free(&plan);
    free(ovl);
    hta_job_free(jb);
    hta_ctx_free(ctx);
    return rc;
}

static int cmd_critical_path(int argc, char **argv) {
    cp_args a = {0};
    hta_cpath_rule *rules = NULL;
    size_t nrules = 0;
    const cli_opt opts[] = {
        {"annotation", CLI_STR, &a.annotation, "NAME",
         "clip to the instances of events whose name contains NAME (default: whole trace)"},
        {"instance", CLI_STR, &a.instance, "N|A:B", "annotation instance, or range A..B inclusive (default 0)"},
        {"data-load", CLI_LIST, &a.data_load, "TEXT",
         "events whose name contains TEXT are data loading (HTA's data_load_events; repeatable)"},
        {"zero-weight-launch-edges", CLI_FLAG, &a.zero_weight, NULL,
         "add HTA's zero-weight launch edges (CRITICAL_PATH_ADD_ZERO_WEIGHT_LAUNCH_EDGE=1)"},
        {"top", CLI_INT, &a.top, "N", "breakdown: the N longest path edges (default 20; --hta-compat: all)"},
        {"all", CLI_FLAG, &a.all, NULL, "breakdown: every path edge, in path order"},
        {"overlay", CLI_STR, &a.overlay, "OUTDIR", "write the trace with the path overlaid into OUTDIR"},
        {"all-events", CLI_FLAG, &a.all_events, NULL, "overlay: keep every event, not only critical ones"},
        {"all-edges", CLI_FLAG, &a.all_edges, NULL, "overlay (with --all-events): draw every graph edge"},
        {"save", CLI_STR, &a.save, "FILE", "store the graph in FILE"},
        {"graph", CLI_STR, &a.graph, "FILE", "analyse a stored graph (no trace needed)"},
        {"what-if", CLI_LIST, &a.what_if, "RULE", "change edge weights and recompute (repeatable), e.g. type:comm=x0.5"},
        {"what-if-trace", CLI_STR, &a.what_if_trace, "OUT", "write the simulated trace to OUT"},
        {"all-ranks", CLI_FLAG, &a.all_ranks, NULL,
         "one graph for the job: every rank, joined at their collectives (the path may cross ranks)"},
        {0},
    };
    cli_common c;
    int rc = cli_parse(argc, argv, "PATH [options] | --graph FILE [options]",
                       "HTA's lightweight critical path of one rank: the longest chain of CPU operator time,\n"
                       "kernel launch delays, kernel-to-kernel gaps, GPU kernels and synchronisation.\n"
                       "--what-if RULE rescales parts of the graph and reports the new path; see\n"
                       "docs/critical-path.md for the rule syntax.",
                       opts, 0, 1, &c);
    if (rc >= 0) goto out;
    rc = 1;
    /* a saved graph was built from the rows of its own run: no window can be applied to it afterwards */
    if (a.graph && c.ctx.window.kind != HTA_WINDOW_NONE) {
        rc = cli_usage("critical-path",
                       "--window needs the trace (PATH); a --graph was built with its own");
        goto out;
    }
    if (!c.path && !a.graph) {
        fprintf(stderr, "hta critical-path: missing argument: PATH (or --graph FILE)\n");
        rc = EXIT_USAGE;
        goto out;
    }
    hta_cpath_opts o;
    /* HTA's defaults, then the options that map onto its arguments (annotation, instance,
     * data_load_events, the zero-weight launch option) */
    hta_cpath_opts_default(&o);
    if (a.annotation) o.annotation = a.annotation;
    if (a.instance && parse_instance(a.instance, &o.instance_a, &o.instance_b)) {
        fprintf(stderr, "hta critical-path: bad --instance '%s' (N or A:B)\n", a.instance);
        rc = EXIT_USAGE;
        goto out;
    }
    o.data_load = a.data_load.v;
    o.ndata_load = a.data_load.n;
    o.zero_weight_launch = a.zero_weight;
    /* the rules, parsed once, before the trace is read: a typo is a usage error now, not after a long load */
    if ((rc = parse_rules(&a.what_if, &rules, &nrules)) >= 0) goto out;
    if (a.all_ranks) {
        rc = job(&c, &a, rules, argv[0]);
        goto out;
    }
    hta_ctx *ctx = NULL;
    hta_error err = {0};
    if (c.path) {
        /* the critical path is one rank's: --ranks names it (only its file is read) */
        if (c.ctx.nranks > 1) {
            rc = cli_usage("critical-path", "one rank at a time: --ranks R");
            goto out;
        }
        if ((rc = cli_open(&c, c.path, &ctx))) goto out;
        const char *derived = a.overlay ? "--overlay" : a.what_if_trace ? "--what-if-trace" : NULL;
        if (derived && cli_check_derivable(ctx, derived, &err)) {
            rc = cli_fail(argv[0], &err);
            hta_ctx_free(ctx);
            goto out;
        }
        if (hta_ctx_nranks(ctx) > 1 && !c.quiet)
            fprintf(stderr, "hta: note: analysing rank %d, the lowest loaded; choose one with --ranks R%s\n",
                    hta_ctx_rank(ctx, 0)->rank, a.what_if.n ? ", or every rank with --all-ranks" : "");
        if (a.what_if.n && hta_ctx_rank(ctx, 0)->world_size > 1 && !c.quiet)
            fprintf(stderr, "hta: note: a what-if on one rank keeps the other ranks as they were (their lateness "
                            "at collectives);\n  --all-ranks applies the rules to every rank\n");
    }
    /* The build allocates and frees many large arrays; keeping freed blocks in
     * the heap lets later phases reuse pages already faulted in (page faults
     * dominate its cost on large traces). Set after loading: the loader's
     * growing columns want the mmap path. */
    mallopt(M_MMAP_THRESHOLD, 512 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    hta_result res;
    hta_result_init(&res);
    const hta_cpath_ask_opts q = {.cp = &o, .rules = rules, .nrules = nrules, .hta_graph = c.ctx.hta_compat,
                                  .graph = a.graph, .top = a.top, .all = a.all, .overlay = a.overlay,
                                  .all_events = a.all_events, .all_edges = a.all_edges, .save = a.save,
                                  .trace_out = a.what_if_trace};
    hta_status st = hta_cpath_ask(ctx, &q, &res, &err);
    hta_ctx_free(ctx);
    if (st) {
        hta_result_free(&res);
        rc = cli_fail(argv[0], &err);
        goto out;
    }
    rc = cli_emit(&c, &res);
out:
    for (size_t i = 0; i < nrules; i++) hta_cpath_rule_free(&rules[i]);
    free(rules);
    free(a.data_load.v);
    free(a.what_if.v);
    return rc;
}

HTA_CLI_COMMAND(50, "critical-path", "HTA's critical path: summary, breakdown, overlay, what-if",
                cmd_critical_path, &HTA_CP_SUMMARY_TABLE, &HTA_CP_BREAKDOWN_TABLE, &HTA_CP_STATS_TABLE,
                &HTA_CP_WHATIF_TABLE, &HTA_CP_WHATIF_SUMMARY_TABLE)
