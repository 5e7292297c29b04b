/* Building the simulation graph of one rank (hta/sim.h, docs/critical-path.md "Simulation").
 *
 * Works on the rank's rows with their exact ns in every mode.  The edges are made in four passes (thread
 * chains, GPU streams, host waits, joins between threads), each edge with an estimate of the time it
 * would take if it decided its node's time; a last pass gives the deciding input of every node its
 * observed distance and the others their estimates, so that the graph's own weights replay the trace. */
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cpath/sim_internal.h"
#include "core/vec.h"
#include "hta/util.h"
#include "hta/vocab.h"

/* A thread stretch this long without work of its own, that another thread's work fills, is a wait for
 * that thread (the autograd engine's thread, a worker the main thread joins). */
#define SIM_IDLE_NS 1000000
/* ... when the other thread's work starts (fork) or the waiting thread resumes (join) within this of
 * the other thread's last step. */
#define SIM_HANDOVER_NS 200000
/* ... and a thread's first work within this of another thread's step (creating the thread) */
#define SIM_FIRST_HANDOVER_NS 5000000

/* An edge while the graph is built: the graph's own 16 bytes (no second array, no copy: the edges are the
 * graph's largest part, and their fresh pages cost more than the rest of the build's work on them), its w the
 * estimate until decide() gives every edge its weight (est_get, est_set): the weight if this input decides v's
 * time; EST_OBS: the observed distance; EST_WIDE: an estimate beyond 32 bits, in sb.west (as rare as the
 * graph's own wide weights). */
typedef hta_cp_edge sedge;
#define EST_OBS INT32_MIN
#define EST_WIDE (INT32_MIN + 1)

typedef struct sb {
    hta_ctx *ctx;
    size_t k;              /* the rank's position in the context */
    const hta_trace *t;
    const hta_rank *r;
    hta_sim *s;
    hta_cp_graph *g;
    int topo;              /* the schedule's order now (else sim_topo later) */
    int release;           /* the rank's rows released once read (hta_ctx_release_rows) */
    hta_error *err;
    uint8_t *cls;          /* per category index: hta_cat_class */
    uint8_t *skind;        /* per name symbol: hta_sync_kind, 0xff: not yet (a name is read once, not per row) */
    uint32_t *gsym;        /* per trace symbol: the graph's, UINT32_MAX: not yet interned */
    int32_t *ev_of_row;
    int32_t *row;          /* per graph event: its row of the rank (the events do not keep it: the graph outlives
                            * the rows), until the collectives are read */
    size_t nrows;          /* the rank's rows, read before any release */
    size_t nev;
    size_t nnode, capnode;
    sedge *e;
    size_t ne, cap;
    hta_cp_idmap west;     /* the wide estimates (EST_WIDE), by edge id */
    /* per track (thread index of the rank): its events in track order */
    uint32_t *toff, *tev;  /* events of track k: tev[toff[k] .. toff[k + 1]) */
    unsigned char *is_gpu; /* per graph event */
    int64_t *launch_ts;    /* per graph event on a stream: its launch call's start (or its own start) */
    uint32_t *chain_in;    /* per node: its thread-chain in-edge, UINT32_MAX */
    uint32_t *cn;          /* CPU tracks' chain nodes in chain order: track k's are cn[cnoff[k] .. cnoff[k + 1]) */
    uint32_t *cnoff;
    size_t ncn;
    struct corr_row *rec;  /* the cudaEventRecord calls by correlation (read before the rows' times go) */
    size_t nrec;
    uint32_t *lng;         /* the thread chains' long stretches (long_stretches), in edge order */
    size_t nlng;
    uint32_t *pw;          /* the collectives' wait edges (HTA_CP_PEER_WAIT), in edge order, as streams() adds
                            * them: coll_read then need not look for them among every edge */
    size_t npw;
} sb;

/* Node v's time in absolute ns (the graph holds it relative to the origin, in its events: one copy of the
 * times). */
static inline int64_t nt(const sb *b, size_t v) { return hta_cp_node_ts(b->g, v) + b->g->origin_ns; }
/* The graph's id of trace symbol x: interned once per symbol, not once per event (same ids, same order). */
static uint32_t graph_sym(sb *b, uint32_t x) {
    if (b->gsym[x] == UINT32_MAX) b->gsym[x] = hta_symtab_intern(b->g->sym, hta_sym(b->t->sym, x), hta_sym_len(b->t->sym, x));
    return b->gsym[x];
}

static hta_sync_kind sync_kind(sb *b, uint32_t name) {
    if (b->skind[name] == 0xff) b->skind[name] = (uint8_t)hta_sync_kind_of(hta_sym(b->t->sym, name));
    return (hta_sync_kind)b->skind[name];
}
static inline int64_t ev_start(const sb *b, uint32_t e) { return nt(b, 2 * (size_t)e); }
static inline int64_t ev_end(const sb *b, uint32_t e) { return nt(b, 2 * (size_t)e + 1); }

/* Edge i's estimate (INT64_MIN: the observed distance) and setting it. */
static inline int64_t est_get(const sb *b, size_t i) {
    int32_t w = b->e[i].w;
    return w == EST_OBS ? INT64_MIN : w == EST_WIDE ? hta_cp_idmap_get(&b->west, (uint32_t)i) : w;
}
static inline hta_status est_set(sb *b, size_t i, int64_t est) {
    if (est == INT64_MIN) {
        b->e[i].w = EST_OBS;
    } else if (est > EST_WIDE && est <= INT32_MAX) {
        b->e[i].w = (int32_t)est;
    } else {
        HTA_TRY(cp_idmap_put(&b->west, (uint32_t)i, est, b->err));
        b->e[i].w = EST_WIDE;
    }
    return HTA_OK;
}

static hta_status add(sb *b, uint32_t u, uint32_t v, int type, int32_t attr, int64_t est) {
    /* every input comes before what it decides: an edge back in time is no dependency the trace shows */
    if (nt(b, v) < nt(b, u) || u == v) return HTA_OK;
    if (b->ne == b->cap) {
        size_t nc = b->cap ? 2 * b->cap : 1024;
        sedge *x = realloc(b->e, nc * sizeof *x);
        if (!x) return hta_oom(b->err);
        b->e = x;
        b->cap = nc;
    }
    b->e[b->ne] = (sedge){.u = u, .v = v, .w = 0, .attr = attr, .type = (uint8_t)type};
    return est_set(b, b->ne++, est);
}

/* A node beyond the events' own (g->nbase): its time and event in g->node, which holds only those. */
static hta_status add_node(sb *b, int64_t ts, uint32_t ev, uint32_t *id) {
    size_t k = b->nnode - b->g->nbase;
    if (k == b->capnode) {
        size_t nc = 2 * b->capnode + 16;
        hta_cp_node *y = realloc(b->g->node, nc * sizeof *y);
        if (!y) return hta_oom(b->err);
        b->g->node = y;
        b->capnode = nc;
    }
    b->g->node[k] = (hta_cp_node){ts - b->g->origin_ns, ev, 0};
    *id = (uint32_t)b->nnode++;
    return HTA_OK;
}

/* ---- events ---- */

static int is_gpu_class(int c) {
    return c == HTA_CC_KERNEL || c == HTA_CC_MEMCPY || c == HTA_CC_MEMSET;
}

/* qsort_r order of a track's events: start, longer first (the parent before its children), file order */
static int cmp_track(const void *a, const void *c, void *ctx) {
    const sb *b = ctx;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)c;
    int64_t sx = ev_start(b, x), sy = ev_start(b, y);
    if (sx != sy) return sx < sy ? -1 : 1;
    int64_t dx = ev_end(b, x) - sx, dy = ev_end(b, y) - sy;
    return HTA_CMP2(dy, dx, x, y);
}

/* cmp_track for two events, the starts compared first without a call (the events' own starts: the cuts move
 * only ends) */
static inline int track_cmp(const sb *b, uint32_t x, uint32_t y) {
    int64_t sx = b->g->ev[x].ts, sy = b->g->ev[y].ts;
    if (sx != sy) return sx < sy ? -1 : 1;
    return cmp_track(&x, &y, (void *)b);
}

/* A track of many runs into cmp_track's order (track_sort): a stable radix sort by start (the comparator's
 * calls and glibc's merge-sort buffer were 7% of the report on one rank; no copy of the keys: the peak may be here,
 * beside every row), then each run of equal starts by cmp_track itself (longer first, then file order);
 * such runs are short.  The order is total, so this is qsort_r's.  tmp: room for n events. */
static void radix_track_sort(sb *b, uint32_t *t, size_t n, uint32_t *tmp) {
    const hta_cp_event *ev = b->g->ev;
    hta_rsort_ids(t, n, tmp, (const char *)ev + offsetof(hta_cp_event, ts), sizeof *ev); /* by start */
    for (size_t i = 0, z; i < n; i = z) {
        for (z = i + 1; z < n && ev[t[z]].ts == ev[t[i]].ts; z++) {}
        if (z - i > 1) qsort_r(t + i, z - i, sizeof *t, cmp_track, b);
    }
}

