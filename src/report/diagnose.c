/* The diagnosis: which causes lose the job time, with the figures that show each, what to do, and what
 * removing it would save, ranked by that saving.  One finding per cause for the whole job, naming its
 * ranks.  The savings come from rp_savings (savings.c), one what-if scenario per cause, with the rules
 * rp_cause_rules chooses; a cause whose simulated saving is nothing is an observation instead.
 *
 * The causes are read from the GPU's own timeline over the window (profile.c): its idle time told apart
 * by what the host did meanwhile (blocked in a runtime call, in data loading, anything else) and whether
 * work was queued (the GPU then waits on itself, not on the host), its busy time by what runs.  A
 * graph-capture trace is said to be one, and nothing is read from its timings.
 * Thresholds and rules: docs/report.md, "Causes and savings". */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hta/util.h"
#include "hta/vocab.h"
#include "report/internal.h"

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

/* Per-rank figures the causes are judged on, medians over each rank's steps (its window). */
typedef struct fig {
    int64_t step, dl, mem, comm, comp, busy, late, nlaunch, nsync;
    int64_t i_block, i_wait, i_dl, i_host, i_bwait, comm_excl, comp_busy, mem_excl;
    int64_t comm_xfer; /* comm_excl counted as transfer only (the share of collective time not waiting) */
    size_t dl_steps;   /* steps with data-loading idle over 5% of the step */
} fig;

