/* Every saving the report estimates goes through rp_savings, the one function here: given what-if rules
 * ("op:enumerate(DataLoader)*=0", "cpu=x0.2", "rank:3=median") and the ranks they apply to, the job's step
 * time before and after.
 *
 * It is the what-if engine of `hta critical-path --all-ranks` (hta/sim.h, hta_job_*): every rank's
 * simulation graph joined at its collectives, in bounded memory (one rank's graph at a time), every
 * scenario replayed on it.  A scenario's rules apply in order to the ranks it names (a rule that matches
 * nothing changes nothing here: a cause the trace does not show saves nothing).  The
 * job's step time, before and after, is rp_job_median's over every rank's steps: the median over step
 * numbers of the slowest rank's step.  So a saving on one rank shows on the job as far as the others stop
 * waiting for it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hta/sim.h"
#include "report/internal.h"

/* A rank's index in the profiles, for lookups by rank. */
typedef struct rank_ix {
    int32_t rank;
    size_t k;
} rank_ix;

static int by_rank(const void *a, const void *b) {
    int32_t x = ((const rank_ix *)a)->rank, y = ((const rank_ix *)b)->rank;
    return (x > y) - (x < y);
}

/* Whether the report counts step `number` of rank `rank` (its profile's steps: HTA's view may leave the
 * last step out).  ix: the n profiles by rank. */
static int counted(const rp_rank *pr, const rank_ix *ix, size_t n, int32_t rank, int64_t number) {
    const rank_ix key = {rank, 0}, *f = bsearch(&key, ix, n, sizeof *ix, by_rank);
    for (size_t i = 0; f && i < pr[f->k].nsteps; i++)
        if (pr[f->k].step_num[i] == number) return 1;
    return 0;
}

/* The job's step time in scenario q: the report's steps of every rank as (number, duration) pairs; the
 * job's whole run where it has fewer than two step numbers (one step, or none: the common real trace,
 * whose "step" would be a few us of annotation or nothing). */
static int64_t job_step(const rp_rank *pr, const rank_ix *ix, size_t nr, const hta_job *j, size_t q, int64_t *num,
                        int64_t *dur, int *whole) {
    size_t n = hta_job_nsteps(j), m = 0, distinct = 0;
    for (size_t i = 0; i < n; i++) {
        int32_t rank;
        int64_t number, d;
        hta_job_step(j, q, i, &rank, &number, &d);
        if (!counted(pr, ix, nr, rank, number)) continue;
        int fresh = 1;
        for (size_t x = 0; x < m && fresh && distinct < 2; x++) fresh = num[x] != number;
        distinct += fresh;
        num[m] = number, dur[m++] = d;
    }
    *whole = distinct < 2;
    return *whole ? hta_job_span(j, q) : rp_job_median(num, dur, m);
}

hta_status rp_savings(const hta_report_src *src, const rp_rank *pr, size_t npr, rp_scenario *sc, size_t nsc,
                      hta_error *err) {
    size_t nr = 0;
    for (size_t i = 0; i < nsc; i++) nr += sc[i].nrules;
    hta_cpath_rule *rules = calloc(nr + 1, sizeof *rules);
    hta_job_scenario *js = calloc(nsc + 1, sizeof *js);
    int64_t *num = NULL, *dur = NULL;
    rank_ix *ix = malloc((npr ? npr : 1) * sizeof *ix);
    hta_job *j = NULL;
    size_t parsed = 0;
    hta_status st = HTA_OK;
    if (!rules || !js || !ix) {
        st = hta_oom(err);
        goto done;
    }
    for (size_t i = 0; i < nsc; i++) {
        js[i] = (hta_job_scenario){rules + parsed, sc[i].nrules, sc[i].on, 1};
        for (size_t r = 0; r < sc[i].nrules; r++) HTA_TRY_GOTO(st, hta_cpath_rule_parse(sc[i].rules[r], &rules[parsed++], err), done);
    }
    for (size_t k = 0; k < npr; k++) ix[k] = (rank_ix){pr[k].rank, k};
    qsort(ix, npr, sizeof *ix, by_rank);
    hta_job_opts o = {js, nsc, NULL, 0, 0, 1, NULL, NULL};
    if (src->ctx) {
        HTA_TRY_GOTO(st, hta_job_run_ctx(src->ctx, &o, &j, NULL, err), done);
    } else {
        /* the files once more, one rank's graph at a time; a file that fails here loaded for the parts */
        size_t failed;
        int in_load;
        o.threads = src->co->threads;
        HTA_TRY_GOTO(st, hta_job_run_plan(src->plan, src->co, &o, &j, NULL, &failed, &in_load, err), done);
    }
    size_t ns = hta_job_nsteps(j) + 1;
    num = malloc(ns * sizeof *num);
    dur = malloc(ns * sizeof *dur);
    if (!num || !dur) {
        st = hta_oom(err);
        goto done;
    }
    int whole = 0;
    int64_t base = job_step(pr, ix, npr, j, 0, num, dur, &whole);
    for (size_t i = 0; i < nsc; i++) {
        sc[i].baseline_ns = base;
        sc[i].simulated_ns = job_step(pr, ix, npr, j, i + 1, num, dur, &whole);
    }
done:
    for (size_t r = 0; r < parsed; r++) hta_cpath_rule_free(&rules[r]);
    free(rules);
    free(js);
    free(num);
    free(dur);
    free(ix);
    hta_job_free(j);
    return st;
}