/* Runs of a track in order: where the track has at most this many, they are merged (a pass each) rather than
 * sorted again. */
#define TRACK_RUNS 8

/* Merges the sorted runs t[0..p) and t[p..q) (tmp: room for the shorter) by cmp_track: the shorter is copied
 * out and the two merged from its side, so that what is in place already (the longer run's far part) is
 * only compared, never moved. */
static void merge_runs(sb *b, uint32_t *t, size_t p, size_t q, uint32_t *tmp) {
    if (p <= q - p) {
        memcpy(tmp, t, p * sizeof *t);
        size_t i = 0, j = p, k = 0;
        while (i < p && j < q) t[k++] = track_cmp(b, t[j], tmp[i]) < 0 ? t[j++] : tmp[i++];
        while (i < p) t[k++] = tmp[i++];
    } else {
        size_t nr = q - p;
        memcpy(tmp, t + p, nr * sizeof *t);
        size_t i = p, j = nr, k = q;
        while (i > 0 && j > 0) t[--k] = track_cmp(b, tmp[j - 1], t[i - 1]) < 0 ? t[--i] : tmp[--j];
        while (j > 0) t[--k] = tmp[--j];
    }
}

/* A track's events t[0..n) into cmp_track's order, its first run t[0..first) (first < n).  Tracks come mostly in
 * order already (each CPU track of the generated 250 MB rank: two runs): a few runs are merged, with a
 * comparison per event or so; many are sorted (radix_track_sort).  The order is total: either gives qsort_r's.
 * tmp: room for n events. */
static void track_sort(sb *b, uint32_t *t, size_t n, size_t first, uint32_t *tmp) {
    size_t cut[TRACK_RUNS] = {first}, nc = 1; /* where each run after the first begins */
    for (size_t y = first; y + 1 < n; y++)
        if (track_cmp(b, t[y], t[y + 1]) > 0) {
            if (nc == TRACK_RUNS) {
                radix_track_sort(b, t, n, tmp);
                return;
            }
            cut[nc++] = y + 1;
        }
    for (size_t r = 0; r < nc; r++) merge_runs(b, t, cut[r], r + 1 < nc ? cut[r + 1] : n, tmp);
}

/* ---- thread chains ---- */

/* Sets event x's end to t (the nesting's cut): its end node's time, which the builder reads too. */
static hta_status cut_end(sb *b, uint32_t x, int64_t t) {
    return cp_cut_set(b->g, x, t - b->g->origin_ns, b->err);
}

/* Whether event x is a Python frame (python_function). */
static int py_frame(const sb *b, uint32_t x) {
    return b->cls[b->r->cat[b->row[x]]] == HTA_CC_PYTHON_FUNCTION;
}

/* Where x outlasts the open events stack[0..sp) it starts in, of the two ways to nest it the one that moves
 * less time: x cut at its parent's end (by the caller), or the open events that end inside x cut at x's
 * start (here; returns 1).  The second is the common case in real traces: a record_function range
 * (ProfilerStep#N, enumerate(DataLoader)#...) is opened from inside a Python frame (profiler.step,
 * __enter__, _record_function_enter_new) that returns microseconds later, while the range lasts the whole
 * step; cutting the range would make a step of a few microseconds.  -1: out of memory (b->err). */
static int cut_open(sb *b, const uint32_t *stack, size_t sp, uint32_t x) {
    if (!sp || ev_end(b, x) <= ev_end(b, stack[sp - 1])) return 0;
    /* a Python frame that outlasts a range it started in is the frame that closes the range (profiler.step(),
     * __exit__): the frame is cut, never the range (a step would end where its closing call began) */
    if (py_frame(b, x) && !py_frame(b, stack[sp - 1])) return 0;
    size_t j = sp - 1; /* stack[j..sp): the open events that end inside x */
    while (j > 0 && ev_end(b, stack[j - 1]) < ev_end(b, x)) j--;
    if (ev_end(b, stack[j]) - ev_start(b, x) >= ev_end(b, x) - ev_end(b, stack[sp - 1])) return 0;
    for (size_t k = j; k < sp; k++)
        if (cut_end(b, stack[k], ev_start(b, x))) return -1;
    return 1;
}

/* The chain's next boundary v after boundary last (-1: v is the first): the edge between them, attributed to
 * the innermost open event (-1: none, untraced time), which is v's chain input; v joins the chain. */
static hta_status chain_link(sb *b, int64_t last, uint32_t v, int32_t open) {
    if (last >= 0) {
        size_t ne0 = b->ne;
        HTA_TRY(add(b, (uint32_t)last, v, open >= 0 ? HTA_CP_OPERATOR : HTA_CP_GAP, open, INT64_MIN));
        if (b->ne > ne0) b->chain_in[v] = (uint32_t)(b->ne - 1);
    }
    b->cn[b->ncn++] = v;
    return HTA_OK;
}

/* One CPU track: its events nested by a stack (cut_open), and one chain edge between consecutive
 * boundaries, attributed to the innermost open event. */
static hta_status chain(sb *b, const uint32_t *ev, size_t n, uint32_t *stack) {
    hta_cp_graph *g = b->g;
    size_t sp = 0;
    int64_t last = -1;        /* last boundary node */
    int32_t open = -1;        /* innermost open event after it */
    for (size_t i = 0; i <= n; i++) {
        uint32_t x = i < n ? ev[i] : 0;
        int cut = 0;
        /* close what ended before x starts (all at the end), again after a cut at x's start */
        do {
            while (sp && (i == n || ev_end(b, stack[sp - 1]) <= ev_start(b, x))) {
                uint32_t c = stack[--sp];
                uint32_t en = 2 * c + 1;
                HTA_TRY(chain_link(b, last, en, open));
                last = en;
                open = sp ? (int32_t)stack[sp - 1] : -1;
            }
        } while (i < n && (cut = cut_open(b, stack, sp, x)) > 0);
        if (cut < 0) return HTA_ENOMEM;
        if (i == n) break;
        if (sp && ev_end(b, x) > ev_end(b, stack[sp - 1]))
            HTA_TRY(cut_end(b, x, ev_end(b, stack[sp - 1]))); /* not nested: cut at the parent's end */
        g->ev_parent[x] = sp ? (int32_t)stack[sp - 1] : -1;
        uint32_t st = 2 * x;
        HTA_TRY(chain_link(b, last, st, open));
        last = st;
        open = (int32_t)x;
        stack[sp++] = x;
    }
    return HTA_OK;
}

/* ---- GPU streams ---- */

/* The median of n samples (the sorted samples' x[n / 2], found in place), or dflt without any. */
static int64_t median(int64_t *x, size_t n, int64_t dflt) {
    return n ? hta_select_i64(x, n, n / 2) : dflt;
}

typedef struct samples {
    int64_t *v;
    size_t n, cap;
} samples;

static int sample(samples *s, int64_t x) {
    if (HTA_GROW(s->v, s->cap, s->n + 1)) return -1;
    s->v[s->n++] = x;
    return 0;
}

/* The CPU event that launched GPU event x (its correlation partner), or -1. */
static int32_t launcher(const sb *b, uint32_t x) {
    int32_t p = b->r->partner[b->row[x]];
    if (p < 0) return -1;
    int32_t c = b->ev_of_row[p];
    return c >= 0 && !b->is_gpu[c] ? c : -1;
}

/* Which node of the launch call the GPU work follows: the call's end when the work started after it
 * (the usual case), else its start (work that starts while the call still runs, a blocking copy). */
static uint32_t launch_src(const sb *b, uint32_t c, uint32_t x) {
    return ev_start(b, x) > ev_end(b, c) ? 2 * c + 1 : 2 * c;
}

/* A collective's transfer: the shortest instance of the same kernel and message size on this rank (the
 * one where it waited least for the others). */
typedef struct coll {
    uint32_t name;
    int64_t nelems, dur;
    uint32_t ev;
} coll;

HTA_QSORT_CMP(cmp_coll, coll, HTA_CMP3(x->name, y->name, x->nelems, y->nelems, x->ev, y->ev))

static int cmp_coll_ev(const void *a, const void *c) {
    uint32_t x = ((const coll *)a)->ev, y = ((const coll *)c)->ev;
    return (x > y) - (x < y);
}

/* Event x's transfer time where it is a collective (cl: by event, dur the transfer), else -1. */
static int64_t transfer_of(const coll *cl, size_t ncl, uint32_t x) {
    size_t lo = 0, hi = ncl;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cl[mid].ev < x) lo = mid + 1;
        else hi = mid;
    }
    return lo < ncl && cl[lo].ev == x ? cl[lo].dur : -1;
}

/* Whether event x is a communication kernel: its name's type found once (comm: per name, 0 not yet, 1 a
 * communication kernel, 2 not), as matching a name costs more than the rest here. */
static int is_comm(const sb *b, unsigned char *comm, uint32_t x) {
    if (!b->is_gpu[x]) return 0;
    unsigned char *c = &comm[b->g->ev[x].name];
    if (!*c) *c = hta_kernel_type_of(hta_sym(b->g->sym, b->g->ev[x].name)) == HTA_KT_COMMUNICATION ? 1 : 2;
    return *c == 1;
}

