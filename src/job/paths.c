/* The job's paths, one rank at a time (job/internal.h): the rank's graph with each matched collective's
 * barrier as a source at its replayed time, so that running it gives the rank's part of the joined graph's
 * schedule; then walks back from the nodes asked for, as hta_sim_path walks, to a barrier, a source or a
 * time, summing what they pass per class. */
#include <stdlib.h>
#include <string.h>

#include "job/internal.h"

const char *const sj_class_names[SJ_NCLS] = {"",
                                             "cpu_bound",
                                             "data_loading",
                                             "gpu_communication_bound",
                                             "gpu_compute_bound",
                                             "gpu_kernel_kernel_overhead",
                                             "gpu_kernel_launch_overhead",
                                             "rank_wait"};

/* The class (index into sj_class_names) of a bound_by text. */
static int sj_class_of(const char *bound_by) {
    for (int i = 0; i < SJ_NCLS; i++)
        if (!strcmp(sj_class_names[i], bound_by)) return i;
    return 0;
}

/* Edge e's class, found once per edge (hta_cpath_bb: once per name where only the name decides). */
static int edge_class(sj_walker *k, uint32_t e) {
    if (k->cls[e] < 0) k->cls[e] = (signed char)sj_class_of(hta_cpath_bb(k->bb, &k->s->g->edge[e]));
    return k->cls[e];
}

/* The rank's graph as the joined graph has it: matched waits split at a barrier (a source of its own, its
 * time set per scenario by sj_rank_times); the structure is the same under every scenario. */
static hta_status joinable(struct hta_job *j, hta_sim *s, size_t pos, uint32_t *stub_first, hta_error *err) {
    hta_cp_graph *g = s->g;
    const sj_rank *R = &j->r[pos];
    size_t nm = 0;
    for (size_t c = 0; c < R->ncoll; c++) nm += j->inst[j->inst_of[pos][c]].matched;
    hta_cp_node *nn = realloc(g->node, (g->nnode - g->nbase + nm + 1) * sizeof *nn);
    if (!nn) return hta_oom(err);
    g->node = nn;
    hta_cp_edge *ne = realloc(g->edge, (g->nedge + nm + 1) * sizeof *ne);
    if (!ne) return hta_oom(err);
    g->edge = ne;
    *stub_first = (uint32_t)g->nnode;
    /* the rank's collectives are its wait edges in edge order (sj_skeleton's order) */
    size_t c = 0, ne0 = g->nedge;
    uint32_t *from_mid;
    HTA_TRY(sim_mid_map(g, &from_mid, err));
    for (size_t i = 0; i < ne0; i++) {
        hta_cp_edge *pw = &g->edge[i];
        if (pw->type != HTA_CP_PEER_WAIT) continue;
        const sj_inst *in = &j->inst[j->inst_of[pos][c]];
        const sj_coll *x = &R->coll[c];
        c++;
        if (!in->matched) continue;
        uint32_t mid = pw->v;
        uint32_t tr = sim_mid_transfer(g, from_mid, mid);
        if (tr != UINT32_MAX && cp_edge_set_w(g, tr, in->tau, err)) {
            free(from_mid);
            return HTA_ENOMEM;
        }
        pw->w = 0;
        int64_t md = x->ts + x->dur - j->delta[pos] - in->tau, d = md - in->arrive;
        uint32_t stub = (uint32_t)g->nnode++;
        g->node[stub - g->nbase] = (hta_cp_node){0, (uint32_t)pw->attr, 0};
        g->edge[g->nedge] = (hta_cp_edge){stub, mid, 0, pw->attr, HTA_CP_PEER_WAIT};
        if (cp_edge_set_w(g, g->nedge++, d > 0 ? d : 0, err)) {
            free(from_mid);
            return HTA_ENOMEM;
        }
    }
    free(from_mid);
    /* the in-edges again (the mids have one more); the order stays, the stubs first: sources added to a
     * topological order keep it one, without a second adjacency to sort it again */
    HTA_TRY(sim_index(s, err));
    if (!s->topo) return sim_topo(s, err);
    uint32_t *topo = realloc(s->topo, (g->nnode ? g->nnode : 1) * sizeof *topo);
    if (!topo) return hta_oom(err);
    s->topo = topo;
    size_t old = *stub_first, added = g->nnode - old;
    memmove(topo + added, topo, old * sizeof *topo);
    for (size_t i = 0; i < added; i++) topo[i] = (uint32_t)(old + i);
    return HTA_OK;
}

