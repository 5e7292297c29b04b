/* Running the simulation graph: rules to weights, the schedule, the critical path (hta/sim.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/vec.h"
#include "cpath/sim_internal.h"
#include "hta/vocab.h"

void hta_sim_free(hta_sim *s) {
    if (!s) return;
    hta_cpath_free(s->g);
    free(s->topo);
    free(s->pred_off);
    free(s->pred_eid);
    free(s->steps);
    free(s->ev_step);
    free(s->coll);
    free(s);
}

const hta_cp_graph *hta_sim_graph(const hta_sim *s) { return s->g; }

size_t hta_sim_bytes(const hta_sim *s, hta_sim_mem *m) {
    const hta_cp_graph *g = s->g;
    hta_sim_mem x = {0};
    size_t nn = g->nnode;
    x.events = g->nev * sizeof *g->ev + g->nthr * sizeof *g->thr;
    x.nodes = (nn - g->nbase) * sizeof *g->node + (g->cut_bit ? (g->nev + 63) / 64 * sizeof *g->cut_bit : 0) +
              (g->cut.cap + g->wide.cap) * (sizeof *g->cut.id + sizeof *g->cut.val);
    x.edges = g->nedge * sizeof *g->edge;
    x.in_index = (s->pred_off ? (nn + 1) * sizeof *s->pred_off : 0) + (s->pred_eid ? g->nedge * sizeof *s->pred_eid : 0);
    x.order = s->topo ? nn * sizeof *s->topo : 0;
    x.parents = g->ev_parent ? g->nev * sizeof *g->ev_parent : 0;
    x.steps = (s->ev_step ? g->nev * sizeof *s->ev_step : 0) + s->nsteps * sizeof *s->steps;
    x.other = s->ncoll * sizeof *s->coll;
    x.nev = g->nev;
    if (m) *m = x;
    return x.events + x.nodes + x.edges + x.in_index + x.order + x.parents + x.steps + x.other;
}

/* rank:R=median compares like with like: the time of each event name (CPU or GPU side) in each step, and the
 * untraced time at the top of threads in each step. */
uint64_t sim_median_key(const hta_sim *s, const hta_cp_edge *e) {
    const hta_cp_graph *g = s->g;
    uint32_t x = e->attr >= 0 ? (uint32_t)e->attr : hta_cp_node_ev(g, e->u);
    uint64_t step = (uint32_t)(s->ev_step[x] + 2);
    if (e->type == HTA_CP_GAP || e->attr < 0) return (uint64_t)2 * hta_symtab_count(g->sym) << 32 | step;
    const hta_cp_event *ev = &g->ev[e->attr];
    return ((uint64_t)2 * ev->name + (hta_cp_ev_stream(g, ev) != -1)) << 32 | step;
}