static hta_status streams(sb *b, size_t ntracks) {
    hta_cp_graph *g = b->g;
    samples L = {0}, L0 = {0}, S = {0};
    coll *cl = NULL;
    size_t ncl = 0;
    unsigned char *comm = NULL; /* per name of the graph (is_comm) */
    hta_status st = HTA_ENOMEM;
    for (size_t k = 0; k < ntracks; k++)
        for (uint32_t i = b->toff[k]; i < b->toff[k + 1]; i++) {
            uint32_t x = b->tev[i];
            if (!b->is_gpu[x]) break;
            int32_t prev = i > b->toff[k] ? (int32_t)b->tev[i - 1] : -1;
            int32_t c = launcher(b, x);
            if (c >= 0) {
                uint32_t src = launch_src(b, (uint32_t)c, x);
                int64_t ts = nt(b, src);
                if (prev < 0 || ev_end(b, (uint32_t)prev) <= ts) {
                    if (sample((src & 1) ? &L : &L0, ev_start(b, x) - ts)) goto done;
                    continue;
                }
            }
            if (prev >= 0 && ev_end(b, (uint32_t)prev) <= ev_start(b, x) &&
                sample(&S, ev_start(b, x) - ev_end(b, (uint32_t)prev)))
                goto done;
        }
    int64_t lat_end = median(L.v, L.n, SIM_DEFAULT_LAUNCH_NS);
    int64_t lat_start = median(L0.v, L0.n, lat_end);
    int64_t gap = median(S.v, S.n, SIM_DEFAULT_GAP_NS);
    /* collectives' transfer times: the shortest of each kernel name and size (the collectives are few: a list
     * of them, not an array over the events) */
    comm = calloc(hta_symtab_count(g->sym) + 1, 1);
    if (!comm) goto done;
    for (uint32_t x = 0; x < b->nev; x++) ncl += is_comm(b, comm, x);
    if (!(cl = malloc((ncl ? ncl : 1) * sizeof *cl))) goto done;
    ncl = 0;
    for (uint32_t x = 0; x < b->nev; x++)
        if (is_comm(b, comm, x))
            cl[ncl++] = (coll){g->ev[x].name, hta_row_arg_int(b->t, b->r, b->row[x], HTA_ARG_IN_MSG_NELEMS, -1),
                               ev_end(b, x) - ev_start(b, x), x};
    if (ncl > 1) qsort(cl, ncl, sizeof *cl, cmp_coll);
    for (size_t i = 0, j; i < ncl; i = j) {
        int64_t lo = cl[i].dur;
        for (j = i; j < ncl && cl[j].name == cl[i].name && cl[j].nelems == cl[i].nelems; j++)
            if (cl[j].dur < lo) lo = cl[j].dur;
        for (size_t q = i; q < j; q++) cl[q].dur = lo;
    }
    if (ncl > 1) qsort(cl, ncl, sizeof *cl, cmp_coll_ev);
    if (!(b->pw = malloc((ncl ? ncl : 1) * sizeof *b->pw))) goto done; /* a wait edge per collective at most */
    for (size_t k = 0; k < ntracks; k++)
        for (uint32_t i = b->toff[k]; i < b->toff[k + 1]; i++) {
            uint32_t x = b->tev[i];
            if (!b->is_gpu[x]) break;
            uint32_t s0 = 2 * x, s1 = 2 * x + 1;
            int64_t transfer = transfer_of(cl, ncl, x);
            if (transfer >= 0) {
                /* the wait for the other ranks, then the transfer */
                uint32_t mid = 0;
                if ((st = add_node(b, ev_end(b, x) - transfer, x, &mid))) goto done;
                size_t ne0 = b->ne;
                if ((st = add(b, s0, mid, HTA_CP_PEER_WAIT, (int32_t)x, INT64_MIN))) goto done;
                if (b->ne > ne0) b->pw[b->npw++] = (uint32_t)ne0;
                if ((st = add(b, mid, s1, HTA_CP_OPERATOR, (int32_t)x, INT64_MIN))) goto done;
            } else if ((st = add(b, s0, s1, HTA_CP_OPERATOR, (int32_t)x, INT64_MIN))) {
                goto done;
            }
            if (i > b->toff[k] &&
                (st = add(b, 2 * b->tev[i - 1] + 1, s0, HTA_CP_KK, (int32_t)b->tev[i - 1], gap)))
                goto done;
            int32_t c = launcher(b, x);
            if (c >= 0) {
                uint32_t src = launch_src(b, (uint32_t)c, x);
                if ((st = add(b, src, s0, HTA_CP_LAUNCH, -1, (src & 1) ? lat_end : lat_start))) goto done;
            }
        }
    st = HTA_OK;
done:
    free(L.v);
    free(L0.v);
    free(S.v);
    free(cl);
    free(comm);
    return st == HTA_ENOMEM ? hta_oom(b->err) : st;
}

/* ---- host waits and cross-stream waits ---- */

/* The track of stream `stream` on device pid `pid`, or -1. */
static long gpu_track(const sb *b, size_t ntracks, int64_t pid, int64_t stream) {
    for (size_t k = 0; k < ntracks; k++) {
        if (b->toff[k] == b->toff[k + 1] || !b->is_gpu[b->tev[b->toff[k]]]) continue;
        const hta_thread *th = &b->r->threads[k];
        if (th->pid == pid && th->tid == stream) return (long)k;
    }
    return -1;
}

