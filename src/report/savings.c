/* Every saving the report estimates goes through this file: rp_cause_rules chooses, per cause, the what-if
 * rules that take the cause away ("the cause removed"), and rp_savings, the one function that calls the
 * engine: given what-if rules
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
#include "hta/vocab.h"
#include "report/internal.h"

const char *const rp_cause_names[RP_NCAUSE] = {"capture_trace", "data_loading", "host_blocking", "cpu_overhead",
                                               "exposed_communication", "straggler", "gpu_compute", "memory_copy"};

size_t rp_cause_rules(int c, const rp_rank *pr, size_t n, const unsigned char *on, int32_t strag,
                      char rules[][RP_RULE_MAX], size_t cap, const char **how) {
    size_t m = 0;
#define RULE(...) (void)(m < cap && snprintf(rules[m++], RP_RULE_MAX, __VA_ARGS__))
    switch (c) {
    case RP_C_DATA: {
        RULE("op:enumerate(DataLoader)*=0");
        /* input preparation without the DataLoader's range: the longest such frame of each rank takes no time
         * (its name as a glob, its special characters escaped) */
        int prep = 0;
        for (size_t k = 0; k < n; k++) {
            if ((on && !on[k]) || !pr[k].prep_op) continue;
            char g[RP_RULE_MAX];
            size_t len = 0;
            for (const char *ch = pr[k].prep_op; *ch && len + 3 < sizeof g; ch++) {
                if (strchr("*?[]\\", *ch)) g[len++] = '\\';
                g[len++] = *ch;
            }
            g[len] = 0;
            int dup = 0;
            for (size_t q = 1; q < m && !dup; q++) dup = !strcmp(rules[q] + 3, g);
            if (!dup && m < cap && strlen(g) + 6 < RP_RULE_MAX) RULE("op:%s=0", g), prep = 1;
        }
        *how = prep ? "data loading removed: enumerate(DataLoader) and the input preparation take no time"
                    : "data loading removed: enumerate(DataLoader) takes no time";
        break;
    }
    case RP_C_CPU:
        RULE("cpu=x0.2");
        *how = "the host 5x faster (what CUDA graphs, torch.compile or fused optimizers typically give), the GPU "
               "as it is";
        break;
    case RP_C_BLOCK: {
        /* every call that held the host while the GPU idled takes no time; where work was queued on the GPU
         * and waited meanwhile (behind a stream wait whose producer the host waited for), it starts as soon as
         * it is launched */
        rp_block v[RP_MAX_RULES - 1];
        size_t nv = rp_block_calls(pr, n, on, v, cap > 1 ? cap - 1 : 1); /* room left for edge:launch */
        int waits = 0;
        for (size_t k = 0; k < n; k++) {
            if (on && !on[k]) continue;
            const rp_rank *p = &pr[k];
            int64_t bw = 0, st = 0;
            for (size_t s = 0; s < p->nsteps; s++) bw += p->idle_bwait_ns[s], st += p->step_end[s] - p->step_ts[s];
            if ((double)bw > 0.05 * (double)st) waits = 1;
        }
        for (size_t j = 0; j < nv; j++) RULE("op:%s=0", v[j].name);
        if (waits) RULE("edge:launch=x0");
        *how = waits ? "the blocking calls take no time, and the GPU work queued behind them starts when it is "
                       "launched"
                     : "the blocking calls take no time";
        break;
    }
    case RP_C_COMM:
        RULE("type:comm=x0");
        *how = "the collectives' transfers take no time (their waits for late ranks are the straggler's)";
        break;
    case RP_C_STRAG:
        RULE("rank:%d=median", (int)strag);
        *how = "the straggler as fast as the median other rank, operation by operation and step by step";
        break;
    case RP_C_GPU:
        RULE("type:comp=x0.5");
        *how = "the computation kernels 2x faster";
        break;
    case RP_C_MEM:
        RULE("type:mem=x0");
        *how = "copies and memsets take no GPU time";
        break;
    default:
        *how = "";
        break;
    }
#undef RULE
    return m;
}

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
 * last step out), and under which number (*as).  A rank whose window is its whole span (one step or none)
 * takes the engine's steps of that rank as that window.  ix: the n profiles by rank. */
static int counted(const rp_rank *pr, const rank_ix *ix, size_t n, int32_t rank, int64_t number, int64_t *as) {
    const rank_ix key = {rank, 0}, *f = bsearch(&key, ix, n, sizeof *ix, by_rank);
    if (!f) return 0;
    const rp_rank *p = &pr[f->k];
    if (p->window == RP_WIN_SPAN) return *as = p->step_num[0], 1;
    for (size_t i = 0; i < p->nsteps; i++)
        if (p->step_num[i] == number) return *as = number, 1;
    return 0;
}

/* The job's step time in scenario q: the report's steps of every rank as (number, duration) pairs; the
 * job's whole run where it has fewer than two step numbers and its one step is not (nearly) the whole run.
 * *whole is decided on the baseline (q = 0) and kept for the other scenarios, so that every scenario is
 * measured over the same window. */
static int64_t job_step(const rp_rank *pr, const rank_ix *ix, size_t nr, const hta_job *j, size_t q, int64_t *num,
                        int64_t *dur, int *whole) {
    size_t n = hta_job_nsteps(j), m = 0, distinct = 0;
    for (size_t i = 0; i < n; i++) {
        int32_t rank;
        int64_t number, d, as;
        hta_job_step(j, q, i, &rank, &number, &d);
        if (!counted(pr, ix, nr, rank, number, &as)) continue;
        int fresh = 1;
        for (size_t x = 0; x < m && fresh && distinct < 2; x++) fresh = num[x] != as;
        distinct += fresh;
        num[m] = as, dur[m++] = d;
    }
    if (q == 0) {
        /* the report's window: the whole run where every rank's is its whole span (one step or none, as the
         * engine's fewer than two step numbers), else the steps' median, even of one step the trace had more
         * of.  One step that lasts 90% of the run or more is the window itself: the run's first and last
         * events can be a thread that only waits (a progress bar's monitor, woken by the clock), which no
         * what-if moves, so that the run would hide a saving the step shows. */
        int span = 1;
        for (size_t k = 0; k < nr; k++) span &= pr[k].window == RP_WIN_SPAN;
        *whole = distinct < 2 && (span || !m);
        if (*whole && m && (double)rp_job_median(num, dur, m) >= 0.9 * (double)hta_job_span(j, 0)) *whole = 0;
    }
    return *whole ? hta_job_span(j, q) : rp_job_median(num, dur, m);
}

hta_status rp_savings(const hta_report_src *src, const rp_rank *pr, size_t npr, rp_scenario *sc, size_t nsc,
                      hta_result *notes, hta_error *err) {
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
    /* the report's steps on the GPU timeline (every rank's: the GPU far behind the CPU), the engine's too */
    int gpu = npr > 0;
    for (size_t k = 0; k < npr; k++) gpu &= pr[k].window == RP_WIN_GPU;
    hta_job_opts o = {.scn = js, .nscn = nsc, .threads = 1, .gpu_steps = gpu};
    if (src->ctx) {
        HTA_TRY_GOTO(st, hta_job_run_ctx(src->ctx, &o, &j, notes, err), done);
    } else {
        /* the files once more, one rank's graph at a time; a file that fails here loaded for the parts */
        size_t failed;
        int in_load;
        o.threads = src->co->threads;
        o.dist = src->dist;
        o.keep = src->keep;
        HTA_TRY_GOTO(st, hta_job_run_plan(src->plan, src->co, &o, &j, notes, &failed, &in_load, err), done);
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
