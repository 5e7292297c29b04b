/* The critical-path graph: networkx DiGraph insertion semantics, and the
 * longest path by dag_longest_path's rules (critical-path.md §8) in O(V+E)
 * with no recursion. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cpath/internal.h"
#include "core/bigbuf.h"
#include "core/hash.h"
#include "hta/util.h"

/* HTA's CPEdge type values (critical-path.md §2): the outputs print these strings, so they must be HTA's. */
static const char *const TYPE_NAMES[HTA_CP_NTYPES] = {
    "critical_path_operator", "critical_path_dependency", "critical_path_kernel_launch_delay",
    "critical_path_kernel_kernel_delay", "critical_path_sync_dependency",
    "critical_path_cpu_untraced", "critical_path_wait", "critical_path_rank_wait",
};

const char *hta_cpath_edge_type_name(int type) {
    return type >= 0 && type < HTA_CP_NTYPES ? TYPE_NAMES[type] : "?";
}

/* Build remarks go on the graph, not to stderr: the library never prints, and a saved graph keeps its
 * notes. */
hta_status cp_note(hta_cp_graph *g, hta_error *err, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int rc = hta_strlist_vadd(&g->notes, &g->nnotes, fmt, ap);
    va_end(ap);
    return rc ? hta_oom(err) : HTA_OK;
}

void hta_cpath_path_free(hta_cp_path *p) {
    if (!p) return;
    free(p->node);
    free(p->edge);
    memset(p, 0, sizeof *p);
}

void hta_cpath_free(hta_cp_graph *g) {
    if (!g) return;
    if (g->sym) hta_symtab_free(g->sym);
    free(g->ev);
    free(g->thr);
    free(g->ev_parent);
    free(g->ev_node);
    free(g->ev_row);
    free(g->node);
    cp_idmap_free(&g->wide);
    free(g->cut_bit);
    cp_idmap_free(&g->cut);
    free(g->edge);
    free(g->order);
    for (size_t i = 0; i < g->nnotes; i++) free(g->notes[i]);
    free(g->notes);
    hta_cpath_path_free(&g->path);
    free(g);
}

/* An id's slot: a multiplicative hash, probed linearly. */
static size_t idmap_slot(const hta_cp_idmap *m, uint32_t id) {
    size_t mask = m->cap - 1, i = (size_t)((id * 0x9E3779B1u) & mask);
    while (m->id[i] != id && m->id[i] != UINT32_MAX) i = (i + 1) & mask;
    return i;
}

int64_t hta_cp_idmap_get(const hta_cp_idmap *m, uint32_t id) { return m->val[idmap_slot(m, id)]; }

hta_status cp_idmap_put(hta_cp_idmap *m, uint32_t id, int64_t val, hta_error *err) {
    if (2 * (m->n + 1) > m->cap) {
        hta_cp_idmap old = *m;
        size_t cap = m->cap ? 2 * m->cap : 64;
        m->id = malloc(cap * sizeof *m->id);
        m->val = malloc(cap * sizeof *m->val);
        if (!m->id || !m->val) {
            free(m->id), free(m->val);
            *m = old;
            return hta_oom(err);
        }
        memset(m->id, 0xff, cap * sizeof *m->id);
        m->cap = cap;
        for (size_t i = 0; i < old.cap; i++)
            if (old.id[i] != UINT32_MAX) {
                size_t j = idmap_slot(m, old.id[i]);
                m->id[j] = old.id[i], m->val[j] = old.val[i];
            }
        free(old.id), free(old.val);
    }
    size_t i = idmap_slot(m, id);
    if (m->id[i] == UINT32_MAX) m->id[i] = id, m->n++;
    m->val[i] = val;
    return HTA_OK;
}

void cp_idmap_free(hta_cp_idmap *m) {
    free(m->id);
    free(m->val);
    memset(m, 0, sizeof *m);
}

hta_status cp_cut_set(hta_cp_graph *g, uint32_t x, int64_t ts, hta_error *err) {
    if (!g->cut_bit && !(g->cut_bit = calloc(g->nbase / 128 + 1, sizeof *g->cut_bit))) return hta_oom(err);
    HTA_TRY(cp_idmap_put(&g->cut, x, ts, err));
    g->cut_bit[x >> 6] |= (uint64_t)1 << (x & 63);
    return HTA_OK;
}