/* The first position in ids[lo .. hi) whose key[ids[pos]] is t or more (the keys ascend along ids). */
static uint32_t lower_bound(const uint32_t *ids, uint32_t lo, uint32_t hi, const int64_t *key, int64_t t) {
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (key[ids[mid]] < t) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* The last GPU event of track k launched before time `before` (launch call start), or -1. */
static int32_t last_launched(const sb *b, size_t k, int64_t before) {
    uint32_t i = lower_bound(b->tev, b->toff[k], b->toff[k + 1], b->launch_ts, before);
    return i > b->toff[k] ? (int32_t)b->tev[i - 1] : -1;
}

/* The first GPU event of track k launched at or after `after`, or -1. */
static int32_t first_launched(const sb *b, size_t k, int64_t after) {
    uint32_t i = lower_bound(b->tev, b->toff[k], b->toff[k + 1], b->launch_ts, after);
    return i < b->toff[k + 1] ? (int32_t)b->tev[i] : -1;
}

/* The last GPU event of track k that ended by t, or -1 (a stream's work ends in start order but for the rare
 * overlap, a copy beside a kernel: a few steps back from the last to start before t). */
static int32_t last_ended_by(const sb *b, size_t k, int64_t t) {
    uint32_t lo = b->toff[k], hi = b->toff[k + 1];
    while (lo < hi) { /* the first event that starts at or after t */
        uint32_t mid = lo + (hi - lo) / 2;
        if (ev_start(b, b->tev[mid]) < t) lo = mid + 1;
        else hi = mid;
    }
    for (uint32_t i = lo, steps = 0; i-- > b->toff[k] && steps < 8; steps++)
        if (ev_end(b, b->tev[i]) <= t) return (int32_t)b->tev[i];
    return -1;
}

/* The last GPU event of track k that ended by t if its launch is not in the trace (work queued before the
 * trace began, or by a thread the profiler did not record), else -1: a host sync waits for such work too
 * when it is still running as the sync starts, and the trace does not say when it was queued. */
static int32_t last_unlaunched_by(const sb *b, size_t k, int64_t t) {
    int32_t x = last_ended_by(b, k, t);
    return x >= 0 && launcher(b, (uint32_t)x) < 0 ? x : -1;
}

typedef struct corr_row {
    int64_t corr;
    int64_t ts; /* the record call's start (absolute ns): kept here, the rows' times go before waits() */
} corr_row;

static int cmp_corr_row(const void *a, const void *c) {
    const corr_row *x = a, *y = c;
    return x->corr < y->corr ? -1 : x->corr > y->corr;
}

/* The start time of the cudaEventRecord call with correlation id corr, or INT64_MIN. */
static int64_t record_ts(const sb *b, const corr_row *rec, size_t nrec, int64_t corr) {
    corr_row key = {corr, 0};
    const corr_row *f = bsearch(&key, rec, nrec, sizeof *rec, cmp_corr_row);
    return f ? f->ts : INT64_MIN;
}

typedef struct wait_src {
    uint32_t call, src;
} wait_src;

/* Cross-stream waits that no CUPTI record describes (ROCm's traces; CUDA's without cuda_sync records): the
 * waiting stream is the one that gets the next GPU work launched after the call, and it waits for the
 * work the device's other streams had been given before the call, as a host sync without its record
 * waits for every stream's last work (ProcessGroupNCCL's pattern: the NCCL stream waits for the compute
 * that filled the bucket, later the compute stream for the collective).  Where the trace shows the waiting
 * work starting before that work ended, add() keeps no edge. */
static hta_status unsaid_stream_waits(sb *b, size_t ntracks) {
    const hta_rank *r = b->r;
    const hta_trace *t = b->t;
    for (uint32_t c = 0; c < b->nev; c++) {
        if (b->is_gpu[c]) continue;
        int32_t row = b->row[c], q = r->partner[row];
        if (!(hta_sym_api(t, r->name[row]) & HTA_API_STREAM_WAIT)) continue;
        if (q >= 0 && b->cls[r->cat[q]] == HTA_CC_CUDA_SYNC)
            continue; /* its record says (waits(), above) */
        int64_t at = ev_start(b, c);
        long to = -1;
        int32_t y = -1;
        for (size_t k = 0; k < ntracks; k++) {
            if (b->toff[k] == b->toff[k + 1] || !b->is_gpu[b->tev[b->toff[k]]]) continue;
            int32_t f = first_launched(b, k, at);
            if (f >= 0 && (y < 0 || b->launch_ts[f] < b->launch_ts[y])) y = f, to = (long)k;
        }
        if (y < 0) continue;
        for (size_t k = 0; k < ntracks; k++) {
            if ((long)k == to || b->toff[k] == b->toff[k + 1] || !b->is_gpu[b->tev[b->toff[k]]] ||
                r->threads[k].pid != r->threads[to].pid)
                continue;
            int32_t x = last_launched(b, k, at);
            if (x >= 0) HTA_TRY(add(b, 2 * (uint32_t)x + 1, 2 * (uint32_t)y, HTA_CP_SYNC, -1, SIM_DEFAULT_GAP_NS));
        }
    }
    return HTA_OK;
}

/* b->rec: the cudaEventRecord calls' correlations and start times, sorted by correlation (cross-stream and
 * event syncs name the record they wait for by its correlation).  Read while the rows' times are there. */
static hta_status records(sb *b) {
    const hta_rank *r = b->r;
    size_t n = 0;
    for (size_t i = 0; i < r->n; i++)
        n += (hta_sym_api(b->t, r->name[i]) & HTA_API_EVENT_RECORD) && r->correlation[i] >= 0;
    if (!(b->rec = malloc((n ? n : 1) * sizeof *b->rec))) return hta_oom(b->err);
    for (size_t i = 0; i < r->n; i++)
        if ((hta_sym_api(b->t, r->name[i]) & HTA_API_EVENT_RECORD) && r->correlation[i] >= 0)
            b->rec[b->nrec++] = (corr_row){r->correlation[i], r->ts[i]};
    if (b->nrec > 1) qsort(b->rec, b->nrec, sizeof *b->rec, cmp_corr_row);
    return HTA_OK;
}

static hta_status waits(sb *b, size_t ntracks) {
    const hta_rank *r = b->r;
    const hta_trace *t = b->t;
    const corr_row *rec = b->rec;
    wait_src *ws = NULL;
    size_t nrec = b->nrec, nws = 0, cws = 0;
    samples own = {0}, ret = {0};
    hta_status st = HTA_ENOMEM;
#define PUSH(c, s)                                                                                           \
    do {                                                                                                     \
        if (nws == cws) {                                                                                    \
            size_t nc_ = cws ? 2 * cws : 256;                                                                \
            wait_src *y_ = realloc(ws, nc_ * sizeof *y_);                                                    \
            if (!y_) goto done;                                                                              \
            ws = y_;                                                                                         \
            cws = nc_;                                                                                       \
        }                                                                                                    \
        ws[nws++] = (wait_src){(c), (uint32_t)(s)};                                                          \
    } while (0)
    /* host calls that waited for the device: which GPU work each waited for */
    for (uint32_t c = 0; c < b->nev; c++) {
        if (b->is_gpu[c]) continue;
        uint32_t row = (uint32_t)b->row[c];
        unsigned a = hta_sym_api(t, r->name[row]);
        if (!a) continue;
        int64_t cs = ev_start(b, c), ce = ev_end(b, c);
        if (a & (HTA_API_MEMCPY | HTA_API_MEMSET)) {
            /* a copy that returned after its own transfer ended waited for it */
            int32_t p = r->partner[row];
            int32_t x = p >= 0 ? b->ev_of_row[p] : -1;
            if (x >= 0 && b->is_gpu[x] && ev_end(b, (uint32_t)x) <= ce && ev_end(b, (uint32_t)x) > cs) PUSH(c, x);
            continue;
        }
        if (!(a & HTA_API_SYNC)) continue;
        b->s->sync_calls++;
        long one = -1;       /* the one track waited for, when the trace says which */
        int64_t before = cs; /* launched before this */
        int32_t q = r->partner[row];
        if (q >= 0 && b->cls[r->cat[q]] == HTA_CC_CUDA_SYNC) {
            hta_sync_kind kind = sync_kind(b, r->name[q]);
            int64_t pid = hta_row_thread(r, (size_t)q)->pid;
            if (kind == HTA_SYNC_STREAM_SYNC) {
                one = gpu_track(b, ntracks, pid, hta_row_stream(r, (size_t)q));
            } else if (kind == HTA_SYNC_EVENT_SYNC) {
                int64_t s = hta_row_arg_int(t, r, (size_t)q, HTA_ARG_WAIT_ON_STREAM, -1);
                int64_t rts = record_ts(b, rec, nrec, hta_row_arg_int(t, r, (size_t)q, HTA_ARG_WAIT_ON_EVENT_CORR, -1));
                if (s >= 0 && rts != INT64_MIN) {
                    one = gpu_track(b, ntracks, pid, s);
                    before = rts;
                }
            }
        }
        for (size_t k = 0; k < ntracks; k++) {
            if (one >= 0 && (long)k != one) continue;
            if (b->toff[k] == b->toff[k + 1] || !b->is_gpu[b->tev[b->toff[k]]]) continue;
            int32_t x = last_launched(b, k, before);
            /* work that ended after the call returned was not waited for */
            if (x >= 0 && ev_end(b, (uint32_t)x) > ce) x = -1;
            if (before == cs) { /* not an event's sync: work queued before the trace counts too */
                int32_t z = last_unlaunched_by(b, k, ce);
                if (z >= 0 && ev_end(b, (uint32_t)z) > cs && ev_end(b, (uint32_t)z) < ce &&
                    (x < 0 || ev_end(b, (uint32_t)z) > ev_end(b, (uint32_t)x)))
                    x = z;
            }
            if (x >= 0) PUSH(c, x);
        }
    }
    /* the calls' own time and their return latency, where each decided */
    for (size_t i = 0, j; i < nws; i = j) {
        uint32_t c = ws[i].call;
        int64_t done_ = INT64_MIN;
        for (j = i; j < nws && ws[j].call == c; j++)
            if (ev_end(b, ws[j].src) > done_) done_ = ev_end(b, ws[j].src);
        if (done_ > ev_start(b, c) ? sample(&ret, ev_end(b, c) - done_) : sample(&own, ev_end(b, c) - ev_start(b, c)))
            goto done;
    }
    int64_t own_ns = median(own.v, own.n, SIM_DEFAULT_SYNC_NS), ret_ns = median(ret.v, ret.n, SIM_DEFAULT_SYNC_NS);
    for (size_t i = 0; i < nws; i++) {
        uint32_t c = ws[i].call, en = 2 * c + 1;
        if ((st = add(b, 2 * ws[i].src + 1, en, HTA_CP_SYNC, -1, ret_ns))) goto done;
        /* the call's own time: its last stretch, as long as the calls that did not wait */
        uint32_t ci = b->chain_in[en];
        if (ci != UINT32_MAX) {
            int64_t obs = nt(b, en) - nt(b, b->e[ci].u);
            if ((st = est_set(b, ci, own_ns < obs ? own_ns : obs))) goto done;
        }
    }
    /* the CUPTI sync records, counted; cross-stream waits (cudaStreamWaitEvent with its record): the next work
     * launched to the waiting stream follows the last work launched to the recorded stream before the record
     * (one pass over the rows for both) */
    for (size_t q = 0; q < r->n; q++) {
        if (b->cls[r->cat[q]] != HTA_CC_CUDA_SYNC) continue;
        b->s->sync_records++;
        if (sync_kind(b, r->name[q]) != HTA_SYNC_STREAM_WAIT_EVENT) continue;
        int32_t call = r->partner[q];
        if (call < 0 || b->ev_of_row[call] < 0) continue;
        int64_t pid = hta_row_thread(r, q)->pid;
        int64_t s = hta_row_arg_int(t, r, q, HTA_ARG_WAIT_ON_STREAM, -1);
        int64_t rts = record_ts(b, rec, nrec, hta_row_arg_int(t, r, q, HTA_ARG_WAIT_ON_EVENT_CORR, -1));
        long from = s >= 0 ? gpu_track(b, ntracks, pid, s) : -1;
        long to = gpu_track(b, ntracks, pid, hta_row_stream(r, q));
        if (from < 0 || to < 0 || rts == INT64_MIN || from == to) continue;
        int32_t x = last_launched(b, (size_t)from, rts), y = first_launched(b, (size_t)to, ev_start(b, (uint32_t)b->ev_of_row[call]));
        if (x < 0 || y < 0) continue;
        if ((st = add(b, 2 * (uint32_t)x + 1, 2 * (uint32_t)y, HTA_CP_SYNC, -1, SIM_DEFAULT_GAP_NS))) goto done;
    }
    if ((st = unsaid_stream_waits(b, ntracks))) goto done;
#undef PUSH
    st = HTA_OK;
done:
    free(ws);
    free(own.v);
    free(ret.v);
    return st == HTA_ENOMEM ? hta_oom(b->err) : st;
}

/* ---- the threads' long stretches ---- */

/* b->lng: the chain edges (a thread's stretch between two boundaries of its chain, holding no boundary) that last
 * SIM_IDLE_NS or more, in edge order, which are all that unsaid_host_waits and joins look at: found once from the
 * chains (cn: a track's chain edge into cn[j] is chain_in[cn[j]], from cn[j - 1], and the chains' edges were
 * made in cn's order), not by a pass over every edge for each. */
static hta_status long_stretches(sb *b, size_t ntracks) {
    size_t cap = 0;
    for (size_t k = 0; k < ntracks; k++)
        for (uint32_t j = b->cnoff[k] + 1; j < b->cnoff[k + 1]; j++) {
            uint32_t v = b->cn[j], i = b->chain_in[v];
            if (i == UINT32_MAX || nt(b, v) - nt(b, b->e[i].u) < SIM_IDLE_NS) continue;
            if (HTA_GROW(b->lng, cap, b->nlng + 1)) return hta_oom(b->err);
            b->lng[b->nlng++] = i;
        }
    return HTA_OK;
}

/* ---- host waits that no call records ---- */

/* How close to the end of the GPU's queued work a host stretch must end to have waited for it: the sync's
 * return, and the first traced event after it (a sampled trace drops most of a thread's events): a 32nd of
 * the stretch, at least SIM_HANDOVER_NS. */
static int64_t drained_by(int64_t stretch) {
    return stretch / 32 > SIM_HANDOVER_NS ? stretch / 32 : SIM_HANDOVER_NS;
}

/* A host thread's long stretch with no traced call of its own (untraced time, or an operator's own time
 * between its children) that ends as the GPU finishes the last of the work queued before the stretch: the
 * host waited for the GPU, through a call the trace does not show (a sampled trace; a sync inside an
 * operator whose runtime calls were not recorded; a launch blocked on a full queue).  The host cannot know
 * when the GPU drains its queue unless it waits for it, so the stretch ends when that work ends: a sync edge
 * from it, and the stretch's own time becomes the calls' return latency.  Every stream counts: work still
 * queued on any stream after the stretch was not waited for (no such edge then). */
static hta_status unsaid_host_waits(sb *b, size_t ntracks) {
    for (size_t q = 0; q < b->nlng; q++) {
        uint32_t i = b->lng[q];
        const sedge *e = &b->e[i];
        int64_t tu = nt(b, e->u), tv = nt(b, e->v);
        if (b->is_gpu[hta_cp_node_ev(b->g, e->v)]) continue;
        /* the stretch holds no call: it runs between two boundaries of its thread's chain */
        int32_t w = -1;
        int drained = 1;
        for (size_t k = 0; k < ntracks && drained; k++) {
            if (b->toff[k] == b->toff[k + 1] || !b->is_gpu[b->tev[b->toff[k]]]) continue;
            int32_t x = last_launched(b, k, tu);
            if (x < 0 || ev_end(b, (uint32_t)x) <= tu) continue;
            if (ev_end(b, (uint32_t)x) > tv) drained = 0;
            else if (w < 0 || ev_end(b, (uint32_t)x) > ev_end(b, (uint32_t)w)) w = x;
        }
        /* strictly after: an edge between equal times could close a loop with the graph's other inputs */
        if (!drained || w < 0 || tv <= ev_end(b, (uint32_t)w) || tv - ev_end(b, (uint32_t)w) > drained_by(tv - tu))
            continue;
        b->s->host_waits++;
        uint32_t v = e->v;
        HTA_TRY(est_set(b, i, SIM_DEFAULT_SYNC_NS < tv - tu ? SIM_DEFAULT_SYNC_NS : tv - tu));
        HTA_TRY(add(b, 2 * (uint32_t)w + 1, v, HTA_CP_SYNC, -1, SIM_DEFAULT_SYNC_NS));
    }
    return HTA_OK;
}

/* GPU work that waited on its idle stream, queued since before its stream went idle, and started right after
 * work on another stream of its device ended: it waited for that work (a cudaStreamWaitEvent or an NCCL
 * stream's event the trace does not show; a sampled trace).  A queued kernel starts when its stream is free
 * and what it waits for is done; its stream was free, so the other stream's end decided its start. */
static hta_status unsaid_gpu_waits(sb *b, size_t ntracks) {
    for (size_t k = 0; k < ntracks; k++) {
        if (b->toff[k] == b->toff[k + 1] || !b->is_gpu[b->tev[b->toff[k]]]) continue;
        for (uint32_t i = b->toff[k] + 1; i < b->toff[k + 1]; i++) {
            uint32_t p = b->tev[i - 1], y = b->tev[i];
            int64_t pe = ev_end(b, p), ys = ev_start(b, y);
            /* queued before its stream went idle, and idle for long */
            if (ys - pe < SIM_IDLE_NS || b->launch_ts[y] >= pe || launcher(b, y) < 0) continue;
            int32_t w = -1;
            for (size_t j = 0; j < ntracks; j++) {
                if (j == k || b->toff[j] == b->toff[j + 1] || !b->is_gpu[b->tev[b->toff[j]]] ||
                    b->r->threads[j].pid != b->r->threads[k].pid)
                    continue;
                int32_t x = last_ended_by(b, j, ys);
                if (x >= 0 && ev_end(b, (uint32_t)x) > pe && (w < 0 || ev_end(b, (uint32_t)x) > ev_end(b, (uint32_t)w)))
                    w = x;
            }
            if (w < 0 || ys <= ev_end(b, (uint32_t)w) || ys - ev_end(b, (uint32_t)w) > drained_by(ys - pe)) continue;
            b->s->gpu_waits++;
            HTA_TRY(add(b, 2 * (uint32_t)w + 1, 2 * y, HTA_CP_SYNC, -1, SIM_DEFAULT_GAP_NS));
        }
    }
    return HTA_OK;
}

/* ---- threads that wait for each other ---- */

/* Track k's last top-level event ending at or before t, and the start of the one after it (INT64_MAX
 * when none): -1 when none ends by t. */
static int32_t top_before(const sb *b, size_t k, int64_t t, int64_t *next_start) {
    int32_t best = -1;
    *next_start = INT64_MAX;
    /* top-level events are disjoint and in order: a binary search over the track's chain nodes would do;
     * the walk below only visits top-level events (their count is small next to the rows) */
    uint32_t lo = b->toff[k], hi = b->toff[k + 1];
    while (lo < hi) { /* first event starting after t */
        uint32_t mid = lo + (hi - lo) / 2;
        if (ev_start(b, b->tev[mid]) <= t) lo = mid + 1;
        else hi = mid;
    }
    for (uint32_t i = lo; i < b->toff[k + 1]; i++)
        if (b->g->ev_parent[b->tev[i]] < 0) {
            *next_start = ev_start(b, b->tev[i]);
            break;
        }
    for (uint32_t i = lo; i-- > b->toff[k];) {
        uint32_t x = b->tev[i];
        if (b->g->ev_parent[x] >= 0) continue;
        if (ev_end(b, x) <= t) best = (int32_t)x;
        else *next_start = INT64_MIN; /* t falls inside a top-level event: the track is busy */
        break;
    }
    return best;
}

/* Track k's latest chain node strictly before t, or -1. */
static int64_t node_before(const sb *b, size_t k, int64_t t) {
    uint32_t lo = b->cnoff[k], hi = b->cnoff[k + 1];
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (nt(b, b->cn[mid]) < t) lo = mid + 1;
        else hi = mid;
    }
    uint32_t i = lo;
    return i > b->cnoff[k] ? (int64_t)b->cn[i - 1] : -1;
}

