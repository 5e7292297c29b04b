/* A rank's graph with its chains folded, for the skeleton's label passes (sj_chains, job/internal.h).
 *
 * Most nodes of a rank's simulation graph are links of a chain: an op after the one before it on its thread or
 * stream, one edge in and one edge out.  Such a node neither joins labels nor keeps them: the labels that leave
 * it are those that came in, each d moved by the edge's weight.  A label pass over every node (1.24 M on a
 * 250 MB rank, 87% of them links) spent most of its time on them, once per scenario and revisit.  Here the
 * links are folded once per visit of the rank: what is left are the nodes that join, keep, start, end or wait
 * (a tenth of them), joined by folded links, each the path of graph edges between two of them; per scenario a
 * link's weight is its edges' sum, with the least and largest partial sum, so that a pass checks every time
 * the path would have held (sj_add's bound) as the node-by-node pass did. */
#include <stdlib.h>
#include <string.h>

#include "job/internal.h"

void sj_chains_free(sj_chains *c) {
    free(c->node);
    free(c->in_off);
    free(c->from);
    free(c->tc);
    free(c->e_off);
    free(c->e);
    free(c->arr);
    free(c->flag);
    free(c->nsucc);
    free(c->ends);
    free(c->arr_of);
    free(c->knode);
    free(c->w);
    memset(c, 0, sizeof *c);
}

void sj_chains_drop(sj_chains **c) {
    if (!*c) return;
    sj_chains_free(*c);
    free(*c);
    *c = NULL;
}

/* In k[0 .. n) (ascending, id << 32 | collective), the last pair of id: its collective, else -1. */
static int32_t last_pair(const uint64_t *k, size_t n, uint32_t id) {
    size_t lo = 0, hi = n; /* the first key above id's */
    uint64_t top = (uint64_t)id << 32 | UINT32_MAX;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (k[m] <= top) lo = m + 1;
        else hi = m;
    }
    return lo && k[lo - 1] >> 32 == id ? (int32_t)(uint32_t)k[lo - 1] : -1;
}

HTA_QSORT_CMP(cmp_u64, uint64_t, HTA_CMP(*x, *y))

/* Per graph node, what the fold reads of it, one byte: a wait's mid node, kept, and its edges out (0, 1, or
 * 2 for two or more): one array where three were read at scattered nodes. */
enum { F_MID = 1, F_KEPT = 2, F_OUT1 = 4, F_OUTS = 12 };

/* The fold of s given its flags f per graph node; trk: the transfers (edge << 32 | collective, ascending);
 * c->knode: the kept nodes (collective arrivals, step boundaries, the run's end g->nnode), made the folded
 * graph's. */
