/* Running the simulation graph: rules to weights, the schedule, the critical path (hta/sim.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpath/sim_internal.h"
#include "hta/vocab.h"

void hta_sim_free(hta_sim *s) {
    if (!s) return;
    hta_cpath_free(s->g);
    free(s->ev_of_row);
    free(s->topo);
    free(s->pred_off);
    free(s->pred_eid);
    free(s->steps);
    free(s->ev_rank);
    free(s->ev_step);
    free(s->inst);
    free(s->part);
    free(s);
}

const hta_cp_graph *hta_sim_graph(const hta_sim *s) { return s->g; }
size_t hta_sim_nsteps(const hta_sim *s) { return s->nsteps; }
const hta_sim_step *hta_sim_steps(const hta_sim *s) { return s->steps; }
size_t hta_sim_joined(const hta_sim *s) { return s->ngroups; }

/* The rank whose work an edge is: its source node's event's. */
static int64_t edge_rank(const hta_sim *s, const hta_cp_edge *e) {
    return s->ev_rank ? s->ev_rank[s->g->node[e->u].ev] : s->g->rank;
}

/* rank:R=median compares like with like: the time of each event name (CPU or GPU side) in each step, and the
 * untraced time at the top of threads in each step. */
uint64_t sim_median_key(const hta_sim *s, const hta_cp_edge *e) {
    const hta_cp_graph *g = s->g;
    uint32_t x = e->attr >= 0 ? (uint32_t)e->attr : g->node[e->u].ev;
    uint64_t step = (uint32_t)(s->ev_step[x] + 2);
    if (e->type == HTA_CP_GAP || e->attr < 0) return (uint64_t)2 * hta_symtab_count(g->sym) << 32 | step;
    const hta_cp_event *ev = &g->ev[e->attr];
    return ((uint64_t)2 * ev->name + (ev->stream != -1)) << 32 | step;
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

/* Keys to dense indices: open addressing over the edges' keys. */
typedef struct kmap {
    uint64_t *k;
    uint32_t *v;
    size_t mask, n;
} kmap;

static long kmap_get(kmap *m, uint64_t key, int add) {
    size_t j = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 17) & m->mask;
    while (m->k[j] != UINT64_MAX) {
        if (m->k[j] == key) return m->v[j];
        j = (j + 1) & m->mask;
    }
    if (!add) return -1;
    m->k[j] = key;
    m->v[j] = (uint32_t)m->n;
    return (long)m->n++;
}

/* Per edge of rank R's work: the median over the other ranks of its key's total time / rank R's (1 where R
 * has none), the factor that makes rank R's work as long as the median rank's. */
