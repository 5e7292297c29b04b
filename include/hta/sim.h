/* The simulation graph: the what-if engine (docs/critical-path.md, "Simulation").
 *
 * HTA's graph (hta/cpath.h) gives CPU time between operators no weight, so the time a step spends
 * outside operators (Python, data loading, waits) is never on its path.  The simulation graph accounts
 * for every nanosecond of a rank's threads and streams, so that replaying it with its own weights gives
 * back the trace's times exactly, and replaying it with changed weights gives the schedule the change
 * would produce:
 *
 *   - every CPU event (operators, runtime calls, annotations, Python frames) has a start and an end
 *     node; a thread is one chain of edges through its events' nodes in nesting order, each edge
 *     attributed to the innermost event open over it (HTA_CP_OPERATOR) or to none (HTA_CP_GAP);
 *   - a thread that hands work to another one and waits for it (the autograd thread) is joined to it
 *     (HTA_CP_WAIT edges, detected from a long idle or blocked stretch that the other thread's work
 *     fills);
 *   - every GPU operation starts at the latest of: its launch call plus the launch latency
 *     (HTA_CP_LAUNCH), the previous operation of its stream plus the stream's gap (HTA_CP_KK), and the
 *     operation a stream-wait event names (HTA_CP_SYNC); a collective's time is split into the wait for
 *     the other ranks (HTA_CP_PEER_WAIT) and its transfer (HTA_CP_OPERATOR);
 *   - a host call that blocks (syncs, copies that return when done) ends at the latest of its own time
 *     and the end of the GPU work it waited for plus the return latency (HTA_CP_SYNC).
 *
 * Where a node has several inputs, the one that decided its time in the trace keeps the observed
 * distance; the others get the latency measured where they did decide (medians over the rank), so a
 * change that makes them decide gives a realistic time.  Times are the trace's exact ns in every mode.
 */
#ifndef HTA_SIM_H
#define HTA_SIM_H

#include "hta/context.h"
#include "hta/cpath.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hta_sim hta_sim;

/* Builds the simulation graph of the context's rank k (the rows of the context's window, or all). */
hta_status hta_sim_build(hta_ctx *ctx, size_t k, hta_sim **out, hta_error *err);
/* hta_sim_build for a caller done with rank k's rows: they are released (hta_ctx_release_rows) as soon as the
 * graph holds all it reads of them, before its index and order are taken, so that the rank's model and the
 * whole graph are never held at once.  On failure too, the rows may be gone. */
hta_status hta_sim_build_release(hta_ctx *ctx, size_t k, hta_sim **out, hta_error *err);
void hta_sim_free(hta_sim *s);

/* The graph (edges, events, nodes) in hta_cp_graph form: summary and breakdown tables work on it. */
const hta_cp_graph *hta_sim_graph(const hta_sim *s);

/* What a built graph holds, in bytes, by part (its arrays' used lengths; its symbols' text, a few names, not
 * counted): the measure of "bytes per event" (bench/whatif_bench.c). */
typedef struct hta_sim_mem {
    size_t events;   /* the events (times, thread, index, name, category) and the threads' table */
    size_t nodes;    /* the nodes beyond the events' own, cut ends */
    size_t edges;
    size_t in_index; /* each node's in-edges */
    size_t order;    /* the schedule's (topological) order */
    size_t parents;  /* each event's enclosing event */
    size_t steps;    /* each event's step, the steps */
    size_t other;    /* the collectives */
    size_t nev;      /* the events, for per-event figures */
} hta_sim_mem;
/* The total; m (may be NULL): by part. */
size_t hta_sim_bytes(const hta_sim *s, hta_sim_mem *m);

/* Weights after the rules (docs/critical-path.md, "What-if"), applied in order.  A rule that changes no
 * edge is an error naming it.  w: nedge entries, filled. */
hta_status hta_sim_weights(const hta_sim *s, const hta_cpath_rule *rules, size_t nrules, int64_t *w,
                           size_t *nchanged, hta_error *err);

