/* The diagnosis: which causes lose the job time, with the figures that show each, what to do, and what
 * fixing it would save, ranked by that saving.  One finding per cause for the whole job, naming its
 * ranks.  The savings come from rp_savings (savings.c), one what-if scenario per cause; the straggler's
 * from collective lateness until the engine can make one rank as fast as the others.
 *
 * Idle time is told apart by the shape of the GPU's gaps: a few long ones (RP_LONG_GAP_NS and more) come
 * from data loading, syncs and checkpoints, many short ones from launches that do not keep up; the CPU
 * annotations (enumerate(DataLoader)) and the launch-queue length decide between them.
 * Thresholds and rules: docs/report.md, "Causes and savings". */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hta/util.h"
#include "report/internal.h"

enum { C_DATA, C_CPU, C_SYNC, C_COMM, C_STRAG, C_GPU, C_MEM, NCAUSE };
static const char *const cause_name[NCAUSE] = {"data_loading", "cpu_overhead",  "host_sync",  "exposed_communication",
                                                "straggler",    "gpu_compute",   "memory_copy"};

/* the rule of each cause's scenario: "the problem fixed" (docs/report.md) */
static const char *const rule_data[] = {"op:enumerate(DataLoader)*=0"};
static const char *const rule_cpu[] = {"op:enumerate(DataLoader)*=0", "cpu=x0.2"};
static const char *const rule_sync[] = {"op:*Synchronize*=0"};
static const char *const rule_comm[] = {"type:comm=x0"};
static const char *const rule_gpu[] = {"type:comp=x0.9"};
static const char *const rule_mem[] = {"type:mem=x0"};

static const char *const todo[NCAUSE] = {
    "the GPU waits for the next batch: more DataLoader workers (num_workers), pin_memory=True, "
    "prefetch_factor, persistent_workers; decode and augment ahead of time or on the GPU; see `hta cpu-ops`",
    "the CPU does not launch work fast enough: fewer, larger kernels (torch.compile, fused or foreach "
    "optimizers, CUDA graphs), less Python per step; see `hta launch`, `hta idle`",
    "the CPU waits for the GPU and the GPU then waits for the CPU: remove .item(), .cpu(), print of "
    "tensors and explicit synchronize calls from the step, or move them to its end; see `hta events`",
    "collectives run without compute beside them: overlap them (DDP bucket_cap_mb, FSDP prefetch, "
    "async collectives), fewer or larger messages; see `hta overlap`",
    "the other ranks wait for this one in every collective: look at its data loading, CPU load, GPU "
    "clocks and thermals, and its input sizes; see `hta stragglers`",
    "the GPU is the bound: the kernels themselves (precision, fusion, better kernels, larger batch "
    "per kernel); see `hta kernels`",
    "copies and memsets take GPU time: pinned memory and non_blocking copies, fewer host-device "
    "transfers, no memset of buffers written anyway; see `hta counters`",
};

const char *rp_dur(int64_t ns, char *buf, size_t cap) {
    double a = fabs((double)ns);
    if (a < 10e6) snprintf(buf, cap, "%.0f us", (double)ns / 1e3);
    else if (a < 1e9) snprintf(buf, cap, "%.1f ms", (double)ns / 1e6);
    else snprintf(buf, cap, "%.2f s", (double)ns / 1e9);
    return buf;
}