static hta_status median_factors(const hta_sim *s, int32_t rank, double **out, hta_error *err) {
    const hta_cp_graph *g = s->g;
    if (!s->ev_rank)
        return hta_fail(err, HTA_EINVAL, "what-if rule 'rank:%d=median' needs every rank: --all-ranks", (int)rank);
    /* the ranks, in order of first appearance */
    int32_t *ids = NULL;
    size_t nr = 0;
    for (size_t x = 0; x < g->nev; x++) {
        if (nr && ids[nr - 1] == s->ev_rank[x]) continue;
        size_t j = 0;
        while (j < nr && ids[j] != s->ev_rank[x]) j++;
        if (j < nr) continue;
        int32_t *y = realloc(ids, (nr + 1) * sizeof *y);
        if (!y) {
            free(ids);
            return hta_oom(err);
        }
        ids = y;
        ids[nr++] = s->ev_rank[x];
    }
    size_t me = 0;
    while (me < nr && ids[me] != rank) me++;
    if (me == nr) {
        free(ids);
        return hta_fail(err, HTA_EINVAL, "what-if rule 'rank:%d=median': no rank %d in the trace", (int)rank,
                        (int)rank);
    }
    size_t cap = 64;
    while (cap < 2 * g->nedge + 2) cap <<= 1;
    kmap m = {malloc(cap * sizeof *m.k), malloc(cap * sizeof *m.v), cap - 1, 0};
    /* totals in integer ns: exact whatever the order of the sums (the job's bounded engine adds the same
     * edges rank by rank, sim_job_*.c) */
    int64_t *tot = NULL;
    double *col = malloc(nr * sizeof *col), *f = malloc((g->nedge ? g->nedge : 1) * sizeof *f);
    uint32_t *key = malloc((g->nedge ? g->nedge : 1) * sizeof *key);
    hta_status st = HTA_OK;
    if (!m.k || !m.v || !col || !f || !key) goto oom;
    memset(m.k, 0xff, cap * sizeof *m.k);
    for (size_t i = 0; i < g->nedge; i++) {
        const hta_cp_edge *e = &g->edge[i];
        key[i] = UINT32_MAX;
        if (e->type == HTA_CP_OPERATOR || e->type == HTA_CP_GAP) key[i] = (uint32_t)kmap_get(&m, sim_median_key(s, e), 1);
    }
    tot = calloc(nr * (m.n ? m.n : 1), sizeof *tot);
    if (!tot) goto oom;
    for (size_t i = 0; i < g->nedge; i++) {
        if (key[i] == UINT32_MAX) continue;
        int64_t r = edge_rank(s, &g->edge[i]);
        size_t j = 0;
        while (j < nr && ids[j] != r) j++;
        if (j < nr) tot[j * m.n + key[i]] += g->edge[i].w;
    }
    double *fk = malloc((m.n ? m.n : 1) * sizeof *fk);
    if (!fk) goto oom;
    for (size_t k = 0; k < m.n; k++) {
        /* the median of the other ranks (with two ranks: the other one) */
        size_t no = 0;
        for (size_t j = 0; j < nr; j++)
            if (j != me) col[no++] = (double)tot[j * m.n + k];
        fk[k] = sim_median_factor(col, no, (double)tot[me * m.n + k]);
    }
    for (size_t i = 0; i < g->nedge; i++) f[i] = key[i] == UINT32_MAX ? 1.0 : fk[key[i]];
    free(fk);
    *out = f;
    f = NULL;
    goto done;
oom:
    st = hta_oom(err);
done:
    free(ids);
    free(m.k);
    free(m.v);
    free(tot);
    free(col);
    free(f);
    free(key);
    return st;
}

/* Whether the graph holds work of rank `rank` (one rank's graph: whether it is that rank). */
static int edge_rank_is(const hta_sim *s, int64_t rank) { return !s->ev_rank && s->g->rank == rank; }

int32_t hta_sim_edge_rank(const hta_sim *s, size_t e) { return (int32_t)edge_rank(s, &s->g->edge[e]); }

hta_status hta_sim_weights(const hta_sim *s, const hta_cpath_rule *rules, size_t nrules, int64_t *w,
                           size_t *nchanged, hta_error *err) {
    return sim_weights(s, rules, nrules, NULL, w, nchanged, err);
}

typedef struct wctx {
    const hta_sim *s;
    const hta_cpath_rule *rules;
    const sim_wopts *wo;
} wctx;

static int64_t rank_of(void *ctx, const hta_cp_edge *e) { return edge_rank(((wctx *)ctx)->s, e); }

/* A median rule of this rank while the job's first pass has no factors yet. */
static int pending(void *ctx, size_t k) {
    const wctx *c = ctx;
    return c->wo && c->wo->med && edge_rank_is(c->s, c->rules[k].num);
}

/* The rules through the one rules module (rules.c); rank:R=median's factors per edge from the job (wo) or,
 * on a joined graph, from its ranks. */
hta_status sim_weights(const hta_sim *s, const hta_cpath_rule *rules, size_t nrules, const sim_wopts *wo,
                       int64_t *w, size_t *nchanged, hta_error *err) {
    double **own = calloc(nrules + 1, sizeof *own);
    const double **f = calloc(nrules + 1, sizeof *f);
    hta_status st = own && f ? HTA_OK : hta_oom(err);
    for (size_t k = 0; !st && k < nrules; k++) {
        if (!rules[k].median) continue;
        if (wo && wo->med) f[k] = wo->med[k];
        else if (!(st = median_factors(s, (int32_t)rules[k].num, &own[k], err))) f[k] = own[k];
    }
    wctx c = {s, rules, wo};
    cp_rules_opts o = {f, pending, rank_of, &c, wo ? wo->hits : NULL, wo ? wo->mask : NULL};
    if (!st) st = cp_rules_apply(s->g, rules, nrules, &o, w, nchanged, err);
    for (size_t k = 0; own && k < nrules; k++) free(own[k]);
    free(own);
    free(f);
    return st;
}

