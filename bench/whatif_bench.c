/* Times the what-if engine on a trace loaded once (docs/critical-path.md, "Simulation"): building the
 * simulation graph of every rank joined (--all-ranks), then re-evaluating rules on the built graph (weights
 * and schedule), the part a user repeats for each question.  Prints seconds per million trace events
 * (median of RUNS). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "hta/context.h"
#include "hta/sim.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: whatif_bench PATH [RUNS] [RULE]\n");
        return 2;
    }
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    if (runs < 1) runs = 1;
    const char *rule_text = argc > 3 ? argv[3] : "cpu=x0.5";
    hta_ctx *ctx;
    hta_error err = {0};
    double t0 = now();
    if (hta_ctx_open(argv[1], NULL, &ctx, &err)) {
        fprintf(stderr, "whatif_bench: %s\n", err.msg);
        return 1;
    }
    double load = now() - t0;
    double events = 0;
    for (size_t r = 0; r < hta_ctx_nranks(ctx); r++) events += (double)hta_ctx_rank(ctx, r)->n_events;
    printf("%.0f events in %zu ranks, loaded in %.3f s\n", events, hta_ctx_nranks(ctx), load);
    hta_sim *s = NULL;
    t0 = now();
    if (hta_sim_build_job(ctx, &s, &err)) {
        fprintf(stderr, "whatif_bench: %s\n", err.msg);
        return 1;
    }
    double build = now() - t0;
    const hta_cp_graph *g = hta_sim_graph(s);
    printf("graph: %zu nodes, %zu edges, built in %.3f s (%.3f s per M events)\n", g->nnode, g->nedge, build,
           build / (events / 1e6));
    hta_cpath_rule rule;
    if (hta_cpath_rule_parse(rule_text, &rule, &err)) {
        fprintf(stderr, "whatif_bench: %s\n", err.msg);
        return 2;
    }
    int64_t *w = malloc((g->nedge ? g->nedge : 1) * sizeof *w), *t = malloc((g->nnode ? g->nnode : 1) * sizeof *t);
    double *d = malloc((size_t)runs * sizeof *d);
    if (!w || !t || !d) return 1;
    for (int i = 0; i < runs; i++) {
        size_t changed;
        double a = now();
        if (hta_sim_weights(s, &rule, 1, w, &changed, &err) || hta_sim_run(s, w, t, &err)) {
            fprintf(stderr, "whatif_bench: %s\n", err.msg);
            return 1;
        }
        d[i] = now() - a;
    }
    qsort(d, (size_t)runs, sizeof *d, cmp_d);
    double med = d[runs / 2];
    printf("re-evaluate '%s': median %.4f s of %d runs, %.4f s per M events (min %.4f, max %.4f s)\n", rule_text,
           med, runs, med / (events / 1e6), d[0], d[runs - 1]);
    hta_cpath_rule_free(&rule);
    free(w);
    free(t);
    free(d);
    hta_sim_free(s);
    hta_ctx_free(ctx);
    return 0;
}
