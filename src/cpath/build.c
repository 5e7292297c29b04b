/* Building HTA's critical-path graph for one rank (critical-path.md §1-§6).
 *
 * Works on HTA's view of the rank (view.h: HTA's row set, times rounded as HTA
 * rounds them), in ns.  "Full table" in the spec = the view; "clipped table" =
 * the events selected by the annotation window, kept in ascending event index
 * as HTA returns them. */
#include <stdlib.h>
#include <string.h>

#include "cpath/internal.h"
#include "hta/util.h"
#include "hta/vocab.h"
#include "core/hash.h"
#include "core/vec.h"

void hta_cpath_opts_default(hta_cpath_opts *o) { memset(o, 0, sizeof *o); }

#define KK_THRESHOLD_NS 1500000 /* KERNEL_KERNEL_DELAY_THRESHOLD_US */

/* What the graph rules need to know about an event's name, decided once per name symbol (name_flags) from
 * HTA's name lists (TF§4.4, vocab.h): the rules then test bits per row instead of comparing strings. */
enum {
    NF_LOCK = 1,        /* the runtime lock's calls (hta_is_runtime_lock_name_hta) */
    NF_BLOCKING = 2,    /* blocking CUDA calls */
    NF_LAUNCH = 4,      /* runtime launch names (TF§4.4) */
    NF_EVENT_RECORD = 8,
    NF_STREAM_WAIT_CALL = 16, /* the stream-wait call (HTA_SYNC_STREAM_WAIT_CALL) */
    NF_SWE = 32,        /* its GPU side (HTA_SYNC_STREAM_WAIT_EVENT) */
    NF_EVENT_SYNC = 64,
    NF_CONTEXT_SYNC = 128,
    NF_STREAM_SYNC = 256,
    NF_DATA_LOAD = 512,
    NF_DONE = 1024,
    NF_HOST_SYNC = 2048, /* a host sync call of any vendor (not HTA's rules: it has none) */
};

typedef struct bld {
    const hta_trace *t;
    const hta_rank *r;
    const hta_cpath_opts *o;
    const hta_view *v;  /* the run context's view of the rank */
    hta_cp_graph *g;
    cp_edges es;
    uint16_t *nflags;   /* per name symbol */
    /* The spec's rules are written with HTA's index_correlation (-1: no correlation id, 0: no partner,
     * else the partner's event index), so it is rebuilt per view position; where HTA's 0 would be misread
     * as event 0 (Q7) the code asks r->partner instead. */
    int64_t *ic;        /* per view position: HTA's index_correlation */
    int32_t *vpos_of_index; /* event index -> view position, -1 */
    size_t nindex;
    int32_t *ce_of_vpos;    /* view position -> clipped event, -1 */
    uint32_t *gsym;         /* trace symbol -> graph symbol, UINT32_MAX = not yet */
    hta_cp_event *ev;
    size_t nev;
    int cpu_only;           /* no row of the rank's view is GPU work with a correlation id (see make_nodes) */
    int compat;             /* HTA's rules: its CUDA name lists, numpy's tie order, one kernel per launch */
    hta_error *err;         /* the build's: every failure below is reported here */
} bld;

/* Clipped event c's start and end nodes (-1: none; make_nodes sets them). */
#define EV_START(b, c) ((b)->g->ev_node[2 * (size_t)(c)])
#define EV_END(b, c) ((b)->g->ev_node[2 * (size_t)(c) + 1])

static uint16_t name_flags(bld *b, uint32_t sym) {
    uint16_t f = b->nflags[sym];
    if (f & NF_DONE) return f;
    const char *s = hta_sym(b->t->sym, sym);
    f = NF_DONE;
    static const uint16_t sync_flag[] = {
        [HTA_SYNC_EVENT_RECORD] = NF_EVENT_RECORD,  [HTA_SYNC_STREAM_WAIT_CALL] = NF_STREAM_WAIT_CALL,
        [HTA_SYNC_STREAM_WAIT_EVENT] = NF_SWE,      [HTA_SYNC_EVENT_SYNC] = NF_EVENT_SYNC,
        [HTA_SYNC_CONTEXT_SYNC] = NF_CONTEXT_SYNC,  [HTA_SYNC_STREAM_SYNC] = NF_STREAM_SYNC,
    };
    f |= sync_flag[hta_sync_kind_of(s)];
    if (b->compat) {
        if (hta_is_runtime_lock_name_hta(s)) f |= NF_LOCK;
        if (hta_is_blocking_call_hta(s)) f |= NF_BLOCKING;
        if (hta_is_runtime_launch_name_hta(s)) f |= NF_LAUNCH;
    } else {
        /* every vendor's calls: the runtime lock is taken by launches, stream-ordered copies and pinned
         * allocations; the host blocks in syncs, event queries and unordered copies */
        unsigned a = hta_sym_api(b->t, sym);
        if (hta_api_enqueues(a) || (a & HTA_API_HOST_ALLOC)) f |= NF_LOCK;
        if (hta_api_blocks(a) || (a & HTA_API_EVENT_QUERY)) f |= NF_BLOCKING;
        if (hta_api_enqueues(a)) f |= NF_LAUNCH;
        if (hta_api_blocks(a)) f |= NF_HOST_SYNC; /* syncs, and copies that return when done */
        if (a & HTA_API_EVENT_RECORD) f |= NF_EVENT_RECORD;
        if (a & HTA_API_STREAM_WAIT) f |= NF_STREAM_WAIT_CALL;
    }
    for (size_t i = 0; i < b->o->ndata_load; i++)
        if (b->o->data_load[i][0] && strstr(s, b->o->data_load[i])) f |= NF_DATA_LOAD;
    b->nflags[sym] = f;
    return f;
}

static inline uint32_t vrow(const bld *b, size_t k) { return b->v->row[k]; }
static inline int64_t vstream(const bld *b, size_t k) { return hta_row_stream(b->r, vrow(b, k)); }
static inline uint16_t vflags(bld *b, size_t k) { return name_flags(b, b->r->name[vrow(b, k)]); }
static int32_t vpos(const bld *b, int64_t index) {
    return index >= 0 && (size_t)index < b->nindex ? b->vpos_of_index[index] : -1;
}

/* A graph launch starts many GPU rows under one correlation id, and HTA's join keeps the last of them as
 * the launch's partner.  The launch is what the first one (by start) waits for; the others follow it in
 * stream order, through kernel-kernel edges.  So outside HTA's rules a launch's ic names its first row. */
static void first_device_rows(bld *b) {
    for (size_t k = 0; k < b->v->n; k++) {
        uint32_t row = vrow(b, k);
        int32_t p = b->r->partner[row];
        if (vstream(b, k) == -1 || p < 0) continue;
        int32_t pk = vpos(b, b->r->index[p]);
        if (pk < 0 || vstream(b, (size_t)pk) != -1 || b->ic[pk] <= 0) continue;
        int32_t cur = vpos(b, b->ic[pk]);
        if (cur < 0 || b->v->ts[k] < b->v->ts[cur] || (b->v->ts[k] == b->v->ts[cur] && (int32_t)k < cur))
            b->ic[pk] = b->r->index[row];
    }
}

/* ---- §1 window and clipping ---- */

/* The graph keeps names in a symbol table of its own, so that it can be saved and analysed again without
 * the trace (cpath.h). */
static uint32_t gsym(bld *b, uint32_t ts) {
    if (b->gsym[ts] == UINT32_MAX)
        b->gsym[ts] = hta_symtab_intern(b->g->sym, hta_sym(b->t->sym, ts), hta_sym_len(b->t->sym, ts));
    return b->gsym[ts];
}

/* §1 steps 2-4: the window of the annotation's instances [lo, hi] in view times (no annotation: from the
 * earliest row, hi = INT64_MAX). */
