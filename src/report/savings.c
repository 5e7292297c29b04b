/* Every saving the report estimates goes through rp_savings, the one function here: given what-if rules
 * ("op:enumerate(DataLoader)*=0", "cpu=x0.2", "rank:3=median") and the ranks they apply to, the job's step
 * time before and after.
 *
 * It is the what-if engine of `hta critical-path --all-ranks` (hta/sim.h): the job's simulation graph,
 * every rank joined at its collectives, built once for all scenarios.  A scenario's rules re-weight the
 * graph (a rule that matches nothing changes nothing here: a cause the trace does not show saves nothing),
 * the weights of ranks outside the scenario's go back to their own, and the schedule is run again.  The
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

/* The job's step time under schedule t: the report's steps of every rank as (number, duration) pairs. */
static int64_t job_step(hta_ctx *ctx, const rp_rank *pr, const hta_sim *s, const int64_t *t, int64_t *num,
                        int64_t *dur) {
    size_t n = hta_sim_nsteps(s), m = 0;
    const hta_sim_step *st = hta_sim_steps(s);
    for (size_t i = 0; i < n; i++)
        if (counted(pr, hta_ctx_find_rank(ctx, st[i].rank), st[i].number))
            num[m] = st[i].number, dur[m++] = t[st[i].end] - t[st[i].start];
    return rp_job_median(num, dur, m);
}

hta_status rp_savings(hta_ctx *ctx, const rp_rank *pr, rp_scenario *sc, size_t nsc, hta_error *err) {
    hta_sim *s = NULL;
    HTA_TRY(hta_sim_build_job(ctx, &s, err));
    const hta_cp_graph *g = hta_sim_graph(s);
    size_t nn = g->nnode ? g->nnode : 1, ne = g->nedge ? g->nedge : 1, ns = hta_sim_nsteps(s) + 1;
    int64_t *t = malloc(nn * sizeof *t), *w = malloc(ne * sizeof *w), *num = malloc(ns * sizeof *num),
            *dur = malloc(ns * sizeof *dur);
    unsigned char *on = malloc(ne);
    hta_status st = HTA_OK;
    if (!t || !w || !num || !dur || !on) {
        st = hta_oom(err);
        goto done;
    }
    HTA_TRY_GOTO(st, hta_sim_run(s, NULL, t, err), done);
    int64_t base = job_step(ctx, pr, s, t, num, dur);
    for (size_t i = 0; i < nsc; i++) {
        rp_scenario *c = &sc[i];
        c->baseline_ns = c->simulated_ns = base;
        /* which edges the scenario may change: those of its ranks */
        for (size_t e = 0; e < g->nedge; e++) {
            int32_t r = hta_sim_edge_rank(s, e);
            long k = hta_ctx_find_rank(ctx, r);
            on[e] = !c->on || (k >= 0 && c->on[k]);
        }
        for (size_t e = 0; e < g->nedge; e++) w[e] = g->edge[e].w;
        int any = 0;
        for (size_t j = 0; j < c->nrules; j++) {
            hta_cpath_rule rule;
            hta_error e1 = {0};
            HTA_TRY_GOTO(st, hta_cpath_rule_parse(c->rules[j], &rule, err), done);
            /* one rule at a time on the weights so far: a rule that matches nothing is no saving */
            int64_t *w1 = malloc(ne * sizeof *w1);
            size_t changed = 0;
            if (!w1) {
                hta_cpath_rule_free(&rule);
                st = hta_oom(err);
                goto done;
            }
            hta_status rs = hta_sim_weights(s, &rule, 1, w1, &changed, &e1);
            hta_cpath_rule_free(&rule);
            if (rs == HTA_ENOMEM) {
                free(w1);
                st = hta_oom(err);
                goto done;
            }
            if (!rs) {
                /* w1 holds the rule applied to the graph's own weights: carry its change onto w */
                for (size_t e = 0; e < g->nedge; e++)
                    if (on[e] && w1[e] != g->edge[e].w) {
                        double f = g->edge[e].w ? (double)w[e] / (double)g->edge[e].w : 0;
                        w[e] = g->edge[e].w ? (int64_t)((double)w1[e] * f) : w1[e];
                        any = 1;
                    }
            }
            free(w1);
        }
        if (!any) continue;
        HTA_TRY_GOTO(st, hta_sim_run(s, w, t, err), done);
        c->simulated_ns = job_step(ctx, pr, s, t, num, dur);
    }
done:
    free(t);
    free(w);
    free(num);
    free(dur);
    free(on);
    hta_sim_free(s);
    return st;
}