typedef struct finding {
    int cause;
    unsigned char *on;
    int64_t explained_ns; /* the time per step the cause explains in the trace (ranks what the engine cannot) */
    int64_t saving_ns;    /* simulated; valid only with known */
    int known;            /* the engine measured the report's window */
    int64_t sim_ns;       /* the simulation's saving where physics bounds it lower (saving_ns is the bound), or -1 */
    int64_t ev_ns;        /* the time per step the evidence names (the saving's bound: no saving beyond it), or -1 */
    char *evidence;
    char rule[RP_MAX_RULES * RP_RULE_MAX];
    const char *how;
    const char *todo;
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

/* The ranking key: the simulated saving, or where the engine could not measure the window, the time the
 * cause explains. */
static int64_t key_of(const finding *f) { return f->known ? f->saving_ns : f->explained_ns; }

static int by_saving(const void *a, const void *b) {
    const finding *x = a, *y = b;
    /* gpu_compute's saving is a speed-up nobody can promise, not a cause taken away: after those that are */
    int sx = x->cause == RP_C_GPU, sy = y->cause == RP_C_GPU;
    if (sx != sy) return sx - sy;
    int64_t kx = key_of(x), ky = key_of(y);
    if (kx != ky) return kx < ky ? 1 : -1;
    return x->cause - y->cause;
}

/* What the window of the ranks is, in words: "step", "trace span" (one step or none), "GPU-timeline step". */
static const char *window_word(const rp_rank *pr, size_t n, const unsigned char *on) {
    int w = -1;
    for (size_t k = 0; k < n; k++)
        if (!on || on[k]) w = w < 0 ? pr[k].window : w == pr[k].window ? w : RP_WIN_STEPS;
    return w == RP_WIN_SPAN ? "trace span" : w == RP_WIN_GPU ? "GPU-timeline step" : "step";
}

/* ---- the causes' texts ---- */

static const char *const todo[RP_NCAUSE] = {
    [RP_C_CAPTURE] = "a graph-capture trace records the capture (launch calls recorded into a graph, few kernels "
                     "run): its timings say nothing about the run; profile graph replay (the steps after capture) "
                     "instead",
    [RP_C_DATA] = "the GPU waits for the next batch: more DataLoader workers (num_workers), pin_memory=True, "
                  "prefetch_factor, persistent_workers; decode and augment ahead of time or on the GPU; see "
                  "`hta cpu-ops`",
    [RP_C_CPU] = "the CPU does not launch work fast enough (the launch queue is empty): fewer, larger kernels "
                 "(torch.compile, fused or foreach optimizers, CUDA graphs), less Python per step; see `hta "
                 "launch`, `hta idle`",
    [RP_C_COMM] = "collectives run without compute beside them: overlap them (DDP bucket_cap_mb, FSDP prefetch, "
                  "async collectives), fewer or larger messages; see `hta overlap`",
    [RP_C_STRAG] = "the other ranks wait for this one in every collective: look at its data loading, CPU load, GPU "
                   "clocks and thermals, and its input sizes; see `hta stragglers`",
    [RP_C_GPU] = "the GPU is the bound: the kernels themselves (lower precision, fusion, better kernels or "
                 "libraries, larger batch per kernel); see `hta kernels`",
    [RP_C_MEM] = "copies and memsets take GPU time: pinned memory and non_blocking copies, fewer host-device "
                 "transfers, no memset of buffers written anyway; see `hta counters`",
};

/* What to do about the blocking calls seen, by what they are (host_blocking's advice fits the call):
 * cls as block_evidence fills it, [5] set where GPU work waited behind a stream wait. */
static void block_todo(const unsigned *cls, char *out, size_t cap) {
    /* by class, in the order of block_evidence's cls (5: queued behind a stream wait, said last) */
    static const char *const advice[7] = {
        "device memory is freed and allocated in the step (cudaFree/hipFree synchronise the device): keep "
        "PyTorch's caching allocator (no torch.cuda.empty_cache() or PYTORCH_NO_CUDA_MEMORY_CACHING in the loop), "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, fixed shapes; ",
        "allocate pinned host buffers once and reuse them; ",
        "synchronous copies: .to(device, non_blocking=True) from pinned memory, keep results on the GPU, no .item() "
        "or .cpu() in the step; ",
        "syncs: remove .item(), .cpu(), printing tensors and torch.cuda.synchronize() from the step, or move them to "
        "its end; ",
        "a call that took 1 ms or more (code loading on a kernel's first launch: warm up before the profiled steps, "
        "CUDA_MODULE_LOADING=EAGER); ",
        "the GPU work the host waits for was queued behind a stream wait: find the event's producer (another "
        "stream, or the previous batch) and let the host run ahead; ",
        "one-off calls (context creation, lazy initialisation, code loading): warm up before the profiled steps (a "
        "step or two first, CUDA_MODULE_LOADING=EAGER); ",
    };
    static const int order[7] = {0, 1, 2, 3, 4, 6, 5};
    size_t len = 0;
    out[0] = 0;
    for (int i = 0; i < 7; i++)
        if (cls[order[i]]) rp_append(out, cap, &len, "%s", advice[order[i]]);
    rp_append(out, cap, &len, "see `hta events`");
}

/* The blocking calls that matter (rp_block_calls) with their count, time, GPU idle during them and the
 * operator behind, into out (up to cap bytes), their time in all returned; the classes of the calls into cls (allocator, pinned, copy,
 * sync, other: a call that took RP_LONG_GAP_NS or more, code loading; [5] is the caller's; one-off). */
static int64_t block_evidence(const rp_rank *pr, size_t n, const unsigned char *on, char *out, size_t cap,
                              unsigned *cls) {
    rp_block v[16];
    size_t nv = rp_block_calls(pr, n, on, v, sizeof v / sizeof *v), len = 0;
    int64_t dur = 0; /* the calls' time, all of them (returned) */
    out[0] = 0;
    for (size_t i = 0; i < nv; i++) dur += v[i].dur_ns;
    for (size_t i = 0; i < nv; i++) {
        char b1[32], b2[32];
        if (!rp_append(out, cap, &len, "%s%s x%lld %s (GPU idle %s during them%s%s)", len ? ", " : "", v[i].name,
                       (long long)v[i].count, rp_dur(v[i].dur_ns, b1, sizeof b1), rp_dur(v[i].idle_ns, b2, sizeof b2),
                       v[i].op ? ", under " : "", v[i].op ? v[i].op : ""))
            break;
        unsigned api = hta_api_of(v[i].name);
        size_t non = 0;
        for (size_t k = 0; k < n; k++) non += on[k] != 0;
        /* an allocator or other call made once or twice per rank that takes long: initialisation
         * (cudaFree(0) creates the context), not a habit of the step (a copy or a sync is the step's) */
        if (!(api & (HTA_API_WAITS | HTA_API_SYNC)) && v[i].count <= 2 * (int64_t)(non ? non : 1) &&
            v[i].dur_ns >= RP_LONG_GAP_NS)
            cls[6] = 1;
        else if (api & HTA_API_DEVICE_ALLOC) cls[0] = 1;
        else if (api & HTA_API_HOST_ALLOC) cls[1] = 1;
        else if (api & HTA_API_WAITS) cls[2] = 1;
        else if (api & HTA_API_SYNC) cls[3] = 1;
        else cls[4] = 1;
    }
    return dur;
}

/* Whether rank p recorded a graph capture rather than a run: capture calls, many kernel launch calls, and
 * under a tenth as many kernels executed, or a quarter of the launches or more recorded into a graph (they ran
 * nothing): torch.compile's CUDA-graph trees and vLLM's piecewise capture run each graph eagerly first (its
 * warm-up), so that kernels run beside the captured launches. */
static int is_capture(const rp_rank *p) {
    return p->ncapture > 0 && p->nklaunch >= 20 &&
           (p->nkernels * 10 < p->nklaunch || p->nklaunch_none * 4 >= p->nklaunch);
}

int rp_too_short(const rp_rank *pr, size_t n, unsigned char *short_k) {
    size_t nshort = 0, ngpu = 0, nbrief = 0;
    int capture = 0;
    for (size_t k = 0; k < n; k++) {
        if (!pr[k].has_gpu) continue;
        ngpu++;
        capture |= is_capture(&pr[k]);
        int64_t w = 0;
        for (size_t s = 0; s < pr[k].nsteps; s++) w += pr[k].step_end[s] - pr[k].step_ts[s];
        int sh = w < RP_SHORT_NS || pr[k].nkernels < RP_SHORT_KERNELS;
        if (short_k) short_k[k] = (unsigned char)sh;
        nshort += (size_t)sh;
        nbrief += w < RP_SHORT_NS;
    }
    return capture || !ngpu || nshort < ngpu ? 0 : nbrief == ngpu ? 2 : 1;
}

/* Where host cause f shows on at most half the ranks of a job with collectives and the other ranks wait for
 * those in collectives over 2% of the step (the median over f's ranks of the time the others wait for each:
 * collective lateness), that wait, else 0. */
static int64_t host_straggler(const finding *f, const rp_rank *pr, const fig *fg, size_t n, int64_t job) {
    if (f->cause != RP_C_CPU && f->cause != RP_C_DATA && f->cause != RP_C_BLOCK) return 0;
    size_t non = 0, coll = 0;
    for (size_t k = 0; k < n; k++) non += f->on[k] != 0, coll += pr[k].ncoll > 0;
    if (coll < 2 || !non || 2 * non > n) return 0;
    const unsigned char *on = f->on;
    int64_t late = OVER(late);
    return (double)late > 0.02 * (double)job ? late : 0;
}

/* The parts of the GPU's idle time (the idle split, profile.c) the findings explain: each cause its part, each
 * part once (the GPU waiting on its own queued work is gpu_compute's, exposed communication's and the
 * straggler's alike). */
typedef struct explained {
    int part[4]; /* block, wait, dl, host */
} explained;

static void idle_explained(const finding *f, int data_finding, explained *x) {
    x->part[f->cause == RP_C_BLOCK ? 0 : f->cause == RP_C_DATA ? 2 : f->cause == RP_C_CPU ? 3 : 1] = 1;
    /* launch-bound: the work queued meanwhile waits out each launch's latency (the queue is all but empty);
     * without a data-loading finding its rule (cpu=x0.2) speeds data loading too, which is then its part */
    if (f->cause == RP_C_CPU) x->part[1] = 1, x->part[2] |= !data_finding;
}

/* Where the GPU idles over 20% of the window and the findings explain under 80% of that idle time, the rest
 * is a finding of its own: how long, what the host did meanwhile, the longest gaps (no saving: nothing says
 * what would take it away).  The shares are the idle split's over every GPU rank's window, as the ranks'
 * idle observations print them. */
static hta_status unexplained_idle(const rp_rank *pr, size_t n, int64_t job, const explained *x, hta_table *tb,
                                   hta_error *err) {
    unsigned char *on = calloc(n ? n : 1, 1);
    if (!on) return hta_oom(err);
    int64_t gaps = 0, gmax = 0;
    double w = 0, idle = 0, part[4] = {0};
    for (size_t k = 0; k < n; k++) {
        rp_split sl;
        if (!pr[k].has_gpu) continue;
        rp_split_of(&pr[k], &sl);
        if (sl.window <= 0) continue;
        on[k] = 1;
        gaps += (int64_t)pr[k].gaps_long;
        if (pr[k].gap_max_ns > gmax) gmax = pr[k].gap_max_ns;
        w += (double)sl.window, idle += (double)(sl.window - sl.busy);
        part[0] += (double)sl.block, part[1] += (double)sl.wait, part[2] += (double)sl.dl, part[3] += (double)sl.host;
    }
    double expl = 0;
    for (int i = 0; i < 4; i++) expl += x->part[i] ? part[i] : 0;
    hta_status st = HTA_OK;
    if (w <= 0 || job <= 0 || idle <= 0.2 * w || expl >= 0.8 * idle) goto done;
    /* as time per window of the report (the headline's step) */
    double f = (double)job / w;
    char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32], b7[32], b8[32], b9[32];
    char *ranks = rp_rank_list(pr, n, on);
    char *ev = fmt("the GPU idles %s per %s (%.0f%% of %s); the findings explain %s of it, the rest, %s (%.0f%%), "
                   "is no finding's: while the GPU idled the host was blocked in runtime calls %s, GPU "
                   "work was queued but waiting %s (for another stream, a collective, or work the trace does not "
                   "show), data loading ran %s and the host was otherwise busy or untraced %s; %lld idle gaps of 1 "
                   "ms or more, the longest %s",
                   rp_dur((int64_t)(idle * f), b1, sizeof b1), window_word(pr, n, on), 100.0 * idle / w,
                   rp_dur(job, b2, sizeof b2), rp_dur((int64_t)(expl * f), b3, sizeof b3),
                   rp_dur((int64_t)((idle - expl) * f), b4, sizeof b4), 100.0 * (idle - expl) / w,
                   rp_dur((int64_t)(part[0] * f), b5, sizeof b5), rp_dur((int64_t)(part[1] * f), b6, sizeof b6),
                   rp_dur((int64_t)(part[2] * f), b7, sizeof b7), rp_dur((int64_t)(part[3] * f), b8, sizeof b8),
                   (long long)gaps, rp_dur(gmax, b9, sizeof b9));
    long row = ranks && ev ? hta_table_add_row(tb) : -1;
    if (row < 0 || hta_table_set_str(tb, row, HTA_FINDINGS_CAUSE, "unexplained_idle") ||
        hta_table_set_str(tb, row, HTA_FINDINGS_RANKS, ranks) || hta_table_set_str(tb, row, HTA_FINDINGS_EVIDENCE, ev) ||
        hta_table_set_str(tb, row, HTA_FINDINGS_TODO,
                          "look at the longest idle gaps in a trace viewer (`hta idle`, `hta counters --augment`): "
                          "a sampled or partial trace hides what held the GPU; record the full event set (CUDA "
                          "sync activities, all CPU operators) to see it")) {
        st = hta_oom(err);
    } else {
        hta_table_set_float(tb, row, HTA_FINDINGS_SAVING_PCT, NAN);
        hta_table_set_float(tb, row, HTA_FINDINGS_SAVING_US, NAN);
    }
    free(ranks);
    free(ev);
done:
    free(on);
    return st;
}