/* How soon after the other thread's step a handover must follow: SIM_HANDOVER_NS, or an eighth of the
 * stretch it ends (a slow handover, an OS hiccup, is still far shorter than the wait) */
static int64_t handover(int64_t stretch) {
    return stretch / 8 > SIM_HANDOVER_NS ? stretch / 8 : SIM_HANDOVER_NS;
}

static int cpu_track(const sb *b, size_t k) { return b->cnoff[k] < b->cnoff[k + 1]; }

static hta_status joins(sb *b, size_t ntracks) {
    const hta_rank *r = b->r;
    /* join: a long stretch of a thread that ends right after another thread of its process finished its
     * last work before going idle: the thread waited for it (backward() for the autograd thread) */
    for (size_t q = 0; q < b->nlng; q++) {
        sedge *e = &b->e[b->lng[q]];
        size_t ka = r->thread[b->row[hta_cp_node_ev(b->g, e->v)]];
        int64_t tb = INT64_MIN;
        int32_t who = -1;
        for (size_t k = 0; k < ntracks; k++) {
            if (k == ka || !cpu_track(b, k) || r->threads[k].pid != r->threads[ka].pid) continue;
            int64_t next;
            int32_t x = top_before(b, k, nt(b, e->v), &next);
            /* the other thread's work ended strictly before: threads that end together (a pool's tasks closing
             * in one microsecond) would join each other both ways, a loop */
            if (x < 0 || next < nt(b, e->v) || ev_end(b, (uint32_t)x) <= nt(b, e->u) || ev_end(b, (uint32_t)x) >= nt(b, e->v))
                continue;
            if (nt(b, e->v) - ev_end(b, (uint32_t)x) > handover(nt(b, e->v) - nt(b, e->u))) continue;
            if (ev_end(b, (uint32_t)x) > tb) tb = ev_end(b, (uint32_t)x), who = x;
        }
        if (who < 0) continue;
        uint32_t v = e->v;
        e->w = 0; /* waiting, not working (e may move: add grows the array) */
        HTA_TRY(add(b, 2 * (uint32_t)who + 1, v, HTA_CP_WAIT, -1, INT64_MIN));
    }
    /* fork: a thread's first work after a long idle, right after another thread of its process did
     * something: that thread handed it the work */
    for (size_t kb = 0; kb < ntracks; kb++) {
        if (!cpu_track(b, kb)) continue;
        int64_t prev_end = INT64_MIN;
        for (uint32_t i = b->toff[kb]; i < b->toff[kb + 1]; i++) {
            uint32_t x = b->tev[i];
            if (b->g->ev_parent[x] >= 0) continue;
            int64_t xs = ev_start(b, x);
            /* a first event: as after an idle of 8 ms (a handover within 1 ms) */
            int first = prev_end == INT64_MIN;
            int64_t idle_ns = first ? 8 * SIM_IDLE_NS : xs - prev_end;
            int idle = idle_ns >= SIM_IDLE_NS;
            prev_end = ev_end(b, x);
            if (!idle) continue;
            int64_t best = -1;
            /* a thread's very first work: the thread was made for it, and making one (the autograd engine's, on
             * the first backward()) takes milliseconds */
            int64_t tol = first ? SIM_FIRST_HANDOVER_NS : handover(idle_ns);
            for (size_t k = 0; k < ntracks; k++) {
                if (k == kb || !cpu_track(b, k) || r->threads[k].pid != r->threads[kb].pid) continue;
                int64_t n = node_before(b, k, xs);
                if (n >= 0 && xs - nt(b, n) <= tol && (best < 0 || nt(b, n) > nt(b, best))) best = n;
            }
            if (best < 0) continue;
            uint32_t ci = b->chain_in[2 * x];
            if (ci != UINT32_MAX) b->e[ci].w = 0;
            HTA_TRY(add(b, (uint32_t)best, 2 * x, HTA_CP_WAIT, -1, INT64_MIN));
        }
    }
    return HTA_OK;
}

