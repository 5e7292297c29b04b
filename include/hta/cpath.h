/* Lightweight critical path analysis (critical-path.md) and what-if
 * simulation on its graph.
 *
 * hta_cpath_build() turns one rank of a loaded trace into the graph HTA's
 * CPGraph builds: two nodes per selected event, edges for operator time,
 * ordering, launch delays, kernel-to-kernel gaps and synchronisation, in
 * HTA's insertion order (which decides ties of the longest path).  The graph
 * owns a copy of everything it reports (event names, pids, times), so it can
 * be saved and analysed again without the trace (hta_cpath_save/load).
 *
 * Times are int64 ns relative to HTA's origin (the view's), converted to us
 * only for output.
 */
#ifndef HTA_CPATH_H
#define HTA_CPATH_H

#include <stddef.h>
#include <stdint.h>

#include "hta/context.h"
#include "hta/table.h"
#include "hta/symtab.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum hta_cp_edge_type {
    HTA_CP_OPERATOR = 0,   /* critical_path_operator */
    HTA_CP_DEPENDENCY = 1, /* critical_path_dependency */
    HTA_CP_LAUNCH = 2,     /* critical_path_kernel_launch_delay */
    HTA_CP_KK = 3,         /* critical_path_kernel_kernel_delay */
    HTA_CP_SYNC = 4,       /* critical_path_sync_dependency */
    /* the simulation graph's own (hta/sim.h); HTA's graph never has them */
    HTA_CP_GAP = 5,        /* critical_path_cpu_untraced: a thread's time outside any event */
    HTA_CP_WAIT = 6,       /* critical_path_wait: a host call's or thread's wait after what it waited for */
    HTA_CP_PEER_WAIT = 7,  /* critical_path_rank_wait: a collective waiting for the other ranks */
    HTA_CP_NTYPES
} hta_cp_edge_type;

const char *hta_cpath_edge_type_name(int type);

/* A thread or stream of the graph's events: kept once (hta_cp_graph.thr), each event names its own by index,
 * so that the events do not repeat it (the graph is the larger part of a report's memory). */
typedef struct hta_cp_thread {
    int64_t pid, tid;
    int64_t stream;       /* -1: a CPU thread */
} hta_cp_thread;

/* An event of the clipped table (ascending event index).  32 bytes (4-byte aligned): one per event of a
 * rank.  Its nodes: hta_cp_ev_start / hta_cp_ev_end.  Its row of the rank is not here (the graph outlives
 * the rows): HTA's graph keeps them beside (hta_cp_graph.ev_row), a simulation graph's build its own. */
typedef struct __attribute__((packed, aligned(4))) hta_cp_event {
    int64_t ts, dur;      /* ns relative to origin_ns */
    uint32_t thr;         /* its thread or stream: index into hta_cp_graph.thr */
    uint32_t index;       /* position in traceEvents */
    uint32_t name, cat;   /* ids in hta_cp_graph.sym */
} hta_cp_event;

/* 12 bytes (4-byte aligned): a node of HTA's graph (two per event), or one of the few a simulation graph
 * adds to its events' (hta_cp_graph.nbase). */
typedef struct __attribute__((packed, aligned(4))) hta_cp_node {
    int64_t ts;
    uint32_t ev : 31;     /* index into hta_cp_graph.ev */
    uint32_t is_start : 1;
} hta_cp_node;

/* 16 bytes (4-byte aligned): two and a few per event.  The weight is read with hta_cp_edge_w: w holds it
 * where it fits 32 bits (|w| < 2^31 ns, 2.1 s: nearly every edge), else HTA_CP_WIDE, and the graph's table
 * of wide weights holds it (set through cp_edge_set_w, src/cpath). */
