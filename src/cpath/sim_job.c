/* The simulation graph of a whole job (hta_sim_build_job): every rank's graph, joined at each collective
 * instance through a barrier node (docs/critical-path.md, "Across ranks";
 * ../shared/design/multirank-critical-path.md §3).
 *
 * Instances are matched by PyTorch's Comms Id where every collective kernel of a rank carries one, else by
 * (process group, Seq), else by their order per process group on each rank; a match is kept only with one kernel per rank, all of the same name.  In the
 * joined graph a rank's collective no longer waits a fixed time: it starts its transfer at the barrier,
 * when the last rank has arrived (the wait is whatever that leaves), and the transfer takes the
 * instance's shortest kernel (the last arriver's, which did not wait).  Ranks' clocks are put on one
 * base with the offsets their collectives' ends give (all ranks end a collective together), which only
 * matters for where the barrier falls in the baseline, never for a match. */
#include <stdlib.h>
#include <string.h>

#include "cpath/sim_internal.h"
#include "hta/vocab.h"

typedef struct cinst {
    uint32_t pg;     /* symbol of the process group name, UINT32_MAX: none */
    int64_t seq;     /* Seq, or the ordinal on its rank within the group */
    uint32_t rank;   /* position of the rank in the context */
    uint32_t ev;     /* the kernel, an event of the rank's graph */
    uint32_t name;   /* kernel name (trace symbol) */
} cinst;

