/* The re-drawn trace of a simulation (hta_sim_trace): every event of the rank's file at its simulated
 * time.  Graph events take their nodes' times exactly; every other event with a time (annotations on
 * the GPU, sync records, flows, instants, counters) moves with its track: a piecewise-linear map from
 * the track's observed node times to its simulated ones, which keeps anything nested in a graph event
 * nested, and keeps order along the track. */
#include <stdlib.h>
#include <string.h>

#include "cpath/sim_internal.h"
#include "hta/util.h"

typedef struct warp {
    int64_t *obs, *sim; /* ascending obs */
    size_t n;
} warp;

typedef struct tw {
    const hta_sim *s;
    const hta_rank *r; /* the context's rank of the graph: its rows, by the graph's row numbers */
    int32_t *ev_of_row; /* per row: its graph event, -1 */
    int32_t *row;       /* per graph event: its row (by its event index: the graph keeps no rows) */
    const int64_t *t;
    int64_t origin;
    int32_t *what;     /* per event index: >= 0 row, <= -2 flow -(f + 2), -1 none */
    size_t nwhat;
    warp *wk;          /* per track (thread index) */
    unsigned char *gpu_track; /* per track: a GPU stream */
    const hta_symtab *sym;
    size_t nthreads;
    hta_raw_obj obj;
} tw;

static int64_t warp_at(const warp *w, int64_t x) {
    if (!w || !w->n) return x;
    size_t lo = 0, hi = w->n;
    while (lo < hi) { /* first obs > x */
        size_t mid = (lo + hi) / 2;
        if (w->obs[mid] <= x) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0) return w->sim[0] + (x - w->obs[0]);
    size_t i = lo - 1;
    if (i + 1 == w->n || w->obs[i + 1] == w->obs[i]) return w->sim[i] + (x - w->obs[i]);
    __int128 d = (__int128)(x - w->obs[i]) * (w->sim[i + 1] - w->sim[i]);
    return w->sim[i] + (int64_t)(d / (w->obs[i + 1] - w->obs[i]));
}

typedef struct pair {
    int64_t obs, sim;
} pair;

HTA_QSORT_CMP(cmp_pair, pair, HTA_CMP2(x->obs, y->obs, x->sim, y->sim))

/* Each track's nodes, observed -> simulated, in absolute ns. */
static int build_warps(tw *x) {
    const hta_cp_graph *g = x->s->g;
    const hta_rank *r = x->r;
    size_t *cnt = calloc(r->nthreads + 1, sizeof *cnt);
    if (!cnt) return -1;
    for (size_t v = 0; v < g->nnode; v++) cnt[r->thread[x->row[hta_cp_node_ev(g, v)]]]++;
    for (size_t k = 0; k < r->nthreads; k++) {
        pair *p = malloc((cnt[k] ? cnt[k] : 1) * sizeof *p);
        x->wk[k].obs = malloc((cnt[k] ? cnt[k] : 1) * sizeof(int64_t));
        x->wk[k].sim = malloc((cnt[k] ? cnt[k] : 1) * sizeof(int64_t));
        if (!p || !x->wk[k].obs || !x->wk[k].sim) {
            free(p);
            free(cnt);
            return -1;
        }
        size_t n = 0;
        for (size_t v = 0; v < g->nnode; v++)
            if (r->thread[x->row[hta_cp_node_ev(g, v)]] == k)
                p[n++] = (pair){hta_cp_node_ts(g, v) + x->origin, x->t[v] + x->origin};
        if (n > 1) qsort(p, n, sizeof *p, cmp_pair);
        for (size_t i = 0; i < n; i++) x->wk[k].obs[i] = p[i].obs, x->wk[k].sim[i] = p[i].sim;
        x->wk[k].n = n;
        free(p);
    }
    free(cnt);
    return 0;
}

/* The track of an event that is no row (an instant, a counter): its pid and tid, or the pid's busiest track;
 * a pid of no thread (Kineto's "GPU 0 Counters") moves with the busiest GPU stream when it names a GPU,
 * else with the busiest track; -1 when the rank has none. */
static long track_of(const tw *x, const hta_raw_obj *o) {
    const hta_rank *r = x->r;
    const hta_raw_member *pm = hta_raw_obj_get(o, "pid"), *tm = hta_raw_obj_get(o, "tid");
    int64_t pid = 0, tid;
    int num_pid = pm && !hta_raw_int(pm, &pid);
    int has_tid = tm && !hta_raw_int(tm, &tid);
    long best = -1, any = -1, gpu = -1;
    for (size_t k = 0; k < r->nthreads; k++) {
        const hta_thread *th = &r->threads[k];
        int same = num_pid ? th->pid_sym < 0 && th->pid == pid
                           : pm && th->pid_sym >= 0 && hta_raw_str_is(pm, hta_sym(x->sym, (uint32_t)th->pid_sym));
        if (same && has_tid && th->tid_sym < 0 && th->tid == tid) return (long)k;
        if (same && (best < 0 || x->wk[k].n > x->wk[best].n)) best = (long)k;
        if (any < 0 || x->wk[k].n > x->wk[any].n) any = (long)k;
        if (x->gpu_track[k] && (gpu < 0 || x->wk[k].n > x->wk[gpu].n)) gpu = (long)k;
    }
    if (best >= 0) return best;
    if (pm && !num_pid && gpu >= 0 && memmem(pm->val, pm->vlen, "GPU", 3)) return gpu;
    return any;
}