/* ---- weights: the deciding input keeps the observed distance ---- */

/* sim_coll_read for the builder's wait edges (their ids and their events' rows, in edge order). */
static hta_status coll_read(sb *b) {
    size_t n = b->npw;
    int32_t *row = malloc((n ? n : 1) * sizeof *row);
    if (!row) return hta_oom(b->err);
    for (size_t k = 0; k < n; k++) row[k] = b->row[b->e[b->pw[k]].attr];
    hta_status st = sim_coll_read(b->s, b->pw, row, n, b->t, b->r, b->err);
    free(row);
    return st;
}

/* Weights in place (each edge's estimate is read, then its weight written, with its node v alone: the weight
 * may take the estimate's marks, EST_OBS being HTA_CP_WIDE) and the in-edges of every node (the schedule's
 * index, s->pred_off / pred_eid, in edge order within a node).  The builder's array is the graph's already. */
static hta_status decide(sb *b) {
    hta_cp_graph *g = b->g;
    hta_sim *s = b->s;
    size_t nn = b->nnode, ne = b->ne;
    uint32_t *off = s->pred_off = cp_malloc((nn + 1) * sizeof *off);
    uint32_t *in = s->pred_eid = cp_malloc((ne ? ne : 1) * sizeof *in);
    /* the nodes on an edge (HTA's node count, the stats table's graph_nodes): each edge's two ends marked as its
     * node v is decided (ends, a bit per node: no room beside the edges at the peak) */
    uint64_t *ends = calloc(nn / 64 + 1, sizeof *ends);
    if (!off || !in || !ends) {
        free(ends);
        return hta_oom(b->err);
    }
    g->edge = b->e; /* the graph's now (freed with it, whatever happens below) */
    cp_adj_fill_recs(b->e, sizeof *b->e, ne, nn, 1, off, in);
    hta_status st = HTA_OK;
#define MARK(x) (ends[(x) >> 6] |= (uint64_t)1 << ((x) & 63))
/* a weight that fits 32 bits (nearly all) written here, not through a call per edge */
#define SET_W(i, x)                                                                                          \
    ((x) > INT32_MIN && (x) <= INT32_MAX ? (b->e[i].w = (int32_t)(x), HTA_OK) : cp_edge_set_w(g, i, x, b->err))
    for (size_t v = 0; v < nn && !st; v++) {
        uint32_t a = off[v], z = off[v + 1];
        if (a == z) continue;
        MARK(v);
        int64_t tv = nt(b, v);
        if (z - a == 1) { /* one input (most nodes): it decides, its weight the observed distance */
            uint32_t u = b->e[in[a]].u;
            MARK(u);
            int64_t obs = tv - nt(b, u);
            st = SET_W(in[a], obs);
            continue;
        }
        int64_t best = INT64_MIN, best_est = 0;
        uint32_t bi = UINT32_MAX;
        for (uint32_t j = a; j < z; j++) {
            uint32_t u = b->e[in[j]].u;
            MARK(u);
            int64_t tu = nt(b, u), obs = tv - tu, w = est_get(b, in[j]);
            int64_t est = w == INT64_MIN ? obs : w;
            int64_t at = tu + (est < obs ? est : obs);
            /* ties: an input with the observed distance (a thread's own time) before an estimated one */
            if (at > best || (at == best && w == INT64_MIN && bi != UINT32_MAX && best_est != INT64_MIN))
                best = at, bi = in[j], best_est = w;
        }
        for (uint32_t j = a; j < z && !st; j++) {
            int64_t obs = tv - nt(b, b->e[in[j]].u), w = est_get(b, in[j]);
            int64_t x = in[j] == bi || w == INT64_MIN ? obs : w < 0 ? 0 : w < obs ? w : obs;
            st = SET_W(in[j], x);
        }
    }
#undef MARK
#undef SET_W
    g->norder = 0;
    for (size_t q = 0; q < nn / 64 + 1; q++) g->norder += (size_t)__builtin_popcountll(ends[q]);
    free(ends);
    b->e = NULL;
    if (st) return st;
    hta_cp_edge *fit = realloc(g->edge, (ne ? ne : 1) * sizeof *fit); /* without the room left for more */
    if (fit) g->edge = fit;
    g->nedge = ne;
    g->nnode = nn;
    size_t nx = nn - g->nbase;
    hta_cp_node *nfit = nx < b->capnode ? realloc(g->node, (nx ? nx : 1) * sizeof *nfit) : NULL;
    if (nfit) g->node = nfit, b->capnode = nx ? nx : 1;
    return HTA_OK;
}

/* The schedule's inputs: every node's in-edges, again from the graph's edges. */
hta_status sim_index(hta_sim *s, hta_error *err) {
    const hta_cp_graph *g = s->g;
    size_t nn = g->nnode, ne = g->nedge;
    free(s->pred_off);
    free(s->pred_eid);
    s->pred_off = malloc((nn + 1) * sizeof *s->pred_off);
    s->pred_eid = malloc((ne ? ne : 1) * sizeof *s->pred_eid);
    if (!s->pred_off || !s->pred_eid) return hta_oom(err);
    cp_adj_fill(g->edge, ne, nn, 1, s->pred_off, s->pred_eid);
    return HTA_OK;
}

