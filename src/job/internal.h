/* The job's critical path in bounded memory (hta_job_*, hta/sim.h; docs/scaling.md "The critical path
 * across ranks"): the state its passes share (not public).
 *
 * The answer is that of the joined graph, a model never built: every rank's simulation graph joined at each
 * collective instance through a barrier node.  Instances are matched by PyTorch's Comms Id where every
 * collective kernel of a rank carries one, else by (process group, Seq), else by their order per process group
 * on each rank; a match is kept only with one kernel per rank, all of the same name.  In the joined graph a
 * rank's collective no longer waits a fixed time: it starts its transfer at the barrier, when the last rank has
 * arrived, and the transfer takes the instance's shortest kernel (the last arriver's, which did not wait).
 * Ranks' clocks are put on one base with the offsets their collectives' ends give.  The path at a barrier
 * goes on in the last arriver (the first of equals).  Here no two ranks' graphs are ever alive together
 * beyond the per-rank iteration's threads; a job of no more ranks than threads, where the passes would hold
 * them all at once anyway, keeps each rank's graph from its first pass to its last (sj_graph, j->graph)
 * instead of building it for each, and its rank's model only while the graph is built (sj_rank_keep):
 *
 *   1. skeleton (job/skeleton.c): each rank's graph is built and reduced to labels: at each collective's
 *      arrival node and each step's start and end node, the longest distance from each collective's end
 *      that reaches it (or from the rank's own sources), under each scenario's weights.  A collective's
 *      end is where the other ranks come in: its time is the barrier's time plus the rank's own rest.
 *      Labels that can never decide are pruned (a later collective's end always comes after them), so a
 *      node keeps a few;
 *   2. replay (job/replay.c): collectives are matched across ranks as the joined graph matches them,
 *      and every barrier's time follows, instance by instance, from the labels at its participants'
 *      arrivals: the joined graph's schedule at every arrival, collective end and step boundary;
 *   3. paths (job/paths.c): where paths are wanted, each rank's graph is built once more with its
 *      barriers as sources at their replayed times, which gives that rank's part of the joined schedule
 *      exactly; the critical path's pieces in that rank (from each arrival, step end and the rank's last
 *      node back to a barrier or a source) are summed per class, and the pieces are chained across ranks
 *      at the barriers (the last arriver rule); a piece cut at a time (a step's start) is one more
 *      visit of the ranks concerned.
 *
 * The passes over the ranks and the job's tables are job/passes.c's, the state they exchange among
 * processes job/wire.c's, a rank's graph for a pass job/graphs.c's, the graph with its chains folded for
 * the label passes job/chains.c's.  src/job/ calls src/cpath/ (the simulation graph, the rules, the tables'
 * rows), never the other way, and its files call one way: passes.c calls wire.c, replay.c, paths.c,
 * skeleton.c and chains.c (a kept graph's fold dropped); paths.c calls skeleton.c (sj_weights), replay.c
 * and wire.c call it for a skeleton's shared arrays (sj_skel_own, sj_skel_free); skeleton.c calls chains.c;
 * skeleton.c and paths.c take their graphs from graphs.c. */
#ifndef HTA_JOB_INTERNAL_H
#define HTA_JOB_INTERNAL_H

#include <pthread.h>

#include "cpath/sim_internal.h"
#include "hta/util.h"

/* A label: the longest distance to a node from collective `src`'s end (its time: that collective's
 * value), or from the rank's sources (src -1: d is then a time, the rank's own clock). */
/* Packed to 12 bytes (16 with the padding): a rank's skeleton keeps a few per collective arrival and step
 * boundary per scenario for the whole job, the largest of its per-rank bytes (docs/scaling.md). */
typedef struct __attribute__((packed, aligned(4))) sj_label {
    int32_t src;
    int64_t d;
} sj_label;

/* One collective of a rank: a kernel the build split into the wait for the other ranks and the transfer. */
typedef struct sj_coll {
    uint32_t pg;        /* process group name (job's symbols), UINT32_MAX: none */
    int kind;           /* key: SJ_KEY_* */
    int64_t seq;        /* Comms Id, Seq, or the order in its process group; SJ_KEY_P2P: the order of the
                         * pair's transfers in its group (the k-th send src->dst meets the k-th recv) */
    int32_t src, dst;   /* SJ_KEY_P2P: the sender's and the receiver's global ranks; -1 otherwise */
    uint32_t name;      /* kernel name (job's symbols) */
    int64_t ts, dur;    /* absolute ns on the rank's clock */
    int64_t step;       /* the rank's iteration, -1 */
    int64_t pw, tr;     /* the rank's own wait and transfer weights */
    int64_t stream;     /* the kernel's stream (the overlay's arrows) */
} sj_coll;