/* Page faults are the main cost of the build on large traces (every array
 * is written once, and a fault costs ~10 us on virtual machines): big
 * blocks ask for transparent huge pages (THP "madvise" mode) and are
 * populated in one call (~5x cheaper than faulting page by page; pages
 * already in place cost next to nothing). */
static void huge(void *p, size_t n) {
    if (!p || n < ((size_t)64 << 10)) return;
#ifdef MADV_HUGEPAGE
    const uintptr_t H = (uintptr_t)2 << 20;
    uintptr_t a = ((uintptr_t)p + H - 1) & ~(H - 1), e = ((uintptr_t)p + n) & ~(H - 1);
    if (e > a) madvise((void *)a, e - a, MADV_HUGEPAGE);
#endif
}

static void advise(void *p, size_t n) {
    huge(p, n);
    hta_prefault(p, n);
}

void *cp_malloc_filled(size_t n) {
    void *p = malloc(n ? n : 1);
    huge(p, n);
    return p;
}

void *cp_malloc(size_t n) {
    void *p = malloc(n ? n : 1);
    advise(p, n);
    return p;
}

/* Small blocks come from calloc; big ones are taken, advised and written with zeros at once, which also
 * faults their pages in. */
void *cp_calloc(size_t n, size_t size) {
    if (size && n > SIZE_MAX / size) return NULL;
    size_t t = n * size;
    if (t < ((size_t)64 << 10)) return calloc(n ? n : 1, size ? size : 1);
    void *p = cp_malloc(t);
    if (p) memset(p, 0, t);
    return p;
}

/* ---- threads ---- */

static int thr_is(const hta_cp_thread *t, int64_t pid, int64_t tid, int64_t stream) {
    return t->pid == pid && t->tid == tid && t->stream == stream;
}

static size_t thr_hash(int64_t pid, int64_t tid, int64_t stream) {
    return (size_t)hta_hash_u64((uint64_t)pid * 0x9e3779b97f4a7c15ull ^ (uint64_t)tid ^ (uint64_t)stream << 17);
}

hta_status cp_thr_id(hta_cp_graph *g, cp_thrmap *m, int64_t pid, int64_t tid, int64_t stream, uint32_t *id,
                     hta_error *err) {
    if (g->nthr && m->last < g->nthr && thr_is(&g->thr[m->last], pid, tid, stream)) {
        *id = m->last;
        return HTA_OK;
    }
    if (2 * (g->nthr + 1) > m->mask + 1 || !m->slot) { /* at most half full; the table grows with the list */
        size_t ns = m->slot ? 2 * (m->mask + 1) : 64;
        uint32_t *sl = calloc(ns, sizeof *sl);
        hta_cp_thread *t = realloc(g->thr, ns / 2 * sizeof *t);
        if (!sl || !t) {
            free(sl);
            if (t) g->thr = t;
            return hta_oom(err);
        }
        g->thr = t;
        for (size_t i = 0; i < g->nthr; i++) {
            size_t j = thr_hash(t[i].pid, t[i].tid, t[i].stream) & (ns - 1);
            while (sl[j]) j = (j + 1) & (ns - 1);
            sl[j] = (uint32_t)i + 1;
        }
        free(m->slot);
        m->slot = sl;
        m->mask = ns - 1;
    }
    size_t j = thr_hash(pid, tid, stream) & m->mask;
    for (; m->slot[j]; j = (j + 1) & m->mask)
        if (thr_is(&g->thr[m->slot[j] - 1], pid, tid, stream)) {
            *id = m->last = m->slot[j] - 1;
            return HTA_OK;
        }
    g->thr[g->nthr] = (hta_cp_thread){pid, tid, stream};
    m->slot[j] = (uint32_t)++g->nthr;
    *id = m->last = (uint32_t)(g->nthr - 1);
    return HTA_OK;
}

void cp_thrmap_free(cp_thrmap *m) {
    free(m->slot);
    memset(m, 0, sizeof *m);
}

