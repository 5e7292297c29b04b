/* Load-speed benchmark: loads PATH several times and prints MB/s of JSON
 * text and the median load time (the process's peak RSS is read by the
 * caller, e.g. /usr/bin/time). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "hta/trace.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: load_bench PATH [RUNS] [THREADS]\n");
        return 2;
    }
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    int threads = argc > 3 ? atoi(argv[3]) : 0;
    if (runs < 1 || runs > 100) runs = 5;
    double t[100];
    unsigned long long json = 0, rows = 0, events = 0;
    for (int i = 0; i < runs; i++) {
        hta_load_opts o = {0};
        o.threads = threads;
        hta_trace *tr;
        hta_error err;
        double t0 = now();
        if (hta_trace_load(argv[1], &o, &tr, &err)) {
            fprintf(stderr, "load_bench: %s\n", err.msg);
            return 1;
        }
        t[i] = now() - t0;
        json = rows = events = 0;
        for (size_t r = 0; r < tr->nranks; r++) {
            json += tr->ranks[r]->bytes_json;
            rows += tr->ranks[r]->n;
            events += tr->ranks[r]->n_events;
        }
        hta_trace_free(tr);
    }
    qsort(t, (size_t)runs, sizeof *t, cmp);
    double med = t[runs / 2];
    printf("path=%s runs=%d json_mb=%.1f events=%llu rows=%llu median_s=%.3f min_s=%.3f max_s=%.3f mb_per_s=%.0f\n",
           argv[1], runs, (double)json / 1e6, events, rows, med, t[0], t[runs - 1], (double)json / 1e6 / med);
    return 0;
}
