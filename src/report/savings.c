/* Every saving the report estimates goes through rp_savings, the one function here: given what-if rules
 * ("op:enumerate(DataLoader)*=0", "cpu=x0.5", "type:comm=x0") and the ranks they apply to, the job's
 * step time before and after.  The what-if engine (src/cpath/) is being rebuilt; when it is, this body
 * changes and no caller does.
 *
 * For now it is built on the public API of include/hta/cpath.h.  Each rank's graph is built once for all
 * scenarios.  The rules re-weight its edges (hta_cpath_whatif_weights); every other edge takes its real
 * gap in the trace, as `--what-if-trace` does, so that an unchanged graph reproduces the trace and a
 * changed one moves every later node (hta_cpath_schedule).  A step's simulated duration is the distance
 * between its simulated boundaries: each boundary moves with the first graph node on the step's thread
 * at or after it.
 *
 * One extension the engine does not have yet: an `op:GLOB` rule scales the whole span of the CPU events
 * matching GLOB on their thread, children and untraced time (Python) included, not only their self time
 * (annotations such as enumerate(DataLoader) get no graph node at all).  Every same-thread edge loses
 * (1 - F) of its overlap with those spans.  The new engine does the same inside the graph.
 *
 * Limits of this engine, which the report states: ranks are simulated alone (a rank's collectives do
 * not wait for another rank in the graph), so a saving on some ranks shows on the job only where those
 * ranks set its pace; HTA's graph has no edge for a gap between top-level CPU operators other than the
 * real gap, so a rule cannot shorten Python time outside the events it names. */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "hta/vocab.h"
#include "report/internal.h"

/* One op: rule's spans on one rank: intervals on their thread, outermost only, sorted by thread then
 * start. */
typedef struct span {
    int64_t pid, tid, s, e;
    double keep; /* the fraction of the span left: F for xF, V / duration for =V */
} span;

typedef struct parsed {
    hta_cpath_rule *eng; /* engine rules */
    size_t neng;
    char **win;          /* op: globs */
    hta_cpath_rule *winr;
    size_t nwin;
} parsed;

static int by_thread_start(const void *a, const void *b) {
    const span *x = a, *y = b;
    if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    return (x->s > y->s) - (x->s < y->s);
}

static void parsed_free(parsed *p) {
    for (size_t i = 0; i < p->neng; i++) hta_cpath_rule_free(&p->eng[i]);
    for (size_t i = 0; i < p->nwin; i++) hta_cpath_rule_free(&p->winr[i]), free(p->win[i]);
    free(p->eng);
    free(p->win);
    free(p->winr);
    memset(p, 0, sizeof *p);
}

static hta_status parse(const rp_scenario *sc, parsed *p, hta_error *err) {
    memset(p, 0, sizeof *p);
    size_t n = sc->nrules ? sc->nrules : 1;
    p->eng = calloc(n, sizeof *p->eng), p->winr = calloc(n, sizeof *p->winr), p->win = calloc(n, sizeof *p->win);
    if (!p->eng || !p->winr || !p->win) return hta_oom(err);
    for (size_t i = 0; i < sc->nrules; i++) {
        const char *r = sc->rules[i];
        if (!strncmp(r, "op:", 3)) {
            HTA_TRY(hta_cpath_rule_parse(r, &p->winr[p->nwin], err));
            const char *eq = strrchr(r, '=');
            if (!(p->win[p->nwin] = strndup(r + 3, (size_t)(eq - r - 3)))) return hta_oom(err);
            p->nwin++;
        } else {
            HTA_TRY(hta_cpath_rule_parse(r, &p->eng[p->neng], err));
            p->neng++;
        }
    }
    return HTA_OK;
}