hta_status cp_ev_rows(const hta_cp_graph *g, const hta_rank *r, int32_t **out, hta_error *err) {
    size_t ni = r->n_events;
    int32_t *by_index = malloc((ni ? ni : 1) * sizeof *by_index), *row = malloc((g->nev ? g->nev : 1) * sizeof *row);
    if (!by_index || !row) {
        free(by_index);
        free(row);
        return hta_oom(err);
    }
    for (size_t i = 0; i < ni; i++) by_index[i] = -1;
    for (size_t i = 0; i < r->n; i++)
        if (r->index[i] < ni) by_index[r->index[i]] = (int32_t)i;
    for (size_t i = 0; i < g->nev; i++) {
        uint32_t ix = g->ev[i].index;
        if ((row[i] = ix < ni ? by_index[ix] : -1) < 0) {
            free(by_index);
            free(row);
            return hta_fail(err, HTA_EINVAL, "the graph was not built from this trace");
        }
    }
    free(by_index);
    *out = row;
    return HTA_OK;
}

hta_status cp_check_events(size_t n, hta_error *err) {
    if (n < HTA_CP_MAX_EVENTS) return HTA_OK;
    return hta_fail(err, HTA_EINVAL, "a rank of %zu events is more than the critical-path graph holds (%zu)", n,
                    (size_t)HTA_CP_MAX_EVENTS);
}

/* ---- edge set ---- */

/* At most half full (hash_add doubles before that), so probe runs stay short.  Keys are (u << 32 | v) + 1
 * so that 0 can mark an empty slot even for the edge (0, 0). */
static hta_status rehash(cp_edges *s, size_t ns, hta_error *err) {
    uint64_t *k = cp_calloc(ns, sizeof *k);
    uint32_t *v = cp_malloc(ns * sizeof *v);
    if (!k || !v) {
        free(k);
        free(v);
        return hta_oom(err);
    }
    for (size_t i = 0; s->hkey && i <= s->hmask; i++) {
        if (!s->hkey[i]) continue;
        size_t j = hta_hash_u64(s->hkey[i]) & (ns - 1);
        while (k[j]) j = (j + 1) & (ns - 1);
        k[j] = s->hkey[i];
        v[j] = s->hval[i];
    }
    free(s->hkey);
    free(s->hval);
    s->hkey = k;
    s->hval = v;
    s->hmask = ns - 1;
    return HTA_OK;
}

void cp_edges_init(cp_edges *s, hta_cp_graph *g) {
    memset(s, 0, sizeof *s);
    s->g = g;
}

/* The per-node arrays are made once the node count is known (after make_nodes); the edge arrays grow by
 * doubling from the build's first guess. */
hta_status cp_edges_reserve(cp_edges *s, size_t n, hta_error *err) {
    size_t nn = s->g->nnode ? s->g->nnode : 1;
    if (!s->head) {
        s->head = cp_malloc(nn * sizeof *s->head);
        s->deg = cp_calloc(nn, sizeof *s->deg);
        if (!s->head || !s->deg) return hta_oom(err);
        memset(s->head, 0xff, nn * sizeof *s->head);
    }
    if (n <= s->cap) return HTA_OK;
    uint32_t *nx = realloc(s->next, n * sizeof *nx);
    if (!nx) return hta_oom(err);
    s->next = nx;
    hta_cp_edge *e = realloc(s->g->edge, n * sizeof *e);
    if (!e) return hta_oom(err);
    s->g->edge = e;
    s->cap = n;
    advise(s->g->edge, s->cap * sizeof *s->g->edge);
    return HTA_OK;
}

void cp_edges_fini(cp_edges *s) {
    free(s->head);
    free(s->deg);
    free(s->next);
    free(s->hkey);
    free(s->hval);
    s->head = s->next = s->hval = NULL;
    s->deg = NULL;
    s->hkey = NULL;
}

/* Most nodes have one to three out-edges, where a list scan is the cheapest duplicate check; the few hubs
 * (a kernel that many syncs wait on) would make it quadratic. */
#define CHAIN_MAX 8 /* out-edges looked up on the list; more go to the hash */