#define BEYOND "what-if trace: an event would move beyond the times hta holds (|t| < 2^62 ns)"

/* Within the times the loader reads (trace/parse.c): the start, the duration and the end. */
static int time_ok(int64_t ts, int64_t dur) {
    return ts <= HTA_TIME_MAX_NS && ts >= -HTA_TIME_MAX_NS && dur <= HTA_TIME_MAX_NS &&
           ts + dur <= HTA_TIME_MAX_NS && ts + dur >= -HTA_TIME_MAX_NS;
}

static int edit_times(tw *x, hta_rawout *w, const char *json, size_t len, int64_t nts, int64_t ndur, int has_dur) {
    const hta_raw_member *ts = hta_raw_obj_get(&x->obj, "ts");
    if (!ts) return hta_rawout_event(w, json, len);
    const hta_raw_member *dur = has_dur ? hta_raw_obj_get(&x->obj, "dur") : NULL;
    if (!time_ok(nts, dur && ndur > 0 ? ndur : 0) || ndur > HTA_TIME_MAX_NS)
        return hta_rawout_fail(w, HTA_EINVAL, BEYOND);
    char tb[32], db[32];
    hta_raw_edit e[2] = {{ts->val, ts->val + ts->vlen, tb, hta_raw_format_us(nts, 0, tb)}};
    if (dur) e[1] = (hta_raw_edit){dur->val, dur->val + dur->vlen, db, hta_raw_format_us(ndur < 0 ? 0 : ndur, 0, db)};
    return hta_rawout_edited(w, json, len, e, dur ? 2 : 1);
}

/* A row's simulated start a and end z (absolute ns). */
static void row_times(const tw *x, int32_t what, int64_t *a_out, int64_t *z_out) {
    const hta_rank *r = x->r;
    int32_t e = x->ev_of_row[what];
    if (e >= 0) {
        *a_out = x->t[hta_cp_ev_start(x->s->g, (size_t)e)] + x->origin;
        *z_out = x->t[hta_cp_ev_end(x->s->g, (size_t)e)] + x->origin;
        return;
    }
    int32_t p = r->partner[what], pe = p >= 0 ? x->ev_of_row[p] : -1;
    if (pe >= 0 && r->dur[what] >= 0) {
        /* a CUPTI record of a host call (a sync, a stream wait) stays where it was inside its call: its
         * start as far from the call's start, its end as far from the call's end */
        int64_t cs = r->ts[p], ce = r->ts[p] + r->dur[p];
        int64_t ns = x->t[hta_cp_ev_start(x->s->g, (size_t)pe)] + x->origin;
        int64_t ne = x->t[hta_cp_ev_end(x->s->g, (size_t)pe)] + x->origin;
        int64_t a = ns + (r->ts[what] - cs), z = ne - (ce - (r->ts[what] + r->dur[what]));
        if (a > ne) a = ne;
        if (a < ns) a = ns;
        if (z > ne) z = ne;
        if (z < a) z = a;
        *a_out = a, *z_out = z;
        return;
    }
    const warp *wk = &x->wk[r->thread[what]];
    *a_out = warp_at(wk, r->ts[what]);
    *z_out = warp_at(wk, r->ts[what] + r->dur[what]);
}

/* The loader's limits on a rank's rows (trace/parse.c), checked before the file is opened so that a trace
 * hta could not read again is never written: every row's start and end within |t| < 2^62 ns, and the rows'
 * durations (as written: a negative one is 0) adding up to less than 2^62 ns. */
static hta_status rows_loadable(const tw *x, hta_error *err) {
    uint64_t sum = 0;
    for (size_t i = 0; i < x->r->n; i++) {
        int64_t a, z;
        row_times(x, (int32_t)i, &a, &z);
        /* the times come from the schedule (|t| < 2^62 ns) plus the origin: z - a cannot wrap */
        int64_t d = z > a ? z - a : 0;
        if (!time_ok(a, d)) return hta_fail(err, HTA_EINVAL, BEYOND);
        sum += (uint64_t)d;
        if (sum > (uint64_t)HTA_TIME_MAX_NS)
            return hta_fail(err, HTA_EINVAL, "what-if trace: the simulated durations of the rank's events would add "
                            "up to 2^62 ns or more (about 146 years), more than hta reads");
    }
    return HTA_OK;
}