/* Order of key spaces: by group name, Comms Id, no group, then point-to-point pairs (last, so that the
 * collectives' instances keep their numbers whether a job has pairs or not). */
enum { SJ_KEY_PG, SJ_KEY_ID, SJ_KEY_NONE, SJ_KEY_P2P };

/* rank:R=median's totals of one rank: per (event name, side, step) the time of its edges in ns (collective
 * transfers left out: their weight is the job's, added in the replay).  A rank keeps them by the job's key
 * table (sj_rank.tv, hta_job.tkey); this is a total as a rank's pass makes it and the wire sends it. */
typedef struct sj_tot {
    uint64_t key;       /* sj_med_key(event name (job's symbols; UINT32_MAX: untraced time), side, step): what
                         * the totals are matched by */
    int64_t ns;
} sj_tot;

/* A kept label in 8 bytes (sj_skel.lab, sj_lab): its source + 1 in the top 16 bits, its d in the low 48
 * (signed: |d| < 39 hours); a label beyond either (a rank of 65534 collectives or more, a d that far) has
 * SJ_LAB_WIDE on top and its index in sj_skel.wide below.  Kept for every rank's collective arrivals and step
 * boundaries, per scenario: the largest of the job's per-rank bytes. */
#define SJ_LAB_WIDE 0xffffu
static inline uint64_t sj_lab_pack(int32_t src, int64_t d) {
    return (uint64_t)(uint32_t)(src + 1) << 48 | ((uint64_t)d & 0xffffffffffffull);
}
static inline int sj_lab_fits(int32_t src, int64_t d) {
    return src + 1 < (int32_t)SJ_LAB_WIDE && d >= -(INT64_C(1) << 47) && d < INT64_C(1) << 47;
}

/* One scenario's skeleton of one rank. */
typedef struct sj_skel {
    uint64_t *lab;      /* packed (above); sj_lab reads one */
    size_t nlab;
    sj_label *wide;     /* the labels that do not fit in 8 bytes */
    size_t nwide;
    uint32_t *a_off;    /* per collective c: its arrival's labels, lab[a_off[c] .. a_off[c + 1]) */
    uint32_t *s_off;    /* per step i: start lab[s_off[2i] .. s_off[2i+1]), end .. s_off[2i+2]); then the
                         * run's end (its last node): lab[s_off[2n] .. s_off[2n+1]) */
    int64_t *trw;       /* per collective: its transfer's weight under the scenario (NULL: the rank's own, as
                         * where no rule changed one: sj_trw) */
    uint64_t *trmask;   /* per collective: the rules that selected its transfer (NULL: none did: sj_trmask) */
    size_t *hits;       /* per rule: edges selected on this rank */
    size_t changed;     /* edges changed on this rank */
    int done;           /* computed (a median rule's rank waits for the factors) */
    /* Pruning (job/skeleton.c, "labels"): a node keeps its SJ_KEEP labels of largest reference value; each
     * label dropped is recorded against the best one kept, and the replay checks afterwards that none of
     * them could have decided (sj_check).  ref: per collective, the reference end time (the rank's absolute
     * clock) the pruning ranked by; given on a revisit (the last replay's times), else the rank's own
     * schedule.  pkey/pdef: the drops, per (dropped source, best source) the smallest margin. */
    int64_t *ref;
    int ref_given;
    size_t keep;        /* labels a node keeps: SJ_KEEP, doubled at each revisit */
    int rounds;         /* revisits for the pruning's sake */
    uint64_t *pkey;
    int64_t *pdef;
    size_t npair;
    /* A scenario (q > 0) whose rules change no edge of the rank, at its first visit: its labels are scenario
     * 0's (the same weights, the same reference), so lab, a_off, s_off, ref, pkey and pdef are scenario 0's,
     * shared, not copied (skel[0] owns them; sj_skel_own before either's change).  A report's causes each
     * touch a few ranks (the straggler's rule its rank alone): on 256 generated ranks, two of its four
     * scenarios' labels per rank. */
    int same;
} sj_skel;