/* The outermost CPU events matching glob on rank k, as spans sorted by thread and start (malloc'ed). */
static hta_status spans_of(hta_ctx *ctx, size_t k, const char *glob, const hta_cpath_rule *rule, span **out,
                           size_t *nout, hta_error *err) {
    const hta_trace *t = ctx->trace;
    const hta_rank *r = t->ranks[k];
    const hta_view *v;
    HTA_TRY(hta_ctx_view(ctx, k, &v, err));
    span *sp = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < v->n; i++) {
        size_t row = v->row[i];
        if (hta_row_stream(r, row) != -1 || fnmatch(glob, hta_sym(t->sym, r->name[row]), 0)) continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            span *q = realloc(sp, cap * sizeof *q);
            if (!q) {
                free(sp);
                return hta_oom(err);
            }
            sp = q;
        }
        const hta_thread *th = hta_row_thread(r, row);
        double keep = rule->scale ? rule->factor
                                  : v->dur[i] > 0 ? (double)rule->value_ns / (double)v->dur[i] : 1.0;
        sp[n++] = (span){th->pid, th->tid, v->ts[i], v->ts[i] + v->dur[i], keep > 1 ? 1 : keep};
    }
    if (n) qsort(sp, n, sizeof *sp, by_thread_start);
    /* outermost only: a span inside the previous one on its thread is dropped */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m && sp[m - 1].pid == sp[i].pid && sp[m - 1].tid == sp[i].tid && sp[i].s < sp[m - 1].e) continue;
        sp[m++] = sp[i];
    }
    *out = sp;
    *nout = m;
    return HTA_OK;
}

/* How much of [a, b) on thread (pid, tid) the spans remove: the sum of (1 - keep) x overlap. */
static double removed(const span *sp, size_t n, int64_t pid, int64_t tid, int64_t a, int64_t b) {
    if (b <= a || !n) return 0;
    /* first span of the thread that may overlap: binary search on (thread, end > a) */
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const span *m = &sp[mid];
        int before = m->pid < pid || (m->pid == pid && (m->tid < tid || (m->tid == tid && m->e <= a)));
        if (before) lo = mid + 1;
        else hi = mid;
    }
    double x = 0;
    for (size_t i = lo; i < n && sp[i].pid == pid && sp[i].tid == tid && sp[i].s < b; i++) {
        int64_t s = sp[i].s > a ? sp[i].s : a, e = sp[i].e < b ? sp[i].e : b;
        if (e > s) x += (1 - sp[i].keep) * (double)(e - s);
    }
    return x;
}

typedef struct wins {
    span **sp;
    size_t *n, k;
} wins;

static double removed_all(const wins *w, int64_t pid, int64_t tid, int64_t a, int64_t b) {
    double x = 0;
    for (size_t i = 0; i < w->k; i++) x += removed(w->sp[i], w->n[i], pid, tid, a, b);
    return x > (double)(b - a) ? (double)(b - a) : x;
}

/* Simulated time of boundary T on the steps' thread: it moves with the first node of the thread at or
 * after it (or the last before it), and the time between them shrinks where spans remove it. */
static int64_t boundary(const hta_cp_graph *g, const uint32_t *tn, size_t ntn, const int64_t *ts_sim,
                        const wins *w, int64_t pid, int64_t tid, int64_t T) {
    if (!ntn) return T;
    size_t lo = 0, hi = ntn;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (g->node[tn[mid]].ts < T) lo = mid + 1;
        else hi = mid;
    }
    if (lo < ntn) {
        uint32_t nd = tn[lo];
        int64_t gap = g->node[nd].ts - T;
        return ts_sim[nd] - (gap - (int64_t)removed_all(w, pid, tid, T, g->node[nd].ts));
    }
    uint32_t nd = tn[ntn - 1];
    int64_t gap = T - g->node[nd].ts;
    return ts_sim[nd] + (gap - (int64_t)removed_all(w, pid, tid, g->node[nd].ts, T));
}

/* The graph as this estimate schedules it: HTA's edges, and one more edge into every CPU node of another
 * thread than the steps' that starts a burst of work (the first of its thread, or one after an idle gap
 * of RP_LONG_GAP_NS or more): from the steps' thread's latest node before it.  HTA's graph has no edge
 * between threads, so without these a backward pass on the autograd thread would keep its time in the
 * trace whatever the main thread saves; the idle gap itself was waiting, not work, and weighs 0. */
typedef struct sgraph {
    size_t nn, ne;          /* nodes; edges: the graph's (ids < g->nedge), then the extra ones */
    uint32_t *eu, *ev;
    int64_t *w0;            /* baseline weights */
    uint32_t *poff, *pe;    /* predecessors of each node: edge ids pe[poff[v] .. poff[v + 1]) */
    uint32_t *ord;          /* a topological order */
    size_t nord;
} sgraph;

static void sgraph_free(sgraph *sg) {
    free(sg->eu), free(sg->ev), free(sg->w0), free(sg->poff), free(sg->pe), free(sg->ord);
    memset(sg, 0, sizeof *sg);
}