static hta_status annot_window(const hta_view *v, const hta_trace *t, const hta_rank *r, const hta_cpath_opts *o,
                               int64_t *lo_out, int64_t *hi_out, hta_error *err) {
    size_t n = v->n;
    int64_t lo = INT64_MAX, hi = INT64_MAX;
    /* No annotation: the whole trace.  HTA's window end is the max of its stale absolute end column (Q1),
     * in effect +infinity, hence hi = INT64_MAX. */
    if (!o->annotation || !o->annotation[0]) {
        for (size_t k = 0; k < n; k++)
            if (v->ts[k] < lo) lo = v->ts[k];
    } else {
        /* annotation ids: every name or category containing the text (§1 step 2).  A category match
         * alone avoids HTA's "no such annotation" failure; instances are still rows whose name contains
         * the text. */
        int any_sym = 0;
        for (size_t c = 0; c < t->ncats && !any_sym; c++)
            if (strstr(hta_sym(t->sym, t->cats[c]), o->annotation)) any_sym = 1;
        unsigned char *match = cp_calloc(hta_symtab_count(t->sym) + 1, 1);
        if (!match) return hta_oom(err);
        int64_t seen = 0;
        lo = INT64_MAX;
        hi = INT64_MIN;
        /* Instances are counted over the view in its order, any category: GPU block first, and a
         * gpu_user_annotation copy counts as an instance (Quirk C1). match[] memoises per name: bit 2 =
         * tested, bit 1 = contains. */
        for (size_t k = 0; k < n; k++) {
            uint32_t nm = r->name[v->row[k]];
            if (!(match[nm] & 2)) match[nm] = (unsigned char)(2 | (strstr(hta_sym(t->sym, nm), o->annotation) != NULL));
            if (!(match[nm] & 1)) continue;
            any_sym = 1;
            if (seen >= o->instance_a && seen <= o->instance_b) {
                if (v->ts[k] < lo) lo = v->ts[k];
                if (v->ts[k] + v->dur[k] > hi) hi = v->ts[k] + v->dur[k];
            }
            seen++;
        }
        free(match);
        if (!any_sym)
            return hta_fail(err, HTA_ENODATA, "rank %d: no event name contains the annotation '%s'",
                            (int)r->rank, o->annotation);
        /* An instance beyond the last: HTA's window becomes NaN and pandas raises (C11); a clear error
         * here. */
        if (lo > hi)
            return hta_fail(err, HTA_ENODATA,
                            "rank %d: annotation '%s' has %lld instance(s); instance %lld%s%.0lld is out of range",
                            (int)r->rank, o->annotation, (long long)seen, (long long)o->instance_a,
                            o->instance_a == o->instance_b ? "" : ":", o->instance_a == o->instance_b ? 0LL : (long long)o->instance_b);
    }
    *lo_out = lo;
    *hi_out = hi;
    return HTA_OK;
}

hta_status hta_cpath_window(hta_ctx *ctx, size_t k, const hta_cpath_opts *o, int64_t *lo, int64_t *hi,
                            hta_error *err) {
    const hta_view *v;
    HTA_TRY(hta_ctx_view(ctx, k, &v, err));
    return annot_window(v, ctx->trace, hta_ctx_rank(ctx, k), o, lo, hi, err);
}

static hta_status clip(bld *b, hta_error *err) {
    const hta_rank *r = b->r;
    size_t n = b->v->n;
    int64_t lo, hi;
    HTA_TRY(annot_window(b->v, b->t, b->r, b->o, &lo, &hi, err));
    unsigned char *sel = cp_calloc(n ? n : 1, 1);
    if (!sel) return hta_oom(err);
    for (size_t k = 0; k < n; k++) {
        /* §1 step 5: every Stream Wait Event, whatever the window (Quirk C2); CPU rows that start in the
         * window and last longer than 0; the GPU rows they launched. */
        if (vflags(b, k) & NF_SWE) sel[k] = 1;
        if (vstream(b, k) != -1) continue;
        if (b->v->ts[k] < lo || b->v->ts[k] > hi || b->v->dur[k] <= 0) continue;
        sel[k] = 1;
        /* GPU rows launched from this CPU row (a join on index_correlation;
         * unlike HTA, "no partner" never selects event 0) */
        if (b->r->partner[vrow(b, k)] < 0) continue;
        int32_t gk = vpos(b, b->ic[k]);
        if (gk >= 0 && vstream(b, (size_t)gk) != -1) sel[gk] = 1;
    }
    /* a graph launch started every GPU row of its correlation id, not only the one HTA's join keeps */
    if (!b->compat)
        for (size_t k = 0; k < n; k++) {
            int32_t p = b->r->partner[vrow(b, k)];
            if (vstream(b, k) == -1 || p < 0) continue;
            int32_t pk = vpos(b, b->r->index[p]);
            if (pk >= 0 && sel[pk] && vstream(b, (size_t)pk) == -1) sel[k] = 1;
        }
    size_t m = 0;
    for (size_t k = 0; k < n; k++) m += sel[k];
    hta_status cs = cp_check_events(m, err);
    if (cs) {
        free(sel);
        return cs;
    }
    uint32_t *list = cp_malloc((m ? m : 1) * sizeof *list);
    b->ev = cp_calloc(m ? m : 1, sizeof *b->ev);
    b->g->ev_node = malloc(2 * (m ? m : 1) * sizeof *b->g->ev_node); /* nodes, once made (make_nodes) */
    b->g->ev_row = malloc((m ? m : 1) * sizeof *b->g->ev_row);
    if (!list || !b->ev || !b->g->ev_node || !b->g->ev_row) {
        free(sel);
        free(list);
        return hta_oom(err);
    }
    memset(b->g->ev_node, 0xff, 2 * (m ? m : 1) * sizeof *b->g->ev_node);
    /* ascending event index (view order is GPU block then CPU block): walk
     * the index -> view position map instead of sorting */
    size_t m2 = 0;
    for (size_t x = 0; x < b->nindex; x++) {
        int32_t k = b->vpos_of_index[x];
        if (k >= 0 && sel[k]) list[m2++] = (uint32_t)k;
    }
    if (m2 != m) { /* several rows with one index: sort them instead */
        m = 0;
        for (size_t k = 0; k < n; k++)
            if (sel[k]) list[m++] = (uint32_t)k;
        int64_t *key = cp_malloc((n ? n : 1) * sizeof *key);
        if (!key) {
            free(sel);
            free(list);
            return hta_oom(err);
        }
        for (size_t i = 0; i < m; i++) key[list[i]] = r->index[vrow(b, list[i])];
        int sort_failed = hta_stable_sort_idx_i64(list, m, key, NULL);
        free(key);
        if (sort_failed) {
            free(sel);
            free(list);
            return hta_oom(err);
        }
    }
    free(sel);
    cp_thrmap tm = {0};
    for (size_t i = 0; i < m; i++) {
        size_t k = list[i];
        uint32_t row = vrow(b, k);
        const hta_thread *th = hta_row_thread(r, row);
        hta_cp_event *e = &b->ev[i];
        e->ts = b->v->ts[k];
        e->dur = b->v->dur[k];
        if (cp_thr_id(b->g, &tm, th->pid, th->tid, vstream(b, k), &e->thr, err)) {
            cp_thrmap_free(&tm);
            free(list);
            return HTA_ENOMEM;
        }
        e->index = r->index[row];
        b->g->ev_row[i] = (int32_t)row;
        /* The event copies what the graph reports (times, ids, names): the graph outlives the view and can
         * be saved without the trace. */
        e->name = gsym(b, r->name[row]);
        e->cat = gsym(b, hta_row_cat_sym(b->t, r, row));
        if (e->name == UINT32_MAX || e->cat == UINT32_MAX) {
            cp_thrmap_free(&tm);
            free(list);
            return hta_oom(err);
        }
        b->ce_of_vpos[k] = (int32_t)i;
    }
    cp_thrmap_free(&tm);
    b->nev = m;
    free(list);
    return HTA_OK;
}

/* ---- §3 nodes ---- */

/* §3: the categories whose events get nodes. user_annotation, python_function and mtia_runtime are not
 * among them (C4).  On a CPU-only rank, where HTA stops (no queue length series), user annotations get
 * nodes too: there the CPU threads are the whole story, and the annotations are their largest units of
 * work (ProfilerStep#N, record_function ranges, libhtatrace scopes, gloo collectives) whose time outside
 * any operator would otherwise fall off the path.  A rank with GPU work keeps HTA's graph exactly. */
static int is_cpu_cat(const char *c, int cpu_only) {
    return !strcmp(c, "cpu_op") || !strcmp(c, "cuda_runtime") || !strcmp(c, "cuda_driver") ||
           (cpu_only && !strcmp(c, "user_annotation"));
}

/* node_list sorted by (ts, event index, start first): the candidates are
 * listed in event index order, start before end, so a stable sort by ts
 * alone gives that order. */