typedef struct __attribute__((packed, aligned(4))) hta_cp_edge {
    uint32_t u, v;        /* node ids */
    int32_t w;            /* ns; HTA's CPEdge weight (may be negative), or HTA_CP_WIDE */
    int32_t attr : 28;    /* attributed event (index into ev, < HTA_CP_MAX_EVENTS) or -1 */
    uint32_t type : 4;    /* hta_cp_edge_type */
} hta_cp_edge;
#define HTA_CP_WIDE INT32_MIN

/* The most events a graph holds (an edge names its event in 28 bits): 134 M, about 40 GB of JSON in one
 * rank. */
#define HTA_CP_MAX_EVENTS ((size_t)1 << 27)

typedef struct hta_cp_path {
    uint32_t *node;       /* path node ids, first to last */
    size_t n;
    uint32_t *edge;       /* edge ids between consecutive nodes (n - 1) */
    int64_t length;       /* sum of graph weights (negative clamped to 0), ns */
} hta_cp_path;

/* A few 64-bit values by 32-bit id (open addressing; UINT32_MAX: a free slot; cap a power of two, at most half
 * full): what a graph holds for the few nodes or edges its compact arrays cannot. */
typedef struct hta_cp_idmap {
    uint32_t *id;
    int64_t *val;
    size_t cap, n;
} hta_cp_idmap;
int64_t hta_cp_idmap_get(const hta_cp_idmap *m, uint32_t id); /* an id put in it */

typedef struct hta_cp_graph {
    hta_symtab *sym;      /* names and categories of ev */
    hta_cp_event *ev;
    size_t nev;
    hta_cp_thread *thr;   /* the events' threads and streams, each once */
    size_t nthr;
    hta_cp_node *node;    /* HTA's graph: node_list, ordered by (ts, event index, start first); a simulation
                           * graph: its nodes from nbase on (node[v - nbase]) */
    size_t nnode;         /* every node, nbase included */
    size_t nbase;         /* simulation graphs: nodes 2x and 2x + 1 are event x's start and end, with the
                           * event's times (its end cut where the nesting cut it, cut_*), held by the events
                           * alone: the graph is a report's largest part; 0 in HTA's graph */
    int32_t *ev_row;      /* HTA's graph built from a trace: each event's row of the rank; NULL in a restored
                           * graph and in a simulation graph */
    int32_t *ev_node;     /* HTA's graph: event x's start and end nodes, ev_node[2x] and [2x + 1], -1 when it has
                           * none; NULL in a simulation graph, where they are 2x and 2x + 1 */
    hta_cp_idmap wide;    /* the weights of the edges whose w is HTA_CP_WIDE, by edge id */
    uint64_t *cut_bit;    /* per event below nbase / 2: its end is cut, the time (relative to origin_ns) in cut */
    hta_cp_idmap cut;     /* by event id */
    hta_cp_edge *edge;    /* in insertion order (networkx edge order) */
    size_t nedge;
    uint32_t *order;      /* node ids in networkx node-insertion order */
    size_t norder;
    int32_t rank;
    int64_t origin_ns;    /* absolute ns of time 0 */
    int zero_weight_launch; /* built with HTA's zero-weight launch edges */
    int hta_compat;         /* built with HTA's rules (names, tie order): bound_by follows them */
    int32_t *ev_parent;   /* simulation graphs (hta/sim.h): the enclosing event of each event on its
                           * thread, -1 for none; NULL in HTA's graph */
    char **notes;         /* remarks about the build (HTA would have failed, ...) */
    size_t nnotes;
    hta_cp_path path;     /* filled by hta_cpath_longest on the graph's own weights */
} hta_cp_graph;

/* Edge e's weight in ns. */
static inline int64_t hta_cp_edge_w(const hta_cp_graph *g, size_t e) {
    int32_t w = g->edge[e].w;
    return w != HTA_CP_WIDE ? w : hta_cp_idmap_get(&g->wide, (uint32_t)e);
}