static hta_status build(sj_chains *c, const hta_sim *s, const unsigned char *f, const uint64_t *trk, size_t ntr,
                        const uint32_t *pw_e, size_t ncoll, hta_error *err) {
    const hta_cp_graph *g = s->g;
    size_t nn = g->nnode;
    uint32_t *rid = malloc((nn ? nn : 1) * sizeof *rid), *back = NULL;
    uint64_t *link = calloc(nn / 64 + 1, sizeof *link); /* bits: the nodes that are links */
    hta_status st = HTA_OK;
    if (!rid || !link) goto oom;
    /* a link of a chain: one edge in, from a node that is no wait's mid node, and one edge out; neither kept
     * nor a mid node itself */
    size_t n = 0, nlink = 0;
    for (size_t v = 0; v < nn; v++) {
        uint32_t a = s->pred_off[v], z = s->pred_off[v + 1];
        int is = z - a == 1 && (f[v] & (F_OUTS | F_MID | F_KEPT)) == F_OUT1 &&
                 !(f[g->edge[s->pred_eid[a]].u] & F_MID);
        link[v / 64] |= (uint64_t)is << (v % 64);
        if (!is) n++, nlink += z - a;
    }
    c->n = n;
    c->nlink = nlink;
    c->node = malloc((n + 1) * sizeof *c->node);
    c->in_off = malloc((n + 2) * sizeof *c->in_off);
    c->from = malloc((nlink ? nlink : 1) * sizeof *c->from);
    c->tc = malloc((nlink ? nlink : 1) * sizeof *c->tc);
    c->e_off = malloc((nlink + 1) * sizeof *c->e_off);
    c->e = malloc((g->nedge ? g->nedge : 1) * sizeof *c->e);
    c->arr = malloc((n + 1) * sizeof *c->arr);
    c->flag = calloc(n + 1, 1);
    c->nsucc = calloc(n + 1, sizeof *c->nsucc);
    c->arr_of = malloc((ncoll ? ncoll : 1) * sizeof *c->arr_of);
    c->w = malloc((nlink ? nlink : 1) * 3 * sizeof *c->w);
    size_t cback = 64;
    back = malloc(cback * sizeof *back);
    if (!c->node || !c->in_off || !c->from || !c->tc || !c->e_off || !c->e || !c->arr || !c->flag || !c->nsucc ||
        !c->arr_of || !c->w || !back)
        goto oom;
    /* the folded graph's nodes in the graph's topological order */
    size_t i = 0;
    for (size_t t = 0; t < nn; t++) {
        uint32_t v = s->topo[t];
        if (link[v / 64] >> (v % 64) & 1) continue;
        rid[v] = (uint32_t)i;
        c->node[i] = v;
        c->arr[i] = -1;
        c->flag[i] = (f[v] & F_MID ? SJ_CH_MID : 0) | (f[v] & F_KEPT ? SJ_CH_KEPT : 0);
        i++;
    }
    c->node[n] = (uint32_t)nn; /* the run's end */
    c->arr[n] = -1;
    c->flag[n] = SJ_CH_KEPT;
    for (size_t q = 0; q < ncoll; q++) {
        uint32_t a = rid[g->edge[pw_e[q]].u]; /* an arrival is kept: a node of the folded graph */
        c->arr_of[q] = a;
        c->arr[a] = (int32_t)q; /* the last collective of that arrival, as the labels' lookup had it */
    }
    /* each node's links in, in the order of its edges in: each edge followed back through the chain's links
     * to the node it leaves from; every link of a chain is on exactly one such path, and every edge out of a
     * node begins one (so its links out count its edges out, LEFT_HUB from that many on) */
    size_t k = 0, ne = 0;
    for (i = 0; i < n; i++) {
        uint32_t v = c->node[i];
        c->in_off[i] = (uint32_t)k;
        for (uint32_t q = s->pred_off[v]; q < s->pred_off[v + 1]; q++) {
            uint32_t e = s->pred_eid[q];
            size_t nb = 0;
            for (;;) {
                if (nb == cback) {
                    uint32_t *y = realloc(back, 2 * cback * sizeof *y);
                    if (!y) goto oom;
                    back = y, cback *= 2;
                }
                back[nb++] = e;
                uint32_t u = g->edge[e].u;
                if (!(link[u / 64] >> (u % 64) & 1)) break;
                e = s->pred_eid[s->pred_off[u]];
            }
            uint32_t u = g->edge[e].u, from = rid[u];
            c->from[k] = from;
            if (c->nsucc[from] != LEFT_HUB) c->nsucc[from]++;
            /* from a wait's mid node: the transfer of its collective (one edge: a link never follows a mid
             * node); -2: an edge out of a mid node that is no transfer (the pass says so where it meets it) */
            c->tc[k] = -1;
            if (f[u] & F_MID) {
                int32_t tc = last_pair(trk, ntr, e);
                c->tc[k] = tc >= 0 ? tc : -2;
            }
            c->e_off[k] = (uint32_t)ne;
            while (nb) c->e[ne++] = back[--nb];
            k++;
        }
    }
    c->in_off[n] = (uint32_t)k;
    c->in_off[n + 1] = (uint32_t)k;
    c->e_off[k] = (uint32_t)ne;
    /* the run's end: the nodes no edge leaves (no mid node), in the graph's node order */
    size_t nend = 0;
    for (size_t v = 0; v < nn; v++) nend += !(f[v] & (F_OUTS | F_MID));
    if (!(c->ends = malloc((nend ? nend : 1) * sizeof *c->ends))) goto oom;
    for (size_t v = 0; v < nn; v++)
        if (!(f[v] & (F_OUTS | F_MID))) c->ends[c->nends++] = rid[v];
    for (size_t q = 0; q < c->nknode; q++) c->knode[q] = c->knode[q] < nn ? rid[c->knode[q]] : (uint32_t)n;
    if (st) { /* entered only by goto oom */
oom:
        st = hta_oom(err);
    }
    free(back);
    free(rid);
    free(link);
    return st;
}