/* hta_sim_path's choice at v: the first input that reaches it.  t is hta_sim_run's under w, so a node of one
 * input (most are: links of a chain) has its time from it, and it is the choice without a look at the times
 * (which are scattered: the forest picks each node three times). */
static uint32_t pick(const hta_sim *s, const int64_t *w, const int64_t *t, uint32_t v) {
    const hta_cp_graph *g = s->g;
    if (s->pred_off[v + 1] - s->pred_off[v] == 1) return s->pred_eid[s->pred_off[v]];
    for (uint32_t q = s->pred_off[v]; q < s->pred_off[v + 1]; q++) {
        uint32_t e = s->pred_eid[q];
        if (t[g->edge[e].u] + w[e] == t[v]) return e;
    }
    return UINT32_MAX;
}


void sj_walk(sj_walker *k, uint32_t v, int64_t from, sj_piece *out) {
    const hta_cp_graph *g = k->s->g;
    memset(out, 0, sizeof *out);
    out->inst = -1;
    out->t1 = k->t[v] + k->off;
    for (;;) {
        if (from != INT64_MIN && k->t[v] + k->off <= from) {
            out->cut = 1;
            break;
        }
        uint32_t e = pick(k->s, k->w, k->t, v);
        if (e == UINT32_MAX) {
            if (v >= k->stub_first) out->inst = k->stub_inst[v - k->stub_first];
            break;
        }
        const hta_cp_edge *x = &g->edge[e];
        if (k->edge) k->edge(k->ctx, e);
        int c = edge_class(k, e);
        out->acc.cls[c] += k->w[e];
        out->acc.present |= 1u << c;
        out->acc.edges++;
        int64_t a = k->t[x->u] + k->off, z = k->t[v] + k->off;
        if (from != INT64_MIN && a < from) a = from;
        if (z > a) out->acc.col[c] += z - a;
        v = x->u;
    }
    out->t0 = k->t[v] + k->off;
}

/* The walks of every uncut query at once (from = INT64_MIN: each walk's answer depends on its start only).
 * The picks make a forest (each node's deciding input, the roots where a walk stops); a walk is its node's
 * path to the root, so one depth-first pass over the forest, adding each edge on the way down and taking it
 * off on the way up, answers them all in time linear in the rank's nodes, however many queries share the
 * same long stretch (every collective launched from one thread's step).  What the pass holds is the
 * children's edges, by parent (kid[coff[u] .. coff[u + 1]), in the order of the child nodes), and no stack:
 * from a node it goes down to its first child, else on to its next sibling, else up, where the node it
 * comes back to is picked again (a pick costs less than a parent per node at the job's peak, two graphs at
 * once).  Only the queries' paths make it: each walked up from its node until it meets one walked before (the
 * union of the paths, not the rank's every node: most of a rank's nodes decide no query).  v[i]: query i's
 * node. */
