/* Cost of one scope (begin + end) in libhtatrace, on the CPU clock.
 *
 *   build/bench-tracer [iterations] [runs]      (default 10000000 5)
 *
 * Prints the median over runs of ns per begin+end pair: no args, and with two
 * int args.  Recorded events are discarded every million scopes (counted in
 * the time) so memory stays bounded and chunks are reused, as after warm-up.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "hta/tracer.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Defines double name(long iters): ns per pass of the statements given (one scope) over iters passes, the
 * recorded events discarded every 2^20 passes (counted in the time); i is the pass. */
#define SCOPE_LOOP(name, ...)                                                                          \
    static double name(long iters)                                                                     \
    {                                                                                                  \
        double t0 = now_s();                                                                           \
        for (long i = 0; i < iters; i++) {                                                             \
            __VA_ARGS__                                                                                \
            if ((i & 0xfffff) == 0xfffff)                                                              \
                hta_tracer_discard();                                                                  \
        }                                                                                              \
        return (now_s() - t0) * 1e9 / (double)iters;                                                   \
    }

SCOPE_LOOP(run_plain, hta_tracer_begin("step"); hta_tracer_end();)

SCOPE_LOOP(run_args,
           hta_tracer_arg a[2] = {HTA_TRACER_ARG_INT("layer", i), HTA_TRACER_ARG_INT("micro_batch", 3)};
           hta_tracer_begin_args("step", a, 2);
           hta_tracer_end();)

SCOPE_LOOP(run_macro, { HTA_TRACER_SCOPE("step"); })

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    long iters = argc > 1 ? atol(argv[1]) : 10000000;
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    if (iters <= 0 || runs <= 0 || runs > 100) {
        fprintf(stderr, "usage: %s [iterations] [runs]\n", argv[0]);
        return 2;
    }
    hta_tracer_config cfg;
    hta_tracer_config_init(&cfg);
    cfg.flush_at_exit = 0;
    if (hta_tracer_init(&cfg) != HTA_TRACER_OK)
        return 1;
    /* warm-up: thread buffer, chunks, page faults */
    run_plain(iters / 4 + 1);
    run_args(iters / 4 + 1);

    double plain[100], args[100], macro[100];
    for (int r = 0; r < runs; r++) {
        plain[r] = run_plain(iters);
        args[r] = run_args(iters);
        macro[r] = run_macro(iters);
    }
    printf("htatrace overhead: %ld iterations x %d runs, median ns per begin+end\n", iters, runs);
    printf("  no args      %6.1f ns\n", median(plain, runs));
    printf("  2 int args   %6.1f ns\n", median(args, runs));
    printf("  scope macro  %6.1f ns\n", median(macro, runs));
    hta_tracer_shutdown();
    return 0;
}