static hta_status make_nodes(bld *b, hta_error *err) {
    hta_cp_graph *g = b->g;
    size_t cap = 2 * b->nev + 1;
    uint64_t *key = cp_malloc(2 * cap * sizeof *key);
    uint32_t *val = cp_malloc(2 * cap * sizeof *val);
    unsigned char *cpu_cat = cp_calloc(hta_symtab_count(g->sym) + 1, 1);
    if (!key || !val || !cpu_cat) {
        free(key);
        free(val);
        free(cpu_cat);
        return hta_oom(err);
    }
    for (uint32_t c = 0; c < hta_symtab_count(g->sym); c++) cpu_cat[c] = (unsigned char)is_cpu_cat(hta_sym(g->sym, c), b->cpu_only);
    size_t n = 0;
    int64_t lo = INT64_MAX;
    for (size_t i = 0; i < b->nev; i++) {
        hta_cp_event *e = &b->ev[i];
        int32_t k0 = vpos(b, e->index);
        /* §3: an event gets nodes if its category is one of those, its name contains a data-load pattern,
         * or it is device work with a correlation id (ic >= 0). */
        int sel = cpu_cat[e->cat] || (vflags(b, (size_t)k0) & NF_DATA_LOAD) ||
                  (hta_cp_ev_stream(g, e) != -1 && b->ic[k0] >= 0);
        if (!sel) continue;
        if (e->ts < lo) lo = e->ts;
        if (e->ts + e->dur < lo) lo = e->ts + e->dur;
        val[n++] = (uint32_t)i << 1;
        val[n++] = (uint32_t)i << 1 | 1;
    }
    free(cpu_cat);
    for (size_t j = 0; j < n; j++) {
        const hta_cp_event *e = &b->ev[val[j] >> 1];
        /* times relative to the earliest, so that they are non-negative radix keys: a linear radix sort
         * instead of a comparison sort */
        key[j] = (uint64_t)(e->ts + ((val[j] & 1) ? e->dur : 0)) - (uint64_t)lo;
    }
    hta_rsort(key, val, n, key + cap, val + cap);
    free(key);
    g->node = cp_malloc((n ? n : 1) * sizeof *g->node);
    if (!g->node) {
        free(val);
        return hta_oom(err);
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t ce = val[i] >> 1;
        int is_end = val[i] & 1;
        hta_cp_event *e = &b->ev[ce];
        g->node[i] = (hta_cp_node){is_end ? e->ts + e->dur : e->ts, ce, (uint8_t)!is_end};
        g->ev_node[2 * (size_t)ce + (size_t)is_end] = (int32_t)i;
    }
    g->nnode = n;
    free(val);
    return HTA_OK;
}

/* ---- edges ---- */

/* HTA's _add_edge_helper + attribution (§2).  parent: event for the
 * "end -> start inside a parent" case, -1 if none.  Dependency and sync edges
 * carry no time: they only order events.  Attribution says which event an
 * edge's time is spent in, for the breakdown's bound_by. */
static hta_status add_edge(bld *b, uint32_t u, uint32_t v, int type, int zero, int32_t parent) {
    hta_cp_graph *g = b->g;
    /* HTA asserts that source and destination differ (§2); such an edge is skipped */
    if (u == v) return HTA_OK;
    int64_t w = (type == HTA_CP_DEPENDENCY || type == HTA_CP_SYNC || zero) ? 0 : g->node[v].ts - g->node[u].ts;
    int32_t attr = -1;
    if (type == HTA_CP_KK) attr = (int32_t)g->node[u].ev;
    else if (type == HTA_CP_OPERATOR) {
        if (g->node[u].is_start) attr = (int32_t)g->node[u].ev;
        else if (!g->node[v].is_start) attr = (int32_t)g->node[v].ev;
        else attr = parent;
    }
    return cp_edges_put(&b->es, u, v, type, w, attr, b->err);
}

static uint16_t ev_flags(bld *b, uint32_t ce) { return vflags(b, (size_t)vpos(b, b->ev[ce].index)); }

/* §4: CUDA runtime lock.  Calls that take the runtime's lock (cudaLaunchKernel, cudaMemcpyAsync,
 * cudaHostAlloc) complete in lock order across threads: at each end every pending start is linked to it
 * (its own start by an operator edge, the others by dependencies), and consecutive ends are chained. */
static hta_status phase_a(bld *b) {
    hta_cp_graph *g = b->g;
    uint32_t *stack = cp_malloc((g->nnode + 1) * sizeof *stack);
    if (!stack) return hta_oom(b->err);
    hta_status st = HTA_OK;
    size_t sp = 0;
    int64_t last = -1;
    for (uint32_t n = 0; n < g->nnode; n++) {
        uint32_t e = g->node[n].ev;
        if (!(ev_flags(b, e) & NF_LOCK)) continue;
        if (g->node[n].is_start) {
            stack[sp++] = n;
        } else {
            while (sp) {
                uint32_t p = stack[--sp];
                int ok = (int32_t)p == EV_START(b, e);
                HTA_TRY_GOTO(st, add_edge(b, p, n, ok ? HTA_CP_OPERATOR : HTA_CP_DEPENDENCY, 0, -1), done);
            }
            if (last >= 0 && !g->node[last].is_start)
                HTA_TRY_GOTO(st, add_edge(b, (uint32_t)last, n, HTA_CP_DEPENDENCY, 0, -1), done);
        }
        last = n;
    }
done:
    free(stack);
    return st;
}

/* §5: CPU call stacks (old call graph, TF§14.2) */

typedef struct endp {
    int64_t t, dur;
    uint32_t index;
    uint32_t ce;
    uint8_t is_start;
} endp;

/* compare_events of the old call stack, for events with dur > 0 */
/* Reproduces TF§14.2 exactly, including its non-transitive case for zero-duration events (Q11), which is
 * why it is only used through qsort on groups that have one. */
static int cmp_endp(const void *a, const void *b) {
    const endp *x = a, *y = b;
    if (x->ce == y->ce) return x->is_start ? -1 : (y->is_start ? 1 : 0);
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    if (x->is_start && y->is_start) {
        if (x->dur != y->dur) return x->dur > y->dur ? -1 : 1;
        return x->index < y->index ? -1 : 1;
    }
    if (!x->is_start && !y->is_start) {
        if (x->dur != y->dur) return x->dur < y->dur ? -1 : 1;
        return x->index > y->index ? -1 : 1;
    }
    if (x->dur > 0 && y->dur > 0) return x->is_start ? 1 : -1; /* END first */
    if (x->dur == 0 && y->dur == 0) return x->index < y->index ? -1 : 1;
    return x->is_start ? -1 : 1; /* START first */
}

/* cmp_endp on endpoints packed as ce << 1 | is_end, events with dur > 0
 * (then a total order: time; ends before starts; ends by dur up, index
 * down; starts by dur down, index up).  A total order can be sorted by any
 * method with the same result, which lets the radix sort do the bulk. */
static int cmp_packed(const hta_cp_event *ev, uint32_t a, uint32_t c) {
    const hta_cp_event *x = &ev[a >> 1], *y = &ev[c >> 1];
    int xs = !(a & 1), ys = !(c & 1);
    int64_t xt = xs ? x->ts : x->ts + x->dur, yt = ys ? y->ts : y->ts + y->dur;
    if (xt != yt) return xt < yt ? -1 : 1;
    if (xs != ys) return xs ? 1 : -1;
    if (x->dur != y->dur) return (x->dur < y->dur) == !xs ? -1 : 1;
    if (x->index == y->index) return 0;
    return (x->index < y->index) == xs ? -1 : 1;
}

typedef struct thr_key {
    int64_t pid, tid;
    uint32_t t;
} thr_key;

HTA_QSORT_CMP(cmp_thr_key, thr_key, HTA_CMP3(x->pid, y->pid, x->tid, y->tid, x->t, y->t))

static int cmp_packed_r(const void *a, const void *c, void *ev) {
    return cmp_packed(ev, *(const uint32_t *)a, *(const uint32_t *)c);
}

static int str_has(const char *s, const char *sub) { return strstr(s, sub) != NULL; }

/* The one tid of rows (cpu_op / user_annotation) whose name contains sub, or
 * INT64_MIN when there is none or several. */
static int64_t single_tid(bld *b, const char *sub) {
    int64_t tid = INT64_MIN;
    uint32_t ns = hta_symtab_count(b->g->sym);
    unsigned char *memo = cp_calloc(ns + 1, 1); /* 1: no, 2: yes */
    if (!memo) return INT64_MIN;
    for (size_t i = 0; i < b->nev; i++) {
        uint32_t c = b->ev[i].cat, nm = b->ev[i].name;
        if (!memo[c]) {
            const char *cs = hta_sym(b->g->sym, c);
            memo[c] = (!strcmp(cs, "cpu_op") || !strcmp(cs, "user_annotation")) ? 2 : 1;
        }
        if (memo[c] != 2) continue;
        if (!memo[nm]) memo[nm] = str_has(hta_sym(b->g->sym, nm), sub) ? 2 : 1;
        if (memo[nm] != 2) continue;
        int64_t t = hta_cp_ev_tid(b->g, &b->ev[i]);
        if (tid == INT64_MIN) tid = t;
        else if (tid != t) {
            tid = INT64_MIN;
            break;
        }
    }
    free(memo);
    return tid;
}

/* §5: a step between two runtime-lock nodes was drawn by phase A, except end -> start (from one call to
 * the next), which phase B still draws. */