hta_status hta_sim_run(const hta_sim *s, const int64_t *w, int64_t *t, hta_error *err) {
    const hta_cp_graph *g = s->g;
    for (size_t i = 0; i < g->nnode; i++) {
        uint32_t v = s->topo[i];
        uint32_t a = s->pred_off[v], z = s->pred_off[v + 1];
        if (a == z) {
            t[v] = g->node[v].ts; /* a source keeps its time */
            continue;
        }
        int64_t best = INT64_MIN;
        for (uint32_t j = a; j < z; j++) {
            uint32_t e = s->pred_eid[j];
            int64_t d;
            if (__builtin_add_overflow(t[g->edge[e].u], w ? w[e] : g->edge[e].w, &d) || d > HTA_TIME_MAX_NS)
                return hta_fail(err, HTA_EINVAL, "the simulated schedule has a time beyond the times hta holds "
                                                 "(|t| < 2^62 ns)");
            if (d > best) best = d;
        }
        t[v] = best;
    }
    return HTA_OK;
}

uint32_t hta_sim_last_node(const hta_sim *s, const int64_t *t) {
    uint32_t best = 0;
    for (uint32_t v = 1; v < s->g->nnode; v++)
        if (t[v] > t[best]) best = v;
    return best;
}

hta_status hta_sim_path(const hta_sim *s, const int64_t *w, const int64_t *t, uint32_t last, int64_t from,
                        hta_cp_path *p, hta_error *err) {
    const hta_cp_graph *g = s->g;
    memset(p, 0, sizeof *p);
    if (last >= g->nnode) return HTA_OK; /* an empty graph: an empty path */
    size_t cap = 64, n = 0;
    uint32_t *nodes = malloc(cap * sizeof *nodes), *edges = malloc(cap * sizeof *edges);
    if (!nodes || !edges) goto oom;
    uint32_t v = last;
    nodes[n] = v;
    for (;;) {
        if (t[v] <= from) break;
        uint32_t a = s->pred_off[v], z = s->pred_off[v + 1], pick = UINT32_MAX;
        /* the input that decided v's time: the first that reaches it, preferring one that is not a wait
         * (so the path names the work) */
        for (uint32_t j = a; j < z; j++) {
            uint32_t e = s->pred_eid[j];
            if (t[g->edge[e].u] + (w ? w[e] : g->edge[e].w) != t[v]) continue;
            if (pick == UINT32_MAX) pick = e;
        }
        if (pick == UINT32_MAX) break;
        if (n + 1 >= cap) {
            cap *= 2;
            uint32_t *x = realloc(nodes, cap * sizeof *x), *y = x ? realloc(edges, cap * sizeof *y) : NULL;
            if (!x) goto oom;
            nodes = x;
            if (!y) goto oom;
            edges = y;
        }
        edges[n] = pick;
        v = g->edge[pick].u;
        nodes[++n] = v;
    }
    n++;
    /* first to last */
    for (size_t i = 0, j = n - 1; i < j; i++, j--) {
        uint32_t x = nodes[i];
        nodes[i] = nodes[j];
        nodes[j] = x;
    }
    for (size_t i = 0, j = n >= 2 ? n - 2 : 0; n >= 2 && i < j; i++, j--) {
        uint32_t x = edges[i];
        edges[i] = edges[j];
        edges[j] = x;
    }
    p->node = nodes;
    p->edge = edges;
    p->n = n;
    p->length = t[last] - t[nodes[0]];
    return HTA_OK;
oom:
    free(nodes);
    free(edges);
    return hta_oom(err);
}