static hta_status forest(sj_walker *k, const uint32_t *v, sj_query *q, size_t n, hta_error *err) {
    const hta_cp_graph *g = k->s->g;
    size_t nn = g->nnode;
    uint32_t *coff = calloc(nn + 2, sizeof *coff), *kid = malloc((nn + 1) * sizeof *kid);
    /* the queries in (node, query) order, and which nodes have any, and the roots: bits per node */
    uint32_t *qs = malloc((n + 1) * sizeof *qs);
    int64_t *qnode = malloc((n + 1) * sizeof *qnode);
    uint64_t *hasq = calloc(nn / 64 + 1, sizeof *hasq), *root = calloc(nn / 64 + 1, sizeof *root);
    uint64_t *on = calloc(nn / 64 + 1, sizeof *on); /* on a query's path */
    hta_status st = HTA_OK;
    if (!coff || !kid || !qs || !qnode || !hasq || !root || !on) {
        st = hta_oom(err);
        goto done;
    }
    /* the paths' union, each node's parent counted one slot ahead */
    for (size_t i = 0; i < n; i++) {
        for (uint32_t x = v[i]; !(on[x / 64] >> (x % 64) & 1);) {
            on[x / 64] |= 1ull << (x % 64);
            uint32_t e = pick(k->s, k->w, k->t, x);
            if (e == UINT32_MAX) {
                root[x / 64] |= 1ull << (x % 64);
                break;
            }
            x = g->edge[e].u;
            coff[x + 2]++;
        }
    }
    for (size_t x = 2; x < nn + 2; x++) coff[x] += coff[x - 1];
    /* then the children filled in node order */
    for (size_t wd = 0; wd < nn / 64 + 1; wd++)
        for (uint64_t b = on[wd] & ~root[wd]; b; b &= b - 1) {
            uint32_t x = (uint32_t)(wd * 64 + (size_t)__builtin_ctzll(b));
            uint32_t e = pick(k->s, k->w, k->t, x);
            kid[coff[g->edge[e].u + 1]++] = e;
        }
    for (size_t i = 0; i < n; i++) qs[i] = (uint32_t)i, qnode[i] = v[i], hasq[v[i] / 64] |= 1ull << (v[i] % 64);
    HTA_TRY_GOTO(st, hta_stable_sort_idx_i64(qs, n, qnode, err), done);
    /* the running sums of the path from the root down to the node the pass is at */
    __int128 cls[SJ_NCLS] = {0};
    int64_t col[SJ_NCLS] = {0};
    size_t cnt[SJ_NCLS] = {0}, edges = 0;
    for (size_t r = 0; r < nn; r++) {
        uint64_t word = root[r / 64] >> (r % 64);
        if (!word) { /* on to the next root: most nodes have an input that decides them */
            r |= 63;
            continue;
        }
        r += (size_t)__builtin_ctzll(word);
        uint32_t x = (uint32_t)r, e = UINT32_MAX; /* the node, the edge it was entered by */
        size_t slot = 0;                           /* that edge's place in kid */
        for (;;) {
            /* down into x: its edge, then its queries' answers */
            if (e != UINT32_MAX) {
                int c = edge_class(k, e);
                uint32_t u = g->edge[e].u;
                cls[c] += k->w[e], col[c] += k->t[x] > k->t[u] ? k->t[x] - k->t[u] : 0, cnt[c]++, edges++;
            }
            size_t lo = 0, hi = (hasq[x / 64] >> (x % 64) & 1) ? n : 0;
            while (lo < hi) { /* the first of x's queries */
                size_t mid = lo + (hi - lo) / 2;
                if (v[qs[mid]] < x) lo = mid + 1;
                else hi = mid;
            }
            for (; lo < n && v[qs[lo]] == x; lo++) {
                sj_piece *o = &q[qs[lo]].out;
                memset(o, 0, sizeof *o);
                for (int y = 0; y < SJ_NCLS; y++) {
                    o->acc.cls[y] = cls[y];
                    o->acc.col[y] = col[y];
                    if (cnt[y]) o->acc.present |= 1u << y;
                }
                o->acc.edges = edges;
                o->inst = r >= k->stub_first ? (int64_t)k->stub_inst[r - k->stub_first] : -1;
                o->t0 = k->t[r] + k->off;
                o->t1 = k->t[x] + k->off;
            }
            if (coff[x] < coff[x + 1]) {
                slot = coff[x], e = kid[slot], x = g->edge[e].v;
                continue;
            }
            /* up out of x until a node has a next sibling */
            while (x != r) {
                uint32_t u = g->edge[e].u;
                int c = edge_class(k, e);
                cls[c] -= k->w[e], col[c] -= k->t[x] > k->t[u] ? k->t[x] - k->t[u] : 0, cnt[c]--, edges--;
                if (slot + 1 < coff[u + 1]) {
                    slot++, e = kid[slot], x = g->edge[e].v;
                    break;
                }
                x = u;
                if (x == r) break;
                /* x's own edge and its place among its parent's children (in node order) */
                e = pick(k->s, k->w, k->t, x);
                uint32_t p = g->edge[e].u;
                size_t a = coff[p], z = coff[p + 1];
                if (z - a == 1) z = a; /* an only child is its parent's first */
                while (a < z) {
                    size_t mid = a + (z - a) / 2;
                    if (g->edge[kid[mid]].v < x) a = mid + 1;
                    else z = mid;
                }
                slot = a;
            }
            if (x == r) break;
        }
    }
done:
    free(coff), free(kid), free(qs), free(qnode), free(hasq), free(root), free(on);
    return st;
}

