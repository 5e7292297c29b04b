/* Times the what-if engine on a trace loaded once (docs/critical-path.md, "Simulation"): building each rank's
 * simulation graph, re-evaluating a rule on the built graphs (weights and schedule, the part a user repeats for
 * each question), and the job's answer under the rule (critical-path --all-ranks --what-if RULE: the bounded
 * job engine, hta_job_*).  Prints seconds per million trace events (median of RUNS). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "hta/context.h"
#include "hta/table.h"
#include "hta/sim.h"
#include "bench.h"


static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    int runs = bench_runs(argc, argv, "whatif_bench PATH [RUNS] [RULE]", 5);
    if (!runs) return 2;
    const char *rule_text = argc > 3 ? argv[3] : "cpu=x0.5";
    hta_ctx *ctx;
    hta_error err = {0};
    double load;
    if (bench_open("whatif_bench: ", argv[1], &ctx, &load)) return 1;
    double events = 0;
    for (size_t r = 0; r < hta_ctx_nranks(ctx); r++) events += (double)hta_ctx_rank(ctx, r)->n_events;
    printf("%.0f events in %zu ranks, loaded in %.3f s\n", events, hta_ctx_nranks(ctx), load);
    hta_cpath_rule rule;
    if (hta_cpath_rule_parse(rule_text, &rule, &err)) {
        fprintf(stderr, "whatif_bench: %s\n", err.msg);
        return 2;
    }
    size_t nr = hta_ctx_nranks(ctx), nnode = 0, nedge = 0, maxn = 1, maxe = 1;
    hta_sim_mem mem = {0};
    hta_sim **s = calloc(nr ? nr : 1, sizeof *s);
    double *d = malloc((size_t)runs * sizeof *d);
    if (!s || !d) return 1;
    double t0 = bench_now();
    for (size_t k = 0; k < nr; k++) {
        if (hta_sim_build(ctx, k, &s[k], &err)) {
            fprintf(stderr, "whatif_bench: %s\n", err.msg);
            return 1;
        }
        const hta_cp_graph *g = hta_sim_graph(s[k]);
        nnode += g->nnode;
        nedge += g->nedge;
        if (g->nnode > maxn) maxn = g->nnode;
        if (g->nedge > maxe) maxe = g->nedge;
        hta_sim_mem m;
        hta_sim_bytes(s[k], &m);
        mem.events += m.events, mem.nodes += m.nodes, mem.edges += m.edges, mem.in_index += m.in_index;
        mem.order += m.order, mem.parents += m.parents, mem.steps += m.steps, mem.other += m.other;
        mem.nev += m.nev;
    }
    double build = bench_now() - t0;
    printf("graphs: %zu nodes, %zu edges in %zu ranks, built in %.3f s (%.3f s per M events)\n", nnode, nedge, nr,
           build, build / (events / 1e6));
    /* the graphs' size per graph event (hta_sim_bytes; issue 36's target: at most 100) */
    double ne = mem.nev ? (double)mem.nev : 1;
    size_t total = mem.events + mem.nodes + mem.edges + mem.in_index + mem.order + mem.parents + mem.steps + mem.other;
    printf("graph bytes per event: %.1f (%zu graph events: events %.1f, extra nodes %.1f, edges %.1f, in-edge index "
           "%.1f, order %.1f, parents %.1f, steps %.1f, collectives %.1f)\n", (double)total / ne, mem.nev,
           (double)mem.events / ne, (double)mem.nodes / ne, (double)mem.edges / ne, (double)mem.in_index / ne,
           (double)mem.order / ne, (double)mem.parents / ne, (double)mem.steps / ne, (double)mem.other / ne);
    int64_t *w = malloc(maxe * sizeof *w), *t = malloc(maxn * sizeof *t);
    if (!w || !t) return 1;
    for (int i = 0; i < runs; i++) {
        double a = bench_now();
        for (size_t k = 0; k < nr; k++) {
            size_t changed;
            if (hta_sim_weights(s[k], &rule, 1, w, &changed, &err) || hta_sim_run(s[k], w, t, &err)) {
                fprintf(stderr, "whatif_bench: %s\n", err.msg);
                return 1;
            }
        }
        d[i] = bench_now() - a;
    }
    qsort(d, (size_t)runs, sizeof *d, cmp_d);
    double med = d[runs / 2];
    printf("re-evaluate '%s': median %.4f s of %d runs, %.4f s per M events (min %.4f, max %.4f s)\n", rule_text,
           med, runs, med / (events / 1e6), d[0], d[runs - 1]);
    for (size_t k = 0; k < nr; k++) hta_sim_free(s[k]);
    /* the job's answer: every rank's graph built again, one at a time, as the command does */
    hta_job_scenario sc = {&rule, 1, NULL, 0};
    hta_job_opts jo = {.scn = &sc, .nscn = 1, .paths = 1, .threads = 1};
    hta_job *jb = NULL;
    hta_result res;
    hta_result_init(&res);
    t0 = bench_now();
    if (hta_job_run_ctx(ctx, &jo, &jb, &res, &err)) {
        fprintf(stderr, "whatif_bench: %s\n", err.msg);
        return 1;
    }
    double job = bench_now() - t0;
    printf("job answer under '%s' (--all-ranks): %.3f s, %.3f s per M events\n", rule_text, job, job / (events / 1e6));
    hta_result_free(&res);
    hta_job_free(jb);
    hta_cpath_rule_free(&rule);
    free(w);
    free(t);
    free(d);
    free(s);
    hta_ctx_free(ctx);
    return 0;
}
