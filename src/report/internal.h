/* Pieces shared by the report's files (not public): the findings table and
 * the CPU part (report_cpu.c), which covers the ranks HTA's GPU analyses say
 * nothing about: CPU-only traces and files written by libhtatrace. */
#ifndef HTA_REPORT_INTERNAL_H
#define HTA_REPORT_INTERNAL_H

#include "hta/breakdown.h"
#include "hta/cpath.h"
#include "hta/cpuops.h"
#include "hta/report.h"

typedef struct rp_rank rp_rank; /* below */

/* ok is sticky, as stdio's error flag: the many rp_add_finding calls need no
 * check each; an out-of-memory is seen once, before the table is used. */
typedef struct findings {
    hta_table *t;
    int ok;
    int quiet; /* a trace too short to judge: nothing read from its timings is added (rp_too_short) */
} findings;

/* A row of the findings table (findings.c, a leaf: every diagnosis appends, the run sorts); rank < 0: all
 * ranks. */
void rp_add_finding(findings *f, int64_t rank, const char *area, const char *detail, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* ---- how findings and the page write names and figures (text.c, a leaf) ---- */
/* A name as a finding quotes it: as it is up to RP_NAME_MAX bytes, else its start, "..." and its end
 * (the full name is in the tables' csv and json), so that a kilobyte of C++ template arguments does not
 * become the finding. buf: at least RP_NAME_MAX + 1 bytes. */
#define RP_NAME_MAX 48
const char *rp_name(const char *s, char *buf);
/* Appends the formatted text to out (cap bytes, *len used) only when all of it fits: a list in a finding
 * ends after its last whole item, never inside a name or a number.  0 when it did not fit. */
int rp_append(char *out, size_t cap, size_t *len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Above this many ranks the findings speak for all ranks at once (median,
 * extremes) and name individual ranks only where they stand out. */
#define RANKS_IN_FULL 8

/* Hardware efficiency (efficiency.c): op_roofline reduced from the parts in all into eff (before the savings,
 * so that the parts are freed before the savings' passes); then from eff (taken, emptied) its top rows (top)
 * and the device table into out, the operators far below their roof as an observation in f and in the
 * gpu_compute row of ft (the findings table, may be NULL). */
hta_status rp_efficiency_reduce(hta_result *all, hta_result *eff, hta_error *err);
hta_status rp_efficiency(hta_result *eff, findings *f, hta_table *ft, int top, hta_result *out, hta_error *err);
/* The collectives table reduced from the ranks' comms parts in all into cr (before the savings, as above);
 * then from cr (taken, emptied) into out (its top rows by time), and its observation (comms.c). */
hta_status rp_comms_reduce(hta_result *all, hta_result *cr, hta_error *err);
hta_status rp_comms(hta_result *cr, findings *f, int top, hta_result *out, hta_error *err);
/* The first n rows of t as a new table of its declaration (findings.c): --top bounds every list. */
hta_table *rp_table_head(const hta_table *t, size_t n);
struct sb;
/* The page's roofline section from res's op_roofline and device tables (html_roofline.c); 0 when res has
 * no operator with a FLOP count to draw (nothing written). */
int rp_roofline_chart(struct sb *b, const hta_result *res);
/* Distinct bar labels of at most maxc characters for the kernels full[0..n) (html_names.c); NULL when out
 * of memory.  rp_labels_free frees them. */
char **rp_kernel_labels(const char *const *full, size_t n, int maxc);
void rp_labels_free(char **lab, size_t n);

typedef struct rp_cpu {
    size_t n;             /* ranks of the run */
    int32_t *rank;        /* rank of each index */
    hta_result res;       /* hta_cpu_ops' tables, every row */
    const hta_table *ranks, *ops, *steps, *step_ops, *args;
    unsigned char *on;    /* per rank index: the CPU part covers it */
    unsigned char *tracer;/* per rank index: written by libhtatrace */
    size_t n_on;
} rp_cpu;

/* Decides which of the n profiled ranks the CPU part covers (no GPU span in the report's ranks table rk,
 * or a libhtatrace file) and, when some are, reduces hta_cpu_ops' parts (hta_report_part gave them) out
 * of parts.  c is filled (n_on 0: nothing to do); free with rp_cpu_free. */
hta_status rp_cpu_run(const rp_rank *pr, size_t n, const hta_table *rk, hta_result *parts, rp_cpu *c,
                      hta_error *err);
/* Whether the CPU part covers a rank: a libhtatrace file, or no GPU span (NaN: no temporal row). */
int rp_covered(int tracer, double span);
/* hta_cpu_ops' options for the report: every row (the findings aggregate over all of them). */
void rp_cpu_opts(hta_cpu_ops_opts *o);
/* hta_kernel_breakdown's options for the report: every kernel with its own statistics (opts.c). */
void rp_kernel_opts(hta_kernel_opts *o);
void rp_cpu_free(rp_cpu *c);
/* Findings about the steps and the operators (or scopes) of the covered
 * ranks: one per rank, or one for all when there are many. */
void rp_cpu_findings(findings *f, const rp_cpu *c);
/* The CPU tables of the covered ranks: cpu_ranks, cpu_op_time (top per rank),
 * cpu_steps, cpu_step_ops (step_top per step), scope_args (when it has rows). */
hta_status rp_cpu_tables(const rp_cpu *c, int top, int step_top, hta_result *out, hta_error *err);
/* The critical-path finding of a covered rank: its length inside the report's window (len ns, over nsteps
 * steps; 0: the whole span), and the calls that make it up, from the path's operator edges. */
void rp_cpu_path_finding(findings *f, const hta_cp_graph *g, const hta_cp_path *p, int64_t len, size_t nsteps,
                         int32_t rank);

/* Findings and the gpu_metrics table from the metrics files beside the traces (DIR/metrics/, written by
 * `hta capture`; report_metrics.c); nothing when there are none. */
hta_status rp_metrics(const rp_rank *pr, size_t n, findings *f, hta_result *out, hta_error *err);
/* ---- what the diagnosis and the HTML page read of each rank (profile.c) ----
 * Times are ns on the view's clock (the graph's too).  Everything lives in the arena given to
 * rp_profile_build. */

/* Bins of the time series drawn per rank (CPU and GPU busy, queue length, memory bandwidth). */
#define RP_BINS 240
typedef struct rp_series {
    float cpu_busy[RP_BINS], gpu_busy[RP_BINS], queue[RP_BINS], membw[RP_BINS];
} rp_series;
/* Idle gaps at least this long are "long" (data loading, syncs, checkpoints); shorter ones come from
 * launches that do not keep up. */
#define RP_LONG_GAP_NS 1000000
/* a trace too short to judge: under 1 ms of GPU window, or fewer than 10 kernels (every rank) */
#define RP_SHORT_NS 1000000
#define RP_SHORT_KERNELS 10

/* Launch delays binned for the page: < 10 us, 10-100 us, 0.1-1 ms, 1-10 ms, 10-100 ms, >= 100 ms. */
#define RP_DELAY_BINS 6
int rp_delay_bin(double us);

/* bound_by classes of the critical path, as hta_cpath_bound_by names them */
#define RP_NBOUND 7
extern const char *const rp_bound_names[RP_NBOUND];

/* How a rank's window (its "steps") was chosen (docs/report.md, "The window"). */
enum { RP_WIN_STEPS, RP_WIN_SPAN, RP_WIN_GPU };
/* The GPU runs behind the CPU when the median lag of a step's GPU work behind its CPU step is over this
 * share of the median CPU step: the steps are then measured on the GPU timeline. */
#define RP_LAG_SHARE 0.25

/* Host calls that held the host while the GPU idled, by name (hta_api_may_block, or any runtime call of
 * RP_LONG_GAP_NS or more): what host_blocking names. */
typedef struct rp_block {
    const char *name; /* the call */
    const char *op;   /* the operator behind its longest call (outermost aten:: op around it), or NULL */
    int64_t count, dur_ns, idle_ns; /* calls, their time, GPU idle time during them (all in the window) */
} rp_block;

struct rp_rank {
    int32_t rank;
    int window;               /* RP_WIN_* */
    int64_t lag_ns;           /* median lag of the steps' GPU work behind their CPU steps (0: none) */
    int64_t cpu_step_ns;      /* median CPU step (ProfilerStep ranges); 0 without two steps */
    /* capture: graph-capture calls (and frames of torch.compile's CUDA-graph trees, the capture's checks),
     * kernel launch calls (not graph launches), kernels executed, launch calls that ran no GPU work (recorded
     * into a graph) */
    int64_t ncapture, nklaunch, nkernels, nklaunch_none;
    size_t nblock;
    rp_block *block;
    int has_gpu;              /* some kernel, memcpy or memset */
    int64_t t0, t1;           /* first and last time of the view's rows */
    /* ProfilerStep#N instances of the rank, by start; none: the whole view is one step */
    size_t nsteps;
    int64_t *step_num, *step_ts, *step_end;
    int64_t step_pid, step_tid; /* thread of the steps */
    /* GPU busy: union of kernels, memcpys and memsets; CPU busy: union of CPU events (not steps) */
    size_t ngpu, ncpu;
    int64_t *gpu_s, *gpu_e, *cpu_s, *cpu_e;
    /* idle gaps between GPU busy intervals inside the steps */
    size_t gaps_long, gaps_short;
    int64_t gaps_long_ns, gaps_short_ns, gap_median_ns, gap_max_ns;
    /* per step: data loading (enumerate(DataLoader) annotations), time blocked in syncs, memcpy time,
     * communication kernel time, computation kernel time (step's own window) */
    int64_t *dl_ns, *sync_ns, *mem_ns, *comm_ns, *comp_ns, *gpu_busy_ns;
    /* per step, the GPU's idle time told apart, first match wins: the host in a blocking call, work
     * queued but waiting on the GPU side (stream waits, earlier work), the host in data loading, the
     * host otherwise (launch and Python overhead); idle_bwait: the first with work queued too.  And the
     * GPU's busy time by what runs: communication with no computation beside it, computation, copies
     * and sets alone. */
    int64_t *idle_block_ns, *idle_wait_ns, *idle_dl_ns, *idle_host_ns, *idle_bwait_ns;
    int64_t *comm_excl_ns, *comp_busy_ns, *mem_excl_ns;
    size_t *nsync, *nlaunch;
    /* series, RP_BINS bins over [t0, t1]: the profile's, and every rank's only with --html (the page's charts
     * alone read them; 3.8 KB a rank, kept for the whole report); NULL: not kept */
    struct rp_series *ser;
    double queue_median;      /* median launch-queue length over the launch samples (-1: none) */
    /* communication kernels in start order: step index (-1: outside the steps) and duration */
    size_t ncoll;
    int32_t *coll_step;
    int64_t *coll_dur;
    /* time others waited for this rank in each step's collectives (rp_lateness fills it) */
    int64_t *late_ns;
    /* over the matched collectives: the rank's own kernel time, and the part of it that is transfer (the
     * shortest kernel of each collective over the ranks: the last to arrive does not wait) */
    int64_t coll_own_ns, coll_xfer_ns;
    /* critical path per step and bound_by class (part.c fills it when it builds the path) */
    int64_t *cp_ns; /* nsteps * RP_NBOUND */
    const char *cp_bound;     /* the path's largest bound_by class (NULL: no path) */
    /* input preparation: host frames or operators of 1 ms or more that launch nothing while the GPU idles (the
     * idle under them counts as data loading's): their time, and the longest one's name (NULL: none) */
    int64_t prep_ns;
    const char *prep_op;
    const char *path;         /* the rank's file */
    int64_t file_events;      /* elements of its traceEvents: with no row of the view, over 0 means no trace */
    int tracer;               /* written by libhtatrace */
    int64_t cpu_steps_ns;     /* CPU busy (the union above) inside [first step's start, last step's end] */
    int64_t delays[RP_DELAY_BINS]; /* launches by launch delay (rp_delay_bin) */
};

/* The blocking calls that matter on the ranks that are on (NULL: all), summed by name: those with GPU idle
 * during them of 1% of the ranks' windows or more (at least the first), most idle first; up to cap into out,
 * the count returned.  One list for the evidence, the advice and the rules of host_blocking. */
size_t rp_block_calls(const rp_rank *pr, size_t n, const unsigned char *on, rp_block *out, size_t cap);

/* Fills p for the context's rank k from its view (the view is left built); path, tracer, cp_* and delays
 * are the caller's. */
hta_status rp_profile_build(hta_ctx *ctx, size_t k, hta_arena *a, rp_rank *p, hta_error *err);
/* Step index of time ts in p (the step whose [start, next start) holds it), -1 when outside. */
long rp_step_of(const rp_rank *p, int64_t ts);
/* Collective lateness: matches the communication kernels of the ranks (the n-th of each rank, step by
 * step) and fills each rank's late_ns: per step, the sum over its collectives of how much longer the
 * rank that arrived last made the others wait (the shortest wait of the others, since the last to
 * arrive waits least).  0 matched: nothing filled (late_ns all 0). */
size_t rp_lateness(rp_rank *pr, size_t n);

/* The job's step time: the median over step numbers of the longest rank's step (all ranks move at the
 * pace of the slowest).  ns; 0 when no rank has a step. */
int64_t rp_job_step(const rp_rank *pr, size_t n);
/* The same over n (step number, duration) pairs of any ranks. */
int64_t rp_job_median(const int64_t *num, const int64_t *dur, size_t n);

/* ---- savings (savings.c): every estimate behind one function ----
 * A scenario is a list of what-if rules ("op:enumerate(DataLoader)*=0", "cpu=x0.5", "type:comm=x0")
 * applied on some ranks; the answer is the job's step time before and after. */
typedef struct rp_scenario {
    const char *const *rules;
    size_t nrules;
    const unsigned char *on; /* per rank index: the rules apply there; NULL: every rank */
    int64_t baseline_ns, simulated_ns; /* out: the job's median step (rp_job_step's rule), or, where the job
                                        * has fewer than two steps, its whole run (CPU and GPU) */
} rp_scenario;
hta_status rp_savings(const hta_report_src *src, const rp_rank *pr, size_t n, rp_scenario *sc, size_t nsc,
                      hta_result *notes, hta_error *err);

/* The causes the findings name (docs/report.md, "Causes and savings"), in the order ties are ranked. */
enum { RP_C_CAPTURE, RP_C_DATA, RP_C_BLOCK, RP_C_CPU, RP_C_COMM, RP_C_STRAG, RP_C_GPU, RP_C_MEM, RP_NCAUSE };
extern const char *const rp_cause_names[RP_NCAUSE];
/* The what-if rules that take cause c away on the ranks `on` (savings.c, the one place they are chosen):
 * up to cap (at most RP_MAX_RULES) into rules, the count returned; *how: the rule in words.  strag: the
 * straggler's rank number. */
#define RP_MAX_RULES 10
#define RP_RULE_MAX 256
size_t rp_cause_rules(int c, const rp_rank *pr, size_t n, const unsigned char *on, int32_t strag,
                      char rules[][RP_RULE_MAX], size_t cap, const char **how);

/* Whether the job is too short to judge: every rank with GPU work has under RP_SHORT_NS of window or fewer than
 * RP_SHORT_KERNELS kernels, and it is no graph capture (diagnose.c): 1, or 2 where every such window is under
 * RP_SHORT_NS (then no figure read from its timings means anything: the report adds no observation either);
 * 0 otherwise.  short_k (may be NULL): per rank, 1 where that rank is. */
int rp_too_short(const rp_rank *pr, size_t n, unsigned char *short_k);

/* ---- diagnosis (diagnose.c) ----
 * The findings table: one row per cause for the whole job, naming its ranks, ranked by saving; a cause
 * whose simulated saving is nothing becomes an observation (obs).  rk is the report's ranks table, top
 * its top_kernels table (may be NULL); notes go to res. */
hta_status rp_diagnose(const hta_report_src *src, const rp_rank *pr, size_t n, const hta_table *rk, const hta_table *top,
                       findings *obs, hta_result *res, hta_table **out, hta_error *err);
/* ---- the HTML page (html.c) ----
 * One self-contained file (inline SVG and CSS, no script, nothing fetched) from the report's tables
 * (res), each rank's profile (its launch delays too) and the idle breakdown; written through
 * hta/outfile.h. */
hta_status rp_html_write(const char *path, const rp_rank *pr, size_t n, const hta_result *res,
                         const hta_table *idle, hta_error *err);

/* A rank's window told apart (sums over its steps, ns): its length, GPU busy, computation running, and the
 * GPU's idle time by what the host did (the same split as the findings'): blocked, GPU-side wait, data
 * loading, the rest.  One function, so that the page, the observations and the findings agree. */
typedef struct rp_split {
    int64_t window, busy, comp, block, wait, dl, host;
} rp_split;
void rp_split_of(const rp_rank *p, rp_split *o);

/* "0,2,5-7" of the ranks whose on[] is set (malloc'ed; text.c). */
char *rp_rank_list(const rp_rank *pr, size_t n, const unsigned char *on);
/* A duration as a person reads it: "52 us", "145.2 ms", "1.25 s". */
const char *rp_dur(int64_t ns, char *buf, size_t cap);

/* ---- the part (part.c): what the report keeps of each rank, as tables ----
 * Beside the analyses' own tables and summaries, hta_report_part gives these; each has its ranks' rows
 * rank by rank, in the ranks' order, so the parts of several contexts append (hta_result_append). */
#define RP_PART_RANKS(T, C, D)                                                                               \
    T("report_part_ranks", "report part: a rank's profile, one row")                                         \
    C(RP_PART_RANKS_RANK, "rank", INT, "", "rank of the trace")                                              \
    C(RP_PART_RANKS_PATH, "path", STR, "", "its file")                                                       \
    C(RP_PART_RANKS_TRACER, "tracer", INT, "", "1: written by libhtatrace")                                  \
    C(RP_PART_RANKS_HAS_GPU, "has_gpu", INT, "", "1: some kernel, memcpy or memset")                         \
    C(RP_PART_RANKS_T0, "t0_ns", INT, "ns", "first time of the view's rows")                                 \
    C(RP_PART_RANKS_T1, "t1_ns", INT, "ns", "last time of the view's rows")                                  \
    C(RP_PART_RANKS_STEP_PID, "step_pid", INT, "", "process of the steps")                                  \
    C(RP_PART_RANKS_STEP_TID, "step_tid", INT, "", "thread of the steps")                                   \
    C(RP_PART_RANKS_GAPS_LONG, "gaps_long", INT, "", "GPU idle gaps of 1 ms or more in the steps")          \
    C(RP_PART_RANKS_GAPS_SHORT, "gaps_short", INT, "", "shorter ones")                                      \
    C(RP_PART_RANKS_GAPS_LONG_NS, "gaps_long_ns", INT, "ns", "their time")                                  \
    C(RP_PART_RANKS_GAPS_SHORT_NS, "gaps_short_ns", INT, "ns", "their time")                                \
    C(RP_PART_RANKS_GAP_MEDIAN, "gap_median_ns", INT, "ns", "median gap")                                   \
    C(RP_PART_RANKS_GAP_MAX, "gap_max_ns", INT, "ns", "longest gap")                                        \
    C(RP_PART_RANKS_CPU_STEPS, "cpu_steps_ns", INT, "ns", "CPU busy inside the steps")                      \
    C(RP_PART_RANKS_QUEUE_MEDIAN, "queue_median", FLOAT, "", "median launch-queue length (-1: none)")      \
    C(RP_PART_RANKS_DELAY0, "delay_10us", INT, "", "launches delayed < 10 us")                              \
    C(RP_PART_RANKS_DELAY1, "delay_100us", INT, "", "10-100 us")                                            \
    C(RP_PART_RANKS_DELAY2, "delay_1ms", INT, "", "0.1-1 ms")                                               \
    C(RP_PART_RANKS_DELAY3, "delay_10ms", INT, "", "1-10 ms")                                               \
    C(RP_PART_RANKS_DELAY4, "delay_100ms", INT, "", "10-100 ms")                                            \
    C(RP_PART_RANKS_DELAY5, "delay_more", INT, "", ">= 100 ms")                                             \
    C(RP_PART_RANKS_CP_BOUND, "cp_bound", STR, "", "the critical path's largest bound_by class")            \
    C(RP_PART_RANKS_WINDOW, "window", INT, "", "how the window was chosen (RP_WIN_*)")                       \
    C(RP_PART_RANKS_LAG, "lag_ns", INT, "ns", "median lag of the GPU behind the CPU steps")                 \
    C(RP_PART_RANKS_CPU_STEP, "cpu_step_ns", INT, "ns", "median CPU step")                                   \
    C(RP_PART_RANKS_NCAPTURE, "capture_calls", INT, "", "graph-capture calls")                               \
    C(RP_PART_RANKS_NKLAUNCH, "kernel_launches", INT, "", "kernel launch calls (not graph launches)")        \
    C(RP_PART_RANKS_NKERNELS, "kernels", INT, "", "kernels executed")                                       \
    C(RP_PART_RANKS_NKLAUNCH_NONE, "launches_without_work", INT, "", "kernel launch calls that ran no GPU work")  \
    C(RP_PART_RANKS_PREP_NS, "input_prep_ns", INT, "ns", "input preparation: host time launching nothing, GPU idle") \
    C(RP_PART_RANKS_PREP_OP, "input_prep_op", STR, "", "the longest input-preparation frame or operator")     \
    C(RP_PART_RANKS_FILE_EVENTS, "file_events", INT, "", "elements of the file's traceEvents (trace events or not)")
HTA_TABLE_DECLARE(RP_PART_RANKS)

#define RP_PART_STEPS(T, C, D)                                                                               \
    T("report_part_steps", "report part: a rank's steps")                                                    \
    C(RP_PART_STEPS_RANK, "rank", INT, "", "rank of the trace")                                              \
    C(RP_PART_STEPS_NUM, "step", INT, "", "ProfilerStep number (-1: the whole view)")                       \
    C(RP_PART_STEPS_TS, "ts_ns", INT, "ns", "start")                                                         \
    C(RP_PART_STEPS_END, "end_ns", INT, "ns", "end")                                                         \
    C(RP_PART_STEPS_DL, "data_loading_ns", INT, "ns", "enumerate(DataLoader) time")                         \
    C(RP_PART_STEPS_SYNC, "sync_ns", INT, "ns", "time blocked in syncs")                                    \
    C(RP_PART_STEPS_MEM, "memory_ns", INT, "ns", "memcpy and memset time")                                  \
    C(RP_PART_STEPS_COMM, "comm_ns", INT, "ns", "communication kernel time")                                \
    C(RP_PART_STEPS_COMP, "comp_ns", INT, "ns", "computation kernel time")                                  \
    C(RP_PART_STEPS_BUSY, "gpu_busy_ns", INT, "ns", "GPU busy")                                             \
    C(RP_PART_STEPS_NSYNC, "syncs", INT, "", "sync calls")                                                  \
    C(RP_PART_STEPS_NLAUNCH, "launches", INT, "", "launch calls")                                           \
    C(RP_PART_STEPS_CP0, "cp_cpu_bound_ns", INT, "ns", "critical path per bound_by class (rp_bound_names)")\
    C(RP_PART_STEPS_CP1, "cp_data_loading_ns", INT, "ns", "")                                               \
    C(RP_PART_STEPS_CP2, "cp_gpu_compute_bound_ns", INT, "ns", "")                                          \
    C(RP_PART_STEPS_CP3, "cp_gpu_communication_bound_ns", INT, "ns", "")                                    \
    C(RP_PART_STEPS_CP4, "cp_gpu_kernel_kernel_overhead_ns", INT, "ns", "")                                 \
    C(RP_PART_STEPS_CP5, "cp_gpu_kernel_launch_overhead_ns", INT, "ns", "")                                 \
    C(RP_PART_STEPS_CP6, "cp_rank_wait_ns", INT, "ns", "")                                                  \
    C(RP_PART_STEPS_IDLE_BLOCK, "idle_block_ns", INT, "ns", "GPU idle, the host in a blocking call")        \
    C(RP_PART_STEPS_IDLE_WAIT, "idle_wait_ns", INT, "ns", "GPU idle with work queued")                      \
    C(RP_PART_STEPS_IDLE_DL, "idle_dl_ns", INT, "ns", "GPU idle, the host in data loading")                 \
    C(RP_PART_STEPS_IDLE_HOST, "idle_host_ns", INT, "ns", "GPU idle, the host otherwise")                   \
    C(RP_PART_STEPS_IDLE_BWAIT, "idle_bwait_ns", INT, "ns", "GPU idle with work queued, the host blocked")  \
    C(RP_PART_STEPS_COMM_EXCL, "comm_excl_ns", INT, "ns", "communication with no computation beside it")    \
    C(RP_PART_STEPS_COMP_BUSY, "comp_busy_ns", INT, "ns", "computation running")                            \
    C(RP_PART_STEPS_MEM_EXCL, "mem_excl_ns", INT, "ns", "copies and sets alone")
HTA_TABLE_DECLARE(RP_PART_STEPS)

#define RP_PART_COLLS(T, C, D)                                                                               \
    T("report_part_collectives", "report part: a rank's communication kernels in start order")              \
    C(RP_PART_COLLS_RANK, "rank", INT, "", "rank of the trace")                                              \
    C(RP_PART_COLLS_STEP, "step_index", INT, "", "index of its step (-1: outside)")                          \
    C(RP_PART_COLLS_DUR, "dur_ns", INT, "ns", "duration")
HTA_TABLE_DECLARE(RP_PART_COLLS)

#define RP_PART_SERIES(T, C, D)                                                                              \
    T("report_part_series", "report part: a rank's series, RP_BINS rows")                                    \
    C(RP_PART_SERIES_RANK, "rank", INT, "", "rank of the trace")                                             \
    C(RP_PART_SERIES_CPU, "cpu_busy", FLOAT, "", "CPU busy share of the bin")                               \
    C(RP_PART_SERIES_GPU, "gpu_busy", FLOAT, "", "GPU busy share of the bin")                               \
    C(RP_PART_SERIES_QUEUE, "queue", FLOAT, "", "longest launch queue in the bin")                         \
    C(RP_PART_SERIES_MEMBW, "membw", FLOAT, "", "highest memory bandwidth in the bin")
HTA_TABLE_DECLARE(RP_PART_SERIES)

#define RP_PART_NOTES(T, C, D)                                                                               \
    T("report_part_notes", "report part: a rank's notes (no critical path)")                                \
    C(RP_PART_NOTES_RANK, "rank", INT, "", "rank of the trace")                                              \
    C(RP_PART_NOTES_NOTE, "note", STR, "", "the note")
HTA_TABLE_DECLARE(RP_PART_NOTES)

#define RP_PART_BLOCK(T, C, D)                                                                               \
    T("report_part_blocking", "report part: a rank's blocking host calls (rp_block)")                       \
    C(RP_PART_BLOCK_RANK, "rank", INT, "", "rank of the trace")                                              \
    C(RP_PART_BLOCK_NAME, "name", STR, "", "the call")                                                       \
    C(RP_PART_BLOCK_OP, "op", STR, "", "the operator behind its longest call")                               \
    C(RP_PART_BLOCK_COUNT, "count", INT, "", "calls")                                                        \
    C(RP_PART_BLOCK_DUR, "dur_ns", INT, "ns", "their time")                                                  \
    C(RP_PART_BLOCK_IDLE, "idle_ns", INT, "ns", "GPU idle during them")
HTA_TABLE_DECLARE(RP_PART_BLOCK)

/* a rank's critical-path finding, as the report gives it for a few ranks */
#define RP_PART_FINDINGS(T, C, D) T("report_part_findings", "report part: a rank's critical-path finding")
HTA_TABLE_DECLARE_LIKE(RP_PART_FINDINGS, HTA_OBS)

/* all_kernels' rows folded as the parts come (hta_report_fold): each (type, name) once with its calls over the
 * ranks, and each rank's time in it as all_kernels gives it (8 bytes of time, 16 of key and rank, per rank and
 * kernel name; the names once), so that top_kernels adds the same doubles in the same order as over
 * all_kernels' rows (type, name, rank) */
#define RP_PART_KNAMES(T, C, D)                                                                              \
    T("report_part_kernels", "report parts folded: each kernel once, first seen first")                      \
    C(RP_PART_KNAMES_TYPE, "kernel_type", STR, "", "all_kernels' kernel_type")                              \
    C(RP_PART_KNAMES_NAME, "name", STR, "", "all_kernels' name")                                             \
    C(RP_PART_KNAMES_COUNT, "count", INT, "", "its calls over the ranks folded")
HTA_TABLE_DECLARE(RP_PART_KNAMES)
#define RP_PART_KSUMS(T, C, D)                                                                               \
    T("report_part_kernel_sums", "report parts folded: a kernel's time on a rank")                          \
    C(RP_PART_KSUMS_KEY, "kernel", INT, "", "its row of report_part_kernels")                                \
    C(RP_PART_KSUMS_RANK, "rank", INT, "", "rank of the trace")                                              \
    C(RP_PART_KSUMS_SUM, "sum", FLOAT, "us", "all_kernels' sum: the rank's time in the kernel")
HTA_TABLE_DECLARE(RP_PART_KSUMS)
/* The parts' all_kernels rows (if any left) folded into the two tables above, in res itself */
hta_status rp_kernels_fold(hta_result *acc, hta_result *part, hta_error *err);

/* The profiles of the parts (every rank's, appended): pr[n] and their strings in the caller's arena, copied
 * out of the tables kept here. */
typedef struct rp_parts {
    size_t n;
    rp_rank *pr;
    hta_table *ranks, *steps, *colls, *series, *block;
} rp_parts;
hta_status rp_part_unpack(hta_result *parts, hta_arena *a, rp_parts *out, hta_error *err);
void rp_parts_free(rp_parts *p);
/* Frees the tables the profiles were copied out of (the profiles stay). */
void rp_parts_trim(rp_parts *p);

#endif