static int sim_event(void *ctx, hta_rawout *w, uint32_t index, const char *json, size_t len) {
    tw *x = ctx;
    const hta_rank *r = x->r;
    int32_t what = index < x->nwhat ? x->what[index] : -1;
    int rc = hta_raw_obj_parse(&x->obj, json, len);
    if (rc == -2) return hta_rawout_oom(w);
    if (rc) return hta_rawout_event(w, json, len);
    if (what >= 0) {
        int64_t a, z;
        row_times(x, what, &a, &z);
        return edit_times(x, w, json, len, a, z - a, 1);
    }
    const hta_raw_member *tm = hta_raw_obj_get(&x->obj, "ts");
    int64_t ts;
    if (!tm || hta_raw_time_ns(tm, &ts)) return hta_rawout_event(w, json, len);
    long k = what <= -2 ? (long)r->flows[-what - 2].thread : track_of(x, &x->obj);
    if (k < 0) return hta_rawout_event(w, json, len);
    const hta_raw_member *dm = hta_raw_obj_get(&x->obj, "dur");
    int64_t d;
    if (dm && !hta_raw_time_ns(dm, &d)) {
        int64_t a = warp_at(&x->wk[k], ts), z = warp_at(&x->wk[k], ts + d);
        return edit_times(x, w, json, len, a, z - a, 1);
    }
    return edit_times(x, w, json, len, warp_at(&x->wk[k], ts), 0, 0);
}

hta_status hta_sim_trace(hta_ctx *ctx, const hta_sim *s, const int64_t *t, const char *out_path,
                         hta_error *err) {
    /* the rows the graph was built from: those of the same file read the same way, whichever context holds
     * them (the job keeps graphs without their context) */
    long at = hta_ctx_find_rank(ctx, s->g->rank);
    if (at < 0) return hta_fail(err, HTA_EINVAL, "--what-if-trace writes one rank's trace: choose it with --ranks R");
    const hta_rank *r = hta_ctx_rank(ctx, (size_t)at);
    tw x = {s, r, NULL, NULL, t, s->g->origin_ns, NULL, 0, NULL, NULL, ctx->trace->sym, r->nthreads, {0}};
    hta_status st = HTA_OK;
    x.nwhat = r->n_events;
    x.what = malloc((x.nwhat ? x.nwhat : 1) * sizeof *x.what);
    x.ev_of_row = malloc((r->n ? r->n : 1) * sizeof *x.ev_of_row);
    x.row = malloc((s->g->nev ? s->g->nev : 1) * sizeof *x.row);
    x.wk = calloc(r->nthreads + 1, sizeof *x.wk);
    x.gpu_track = calloc(r->nthreads + 1, 1);
    if (!x.what || !x.ev_of_row || !x.row || !x.wk || !x.gpu_track) {
        st = hta_oom(err);
        goto done;
    }
    for (size_t i = 0; i < x.nwhat; i++) x.what[i] = -1;
    for (size_t i = 0; i < r->nflows; i++)
        if (r->flows[i].index < x.nwhat) x.what[r->flows[i].index] = -(int32_t)i - 2;
    for (size_t i = 0; i < r->n; i++)
        if (r->index[i] < x.nwhat) x.what[r->index[i]] = (int32_t)i;
    for (size_t i = 0; i < r->n; i++) x.ev_of_row[i] = -1;
    for (size_t i = 0; i < s->g->nev; i++) {
        uint32_t ix = s->g->ev[i].index;
        if (ix >= x.nwhat || x.what[ix] < 0) {
            st = hta_fail(err, HTA_EINVAL, "rank %d: its file read again holds fewer rows than its graph; please "
                                           "report it", (int)s->g->rank);
            goto done;
        }
        x.row[i] = x.what[ix];
        x.ev_of_row[x.row[i]] = (int32_t)i;
    }
    for (size_t i = 0; i < s->g->nev; i++)
        if (hta_cp_ev_stream(s->g, &s->g->ev[i]) != -1) x.gpu_track[r->thread[x.row[i]]] = 1;
    if (build_warps(&x)) {
        st = hta_oom(err);
        goto done;
    }
    if ((st = rows_loadable(&x, err))) goto done;
    size_t pl = strlen(out_path);
    hta_rawout_hooks h = {.event = sim_event, .ctx = &x};
    st = hta_rawout_derive(r->path, out_path, pl > 3 && !strcmp(out_path + pl - 3, ".gz"), &h, err);
done:
    if (x.wk)
        for (size_t k = 0; k < r->nthreads; k++) free(x.wk[k].obs), free(x.wk[k].sim);
    free(x.wk);
    free(x.gpu_track);
    free(x.what);
    free(x.ev_of_row);
    free(x.row);
    hta_raw_obj_free(&x.obj);
    return st;
}