/* Event x's start and end nodes (-1: none), in either kind of graph. */
static inline int32_t hta_cp_ev_start(const hta_cp_graph *g, size_t x) {
    return g->ev_node ? g->ev_node[2 * x] : (int32_t)(2 * x);
}
static inline int32_t hta_cp_ev_end(const hta_cp_graph *g, size_t x) {
    return g->ev_node ? g->ev_node[2 * x + 1] : (int32_t)(2 * x + 1);
}

/* Node v's event, side and time (ns relative to origin_ns), in either kind of graph. */
static inline uint32_t hta_cp_node_ev(const hta_cp_graph *g, size_t v) {
    return v < g->nbase ? (uint32_t)(v >> 1) : g->node[v - g->nbase].ev;
}
static inline int hta_cp_node_is_start(const hta_cp_graph *g, size_t v) {
    return v < g->nbase ? !(v & 1) : g->node[v - g->nbase].is_start;
}
static inline int64_t hta_cp_node_ts(const hta_cp_graph *g, size_t v) {
    if (v >= g->nbase) return g->node[v - g->nbase].ts;
    uint32_t x = (uint32_t)(v >> 1);
    const hta_cp_event *e = &g->ev[x];
    if (!(v & 1)) return e->ts;
    if (g->cut_bit && (g->cut_bit[x >> 6] >> (x & 63) & 1)) return hta_cp_idmap_get(&g->cut, x);
    return e->ts + e->dur;
}

static inline int64_t hta_cp_ev_pid(const hta_cp_graph *g, const hta_cp_event *e) { return g->thr[e->thr].pid; }
static inline int64_t hta_cp_ev_tid(const hta_cp_graph *g, const hta_cp_event *e) { return g->thr[e->thr].tid; }
static inline int64_t hta_cp_ev_stream(const hta_cp_graph *g, const hta_cp_event *e) {
    return g->thr[e->thr].stream;
}

typedef struct hta_cpath_opts {
    const char *annotation;    /* "" or NULL: whole trace */
    int64_t instance_a, instance_b; /* annotation instances, inclusive */
    const char *const *data_load; /* data_load_events substrings, may be NULL */
    size_t ndata_load;
    int zero_weight_launch;    /* CRITICAL_PATH_ADD_ZERO_WEIGHT_LAUNCH_EDGE=1 */
} hta_cpath_opts;
/* HTA's defaults: whole trace, numpy's tie order, no zero-weight launch edges. */
void hta_cpath_opts_default(hta_cpath_opts *o);

/* Builds the graph of the context's rank k (its view) and computes its
 * critical path. */
hta_status hta_cpath_build(hta_ctx *ctx, size_t k, const hta_cpath_opts *o, hta_cp_graph **out,
                           hta_error *err);
void hta_cpath_free(hta_cp_graph *g);

/* The window HTA's graph is clipped to (critical-path.md §1): the span of the annotation's instances
 * o->instance_a..b in rank k's view, [lo, hi] in ns relative to the context's origin; without an
 * annotation, from the earliest row to hi = INT64_MAX.  An annotation that names nothing, or an instance
 * beyond the last, is an error. */
hta_status hta_cpath_window(hta_ctx *ctx, size_t k, const hta_cpath_opts *o, int64_t *lo, int64_t *hi,
                            hta_error *err);

/* Longest path (networkx dag_longest_path rules, O(V+E)).  w: per-edge weight
 * in ns, or NULL for the graph's own weights.  Negative weights count as 0. */
hta_status hta_cpath_longest(const hta_cp_graph *g, const int64_t *w, hta_cp_path *p,
                             hta_error *err);
void hta_cpath_path_free(hta_cp_path *p);

/* bound_by class of an edge on the path (HTA's labels). */
const char *hta_cpath_bound_by(const hta_cp_graph *g, const hta_cp_edge *e,
                               const char *const *data_load, size_t ndata_load);

/* hta_cpath_bound_by for many edges of one graph: an operator edge's class depends only on its event's name
 * and side (unless data loading is told by enclosing events' names), so it is found once per name, not
 * once per edge (shortening and matching a name cost more than the rest of a path walk's step).
 * hta_cpath_bb_new returns NULL when out of memory; the graph must outlive the memo. */