static hta_status hash_add(cp_edges *s, uint32_t id, hta_error *err) {
    if (!s->hkey) HTA_TRY(rehash(s, 1024, err));
    if (2 * (s->hused + 1) > s->hmask + 1) HTA_TRY(rehash(s, 2 * (s->hmask + 1), err));
    const hta_cp_edge *e = &s->g->edge[id];
    uint64_t key = ((uint64_t)e->u << 32 | e->v) + 1;
    size_t j = hta_hash_u64(key) & s->hmask;
    while (s->hkey[j]) j = (j + 1) & s->hmask;
    s->hkey[j] = key;
    s->hval[j] = id;
    s->hused++;
    return HTA_OK;
}

/* networkx's add_edge (§2): an existing (u, v) gets the new attributes and keeps its place in the edge
 * order, which the longest path's ties depend on; only a new pair is appended. */
hta_status cp_edges_put(cp_edges *s, uint32_t u, uint32_t v, int type, int64_t w, int32_t attr, hta_error *err) {
    hta_cp_graph *g = s->g;
    hta_cp_edge e = {u, v, 0, attr, (uint8_t)type};
    if (s->deg[u] <= CHAIN_MAX) {
        for (uint32_t i = s->head[u]; i != UINT32_MAX; i = s->next[i])
            if (g->edge[i].v == v) {
                g->edge[i] = e;
                return cp_edge_set_w(g, i, w, err);
            }
    } else {
        uint64_t key = ((uint64_t)u << 32 | v) + 1;
        size_t j = hta_hash_u64(key) & s->hmask;
        while (s->hkey[j] && s->hkey[j] != key) j = (j + 1) & s->hmask;
        if (s->hkey[j]) {
            g->edge[s->hval[j]] = e;
            return cp_edge_set_w(g, s->hval[j], w, err);
        }
    }
    if (g->nedge == s->cap) HTA_TRY(cp_edges_reserve(s, s->cap ? 2 * s->cap : 1024, err));
    uint32_t id = (uint32_t)g->nedge++;
    g->edge[id] = e;
    HTA_TRY(cp_edge_set_w(g, id, w, err));
    s->next[id] = s->head[u];
    s->head[u] = id;
    /* deg only has to tell "more than CHAIN_MAX", so a saturating byte per node is enough */
    if (s->deg[u] < UINT8_MAX) s->deg[u]++;
    if (s->deg[u] == CHAIN_MAX + 1) { /* u moves to the hash table */
        for (uint32_t i = id; i != UINT32_MAX; i = s->next[i]) HTA_TRY(hash_add(s, i, err));
    } else if (s->deg[u] > CHAIN_MAX + 1) {
        HTA_TRY(hash_add(s, id, err));
    }
    return HTA_OK;
}

/* networkx's node order (§8.1): nodes enter the DiGraph when they first appear in an edge, source before
 * destination; nodes without edges are not in it. */
hta_status cp_graph_order(hta_cp_graph *g, hta_error *err) {
    free(g->order);
    g->order = malloc((g->nnode ? g->nnode : 1) * sizeof *g->order);
    unsigned char *seen = calloc(g->nnode ? g->nnode : 1, 1);
    if (!g->order || !seen) {
        free(seen);
        return hta_oom(err);
    }
    size_t n = 0;
    for (size_t i = 0; i < g->nedge; i++) {
        uint32_t a = g->edge[i].u, b = g->edge[i].v;
        if (!seen[a]) seen[a] = 1, g->order[n++] = a;
        if (!seen[b]) seen[b] = 1, g->order[n++] = b;
    }
    g->norder = n;
    free(seen);
    return HTA_OK;
}

/* Compressed adjacency in edge-insertion order. */
typedef struct cp_adj {
    uint32_t *off;  /* nnode + 1 */
    uint32_t *eid;  /* edge ids */
} cp_adj;

static void cp_adj_free(cp_adj *a);

/* Successors (or predecessors) of every node in edge insertion order, networkx's adjacency order (§8.2): a
 * counting sort by node, which keeps the edges' order within each node. */
