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

/* Whether the report counts step `number` of the context's rank k (its profile's steps: HTA's view may
 * leave the last step out). */
static int counted(const rp_rank *pr, long k, int64_t number) {
    if (k < 0) return 0;
    for (size_t i = 0; i < pr[k].nsteps; i++)
        if (pr[k].step_num[i] == number) return 1;
    return 0;
}

/* The job's step time in scenario q: the report's steps of every rank as (number, duration) pairs. */
static int64_t job_step(hta_ctx *ctx, const rp_rank *pr, const hta_job *j, size_t q, int64_t *num, int64_t *dur) {
    size_t n = hta_job_nsteps(j), m = 0;
    for (size_t i = 0; i < n; i++) {
        int32_t rank;
        int64_t number, d;
        hta_job_step(j, q, i, &rank, &number, &d);
        if (counted(pr, hta_ctx_find_rank(ctx, rank), number)) num[m] = number, dur[m++] = d;
    }
    return rp_job_median(num, dur, m);
}

hta_status rp_savings(hta_ctx *ctx, const rp_rank *pr, rp_scenario *sc, size_t nsc, hta_error *err) {
    size_t nr = 0;
    for (size_t i = 0; i < nsc; i++) nr += sc[i].nrules;
    hta_cpath_rule *rules = calloc(nr + 1, sizeof *rules);
    hta_job_scenario *js = calloc(nsc + 1, sizeof *js);
    int64_t *num = NULL, *dur = NULL;
    hta_job *j = NULL;
    size_t parsed = 0;
    hta_status st = HTA_OK;
    if (!rules || !js) {
        st = hta_oom(err);
        goto done;
    }
    for (size_t i = 0; i < nsc; i++) {
        js[i] = (hta_job_scenario){rules + parsed, sc[i].nrules, sc[i].on, 1};
        for (size_t r = 0; r < sc[i].nrules; r++) HTA_TRY_GOTO(st, hta_cpath_rule_parse(sc[i].rules[r], &rules[parsed++], err), done);
    }
    hta_job_opts o = {js, nsc, NULL, 0, 0, 1, NULL};
    HTA_TRY_GOTO(st, hta_job_run_ctx(ctx, &o, &j, NULL, err), done);
    size_t ns = hta_job_nsteps(j) + 1;
    num = malloc(ns * sizeof *num);
    dur = malloc(ns * sizeof *dur);
    if (!num || !dur) {
        st = hta_oom(err);
        goto done;
    }
    int64_t base = job_step(ctx, pr, j, 0, num, dur);
    for (size_t i = 0; i < nsc; i++) {
        sc[i].baseline_ns = base;
        sc[i].simulated_ns = job_step(ctx, pr, j, i + 1, num, dur);
    }
done:
    for (size_t r = 0; r < parsed; r++) hta_cpath_rule_free(&rules[r]);
    free(rules);
    free(js);
    free(num);
    free(dur);
    hta_job_free(j);
    return st;
}