static int cmp_dbl(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double sim_median_factor(double *others, size_t n, double own) {
    if (!n || own <= 0) return 1.0;
    if (n > 1) qsort(others, n, sizeof *others, cmp_dbl);
    return (n % 2 ? others[n / 2] : (others[n / 2 - 1] + others[n / 2]) / 2) / own;
}

hta_status hta_sim_weights(const hta_sim *s, const hta_cpath_rule *rules, size_t nrules, int64_t *w,
                           size_t *nchanged, hta_error *err) {
    return sim_weights(s, rules, nrules, NULL, w, nchanged, err);
}

typedef struct wctx {
    const hta_sim *s;
    const hta_cpath_rule *rules;
    const sim_wopts *wo;
} wctx;

/* A median rule of this rank while the job's first pass has no factors yet. */
static int pending(void *ctx, size_t k) {
    const wctx *c = ctx;
    return c->wo && c->wo->med && c->s->g->rank == c->rules[k].num;
}

/* The rules through the one rules module (rules.c); rank:R=median's factors per edge come from the job (wo):
 * the other ranks' times are not in one rank's graph. */
hta_status sim_weights(const hta_sim *s, const hta_cpath_rule *rules, size_t nrules, const sim_wopts *wo,
                       int64_t *w, size_t *nchanged, hta_error *err) {
    const double **f = calloc(nrules + 1, sizeof *f);
    hta_status st = f ? HTA_OK : hta_oom(err);
    for (size_t k = 0; !st && k < nrules; k++) {
        if (!rules[k].median) continue;
        if (wo && wo->med) f[k] = wo->med[k];
        else st = hta_fail(err, HTA_EINVAL, "what-if rule 'rank:%d=median' needs every rank: --all-ranks",
                           (int)rules[k].num);
    }
    wctx c = {s, rules, wo};
    cp_rules_opts o = {f, pending, &c, wo ? wo->hits : NULL, wo ? wo->mask_edge : NULL, wo ? wo->nmask : 0,
                       wo ? wo->mask : NULL};
    if (!st) st = cp_rules_apply(s->g, rules, nrules, &o, w, nchanged, err);
    free(f);
    return st;
}

hta_status hta_sim_run(const hta_sim *s, const int64_t *w, int64_t *t, hta_error *err) {
    const hta_cp_graph *g = s->g;
    for (size_t i = 0; i < g->nnode; i++) {
        uint32_t v = s->topo[i];
        uint32_t a = s->pred_off[v], z = s->pred_off[v + 1];
        if (a == z) {
            t[v] = hta_cp_node_ts(g, v); /* a source keeps its time */
            continue;
        }
        int64_t best = INT64_MIN;
        for (uint32_t j = a; j < z; j++) {
            uint32_t e = s->pred_eid[j];
            int64_t d;
            if (__builtin_add_overflow(t[g->edge[e].u], w ? w[e] : hta_cp_edge_w(g, e), &d) || d > HTA_TIME_MAX_NS)
                return hta_fail(err, HTA_EINVAL, "the simulated schedule has a time beyond the times hta holds "
                                                 "(|t| < 2^62 ns)");
            if (d > best) best = d;
        }
        t[v] = best;
    }
    return HTA_OK;
}

/* The input that decided v's time under w and t: the first in-edge that reaches it (UINT32_MAX: none). */
static uint32_t decided_by(const hta_sim *s, const int64_t *w, const int64_t *t, uint32_t v) {
    const hta_cp_graph *g = s->g;
    for (uint32_t j = s->pred_off[v]; j < s->pred_off[v + 1]; j++) {
        uint32_t e = s->pred_eid[j];
        if (t[g->edge[e].u] + (w ? w[e] : hta_cp_edge_w(g, e)) == t[v]) return e;
    }
    return UINT32_MAX;
}

hta_status hta_sim_path(const hta_sim *s, const int64_t *w, const int64_t *t, uint32_t last, int64_t from,
                        hta_cp_path *p, hta_error *err) {
    const hta_cp_graph *g = s->g;
    memset(p, 0, sizeof *p);
    if (last >= g->nnode) return HTA_OK; /* an empty graph: an empty path */
    /* Walked once, back from `last`, each deciding edge kept in a scratch that grows (a path's edges, 4
     * bytes each), then the arrays made at their size and filled from the end: a second walk repeated every
     * step's search of the inputs; doubling the path's own arrays sat at the report's peak with twice the
     * room. */
    size_t n = 1, cap = 0;
    uint32_t v = last, e, *walk = NULL;
    while (t[v] > from && (e = decided_by(s, w, t, v)) != UINT32_MAX) {
        if (HTA_GROW(walk, cap, n)) {
            free(walk);
            return hta_oom(err);
        }
        walk[n - 1] = e;
        v = g->edge[e].u, n++;
    }
    uint32_t *nodes = malloc(n * sizeof *nodes), *edges = malloc((n > 1 ? n - 1 : 1) * sizeof *edges);
    if (!nodes || !edges) {
        free(nodes);
        free(edges);
        free(walk);
        return hta_oom(err);
    }
    nodes[n - 1] = last;
    for (size_t i = n - 1; i > 0; i--) {
        edges[i - 1] = walk[n - 1 - i];
        nodes[i - 1] = g->edge[edges[i - 1]].u;
    }
    free(walk);
    p->node = nodes;
    p->edge = edges;
    p->n = n;
    p->length = t[last] - t[nodes[0]];
    return HTA_OK;
}
