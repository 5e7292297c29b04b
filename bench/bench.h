/* What the in-process benches share (breakdown_bench, launch_bench, whatif_bench): a monotonic clock, a
 * trace loaded and timed, the best time of an analysis over runs. */
#ifndef HTA_BENCH_H
#define HTA_BENCH_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "hta/context.h"

static inline double bench_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Opens path into *ctx, its seconds in *load_s; on failure prints "<prefix><message>" and returns 1. */
static inline int bench_open(const char *prefix, const char *path, hta_ctx **ctx, double *load_s) {
    hta_error err = {0};
    double t0 = bench_now();
    if (hta_ctx_open(path, NULL, ctx, &err)) {
        fprintf(stderr, "%s%s\n", prefix, err.msg);
        return 1;
    }
    *load_s = bench_now() - t0;
    return 0;
}

/* RUNS, the argument after PATH: dflt when absent, at least 1; 0 after printing "usage: <usage>" when
 * PATH is missing. */
static inline int bench_runs(int argc, char **argv, const char *usage, int dflt) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s\n", usage);
        return 0;
    }
    int runs = argc > 2 ? atoi(argv[2]) : dflt;
    return runs < 1 ? 1 : runs;
}

typedef hta_status (*bench_fn)(hta_ctx *c, hta_result *out, hta_error *err);

/* The best wall seconds of runs runs of fn on ctx, the views released before each (each run builds the
 * views it needs, as a one-command run does); on failure prints "<prefix><name>: <message>", returns -1. */
static inline double bench_best(const char *prefix, const char *name, hta_ctx *ctx, bench_fn fn, int runs) {
    double best = 1e9;
    for (int i = 0; i < runs; i++) {
        hta_result res;
        hta_result_init(&res);
        hta_ctx_release_views(ctx);
        hta_error err = {0};
        double a = bench_now();
        if (fn(ctx, &res, &err)) {
            fprintf(stderr, "%s%s: %s\n", prefix, name, err.msg);
            return -1;
        }
        double d = bench_now() - a;
        if (d < best) best = d;
        hta_result_free(&res);
    }
    return best;
}

#endif