static int shares_lock(bld *b, uint32_t a, uint32_t c) {
    hta_cp_graph *g = b->g;
    if (!(ev_flags(b, g->node[a].ev) & NF_LOCK) || !(ev_flags(b, g->node[c].ev) & NF_LOCK)) return 0;
    return !(!g->node[a].is_start && g->node[c].is_start);
}

static hta_status phase_b(bld *b) {
    size_t m = b->nev;
    const hta_rank *r = b->r;
    /* §5 step 1: when the forward and the backward pass each run on one thread of their own, the backward
     * thread's rows count as the forward thread's, so that the two passes form one call stack. */
    int64_t fwd = single_tid(b, "forward"), bwd = single_tid(b, "autograd");
    int remap = fwd != INT64_MIN && bwd != INT64_MIN && fwd != bwd;
    size_t nt = r->nthreads;
    thr_key *tk = cp_malloc((nt + 1) * sizeof *tk);
    uint32_t *gid = cp_malloc((nt + 1) * sizeof *gid);   /* thread -> group */
    uint32_t *goff = cp_calloc(nt + 2, sizeof *goff);    /* group -> first entry of gr */
    uint32_t *gr = cp_malloc((m ? m : 1) * sizeof *gr);  /* events by group, then event order */
    uint64_t *key = cp_malloc((4 * m + 2) * sizeof *key);
    uint32_t *ep = cp_malloc((4 * m + 2) * sizeof *ep);  /* endpoints: ce << 1 | is_end */
    int32_t *parent = cp_malloc((m ? m : 1) * sizeof *parent);
    int32_t *first = cp_malloc((m + 1) * sizeof *first); /* first child; index m = root */
    int32_t *next = cp_malloc((m ? m : 1) * sizeof *next);
    int32_t *lastc = cp_malloc((m + 1) * sizeof *lastc);
    uint32_t *stack = cp_malloc((2 * m + 2) * sizeof *stack);
    uint32_t *gcpu = NULL;
    endp *slow = NULL;
    hta_status st = HTA_ENOMEM; /* until the end: every failure below is out of memory */
    if (!tk || !gid || !goff || !gr || !key || !ep || !parent || !first || !next || !lastc || !stack) goto done;
    /* groups: distinct (pid, tid) after the forward/backward remap, in
     * (pid, tid) order; each group's events in event order (a counting sort) */
    for (size_t t = 0; t < nt; t++) {
        int64_t tid = r->threads[t].tid;
        if (remap && tid == bwd) tid = fwd;
        tk[t] = (thr_key){r->threads[t].pid, tid, (uint32_t)t};
    }
    qsort(tk, nt, sizeof *tk, cmp_thr_key);
    size_t ng = 0;
    for (size_t t = 0; t < nt; t++) {
        if (t && (tk[t].pid != tk[t - 1].pid || tk[t].tid != tk[t - 1].tid)) ng++;
        gid[tk[t].t] = (uint32_t)ng;
    }
    if (nt) ng++;
    for (size_t i = 0; i < m; i++) goff[gid[r->thread[b->g->ev_row[i]]] + 1]++;
    for (size_t g = 0; g < ng; g++) goff[g + 1] += goff[g];
    {
        uint32_t *fill = cp_malloc((ng + 1) * sizeof *fill);
        if (!fill) goto done;
        memcpy(fill, goff, (ng + 1) * sizeof *fill);
        for (size_t i = 0; i < m; i++) gr[fill[gid[r->thread[b->g->ev_row[i]]]]++] = (uint32_t)i;
        free(fill);
    }
    /* CPU groups (no GPU event) and their endpoints, sorted as the old call
     * stack sorts them (compare_events): by time with a radix sort, then
     * equal times by the full comparison.  A group with a zero-duration
     * event (whose comparison is not a total order) keeps qsort. */
    gcpu = cp_malloc((ng + 1) * sizeof *gcpu); /* entry offset of each CPU group, UINT32_MAX = not CPU */
    if (!gcpu) goto done;
    size_t ne = 0, ncpu = 0;
    int64_t tlo = INT64_MAX, thi = INT64_MIN;
    int any_slow = 0;
    /* Only CPU groups have call stacks: a group with any row on a stream (a Triton cpu_op on stream 0) is
     * UNKNOWN in HTA and skipped whole (Quirk C9). */
    for (size_t g = 0; g < ng; g++) {
        int cpu = 1, zero = 0;
        for (size_t i = goff[g]; i < goff[g + 1]; i++) {
            const hta_cp_event *x = &b->ev[gr[i]];
            if (hta_cp_ev_stream(b->g, x) >= 0) cpu = 0;
            if (x->dur <= 0) zero = 1;
        }
        gcpu[g] = UINT32_MAX;
        if (!cpu || goff[g] == goff[g + 1]) continue;
        ncpu++;
        gcpu[g] = (uint32_t)ne;
        for (size_t i = goff[g]; i < goff[g + 1]; i++) {
            const hta_cp_event *x = &b->ev[gr[i]];
            int64_t d = x->dur > 0 ? x->dur : 0;
            if (x->ts < tlo) tlo = x->ts;
            if (x->ts + d > thi) thi = x->ts + d;
            ep[ne++] = gr[i] << 1;
            ep[ne++] = gr[i] << 1 | 1;
        }
        any_slow |= zero;
    }
    {
        int tbits = 0, gbits = 0;
        if (ne) {
            while (tbits < 64 && ((uint64_t)thi - (uint64_t)tlo) >> tbits) tbits++;
            while (gbits < 32 && (uint64_t)ncpu >> gbits) gbits++;
        }
        /* When (group, time) fits 64 bits, one radix sort orders every group at once; otherwise each group
         * is sorted alone. */
        int combined = !any_slow && tbits + gbits <= 64;
        size_t gi = 0;
        for (size_t g = 0; g < ng; g++) {
            if (gcpu[g] == UINT32_MAX) continue;
            size_t a = gcpu[g], z = a + 2 * (goff[g + 1] - goff[g]);
            for (size_t j = a; j < z; j++) {
                const hta_cp_event *x = &b->ev[ep[j] >> 1];
                int64_t t = (ep[j] & 1) ? x->ts + (x->dur > 0 ? x->dur : 0) : x->ts;
                key[j] = (uint64_t)t - (uint64_t)tlo;
                if (combined && gbits) key[j] |= (tbits < 64 ? (uint64_t)gi << tbits : 0);
            }
            gi++;
        }
        if (combined) {
            hta_rsort(key, ep, ne, key + ne, ep + ne);
        } else {
            for (size_t g = 0; g < ng; g++) {
                if (gcpu[g] == UINT32_MAX) continue;
                size_t a = gcpu[g], z = a + 2 * (goff[g + 1] - goff[g]);
                int zero = 0;
                for (size_t i = goff[g]; i < goff[g + 1]; i++) zero |= b->ev[gr[i]].dur <= 0;
                if (!zero) {
                    hta_rsort(key + a, ep + a, z - a, key + ne, ep + ne);
                    continue;
                }
                /* the old call stack's sort, as before */
                endp *w = realloc(slow, (z - a) * sizeof *w);
                if (!w) goto done;
                slow = w;
                size_t k = 0;
                for (size_t i = goff[g]; i < goff[g + 1]; i++) {
                    hta_cp_event *x = &b->ev[gr[i]];
                    int64_t d = x->dur > 0 ? x->dur : 0;
                    w[k++] = (endp){x->ts, d, x->index, gr[i], 1};
                    w[k++] = (endp){x->ts + d, d, x->index, gr[i], 0};
                }
                qsort(w, k, sizeof *w, cmp_endp);
                for (size_t j = 0; j < k; j++) ep[a + j] = w[j].ce << 1 | !w[j].is_start;
                key[a] = UINT64_MAX; /* sorted: skip the fix-up below */
            }
        }
        /* equal times: the full comparison (insertion sort; runs are short) */
        for (size_t g = 0; g < ng; g++) {
            if (gcpu[g] == UINT32_MAX) continue;
            size_t a = gcpu[g], z = a + 2 * (goff[g + 1] - goff[g]);
            if (!combined && key[a] == UINT64_MAX) continue;
            for (size_t s0 = a, s1; s0 < z; s0 = s1) {
                for (s1 = s0 + 1; s1 < z && key[s1] == key[s0]; s1++) {}
                if (s1 - s0 < 2) continue;
                if (s1 - s0 > 64) {
                    /* long run: any correct sort of a total order gives the same result */
                    qsort_r(ep + s0, s1 - s0, sizeof *ep, cmp_packed_r, b->ev);
                    continue;
                }
                for (size_t i = s0 + 1; i < s1; i++) {
                    uint32_t x = ep[i];
                    size_t j = i;
                    while (j > s0 && cmp_packed(b->ev, x, ep[j - 1]) < 0) {
                        ep[j] = ep[j - 1];
                        j--;
                    }
                    ep[j] = x;
                }
            }
        }
    }
    /* Each CPU group's tree, built as the old call stack builds it (TF§14.2): a start becomes the last
     * child of the top of the stack and is pushed, an end pops.  first/next/lastc keep every children list
     * in start order, the order the walk below visits them in. */
    for (size_t g = 0; g < ng; g++) {
        if (gcpu[g] == UINT32_MAX) continue;
        size_t e0 = gcpu[g], ne_g = 2 * (size_t)(goff[g + 1] - goff[g]);
        const uint32_t *gep = ep + e0;
        first[m] = lastc[m] = -1;
        size_t sp = 0;
        for (size_t i = 0; i < ne_g; i++) {
            uint32_t c = gep[i] >> 1;
            if (!(gep[i] & 1)) {
                /* HTA pops at every end without checking that it is the top's (TF§14.2); the same tree
                 * needs the same pops. */
                uint32_t p = sp ? stack[sp - 1] : (uint32_t)m;
                parent[c] = sp ? (int32_t)p : -1;
                first[c] = lastc[c] = -1;
                next[c] = -1;
                if (lastc[p] < 0) first[p] = (int32_t)c;
                else next[lastc[p]] = (int32_t)c;
                lastc[p] = (int32_t)c;
                stack[sp++] = c;
            } else if (sp) {
                sp--;
            }
        }
        /* Depth-first walk, children in start order (TF§14.2); stack entries: ce*2 + exiting.  Events
         * without nodes (user_annotation, python_function...) are walked for their children but draw
         * nothing and leave op_depth alone.  Consecutive top-level calls are joined by a dependency
         * (op_depth 0), nested steps by operator edges attributed to the enclosing event. */
        int64_t last_node = -1, last_parent = -1;
        int op_depth = 0;
        sp = 0;
        /* push root children in reverse so the first is visited first */
        {
            size_t base = sp;
            for (int32_t c = first[m]; c >= 0; c = next[c]) stack[sp++] = (uint32_t)c * 2;
            for (size_t i = base, j = sp - 1; sp && i < j; i++, j--) {
                uint32_t tmp = stack[i];
                stack[i] = stack[j];
                stack[j] = tmp;
            }
        }
        while (sp) {
            uint32_t it = stack[--sp];
            uint32_t c = it / 2;
            if (!(it & 1)) {
                if (EV_START(b, c) >= 0) {
                    if (last_node >= 0 && !shares_lock(b, (uint32_t)last_node, (uint32_t)EV_START(b, c)) &&
                        add_edge(b, (uint32_t)last_node, (uint32_t)EV_START(b, c),
                                 op_depth == 0 ? HTA_CP_DEPENDENCY : HTA_CP_OPERATOR, 0, (int32_t)last_parent))
                        goto done;
                    last_node = EV_START(b, c);
                    last_parent = parent[c];
                    op_depth++;
                }
                stack[sp++] = c * 2 + 1;
                size_t base = sp;
                for (int32_t ch = first[c]; ch >= 0; ch = next[ch]) stack[sp++] = (uint32_t)ch * 2;
                for (size_t i = base, j = sp - 1; sp > base && i < j; i++, j--) {
                    uint32_t tmp = stack[i];
                    stack[i] = stack[j];
                    stack[j] = tmp;
                }
            } else if (EV_START(b, c) >= 0) {
            /* Leaving e: the time since the last step is operator time, except in a blocking call (a sync,
             * cudaMemcpy), which only waits: weight 0, as in HTA (§5); what it waited for comes in
             * through a sync edge where there is one. */
                if (last_node >= 0 && !shares_lock(b, (uint32_t)last_node, (uint32_t)EV_END(b, c)) &&
                    add_edge(b, (uint32_t)last_node, (uint32_t)EV_END(b, c), HTA_CP_OPERATOR,
                             (ev_flags(b, c) & NF_BLOCKING) != 0, (int32_t)last_parent))
                    goto done;
                last_node = EV_END(b, c);
                last_parent = parent[c];
                op_depth--;
            }
        }
    }
    st = HTA_OK;
done:
    if (st) hta_oom(b->err);
    free(tk);
    free(gid);
    free(goff);
    free(gr);
    free(key);
    free(ep);
    free(gcpu);
    free(slow);
    free(parent);
    free(first);
    free(next);
    free(lastc);
    free(stack);
    return st;
}