hta_status sj_rank_graph(struct hta_job *j, hta_ctx *ctx, size_t k, size_t pos, sj_rank_graph_t *rg,
                         hta_error *err) {
    memset(rg, 0, sizeof *rg);
    rg->j = j;
    rg->pos = pos;
    const sj_rank *R = &j->r[pos];
    hta_status st = HTA_OK;
    HTA_TRY_GOTO(st, sj_graph_get(j, ctx, k, pos, 1, 0, &rg->s, err), fail);
    sj_graph *kept = j->graph && j->graph[pos].s == rg->s ? &j->graph[pos] : NULL;
    if (kept && kept->joined) {
        rg->stub_first = kept->stub_first;
    } else {
        if (kept) kept->s = NULL; /* a graph half joined is no graph to keep: freed on failure */
        HTA_TRY_GOTO(st, joinable(j, rg->s, pos, &rg->stub_first, err), fail);
        if (kept) kept->s = rg->s, kept->joined = 1, kept->stub_first = rg->stub_first;
    }
    const hta_cp_graph *g = rg->s->g;
    rg->w = malloc((g->nedge ? g->nedge : 1) * sizeof *rg->w);
    rg->t = malloc((g->nnode ? g->nnode : 1) * sizeof *rg->t);
    rg->arrival = malloc((R->ncoll + 1) * sizeof *rg->arrival);
    if (!rg->w || !rg->t || !rg->arrival) {
        st = hta_oom(err);
        goto fail;
    }
    size_t c = 0;
    for (size_t i = 0; i < g->nedge && c < R->ncoll; i++)
        if (g->edge[i].type == HTA_CP_PEER_WAIT && g->edge[i].u < rg->stub_first) rg->arrival[c++] = g->edge[i].u;
    rg->scn = SIZE_MAX;
    return HTA_OK;
fail:
    sj_rank_graph_free(rg);
    return st;
}

hta_status sj_rank_times(struct hta_job *j, sj_rank_graph_t *rg, size_t pos, size_t scn, hta_error *err) {
    const sj_rank *R = &j->r[pos];
    hta_cp_graph *g = rg->s->g;
    int64_t off = sj_off(j, pos);
    /* the barriers' times under scn: the stubs, in the order of the rank's matched collectives */
    uint32_t stub = rg->stub_first;
    for (size_t c = 0; c < R->ncoll; c++) {
        uint32_t in = j->inst_of[pos][c];
        if (j->inst[in].matched) g->node[stub++ - g->nbase].ts = j->bar[scn][in] - off;
    }
    size_t changed, *hits = calloc(j->scn[scn].nrules + 1, sizeof *hits);
    int pending;
    if (!hits) return hta_oom(err);
    hta_status st = sj_weights(j, rg->s, pos, scn, rg->w, hits, NULL, 0, NULL, &changed, &pending, err);
    free(hits);
    rg->scn = SIZE_MAX;
    HTA_TRY(st);
    HTA_TRY(hta_sim_run(rg->s, rg->w, rg->t, err));
    /* the replay gave every arrival: the rank's graph must give them back */
    for (size_t cc = 0; cc < R->ncoll; cc++)
        if (rg->t[rg->arrival[cc]] + off != j->arr[scn][pos][cc])
            return hta_fail(err, HTA_EINVAL, "rank %d: the replayed and the rank's schedule disagree at collective "
                                             "%zu (%lld ns against %lld); please report it", (int)R->rank, cc,
                            (long long)j->arr[scn][pos][cc], (long long)(rg->t[rg->arrival[cc]] + off));
    rg->scn = scn;
    return HTA_OK;
}

