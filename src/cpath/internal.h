/* Pieces shared by the critical-path files (not public). */
#ifndef HTA_CPATH_INTERNAL_H
#define HTA_CPATH_INTERNAL_H

#include "hta/cpath.h"
#include "hta/rawjson.h"

/* Edge set with networkx DiGraph semantics: adding an existing (u, v)
 * overwrites its attributes but keeps its position.  Duplicates are found
 * on the short list of u's out-edges; the few nodes with many out-edges
 * (sync sources) move to a hash table. */
typedef struct cp_edges {
    hta_cp_graph *g;
    size_t cap;
    uint32_t *head;  /* per node: newest out-edge, UINT32_MAX = none */
    uint8_t *deg;    /* per node: out-degree, saturating */
    uint32_t *next;  /* per edge: the node's previous out-edge */
    uint64_t *hkey; /* (u << 32 | v) + 1, 0 = empty */
    uint32_t *hval;
    size_t hmask, hused;
} cp_edges;

void cp_edges_init(cp_edges *s, hta_cp_graph *g);
void cp_edges_fini(cp_edges *s);
/* Room for n edges; call once g->nnode is known, before cp_edges_put. */
hta_status cp_edges_reserve(cp_edges *s, size_t n, hta_error *err);
/* Adds or overwrites (u, v). */
hta_status cp_edges_put(cp_edges *s, uint32_t u, uint32_t v, int type, int64_t w, int32_t attr, hta_error *err);

/* The edges of every node in edge order (a counting sort): by_dest, its in-edges, else its out-edges:
 * eid[off[k] .. off[k + 1]) (off: nn + 1 entries, eid: ne). */
void cp_adj_fill(const hta_cp_edge *e, size_t ne, size_t nn, int by_dest, uint32_t *off, uint32_t *eid);
/* The same over any array of ne records of `stride` bytes that open with the two node ids (u, v). */
void cp_adj_fill_recs(const void *e, size_t stride, size_t ne, size_t nn, int by_dest, uint32_t *off, uint32_t *eid);

/* The graph's threads and streams, each once (g->thr): the events name theirs by index. */
typedef struct cp_thrmap {
    uint32_t *slot; /* thread id + 1, 0: empty */
    size_t mask;
    uint32_t last;  /* the last one found: events come in runs of one thread */
} cp_thrmap;
/* *id = the index in g->thr of (pid, tid, stream), added if new. */
hta_status cp_thr_id(hta_cp_graph *g, cp_thrmap *m, int64_t pid, int64_t tid, int64_t stream, uint32_t *id,
                     hta_error *err);
void cp_thrmap_free(cp_thrmap *m);
/* An error unless n events fit a graph (HTA_CP_MAX_EVENTS). */
hta_status cp_check_events(size_t n, hta_error *err);
/* Each event's row of rank r (the rank it was built from), found by its event index: a simulation graph
 * keeps no rows.  The caller frees it.  HTA_EINVAL where an event's index is no row of r (another file). */
hta_status cp_ev_rows(const hta_cp_graph *g, const hta_rank *r, int32_t **out, hta_error *err);

/* Fills g->order from g->edge (first appearance, source before destination). */
hta_status cp_graph_order(hta_cp_graph *g, hta_error *err);
/* The summary table (hta_cpath_summary) from per-class sums: n classes present on the path. */
hta_status cp_summary_of(const char *const *names, const __int128 *sums, size_t n, const hta_table_def *d,
                         hta_result *out, hta_error *err);

/* A path step's time as sim_answer counts it: its stretch of schedule t, [t[node i], t[node i + 1]), cut at
 * from (the span's start), so that the tables add up to the span. */
typedef struct cp_clip {
    const int64_t *t;
    int64_t from;
} cp_clip;
/* hta_cpath_report and hta_cpath_summary with each path step's time from clip instead of an edge weight. */
hta_status cp_report_steps(const hta_cp_graph *g, const hta_cp_path *p, const cp_clip *clip,
                           const char *const *data_load, size_t ndata_load, size_t top, hta_result *out,
                           hta_error *err);
hta_status cp_summary_steps(const hta_cp_graph *g, const hta_cp_path *p, const cp_clip *clip,
                            const char *const *data_load, size_t ndata_load, const hta_table_def *d,
                            hta_result *out, hta_error *err);

/* Puts id's value (replacing the one it had); frees the map. */
hta_status cp_idmap_put(hta_cp_idmap *m, uint32_t id, int64_t val, hta_error *err);
void cp_idmap_free(hta_cp_idmap *m);

/* Sets edge e's weight (hta_cp_edge_w reads it back). */
hta_status cp_edge_set_w(hta_cp_graph *g, size_t e, int64_t w, hta_error *err);

/* Sets event x's end (a simulation graph's node 2x + 1) to ts, relative to origin_ns: the nesting's cut. */
hta_status cp_cut_set(hta_cp_graph *g, uint32_t x, int64_t ts, hta_error *err);

hta_status cp_note(hta_cp_graph *g, hta_error *err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));


/* malloc/calloc that ask for huge pages on big blocks (free with free()). */
void *cp_malloc(size_t n);
void *cp_calloc(size_t n, size_t size);
/* A big block written from its start as it fills (an array that grows to its room): huge pages asked for,
 * faulted as the writes reach them (2 MB at a time) rather than at once, so that what it replaces meanwhile
 * (the rows the build gives back) is gone before its end is touched. */
void *cp_malloc_filled(size_t n);

/* A glob match (* and ?) on the whole string. */
int cp_glob(const char *pat, const char *s);

/* What-if rules (rules.c): the selector kinds. */
enum { W_KERNEL, W_TYPE, W_OP, W_CPU, W_GPU, W_STREAM, W_EDGE, W_RANK };
/* The rule as the user writes it, in buf. */
const char *cp_rule_text(const hta_cpath_rule *r, char *buf, size_t n);

/* Rules on a graph (rules.c), the one place a rule is applied. */
typedef struct cp_rules_opts {
    const double *const *factor; /* per rule: a median rule's factor per edge (NULL: the rule's own) */
    int (*pending)(void *ctx, size_t k); /* a median rule without factors: 1 when they come later */
    void *ctx;
    size_t *hits;   /* per rule, added to: edges it selected; given, no match is no error here */
    const uint32_t *mask_edge; /* edges whose rules are wanted (rules < 64): mask[i] for mask_edge[i], or'ed */
    size_t nmask;              /* bit k when rule k selected it; a few edges (a rank's collectives' transfers) */
    uint64_t *mask;
} cp_rules_opts;
/* w (nedge) = the graph's weights under the rules, in order; *nchanged edges changed.  A rule that matches
 * nothing is an error (unless o->hits counts), as is a weight beyond the times hta holds. */
hta_status cp_rules_apply(const hta_cp_graph *g, const hta_cpath_rule *rules, size_t nrules, const cp_rules_opts *o,
                          int64_t *w, size_t *nchanged, hta_error *err);
/* The rule's action on one weight: set it, or scale it by f (the rule's factor, or a median's); beyond the
 * times hta holds is an error. */
hta_status cp_rule_scale(const hta_cpath_rule *r, double f, int64_t *w, hta_error *err);


#endif