static int cmp_cinst(const void *a, const void *b) {
    const cinst *x = a, *y = b;
    if (x->pg != y->pg) return x->pg < y->pg ? -1 : 1;
    if (x->seq != y->seq) return x->seq < y->seq ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The collectives of rank k's graph: kernels whose time the build split into wait and transfer. */
static hta_status collectives(hta_ctx *ctx, size_t k, const hta_sim *s, cinst **v, size_t *n, size_t *cap,
                              hta_error *err) {
    const hta_trace *t = ctx->trace;
    const hta_rank *r = t->ranks[k];
    const hta_cp_graph *g = s->g;
    int64_t ord = 0;
    int has_seq = 1, has_id = 1;
    size_t first = *n;
    /* PyTorch's "Comms Id": one hash of (group, seq, p2p, ranks) on every participant, the first key */
    int64_t cid_sym = t->arg_sym[HTA_ARG_COMMS_ID];
    for (size_t i = 0; i < g->nedge; i++) {
        const hta_cp_edge *e = &g->edge[i];
        if (e->type != HTA_CP_PEER_WAIT) continue;
        if (*n == *cap) {
            size_t nc = *cap ? 2 * *cap : 1024;
            cinst *x = realloc(*v, nc * sizeof *x);
            if (!x) return hta_oom(err);
            *v = x;
            *cap = nc;
        }
        uint32_t row = (uint32_t)g->ev[e->attr].row;
        const hta_arg *pga = t->arg_sym[HTA_ARG_PG_NAME] >= 0 ? hta_row_arg(r, row, t->arg_sym[HTA_ARG_PG_NAME]) : NULL;
        int64_t seq = hta_row_arg_int(t, r, row, HTA_ARG_SEQ, -1);
        if (seq < 0) has_seq = 0;
        const hta_arg *cid = cid_sym >= 0 ? hta_row_arg(r, row, cid_sym) : NULL;
        if (!cid || cid->type != HTA_V_INT) has_id = 0;
        (*v)[(*n)++] = (cinst){pga && pga->type == HTA_V_STR ? pga->v.sym : UINT32_MAX, seq, (uint32_t)k,
                               (uint32_t)e->attr, r->name[row]};
    }
    if (has_id && *n > first) {
        for (size_t i = first; i < *n; i++) {
            const hta_arg *cid = hta_row_arg(r, (uint32_t)g->ev[(*v)[i].ev].row, cid_sym);
            (*v)[i].pg = UINT32_MAX - 1; /* one key space of its own */
            (*v)[i].seq = cid->v.i;
        }
        return HTA_OK;
    }
    /* without Seq on every kernel: the order of the kernels per process group (edges come in track order,
     * one NCCL stream per group in practice; sort by start to be sure) */
    if (!has_seq) {
        for (size_t i = first; i < *n; i++) (*v)[i].seq = g->ev[(*v)[i].ev].ts;
        if (*n - first > 1) qsort(*v + first, *n - first, sizeof **v, cmp_cinst);
        for (size_t i = first; i < *n; i++) {
            if (i > first && (*v)[i].pg != (*v)[i - 1].pg) ord = 0;
            (*v)[i].seq = ord++;
        }
    }
    return HTA_OK;
}

hta_status hta_sim_build_job(hta_ctx *ctx, hta_sim **out, hta_error *err) {
    *out = NULL;
    size_t nr = hta_ctx_nranks(ctx);
    hta_sim **rs = calloc(nr ? nr : 1, sizeof *rs);
    hta_sim *s = calloc(1, sizeof *s);
    hta_cp_graph *g = calloc(1, sizeof *g);
    cinst *ci = NULL;
    size_t nci = 0, cci = 0;
    int64_t *delta = calloc(nr ? nr : 1, sizeof *delta);
    size_t *noff = calloc(nr + 1, sizeof *noff), *eoff = calloc(nr + 1, sizeof *eoff),
           *voff = calloc(nr + 1, sizeof *voff);
    uint32_t **symmap = calloc(nr ? nr : 1, sizeof *symmap);
    int64_t *diff = NULL;
    hta_status st = HTA_OK;
    if (!rs || !s || !g || !delta || !noff || !eoff || !voff || !symmap || !(g->sym = hta_symtab_new())) goto oom;
    s->g = g;
    g->rank = -1;
    g->origin_ns = ctx->origin_ns;
    for (size_t k = 0; k < nr; k++) {
        HTA_TRY_GOTO(st, hta_sim_build(ctx, k, &rs[k], err), done);
        hta_ctx_view_done(ctx, k);
        HTA_TRY_GOTO(st, collectives(ctx, k, rs[k], &ci, &nci, &cci, err), done);
        s->sync_calls += rs[k]->sync_calls;
        s->sync_records += rs[k]->sync_records;
    }
    if (nci > 1) qsort(ci, nci, sizeof *ci, cmp_cinst);
    /* groups: one instance each; valid with 2+ ranks, one kernel per rank, one kernel name */
    unsigned char *ok = calloc(nci ? nci : 1, 1);
    if (!ok) goto oom;
    size_t ngroups = 0;
    for (size_t i = 0, j; i < nci; i = j) {
        int valid = 1;
        for (j = i + 1; j < nci && ci[j].pg == ci[i].pg && ci[j].seq == ci[i].seq; j++)
            if (ci[j].rank == ci[j - 1].rank || ci[j].name != ci[i].name) valid = 0;
        if (valid && j - i >= 2) {
            memset(ok + i, 1, j - i);
            ngroups++;
        }
    }
    /* clock offsets: rank k's collective ends against the first rank's, median over shared instances */
    diff = malloc((ngroups ? ngroups : 1) * sizeof *diff);
    if (!diff) {
        free(ok);
        goto oom;
    }
    for (size_t k = 1; k < nr; k++) {
        size_t nd = 0;
        for (size_t i = 0, j; i < nci; i = j) {
            int64_t e0 = INT64_MIN, ek = INT64_MIN;
            for (j = i; j < nci && ci[j].pg == ci[i].pg && ci[j].seq == ci[i].seq; j++) {
                if (!ok[j]) continue;
                const hta_cp_event *x = &rs[ci[j].rank]->g->ev[ci[j].ev];
                if (ci[j].rank == 0) e0 = x->ts + x->dur;
                if (ci[j].rank == k) ek = x->ts + x->dur;
            }
            if (e0 != INT64_MIN && ek != INT64_MIN) diff[nd++] = ek - e0;
        }
        if (nd) {
            if (nd > 1) qsort(diff, nd, sizeof *diff, cmp_i64);
            delta[k] = diff[nd / 2];
        }
    }
    /* the joined graph: every rank's events, nodes and edges, then one barrier node per instance */
    size_t nev = 0, nn = 0, ne = 0;
    for (size_t k = 0; k < nr; k++) {
        voff[k] = nev, noff[k] = nn, eoff[k] = ne;
        nev += rs[k]->g->nev, nn += rs[k]->g->nnode, ne += rs[k]->g->nedge;
    }
    voff[nr] = nev, noff[nr] = nn, eoff[nr] = ne;
    size_t nbar = 0, nbe = 0;
    for (size_t i = 0; i < nci; i++) nbe += 2 * ok[i];
    nbar = ngroups;
    g->ev = calloc(nev ? nev : 1, sizeof *g->ev);
    g->ev_parent = malloc((nev ? nev : 1) * sizeof *g->ev_parent);
    s->ev_rank = malloc((nev ? nev : 1) * sizeof *s->ev_rank);
    s->ev_step = malloc((nev ? nev : 1) * sizeof *s->ev_step);
    g->node = malloc((nn + nbar + 1) * sizeof *g->node);
    g->edge = malloc((ne + nbe + 1) * sizeof *g->edge);
    size_t nsteps = 0;
    for (size_t k = 0; k < nr; k++) nsteps += rs[k]->nsteps;
    s->steps = malloc((nsteps ? nsteps : 1) * sizeof *s->steps);
    if (!g->ev || !g->ev_parent || !s->ev_rank || !s->ev_step || !g->node || !g->edge || !s->steps) {
        free(ok);
        goto oom;
    }
    for (size_t k = 0; k < nr; k++) {
        const hta_cp_graph *rg = rs[k]->g;
        uint32_t ns = hta_symtab_count(rg->sym);
        symmap[k] = malloc((ns ? ns : 1) * sizeof **symmap);
        if (!symmap[k]) {
            free(ok);
            goto oom;
        }
        for (uint32_t y = 0; y < ns; y++) {
            symmap[k][y] = hta_symtab_intern(g->sym, hta_sym(rg->sym, y), hta_sym_len(rg->sym, y));
            if (symmap[k][y] == UINT32_MAX) {
                free(ok);
                goto oom;
            }
        }
        for (size_t x = 0; x < rg->nev; x++) {
            hta_cp_event e = rg->ev[x];
            e.ts -= delta[k];
            e.name = symmap[k][e.name];
            e.cat = symmap[k][e.cat];
            e.start += (int32_t)noff[k];
            e.end += (int32_t)noff[k];
            g->ev[voff[k] + x] = e;
            g->ev_parent[voff[k] + x] = rg->ev_parent[x] < 0 ? -1 : rg->ev_parent[x] + (int32_t)voff[k];
            s->ev_rank[voff[k] + x] = hta_ctx_rank(ctx, k)->rank;
            s->ev_step[voff[k] + x] = rs[k]->ev_step[x];
        }
        for (size_t v = 0; v < rg->nnode; v++) {
            hta_cp_node n = rg->node[v];
            n.ts -= delta[k];
            n.ev += (uint32_t)voff[k];
            g->node[noff[k] + v] = n;
        }
        for (size_t i = 0; i < rg->nedge; i++) {
            hta_cp_edge e = rg->edge[i];
            e.u += (uint32_t)noff[k];
            e.v += (uint32_t)noff[k];
            if (e.attr >= 0) e.attr += (int32_t)voff[k];
            g->edge[eoff[k] + i] = e;
        }
        for (size_t i = 0; i < rs[k]->nsteps; i++) {
            hta_sim_step x = rs[k]->steps[i];
            x.start += (uint32_t)noff[k];
            x.end += (uint32_t)noff[k];
            s->steps[s->nsteps++] = x;
        }
    }
    g->nev = nev;
    g->nnode = nn;
    g->nedge = ne;
    /* per rank: each collective's wait edge (start -> mid) and transfer edge (mid -> end) */
    int64_t *peer = malloc((nev ? nev : 1) * sizeof *peer), *xfer = malloc((nev ? nev : 1) * sizeof *xfer);
    if (!peer || !xfer) {
        free(ok);
        free(peer);
        free(xfer);
        goto oom;
    }
    for (size_t x = 0; x < nev; x++) peer[x] = xfer[x] = -1;
    for (size_t i = 0; i < ne; i++) {
        const hta_cp_edge *e = &g->edge[i];
        if (e->type == HTA_CP_PEER_WAIT) peer[e->attr] = (int64_t)i;
    }
    for (size_t i = 0; i < ne; i++) {
        const hta_cp_edge *e = &g->edge[i];
        if (e->type == HTA_CP_OPERATOR && e->attr >= 0 && peer[e->attr] >= 0 &&
            g->edge[peer[e->attr]].v == e->u)
            xfer[e->attr] = (int64_t)i;
    }
    s->inst = malloc((ngroups ? ngroups : 1) * sizeof *s->inst);
    s->part = malloc((nci ? nci : 1) * sizeof *s->part);
    if (!s->inst || !s->part) {
        free(ok);
        free(peer);
        free(xfer);
        goto oom;
    }
    size_t npart = 0;
    for (size_t i = 0, j; i < nci; i = j) {
        for (j = i + 1; j < nci && ci[j].pg == ci[i].pg && ci[j].seq == ci[i].seq; j++) {}
        if (!ok[i]) continue;
        const hta_rank *r0 = hta_ctx_rank(ctx, ci[i].rank);
        uint32_t pg = UINT32_MAX;
        if (ci[i].pg < UINT32_MAX - 1) {
            const char *nm = hta_sym(ctx->trace->sym, ci[i].pg);
            pg = hta_symtab_intern(g->sym, nm, strlen(nm));
            if (pg == UINT32_MAX) {
                free(ok);
                free(peer);
                free(xfer);
                goto oom;
            }
        }
        int32_t it = r0->iteration[rs[ci[i].rank]->g->ev[ci[i].ev].row];
        s->inst[s->ngroups] = (sim_inst){(uint32_t)g->nnode, pg, ci[i].seq, it >= 0 ? it : -1, (uint32_t)npart,
                                         (uint32_t)(j - i)};
        s->ngroups++;
        for (size_t q = i; q < j; q++) s->part[npart++] = (uint32_t)(voff[ci[q].rank] + ci[q].ev);
        /* the transfer: the shortest kernel of the instance; the barrier: the last arrival */
        int64_t tau = INT64_MAX, arrive = INT64_MIN;
        for (size_t q = i; q < j; q++) {
            const hta_cp_event *x = &g->ev[voff[ci[q].rank] + ci[q].ev];
            if (x->dur < tau) tau = x->dur;
            if (x->ts > arrive) arrive = x->ts;
        }
        uint32_t bar = (uint32_t)g->nnode++;
        g->node[bar] = (hta_cp_node){arrive, (uint32_t)(voff[ci[i].rank] + ci[i].ev), 0};
        for (size_t q = i; q < j; q++) {
            uint32_t x = (uint32_t)(voff[ci[q].rank] + ci[q].ev);
            int64_t pe = peer[x], xe = xfer[x];
            if (pe < 0 || xe < 0) continue;
            hta_cp_edge *pw = &g->edge[pe], *tr = &g->edge[xe];
            uint32_t mid = pw->v;
            int64_t end = g->ev[x].ts + g->ev[x].dur;
            g->node[mid].ts = end - tau;
            pw->w = 0;    /* a rank's own part of the wait: none; the barrier brings the rest */
            tr->w = tau;
            g->edge[g->nedge++] = (hta_cp_edge){(uint32_t)g->ev[x].start, bar, 0, -1, HTA_CP_DEPENDENCY};
            int64_t d = g->node[mid].ts - arrive;
            g->edge[g->nedge++] = (hta_cp_edge){bar, mid, d > 0 ? d : 0, (int32_t)x, HTA_CP_PEER_WAIT};
        }
    }
    free(ok);
    free(peer);
    free(xfer);
    HTA_TRY_GOTO(st, cp_graph_order(g, err), done);
    HTA_TRY_GOTO(st, sim_index(s, err), done);
    *out = s;
    s = NULL;
    goto done;
oom:
    st = hta_oom(err);
done:
    for (size_t k = 0; rs && k < nr; k++) hta_sim_free(rs[k]);
    for (size_t k = 0; symmap && k < nr; k++) free(symmap[k]);
    free(symmap);
    free(rs);
    free(ci);
    free(diff);
    free(delta);
    free(noff);
    free(eoff);
    free(voff);
    if (s) {
        if (!s->g) hta_cpath_free(g);
        hta_sim_free(s);
    }
    return st;
}
