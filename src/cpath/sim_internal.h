/* The simulation graph's state shared by its build, its runs and its trace writer (not public). */
#ifndef HTA_SIM_INTERNAL_H
#define HTA_SIM_INTERNAL_H

#include "cpath/internal.h"
#include "hta/sim.h"

/* One ProfilerStep#N of the simulated rank. */
typedef struct hta_sim_step {
    int32_t rank;
    int64_t number;          /* N */
    uint32_t start, end;     /* nodes */
    uint32_t gstart, gend;   /* the GPU work launched in it: its first operation's start node and its last
                              * end node (UINT32_MAX: none) */
} hta_sim_step;

/* A collective's identity as its row gives it (sim_coll.c): what the job matches collectives across ranks
 * by, read when the graph is built, so that the graph serves the job once its rank's model is gone. */
typedef struct hta_sim_coll {
    uint32_t edge;     /* its wait edge (HTA_CP_PEER_WAIT) */
    uint32_t pg;       /* `Process Group Name` (id in the graph's sym), UINT32_MAX: none, or not text */
    int64_t seq;       /* `Seq`, -1 */
    int64_t comms_id;  /* `Comms Id`, with has_id (an integer) */
    uint8_t has_id;
    uint8_t p2p, send; /* a send or recv, and which (PyTorch's keys, sim_coll.c) */
    int32_t peer;      /* a send's or recv's peer, global rank; -1: none named */
} hta_sim_coll;

struct hta_sim {
    hta_cp_graph *g;       /* owned; node times relative to g->origin_ns */
    size_t nrows;          /* the rank's rows (row -> event is each event's row, turned round where needed) */
    uint32_t *topo;        /* every node, in a topological order */
    uint32_t *pred_off;    /* in-edges of node v: pred_eid[pred_off[v] .. pred_off[v + 1]) */
    uint32_t *pred_eid;
    hta_sim_step *steps;
    size_t nsteps;
    int32_t *ev_step;      /* each event's ProfilerStep (the rank's iteration), -1 for none */
    size_t sync_calls;     /* host syncs in the graph */
    size_t sync_records;   /* CUPTI sync records (cuda_sync) of the rank(s) */
    size_t host_waits;     /* host stretches without a call that waited for the GPU's queue to drain */
    size_t gpu_waits;      /* queued GPU work that waited for another stream's work, without a record */
    hta_sim_coll *coll;    /* per wait edge, in edge order */
    size_t ncoll;
};

/* Moves the steps onto the GPU timeline, as the report does where the GPU runs far behind the CPU
 * (docs/report.md, "The window"): step i from its GPU work's first operation to step i + 1's (the last to its
 * work's end).  1: moved; 0: the CPU steps stay (a step without GPU work, or the steps' GPU work
 * interleaved). */
int sim_gpu_steps(hta_sim *s);

/* Options of sim_weights, the rules' weights for the job's bounded engine (src/job/). */
typedef struct sim_wopts {
    const double *const *med; /* per rule: a median rule's factor per edge; NULL for a median rule of this
                               * rank: not known yet, the rule is counted as a hit and leaves the weights */
    size_t *hits;             /* per rule, added to: edges it selected; given, a rule that selects none is
                               * no error (it may select on another rank) */
    const uint32_t *mask_edge; /* edges whose rules are wanted: mask[i] for mask_edge[i], or'ed: bit k when */
    size_t nmask;              /* rule k selected it (rules < 64) */
    uint64_t *mask;
} sim_wopts;

/* hta_sim_weights with options (wo NULL: hta_sim_weights). */
hta_status sim_weights(const hta_sim *s, const hta_cpath_rule *rules, size_t nrules, const sim_wopts *wo,
                       int64_t *w, size_t *nchanged, hta_error *err);

/* The factor rank:R=median gives a key: the median of the other ranks' totals / rank R's (1 where R has
 * none).  Sorts others[]. */
double sim_median_factor(double *others, size_t n, double own);