/* The schedule: every node's time (ns, relative to the graph's origin) under weights w (NULL: the
 * graph's own, which give the trace's times back). */
hta_status hta_sim_run(const hta_sim *s, const int64_t *w, int64_t *t, hta_error *err);

/* The critical path ending at node `last` under weights w and schedule t, back to the first node at or
 * before time `from` (INT64_MIN: to its source): each step follows the input that decided the node's
 * time.  p->length = t[last] - t[first]. */
hta_status hta_sim_path(const hta_sim *s, const int64_t *w, const int64_t *t, uint32_t last, int64_t from,
                        hta_cp_path *p, hta_error *err);

/* Writes the rank's trace with every event at its simulated time: graph events exactly, every other
 * event (annotations on the GPU, flows, counters, instants) moved with its track so that nesting is
 * kept.  The rank's rows are ctx's rank of the graph's number, loaded as the graph's were. */
hta_status hta_sim_trace(hta_ctx *ctx, const hta_sim *s, const int64_t *t, const char *out_path,
                         hta_error *err);

/* ---- tables ---- */

#define HTA_SIM_STEPS(T, C, D)                                                                               \
    T("steps", "per ProfilerStep: its wall time and what bounds its critical path (the simulation graph's)") \
    HTA_RANK_COL(C, HTA_SIM_STEPS)                                                                           \
    C(HTA_SIM_STEPS_STEP, "step", INT, "", "N of ProfilerStep#N")                                            \
    C(HTA_SIM_STEPS_WALL, "wall_us", FLOAT, "us", "the step's duration in the trace (or simulated)")         \
    C(HTA_SIM_STEPS_PATH, "path_us", FLOAT, "us", "length of the step's critical path")                     \
    C(HTA_SIM_STEPS_CPU, "cpu_us", FLOAT, "us", "path time in CPU work (operators, Python, untraced)")       \
    C(HTA_SIM_STEPS_DATA, "data_loading_us", FLOAT, "us", "path time in data loading (--data-load)")        \
    C(HTA_SIM_STEPS_COMP, "gpu_compute_us", FLOAT, "us", "path time in GPU computation and copies")         \
    C(HTA_SIM_STEPS_COMM, "gpu_comm_us", FLOAT, "us", "path time in collectives' transfers")                \
    C(HTA_SIM_STEPS_RWAIT, "rank_wait_us", FLOAT, "us", "path time waiting in collectives for other ranks") \
    C(HTA_SIM_STEPS_LAUNCH, "launch_us", FLOAT, "us", "path time in launch delays and kernel-kernel gaps") \
    C(HTA_SIM_STEPS_WAIT, "sync_us", FLOAT, "us",                                                           \
      "path time in a host call's or thread's return after what it waited for")
HTA_TABLE_DECLARE(HTA_SIM_STEPS)

#define HTA_SIM_WHATIF_STEPS(T, C, D)                                                                        \
    T("what_if_steps", "with --what-if: each step's time in the trace and simulated")                        \
    HTA_RANK_COL(C, HTA_SIM_WS)                                                                              \
    C(HTA_SIM_WS_STEP, "step", INT, "", "N of ProfilerStep#N")                                               \
    C(HTA_SIM_WS_BASE, "baseline_us", FLOAT, "us", "the step's duration in the trace")                       \
    C(HTA_SIM_WS_SIM, "simulated_us", FLOAT, "us", "its duration under the rules")                          \
    C(HTA_SIM_WS_SAVING, "saving_us", FLOAT, "us", "baseline - simulated")                                  \
    C(HTA_SIM_WS_PCT, "saving_percent", FLOAT, "%", "saving in % of the baseline")
HTA_TABLE_DECLARE(HTA_SIM_WHATIF_STEPS)