hta_status sim_topo(hta_sim *s, hta_error *err) {
    const hta_cp_graph *g = s->g;
    size_t nn = g->nnode, ne = g->nedge;
    free(s->topo);
    s->topo = malloc((nn ? nn : 1) * sizeof *s->topo);
    uint32_t *indeg = malloc((nn ? nn : 1) * sizeof *indeg), *soff = malloc((nn + 1) * sizeof *soff),
             *succ = malloc((ne ? ne : 1) * sizeof *succ); /* out-neighbours */
    hta_status st = HTA_OK;
    if (!s->topo || !indeg || !soff || !succ) {
        st = hta_oom(err);
        goto done;
    }
    /* each node's successors themselves, in edge order (cp_adj_fill's order), not their edges' ids: the
     * walk below then reads no edge again (an edge lookup per step was a cache miss on the large array) */
    memset(soff, 0, (nn + 1) * sizeof *soff);
    for (size_t i = 0; i < ne; i++) soff[g->edge[i].u + 1]++;
    for (size_t v = 0; v < nn; v++) soff[v + 1] += soff[v];
    for (size_t i = 0; i < ne; i++) succ[soff[g->edge[i].u]++] = g->edge[i].v;
    memmove(soff + 1, soff, nn * sizeof *soff); /* each node's fill pointer ended at its end: one place back */
    soff[0] = 0;
    for (size_t v = 0; v < nn; v++) indeg[v] = s->pred_off[v + 1] - s->pred_off[v];
    /* the queue's pushes without a branch (each node written at the tail, kept where its count is 0: the
     * branches' mispredictions were a third of this function): the tail never passes the node written, nor
     * nn (a node is written only while an edge into it is left) */
    size_t head = 0, tail = 0;
    for (size_t v = 0; v < nn; v++) {
        s->topo[tail] = (uint32_t)v;
        tail += !indeg[v];
    }
    while (head < tail) {
        uint32_t u = s->topo[head++];
        for (uint32_t j = soff[u]; j < soff[u + 1]; j++) {
            uint32_t x = succ[j];
            s->topo[tail] = x;
            tail += !--indeg[x];
        }
    }
    if (tail != nn) {
        /* only inputs of equal times can close a loop: the graph's rules keep every edge forward in time */
        size_t v = 0;
        while (v < nn && !indeg[v]) v++;
        const hta_cp_event *x = &g->ev[hta_cp_node_ev(g, v)];
        st = hta_fail(err, HTA_EINVAL,
                      "the simulation graph of rank %d has a cycle through event %u (%s); please report it",
                      (int)g->rank, x->index, hta_sym(g->sym, x->name));
    }
done:
    free(indeg);
    free(soff);
    free(succ);
    return st;
}

/* ---- the steps on the GPU timeline ---- */

/* Each step's GPU work: the operations whose launch call is inside the step (the report's rule,
 * src/report/profile.c), the first to start and the last to end. */
static void gpu_work(sb *b) {
    hta_sim *s = b->s;
    if (!s->nsteps) return;
    for (uint32_t x = 0; x < b->nev; x++) {
        int32_t p = b->is_gpu[x] ? b->r->partner[b->row[x]] : -1;
        if (p < 0 || b->ev_of_row[p] < 0) continue; /* launched before the trace, or not by a traced call */
        int64_t at = b->launch_ts[x];
        size_t lo = 0, hi = s->nsteps; /* the last step that starts at or before the launch */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (nt(b, s->steps[mid].start) <= at) lo = mid + 1;
            else hi = mid;
        }
        if (!lo) continue;
        hta_sim_step *st = &s->steps[lo - 1];
        if (at >= nt(b, st->end)) continue;
        if (st->gstart == UINT32_MAX || nt(b, 2 * (size_t)x) < nt(b, st->gstart)) st->gstart = 2 * x;
        if (st->gend == UINT32_MAX || nt(b, 2 * (size_t)x + 1) > nt(b, st->gend)) st->gend = 2 * x + 1;
    }
}

int sim_gpu_steps(hta_sim *s) {
    const hta_cp_graph *g = s->g;
    for (size_t i = 0; i < s->nsteps; i++) {
        const hta_sim_step *st = &s->steps[i];
        if (st->gstart == UINT32_MAX) return 0;
        uint32_t e = i + 1 < s->nsteps ? s->steps[i + 1].gstart : st->gend;
        if (e == UINT32_MAX || hta_cp_node_ts(g, e) <= hta_cp_node_ts(g, st->gstart)) return 0;
    }
    for (size_t i = 0; i < s->nsteps; i++) {
        hta_sim_step *st = &s->steps[i];
        st->end = i + 1 < s->nsteps ? s->steps[i + 1].gstart : st->gend;
        st->start = st->gstart;
    }
    return 1;
}

/* ---- the build ---- */

/* A ProfilerStep#N is a user annotation, or an operator in PyTorch <= 1.9's traces (category Operator). */
static int step_cat(int cls) { return cls == HTA_CC_USER_ANNOTATION || cls == HTA_CC_CPU_OP; }