/* §6: GPU work and synchronisation */

typedef struct launch {
    int64_t ts;
    int64_t pid, tid;       /* launching thread */
    int64_t kpid, kstream;  /* device and stream of the launched activity */
    uint32_t k, dk;         /* view positions of the call and the activity */
} launch;

typedef struct i64map { /* int64 -> int64, open addressing */
    int64_t *k, *v;
    size_t mask;
} i64map;

static hta_status map_init(i64map *m, size_t n, hta_error *err) {
    size_t ns = 64;
    while (ns < 2 * n) ns <<= 1;
    m->k = cp_malloc(ns * sizeof *m->k);
    m->v = cp_malloc(ns * sizeof *m->v);
    if (!m->k || !m->v) return hta_oom(err);
    for (size_t i = 0; i < ns; i++) m->k[i] = INT64_MIN;
    m->mask = ns - 1;
    return 0;
}
static void map_free(i64map *m) {
    free(m->k);
    free(m->v);
}
/* Inserts key -> val unless present; returns the slot. */
static size_t map_put(i64map *m, int64_t key, int64_t val, int overwrite) {
    size_t j = hta_hash_u64((uint64_t)key) & m->mask;
    while (m->k[j] != INT64_MIN && m->k[j] != key) j = (j + 1) & m->mask;
    if (m->k[j] == INT64_MIN || overwrite) m->v[j] = val;
    m->k[j] = key;
    return j;
}
static int map_get(const i64map *m, int64_t key, int64_t *val) {
    if (!m->k) return 0;
    size_t j = hta_hash_u64((uint64_t)key) & m->mask;
    while (m->k[j] != INT64_MIN) {
        if (m->k[j] == key) {
            *val = m->v[j];
            return 1;
        }
        j = (j + 1) & m->mask;
    }
    return 0;
}

/* One sample of the queue-length series (§6.1, AN§10.1): +1 at a launch, -1 at its device activity. seq is
 * the concatenation order, for a stable sort on request. */
typedef struct qent {
    int64_t ts;
    uint32_t k, seq;
    uint16_t stream;
    int8_t val;
} qent;

HTA_QSORT_CMP(cmp_qent, qent, HTA_CMP2(x->ts, y->ts, x->seq, y->seq))

/* Launch orders: indices into the launch table, given as qsort_r's context. */
static int cmp_by_dev_stream(const void *a, const void *b, void *ctx) {
    const launch *l = ctx;
    const launch *x = &l[*(const uint32_t *)a], *y = &l[*(const uint32_t *)b];
    if (x->kpid != y->kpid) return x->kpid < y->kpid ? -1 : 1;
    if (x->kstream != y->kstream) return x->kstream < y->kstream ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}