#define HTA_SIM_COLL(T, C, D)                                                                                \
    T("collectives", "--all-ranks: each collective instance joined across ranks, its waits and last arriver") \
    C(HTA_SIM_COLL_PG, "process_group", STR, "", "process group name (Process Group Name), empty for none")    \
    C(HTA_SIM_COLL_SEQ, "seq", INT, "", "Seq of the instance, or its order in the group")                     \
    C(HTA_SIM_COLL_STEP, "step", INT, "", "ProfilerStep of its kernels; null for none")                       \
    C(HTA_SIM_COLL_KERNEL, "kernel", STR, "", "the collective's kernel (shortened name)")                     \
    C(HTA_SIM_COLL_RANKS, "ranks", INT, "", "participating ranks")                                            \
    C(HTA_SIM_COLL_LAST, "last_rank", INT, "", "the rank that arrived last (the others waited for it)")      \
    C(HTA_SIM_COLL_WAIT, "wait_us", FLOAT, "us", "the other ranks' waits for the last arriver, summed")      \
    C(HTA_SIM_COLL_MAXW, "max_wait_us", FLOAT, "us", "the longest of those waits")                           \
    C(HTA_SIM_COLL_XFER, "transfer_us", FLOAT, "us", "the transfer: the instance's shortest kernel")
HTA_TABLE_DECLARE(HTA_SIM_COLL)

#define HTA_SIM_BLAME(T, C, D)                                                                               \
    T("blame", "--all-ranks: per step, the delay each rank caused the others at collectives, most first")    \
    C(HTA_SIM_BLAME_STEP, "step", INT, "", "ProfilerStep; null for collectives outside steps")               \
    C(HTA_SIM_BLAME_RANK, "rank", INT, "", "the rank")                                                       \
    C(HTA_SIM_BLAME_LAST, "last_arrivals", INT, "", "collectives of the step where it arrived last")        \
    C(HTA_SIM_BLAME_CAUSED, "caused_wait_us", FLOAT, "us",                                                   \
      "the other ranks' waits at those collectives, summed: the delay it caused them")                       \
    C(HTA_SIM_BLAME_WAITED, "waited_us", FLOAT, "us", "its own waits for other ranks in the step")
HTA_TABLE_DECLARE(HTA_SIM_BLAME)

#define HTA_SIM_HOPS(T, C, D)                                                                                \
    T("hops", "--all-ranks: where the job's critical path changes rank, in path order")                      \
    C(HTA_SIM_HOPS_TIME, "time_us", FLOAT, "us", "the barrier's time, from the job's first event")           \
    C(HTA_SIM_HOPS_STEP, "step", INT, "", "ProfilerStep of the collective; null for none")                   \
    C(HTA_SIM_HOPS_FROM, "from_rank", INT, "", "the rank the path comes from (the last arriver)")            \
    C(HTA_SIM_HOPS_TO, "to_rank", INT, "", "the rank it goes on in")                                         \
    C(HTA_SIM_HOPS_KERNEL, "kernel", STR, "", "the collective (shortened kernel name)")                       \
    C(HTA_SIM_HOPS_PG, "process_group", STR, "", "its process group")                                        \
    C(HTA_SIM_HOPS_SEQ, "seq", INT, "", "its Seq or order")
HTA_TABLE_DECLARE(HTA_SIM_HOPS)

/* Table `steps` for schedule t under weights w (NULL: the graph's own): the steps with t[start] >= lo and
 * t[end] <= hi. */
hta_status hta_sim_steps_table(const hta_sim *s, const int64_t *w, const int64_t *t, int64_t lo, int64_t hi,
                               const char *const *data_load, size_t ndata_load, hta_result *out,
                               hta_error *err);
/* Table `what_if_steps`: each step within [lo, hi] of schedule t0, in t0 and in t1. */
hta_status hta_sim_steps_whatif_table(const hta_sim *s, const int64_t *t0, const int64_t *t1, int64_t lo,
                                      int64_t hi, hta_result *out, hta_error *err);