/* Labels a node keeps at first (job/skeleton.c), and the revisits for the pruning's sake: each doubles the
 * labels kept; after the last, what a dropped label could still change is bounded and said (sj_check). */
#define SJ_KEEP 6
#define SJ_ROUNDS 3

typedef struct sj_rank {
    int present;        /* visited (a file of JSON without traceEvents is skipped) */
    int32_t rank;
    int64_t origin;     /* the rank's graph times + origin = absolute ns */
    int64_t first;      /* the run's start: its earliest node (absolute ns; INT64_MAX: no node) */
    sj_coll *coll;
    size_t ncoll;
    hta_sim_step *steps;
    size_t nsteps;
    /* rank:R=median's totals (only with a median rule; NULL: none): the ns of each key of the job's table in
     * its order, j->tkey[0 .. ntv) (the keys added since are 0 here), as variable-length integers (zigzag, 7
     * bits a byte: sj_tot_next): 2 to 3 bytes a total where the key is the job's once, read in order */
    unsigned char *tv;
    size_t ntv;
    size_t nev;
    size_t sync_calls, sync_records;
    sj_skel *skel;      /* per scenario (0: the trace's own weights) */
} sj_rank;

/* Label i of skeleton k. */
static inline sj_label sj_lab(const sj_skel *k, size_t i) {
    uint64_t x = k->lab[i];
    uint32_t s = (uint32_t)(x >> 48);
    if (s == SJ_LAB_WIDE) return k->wide[x & 0xffffffffffffull];
    return (sj_label){(int32_t)s - 1, (int64_t)(x << 16) >> 16};
}
/* Skeleton k's labels from v[0 .. n) (its lab and wide made anew).  -1: out of memory. */
int sj_lab_set(sj_skel *k, const sj_label *v, size_t n);

/* Collective c's transfer weight in scenario sk of rank R, and the rules that selected it. */
static inline int64_t sj_trw(const sj_rank *R, const sj_skel *sk, size_t c) {
    return sk->trw ? sk->trw[c] : R->coll[c].tr;
}
static inline uint64_t sj_trmask(const sj_skel *sk, size_t c) { return sk->trmask ? sk->trmask[c] : 0; }