hta_status sj_chains_build(sj_chains *c, const sj_rank *R, const hta_sim *s, const uint32_t *pw_e,
                           const uint32_t *tr_e, hta_error *err) {
    const hta_cp_graph *g = s->g;
    size_t nn = g->nnode ? g->nnode : 1;
    memset(c, 0, sizeof *c);
    c->nknode = R->ncoll + 2 * R->nsteps + 1;
    c->knode = malloc(c->nknode * sizeof *c->knode);
    uint64_t *trk = malloc((R->ncoll + 1) * sizeof *trk);
    unsigned char *f = calloc(nn + 1, 1);
    hta_status st = HTA_OK;
    if (!c->knode || !trk || !f) {
        st = hta_oom(err);
        goto done;
    }
    for (size_t i = 0; i < g->nedge; i++) {
        unsigned char *x = &f[g->edge[i].u];
        if ((*x & F_OUTS) != F_OUTS - F_OUT1) *x += F_OUT1; /* 0, 1, then 2: two or more */
    }
    size_t ntr = 0;
    for (size_t q = 0; q < R->ncoll; q++) {
        trk[ntr++] = (uint64_t)tr_e[q] << 32 | q;
        f[g->edge[tr_e[q]].u] |= F_MID;
        c->knode[q] = g->edge[pw_e[q]].u;
    }
    qsort(trk, ntr, sizeof *trk, cmp_u64);
    for (size_t i = 0; i < R->nsteps; i++)
        c->knode[R->ncoll + 2 * i] = R->steps[i].start, c->knode[R->ncoll + 2 * i + 1] = R->steps[i].end;
    c->knode[R->ncoll + 2 * R->nsteps] = (uint32_t)g->nnode; /* the run's end: every last node's labels */
    for (size_t i = 0; i < c->nknode; i++) f[c->knode[i]] |= F_KEPT;
    st = build(c, s, f, trk, ntr, pw_e, R->ncoll, err);
done:
    free(trk);
    free(f);
    if (st) sj_chains_free(c);
    return st;
}

/* x + y saturated at the int64 bounds: a partial sum beyond them is beyond any time added to it anyway */
static int64_t sat_add(int64_t x, int64_t y) {
    int64_t r;
    if (!__builtin_add_overflow(x, y, &r)) return r;
    return y > 0 ? INT64_MAX : INT64_MIN;
}

void sj_chains_weigh(sj_chains *c, const int64_t *w) {
    for (size_t k = 0; k < c->nlink; k++) {
        uint32_t a = c->e_off[k], z = c->e_off[k + 1];
        int64_t sum = w[c->e[a]], lo = sum, hi = sum;
        for (uint32_t q = a + 1; q < z; q++) {
            sum = sat_add(sum, w[c->e[q]]);
            if (sum < lo) lo = sum;
            if (sum > hi) hi = sum;
        }
        c->w[3 * k] = sum, c->w[3 * k + 1] = lo, c->w[3 * k + 2] = hi;
    }
}