static int same_thread(const hta_cp_event *a, const hta_cp_event *b) {
    return a->stream == -1 && b->stream == -1 && a->pid == b->pid && a->tid == b->tid;
}

static int64_t i64max(int64_t a, int64_t b) { return a > b ? a : b; }

/* Builds sg from g: baseline weights (CPU edges their real gap, edges that reach the GPU the graph's
 * weight, a blocking call's return 0 where a sync edge decides it), the extra edges, the order. */
static hta_status sgraph_build(const hta_cp_graph *g, const hta_rank *r, const rp_rank *p, const uint32_t *tn,
                               size_t ntn, sgraph *sg, hta_error *err) {
    memset(sg, 0, sizeof *sg);
    size_t nn = g->nnode, ne = g->nedge;
    sg->nn = nn;
    unsigned char *syncdst = calloc(nn ? nn : 1, 1), *burst = calloc(nn ? nn : 1, 1);
    uint32_t *prev = malloc((nn ? nn : 1) * sizeof *prev); /* per node: the previous node of its thread */
    sg->eu = malloc((ne + 3 * nn + 1) * sizeof *sg->eu), sg->ev = malloc((ne + 3 * nn + 1) * sizeof *sg->ev);
    sg->w0 = malloc((ne + 3 * nn + 1) * sizeof *sg->w0);
    hta_status st = HTA_OK;
    if (!syncdst || !burst || !prev || !sg->eu || !sg->ev || !sg->w0) {
        st = hta_oom(err);
        goto out;
    }
    for (size_t e = 0; e < ne; e++)
        if (g->edge[e].type == HTA_CP_SYNC) syncdst[g->edge[e].v] = 1;
    /* bursts of the other CPU threads: nodes are in time order, so the previous node of each thread is the
     * last one seen of it (a small open-addressed table of threads would do; a linear scan of the few
     * threads is enough) */
    {
        size_t nth = 0, cap = 16;
        int64_t(*th)[3] = malloc(cap * sizeof *th); /* pid, tid, last node */
        if (!th) {
            st = hta_oom(err);
            goto out;
        }
        for (size_t q = 0; q < nn; q++) {
            const hta_cp_event *ev = &g->ev[g->node[q].ev];
            prev[q] = UINT32_MAX;
            if (ev->stream != -1 || (ev->pid == p->step_pid && ev->tid == p->step_tid)) continue;
            size_t j = 0;
            while (j < nth && (th[j][0] != ev->pid || th[j][1] != ev->tid)) j++;
            if (j == nth) {
                if (nth == cap) {
                    int64_t(*t2)[3] = realloc(th, 2 * cap * sizeof *th);
                    if (!t2) {
                        free(th);
                        st = hta_oom(err);
                        goto out;
                    }
                    th = t2, cap *= 2;
                }
                th[nth][0] = ev->pid, th[nth][1] = ev->tid, th[nth][2] = -1, nth++;
            }
            if (th[j][2] < 0 || g->node[q].ts - g->node[th[j][2]].ts >= RP_LONG_GAP_NS) burst[q] = 1;
            else prev[q] = (uint32_t)th[j][2];
            th[j][2] = (int64_t)q;
        }
        free(th);
    }
    for (size_t e = 0; e < ne; e++) {
        const hta_cp_edge *ed = &g->edge[e];
        int64_t gap = g->node[ed->v].ts - g->node[ed->u].ts;
        const hta_cp_event *a = &g->ev[g->node[ed->u].ev], *b = &g->ev[g->node[ed->v].ev];
        sg->eu[e] = ed->u, sg->ev[e] = ed->v;
        /* CPU edges keep their real gap (Python and other untraced time stays); an edge that reaches the GPU
         * takes the graph's weight, so that a kernel starts as soon as its launch and its stream allow, not
         * after the idle gap it had in the trace */
        if (a->stream == -1 && b->stream == -1)
            sg->w0[e] = ed->type == HTA_CP_OPERATOR && ed->w == 0 && gap > 0 && syncdst[ed->v] ? 0 : gap;
        else sg->w0[e] = i64max(ed->w, 0);
        if (burst[ed->v] && same_thread(a, b)) sg->w0[e] = 0; /* the idle gap before a burst was a wait */
    }
    sg->ne = ne;
    for (size_t q = 0; q < nn && ntn; q++) {
        if (!burst[q]) continue;
        /* the steps' thread's latest node at or before it */
        size_t lo = 0, hi = ntn;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (g->node[tn[mid]].ts <= g->node[q].ts && tn[mid] < q) lo = mid + 1;
            else hi = mid;
        }
        if (!lo) continue;
        uint32_t u = tn[lo - 1];
        sg->eu[sg->ne] = u, sg->ev[sg->ne] = (uint32_t)q, sg->w0[sg->ne++] = g->node[q].ts - g->node[u].ts;
    }
    /* GPU activities HTA's graph leaves without any predecessor (no launch edge, no kernel-kernel edge
     * after a long gap) would keep their time in the trace: they follow their launch call (real gap) and
     * the previous activity of their stream (at once) */
    {
        uint32_t *hasp = calloc(nn ? nn : 1, sizeof *hasp);
        int32_t *ev_of_row = malloc((r->n ? r->n : 1) * sizeof *ev_of_row);
        if (!hasp || !ev_of_row) {
            free(hasp), free(ev_of_row);
            st = hta_oom(err);
            goto out;
        }
        for (size_t e = 0; e < ne; e++) hasp[g->edge[e].v] = 1;
        for (size_t i = 0; i < r->n; i++) ev_of_row[i] = -1;
        for (size_t i = 0; i < g->nev; i++)
            if (g->ev[i].row >= 0 && (size_t)g->ev[i].row < r->n) ev_of_row[g->ev[i].row] = (int32_t)i;
        /* the last end node of each stream, by a short list of streams */
        int64_t sid[64];
        uint32_t slast[64];
        size_t nsid = 0;
        for (size_t q = 0; q < nn; q++) {
            const hta_cp_event *ev = &g->ev[g->node[q].ev];
            if (ev->stream == -1) continue;
            size_t j = 0;
            while (j < nsid && sid[j] != ev->stream) j++;
            if (j == nsid && nsid < 64) sid[nsid] = ev->stream, slast[nsid++] = UINT32_MAX;
            if (j == 64) continue;
            if (!hasp[q]) {
                if (slast[j] != UINT32_MAX) sg->eu[sg->ne] = slast[j], sg->ev[sg->ne] = (uint32_t)q, sg->w0[sg->ne++] = 0;
                int32_t lr = ev->row >= 0 ? r->partner[ev->row] : HTA_NO_ROW;
                int32_t le = lr >= 0 ? ev_of_row[lr] : -1;
                if (le >= 0 && g->ev[le].start >= 0 && g->node[g->ev[le].start].ts <= g->node[q].ts) {
                    uint32_t u = (uint32_t)g->ev[le].start;
                    sg->eu[sg->ne] = u, sg->ev[sg->ne] = (uint32_t)q, sg->w0[sg->ne++] = g->node[q].ts - g->node[u].ts;
                }
            }
            slast[j] = (uint32_t)q;
        }
        free(hasp), free(ev_of_row);
    }
    /* predecessors (CSR) and a topological order (Kahn) */
    sg->poff = calloc(nn + 1, sizeof *sg->poff);
    sg->pe = malloc((sg->ne ? sg->ne : 1) * sizeof *sg->pe);
    sg->ord = malloc((nn ? nn : 1) * sizeof *sg->ord);
    uint32_t *soff = calloc(nn + 1, sizeof *soff), *se = malloc((sg->ne ? sg->ne : 1) * sizeof *se);
    uint32_t *indeg = calloc(nn ? nn : 1, sizeof *indeg), *fill = calloc(nn + 1, sizeof *fill);
    if (!sg->poff || !sg->pe || !sg->ord || !soff || !se || !indeg || !fill) {
        st = hta_oom(err);
    } else {
        for (size_t e = 0; e < sg->ne; e++) sg->poff[sg->ev[e] + 1]++, soff[sg->eu[e] + 1]++;
        for (size_t v = 0; v < nn; v++) sg->poff[v + 1] += sg->poff[v], soff[v + 1] += soff[v];
        for (size_t e = 0; e < sg->ne; e++) sg->pe[sg->poff[sg->ev[e]] + fill[sg->ev[e]]++] = (uint32_t)e;
        memset(fill, 0, (nn + 1) * sizeof *fill);
        for (size_t e = 0; e < sg->ne; e++) se[soff[sg->eu[e]] + fill[sg->eu[e]]++] = (uint32_t)e;
        size_t h = 0;
        for (size_t v = 0; v < nn; v++) {
            indeg[v] = sg->poff[v + 1] - sg->poff[v];
            if (!indeg[v]) sg->ord[sg->nord++] = (uint32_t)v;
        }
        for (; h < sg->nord; h++) {
            uint32_t u = sg->ord[h];
            for (uint32_t k = soff[u]; k < soff[u + 1]; k++)
                if (!--indeg[sg->ev[se[k]]]) sg->ord[sg->nord++] = sg->ev[se[k]];
        }
        if (sg->nord != nn) st = hta_fail(err, HTA_EINVAL, "the critical-path graph has a cycle");
    }
    free(soff), free(se), free(indeg), free(fill);