/* One rank's answer (sim_answer.c): every table from one path of the simulation graph through one span. */
typedef struct hta_sim_opts {
    const hta_cpath_rule *rules; /* what-if rules, applied in order (none: no what-if tables) */
    size_t nrules;
    const char *const *data_load; /* events whose name contains one of these are data loading */
    size_t ndata_load;
    int64_t lo, hi;   /* the span (ns relative to the context's origin, as hta_cpath_window gives it):
                       * INT64_MIN and INT64_MAX for the steps' (from the first step's start to the last
                       * step's end), or the whole run without steps */
    int breakdown;    /* the breakdown table */
    size_t top;       /* its longest rows, longest first (0: every path edge, in path order) */
    const char *trace_out; /* with rules: the simulated trace written there */
} hta_sim_opts;

/* Tables what_if, what_if_steps, what_if_summary (with rules: the span before and after them), summary,
 * breakdown, stats and steps, all of the one path through the span, so that the summary's total, the
 * what-if's baseline and (for one step) the step's wall time are the same time.  path (may be NULL) gets
 * the path (hta_cpath_path_free). */
hta_status hta_sim_answer(hta_ctx *ctx, const hta_sim *s, const hta_sim_opts *o, hta_result *out,
                          hta_cp_path *path, hta_error *err);


/* One rank's critical path as `hta critical-path` answers it (ask.c), the engine chosen from the options: the
 * simulation graph's one path (hta_sim_answer) by default; HTA's graph's summary, breakdown and stats with
 * hta_graph or a stored graph (a what-if on a trace still runs on the simulation graph, its what_if tables
 * first).  The context's rank 0 is the rank (ctx NULL with a stored graph). */
typedef struct hta_cpath_ask_opts {
    const hta_cpath_opts *cp;    /* HTA's options: annotation and instance (the span), data loading, launch edges */
    const hta_cpath_rule *rules; /* what-if rules, in order */
    size_t nrules;
    int hta_graph;               /* HTA's graph's answer (--hta-compat) */
    const char *graph;           /* a stored graph (hta_cpath_save) to answer from, or NULL */
    int top, all;                /* breakdown: its top longest edges (<= 0: the default), or every edge */
    const char *overlay;         /* the trace with the path overlaid, written into this folder */
    int all_events, all_edges;   /* overlay: every event, every graph edge */
    const char *save;            /* HTA's graph stored in this file */
    const char *trace_out;       /* with rules: the simulated trace */
} hta_cpath_ask_opts;
hta_status hta_cpath_ask(hta_ctx *ctx, const hta_cpath_ask_opts *o, hta_result *out, hta_error *err);

/* ---- the job in bounded memory (docs/scaling.md, "The critical path across ranks") ----
 *
 * The answers of every rank's simulation graph joined at their collectives (barrier nodes), without ever
 * building that graph or holding more than one rank's graph per thread: each rank's graph is reduced to a skeleton (the longest
 * distances from its collectives' ends to its arrivals and step boundaries), the barriers are replayed
 * from the skeletons, and paths are summed rank by rank where they pass. */
typedef struct hta_job hta_job;

typedef struct hta_job_scenario {
    const hta_cpath_rule *rules; /* applied in order, as hta_sim_weights applies them (at most 64) */
    size_t nrules;
    const unsigned char *on;     /* per rank position: the rules apply to that rank (NULL: every rank) */
    int lenient;                 /* a rule that matches nothing is no error (it changes nothing) */
} hta_job_scenario;

/* Sharing the job's passes among processes (hta-mpi, docs/scaling.md "The critical path across ranks"):
 * each process visits only its share of the ranks in every pass (skeletons, revisits, paths, simulated
 * traces), and what a pass produced for those ranks is exchanged so that every process holds the whole
 * job afterwards; the replay then runs the same everywhere.  Every process of the group must call
 * hta_job_run_plan with the same plan and options: the calls below are collective.  Only the plan's runs
 * are shared (hta_job_run_ctx ignores it); the overlay is drawn by the root alone. */