static int cmp_by_thread_stream(const void *a, const void *b, void *ctx) {
    const launch *l = ctx;
    const launch *x = &l[*(const uint32_t *)a], *y = &l[*(const uint32_t *)b];
    if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    if (x->kstream != y->kstream) return x->kstream < y->kstream ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

typedef struct phc {
    int32_t *q;          /* queue length per view position, -1 = none */
    launch *l;
    size_t nl;
    uint32_t *by_dev, *by_thr;
    i64map rec_prev;     /* cudaEventRecord correlation -> launch event index */
    i64map wait_next;    /* cudaStreamWaitEvent view pos -> launch table index */
    int32_t *sync_src;   /* kernel view pos -> source kernel view pos, -1 */
    int64_t *last;       /* per stream slot: end node, -1 */
    uint16_t *seen;      /* streams in first-seen order */
    size_t nseen;
} phc;

static hta_status queue_lengths(bld *b, phc *c) {
    size_t n = b->v->n;
    const hta_rank *r = b->r;
    qent *e = cp_malloc((2 * n + 1) * sizeof *e);
    int64_t *key = NULL;
    uint32_t *perm = NULL;
    unsigned char *dev = cp_calloc(n ? n : 1, 1);
    int64_t *sum = cp_calloc(r->nstreams + 1, sizeof *sum);
    if (!e || !dev || !sum) {
        free(e);
        free(dev);
        free(sum);
        return hta_oom(b->err);
    }
    size_t ne = 0;
    for (size_t k = 0; k < n; k++) {
        /* HTA's runtime launches with index_correlation > 0 (TF§4.4), each with its device row.  The
         * stream slot is the stream index, so equal stream ids of two devices share a queue, as in HTA
         * (C5). */
        if (!(vflags(b, k) & NF_LAUNCH) || b->ic[k] <= 0) continue;
        int32_t dk = vpos(b, b->ic[k]);
        if (dk < 0 || vstream(b, (size_t)dk) == -1) continue;
        dev[dk] = 1;
        e[ne] = (qent){b->v->ts[k], (uint32_t)k, (uint32_t)ne, r->stream[vrow(b, (size_t)dk)], 1};
        ne++;
    }
    for (size_t k = 0; k < n; k++) {
        if (!dev[k]) continue;
        e[ne] = (qent){b->v->ts[k], (uint32_t)k, (uint32_t)ne, r->stream[vrow(b, k)], -1};
        ne++;
    }
    /* HTA sorts with numpy's unstable quicksort; its tie order is what the
     * queue lengths (and so the launch/kernel-kernel choice) depend on.  It is
     * reproduced with --hta-compat; a stable order (the default) changes edge
     * types on some goldens (docs/differences-from-hta.md). */
    key = cp_malloc((ne ? ne : 1) * sizeof *key);
    perm = cp_malloc((ne ? ne : 1) * sizeof *perm);
    if (!key || !perm) goto oom;
    for (size_t i = 0; i < ne; i++) key[i] = e[i].ts;
    if (!b->compat) {
        for (size_t i = 0; i < ne; i++) perm[i] = (uint32_t)i; /* e is already in ts order */
        qsort(e, ne, sizeof *e, cmp_qent);
    } else if (hta_argsort_numpy_i64(key, ne, perm, NULL)) {
        goto oom;
    }
    for (size_t i = 0; i < ne; i++) {
        const qent *x = &e[perm[i]];
        sum[x->stream] += x->val;
        c->q[x->k] = (int32_t)sum[x->stream];
    }
    free(key);
    free(perm);
    free(e);
    free(dev);
    free(sum);
    return HTA_OK;
oom:
    free(key);
    free(perm);
    free(e);
    free(dev);
    free(sum);
    return hta_oom(b->err);
}

/* §6.1's launch table: runtime launches with their device row, sorted by ts (ties in view order); a
 * launch's launch_id is its position. by_dev orders it by (device, stream, launch id) for the event-record
 * lookups, by_thr by (pid, tid, stream, launch id) for the stream-wait lookups. */
static hta_status launch_tables(bld *b, phc *c) {
    size_t n = b->v->n;
    const hta_rank *r = b->r;
    c->l = cp_malloc((n ? n : 1) * sizeof *c->l);
    uint32_t *ord = cp_malloc((n ? n : 1) * sizeof *ord);
    if (!c->l || !ord) {
        free(ord);
        return hta_oom(b->err);
    }
    size_t m = 0;
    int any_rec = 0, any_wait_call = 0, any_swe = 0;
    for (size_t k = 0; k < n; k++) {
        uint16_t f = vflags(b, k);
        any_rec |= (f & NF_EVENT_RECORD) != 0;
        any_wait_call |= (f & NF_STREAM_WAIT_CALL) != 0;
        any_swe |= (f & NF_SWE) != 0;
        if (!(f & NF_LAUNCH) || b->ic[k] <= 0) continue;
        int32_t dk = vpos(b, b->ic[k]);
        if (dk < 0 || vstream(b, (size_t)dk) == -1 || b->ic[dk] <= 0) continue;
        ord[m++] = (uint32_t)k;
    }
    if (hta_stable_sort_idx_i64(ord, m, b->v->ts, NULL)) {
        free(ord);
        return hta_oom(b->err);
    }
    for (size_t i = 0; i < m; i++) {
        uint32_t k = ord[i];
        int32_t dk = vpos(b, b->ic[k]);
        const hta_thread *th = hta_row_thread(r, vrow(b, k)), *kt = hta_row_thread(r, vrow(b, (size_t)dk));
        c->l[i] = (launch){b->v->ts[k], th->pid, th->tid, kt->pid, vstream(b, (size_t)dk), k, (uint32_t)dk};
    }
    c->nl = m;
    c->by_dev = ord; /* reuse */
    for (size_t i = 0; i < m; i++) c->by_dev[i] = (uint32_t)i;
    c->by_thr = cp_malloc((m ? m : 1) * sizeof *c->by_thr);
    if (!c->by_thr) return hta_oom(b->err);
    for (size_t i = 0; i < m; i++) c->by_thr[i] = (uint32_t)i;
    qsort_r(c->by_dev, m, sizeof *c->by_dev, cmp_by_dev_stream, c->l);
    qsort_r(c->by_thr, m, sizeof *c->by_thr, cmp_by_thread_stream, c->l);

    /* R: each cudaEventRecord's previous launch to the (device, stream) its
     * waiters name */
    if (any_rec) {
        i64map ev2s = {0}, ev2p = {0};
        size_t nws = 0, nrec = 0;
        for (size_t k = 0; k < n; k++) {
            if (vflags(b, k) & NF_EVENT_RECORD) nrec++;
            if (hta_row_arg_int(b->t, r, vrow(b, k), HTA_ARG_WAIT_ON_STREAM, -1) > -1) nws++;
        }
        if (map_init(&ev2s, nws, b->err) || map_init(&ev2p, nws, b->err) || map_init(&c->rec_prev, nrec, b->err)) {
            map_free(&ev2s);
            map_free(&ev2p);
            return hta_oom(b->err);
        }
        for (size_t k = 0; k < n; k++) {
            uint32_t row = vrow(b, k);
            int64_t ws = hta_row_arg_int(b->t, r, row, HTA_ARG_WAIT_ON_STREAM, -1);
            if (ws <= -1) continue;
            int64_t id = hta_row_arg_int(b->t, r, row, HTA_ARG_WAIT_ON_EVENT_CORR, -1);
            /* HTA raises when a record id maps to two different (stream, device); the first mapping is
             * kept here */
            map_put(&ev2s, id, ws, 0);
            map_put(&ev2p, id, hta_row_thread(r, row)->pid, 0);
        }
        for (size_t k = 0; k < n; k++) {
            if (!(vflags(b, k) & NF_EVENT_RECORD)) continue;
            int64_t corr = r->correlation[vrow(b, k)], ws, dp;
            if (!map_get(&ev2s, corr, &ws) || !map_get(&ev2p, corr, &dp)) continue;
            /* launches to (dp, ws), by launch id; the last one at or before ts */
            size_t lo = 0, hi = m;
            while (lo < hi) { /* first entry >= (dp, ws) */
                size_t mid = (lo + hi) / 2;
                const launch *x = &c->l[c->by_dev[mid]];
                if (x->kpid < dp || (x->kpid == dp && x->kstream < ws)) lo = mid + 1;
                else hi = mid;
            }
            /* launch ids grow with ts: the last launch of the group with ts <= record ts */
            size_t hi2 = lo;
            while (hi2 < m && c->l[c->by_dev[hi2]].kpid == dp && c->l[c->by_dev[hi2]].kstream == ws) {
                size_t step = 1; /* galloping to the end of the group keeps this O(log) */
                while (hi2 + step < m && c->l[c->by_dev[hi2 + step]].kpid == dp &&
                       c->l[c->by_dev[hi2 + step]].kstream == ws)
                    step *= 2;
                hi2 += step > 1 ? step / 2 : 1;
            }
            size_t a0 = lo, a1 = hi2; /* first launch with ts > record ts */
            while (a0 < a1) {
                size_t mid = (a0 + a1) / 2;
                if (c->l[c->by_dev[mid]].ts <= b->v->ts[k]) a0 = mid + 1;
                else a1 = mid;
            }
            /* the previous launch to the recorded stream, from any CPU thread as HTA searches it (C6) */
            int64_t prev = a0 > lo ? (int64_t)r->index[vrow(b, c->l[c->by_dev[a0 - 1]].k)] : -1;
            map_put(&c->rec_prev, corr, prev, 0);
        }
        map_free(&ev2s);
        map_free(&ev2p);
    }
    /* W: each cudaStreamWaitEvent's next launch to the waiting stream from
     * the same thread */
    if (any_wait_call && any_swe) {
        size_t nwc = 0;
        for (size_t k = 0; k < n; k++) nwc += (vflags(b, k) & NF_STREAM_WAIT_CALL) != 0;
        HTA_TRY(map_init(&c->wait_next, nwc, b->err));
        for (size_t k = 0; k < n; k++) {
            if (!(vflags(b, k) & NF_STREAM_WAIT_CALL) || b->ic[k] <= 0) continue;
            int32_t pk = vpos(b, b->ic[k]);
            if (pk < 0 || !(vflags(b, (size_t)pk) & NF_SWE)) continue;
            int64_t ws = vstream(b, (size_t)pk);
            const hta_thread *th = hta_row_thread(r, vrow(b, k));
            size_t lo = 0, hi = m;
            while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                const launch *x = &c->l[c->by_thr[mid]];
                int less = x->pid != th->pid ? x->pid < th->pid
                           : x->tid != th->tid ? x->tid < th->tid
                                               : x->kstream < ws;
                if (less) lo = mid + 1;
                else hi = mid;
            }
            /* within the group (pid, tid, ws) launch ids grow with ts: binary
             * search over the whole order with the key (group, ts) */
            size_t a0 = lo, a1 = m;
            while (a0 < a1) {
                size_t mid = (a0 + a1) / 2;
                const launch *x = &c->l[c->by_thr[mid]];
                int same = x->pid == th->pid && x->tid == th->tid && x->kstream == ws;
                if (same && x->ts < b->v->ts[k]) a0 = mid + 1;
                else a1 = mid;
            }
            /* the first launch at or after the wait, from its thread to the waiting stream (§6.1: W) */
            int64_t next = -1;
            if (a0 < m) {
                const launch *x = &c->l[c->by_thr[a0]];
                if (x->pid == th->pid && x->tid == th->tid && x->kstream == ws) next = c->by_thr[a0];
            }
            map_put(&c->wait_next, (int64_t)k, next, 1);
        }
    }
    return HTA_OK;
}