typedef struct hta_cp_bb hta_cp_bb;
hta_cp_bb *hta_cpath_bb_new(const hta_cp_graph *g, const char *const *data_load, size_t ndata_load);
const char *hta_cpath_bb(hta_cp_bb *m, const hta_cp_edge *e);
void hta_cpath_bb_free(hta_cp_bb *m);

#define HTA_CP_SUMMARY(T, C, D)                                                                              \
    T("summary", "time of the critical path's edges per bound_by class (HTA's summary())")                   \
    C(HTA_CP_SUMMARY_BOUND_BY, "bound_by", STR, "",                                                          \
      "cpu_bound, data_loading, gpu_compute_bound, gpu_communication_bound, gpu_kernel_kernel_overhead, "    \
      "gpu_kernel_launch_overhead, or empty for dependency and sync edges")                                  \
    C(HTA_CP_SUMMARY_DURATION, "duration", FLOAT, "us", "summed weight of its edges")                        \
    C(HTA_CP_SUMMARY_PCTG, "percentage", FLOAT, "%", "of the path's length")
HTA_TABLE_DECLARE(HTA_CP_SUMMARY)

#define HTA_CP_BREAKDOWN(T, C, D)                                                                            \
    T("breakdown", "the path's edges in path order (--top N: the N longest, longest first)")                 \
    C(HTA_CP_BREAKDOWN_EVENT, "event_idx", INT, "", "event index of the attributed event; null for none")    \
    C(HTA_CP_BREAKDOWN_DURATION, "duration", FLOAT, "us", "edge weight (HTA's, unclamped)")                  \
    C(HTA_CP_BREAKDOWN_TYPE, "type", STR, "",                                                                \
      "critical_path_ + operator, dependency, kernel_launch_delay, kernel_kernel_delay or sync_dependency")  \
    C(HTA_CP_BREAKDOWN_NAME, "s_name", STR, "", "shortened name of the attributed event")                    \
    C(HTA_CP_BREAKDOWN_CAT, "cat", STR, "", "its category")                                                  \
    C(HTA_CP_BREAKDOWN_PID, "pid", INT, "", "its process id")                                                \
    C(HTA_CP_BREAKDOWN_TID, "tid", INT, "", "its thread id")                                                 \
    C(HTA_CP_BREAKDOWN_STREAM, "stream", INT, "", "its GPU stream, -1 for none")                             \
    C(HTA_CP_BREAKDOWN_INDEX, "index", INT, "", "its event index")                                           \
    C(HTA_CP_BREAKDOWN_BOUND_BY, "bound_by", STR, "", "bound_by class of the edge (as in summary)")
HTA_TABLE_DECLARE(HTA_CP_BREAKDOWN)

#define HTA_CP_STATS(T, C, D)                                                                                \
    T("stats", "sizes of the graph and of the path, one row per figure")                                     \
    C(HTA_CP_STATS_NAME, "name", STR, "",                                                                    \
      "graph_nodes, graph_edges, graph_edge_types.<type>, critical_path_nodes, critical_path_edges, "        \
      "critical_path_total_weight (us), critical_path_events, clipped_events, node_list (nodes created), "   \
      "critical_path_edge_types.<type>")                                                                     \
    C(HTA_CP_STATS_VALUE, "value", FLOAT, "", "the figure")
HTA_TABLE_DECLARE(HTA_CP_STATS)

/* Tables `summary`, `breakdown` (top: rows kept, 0 = all, HTA_CP_NO_BREAKDOWN: no breakdown table),
 * `stats` for path p; w: each path edge's time (NULL: the graph's own weights). */
#define HTA_CP_NO_BREAKDOWN ((size_t)-1)
hta_status hta_cpath_report(const hta_cp_graph *g, const hta_cp_path *p, const int64_t *w,
                            const char *const *data_load, size_t ndata_load, size_t top,
                            hta_result *out, hta_error *err);

