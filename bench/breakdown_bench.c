/* Loads a trace once, then times each breakdown analysis (best of 5) and
 * prints seconds per million trace events.  Built by `make bench-breakdown`. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "hta/breakdown.h"
#include "hta/context.h"
#include "bench.h"


static hta_status r_temporal(hta_ctx *c, hta_result *o, hta_error *e) {
    hta_temporal_opts x = {0};
    return hta_temporal_breakdown(c, &x, o, e);
}
static hta_status r_idle(hta_ctx *c, hta_result *o, hta_error *e) {
    hta_idle_opts x = {.consecutive_kernel_delay_ns = HTA_IDLE_DEFAULT_DELAY_NS, .interval_stats = 1};
    return hta_idle_breakdown(c, &x, o, e);
}
static hta_status r_kernels(hta_ctx *c, hta_result *o, hta_error *e) {
    hta_kernel_opts x = {.top = 10, .duration_ratio = 0.8, .include_memory = 1};
    return hta_kernel_breakdown(c, &x, o, e);
}
static hta_status r_overlap(hta_ctx *c, hta_result *o, hta_error *e) {
    hta_overlap_opts x = {0};
    return hta_overlap(c, &x, o, e);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s TRACE\n", argv[0]);
        return 2;
    }
    hta_ctx *ctx;
    double load;
    if (bench_open("", argv[1], &ctx, &load)) return 1;
    const hta_trace *t = ctx->trace;
    uint64_t ev = 0;
    for (size_t i = 0; i < t->nranks; i++) ev += t->ranks[i]->n_events;
    double m = ev / 1e6;
    printf("%llu events, load %.3f s (%.3f s/M events)\n", (unsigned long long)ev, load, load / m);
    static const struct { const char *name; bench_fn fn; } runs[] = {
        {"temporal", r_temporal}, {"idle --stats", r_idle}, {"kernels", r_kernels}, {"overlap", r_overlap}};
    for (size_t k = 0; k < sizeof runs / sizeof *runs; k++) {
        double best = bench_best("", runs[k].name, ctx, runs[k].fn, 5);
        if (best < 0) return 1;
        printf("%-14s %.3f s  %.3f s/M events\n", runs[k].name, best, best / m);
    }
    hta_ctx_free(ctx);
    return 0;
}