static hta_status cp_adj_build(const hta_cp_graph *g, int by_dest, cp_adj *a, hta_error *err) {
    size_t nn = g->nnode;
    a->off = cp_malloc((nn + 1) * sizeof *a->off);
    a->eid = cp_malloc((g->nedge ? g->nedge : 1) * sizeof *a->eid);
    if (!a->off || !a->eid) {
        cp_adj_free(a);
        return hta_oom(err);
    }
    cp_adj_fill(g->edge, g->nedge, nn, by_dest, a->off, a->eid);
    return HTA_OK;
}

void cp_adj_fill_recs(const void *e, size_t stride, size_t ne, size_t nn, int by_dest, uint32_t *off, uint32_t *eid) {
    const unsigned char *r = (const unsigned char *)e + (by_dest ? sizeof(uint32_t) : 0);
    memset(off, 0, (nn + 1) * sizeof *off);
    for (size_t i = 0; i < ne; i++) {
        uint32_t k;
        memcpy(&k, r + i * stride, sizeof k);
        off[k + 1]++;
    }
    for (size_t v = 0; v < nn; v++) off[v + 1] += off[v];
    /* off[k] as k's fill pointer: afterwards it is k's end, so the offsets move back one place */
    for (size_t i = 0; i < ne; i++) {
        uint32_t k;
        memcpy(&k, r + i * stride, sizeof k);
        eid[off[k]++] = (uint32_t)i;
    }
    memmove(off + 1, off, nn * sizeof *off);
    off[0] = 0;
}

void cp_adj_fill(const hta_cp_edge *e, size_t ne, size_t nn, int by_dest, uint32_t *off, uint32_t *eid) {
    cp_adj_fill_recs(e, sizeof *e, ne, nn, by_dest, off, eid);
}

hta_status cp_edge_set_w(hta_cp_graph *g, size_t e, int64_t w, hta_error *err) {
    if (w > INT32_MIN && w <= INT32_MAX) {
        g->edge[e].w = (int32_t)w; /* a wide entry it had stays in the table, unread */
        return HTA_OK;
    }
    HTA_TRY(cp_idmap_put(&g->wide, (uint32_t)e, w, err));
    g->edge[e].w = HTA_CP_WIDE;
    return HTA_OK;
}

static void cp_adj_free(cp_adj *a) {
    free(a->off);
    free(a->eid);
    a->off = NULL;
    a->eid = NULL;
}

/* Topological order as networkx's topological_generations: generation 0 =
 * in-degree-0 nodes in node order, then successors in edge order as their
 * remaining in-degree reaches 0 (a FIFO queue).  Returns the count placed
 * (< norder means a cycle). */
static size_t topo(const hta_cp_graph *g, const cp_adj *succ, uint32_t *out) {
    uint32_t *indeg = cp_calloc(g->nnode ? g->nnode : 1, sizeof *indeg);
    if (!indeg) return (size_t)-1;
    for (size_t i = 0; i < g->nedge; i++) indeg[g->edge[i].v]++;
    size_t n = 0;
    for (size_t i = 0; i < g->norder; i++)
        if (!indeg[g->order[i]]) out[n++] = g->order[i];
    /* out[] is the FIFO: appending a node when its last predecessor is scanned, while scanning in order,
     * lists the generations one after the other exactly as networkx concatenates them */
    for (size_t h = 0; h < n; h++) {
        uint32_t x = out[h];
        for (uint32_t k = succ->off[x]; k < succ->off[x + 1]; k++) {
            uint32_t y = g->edge[succ->eid[k]].v;
            if (--indeg[y] == 0) out[n++] = y;
        }
    }
    free(indeg);
    return n;
}

/* HTA clamps weights <= -1 us to 0 and leaves those in (-1, 0) negative (Quirk C7); every negative weight
 * counts as 0 here.  Only exact times (the default) give such weights. */
static inline int64_t eff_w(const hta_cp_graph *g, const int64_t *w, uint32_t e) {
    int64_t x = w ? w[e] : hta_cp_edge_w(g, e);
    return x < 0 ? 0 : x;
}