typedef struct hta_job_dist {
    int root;  /* this process is the group's first: it draws the overlay */
    int nproc; /* processes in the group */
    /* this process's share of the plan's files (indices, malloc'd into *which); the same in every pass */
    hta_status (*share)(const hta_rank_plan *p, size_t **which, size_t *n, hta_error *err);
    /* every process's bytes to every process: *all (malloc'd) is their concatenation in process order,
     * (*lens)[q] (malloc'd, nproc entries) process q's length; collective */
    hta_status (*allgather)(const char *bytes, size_t len, char **all, size_t **lens, hta_error *err);
    /* Only the root knows the options (the report's savings: their scenarios come from every rank's parts,
     * reduced at the root): set, the root's hta_job_run_plan first sends its options to every process and
     * sets *announced; every other process calls hta_job_follow instead, and a root that runs no job calls
     * hta_job_announce_none.  NULL: every process knows the options (critical-path --all-ranks). */
    int *announced;
} hta_job_dist;

typedef struct hta_job_opts {
    const hta_job_scenario *scn; /* what-if scenarios, each replayed on the job */
    size_t nscn;
    const char *const *data_load;
    size_t ndata_load;
    int paths;   /* the tables: what_if, what_if_steps, what_if_summary (of scn[0]) and their notes, then
                  * summary, hops, blame, collectives, steps (those of critical-path --all-ranks) */
    int threads; /* with a plan: rank contexts alive at once (0: the CPUs) */
    const char *overlay; /* with paths: the job's path drawn there (as hta_sim_overlay draws it) */
    const char *trace_dir; /* each rank's trace at its simulated schedule (scn[0]'s rules) written into this
                            * folder (it exists) under the rank file's name, one rank at a time */
    const hta_job_dist *dist; /* with a plan: the passes shared among processes (NULL: this one alone) */
    int gpu_steps; /* each rank's steps on its GPU timeline where its steps allow (the report's window where
                    * the GPU runs far behind the CPU): from a step's first GPU operation to the next's */
    hta_ctx **keep; /* with a plan: per file, its context the caller kept (hta_each_opts.keep, e.g. from the
                     * pass that read the files for the report's parts): the first pass builds their graphs
                     * from them without loading, then frees them and sets them NULL; the caller frees what
                     * is left.  Either way, where the files are no more than the threads, the job keeps each
                     * rank's graph for every pass and reads each file once */
} hta_job_opts;

/* Over the ranks of a loaded context (visited one after the other). */
hta_status hta_job_run_ctx(hta_ctx *ctx, const hta_job_opts *o, hta_job **out, hta_result *res, hta_error *err);
/* Over a rank plan's files (hta_ctx_each_rank): a failing file is *failed (its index), *in_load when its
 * load failed. */
hta_status hta_job_run_plan(const hta_rank_plan *p, const hta_ctx_opts *co, const hta_job_opts *o, hta_job **out,
                            hta_result *res, size_t *failed, int *in_load, hta_error *err);
/* A process other than d's root, where only the root knows the options (d->announced): the root's job run
 * with the root's options (scenarios, data_load, paths, gpu_steps, threads), its share of every pass
 * visited here, and the job dropped at the end (the root answers); at once where the root runs no job.
 * Collective, with the root's hta_job_run_plan or hta_job_announce_none. */
hta_status hta_job_follow(const hta_rank_plan *p, const hta_ctx_opts *co, const hta_job_dist *d, size_t *failed,
                          int *in_load, hta_error *err);
/* d's root, which runs no job this time (d->announced, still 0): tells the processes that follow.
 * Collective, with their hta_job_follow. */
hta_status hta_job_announce_none(const hta_job_dist *d, hta_error *err);
/* Every rank's steps, rank by rank: step i's rank, number and duration (ns) in scenario scn (0: the trace's
 * own weights, k: o->scn[k - 1]). */
size_t hta_job_nsteps(const hta_job *j);
void hta_job_step(const hta_job *j, size_t scn, size_t i, int32_t *rank, int64_t *number, int64_t *dur_ns);
/* The job's whole run in scenario scn (ns): from the earliest rank's first event to the last rank's last,
 * on the job's clock (ranks aligned at their collectives).  What a saving is measured on where the job has
 * fewer than two steps. */
int64_t hta_job_span(const hta_job *j, size_t scn);
void hta_job_free(hta_job *j);

#ifdef __cplusplus
}
#endif
#endif