#define HTA_CP_WHATIF_SUMMARY(T, C, D)                                                                       \
    T("what_if_summary", "with --what-if: the summary of the simulated path, under its simulated weights")
HTA_TABLE_DECLARE_LIKE(HTA_CP_WHATIF_SUMMARY, HTA_CP_SUMMARY)

/* Only the summary table of path p, with edge weights w (NULL: the graph's
 * own), as declaration d (HTA_CP_SUMMARY_TABLE or HTA_CP_WHATIF_SUMMARY_TABLE). */
hta_status hta_cpath_summary(const hta_cp_graph *g, const hta_cp_path *p, const int64_t *w,
                             const char *const *data_load, size_t ndata_load, const hta_table_def *d,
                             hta_result *out, hta_error *err);

/* The what-if table: the path before and after the rules (built by `hta critical-path`). */
#define HTA_CP_WHATIF(T, C, D)                                                                               \
    T("what_if", "with --what-if: the path before and after the rules, one row per figure")                  \
    C(HTA_CP_WHATIF_NAME, "name", STR, "",                                                                   \
      "baseline_path_us, simulated_path_us, saving_us, saving_percent, edges_changed, simulated_path_nodes") \
    C(HTA_CP_WHATIF_VALUE, "value", FLOAT, "", "the figure")
HTA_TABLE_DECLARE(HTA_CP_WHATIF)

/* The what_if table from its figures (ns; changed edges, simulated path nodes). */
hta_status hta_cpath_whatif_table(int64_t baseline_ns, int64_t simulated_ns, size_t edges_changed, size_t path_nodes,
                                  hta_result *out, hta_error *err);

/* Overlay (critical-path.md §10): the rank's trace with "critical": 1 on path
 * events and flow events for edges.  Writes outdir/overlaid_critical_path_<base>;
 * *written gets the path (malloc'ed). */
typedef struct hta_cpath_overlay_opts {
    int all_events; /* only_show_critical_events = False */
    int all_edges;  /* show_all_edges = True (ignored unless all_events) */
    int show_zero_weight_launch; /* CRITICAL_PATH_SHOW_ZERO_WEIGHT_LAUNCH_EDGE */
    const hta_cp_path *path; /* the path drawn: NULL for the graph's own (g->path); a simulation graph's
                              * (hta_sim_answer) on its graph */
} hta_cpath_overlay_opts;
hta_status hta_cpath_overlay(hta_ctx *ctx, const hta_cp_graph *g, const char *outdir,
                             const hta_cpath_overlay_opts *o, char **written, hta_error *err);

/* Save / load (docs/critical-path.md, "Graph file"). */
hta_status hta_cpath_save(const hta_cp_graph *g, const char *path, hta_error *err);
hta_status hta_cpath_load(const char *path, hta_cp_graph **out, hta_error *err);

/* ---- what-if ---- */
typedef struct hta_cpath_rule {
    int what;        /* selector kind (whatif.c) */
    char *pattern;   /* glob or value text */
    int64_t num;     /* stream number */
    int scale;       /* 1: multiply by factor, 0: set to value_ns */
    double factor;
    int64_t value_ns;
    int median;      /* rank:R=median */
} hta_cpath_rule;

/* Parses "SELECTOR=ACTION" (docs/critical-path.md, "What-if"). */
hta_status hta_cpath_rule_parse(const char *text, hta_cpath_rule *r, hta_error *err);
void hta_cpath_rule_free(hta_cpath_rule *r);
/* New weights after the rules (applied in order; a later rule acts on the
 * result of earlier ones).  w: nedge weights, filled.  *nchanged: edges touched. */
hta_status hta_cpath_whatif_weights(const hta_cp_graph *g, const hta_cpath_rule *rules,
                                    size_t nrules, int64_t *w, size_t *nchanged, hta_error *err);

#ifdef __cplusplus
}
#endif
#endif