char *rp_rank_list(const rp_rank *pr, size_t n, const unsigned char *on) {
    size_t cap = 16 * n + 8, len = 0;
    char *s = malloc(cap);
    if (!s) return NULL;
    s[0] = 0;
    for (size_t k = 0; k < n;) {
        if (!on[k]) {
            k++;
            continue;
        }
        size_t j = k;
        /* a run of consecutive rank numbers is written a-b */
        while (j + 1 < n && on[j + 1] && pr[j + 1].rank == pr[j].rank + 1) j++;
        len += (size_t)snprintf(s + len, cap - len, "%s%d", len ? "," : "", pr[k].rank);
        if (j > k) len += (size_t)snprintf(s + len, cap - len, "%s%d", j == k + 1 ? "," : "-", pr[j].rank);
        k = j + 1;
    }
    return s;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int64_t median_i64(int64_t *v, size_t n) {
    if (!n) return 0;
    qsort(v, n, sizeof *v, cmp_i64);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Median over the rank's steps of a per-step figure. */
static int64_t step_median(const rp_rank *p, const int64_t *x) {
    int64_t *v = malloc(p->nsteps * sizeof *v);
    if (!v) return 0;
    memcpy(v, x, p->nsteps * sizeof *v);
    int64_t m = median_i64(v, p->nsteps);
    free(v);
    return m;
}

static int64_t step_median_sz(const rp_rank *p, const size_t *x) {
    int64_t *v = malloc(p->nsteps * sizeof *v);
    if (!v) return 0;
    for (size_t s = 0; s < p->nsteps; s++) v[s] = (int64_t)x[s];
    int64_t m = median_i64(v, p->nsteps);
    free(v);
    return m;
}

/* Per-rank figures the causes are judged on, medians over each rank's steps. */
typedef struct fig {
    int64_t step, dl, sync, mem, comm, comp, busy, late, nsync, nlaunch;
    size_t dl_steps; /* steps with data loading over 5% of the step */
    double exposed;  /* communication time not overlapped with compute, share of comm (ranks table) */
} fig;

typedef struct finding {
    int cause;
    unsigned char *on;
    int64_t saving_ns;
    char *evidence;
    char rule[160];
} finding;

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...) {
    va_list ap;
    va_start(ap, f);
    char *s = NULL;
    if (vasprintf(&s, f, ap) < 0) s = NULL;
    va_end(ap);
    return s;
}

/* Median over the ranks that are on of figure x. */
static int64_t over(const fig *fg, size_t n, const unsigned char *on, size_t off) {
    int64_t *v = malloc((n ? n : 1) * sizeof *v);
    size_t m = 0;
    if (!v) return 0;
    for (size_t k = 0; k < n; k++)
        if (on[k]) v[m++] = *(const int64_t *)((const char *)&fg[k] + off);
    int64_t r = median_i64(v, m);
    free(v);
    return r;
}
#define OVER(f) over(fg, n, on, offsetof(fig, f))

static int by_saving(const void *a, const void *b) {
    const finding *x = a, *y = b;
    if (x->saving_ns != y->saving_ns) return x->saving_ns < y->saving_ns ? 1 : -1;
    return x->cause - y->cause;
}

hta_status rp_diagnose(const hta_report_src *src, const rp_rank *pr, size_t n, const hta_table *rk, const hta_table *top,
                       hta_table **out, hta_error *err) {
    *out = NULL;
    hta_status st = HTA_OK;
    fig *fg = calloc(n ? n : 1, sizeof *fg);
    finding fd[NCAUSE];
    memset(fd, 0, sizeof fd);
    for (int c = 0; c < NCAUSE; c++) {
        fd[c].cause = c;
        if (!(fd[c].on = calloc(n ? n : 1, 1))) st = hta_oom(err);
    }
    hta_table *tb = hta_table_from_def(&HTA_FINDINGS_TABLE);
    if (!fg || !tb) st = hta_oom(err);
    if (st) goto done;
    int64_t job = rp_job_step(pr, n);
    /* ---- figures per rank, and which ranks show each cause ---- */
    for (size_t k = 0; k < n; k++) {
        const rp_rank *p = &pr[k];
        fig *f = &fg[k];
        int64_t *d = malloc(p->nsteps * sizeof *d);
        if (!d) {
            st = hta_oom(err);
            goto done;
        }
        for (size_t s = 0; s < p->nsteps; s++) {
            d[s] = p->step_end[s] - p->step_ts[s];
            if ((double)p->dl_ns[s] * 20 > (double)d[s]) f->dl_steps++;
        }
        f->step = median_i64(d, p->nsteps);
        free(d);
        f->dl = step_median(p, p->dl_ns), f->sync = step_median(p, p->sync_ns), f->mem = step_median(p, p->mem_ns);
        f->comm = step_median(p, p->comm_ns), f->comp = step_median(p, p->comp_ns);
        f->busy = step_median(p, p->gpu_busy_ns), f->late = step_median(p, p->late_ns);
        f->nsync = step_median_sz(p, p->nsync), f->nlaunch = step_median_sz(p, p->nlaunch);
        f->exposed = 1;
        for (size_t r = 0; rk && r < rk->nrows; r++)
            if (hta_table_get_float(rk, r, HTA_REPORT_RANKS_RANK) == p->rank) {
                double ov = hta_table_get_float(rk, r, HTA_REPORT_RANKS_OVERLAP);
                if (!isnan(ov)) f->exposed = 1 - ov / 100;
            }
        if (!p->has_gpu || f->step <= 0) continue;
        double step = (double)f->step; /* thresholds in double: times near 2^62 ns stay in range */
        /* data loading: over 5% of the step in some step */
        if (f->dl_steps) fd[C_DATA].on[k] = 1;
        /* CPU overhead: many short gaps (over 5% of the rank's steps' time), or a GPU idle outside the data
         * loader with an empty launch queue */
        double steps_ns = 0;
        for (size_t s = 0; s < p->nsteps; s++) steps_ns += (double)(p->step_end[s] - p->step_ts[s]);
        double idle_nodl = step - (double)f->busy - (double)f->dl;
        if ((double)p->gaps_short_ns > 0.05 * steps_ns ||
            (idle_nodl > 0.1 * step && p->queue_median >= 0 && p->queue_median <= 2))
            fd[C_CPU].on[k] = 1;
        if ((double)f->sync > 0.05 * step) fd[C_SYNC].on[k] = 1;
        if ((double)f->comm * f->exposed > 0.05 * step) fd[C_COMM].on[k] = 1;
        if ((double)f->busy >= 0.8 * step) fd[C_GPU].on[k] = 1;
        if ((double)f->mem > 0.05 * step) fd[C_MEM].on[k] = 1;
    }
    /* straggler: a rank the others wait for, over 2% of the step and three times the median rank's */
    {
        int64_t *v = malloc((n ? n : 1) * sizeof *v);
        size_t m = 0;
        if (!v) {
            st = hta_oom(err);
            goto done;
        }
        for (size_t k = 0; k < n; k++)
            if (pr[k].ncoll) v[m++] = fg[k].late;
        int64_t med = median_i64(v, m);
        free(v);
        for (size_t k = 0; m >= 2 && k < n; k++)
            if (pr[k].ncoll && (double)fg[k].late > 0.02 * (double)job && (double)fg[k].late > 3.0 * (double)med)
                fd[C_STRAG].on[k] = 1;
    }
    /* ---- savings: one scenario per cause; cpu_overhead's is counted beyond data loading's ---- */
    rp_scenario sc[NCAUSE + 1];
    memset(sc, 0, sizeof sc);
    sc[C_DATA] = (rp_scenario){rule_data, 1, fd[C_DATA].on, 0, 0};
    /* data loading removed where there is some, the host 5x faster where it is too slow */
    unsigned char *both = calloc(n ? n : 1, 1);
    if (!both) {
        st = hta_oom(err);
        goto done;
    }
    for (size_t k = 0; k < n; k++) both[k] = fd[C_DATA].on[k] || fd[C_CPU].on[k];
    sc[C_CPU] = (rp_scenario){rule_cpu, 2, both, 0, 0};
    sc[C_SYNC] = (rp_scenario){rule_sync, 1, fd[C_SYNC].on, 0, 0};
    sc[C_COMM] = (rp_scenario){rule_comm, 1, fd[C_COMM].on, 0, 0};
    /* the straggler as fast as the median other rank (rank:R=median) on the rank the others wait for most */
    char strag_rule[48] = "";
    const char *strag_rules[1] = {strag_rule};
    {
        int64_t most = -1;
        for (size_t k = 0; k < n; k++)
            if (fd[C_STRAG].on[k] && fg[k].late > most)
                most = fg[k].late, snprintf(strag_rule, sizeof strag_rule, "rank:%d=median", (int)pr[k].rank);
    }
    sc[C_STRAG] = (rp_scenario){strag_rules, strag_rule[0] ? 1 : 0, NULL, 0, 0};
    sc[C_GPU] = (rp_scenario){rule_gpu, 1, fd[C_GPU].on, 0, 0};
    sc[C_MEM] = (rp_scenario){rule_mem, 1, fd[C_MEM].on, 0, 0};
    /* scenario NCAUSE: data loading alone on the ranks of cpu_overhead's scenario, its baseline */
    sc[NCAUSE] = (rp_scenario){rule_data, 1, fd[C_DATA].on, 0, 0};
    int any[NCAUSE];
    for (int c = 0; c < NCAUSE; c++) {
        any[c] = 0;
        for (size_t k = 0; k < n; k++) any[c] |= fd[c].on[k];
    }
    if (any[C_CPU] && !any[C_DATA]) sc[C_CPU].nrules = 1, sc[C_CPU].rules = rule_cpu + 1;
    /* only the scenarios of causes some rank shows are simulated */
    rp_scenario run[NCAUSE + 1];
    int idx[NCAUSE + 1];
    size_t nrun = 0;
    for (int c = 0; c <= NCAUSE; c++) {
        int need = c == NCAUSE ? any[C_CPU] && any[C_DATA] : any[c];
        if (need) idx[nrun] = c, run[nrun++] = sc[c];
    }
    if (nrun && (st = rp_savings(src, pr, n, run, nrun, err))) {
        free(both);
        goto done;
    }
    for (size_t i = 0; i < nrun; i++) sc[idx[i]] = run[i];
    free(both);
    for (int c = 0; c < NCAUSE; c++) {
        if (!any[c]) continue;
        fd[c].saving_ns = sc[c].baseline_ns - sc[c].simulated_ns;
        if (c == C_CPU && any[C_DATA]) fd[c].saving_ns = sc[NCAUSE].simulated_ns - sc[c].simulated_ns;
        if (fd[c].saving_ns < 0) fd[c].saving_ns = 0;
    }
    /* exposed communication: type:comm=x0 takes the collectives' transfers, not their waits for late ranks
     * (the straggler's share), which the engine keeps apart */
    /* ---- evidence ---- */
    char b1[32], b2[32], b3[32], b4[32];
    for (int c = 0; c < NCAUSE; c++) {
        if (!any[c]) continue;
        const unsigned char *on = fd[c].on;
        size_t non = 0, steps = 0, dls = 0;
        for (size_t k = 0; k < n; k++)
            if (on[k]) non++, steps += pr[k].nsteps, dls += fg[k].dl_steps;
        int64_t step = OVER(step);
        double sp = step > 0 ? 100.0 / (double)step : 0;
        size_t gl = 0, gs = 0;
        int64_t gln = 0, gsn = 0, gmed = 0, qmed = 0;
        for (size_t k = 0; k < n; k++)
            if (on[k]) gl += pr[k].gaps_long, gs += pr[k].gaps_short, gln += pr[k].gaps_long_ns,
                       gsn += pr[k].gaps_short_ns, gmed = pr[k].gap_median_ns > gmed ? pr[k].gap_median_ns : gmed,
                       qmed = (int64_t)pr[k].queue_median > qmed ? (int64_t)pr[k].queue_median : qmed;
        char *gaps = fmt("the GPU idles in %zu gaps of 1 ms or more (%s in all) and %zu shorter ones (%s)", gl, rp_dur(gln, b3, sizeof b3), gs, rp_dur(gsn, b4, sizeof b4));
        switch (c) {
        case C_DATA:
            fd[c].evidence = fmt("enumerate(DataLoader) takes a median %s per step (%.0f%% of the %s step) on %zu "
                                 "rank%s, over 5%% of the step in %zu of %zu steps; %s",
                                 rp_dur(OVER(dl), b1, sizeof b1), (double)OVER(dl) * sp, rp_dur(step, b2, sizeof b2),
                                 non, non == 1 ? "" : "s", dls, steps, gaps ? gaps : "");
            break;
        case C_CPU:
            fd[c].evidence = fmt("%s; median gap %s; the launch queue holds a median of %lld kernel%s; %lld launches "
                                 "per step; GPU busy %.0f%% of the %s step",
                                 gaps ? gaps : "", rp_dur(gmed, b1, sizeof b1), (long long)qmed, qmed == 1 ? "" : "s",
                                 (long long)OVER(nlaunch), (double)OVER(busy) * sp, rp_dur(step, b2, sizeof b2));
            break;
        case C_SYNC:
            fd[c].evidence = fmt("%lld sync calls per step block the CPU %s per step (%.0f%% of the %s step); %s",
                                 (long long)OVER(nsync), rp_dur(OVER(sync), b1, sizeof b1), (double)OVER(sync) * sp,
                                 rp_dur(step, b2, sizeof b2), gaps ? gaps : "");
            break;
        case C_COMM: {
            int64_t own = 0, xfer = 0;
            double ex = 0;
            for (size_t k = 0; k < n; k++)
                if (on[k]) own += pr[k].coll_own_ns, xfer += pr[k].coll_xfer_ns, ex += fg[k].exposed / (double)non;
            fd[c].evidence = fmt("communication kernels take %s per step (%.0f%% of the %s step), %.0f%% of it not "
                                 "overlapped with compute",
                                 rp_dur(OVER(comm), b1, sizeof b1), (double)OVER(comm) * sp,
                                 rp_dur(step, b2, sizeof b2), 100 * ex);
            if (own > 0 && fd[c].evidence) {
                char *e2 = fmt("%s; transfer is %.0f%% of their time, the rest waiting for other ranks (the saving "
                               "counts the transfer only)",
                               fd[c].evidence, 100.0 * (double)xfer / (double)own);
                free(fd[c].evidence);
                fd[c].evidence = e2;
            }
            break;
        }
        case C_STRAG: {
            int64_t *v = malloc(n * sizeof *v);
            size_t m = 0;
            for (size_t k = 0; v && k < n; k++)
                if (pr[k].ncoll && !on[k]) v[m++] = fg[k].late;
            int64_t med = v ? median_i64(v, m) : 0;
            free(v);
            int64_t late = 0;
            for (size_t k = 0; k < n; k++)
                if (on[k] && fg[k].late > late) late = fg[k].late;
            fd[c].evidence = fmt("the other ranks wait a median %s per step in collectives for %s (for the other "
                                 "ranks: %s); the saving is the job's step if the slowest were as fast as the "
                                 "median other rank, operation by operation and step by step (what-if %s, "
                                 "simulated on every rank)",
                                 rp_dur(late, b1, sizeof b1), non == 1 ? "this rank" : "these ranks",
                                 rp_dur(med, b2, sizeof b2), strag_rule);
            break;
        }
        case C_GPU: {
            const char *tk = NULL; /* the computation kernel with the most time */
            for (size_t r = 0; top && !tk && r < top->nrows; r++) {
                const char *ty = hta_table_get_str(top, r, HTA_TOP_KERNELS_TYPE);
                if (ty && !strcmp(ty, "COMPUTATION")) tk = hta_table_get_str(top, r, HTA_TOP_KERNELS_NAME);
            }
            char nb[RP_NAME_MAX + 1];
            fd[c].evidence = fmt("the GPU is busy %.0f%% of the %s step, computation kernels %s per step%s%s%s",
                                 (double)OVER(busy) * sp, rp_dur(step, b1, sizeof b1), rp_dur(OVER(comp), b2, sizeof b2),
                                 tk ? "; the computation kernel with the most time: " : "", tk ? rp_name(tk, nb) : "",
                                 tk ? "" : "");
            break;
        }
        case C_MEM:
            fd[c].evidence = fmt("copies and memsets take %s per step on the GPU (%.0f%% of the %s step)",
                                 rp_dur(OVER(mem), b1, sizeof b1), (double)OVER(mem) * sp, rp_dur(step, b2, sizeof b2));
            break;
        }
        free(gaps);
        if (!fd[c].evidence) {
            st = hta_oom(err);
            goto done;
        }
        const char *const *rl = c == C_DATA ? rule_data : c == C_CPU ? rule_cpu + !any[C_DATA] : c == C_SYNC ? rule_sync
                              : c == C_COMM ? rule_comm : c == C_GPU ? rule_gpu : c == C_MEM ? rule_mem : NULL;
        if (c == C_CPU && any[C_DATA]) snprintf(fd[c].rule, sizeof fd[c].rule, "cpu=x0.2 (beyond data loading)");
        else if (rl) snprintf(fd[c].rule, sizeof fd[c].rule, "%s", rl[0]);
        else snprintf(fd[c].rule, sizeof fd[c].rule, "the wait for the rank in collectives");
    }
    /* ---- the table, ranked by saving ---- */
    qsort(fd, NCAUSE, sizeof *fd, by_saving);
    hta_table_col_wrap(tb, HTA_FINDINGS_RANKS);
    hta_table_col_wrap(tb, HTA_FINDINGS_EVIDENCE);
    hta_table_col_wrap(tb, HTA_FINDINGS_TODO);
    for (int i = 0; i < NCAUSE; i++) {
        const finding *f = &fd[i];
        if (!f->evidence) continue;
        char *ranks = rp_rank_list(pr, n, f->on);
        char *td = fmt("%s; estimated with what-if %s", todo[f->cause], f->rule);
        long row = hta_table_add_row(tb);
        if (!ranks || !td || row < 0 || hta_table_set_str(tb, row, HTA_FINDINGS_CAUSE, cause_name[f->cause]) ||
            hta_table_set_str(tb, row, HTA_FINDINGS_RANKS, ranks) ||
            hta_table_set_str(tb, row, HTA_FINDINGS_EVIDENCE, f->evidence) ||
            hta_table_set_str(tb, row, HTA_FINDINGS_TODO, td)) {
            free(ranks);
            free(td);
            st = hta_oom(err);
            goto done;
        }
        free(ranks);
        free(td);
        hta_table_set_float(tb, row, HTA_FINDINGS_SAVING_PCT,
                            job > 0 ? hta_round(100.0 * (double)f->saving_ns / (double)job, 1) : NAN);
        hta_table_set_float(tb, row, HTA_FINDINGS_SAVING_US, hta_round((double)f->saving_ns / 1e3, 1));
    }
done:
    for (int c = 0; c < NCAUSE; c++) free(fd[c].on), free(fd[c].evidence);
    free(fg);
    if (st) hta_table_free(tb);
    else *out = tb;
    return st;
}