typedef struct kent {
    int64_t key;
    uint32_t ce;
} kent;

/* Processing order of §6.1: by key, ties in clipped-event order (ascending event index). */
HTA_QSORT_CMP(cmp_kent, kent, HTA_CMP2(x->key, y->key, x->ce, y->ce))

static int32_t ce_end(bld *b, int32_t vp) {
    if (vp < 0 || b->ce_of_vpos[vp] < 0) return -1;
    return EV_END(b, b->ce_of_vpos[vp]);
}
static int32_t ce_start(bld *b, int32_t vp) {
    if (vp < 0 || b->ce_of_vpos[vp] < 0) return -1;
    return EV_START(b, b->ce_of_vpos[vp]);
}

/* last[] per stream index (stream ids only, C5); seen[] keeps the streams in first-seen order, the order a
 * Context Sync visits them in. */
static void set_last(bld *b, phc *c, uint16_t s, int64_t node) {
    if (c->last[s] < 0) c->seen[c->nseen++] = s;
    c->last[s] = node;
}

/* A host sync call (any vendor's) with no CUPTI sync record of its own: ROCm writes none, and CUDA
 * traces may lack them.  Outside HTA's rules such a call waits for the device by itself (phase_c). */
static int host_sync_alone(bld *b, int32_t k, uint16_t f) {
    if (!(f & NF_HOST_SYNC) || vstream(b, (size_t)k) != -1) return 0;
    int32_t p = b->ic[k] > 0 ? vpos(b, b->ic[k]) : -1;
    return p < 0 || !(vstream(b, (size_t)p) != -1 || (vflags(b, (size_t)p) & (NF_EVENT_SYNC | NF_CONTEXT_SYNC | NF_STREAM_SYNC)));
}

static hta_status phase_c(bld *b, hta_error *err) {
    hta_cp_graph *g = b->g;
    const hta_rank *r = b->r;
    size_t n = b->v->n;
    phc c = {0};
    hta_status st = HTA_ENOMEM;
    kent *K = cp_malloc((b->nev + 1) * sizeof *K);
    c.q = cp_malloc((n ? n : 1) * sizeof *c.q);
    c.sync_src = cp_malloc((n ? n : 1) * sizeof *c.sync_src);
    c.last = cp_malloc((r->nstreams + 1) * sizeof *c.last);
    c.seen = cp_malloc((r->nstreams + 1) * sizeof *c.seen);
    if (!K || !c.q || !c.sync_src || !c.last || !c.seen) goto done;
    for (size_t k = 0; k < n; k++) c.q[k] = -1, c.sync_src[k] = -1;
    for (size_t s = 0; s <= r->nstreams; s++) c.last[s] = -1;
    if ((st = queue_lengths(b, &c)) || (st = launch_tables(b, &c))) goto done;
    if (!c.nl)
        cp_note(g, err, "rank %d has no CPU launch -> GPU activity pair: HTA stops here (no queue length "
                   "series); the path covers CPU work only%s", (int)g->rank,
                b->cpu_only ? " (a CPU-only rank: user annotations get nodes too)" : "");

    size_t nk = 0;
    for (size_t i = 0; i < b->nev; i++) {
        hta_cp_event *e = &b->ev[i];
        int32_t k = vpos(b, e->index);
        uint16_t f = vflags(b, (size_t)k);
        if (host_sync_alone(b, k, f)) {
            K[nk++] = (kent){e->ts + e->dur, (uint32_t)i};
            continue;
        }
        if (!(hta_cp_ev_stream(g, e) != -1 || (f & (NF_EVENT_SYNC | NF_CONTEXT_SYNC))) || b->ic[k] < 0) continue;
        /* a sync record is handled at its end (§6.1), so a Stream Sync that overlaps a memcpy comes after
         * the memcpy's start */
        int sync = !strcmp(hta_sym(g->sym, e->cat), "cuda_sync");
        K[nk++] = (kent){sync ? e->ts + e->dur : e->ts, (uint32_t)i};
    }
    qsort(K, nk, sizeof *K, cmp_kent);
    int missing_launch_nodes = 0;
    st = HTA_ENOMEM;
    for (size_t j = 0; j < nk; j++) {
        uint32_t ce = K[j].ce;
        hta_cp_event *e = &b->ev[ce];
        int32_t k = vpos(b, e->index);
        uint32_t row = vrow(b, (size_t)k);
        uint16_t f = vflags(b, (size_t)k);
        uint16_t sidx = r->stream[row];
        if (host_sync_alone(b, k, f)) {
            /* The call returned once the work it waited for was done: every stream's last activity that
             * ended by then leads to its end.  Which stream or event it waited for is not in the trace, so
             * all streams are candidates; the longest path takes the latest. */
            int32_t call_end = EV_END(b, ce);
            for (size_t i = 0; i < c.nseen && call_end >= 0; i++) {
                int64_t last = c.last[c.seen[i]];
                if (last >= 0 && g->node[last].ts <= g->node[call_end].ts &&
                    add_edge(b, (uint32_t)last, (uint32_t)call_end, HTA_CP_SYNC, 0, -1))
                    goto done;
            }
            continue;
        }
        if (!strcmp(hta_sym(g->sym, e->cat), "cuda_sync")) {
            int32_t call_end = ce_end(b, vpos(b, b->ic[k]));
            /* §6.2: both name, in wait_on_cuda_event_record_corr_id, the cudaEventRecord they wait for;
             * the kernel that record follows (its previous launch, R) is the source. */
            if (f & (NF_SWE | NF_EVENT_SYNC)) {
                int64_t id = hta_row_arg_int(b->t, r, row, HTA_ARG_WAIT_ON_EVENT_CORR, -1), ipl;
                if (!map_get(&c.rec_prev, id, &ipl) || ipl < 0) continue;
                int32_t lv = vpos(b, ipl);
                int32_t src = lv >= 0 ? vpos(b, b->ic[lv]) : -1;
                if (f & NF_SWE) {
                    int64_t dl;
                    int32_t call = vpos(b, b->ic[k]);
                    if (call < 0 || !map_get(&c.wait_next, call, &dl) || dl < 0) continue;
                    /* The next kernel launched to the waiting stream must wait for src; -2: a wait whose
                     * source kernel is not in the view, dropped when that kernel comes. */
                    c.sync_src[c.l[dl].dk] = src >= 0 ? src : -2;
                } else {
                    int32_t se = ce_end(b, src);
                    if (se >= 0 && call_end >= 0 &&
                        add_edge(b, (uint32_t)se, (uint32_t)call_end, HTA_CP_SYNC, 0, -1))
                        goto done;
                }
            } else if (f & NF_CONTEXT_SYNC) {
                for (size_t i = 0; i < c.nseen && call_end >= 0; i++)
                    if (add_edge(b, (uint32_t)c.last[c.seen[i]], (uint32_t)call_end, HTA_CP_SYNC, 0, -1))
                        goto done;
            } else if (f & NF_STREAM_SYNC) {
                if (c.last[sidx] >= 0 && call_end >= 0 &&
                    add_edge(b, (uint32_t)c.last[sidx], (uint32_t)call_end, HTA_CP_SYNC, 0, -1))
                    goto done;
            }
            continue;
        }
        /* §6.2 step 1: device work outside the clipped graph leaves last[] as it was */
        if (EV_START(b, ce) < 0) continue;
        uint32_t s = (uint32_t)EV_START(b, ce), en = (uint32_t)EV_END(b, ce);
        if (add_edge(b, s, en, HTA_CP_OPERATOR, 0, -1)) goto done;
        int64_t sync_end = -1;
        /* §6.2 step 3: a pending stream-wait sync into this kernel; a source without an end node is
         * ignored, as HTA does */
        if (c.sync_src[k] != -1) {
            int32_t se = c.sync_src[k] >= 0 ? ce_end(b, c.sync_src[k]) : -1;
            if (se >= 0) {
                if (add_edge(b, (uint32_t)se, s, HTA_CP_SYNC, 0, -1)) goto done;
                sync_end = se;
            }
            c.sync_src[k] = -1;
        }
        /* §6.2 step 4: a launch-delay edge when the kernel was alone in its stream's queue (1 at the
         * launch, 0 at its start) and both the stream's last kernel and any sync ended before the launch:
         * the kernel waited for its launch.  Else a kernel-kernel edge from the stream's last kernel when
         * the gap is under 1.5 ms and no sync ended after that kernel.  Else no timing edge in. */
        int32_t lc = vpos(b, b->ic[k]);
        int32_t lstart = ce_start(b, lc);
        int64_t rt = lc >= 0 ? b->v->ts[lc] : INT64_MIN;
        int32_t qr = lc >= 0 ? c.q[lc] : -1, ql = c.q[k];
        int64_t last = c.last[sidx];
        int launch_added = 0;
        if (lc >= 0 && qr == 1 && ql == 0 && (last < 0 || g->node[last].ts < rt) &&
            (sync_end < 0 || g->node[sync_end].ts < rt)) {
            if (lstart >= 0) {
                if (add_edge(b, (uint32_t)lstart, s, HTA_CP_LAUNCH, 0, -1)) goto done;
                launch_added = 1;
            } else {
                missing_launch_nodes++;
            }
        } else if (last >= 0 && g->node[s].ts - g->node[last].ts < KK_THRESHOLD_NS &&
                   (sync_end < 0 || g->node[sync_end].ts < g->node[last].ts)) {
            if (add_edge(b, (uint32_t)last, s, HTA_CP_KK, 0, -1)) goto done;
        }
        /* §6.2 step 5 (HTA's CRITICAL_PATH_ADD_ZERO_WEIGHT_LAUNCH_EDGE): keeps the CPU -> GPU causality
         * for what-if edits */
        if (b->o->zero_weight_launch && !launch_added && lstart >= 0 &&
            add_edge(b, (uint32_t)lstart, s, HTA_CP_LAUNCH, 1, -1))
            goto done;
        set_last(b, &c, sidx, en);
    }
    /* HTA asserts here (Quirk C13); the kernels keep their other edges and the note says why they have no
     * launch edge. */
    if (missing_launch_nodes &&
        cp_note(g, err, "%d GPU activities were launched by calls that get no graph node (category not "
                   "cpu_op/cuda_runtime/cuda_driver, e.g. mtia_runtime or the old Runtime): HTA stops with an "
                   "AssertionError; here they get no launch edge", missing_launch_nodes))
        goto done;
    st = HTA_OK;
done:
    free(K);
    free(c.q);
    free(c.sync_src);
    free(c.last);
    free(c.seen);
    free(c.l);
    free(c.by_dev);
    free(c.by_thr);
    map_free(&c.rec_prev);
    map_free(&c.wait_next);
    if (st == HTA_ENOMEM) return hta_oom(err);
    return st;
}