static int cmp_step(const void *a, const void *c) {
    const hta_sim_step *x = a, *y = c;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* Trace symbol y's step number (hta_step_number, -1: not a step), read once per name into stepno. */
static int64_t step_of(const sb *b, int64_t *stepno, uint32_t y) {
    if (stepno[y] == INT64_MIN) stepno[y] = hta_step_number(hta_sym(b->t->sym, y));
    return stepno[y];
}

static hta_status build(sb *b) {
    const hta_trace *t = b->t;
    const hta_rank *r = b->r;
    hta_cp_graph *g = b->g;
    const unsigned char *keep = hta_ctx_window_rows(b->ctx, b->k);
    size_t ncat = t->ncats;
    b->cls = malloc(ncat + 1);
    size_t nsym = hta_symtab_count(t->sym);
    b->skind = malloc(nsym + 1);
    b->gsym = malloc((nsym + 1) * sizeof *b->gsym);
    if (b->skind) memset(b->skind, 0xff, nsym + 1);
    if (b->gsym) memset(b->gsym, 0xff, (nsym + 1) * sizeof *b->gsym);
    b->nrows = r->n;
    b->ev_of_row = malloc((r->n ? r->n : 1) * sizeof *b->ev_of_row);
    if (!b->cls || !b->skind || !b->gsym || !b->ev_of_row) return hta_oom(b->err);
    for (size_t c = 0; c < ncat; c++) b->cls[c] = (uint8_t)hta_cat_classify(hta_sym(t->sym, t->cats[c]));
    /* events: CPU work of every kind on threads, and the GPU's kernels, copies and sets */
    size_t m = 0;
    for (size_t i = 0; i < r->n; i++) {
        b->ev_of_row[i] = -1;
        if ((keep && !keep[i]) || r->dur[i] < 0) continue;
        int c = b->cls[r->cat[i]];
        int64_t s = hta_row_stream(r, i);
        int gpu = s != -1 && is_gpu_class(c);
        int cpu = c == HTA_CC_RUNTIME || (s == -1 && !is_gpu_class(c) && c != HTA_CC_CUDA_SYNC &&
                                          c != HTA_CC_GPU_USER_ANNOTATION && c != HTA_CC_PROFILER_RANGE);
        if (gpu || cpu) b->ev_of_row[i] = (int32_t)m++;
    }
    if (cp_check_events(m, b->err)) return HTA_EINVAL;
    b->nev = m;
    g->nev = m;
    g->ev = cp_malloc((m ? m : 1) * sizeof *g->ev); /* every field is written below: no zeros first */
    g->ev_parent = cp_malloc((m ? m : 1) * sizeof *g->ev_parent);
    b->row = malloc((m ? m : 1) * sizeof *b->row);
    b->is_gpu = calloc(m ? m : 1, 1);
    b->launch_ts = malloc((m ? m : 1) * sizeof *b->launch_ts);
    b->s->ev_step = malloc((m ? m : 1) * sizeof *b->s->ev_step);
    b->toff = calloc(r->nthreads + 2, sizeof *b->toff);
    /* the steps are found as the events are read: each name's step number once (stepno, per trace symbol;
     * INT64_MIN: not yet), not once per event, and no pass over the events for them */
    size_t nscap = 0, nts = hta_symtab_count(t->sym);
    int64_t *stepno = malloc((nts + 1) * sizeof *stepno);
    if (stepno)
        for (size_t y = 0; y <= nts; y++) stepno[y] = INT64_MIN;
    /* the events' nodes are theirs (g->nbase); g->node holds the few more (a collective's mid node), sized
     * for what real traces give (a few per 16 events), so that it is not copied as it grows */
    g->nbase = 2 * m;
    b->capnode = m / 16 + 64;
    g->node = malloc(b->capnode * sizeof *g->node);
    uint32_t *stack = NULL;
    uint32_t *sk = NULL; /* the track sort's room (track_sort), for the longest track */
    cp_thrmap tm = {0};
    hta_status st = HTA_OK;
    if (!g->ev || !g->ev_parent || !b->row || !b->is_gpu || !b->launch_ts || !b->s->ev_step || !g->node || !b->toff ||
        !stepno) {
        st = hta_oom(b->err);
        goto done;
    }
    g->origin_ns = b->ctx->origin_ns;
    for (size_t i = 0; i < r->n; i++) {
        int32_t x = b->ev_of_row[i];
        if (x < 0) continue;
        const hta_thread *th = hta_row_thread(r, i);
        hta_cp_event *e = &g->ev[x];
        e->ts = r->ts[i] - g->origin_ns;
        e->dur = r->dur[i];
        e->index = r->index[i];
        b->row[x] = (int32_t)i;
        int c = b->cls[r->cat[i]];
        b->is_gpu[x] = c != HTA_CC_RUNTIME && is_gpu_class(c) && hta_row_stream(r, i) != -1;
        if ((st = cp_thr_id(g, &tm, th->pid, th->tid, b->is_gpu[x] ? hta_row_stream(r, i) : -1, &e->thr, b->err)))
            goto done;
        e->name = graph_sym(b, r->name[i]);
        uint32_t cs = hta_row_cat_sym(t, r, i);
        e->cat = graph_sym(b, cs);
        if (e->name == UINT32_MAX || e->cat == UINT32_MAX) {
            st = hta_oom(b->err);
            goto done;
        }
        g->ev_parent[x] = -1;
        b->s->ev_step[x] = r->iteration[i] >= 0 ? r->iteration[i] : -1;
        b->toff[r->thread[i] + 1]++; /* the tracks' sizes (the rank's thread index) */
        int64_t n = !b->is_gpu[x] && step_cat(c) ? step_of(b, stepno, r->name[i]) : -1;
        if (n >= 0) { /* the steps are few: their array grows */
            if (HTA_GROW(b->s->steps, nscap, b->s->nsteps + 1)) {
                st = hta_oom(b->err);
                goto done;
            }
            b->s->steps[b->s->nsteps++] = (hta_sim_step){r->rank, n, 2 * (uint32_t)x, 2 * (uint32_t)x + 1, UINT32_MAX,
                                                         UINT32_MAX};
        }
    }
    b->nnode = 2 * m;
    /* what the rows' times and correlations give: each GPU event's launch, the event records' times */
    for (uint32_t x = 0; x < m; x++) {
        int32_t p = b->is_gpu[x] ? r->partner[b->row[x]] : -1;
        b->launch_ts[x] = p >= 0 && b->ev_of_row[p] >= 0 ? r->ts[p] : nt(b, 2 * x);
    }
    if ((st = records(b))) goto done;
    /* The events hold what the graph keeps of their rows: what the edges still read goes on (launches,
     * syncs, tracks, collectives' args), the rest of the model goes now, before the edges take their room */
    if (b->release)
        hta_ctx_release_rows(b->ctx, b->k,
                             HTA_COL_NAME | HTA_COL_THREAD | HTA_COL_ARGS | HTA_COL_CAT | HTA_COL_STREAM |
                                 HTA_COL_PARTNER);
    b->cap = 2 * m + m / 4 + 1024; /* real traces give 2.0-2.2 edges per event: not copied as they grow */
    b->e = cp_malloc_filled(b->cap * sizeof *b->e);
    b->cn = malloc((2 * m + 1) * sizeof *b->cn);
    b->cnoff = calloc(r->nthreads + 2, sizeof *b->cnoff);
    b->tev = malloc((m ? m : 1) * sizeof *b->tev);
    b->chain_in = malloc((2 * m + 1) * sizeof *b->chain_in);
    stack = malloc((m ? m : 1) * sizeof *stack);
    if (!b->e || !b->cn || !b->cnoff || !b->tev || !b->chain_in || !stack) {
        st = hta_oom(b->err);
        goto done;
    }
    memset(b->chain_in, 0xff, (2 * m + 1) * sizeof *b->chain_in);
    /* tracks: a thread or a stream each (the rank's thread index); events in track order */
    for (size_t k = 0; k < r->nthreads; k++) b->toff[k + 1] += b->toff[k];
    {
        uint32_t *fill = malloc((r->nthreads + 1) * sizeof *fill);
        if (!fill) {
            st = hta_oom(b->err);
            goto done;
        }
        memcpy(fill, b->toff, (r->nthreads + 1) * sizeof *fill);
        for (uint32_t x = 0; x < m; x++) b->tev[fill[r->thread[b->row[x]]]++] = x;
        free(fill);
    }
    for (size_t k = 0; k < r->nthreads; k++) {
        uint32_t a = b->toff[k], z = b->toff[k + 1];
        /* a thread's rows mostly come in that order already: sorted only where they do not (the order is total,
         * so the result is the same) */
        size_t q = a;
        while (q + 1 < z && track_cmp(b, b->tev[q], b->tev[q + 1]) < 0) q++;
        if (q + 1 < z) {
            if (!sk) { /* room for the longest track, once */
                size_t most = 0;
                for (size_t y = 0; y < r->nthreads; y++)
                    if (b->toff[y + 1] - b->toff[y] > most) most = b->toff[y + 1] - b->toff[y];
                if (!(sk = malloc(most * sizeof *sk))) {
                    st = hta_oom(b->err);
                    goto done;
                }
            }
            track_sort(b, b->tev + a, z - a, q + 1 - a, sk);
        }
        b->cnoff[k] = (uint32_t)b->ncn;
        /* a track holds either CPU events or GPU work (the loader's threads are per pid and tid) */
        if (a < z && !b->is_gpu[b->tev[a]] && (st = chain(b, b->tev + a, z - a, stack))) goto done;
        b->cnoff[k + 1] = (uint32_t)b->ncn;
    }
    free(sk), sk = NULL;
    if ((st = streams(b, r->nthreads))) goto done;
    if ((st = waits(b, r->nthreads))) goto done;
    free(b->rec), b->rec = NULL;
    /* Each column goes as soon as the build reads no more of it, not all at the end: the build's peak (the
     * report's, on one rank) is the edges beside what is left of the rows.  From here on: the launches
     * (partner), the threads (joins), the categories (the steps), the collectives' args. */
    if (b->release)
        hta_ctx_release_rows(b->ctx, b->k, HTA_COL_THREAD | HTA_COL_ARGS | HTA_COL_CAT | HTA_COL_PARTNER);
    if ((st = long_stretches(b, r->nthreads))) goto done;
    if ((st = unsaid_host_waits(b, r->nthreads))) goto done;
    if ((st = unsaid_gpu_waits(b, r->nthreads))) goto done;
    if ((st = joins(b, r->nthreads))) goto done;
    if (b->release) hta_ctx_release_rows(b->ctx, b->k, HTA_COL_ARGS | HTA_COL_CAT | HTA_COL_PARTNER);
    /* The edges are all made: the tracks' scratch goes, and what needs the launch times is done, before the
     * weights' index is taken (the build's peak is there, beside the rank's model) */
    free(stack), stack = NULL;
    free(b->cn), b->cn = NULL;
    free(b->tev), b->tev = NULL;
    free(b->chain_in), b->chain_in = NULL;
    /* the steps (read with the events) */
    if (!b->s->steps && !(b->s->steps = malloc(sizeof *b->s->steps))) { /* none: an array all the same */
        st = hta_oom(b->err);
        goto done;
    }
    free(stepno), stepno = NULL;
    if (b->s->nsteps > 1) qsort(b->s->steps, b->s->nsteps, sizeof *b->s->steps, cmp_step);
    gpu_work(b);
    free(b->launch_ts), b->launch_ts = NULL;
    free(b->is_gpu), b->is_gpu = NULL;
    free(b->ev_of_row), b->ev_of_row = NULL; /* the last launch is found: rows map to events no more */
    if (b->release) hta_ctx_release_rows(b->ctx, b->k, HTA_COL_ARGS);
    /* the last of what the graph reads of the rows: each collective's identity */
    if ((st = coll_read(b))) goto done;
    free(b->row), b->row = NULL;
    /* the weights' index and the schedule's order need the graph alone: the rest of the rows go first */
    if (b->release) hta_ctx_release_rows(b->ctx, b->k, 0);
    /* a simulation graph needs no insertion order (its schedule runs in s->topo): decide counts its nodes */
    if ((st = decide(b))) goto done;
    if (b->topo) st = sim_topo(b->s, b->err);
done:
    cp_thrmap_free(&tm);
    free(stack);
    free(sk);
    free(stepno);
    return st;
}

hta_status hta_sim_build(hta_ctx *ctx, size_t k, hta_sim **out, hta_error *err) {
    return sim_build(ctx, k, 1, 0, out, err);
}

hta_status hta_sim_build_release(hta_ctx *ctx, size_t k, hta_sim **out, hta_error *err) {
    return sim_build(ctx, k, 1, 1, out, err);
}

hta_status sim_build(hta_ctx *ctx, size_t k, int topo, int release, hta_sim **out, hta_error *err) {
    *out = NULL;
    hta_sim *s = calloc(1, sizeof *s);
    hta_cp_graph *g = calloc(1, sizeof *g);
    if (!s || !g || !(g->sym = hta_symtab_new())) {
        free(s);
        if (g) free(g);
        return hta_oom(err);
    }
    s->g = g;
    const hta_rank *r = ctx->trace->ranks[k];
    g->rank = r->rank;
    sb b = {.ctx = ctx, .k = k, .t = ctx->trace, .r = r, .s = s, .g = g, .topo = topo, .release = release,
            .err = err};
    hta_status st = build(&b);
    free(b.cls);
    free(b.skind);
    free(b.gsym);
    free(b.e);
    free(b.toff);
    free(b.tev);
    free(b.is_gpu);
    free(b.row);
    free(b.launch_ts);
    free(b.chain_in);
    free(b.cn);
    free(b.cnoff);
    free(b.rec);
    free(b.pw);
    free(b.lng);
    cp_idmap_free(&b.west);
    if (st) {
        free(b.ev_of_row);
        hta_sim_free(s);
        return st;
    }
    free(b.ev_of_row); /* the events name their rows: the graph need not keep the map back */
    s->nrows = b.nrows;
    *out = s;
    return HTA_OK;
}