hta_status rp_diagnose(const hta_report_src *src, const rp_rank *pr, size_t n, const hta_table *rk, const hta_table *top,
                       findings *obs, hta_result *res, hta_table **out, hta_error *err) {
    *out = NULL;
    hta_status st = HTA_OK;
    unsigned char *short_k = NULL;
    fig *fg = calloc(n ? n : 1, sizeof *fg);
    unsigned char *both = calloc(n ? n : 1, 1);
    finding fd[RP_NCAUSE];
    memset(fd, 0, sizeof fd);
    for (int c = 0; c < RP_NCAUSE; c++) {
        fd[c].cause = c, fd[c].ev_ns = -1;
        if (!(fd[c].on = calloc(n ? n : 1, 1))) st = hta_oom(err);
    }
    hta_table *tb = hta_table_from_def(&HTA_FINDINGS_TABLE);
    if (!fg || !both || !tb) st = hta_oom(err);
    if (st) goto done;
    int64_t job = rp_job_step(pr, n);
    (void)rk;
    /* ---- figures per rank, and which ranks show each cause ---- */
    int capture = 0;
    for (size_t k = 0; k < n; k++) capture |= pr[k].has_gpu && is_capture(&pr[k]);
    /* too short to judge (a test fixture, a trace cut at its start): no timing finding is drawn from it, nor
     * from a rank that is (the report says so, rp_too_short) */
    short_k = calloc(n ? n : 1, 1);
    if (!short_k) {
        st = hta_oom(err);
        goto done;
    }
    int too_short = rp_too_short(pr, n, short_k);
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
            if ((double)p->idle_dl_ns[s] * 20 > (double)d[s]) f->dl_steps++;
        }
        f->step = median_i64(d, p->nsteps);
        free(d);
        f->dl = step_median(p, p->dl_ns), f->mem = step_median(p, p->mem_ns);
        f->comm = step_median(p, p->comm_ns), f->comp = step_median(p, p->comp_ns);
        f->busy = step_median(p, p->gpu_busy_ns), f->late = step_median(p, p->late_ns);
        f->nsync = step_median_sz(p, p->nsync), f->nlaunch = step_median_sz(p, p->nlaunch);
        f->i_block = step_median(p, p->idle_block_ns), f->i_wait = step_median(p, p->idle_wait_ns);
        f->i_dl = step_median(p, p->idle_dl_ns), f->i_host = step_median(p, p->idle_host_ns);
        f->i_bwait = step_median(p, p->idle_bwait_ns), f->comm_excl = step_median(p, p->comm_excl_ns);
        f->comp_busy = step_median(p, p->comp_busy_ns), f->mem_excl = step_median(p, p->mem_excl_ns);
        /* a collective's time beyond its transfer is waiting for late ranks: the straggler's, not the link's */
        f->comm_xfer = p->coll_own_ns > 0 ? (int64_t)((double)f->comm_excl * (double)p->coll_xfer_ns / (double)p->coll_own_ns)
                                          : f->comm_excl;
        if (!p->has_gpu || f->step <= 0 || too_short || (short_k[k] && !capture)) continue;
        if (capture) {
            fd[RP_C_CAPTURE].on[k] = (unsigned char)is_capture(p);
            continue; /* nothing read from a capture's timings */
        }
        double step = (double)f->step, five = 0.05 * step; /* in double: times near 2^62 ns stay in range */
        if (f->dl_steps && (double)f->i_dl > five) fd[RP_C_DATA].on[k] = 1;
        if ((double)f->i_block > five) fd[RP_C_BLOCK].on[k] = 1;
        /* launch-bound: the GPU idles with nothing queued while the host is not blocked nor loading data; a
         * long launch queue (the CPU far ahead) is never that */
        if ((double)f->i_host > five && p->queue_median >= 0 && p->queue_median <= 2) fd[RP_C_CPU].on[k] = 1;
        if ((double)f->comm_xfer > five) fd[RP_C_COMM].on[k] = 1;
        /* GPU-bound: busy, or waiting on its own queued work, most of the window, with computation running */
        if ((double)(f->busy + f->i_wait) >= 0.8 * step && (double)f->comp_busy > five) fd[RP_C_GPU].on[k] = 1;
        if ((double)f->mem_excl > five) fd[RP_C_MEM].on[k] = 1;
    }
    /* straggler: a rank the others wait for, over 2% of the step and three times the median rank's */
    if (!capture && !too_short) {
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
                fd[RP_C_STRAG].on[k] = 1;
    }
    int any[RP_NCAUSE];
    for (int c = 0; c < RP_NCAUSE; c++) {
        any[c] = 0;
        for (size_t k = 0; k < n; k++) any[c] |= fd[c].on[k];
    }
    /* the straggler: the rank the others wait for most */
    int32_t strag = -1;
    {
        int64_t most = -1;
        for (size_t k = 0; k < n; k++)
            if (fd[RP_C_STRAG].on[k] && fg[k].late > most) most = fg[k].late, strag = pr[k].rank;
    }
    /* ---- savings: one scenario per cause (savings.c's rules); cpu_overhead's counted beyond data loading's
     * where both show (data loading removed in both runs) ---- */
    char rules[RP_NCAUSE + 1][RP_MAX_RULES][RP_RULE_MAX];
    const char *rp[RP_NCAUSE + 1][RP_MAX_RULES + 1];
    rp_scenario run[RP_NCAUSE + 1];
    int idx[RP_NCAUSE + 1];
    size_t nrun = 0;
    for (size_t k = 0; k < n; k++) both[k] = fd[RP_C_DATA].on[k] || fd[RP_C_CPU].on[k];
    for (int c = 0; c <= RP_NCAUSE; c++) {
        int cpu_dl = c == RP_C_CPU && any[RP_C_DATA];
        if (c == RP_NCAUSE ? !(any[RP_C_CPU] && any[RP_C_DATA]) : (!any[c] || c == RP_C_CAPTURE)) continue;
        int rc = c == RP_NCAUSE ? RP_C_DATA : c;
        const unsigned char *on = c == RP_NCAUSE || cpu_dl ? both : fd[c].on;
        const char *how = "";
        size_t m = 0;
        if (cpu_dl) m = rp_cause_rules(RP_C_DATA, pr, n, on, strag, rules[c], RP_MAX_RULES, &how);
        m += rp_cause_rules(rc, pr, n, on, strag, rules[c] + m, RP_MAX_RULES - m, &how);
        if (c < RP_NCAUSE) fd[c].how = how;
        size_t len = 0;
        for (size_t r = 0; r < m; r++) {
            rp[c][r] = rules[c][r];
            if (c < RP_NCAUSE && !(cpu_dl && r == 0))
                rp_append(fd[c].rule, sizeof fd[c].rule, &len, "%s%s", len ? " " : "", rules[c][r]);
        }
        if (cpu_dl) rp_append(fd[c].rule, sizeof fd[c].rule, &len, " (beyond data loading)");
        idx[nrun] = c;
        run[nrun++] = (rp_scenario){rp[c], m, c == RP_C_STRAG ? NULL : on, 0, 0};
    }
    if (nrun && (st = rp_savings(src, pr, n, run, nrun, res, err))) goto done;
    int64_t dl_only = 0, base = nrun ? run[0].baseline_ns : 0;
    for (size_t i = 0; i < nrun; i++)
        if (idx[i] == RP_NCAUSE) dl_only = run[i].simulated_ns;
    /* the engine's window must be the report's: else its answer is about another stretch of time */
    int known = base > 0 && job > 0 && fabs((double)(base - job)) <= 0.1 * (double)job;
    for (size_t i = 0; i < nrun; i++) {
        int c = idx[i];
        if (c == RP_NCAUSE) continue;
        fd[c].known = known;
        fd[c].saving_ns = run[i].baseline_ns - run[i].simulated_ns;
        if (c == RP_C_CPU && any[RP_C_DATA]) fd[c].saving_ns = dl_only - run[i].simulated_ns;
        if (fd[c].saving_ns < 0) fd[c].saving_ns = 0;
        /* no saving beyond physics: taking a host cause away leaves the kernels their durations, so it saves
         * at most the GPU's idle share of the window; a GPU cause at most its kernels' share (the shares over
         * the cause's ranks' windows, as the headline counts them) */
        double win = 0, part = 0;
        for (size_t k = 0; k < n; k++) {
            if (!fd[c].on[k] || c == RP_C_STRAG) continue;
            rp_split sl;
            rp_split_of(&pr[k], &sl);
            int64_t kind = 0;
            for (size_t q = 0; q < pr[k].nsteps; q++)
                kind += c == RP_C_MEM ? pr[k].mem_ns[q] : c == RP_C_COMM ? pr[k].comm_ns[q] : 0;
            win += (double)sl.window;
            part += c == RP_C_GPU ? (double)sl.comp
                  : c == RP_C_MEM || c == RP_C_COMM ? fmin((double)kind, (double)sl.busy)
                                                     : (double)(sl.window - sl.busy);
        }
        int64_t cap = win > 0 ? (int64_t)((double)job * part / win) : -1;
        fd[c].sim_ns = -1;
        if (cap >= 0 && fd[c].saving_ns > cap) fd[c].sim_ns = fd[c].saving_ns, fd[c].saving_ns = cap;
    }
    if (nrun && !known) {
        char b1[32], b2[32];
        hta_result_note(res, "the savings are left out: the what-if engine measured a window of %s, the report's "
                             "is %s (docs/report.md, \"The window\")",
                        rp_dur(base, b1, sizeof b1), rp_dur(job, b2, sizeof b2));
    }
    /* ---- evidence ---- */
    char b1[32], b2[32], b3[32], b4[32];
    for (int c = 0; c < RP_NCAUSE; c++) {
        if (!any[c]) continue;
        const unsigned char *on = fd[c].on;
        size_t non = 0, steps = 0, dls = 0;
        for (size_t k = 0; k < n; k++)
            if (on[k]) non++, steps += pr[k].nsteps, dls += fg[k].dl_steps;
        int64_t step = job; /* the headline's step: one step metric on the page (the figures are the ranks' medians) */
        double sp = step > 0 ? 100.0 / (double)step : 0;
        /* GPU busy of these ranks as the headline counts it: their busy time over their windows */
        double bsum = 0, wsum = 0, blk = 0, wq = 0, dl = 0, host = 0, dlrun = 0;
        for (size_t k = 0; k < n; k++) {
            rp_split sl;
            if (!on[k]) continue;
            rp_split_of(&pr[k], &sl);
            bsum += (double)sl.busy, wsum += (double)sl.window;
            blk += (double)sl.block, wq += (double)sl.wait, dl += (double)sl.dl, host += (double)sl.host;
            for (size_t q = 0; q < pr[k].nsteps; q++) dlrun += (double)pr[k].dl_ns[q];
        }
        /* the GPU's idle time by what the host did, as a time per step of the headline's: each part's share of
         * these ranks' windows (the idle split, as the headline and the ranks' idle observations count it)
         * times the step; the time a host cause's saving is bounded by */
#define PER_STEP(x) (wsum > 0 ? (int64_t)((x) / wsum * (double)step) : 0)
        double busy_pct = wsum > 0 ? 100.0 * bsum / wsum : 0;
        const char *ww = window_word(pr, n, on);
        int64_t qmed = 0;
        for (size_t k = 0; k < n; k++)
            if (on[k] && (int64_t)pr[k].queue_median > qmed) qmed = (int64_t)pr[k].queue_median;
        fd[c].todo = todo[c];
        switch (c) {
        case RP_C_CAPTURE: {
            int64_t ncap = 0, nl = 0, nk = 0;
            for (size_t k = 0; k < n; k++)
                if (on[k]) ncap += pr[k].ncapture, nl += pr[k].nklaunch, nk += pr[k].nkernels;
            int64_t none = 0;
            for (size_t k = 0; k < n; k++)
                if (on[k]) none += pr[k].nklaunch_none;
            fd[c].evidence = fmt("a graph capture, not a run: %lld capture calls (stream begin/end capture, graph "
                                 "instantiate, capture checks, CUDA-graph trees recording), %lld kernel launch "
                                 "calls, %lld of them recorded into a graph (they ran nothing), %lld kernels "
                                 "executed; no timing finding is drawn from it",
                                 (long long)ncap, (long long)nl, (long long)none, (long long)nk);
            fd[c].how = "nothing to simulate";
            break;
        }
        case RP_C_DATA: {
            int64_t idl = PER_STEP(dl);
            fd[c].explained_ns = fd[c].ev_ns = idl;
            /* input preparation: the longest frame that launched nothing while the GPU idled */
            const char *prep = NULL;
            int64_t prep_ns = 0;
            for (size_t k = 0; k < n; k++) /* per step, as the DataLoader's median */
                if (on[k] && pr[k].prep_op && pr[k].nsteps && pr[k].prep_ns / (int64_t)pr[k].nsteps > prep_ns)
                    prep = pr[k].prep_op, prep_ns = pr[k].prep_ns / (int64_t)pr[k].nsteps;
            char pn[RP_NAME_MAX + 1], also[RP_NAME_MAX + 96] = "";
            if (prep)
                snprintf(also, sizeof also, ", and input preparation outside it (%s, %s)", rp_name(prep, pn),
                         rp_dur(prep_ns, b4, sizeof b4));
            if (prep && prep_ns > PER_STEP(dlrun))
                fd[c].evidence = fmt("the GPU idles %s per %s (%.0f%% of %s) while the host prepares input (input "
                                     "preparation: %s, %s launching no GPU work%s%s) on %zu rank%s, over 5%% of the %s "
                                     "in %zu of %zu",
                                     rp_dur(idl, b1, sizeof b1), ww, (double)idl * sp,
                                     rp_dur(step, b2, sizeof b2), rp_name(prep, pn), rp_dur(prep_ns, b3, sizeof b3),
                                     PER_STEP(dlrun) > 0 ? "; enumerate(DataLoader) runs " : "",
                                     PER_STEP(dlrun) > 0 ? rp_dur(PER_STEP(dlrun), b4, sizeof b4) : "", non, non == 1 ? "" : "s",
                                     ww, dls, steps);
            else
                fd[c].evidence = fmt("the GPU idles %s per %s (%.0f%% of %s) while enumerate(DataLoader) runs (%s per "
                                     "%s in all)%s on %zu rank%s, over 5%% of the %s in %zu of %zu",
                                     rp_dur(idl, b1, sizeof b1), ww, (double)idl * sp,
                                     rp_dur(step, b2, sizeof b2), rp_dur(PER_STEP(dlrun), b3, sizeof b3), ww, also, non,
                                     non == 1 ? "" : "s", ww, dls, steps);
            break;
        }
        case RP_C_CPU: {
            /* the idle parts cpu_overhead explains (idle_explained): nothing queued, and the queued work that
             * waits out each launch's latency (the queue is all but empty) */
            int64_t ih = PER_STEP(host), iw = PER_STEP(wq), id = any[RP_C_DATA] ? 0 : PER_STEP(dl);
            fd[c].explained_ns = ih;
            fd[c].ev_ns = ih + iw + id;
            char b5[32], dlt[96] = "";
            if (id > 0) /* no data-loading finding: the faster host (cpu=x0.2) loads data faster too */
                snprintf(dlt, sizeof dlt, ", %s in data loading, which a faster host speeds too",
                         rp_dur(id, b5, sizeof b5));
            fd[c].evidence = fmt("the GPU idles %s per %s (%.0f%% of %s) while the host is %s: %s with nothing "
                                 "queued, %s with work queued waiting out the launches%s; the launch queue holds a "
                                 "median of %lld kernel%s at a launch; %lld launches per %s; GPU busy %.0f%%",
                                 rp_dur(ih + iw + id, b1, sizeof b1), ww, (double)(ih + iw + id) * sp,
                                 rp_dur(step, b2, sizeof b2), id > 0 ? "not blocked" : "neither blocked nor loading data",
                                 rp_dur(ih, b3, sizeof b3), rp_dur(iw, b4, sizeof b4), dlt,
                                 (long long)qmed, qmed == 1 ? "" : "s", (long long)OVER(nlaunch), ww, busy_pct);
            break;
        }
        case RP_C_BLOCK: {
            char calls[640];
            unsigned cls[7] = {0};
            int64_t held = PER_STEP((double)block_evidence(pr, n, on, calls, sizeof calls, cls));
            if ((double)OVER(i_bwait) > 0.05 * (double)step) cls[5] = 1;
            int64_t ib = PER_STEP(blk), iw = PER_STEP(wq);
            fd[c].explained_ns = ib;
            /* what removing the calls can give back: the time they hold the host (the GPU then runs dry after
             * them too, until the host has launched again), or with the queued work let go (edge:launch,
             * cls[5]) the queued wait as well */
            fd[c].ev_ns = held > ib + (cls[5] ? iw : 0) ? held : ib + (cls[5] ? iw : 0);
            char hb[32];
            fd[c].evidence = fmt("the host blocks in runtime calls %s per %s (%.0f%% of %s), the GPU idle %s of it "
                                 "(%.0f%%)%s%s%s%s: %s",
                                 rp_dur(held, hb, sizeof hb), ww, (double)held * sp, rp_dur(step, b2, sizeof b2),
                                 rp_dur(ib, b1, sizeof b1), (double)ib * sp,
                                 cls[5] ? ", GPU work queued meanwhile waiting for " : "",
                                 cls[5] ? rp_dur(OVER(i_bwait), b3, sizeof b3) : "",
                                 cls[5] ? " and behind a stream wait for " : "",
                                 cls[5] ? rp_dur(iw, b4, sizeof b4) : "", calls);
            char *t = malloc(1024);
            if (t) block_todo(cls, t, 1024);
            fd[c].todo = t; /* freed below (the only allocated advice) */
            break;
        }
        case RP_C_COMM: {
            int64_t own = 0, xfer = 0;
            for (size_t k = 0; k < n; k++)
                if (on[k]) own += pr[k].coll_own_ns, xfer += pr[k].coll_xfer_ns;
            fd[c].explained_ns = OVER(comm_xfer);
            fd[c].ev_ns = OVER(comm);
            fd[c].evidence = fmt("communication kernels take %s per %s (%.0f%% of %s), %s of it with no computation "
                                 "beside it (%.0f%%)",
                                 rp_dur(OVER(comm), b1, sizeof b1), ww, (double)OVER(comm) * sp,
                                 rp_dur(step, b2, sizeof b2), rp_dur(OVER(comm_excl), b3, sizeof b3),
                                 (double)OVER(comm_excl) * sp);
            if (own > 0 && fd[c].evidence) {
                char *e2 = fmt("%s; transfer is %.0f%% of their time, the rest waiting for other ranks (the saving "
                               "counts the transfer only)",
                               fd[c].evidence, 100.0 * (double)xfer / (double)own);
                free(fd[c].evidence);
                fd[c].evidence = e2;
            }
            break;
        }
        case RP_C_STRAG: {
            int64_t *v = malloc(n * sizeof *v);
            size_t m = 0;
            for (size_t k = 0; v && k < n; k++)
                if (pr[k].ncoll && !on[k]) v[m++] = fg[k].late;
            int64_t med = v ? median_i64(v, m) : 0;
            free(v);
            int64_t late = 0;
            for (size_t k = 0; k < n; k++)
                if (on[k] && fg[k].late > late) late = fg[k].late;
            fd[c].explained_ns = late;
            fd[c].ev_ns = -1; /* the job's saving: the others' waits, which the evidence names as a median */
            fd[c].evidence = fmt("the other ranks wait a median %s per %s in collectives for %s, the one arriving "
                                 "last (for the other ranks: %s); `hta stragglers` ranks by when collectives start, "
                                 "which can name another rank",
                                 rp_dur(late, b1, sizeof b1), ww, non == 1 ? "this rank" : "these ranks",
                                 rp_dur(med, b2, sizeof b2));
            break;
        }
        case RP_C_GPU: {
            char ks[480];
            size_t len = 0, nk = 0;
            ks[0] = 0;
            double ksum = 0;
            for (size_t r = 0; top && r < top->nrows; r++) ksum += hta_table_get_float(top, r, HTA_TOP_KERNELS_SUM);
            for (size_t r = 0; top && r < top->nrows && nk < 3; r++) {
                const char *ty = hta_table_get_str(top, r, HTA_TOP_KERNELS_TYPE);
                if (!ty || strcmp(ty, "COMPUTATION")) continue;
                char nb[RP_NAME_MAX + 1];
                char *sn = hta_shorten_name(hta_table_get_str(top, r, HTA_TOP_KERNELS_NAME));
                if (!rp_append(ks, sizeof ks, &len, "%s%s (%.0f%% of kernel time)", nk ? ", " : "",
                               rp_name(sn ? sn : hta_table_get_str(top, r, HTA_TOP_KERNELS_NAME), nb),
                               hta_table_get_float(top, r, HTA_TOP_KERNELS_PCTG)))
                    nk = 3;
                free(sn);
                nk++;
            }
            (void)ksum;
            fd[c].explained_ns = OVER(comp_busy) / 2;
            fd[c].ev_ns = OVER(comp_busy);
            fd[c].evidence = fmt("the GPU is busy %.0f%% of %s%s and computation runs %s of it; the launch queue holds "
                                 "a median of %lld kernel%s; the kernels: %s; the saving is what 2x faster "
                                 "computation would give",
                                 busy_pct, rp_dur(step, b1, sizeof b1),
                                 OVER(i_wait) > 0 ? " (or waits on its own queued work)" : "",
                                 rp_dur(OVER(comp_busy), b2, sizeof b2), (long long)qmed, qmed == 1 ? "" : "s", ks);
            break;
        }
        case RP_C_MEM:
            fd[c].explained_ns = OVER(mem_excl);
            fd[c].ev_ns = OVER(mem);
            fd[c].evidence = fmt("copies and memsets take %s per %s on the GPU (%.0f%% of %s), %s with nothing else "
                                 "running",
                                 rp_dur(OVER(mem), b1, sizeof b1), ww, (double)OVER(mem) * sp,
                                 rp_dur(step, b2, sizeof b2), rp_dur(OVER(mem_excl), b3, sizeof b3));
            break;
        }
#undef PER_STEP
        if (!fd[c].evidence || !fd[c].todo) {
            st = hta_oom(err);
            goto done;
        }
    }
    /* no saving beyond what the evidence names: a cause's saving is at most the time it shows (the ranks'
     * medians the evidence prints); the DLRM job's cpu_overhead saved 44.7% beside an idle time of 35% */
    for (int c = 0; c < RP_NCAUSE; c++)
        /* (a cause that holds the other ranks back is the job's straggling: its saving is bounded by its ranks'
         * GPU idle time, which its evidence names, below) */
        if (fd[c].evidence && fd[c].known && fd[c].ev_ns >= 0 && fd[c].saving_ns > fd[c].ev_ns &&
            !host_straggler(&fd[c], pr, fg, n, job)) {
            if (fd[c].sim_ns < 0) fd[c].sim_ns = fd[c].saving_ns;
            fd[c].saving_ns = fd[c].ev_ns;
        }
    /* ---- the table, ranked by saving; a cause that saves nothing is an observation ---- */
    explained expl = {0};
    qsort(fd, RP_NCAUSE, sizeof *fd, by_saving);
    hta_table_col_wrap(tb, HTA_FINDINGS_RANKS);
    hta_table_col_wrap(tb, HTA_FINDINGS_EVIDENCE);
    hta_table_col_wrap(tb, HTA_FINDINGS_TODO);
    for (int i = 0; i < RP_NCAUSE; i++) {
        finding *f = &fd[i];
        if (!f->evidence) continue;
        int capt = f->cause == RP_C_CAPTURE;
        char *ranks = rp_rank_list(pr, n, f->on);
        /* a host cause on a few ranks of a job whose others wait for them in collectives holds the job back: it
         * is those ranks' straggling, named with their own cause (the saving is already the job's step with the
         * cause removed on those ranks) */
        int64_t held = host_straggler(f, pr, fg, n, job);
        char *td = capt ? fmt("%s", f->todo)
                   : held ? fmt("%s; %s; saving: what-if %s on ranks %s (%s)", todo[RP_C_STRAG], f->todo, f->rule,
                                ranks ? ranks : "", f->how)
                          : fmt("%s; saving: what-if %s (%s)", f->todo, f->rule, f->how);
        if (!ranks || !td) {
            free(ranks), free(td);
            st = hta_oom(err);
            goto done;
        }
        /* saves nothing: the simulation finds under 1%.  Except where the GPU idles over 10% of the window while
         * the host is held by the cause (data loading, a blocking call): the engine cannot take that cause away
         * (a dependency it keeps, an event it does not nest), and the finding stays with what the simulation
         * found, said in words */
        int blind = f->known && (double)f->saving_ns < 0.01 * (double)job &&
                    (double)f->explained_ns >= 0.1 * (double)job &&
                    (f->cause == RP_C_DATA || f->cause == RP_C_BLOCK); /* GPU idle while the host is held */
        if (!capt && f->known && (double)f->saving_ns < 0.01 * (double)job && !blind) {
            rp_add_finding(obs, -1, rp_cause_names[f->cause], td, "%s (ranks %s); removing it saves nothing in "
                           "the simulation (what-if %s)", f->evidence, ranks, f->rule);
            free(ranks), free(td);
            continue;
        }
        char b5[32];
        int gpu_cause = f->cause == RP_C_GPU || f->cause == RP_C_MEM || f->cause == RP_C_COMM;
        char b6[32];
        if (held && f->evidence) {
            double iw = 0, ww = 0; /* their GPU idle time, per step as the headline's: the saving's bound */
            for (size_t k = 0; k < n; k++) {
                rp_split sl;
                if (!f->on[k]) continue;
                rp_split_of(&pr[k], &sl);
                iw += (double)(sl.window - sl.busy), ww += (double)sl.window;
            }
            char b7[32];
            char *e2 = fmt("ranks %s hold the others back: their GPU idles %s per %s (%.0f%% of %s), the others wait a "
                           "median %s per %s in collectives for them; their own cause is %s: %s",
                           ranks ? ranks : "", rp_dur(ww > 0 ? (int64_t)(iw / ww * (double)job) : 0, b7, sizeof b7),
                           window_word(pr, n, f->on), ww > 0 ? 100.0 * iw / ww : 0.0, rp_dur(job, b4, sizeof b4),
                           rp_dur(held, b6, sizeof b6), window_word(pr, n, f->on), rp_cause_names[f->cause], f->evidence);
            free(f->evidence);
            f->evidence = e2;
        }
        char *ev = !f->evidence ? NULL : blind ? fmt("%s; the simulation of its removal finds almost no saving, far less than the %s per "
                               "step the trace shows: the engine keeps something the cause holds up",
                               f->evidence, rp_dur(f->explained_ns, b4, sizeof b4))
                   : f->known && f->sim_ns >= 0
                       ? fmt("%s; saving bounded by %s (the simulation gave %s)", f->evidence,
                             gpu_cause ? "the kernels' own time" : "the GPU's idle time this cause explains: the kernels "
                                                                   "keep their durations",
                             rp_dur(f->sim_ns, b5, sizeof b5))
                       : fmt("%s", f->evidence);
        long row = ev ? hta_table_add_row(tb) : -1;
        if (row < 0 || hta_table_set_str(tb, row, HTA_FINDINGS_CAUSE, rp_cause_names[held ? RP_C_STRAG : f->cause]) ||
            hta_table_set_str(tb, row, HTA_FINDINGS_RANKS, ranks) ||
            hta_table_set_str(tb, row, HTA_FINDINGS_EVIDENCE, ev) ||
            hta_table_set_str(tb, row, HTA_FINDINGS_TODO, td)) {
            free(ranks), free(td), free(ev);
            st = hta_oom(err);
            goto done;
        }
        free(ranks), free(td), free(ev);
        int has = !capt && f->known && job > 0;
        if (!capt) idle_explained(f, any[RP_C_DATA], &expl);
        hta_table_set_float(tb, row, HTA_FINDINGS_SAVING_PCT, has ? hta_round(100.0 * (double)f->saving_ns / (double)job, 1) : NAN);
        hta_table_set_float(tb, row, HTA_FINDINGS_SAVING_US, has ? hta_round((double)f->saving_ns / 1e3, 1) : NAN);
    }
    if (!capture && !too_short && (st = unexplained_idle(pr, n, job, &expl, tb, err))) goto done;
done:
    for (int c = 0; c < RP_NCAUSE; c++) {
        free(fd[c].on), free(fd[c].evidence);
        if (fd[c].cause == RP_C_BLOCK && fd[c].todo) free((char *)fd[c].todo);
    }
    free(fg);
    free(both);
    free(short_k);
    if (st) hta_table_free(tb);
    else *out = tb;
    return st;
}
