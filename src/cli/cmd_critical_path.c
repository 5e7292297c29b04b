/* hta critical-path: HTA's lightweight critical path, overlay, save/restore
 * and what-if simulation (docs/critical-path.md). */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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

static double secs(struct timespec a, struct timespec b) {
    return (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
}

static hta_status what_if_tables(hta_ctx *ctx, const hta_cp_graph *g, const cp_args *a,
                                 hta_result *out, hta_error *err) {
    size_t nr = a->what_if.n;
    hta_cpath_rule *rules = calloc(nr ? nr : 1, sizeof *rules);
    int64_t *w = malloc((g->nedge ? g->nedge : 1) * sizeof *w);
    hta_cp_path p = {0};
    hta_status st = HTA_OK;
    if (!rules || !w) {
        st = hta_oom(err);
        goto done;
    }
    for (size_t i = 0; i < nr; i++)
        if ((st = hta_cpath_rule_parse(a->what_if.v[i], &rules[i], err))) goto done;
    size_t changed = 0;
    if ((st = hta_cpath_whatif_weights(g, rules, nr, w, &changed, err))) goto done;
    /* the new path on the same graph with the changed weights: same nodes, same tie rules, so baseline and
     * simulation differ only by the rules */
    if ((st = hta_cpath_longest(g, w, &p, err))) goto done;
    if ((st = hta_cpath_whatif_table(g->path.length, p.length, changed, p.n, out, err))) goto done;
    /* the simulated path's summary, with the simulated weights */
    if ((st = hta_cpath_summary(g, &p, w, a->data_load.v, a->data_load.n, &HTA_CP_WHATIF_SUMMARY_TABLE, out,
                                err)))
        goto done;
    if (a->what_if_trace) {
        if (!ctx) {
            st = hta_fail(err, HTA_EINVAL, "--what-if-trace needs the trace (PATH), not only --graph");
            goto done;
        }
        if ((st = hta_cpath_whatif_trace(ctx, g, w, a->what_if_trace, err))) goto done;
        hta_result_note(out, "simulated trace written to %s", a->what_if_trace);
    }
done:
    for (size_t i = 0; i < nr; i++) hta_cpath_rule_free(&rules[i]);
    free(rules);
    free(w);
    hta_cpath_path_free(&p);
    return st;
}

/* --all-ranks in bounded memory (hta_job_*): rank by rank where the plan allows, else over the loaded
 * context; never more than one rank's graph per thread. */
static int job_bounded(cli_common *c, const cp_args *a, const char *prog) {
    hta_error err = {0};
    hta_result res;
    hta_result_init(&res);
    hta_rank_plan plan = {0};
    hta_ctx *ctx = NULL;
    hta_job *job = NULL;
    size_t failed = SIZE_MAX;
    int in_load = 0, rc = 0;
    hta_cpath_rule *rules = calloc(a->what_if.n ? a->what_if.n : 1, sizeof *rules);
    hta_status st = rules ? HTA_OK : hta_oom(&err);
    for (size_t i = 0; !st && i < a->what_if.n; i++) st = hta_cpath_rule_parse(a->what_if.v[i], &rules[i], &err);
    hta_job_scenario sc = {rules, a->what_if.n, NULL, 0};
    hta_job_opts jo = {&sc, a->what_if.n ? 1 : 0, a->data_load.v, a->data_load.n, 1, c->ctx.threads, NULL};
    char *ovl = NULL;
    if (!st && a->overlay) {
        /* OUTDIR/overlaid_critical_path_all_ranks.json, the folder made as for one rank's overlay */
        if (mkdir(a->overlay, 0777) && errno != EEXIST)
            st = hta_fail(&err, HTA_EIO, "%s: cannot create the folder: %s", a->overlay, strerror(errno));
        else if (asprintf(&ovl, "%s/overlaid_critical_path_all_ranks.json", a->overlay) < 0)
            st = hta_oom(&err), ovl = NULL;
        else
            st = hta_output_check(ovl, c->path, &err);
        jo.overlay = ovl;
    }
    int planned = !st && hta_ctx_per_rank_ok(&c->ctx) &&
                  !hta_rank_plan_make(c->path, c->ctx.ranks, c->ctx.nranks, &plan, &err) && plan.per_rank;
    if (st) {
        /* a rule that does not parse */
    } else if (planned) {
        for (size_t i = 0; i < plan.nwarnings && !c->quiet; i++) fprintf(stderr, "hta: warning: %s\n", plan.warnings[i]);
        st = hta_job_run_plan(&plan, &c->ctx, &jo, &job, &res, &failed, &in_load, &err);
    } else {
        if ((rc = cli_open(c, c->path, &ctx))) goto out;
        st = hta_job_run_ctx(ctx, &jo, &job, &res, &err);
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
    for (size_t i = 0; rules && i < a->what_if.n; i++) hta_cpath_rule_free(&rules[i]);
    free(rules);
    free(ovl);
    hta_job_free(job);
    hta_ctx_free(ctx);
    return rc;
}

/* --all-ranks: the job's graph (hta_sim_build_job); the path's summary, every rank's steps, what-if.
 * The joined graph holds every rank at once: kept for --what-if-trace, and as the reference
 * the bounded engine is checked against (HTA_PER_RANK=0). */
static int job(cli_common *c, const cp_args *a, const char *prog) {
    if (!c->path || a->graph || a->save) {
        fprintf(stderr, "hta critical-path: --all-ranks needs PATH, and takes no --graph or --save\n"
                        "Try 'hta critical-path --help'.\n");
        return EXIT_USAGE;
    }
    const char *env = getenv("HTA_PER_RANK");
    if (!a->what_if_trace && !(env && !strcmp(env, "0"))) return job_bounded(c, a, prog);
    hta_ctx *ctx = NULL;
    int rc = cli_open(c, c->path, &ctx);
    if (rc) return rc;
    hta_error err = {0};
    hta_sim *sim = NULL;
    hta_result res;
    hta_result_init(&res);
    hta_cpath_rule *rules = calloc(a->what_if.n ? a->what_if.n : 1, sizeof *rules);
    int64_t *t = NULL;
    hta_cp_path p = {0};
    hta_status st = rules ? hta_sim_build_job(ctx, &sim, &err) : hta_oom(&err);
    if (!st && a->what_if.n) {
        for (size_t i = 0; !st && i < a->what_if.n; i++) st = hta_cpath_rule_parse(a->what_if.v[i], &rules[i], &err);
        if (!st)
            st = hta_sim_whatif(ctx, sim, rules, a->what_if.n, a->data_load.v, a->data_load.n, a->what_if_trace, &res,
                                &err);
    }
    if (!st) {
        const hta_cp_graph *g = hta_sim_graph(sim);
        t = malloc((g->nnode ? g->nnode : 1) * sizeof *t);
        st = !t ? hta_oom(&err) : hta_sim_run(sim, NULL, t, &err);
        if (!st) st = hta_sim_path(sim, NULL, t, hta_sim_last_node(sim, t), INT64_MIN, &p, &err);
        if (!st)
            st = hta_cpath_summary(g, &p, NULL, a->data_load.v, a->data_load.n, &HTA_CP_SUMMARY_TABLE, &res, &err);
        if (!st) st = hta_sim_rank_tables(sim, t, &p, &res, &err);
        if (!st && a->overlay) {
            /* OUTDIR/overlaid_critical_path_all_ranks.json, the folder made as for one rank's overlay */
            char *out = NULL;
            if (mkdir(a->overlay, 0777) && errno != EEXIST)
                st = hta_fail(&err, HTA_EIO, "%s: cannot create the folder: %s", a->overlay, strerror(errno));
            else if (asprintf(&out, "%s/overlaid_critical_path_all_ranks.json", a->overlay) < 0)
                st = hta_oom(&err), out = NULL;
            else if (!(st = hta_output_check(out, c->path, &err)) && !(st = hta_sim_overlay(sim, t, &p, out, &err)))
                hta_result_note(&res, "overlay written to %s", out);
            free(out);
        }
        if (!st) st = hta_sim_steps_table(sim, NULL, t, a->data_load.v, a->data_load.n, &res, &err);
        if (!st) hta_result_note(&res, "%zu collective instances joined across %zu ranks", hta_sim_joined(sim),
                                 hta_ctx_nranks(ctx));
    }
    for (size_t i = 0; i < a->what_if.n; i++) hta_cpath_rule_free(&rules[i]);
    free(rules);
    free(t);
    hta_cpath_path_free(&p);
    hta_sim_free(sim);
    hta_ctx_free(ctx);
    if (st) {
        hta_result_free(&res);
        return cli_fail(prog, &err);
    }
    return cli_emit(c, &res);
}

static int cmd_critical_path(int argc, char **argv) {
    cp_args a = {0};
    a.top = 0;
    const cli_opt opts[] = {
        {"annotation", CLI_STR, &a.annotation, "NAME",
         "clip to the instances of events whose name contains NAME (default: whole trace)"},
        {"instance", CLI_STR, &a.instance, "N|A:B", "annotation instance, or range A..B inclusive (default 0)"},
        {"data-load", CLI_LIST, &a.data_load, "TEXT",
         "events whose name contains TEXT are data loading (HTA's data_load_events; repeatable)"},
        {"zero-weight-launch-edges", CLI_FLAG, &a.zero_weight, NULL,
         "add HTA's zero-weight launch edges (CRITICAL_PATH_ADD_ZERO_WEIGHT_LAUNCH_EDGE=1)"},
        {"top", CLI_INT, &a.top, "N", "breakdown: only the N longest path edges"},
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
        fprintf(stderr, "hta critical-path: --window needs the trace (PATH); a --graph was built with its own\n"
                        "Try 'hta critical-path --help'.\n");
        rc = EXIT_USAGE;
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
    o.annotation = a.annotation ? a.annotation : "";
    if (a.instance && parse_instance(a.instance, &o.instance_a, &o.instance_b)) {
        fprintf(stderr, "hta critical-path: bad --instance '%s' (N or A:B)\n", a.instance);
        rc = EXIT_USAGE;
        goto out;
    }
    o.data_load = a.data_load.v;
    o.ndata_load = a.data_load.n;
    o.zero_weight_launch = a.zero_weight;
    /* every rule is checked before the trace is read: a typo is a usage error now, not after a long load */
    for (size_t i = 0; i < a.what_if.n; i++) {
        hta_cpath_rule r;
        hta_error e = {0};
        if (hta_cpath_rule_parse(a.what_if.v[i], &r, &e)) {
            fprintf(stderr, "hta critical-path: %s\n", e.msg);
            rc = EXIT_USAGE;
            goto out;
        }
        hta_cpath_rule_free(&r);
    }
    hta_ctx *ctx = NULL;
    hta_cp_graph *g = NULL;
    hta_error err = {0};
    hta_status st;
    if (a.all_ranks) {
        rc = job(&c, &a, argv[0]);
        goto out;
    }
    if (c.path) {
        /* the critical path is one rank's: --ranks names it (only its file is read) */
        if (c.ctx.nranks > 1) {
            fprintf(stderr, "hta critical-path: one rank at a time: --ranks R\nTry 'hta critical-path --help'.\n");
            rc = EXIT_USAGE;
            goto out;
        }
        if ((rc = cli_open(&c, c.path, &ctx))) goto out;
        const char *derived = a.overlay ? "--overlay" : a.what_if_trace ? "--what-if-trace" : NULL;
        if (derived && (st = cli_check_derivable(ctx, derived, &err))) {
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
    struct timespec t0, t1, c0, c1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    if (a.graph) {
        st = hta_cpath_load(a.graph, &g, &err);
    } else {
        st = hta_cpath_build(ctx, 0, &o, &g, &err);
    }
    if (st) {
        rc = cli_fail(argv[0], &err);
        goto fin;
    }
    hta_result res;
    hta_result_init(&res);
    for (size_t i = 0; i < g->nnotes; i++) hta_result_note(&res, "%s", g->notes[i]);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    if (getenv("HTA_TIMING"))
        fprintf(stderr, "hta critical-path: graph %s in %.3f s, cpu %.3f s (%zu events, %zu nodes, %zu edges)\n",
                a.graph ? "loaded" : "built", secs(t0, t1), secs(c0, c1), g->nev, g->norder, g->nedge);
    /* The simulation graph (hta/sim.h): the what-if engine, and per-step paths by default (HTA's graph
     * alone with --hta-compat).  What-if results come first; the breakdown then only with --top. */
    hta_sim *sim = NULL;
    hta_cpath_rule *rules = NULL;
    if (ctx && (a.what_if.n || !c.ctx.hta_compat)) {
        st = hta_sim_build(ctx, 0, &sim, &err);
        if (!st && a.what_if.n) {
            rules = calloc(a.what_if.n, sizeof *rules);
            if (!rules) st = hta_oom(&err);
            for (size_t i = 0; !st && i < a.what_if.n; i++) st = hta_cpath_rule_parse(a.what_if.v[i], &rules[i], &err);
            if (!st)
                st = hta_sim_whatif(ctx, sim, rules, a.what_if.n, a.data_load.v, a.data_load.n, a.what_if_trace,
                                    &res, &err);
            for (size_t i = 0; rules && i < a.what_if.n; i++) hta_cpath_rule_free(&rules[i]);
            free(rules);
        }
    }
    if (!st) {
        if (a.what_if.n && sim && a.top <= 0) {
            /* the answer first: no breakdown of every path edge unless asked for */
            hta_result tmp;
            hta_result_init(&tmp);
            st = hta_cpath_report(g, &g->path, a.data_load.v, a.data_load.n, 1, &tmp, &err);
            for (size_t i = 0; !st && i < tmp.n; i++) {
                if (!strcmp(tmp.tables[i]->name, "breakdown")) continue;
                if (hta_result_add(&res, tmp.tables[i])) st = hta_oom(&err);
                tmp.tables[i] = NULL;
            }
            hta_result_free(&tmp);
        } else {
            st = hta_cpath_report(g, &g->path, a.data_load.v, a.data_load.n, a.top > 0 ? (size_t)a.top : 0, &res,
                                  &err);
        }
    }
    if (!st && sim && !c.ctx.hta_compat) {
        size_t nn = hta_sim_graph(sim)->nnode;
        int64_t *t = malloc((nn ? nn : 1) * sizeof *t);
        st = !t ? hta_oom(&err) : hta_sim_run(sim, NULL, t, &err);
        if (!st) st = hta_sim_steps_table(sim, NULL, t, a.data_load.v, a.data_load.n, &res, &err);
        free(t);
    }
    hta_sim_free(sim);
    if (getenv("HTA_TIMING")) {
        clock_gettime(CLOCK_MONOTONIC, &t0);
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
        fprintf(stderr, "hta critical-path: report in %.3f s, cpu %.3f s\n", secs(t1, t0), secs(c1, c0));
    }
    if (!st && a.what_if.n && !ctx) st = what_if_tables(ctx, g, &a, &res, &err);
    if (!st && a.save) {
        st = hta_cpath_save(g, a.save, &err);
        if (!st) hta_result_note(&res, "graph saved to %s", a.save);
    }
    if (!st && a.overlay) {
        if (!ctx) {
            st = hta_fail(&err, HTA_EINVAL, "--overlay needs the trace (PATH), not only --graph");
        } else {
            hta_cpath_overlay_opts oo = {a.all_events, a.all_events && a.all_edges, 0};
            char *written = NULL;
            st = hta_cpath_overlay(ctx, g, a.overlay, &oo, &written, &err);
            if (!st) hta_result_note(&res, "overlay written to %s", written);
            free(written);
        }
    }
    if (st) {
        hta_result_free(&res);
        rc = cli_fail(argv[0], &err);
        goto fin;
    }
    rc = cli_emit(&c, &res);
fin:
    hta_cpath_free(g);
    hta_ctx_free(ctx);
out:
    free(a.data_load.v);
    free(a.what_if.v);
    return rc;
}

HTA_CLI_COMMAND(50, "critical-path", "HTA's critical path: summary, breakdown, overlay, what-if",
                cmd_critical_path, &HTA_CP_SUMMARY_TABLE, &HTA_CP_BREAKDOWN_TABLE, &HTA_CP_STATS_TABLE,
                &HTA_CP_WHATIF_TABLE, &HTA_CP_WHATIF_SUMMARY_TABLE)