out:
    free(syncdst), free(burst), free(prev);
    if (st) sgraph_free(sg);
    return st;
}

/* Earliest time of every node when edge e takes w[e]; a node without predecessors keeps its time. */
static void sgraph_schedule(const hta_cp_graph *g, const sgraph *sg, const int64_t *w, int64_t *t) {
    for (size_t i = 0; i < sg->nord; i++) {
        uint32_t v = sg->ord[i];
        if (sg->poff[v] == sg->poff[v + 1]) {
            t[v] = g->node[v].ts;
            continue;
        }
        int64_t b = INT64_MIN;
        for (uint32_t k = sg->poff[v]; k < sg->poff[v + 1]; k++) {
            uint32_t e = sg->pe[k];
            int64_t x;
            if (__builtin_add_overflow(t[sg->eu[e]], w[e], &x)) x = INT64_MAX; /* saturate: never wrap */
            b = i64max(b, x);
        }
        t[v] = b;
    }
}

hta_status rp_savings(hta_ctx *ctx, const rp_rank *pr, rp_scenario *sc, size_t nsc, hta_error *err) {
    size_t nr = hta_ctx_nranks(ctx), tot = 0;
    for (size_t k = 0; k < nr; k++) tot += pr[k].nsteps;
    hta_status st = HTA_OK;
    parsed *ps = calloc(nsc ? nsc : 1, sizeof *ps);
    int64_t *num = malloc((tot ? tot : 1) * sizeof *num), *base = malloc((tot ? tot : 1) * sizeof *base);
    int64_t *sim = malloc((tot ? tot : 1) * (nsc ? nsc : 1) * sizeof *sim);
    if (!ps || !num || !base || !sim) {
        st = hta_oom(err);
        goto out;
    }
    for (size_t i = 0; i < nsc && !st; i++) st = parse(&sc[i], &ps[i], err);
    size_t off = 0;
    for (size_t k = 0; k < nr && !st; off += pr[k].nsteps, k++) {
        const rp_rank *p = &pr[k];
        for (size_t s = 0; s < p->nsteps; s++) {
            num[off + s] = p->step_num[s];
            base[off + s] = p->step_end[s] - p->step_ts[s];
            for (size_t i = 0; i < nsc; i++) sim[i * tot + off + s] = base[off + s];
        }
        int any = 0;
        for (size_t i = 0; i < nsc; i++) any |= !sc[i].on || sc[i].on[k];
        if (!any || !p->has_gpu) continue; /* CPU-only ranks: the report's CPU part speaks for them */
        hta_cpath_opts co;
        hta_cpath_opts_default(&co);
        hta_cp_graph *g = NULL;
        hta_error e2 = {0};
        hta_status bs = hta_cpath_build(ctx, k, &co, &g, &e2);
        if (bs == HTA_ENOMEM) {
            *err = e2;
            st = bs;
            break;
        }
        if (bs) continue; /* a rank HTA's graph cannot cover: no saving claimed there */
        size_t ne = g->nedge, nn = g->nnode;
        uint32_t *tn = malloc((nn ? nn : 1) * sizeof *tn);
        size_t ntn = 0;
        sgraph sg = {0};
        if (!tn) st = hta_oom(err);
        /* the nodes of the steps' thread, in time order (node ids are) */
        for (size_t q = 0; !st && q < nn; q++) {
            const hta_cp_event *ev = &g->ev[g->node[q].ev];
            if (ev->stream == -1 && ev->pid == p->step_pid && ev->tid == p->step_tid) tn[ntn++] = (uint32_t)q;
        }
        if (!st) {
            hta_error e3 = {0};
            hta_status s3 = sgraph_build(g, ctx->trace->ranks[k], p, tn, ntn, &sg, &e3);
            if (s3 == HTA_ENOMEM) *err = e3, st = s3;
            else if (s3) ntn = 0; /* cannot schedule this rank: no saving claimed there */
        }
        size_t nw = sg.ne ? sg.ne : 1;
        int64_t *ws = malloc(nw * sizeof *ws), *w = malloc((ne ? ne : 1) * sizeof *w);
        int64_t *tb = malloc((nn ? nn : 1) * sizeof *tb), *tsim = malloc((nn ? nn : 1) * sizeof *tsim);
        int64_t *bts = malloc(p->nsteps * 2 * sizeof *bts);
        if (!st && (!ws || !w || !tb || !tsim || !bts)) st = hta_oom(err);
        wins none = {NULL, NULL, 0};
        int ok = !st && ntn && p->step_pid != -1;
        if (ok) {
            sgraph_schedule(g, &sg, sg.w0, tb);
            for (size_t s = 0; s < p->nsteps; s++) {
                int64_t a = boundary(g, tn, ntn, tb, &none, p->step_pid, p->step_tid, p->step_ts[s]);
                int64_t b = boundary(g, tn, ntn, tb, &none, p->step_pid, p->step_tid, p->step_end[s]);
                bts[2 * s] = a, bts[2 * s + 1] = b;
                base[off + s] = b - a;
                for (size_t i = 0; i < nsc; i++) sim[i * tot + off + s] = b - a;
            }
        }
        for (size_t i = 0; i < nsc && !st && ok; i++) {
            if (sc[i].on && !sc[i].on[k]) continue;
            const parsed *pp = &ps[i];
            for (size_t e = 0; e < ne; e++) w[e] = g->edge[e].w;
            size_t nch = 0;
            if (pp->neng && (st = hta_cpath_whatif_weights(g, pp->eng, pp->neng, w, &nch, err))) break;
            memcpy(ws, sg.w0, sg.ne * sizeof *ws);
            for (size_t e = 0; e < ne; e++)
                if (w[e] != g->edge[e].w) ws[e] = w[e];
            span *spv[16];
            size_t spn[16];
            wins wv = {spv, spn, 0};
            for (size_t j = 0; j < pp->nwin && j < 16 && !st; j++) {
                st = spans_of(ctx, k, pp->win[j], &pp->winr[j], &spv[wv.k], &spn[wv.k], err);
                if (!st) wv.k++;
            }
            if (!st && wv.k)
                for (size_t e = 0; e < ne; e++) {
                    const hta_cp_edge *ed = &g->edge[e];
                    const hta_cp_event *a = &g->ev[g->node[ed->u].ev], *b = &g->ev[g->node[ed->v].ev];
                    if (!same_thread(a, b)) continue;
                    int64_t x = (int64_t)removed_all(&wv, a->pid, a->tid, g->node[ed->u].ts, g->node[ed->v].ts);
                    ws[e] = ws[e] - x > 0 ? ws[e] - x : 0;
                }
            if (!st) sgraph_schedule(g, &sg, ws, tsim);
            for (size_t s = 0; s < p->nsteps && !st; s++) {
                int64_t a = boundary(g, tn, ntn, tsim, &wv, p->step_pid, p->step_tid, p->step_ts[s]);
                int64_t b = boundary(g, tn, ntn, tsim, &wv, p->step_pid, p->step_tid, p->step_end[s]);
                int64_t d = b - a, bd = bts[2 * s + 1] - bts[2 * s];
                /* rules that only speed things up never lengthen a step; rounding of the spans aside,
                 * the schedule cannot */
                sim[i * tot + off + s] = d < 0 ? 0 : d > bd ? bd : d;
            }
            for (size_t j = 0; j < wv.k; j++) free(spv[j]);
        }
        sgraph_free(&sg);
        free(ws);
        free(w);
        free(tb);
        free(tsim);
        free(tn);
        free(bts);
        hta_cpath_free(g);
        hta_ctx_view_done(ctx, k);
    }
    for (size_t i = 0; i < nsc && !st; i++) {
        sc[i].baseline_ns = rp_job_median(num, base, tot);
        sc[i].simulated_ns = rp_job_median(num, sim + i * tot, tot);
    }
out:
    for (size_t i = 0; ps && i < nsc; i++) parsed_free(&ps[i]);
    free(ps);
    free(num);
    free(base);
    free(sim);
    return st;
}