hta_status hta_cpath_longest(const hta_cp_graph *g, const int64_t *w, hta_cp_path *p,
                             hta_error *err) {
    memset(p, 0, sizeof *p);
    if (g->norder < 2) return hta_fail(err, HTA_ENODATA, "the critical-path graph has no edges");
    cp_adj succ = {0}, pred = {0};
    uint32_t *ord = cp_malloc(g->norder * sizeof *ord);
    int64_t *dist = cp_malloc(g->nnode * sizeof *dist);
    int32_t *from = cp_malloc(g->nnode * sizeof *from); /* edge into the node, -1 = starts a path */
    hta_status st = HTA_OK;
    if (!ord || !dist || !from) {
        st = hta_oom(err);
        goto done;
    }
    HTA_TRY_GOTO(st, cp_adj_build(g, 0, &succ, err), done);
    HTA_TRY_GOTO(st, cp_adj_build(g, 1, &pred, err), done);
    size_t n = topo(g, &succ, ord);
    if (n == (size_t)-1) {
        st = hta_oom(err);
        goto done;
    }
    /* Kahn's order leaves out every node on a cycle; HTA's validation reports a cycle as failure (§7). */
    if (n != g->norder) {
        st = hta_fail(err, HTA_EINVAL, "the critical-path graph has a cycle");
        goto done;
    }
    uint32_t best_node = ord[0];
    int64_t best = INT64_MIN;
    /* §8.4 in topological order: every predecessor is final when its node is reached.  Ties keep the first
     * maximal predecessor (strict >) and the first node of maximal distance, as networkx does. */
    for (size_t i = 0; i < n; i++) {
        uint32_t v = ord[i];
        int64_t bd = 0;
        int32_t be = -1;
        int any = 0;
        for (uint32_t k = pred.off[v]; k < pred.off[v + 1]; k++) {
            uint32_t e = pred.eid[k];
            int64_t d;
            /* distances and effective weights are >= 0: only a sum past INT64_MAX can go wrong, and a
             * graph whose path is that long (a saved graph's, a rule's weights) is refused, not wrapped */
            if (__builtin_add_overflow(dist[g->edge[e].u], eff_w(g, w, e), &d)) {
                st = hta_fail(err, HTA_EINVAL, "the critical path is longer than int64 ns (2^63 ns)");
                goto done;
            }
            if (!any || d > bd) bd = d, be = (int32_t)e, any = 1; /* first maximum wins */
        }
        if (!any || bd < 0) bd = 0, be = -1;
        dist[v] = bd;
        from[v] = be;
        if (bd > best) best = bd, best_node = v; /* first node of maximal distance */
    }
    size_t len = 0;
    /* The path is found backwards, from the end node along from[]: measured once, then filled from its end
     * so that it reads first to last. */
    for (int64_t v = best_node;; v = g->edge[from[v]].u) {
        len++;
        if (from[v] < 0) break;
    }
    p->node = malloc(len * sizeof *p->node);
    p->edge = malloc((len > 1 ? len - 1 : 1) * sizeof *p->edge);
    if (!p->node || !p->edge) {
        hta_cpath_path_free(p);
        st = hta_oom(err);
        goto done;
    }
    p->n = len;
    size_t i = len;
    for (int64_t v = best_node;; v = g->edge[from[v]].u) {
        p->node[--i] = (uint32_t)v;
        if (from[v] < 0) break;
        p->edge[i - 1] = (uint32_t)from[v];
    }
    p->length = dist[best_node];
    /* HTA asserts here (Quirk C11); a clear error instead. */
    if (p->n < 2) {
        hta_cpath_path_free(p);
        st = hta_fail(err, HTA_ENODATA, "the critical path has fewer than two nodes");
    }
done:
    free(ord);
    free(dist);
    free(from);
    cp_adj_free(&succ);
    cp_adj_free(&pred);
    return st;
}

/* What-if selectors (kernel:GLOB, op:GLOB): * and ? matched against the whole name.  A mismatch
 * backtracks only to the last star, without recursion. */
int cp_glob(const char *p, const char *s) {
    const char *star = NULL, *ss = NULL;
    while (*s) {
        if (*p == '*') {
            star = p++;
            ss = s;
        } else if (*p == '?' || *p == *s) {
            p++;
            s++;
        } else if (star) {
            p = star + 1;
            s = ++ss;
        } else {
            return 0;
        }
    }
    while (*p == '*') p++;
    return !*p;
}