/* The key rank:R=median compares an edge's time by (sim_run.c): its event's name and side, or untraced. */
uint64_t sim_median_key(const hta_sim *s, const hta_cp_edge *e);

/* The steps table's column (HTA_SIM_STEPS_*) of a path edge of class bound_by. */
int sim_step_column(const char *bound_by);

/* The job's overlay writer (sim_overlay.c). */
typedef struct sim_ow sim_ow;
typedef struct sim_flow {
    int64_t pid_u, tid_u, ts_u; /* the arrow's start: merged process (rank * 2 + GPU), thread, time */
    int64_t pid_v, tid_v, ts_v;
    int type;                   /* the path edge's type */
    int hop;                    /* its two ends are on different ranks */
} sim_flow;
/* Opens path (a temporary file until closed); times are written relative to t0. */
hta_status sim_ow_open(const char *path, int64_t t0, sim_ow **out, hta_error *err);
void sim_ow_rank(sim_ow *w, int32_t rank);          /* a rank's two process names (before any event) */
void sim_ow_event(sim_ow *w, const hta_cp_graph *g, const hta_cp_event *e, int32_t rank, int64_t start, int64_t end,
                  int crit);
void sim_ow_flow(sim_ow *w, const sim_flow *f);      /* the next path arrow (numbered in order) */
hta_status sim_ow_close(sim_ow *w, int ok);          /* ok 0: the file is dropped */

/* The --all-ranks tables' rows (sim_ranks.c). */
typedef struct sim_bl {
    int64_t step;
    int32_t rank;
    int64_t last, caused, waited;
} sim_bl;
int sim_coll_row(hta_table *tb, const char *pg, const char *kernel, int64_t seq, int64_t step, uint32_t n,
                 int32_t last_rank, int64_t wait, int64_t max_wait, int64_t tau);
int sim_hop_row(hta_table *tb, int64_t t, int64_t step, int32_t from, int32_t to, const char *kernel, const char *pg,
                int64_t seq);
/* Sorts v (per step, most caused first) and adds the blame table. */
hta_status sim_blame_table(sim_bl *v, size_t n, hta_result *out);

/* The transfer edge out of each collective's mid node: the mids are nodes the build adds beyond the events'
 * (g->nbase on), a few per rank, so the map is theirs alone: (*out)[v - nbase], UINT32_MAX for none (malloc'd).
 * sim_mid_transfer reads it for any node. */
hta_status sim_mid_map(const hta_cp_graph *g, uint32_t **out, hta_error *err);
static inline uint32_t sim_mid_transfer(const hta_cp_graph *g, const uint32_t *map, uint32_t v) {
    return v >= g->nbase ? map[v - g->nbase] : UINT32_MAX;
}

/* s->coll from rank r's rows, for the graph's collectives while it is built: the n wait edges (edge[i], in edge
 * order) and their events' rows (row[i]). */
hta_status sim_coll_read(hta_sim *s, const uint32_t *edge, const int32_t *row, size_t n, const hta_trace *t,
                         const hta_rank *r, hta_error *err);

/* Fills s->pred_off and pred_eid from s->g's edges (the graph's own in-edges are decide()'s, at build). */
hta_status sim_index(hta_sim *s, hta_error *err);
/* s->topo from the graph's edges and s->pred_off: Kahn's order, sources in node order (a cycle is an error). */
hta_status sim_topo(hta_sim *s, hta_error *err);
/* hta_sim_build; topo 0: without s->topo, for sim_topo once the rank's model is gone (its scratch then takes
 * the model's room: the job's kept graphs); release: hta_sim_build_release. */
hta_status sim_build(hta_ctx *ctx, size_t k, int topo, int release, hta_sim **out, hta_error *err);

/* Times from the simulation's own rules: the launch latency and the stream's gap
 * (defaults when a rank has no sample). */
#define SIM_DEFAULT_LAUNCH_NS 2000
#define SIM_DEFAULT_GAP_NS 1000
#define SIM_DEFAULT_SYNC_NS 2000

#endif
