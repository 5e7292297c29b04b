/* Loads a trace once, then times each breakdown analysis (best of 5) and
 * prints seconds per million trace events.  Built by `make bench-breakdown`. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "hta/breakdown.h"
#include "hta/context.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

typedef hta_status (*run_fn)(hta_ctx *c, hta_result *out, hta_error *err);

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
    hta_error err = {0};
    double t0 = now();
    if (hta_ctx_open(argv[1], NULL, &ctx, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    double load = now() - t0;
    const hta_trace *t = ctx->trace;
    uint64_t ev = 0;
    for (size_t i = 0; i < t->nranks; i++) ev += t->ranks[i]->n_events;
    double m = ev / 1e6;
    printf("%llu events, load %.3f s (%.3f s/M events)\n", (unsigned long long)ev, load, load / m);
    static const struct { const char *name; run_fn fn; } runs[] = {
        {"temporal", r_temporal}, {"idle --stats", r_idle}, {"kernels", r_kernels}, {"overlap", r_overlap}};
    for (size_t k = 0; k < sizeof runs / sizeof *runs; k++) {
        double best = 1e9;
        for (int rep = 0; rep < 5; rep++) {
            hta_result res;
            hta_result_init(&res);
            hta_ctx_release_views(ctx); /* each run builds the views it needs, as a one-command run does */
            double s = now();
            if (runs[k].fn(ctx, &res, &err)) {
                fprintf(stderr, "%s: %s\n", runs[k].name, err.msg);
                return 1;
            }
            double d = now() - s;
            if (d < best) best = d;
            hta_result_free(&res);
        }
        printf("%-14s %.3f s  %.3f s/M events\n", runs[k].name, best, best / m);
    }
    hta_ctx_free(ctx);
    return 0;
}