void sj_rank_graph_free(sj_rank_graph_t *rg) {
    free(rg->w);
    free(rg->t);
    free(rg->arrival);
    if (rg->j) sj_graph_put(rg->j, rg->pos, rg->s);
    else hta_sim_free(rg->s);
    memset(rg, 0, sizeof *rg);
}

hta_status sj_local(struct hta_job *j, hta_ctx *ctx, size_t k, size_t pos, sj_query *q, size_t n,
                    hta_error *err) {
    sj_rank_graph_t rg;
    uint32_t *stub_inst = NULL;
    signed char *cls = NULL;
    hta_cp_bb *bb = NULL;
    hta_status st = HTA_OK;
    const sj_rank *R = &j->r[pos];
    if (!n) return HTA_OK;
    /* one graph for every scenario asked: only the barriers' times and the weights differ */
    HTA_TRY(sj_rank_graph(j, ctx, k, pos, &rg, err));
    const hta_cp_graph *g = rg.s->g;
    uint32_t stub_first = rg.stub_first;
    stub_inst = malloc((g->nnode - stub_first + 1) * sizeof *stub_inst);
    cls = malloc(g->nedge ? g->nedge : 1);
    bb = hta_cpath_bb_new(g, j->data_load, j->ndata_load);
    if (!stub_inst || !cls || !bb) goto oom;
    memset(cls, -1, g->nedge ? g->nedge : 1); /* a class is the same under every scenario */
    size_t ns = 0;
    for (size_t c = 0; c < R->ncoll; c++)
        if (j->inst[j->inst_of[pos][c]].matched) stub_inst[ns++] = j->inst_of[pos][c];
    for (size_t a = 0, z; a < n; a = z) {
        size_t scn = q[a].scn;
        for (z = a + 1; z < n && q[z].scn == scn; z++) {}
        HTA_TRY_GOTO(st, sj_rank_times(j, &rg, pos, scn, err), done);
        const int64_t *t = rg.t;
        int64_t off = sj_off(j, pos), last_t = INT64_MIN, min_t = INT64_MAX;
        uint32_t last = 0;
        for (uint32_t v = 0; v < stub_first; v++) {
            if (t[v] > last_t) last_t = t[v], last = v;
            if (t[v] < min_t) min_t = t[v];
        }
        sj_walker wk = {rg.s, rg.w, t, off, stub_first, stub_inst, bb, cls, NULL, NULL};
        int uncut = 1;
        for (size_t i = a; i < z; i++) uncut &= q[i].from == INT64_MIN;
        if (uncut && stub_first) {
            uint32_t *v = malloc((z - a + 1) * sizeof *v);
            if (!v) goto oom;
            for (size_t i = a; i < z; i++) {
                v[i - a] = q[i].at == SJ_AT_ARRIVAL ? rg.arrival[q[i].idx]
                         : q[i].at == SJ_AT_STEP_END ? R->steps[q[i].idx].end
                                                     : last;
                q[i].last_t = last_t + off;
                q[i].last_node = last;
                q[i].min_t = min_t + off;
            }
            st = forest(&wk, v, q + a, z - a, err);
            free(v);
            if (st) goto done;
            continue;
        }
        for (size_t i = a; i < z; i++) {
            uint32_t v = q[i].at == SJ_AT_ARRIVAL ? rg.arrival[q[i].idx]
                       : q[i].at == SJ_AT_STEP_END ? R->steps[q[i].idx].end
                                                   : last;
            if (!stub_first) { /* a rank without nodes: nothing to walk, and never the job's last */
                memset(&q[i].out, 0, sizeof q[i].out);
                q[i].out.inst = -1;
                q[i].last_t = INT64_MIN;
                q[i].min_t = INT64_MAX;
                continue;
            }
            q[i].last_t = last_t + off;
            q[i].last_node = last;
            q[i].min_t = min_t + off;
            sj_walk(&wk, v, q[i].from, &q[i].out);
        }
    }
    goto done;
oom:
    st = hta_oom(err);
done:
    free(stub_inst);
    free(cls);
    hta_cpath_bb_free(bb);
    sj_rank_graph_free(&rg);
    return st;
}