/* The next of a rank's totals (sj_rank.tv), *p moved past it. */
static inline int64_t sj_tot_next(const unsigned char **p) {
    uint64_t z = 0;
    int sh = 0;
    const unsigned char *x = *p;
    do z |= (uint64_t)(*x & 0x7f) << sh, sh += 7;
    while (*x++ & 0x80);
    *p = x;
    return (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
}

/* k shares b's labels, offsets, reference and drops (b: scenario 0's, its own). */
void sj_skel_share(sj_skel *k, const sj_skel *b);
/* What k owns freed (not the arrays it shares with scenario 0: sj_skel.same). */
void sj_skel_free(sj_skel *k);
/* Before scenario q's shared arrays change (a revisit's reference): its own copies of them; q = 0: every
 * scenario that shares them takes its copies first.  -1: out of memory (nothing shared is then changed). */
int sj_skel_own(sj_rank *R, size_t nscn, size_t q);

/* rank:R=median's factors: sorted by key (sj_med_key). */
typedef struct sj_med {
    uint64_t *key;
    double *f;
    size_t n;
} sj_med;
static inline uint64_t sj_med_key(uint32_t name, int gpu, int64_t step) {
    return (uint64_t)name << 33 | (uint64_t)(gpu != 0) << 32 | (uint32_t)(step + 2);
}
/* A total's name, side and step back from its key (the wire sends them apart).  The key keeps 31 bits of the
 * name: the job's symbols never number 2^31 - 1, so that value is UINT32_MAX's. */
static inline uint32_t sj_tot_name(const sj_tot *t) {
    uint32_t n = (uint32_t)(t->key >> 33);
    return n == 0x7fffffffu ? UINT32_MAX : n;
}
static inline int sj_tot_gpu(const sj_tot *t) { return (int)(t->key >> 32 & 1); }
static inline int64_t sj_tot_step(const sj_tot *t) { return (int64_t)(uint32_t)t->key - 2; }

/* A scenario as the engine runs it. */
typedef struct sj_scn {
    const hta_cpath_rule *rules;
    size_t nrules;
    const unsigned char *on;   /* per rank position: the rules apply there (NULL: every rank) */
    int lenient;               /* a rule that matches nothing is no error */
    struct sj_med **med;       /* per rule: rank:R=median's factors by (name, side, step) of rank R */
} sj_scn;

/* A collective instance of the job: matched across ranks, or one rank's alone (not matched). */
typedef struct sj_inst {
    uint32_t pg;
    int kind;
    int64_t seq;
    int64_t step;
    uint32_t first, n;  /* participants: job->part[first .. first + n) */
    int matched;
    int64_t tau;        /* matched: the transfer (the shortest kernel) */
    int64_t arrive;     /* matched: the latest start on the job's clock */
} sj_inst;

typedef struct sj_part {
    uint32_t rank;      /* position */
    uint32_t coll;      /* the rank's collective */
} sj_part;

/* A rank's graph kept between passes (sj_graph_get): as built, until the first path pass joins it at its
 * barriers (sj_rank_graph), which every later pass then uses as it is.  info: sj_rank_keep found what the
 * skeleton reads from the rank (pw_edge, tr_edge: each collective's wait and transfer edge), so that no
 * later pass needs the rank's context (a graph holds no pointer into its context). */
typedef struct sj_graph {
    hta_sim *s;
    int joined;
    uint32_t stub_first;
    int info;
    uint32_t *pw_edge, *tr_edge;
    struct sj_chains *ch; /* the graph folded for the label passes (job/chains.c): built at its first
                           * skeleton pass, dropped after the last (the revisits fold the same graph) */
} sj_graph;

struct hta_job {
    sj_rank *r;
    size_t nr;
    hta_symtab *sym;    /* names of every rank's collectives and totals */
    pthread_mutex_t lock; /* around sym while ranks are visited in threads */
    sj_scn *scn;        /* 0: the trace's own weights */
    size_t nscn;
    int want_tot;
    /* rank:R=median's keys (sj_med_key), every rank's, once for the job, in the order first met (the ranks'
     * totals are by index here, sj_rank.tv); tslot: open addressing over them (index + 1; 0: empty).  Under
     * lock while ranks are visited in threads. */
    uint64_t *tkey;
    uint32_t *tslot;
    size_t ntkey, ctkey, tcap;
    const char *const *data_load;
    size_t ndata_load;
    const char *overlay;
    int gpu_steps;      /* the steps on the GPU timeline (sim_gpu_steps) after every build of a rank's graph */
    sj_graph *graph;    /* per position: its graph kept between passes, where the ranks stay loaded (each
                         * built once instead of once per pass); NULL: every pass builds and frees its own */
    /* replay */
    int64_t *delta;     /* per rank: its clock's offset against the first rank's (collectives' ends) */
    sj_inst *inst;
    size_t ninst, nmatched;
    size_t np2p;        /* of the matched instances: point-to-point pairs (SJ_KEY_P2P) */
    sj_part *part;
    uint32_t **inst_of; /* per rank, per collective: its instance */
    uint32_t *order;    /* instances in an order of their dependencies */
    /* per scenario: per rank, per collective: arrival and end time; barrier per instance; steps */
    int64_t ***arr, ***end;
    int64_t **bar;
    int64_t ***step_t;  /* per scenario, rank: 2 per step (start, end), then the run's end */
    size_t revisits;    /* rank visits again for the pruning's check (sj_check) */
    int64_t inexact_ns; /* the most a dropped label could move a time after the last round (0: exact) */
};

/* A rank's graph with its chains folded (job/chains.c), for the skeleton's label passes: the nodes that are
 * no link of a chain (a link: one edge in, from no wait's mid node, one edge out, neither kept nor a mid
 * node), in the graph's topological order, index n being the run's end; a folded link is the path of graph
 * edges from one of them to the next. */
enum { SJ_CH_MID = 1, SJ_CH_KEPT = 2 };
/* A count of edges out (sj_chains.nsucc, the label pass's left) that stopped counting: that many or more. */
#define LEFT_HUB UINT16_MAX
typedef struct sj_chains {
    size_t n;           /* nodes; n: the run's end */
    uint32_t *node;     /* per node: the graph's node (n: g->nnode) */
    uint32_t *in_off;   /* per node i: its links in, in_off[i] .. in_off[i + 1] (in its edges' order) */
    size_t nlink;
    uint32_t *from;     /* per link: the node it leaves */
    int32_t *tc;        /* per link from a mid node: the collective whose transfer it is (-2: no transfer) */
    uint32_t *e_off;    /* per link: its graph edges e[e_off[k] .. e_off[k + 1]), first to last */
    uint32_t *e;
    int32_t *arr;       /* per node: the (last) collective it is the arrival of, -1 */
    unsigned char *flag; /* per node: SJ_CH_* */
    uint16_t *nsucc;    /* per node: the graph's edges out of it (LEFT_HUB: that many or more) */
    uint32_t *ends;     /* the nodes no edge leaves, no mid node, in the graph's node order */
    size_t nends;
    uint32_t *arr_of;   /* per collective: its arrival's node */
    uint32_t *knode;    /* the nodes whose labels the skeleton keeps: per collective its arrival, per step
                         * its start and end, then the run's end (n) */
    size_t nknode;
    int64_t *w;         /* per link, under a scenario's weights (sj_chains_weigh): 3 per link, its weight
                         * and the least and largest of its partial sums (saturated) */
} sj_chains;
/* Rank R's graph s folded for its label passes (pw_e, tr_e: each collective's wait and transfer edge; a job of
 * more than one rank: each wait is cut from its transfer at a mid node). */
hta_status sj_chains_build(sj_chains *c, const sj_rank *R, const hta_sim *s, const uint32_t *pw_e,
                           const uint32_t *tr_e, hta_error *err);
/* The links' weights under the graph's edge weights w. */
void sj_chains_weigh(sj_chains *c, const int64_t *w);
void sj_chains_free(sj_chains *c);
/* *c freed (a kept graph's, malloc'd) and NULL. */
void sj_chains_drop(sj_chains **c);

/* a + b when it is a time the model holds (|t| <= HTA_TIME_MAX_NS): 1 and *out, else 0.  Every time and
 * delay of the job engine is kept within that bound, so two of them never overflow an int64 when added; a
 * what-if whose schedule leaves it is refused (SJ_BEYOND) rather than wrapped. */
static inline int sj_add(int64_t a, int64_t b, int64_t *out) {
    int64_t x;
    if (__builtin_add_overflow(a, b, &x) || x > HTA_TIME_MAX_NS || x < -HTA_TIME_MAX_NS) return 0;
    *out = x;
    return 1;
}
#define SJ_BEYOND "the simulated schedule has a time beyond the times hta holds (|t| < 2^62 ns)"

/* job's clock of rank k: absolute ns - delta */
static inline int64_t sj_off(const struct hta_job *j, size_t k) { return j->r[k].origin - j->delta[k]; }

/* The context's rank k's (position pos) simulation graph as every pass of the job builds it (its steps on the
 * GPU timeline where the job says so, j->gpu_steps): the kept one where the job keeps graphs (j->graph), else
 * a new one.  joined 0: as built (the skeleton's passes); a kept graph already joined is then not given,
 * a new one is.  A graph to keep is the one the caller left with the context (hta_ctx_leave: the report's
 * part built it, and released the rows), else built, releasing the rows where release is set (the keep
 * pass: its contexts go after it).  Given back with sj_graph_put, which frees it unless it is kept. */
hta_status sj_graph_get(struct hta_job *j, hta_ctx *ctx, size_t k, size_t pos, int joined, int release,
                        hta_sim **out, hta_error *err);
void sj_graph_put(struct hta_job *j, size_t pos, hta_sim *s);
/* Pass 1 where graphs are kept (j->graph): rank pos's graph built from the context's rank k and kept, with
 * what the job keeps of the rank (sj_rank) and what the skeleton reads from it; the context may go after. */
hta_status sj_rank_keep(struct hta_job *j, hta_ctx *ctx, size_t k, size_t pos, hta_error *err);
/* Pass 1: the skeleton of the context's rank k (position pos) for every scenario (the kept graph, without
 * the context, after sj_rank_keep). */
hta_status sj_skeleton(struct hta_job *j, hta_ctx *ctx, size_t k, size_t pos, int revisit, hta_error *err);
/* Rank pos's weights w under scenario scn (hits; mask for the nmask edges mask_edge: sim_wopts); *pending when
 * a median rule of this rank has no factors yet (its rule then leaves the weights). */
hta_status sj_weights(struct hta_job *j, const hta_sim *s, size_t pos, size_t scn, int64_t *w, size_t *hits,
                      const uint32_t *mask_edge, size_t nmask, uint64_t *mask, size_t *changed, int *pending,
                      hta_error *err);

/* The replay: matching (once), then every scenario's schedule at the skeleton's nodes. */
hta_status sj_match(struct hta_job *j, hta_error *err);
hta_status sj_replay(struct hta_job *j, size_t scn, hta_error *err);
/* After sj_replay(scn): the ranks whose pruning could have dropped a label that decides under the replayed
 * times; each is marked for a revisit with those times as its reference and twice the labels, until
 * SJ_ROUNDS revisits.  again[0 .. *n): their positions.  After the last round, j->inexact_ns: the most a
 * dropped label could still move a time (0: the replay is exact). */
hta_status sj_check(struct hta_job *j, size_t scn, size_t *again, size_t *n, hta_error *err);
/* Rank R's totals from t[0 .. n) (R's own keys): the keys added to the job's table where new (under the job's
 * lock), the values by key index.  -1: out of memory; 1: a key twice with a time (a damaged message). */
int sj_tot_set(struct hta_job *j, sj_rank *R, const sj_tot *t, size_t n);
/* The job's key table emptied, every rank's totals with it (the wire's renaming: the keys hold names' ids). */
void sj_tot_reset(struct hta_job *j);
void sj_tot_free(sj_rank *R);
/* rank:R=median's factors from every rank's totals (after the first pass, before the revisit). */
hta_status sj_median(struct hta_job *j, hta_error *err);

/* ---- pass 3: paths ---- */

/* Path pieces summed per class (the summary's bound_by classes, the steps table's columns). */
enum { SJ_NCLS = 8 };
typedef struct sj_acc {
    __int128 cls[SJ_NCLS];  /* summed weights per bound_by class (sj_class_names order) */
    int64_t col[SJ_NCLS];   /* positive time per steps-table column */
    uint32_t present;       /* classes with an edge on the path */
    size_t edges;
} sj_acc;
extern const char *const sj_class_names[SJ_NCLS];

/* A walk back from a node: where it stopped (a barrier: inst >= 0; a source: -1; cut: at or before
 * the time asked), the time there, and what it passed. */
typedef struct sj_piece {
    sj_acc acc;
    int64_t inst;       /* the barrier it reached (the joined graph's next node), -1 */
    int64_t t0, t1;     /* the job's times where it stopped and where it started */
    int cut;            /* stopped because of the time asked */
} sj_piece;

/* A walk to do in pass 3: from node (kind, index) of rank pos, under scenario scn, back to time `from`. */
enum { SJ_AT_ARRIVAL, SJ_AT_STEP_END, SJ_AT_LAST };
typedef struct sj_query {
    uint32_t pos;
    uint32_t scn;
    int at;
    uint32_t idx;       /* collective or step */
    int64_t from;       /* job's clock; INT64_MIN: to a barrier or a source */
    sj_piece out;
    int64_t last_t;     /* SJ_AT_LAST: the rank's latest node time; first node: */
    uint32_t last_node;
    int64_t min_t;      /* the rank's earliest node time */
} sj_query;

/* The rank's graph as the joined graph has it: matched waits split at a barrier source (stub nodes, one per
 * matched collective in order, the graph's nodes from stub_first); arrival[c]: collective c's arrival.
 * sj_rank_times sets the barriers' replayed times and the weights w of scenario scn and runs the schedule t
 * (the rank's clock), checked against the replay; the graph is built once for every scenario. */
typedef struct sj_rank_graph_t {
    struct hta_job *j;
    size_t pos;
    hta_sim *s;
    int64_t *w, *t;
    uint32_t stub_first;
    uint32_t *arrival;
    size_t scn;         /* the scenario of w and t (SIZE_MAX: none yet) */
} sj_rank_graph_t;
hta_status sj_rank_graph(struct hta_job *j, hta_ctx *ctx, size_t k, size_t pos, sj_rank_graph_t *rg,
                         hta_error *err);
hta_status sj_rank_times(struct hta_job *j, sj_rank_graph_t *rg, size_t pos, size_t scn, hta_error *err);
void sj_rank_graph_free(sj_rank_graph_t *rg);

/* A walk back through a rank's schedule (sj_walk), as hta_sim_path walks. */
typedef struct sj_walker {
    const hta_sim *s;
    const int64_t *w, *t;
    int64_t off;
    uint32_t stub_first;
    const uint32_t *stub_inst; /* per stub: its instance */
    hta_cp_bb *bb;             /* bound_by of s's edges, with the job's data-loading names */
    signed char *cls;          /* per edge: its class, -1 not yet */
    void (*edge)(void *ctx, uint32_t e); /* each edge walked, or NULL */
    void *ctx;
} sj_walker;
/* From node v back to a stub (a barrier), a source, or the first node at or before `from`. */
void sj_walk(sj_walker *k, uint32_t v, int64_t from, sj_piece *out);

/* Answers the queries of the context's rank k (position pos), sorted by pos: q[0 .. n). */
hta_status sj_local(struct hta_job *j, hta_ctx *ctx, size_t k, size_t pos, sj_query *q, size_t n,
                    hta_error *err);

/* ---- the passes shared among processes (hta_job_dist; job/wire.c) ----
 *
 * Each process visits its share of a pass's ranks; then every process sends what the pass produced for its
 * ranks (the whole rank state after a skeleton pass or a revisit, the answers of the ranks' path queries),
 * with its status, and every process takes everyone's into its job: all hold the same job after every pass,
 * so what runs between passes (matching, replay, the check) runs the same everywhere.  A failure anywhere
 * goes with the next exchange, which every process then returns (the first in rank order, as one process
 * meets it); a process that fails between exchanges says so in one last exchange (sj_exch_end). */
enum { SJ_WIRE_NONE, SJ_WIRE_RANK, SJ_WIRE_QUERY, SJ_WIRE_ROOT }; /* what a pass exchanges per rank; ROOT: the
                                                                   * root's alone, no exchange (the overlay) */
typedef struct sj_wire {
    int kind;
    sj_query *q;             /* SJ_WIRE_QUERY: the queries, sorted by position; first[p]: position p's */
    const size_t *first;
} sj_wire;

typedef struct sj_exch {
    const hta_job_dist *d;
    size_t nr;
    unsigned char *own;      /* per position: this process's share */
    int agreed;              /* every process knows of the failure: no more exchanges */
    int renamed;             /* the names were interned again in exchange order, the same in every process */
    size_t *visits;          /* per process: ranks it visited, every pass summed */
    char ***warn;            /* per position: the loaders' warnings of the first pass, until given */
    size_t *nwarn;
} sj_exch;

hta_status sj_exch_init(sj_exch *x, const hta_job_dist *d, const hta_rank_plan *p, hta_error *err);
void sj_exch_free(sj_exch *x);
/* This process's share of which[0 .. n): *mine (malloc'd), *nm. */
hta_status sj_exch_mine(const sj_exch *x, const size_t *which, size_t n, size_t **mine, size_t *nm, hta_error *err);
/* A warning of the loader for position pos (kept until the exchange gives it). */
void sj_exch_warn(sj_exch *x, size_t pos, const char *msg);
/* After this process's visit of mine[0 .. n) with status st (*failed, *in_load as hta_ctx_each_rank gives
 * them): every process's results into j, the kept warnings through warn (NULL: none) in rank order, and the
 * run's failure (the one first in rank order) in every process.  Collective. */
hta_status sj_exchange(struct hta_job *j, sj_exch *x, const sj_wire *w, const size_t *mine, size_t n,
                       hta_status st, size_t *failed, int *in_load, void (*warn)(void *, const char *),
                       void *warn_ctx, hta_error *err);
/* The run's end: its status st agreed by every process (unless a failure already was).  Collective. */
hta_status sj_exch_end(sj_exch *x, hta_status st, size_t *failed, int *in_load, hta_error *err);

/* The root's job options as the other processes receive them (hta_job_follow): o points into the arrays. */
typedef struct sj_opts {
    int run;                /* 0: the root runs no job */
    hta_job_opts o;
    hta_job_scenario *scn;
    hta_cpath_rule *rules;  /* every scenario's, in order */
    size_t nrules;
    char **dl;
} sj_opts;
/* o's scenarios, data_load, paths, gpu_steps and threads (NULL: no job) as bytes, for a job of nr ranks. */
void sj_opts_pack(hta_bytes *b, const hta_job_opts *o, size_t nr);
hta_status sj_opts_unpack(const char *p, size_t n, size_t nr, sj_opts *f, hta_error *err);
void sj_opts_free(sj_opts *f);

#endif
