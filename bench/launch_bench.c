/* Times the launch-area analyses in process on a trace loaded once and
 * prints seconds per million trace events (best of RUNS). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "hta/launch.h"
#include "hta/context.h"
#include "bench.h"


/* Each analysis with its default options (NULL options: the defaults). */
static hta_status r_launch(hta_ctx *c, hta_result *out, hta_error *err) {
    return hta_launch_stats(c, NULL, out, err);
}
static hta_status r_annotations(hta_ctx *c, hta_result *out, hta_error *err) {
    return hta_annotation_breakdown(c, NULL, out, err);
}
static hta_status r_stragglers(hta_ctx *c, hta_result *out, hta_error *err) {
    return hta_potential_stragglers(c, NULL, out, err);
}
static hta_status r_ops(hta_ctx *c, hta_result *out, hta_error *err) {
    return hta_aten_op_kernels(c, NULL, out, err);
}

int main(int argc, char **argv) {
    int runs = bench_runs(argc, argv, "launch_bench PATH [RUNS]", 3);
    if (!runs) return 2;
    hta_ctx *ctx;
    double load;
    if (bench_open("launch_bench: ", argv[1], &ctx, &load)) return 1;
    const hta_trace *t = ctx->trace;
    double events = 0, rows = 0;
    for (size_t r = 0; r < t->nranks; r++) events += (double)t->ranks[r]->n_events, rows += (double)t->ranks[r]->n;
    printf("%.0f events (%.0f rows) in %zu ranks, loaded in %.3f s\n", events, rows, t->nranks, load);
    static const struct {
        const char *name;
        bench_fn fn;
    } cmds[] = {{"launch", r_launch}, {"annotations", r_annotations}, {"stragglers", r_stragglers}, {"ops", r_ops}};
    printf("%-12s %10s %12s\n", "analysis", "best s", "s/M events");
    for (size_t c = 0; c < sizeof cmds / sizeof *cmds; c++) {
        double best = bench_best("launch_bench: ", cmds[c].name, ctx, cmds[c].fn, runs);
        if (best < 0) return 1;
        printf("%-12s %10.3f %12.3f\n", cmds[c].name, best, best / (events / 1e6));
    }
    hta_ctx_free(ctx);
    return 0;
}