/* §7: SYNC edges between two events of the same stream make HTA's
 * validation fail.  The other check of §7, weights <= -1 clamped to 0, is in
 * the longest path, which counts every negative weight as 0 (C7). */
static hta_status validate(const hta_cp_graph *g, hta_error *err) {
    for (size_t i = 0; i < g->nedge; i++) {
        const hta_cp_edge *e = &g->edge[i];
        if (e->type != HTA_CP_SYNC) continue;
        const hta_cp_event *a = &g->ev[g->node[e->u].ev], *c = &g->ev[g->node[e->v].ev];
        int64_t sa = hta_cp_ev_stream(g, a);
        if (sa != -1 && sa == hta_cp_ev_stream(g, c))
            return hta_fail(err, HTA_EINVAL,
                            "invalid critical-path graph: sync edge between events %u and %u on the same stream %lld",
                            a->index, c->index, (long long)sa);
    }
    return HTA_OK;
}

hta_status hta_cpath_build(hta_ctx *ctx, size_t ri, const hta_cpath_opts *o, hta_cp_graph **out,
                           hta_error *err) {
    hta_cpath_opts dflt_;
    if (!o) hta_cpath_opts_default(&dflt_), o = &dflt_;
    const hta_trace *t = ctx->trace;
    *out = NULL;
    bld b = {0};
    b.t = t;
    b.r = t->ranks[ri];
    b.o = o;
    b.err = err;
    hta_status st = hta_ctx_view(ctx, ri, &b.v, err);
    if (st) return st;
    hta_cp_graph *g = cp_calloc(1, sizeof *g);
    b.g = g;
    size_t n = b.v->n;
    st = HTA_ENOMEM;
    if (!g || !(g->sym = hta_symtab_new())) goto oom;
    g->rank = b.r->rank;
    g->origin_ns = b.v->origin_ns;
    g->zero_weight_launch = o->zero_weight_launch;
    g->hta_compat = b.compat = ctx->hta_compat;
    b.nindex = 0;
    /* event index -> view position needs the largest index; indexes are sparse where events were dropped */
    for (size_t i = 0; i < b.r->n; i++)
        if (b.r->index[i] + 1 > b.nindex) b.nindex = b.r->index[i] + 1;
    b.nflags = cp_calloc(hta_symtab_count(t->sym) + 1, sizeof *b.nflags);
    b.gsym = cp_malloc((hta_symtab_count(t->sym) + 1) * sizeof *b.gsym);
    if (b.gsym) memset(b.gsym, 0xff, (hta_symtab_count(t->sym) + 1) * sizeof *b.gsym);
    b.ic = cp_malloc((n ? n : 1) * sizeof *b.ic);
    b.vpos_of_index = cp_malloc((b.nindex ? b.nindex : 1) * sizeof *b.vpos_of_index);
    b.ce_of_vpos = cp_malloc((n ? n : 1) * sizeof *b.ce_of_vpos);
    cp_edges_init(&b.es, g);
    if (!b.nflags || !b.gsym || !b.ic || !b.vpos_of_index || !b.ce_of_vpos) goto oom;
    for (size_t i = 0; i < b.nindex; i++) b.vpos_of_index[i] = -1;
    for (size_t k = 0; k < n; k++) {
        uint32_t row = b.v->row[k];
        b.vpos_of_index[b.r->index[row]] = (int32_t)k;
        b.ce_of_vpos[k] = -1;
        int32_t p = b.r->partner[row];
        b.ic[k] = b.r->correlation[row] == -1 ? -1 : p >= 0 ? (int64_t)b.r->index[p] : 0;
    }
    /* CPU-only: no device row would get a node (§3: on a stream, with a correlation id).  Rows on a
     * stream without one, such as libhtatrace's GPU scopes (gpu_user_annotation), get none in any case. */
    if (!b.compat) first_device_rows(&b);
    b.cpu_only = 1;
    for (size_t k = 0; k < n && b.cpu_only; k++)
        if (hta_row_stream(b.r, b.v->row[k]) != -1 && b.ic[k] >= 0) b.cpu_only = 0;
    if ((st = clip(&b, err))) goto fail;
    if ((st = make_nodes(&b, err))) goto fail;
    /* a first guess: HTA's graphs have about as many edges as nodes (critical-path.md §13.1) */
    if ((st = cp_edges_reserve(&b.es, g->nnode + g->nnode / 4, err))) goto fail;
    g->ev = b.ev;
    g->nev = b.nev;
    b.ev = NULL;
    b.ev = g->ev; /* shared view while building */
    if ((st = phase_a(&b)) || (st = phase_b(&b))) goto fail;
    if ((st = phase_c(&b, err))) goto fail;
    /* networkx node order (first appearance in edge insertion order) decides the longest path's ties (§8) */
    if ((st = cp_graph_order(g, err))) goto fail;
    if ((st = validate(g, err))) goto fail;
    if ((st = hta_cpath_longest(g, NULL, &g->path, err))) goto fail;
    cp_edges_fini(&b.es);
    free(b.gsym);
    free(b.nflags);
    free(b.ic);
    free(b.vpos_of_index);
    free(b.ce_of_vpos);
    hta_ctx_view_done(ctx, ri); /* the graph holds what it needs of the view */
    *out = g;
    return HTA_OK;
oom:
    st = hta_oom(err);
fail:
    cp_edges_fini(&b.es);
    free(b.gsym);
    free(b.nflags);
    free(b.ic);
    free(b.vpos_of_index);
    free(b.ce_of_vpos);
    if (g && b.ev != g->ev) free(b.ev);
    hta_cpath_free(g);
    hta_ctx_view_done(ctx, ri);
    return st;
}
