/* Summary, breakdown and statistics of a critical path (critical-path.md §9). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpath/internal.h"
#include "hta/util.h"
#include "hta/vocab.h"

HTA_TABLE_DEFINE(HTA_CP_SUMMARY);
HTA_TABLE_DEFINE_LIKE(HTA_CP_WHATIF_SUMMARY, HTA_CP_SUMMARY);
HTA_TABLE_DEFINE(HTA_CP_BREAKDOWN);
HTA_TABLE_DEFINE(HTA_CP_STATS);
HTA_TABLE_DEFINE(HTA_CP_WHATIF);

/* Whether ev or (in a simulation graph, where untraced time inside an annotation is attributed to it) an
 * event enclosing it has a name containing one of the data-loading texts. */
static int data_loading(const hta_cp_graph *g, int32_t ev, const char *const *data_load, size_t ndata_load) {
    for (int32_t x = ev; ndata_load && x >= 0; x = g->ev_parent ? g->ev_parent[x] : -1) {
        const char *name = hta_sym(g->sym, g->ev[x].name);
        char *s = hta_shorten_name_hta(name);
        int hit = 0;
        for (size_t i = 0; i < ndata_load && !hit; i++) hit = strstr(s ? s : name, data_load[i]) != NULL;
        free(s);
        if (hit) return 1;
    }
    return 0;
}

/* The class of time spent in event x: its thread's (cpu_bound, data_loading) or its stream's work. */
static const char *event_class(const hta_cp_graph *g, int32_t x, const char *const *data_load, size_t ndata_load) {
    const hta_cp_event *ev = &g->ev[x];
    const char *name = hta_sym(g->sym, ev->name);
    if (hta_cp_ev_stream(g, ev) < 0)
        return data_loading(g, x, data_load, ndata_load) ? "data_loading" : "cpu_bound";
    char *s = hta_shorten_name_hta(name);
    /* HTA's rule calls every hip* kernel communication and misses RCCL's */
    int comm = g->hta_compat ? hta_is_comm_name_hta(s ? s : name) : hta_is_comm_kernel_name(name);
    free(s);
    return comm ? "gpu_communication_bound" : "gpu_compute_bound";
}

const char *hta_cpath_bound_by(const hta_cp_graph *g, const hta_cp_edge *e,
                               const char *const *data_load, size_t ndata_load) {
    switch (e->type) {
    case HTA_CP_KK: return "gpu_kernel_kernel_overhead";
    case HTA_CP_LAUNCH: return "gpu_kernel_launch_overhead";
    case HTA_CP_GAP: return "cpu_bound";
    case HTA_CP_PEER_WAIT: return "rank_wait";
    case HTA_CP_OPERATOR:
        if (e->attr >= 0) return event_class(g, e->attr, data_load, ndata_load);
        break;
    default: break;
    }
    /* HTA leaves its dependency and sync edges unclassified.  In a simulation graph (ev_parent set) a wait
     * is bound by what it waited for: a host sync by the GPU work it returned after, a thread's join by
     * the other thread's work, a stream's wait by the work of the stream it waited for */
    if (!g->ev_parent || e->u >= g->nnode) return "";
    return event_class(g, (int32_t)hta_cp_node_ev(g, e->u), data_load, ndata_load);
}

struct hta_cp_bb {
    const hta_cp_graph *g;
    const char *const *dl;
    size_t ndl;
    int by_name;      /* data loading is not told by enclosing events */
    const char **cls; /* 2 per name symbol, NULL = not yet */
};

hta_cp_bb *hta_cpath_bb_new(const hta_cp_graph *g, const char *const *dl, size_t ndl) {
    hta_cp_bb *m = malloc(sizeof *m);
    if (!m) return NULL;
    *m = (hta_cp_bb){g, dl, ndl, !(g->ev_parent && ndl), calloc(2 * (size_t)hta_symtab_count(g->sym) + 2,
                                                                  sizeof *m->cls)};
    if (!m->cls) {
        free(m);
        return NULL;
    }
    return m;
}

void hta_cpath_bb_free(hta_cp_bb *m) {
    if (!m) return;
    free(m->cls);
    free(m);
}

const char *hta_cpath_bb(hta_cp_bb *m, const hta_cp_edge *e) {
    if (e->type != HTA_CP_OPERATOR || e->attr < 0 || !m->by_name) return hta_cpath_bound_by(m->g, e, m->dl, m->ndl);
    const hta_cp_event *ev = &m->g->ev[e->attr];
    const char **c = &m->cls[2 * (size_t)ev->name + (hta_cp_ev_stream(m->g, ev) < 0)];
    if (!*c) *c = hta_cpath_bound_by(m->g, e, m->dl, m->ndl);
    return *c;
}

static double us(int64_t ns) { return (double)ns / 1000.0; }

/* Sums of path weights are 128-bit: a path's weights may each be near the int64 limits (a saved graph's,
 * a what-if rule's, negative ones with --exact-time), and their sum is only ever shown, as a double. */
typedef struct cls {
    const char *name;
    __int128 sum;
} cls;

static int cmp_cls(const void *a, const void *b) {
    return strcmp(((const cls *)a)->name, ((const cls *)b)->name);
}

typedef struct brow {
    int64_t w;
    uint32_t pos;
} brow;

HTA_QSORT_CMP(cmp_brow, brow, HTA_CMP2(y->w, x->w, x->pos, y->pos))

/* The summary table from per-class sums (names sorted, as the table lists them). */
static hta_status summary_write(const cls *c, size_t nc, __int128 total, const hta_table_def *d, hta_result *out) {
    hta_table *t = hta_table_from_def(d);
    if (!t) return HTA_ENOMEM;
    for (size_t j = 0; j < nc; j++) {
        long r = hta_table_add_row(t);
        if (r < 0 || hta_table_set_str(t, (size_t)r, HTA_CP_SUMMARY_BOUND_BY, c[j].name)) goto oom;
        hta_table_set_float(t, (size_t)r, HTA_CP_SUMMARY_DURATION, (double)c[j].sum / 1000.0);
        hta_table_set_float(t, (size_t)r, HTA_CP_SUMMARY_PCTG,
                            total ? (double)c[j].sum / (double)total * 100.0 : NAN);
    }
    return hta_result_add(out, t) ? HTA_ENOMEM : HTA_OK;
oom:
    hta_table_free(t);
    return HTA_ENOMEM;
}

/* The time of path step i: its stretch of schedule clip->t cut at clip->from (sim_answer's clipped times,
 * computed here rather than kept: a path's room at the report's peak), per edge id (w[p->edge[i]]), or the
 * edge's own weight (w NULL). */
static inline int64_t step_w(const hta_cp_graph *g, const hta_cp_path *p, const int64_t *w, const cp_clip *clip,
                             size_t i) {
    if (clip) {
        int64_t a = clip->t[p->node[i]] > clip->from ? clip->t[p->node[i]] : clip->from, z = clip->t[p->node[i + 1]];
        return z > a ? z - a : 0;
    }
    return !w ? hta_cp_edge_w(g, p->edge[i]) : w[p->edge[i]];
}

static hta_status summary_table(const hta_cp_graph *g, const hta_cp_path *p, const int64_t *w, const cp_clip *clip,
                                hta_cp_bb *bm, const hta_table_def *d, hta_result *out) {
    cls c[8];
    size_t nc = 0, j = 0;
    __int128 total = 0;
    const char *lb = NULL; /* the last edge's class: a path's edges come in runs of one */
    for (size_t i = 0; i + 1 < p->n; i++) {
        const hta_cp_edge *e = &g->edge[p->edge[i]];
        int64_t ew = step_w(g, p, w, clip, i);
        const char *b = hta_cpath_bb(bm, e);
        if (b != lb)
            for (lb = b, j = 0; j < nc && strcmp(c[j].name, b); j++) {}
        if (j == nc) c[nc++] = (cls){b, 0};
        c[j].sum += ew;
        total += ew;
    }
    qsort(c, nc, sizeof *c, cmp_cls);
    return summary_write(c, nc, total, d, out);
}

hta_status cp_summary_of(const char *const *names, const __int128 *sums, size_t n, const hta_table_def *d,
                         hta_result *out, hta_error *err) {
    cls c[16];
    size_t nc = 0;
    __int128 total = 0;
    for (size_t i = 0; i < n && nc < 16; i++) c[nc++] = (cls){names[i], sums[i]}, total += sums[i];
    qsort(c, nc, sizeof *c, cmp_cls);
    return summary_write(c, nc, total, d, out) ? hta_oom(err) : HTA_OK;
}

/* The `top` first rows of cmp_brow's order (a total order), in that order:
 * a heap of the best so far instead of sorting the whole path. */
static void heap_down(brow *h, size_t n, size_t i) {
    for (;;) { /* root = the worst kept row */
        size_t l = 2 * i + 1, w = i;
        if (l < n && cmp_brow(&h[l], &h[w]) > 0) w = l;
        if (l + 1 < n && cmp_brow(&h[l + 1], &h[w]) > 0) w = l + 1;
        if (w == i) return;
        brow t = h[i];
        h[i] = h[w];
        h[w] = t;
        i = w;
    }
}

static void top_rows(brow *rows, size_t n, size_t top) {
    for (size_t i = top / 2; i-- > 0;) heap_down(rows, top, i);
    for (size_t i = top; i < n; i++)
        if (cmp_brow(&rows[i], &rows[0]) < 0) {
            rows[0] = rows[i];
            heap_down(rows, top, 0);
        }
    qsort(rows, top, sizeof *rows, cmp_brow);
}

static hta_status breakdown_table(const hta_cp_graph *g, const hta_cp_path *p, const int64_t *w, const cp_clip *clip,
                                  hta_cp_bb *bm, size_t top, hta_result *out) {
    size_t ne = p->n ? p->n - 1 : 0;
    brow *rows = malloc((ne ? ne : 1) * sizeof *rows);
    hta_table *t = hta_table_from_def(&HTA_CP_BREAKDOWN_TABLE);
    if (!rows || !t) goto oom;
    for (size_t i = 0; i < ne; i++) rows[i] = (brow){step_w(g, p, w, clip, i), (uint32_t)i};
    size_t nrow = ne;
    if (top && top < ne) {
        top_rows(rows, ne, top);
        nrow = top;
    }
    for (size_t i = 0; i < nrow; i++) {
        const hta_cp_edge *e = &g->edge[p->edge[rows[i].pos]];
        long r = hta_table_add_row(t);
        if (r < 0) goto oom;
        size_t R = (size_t)r;
        hta_table_set_float(t, R, HTA_CP_BREAKDOWN_DURATION, us(rows[i].w));
        if (hta_table_set_str(t, R, HTA_CP_BREAKDOWN_TYPE, hta_cpath_edge_type_name(e->type)) ||
            hta_table_set_str(t, R, HTA_CP_BREAKDOWN_BOUND_BY, hta_cpath_bb(bm, e)))
            goto oom;
        if (e->attr < 0) {
            hta_table_set_null(t, R, HTA_CP_BREAKDOWN_EVENT);
            hta_table_set_null(t, R, HTA_CP_BREAKDOWN_PID);
            hta_table_set_null(t, R, HTA_CP_BREAKDOWN_TID);
            hta_table_set_null(t, R, HTA_CP_BREAKDOWN_STREAM);
            hta_table_set_null(t, R, HTA_CP_BREAKDOWN_INDEX);
            continue;
        }
        const hta_cp_event *ev = &g->ev[e->attr];
        char *s = hta_shorten_name_hta(hta_sym(g->sym, ev->name));
        int bad = !s || hta_table_set_str(t, R, HTA_CP_BREAKDOWN_NAME, s) ||
                  hta_table_set_str(t, R, HTA_CP_BREAKDOWN_CAT, hta_sym(g->sym, ev->cat));
        free(s);
        if (bad) goto oom;
        hta_table_set_int(t, R, HTA_CP_BREAKDOWN_EVENT, ev->index);
        const hta_cp_thread *th = &g->thr[ev->thr];
        hta_table_set_int(t, R, HTA_CP_BREAKDOWN_PID, th->pid);
        hta_table_set_int(t, R, HTA_CP_BREAKDOWN_TID, th->tid);
        hta_table_set_int(t, R, HTA_CP_BREAKDOWN_STREAM, th->stream);
        hta_table_set_int(t, R, HTA_CP_BREAKDOWN_INDEX, ev->index);
    }
    free(rows);
    return hta_result_add(out, t) ? HTA_ENOMEM : HTA_OK;
oom:
    free(rows);
    hta_table_free(t);
    return HTA_ENOMEM;
}

static int stat_row(hta_table *t, const char *name, double v) {
    long r = hta_table_add_row(t);
    if (r < 0 || hta_table_set_str(t, (size_t)r, HTA_CP_STATS_NAME, name)) return -1;
    hta_table_set_float(t, (size_t)r, HTA_CP_STATS_VALUE, v);
    return 0;
}

static hta_status stats_table(const hta_cp_graph *g, const hta_cp_path *p, const int64_t *w, const cp_clip *clip,
                              hta_result *out) {
    hta_table *t = hta_table_from_def(&HTA_CP_STATS_TABLE);
    if (!t) return HTA_ENOMEM;
    size_t bytype[HTA_CP_NTYPES] = {0}, pbytype[HTA_CP_NTYPES] = {0};
    for (size_t i = 0; i < g->nedge; i++) bytype[g->edge[i].type]++;
    /* The path's weight is the sum of the weights its breakdown lists (the edges' own, negative ones
     * included), as HTA's results give it and as the summary divides by; the longest-path search clamps a
     * weight <= -1 to 0 (spec §7), so p->length can be that many us larger (H100 OWL-ViT: 17 edges of -1 us,
     * 221,810 against 221,793 us). */
    int64_t weight = 0;
    for (size_t i = 0; i + 1 < p->n; i++) {
        pbytype[g->edge[p->edge[i]].type]++;
        weight += step_w(g, p, w, clip, i);
    }
    /* distinct events on the path */
    unsigned char *seen = calloc(g->nev ? g->nev : 1, 1);
    if (!seen) goto oom;
    size_t nevents = 0;
    for (size_t i = 0; i < p->n; i++) {
        uint32_t e = hta_cp_node_ev(g, p->node[i]);
        if (!seen[e]) seen[e] = 1, nevents++;
    }
    free(seen);
    char name[96];
    if (stat_row(t, "graph_nodes", (double)g->norder) || stat_row(t, "graph_edges", (double)g->nedge))
        goto oom;
    for (int k = 0; k < HTA_CP_NTYPES; k++) {
        if (!bytype[k]) continue;
        snprintf(name, sizeof name, "graph_edge_types.%s", hta_cpath_edge_type_name(k));
        if (stat_row(t, name, (double)bytype[k])) goto oom;
    }
    if (stat_row(t, "critical_path_nodes", (double)p->n) ||
        stat_row(t, "critical_path_edges", (double)(p->n ? p->n - 1 : 0)) ||
        stat_row(t, "critical_path_total_weight", us(weight)) ||
        stat_row(t, "critical_path_events", (double)nevents) ||
        stat_row(t, "clipped_events", (double)g->nev) || stat_row(t, "node_list", (double)g->nnode))
        goto oom;
    for (int k = 0; k < HTA_CP_NTYPES; k++) {
        if (!pbytype[k]) continue;
        snprintf(name, sizeof name, "critical_path_edge_types.%s", hta_cpath_edge_type_name(k));
        if (stat_row(t, name, (double)pbytype[k])) goto oom;
    }
    return hta_result_add(out, t) ? HTA_ENOMEM : HTA_OK;
oom:
    hta_table_free(t);
    return HTA_ENOMEM;
}

static hta_status report(const hta_cp_graph *g, const hta_cp_path *p, const int64_t *w, const cp_clip *clip,
                         const char *const *data_load, size_t ndata_load, size_t top, hta_result *out,
                         hta_error *err) {
    hta_cp_bb *bm = hta_cpath_bb_new(g, data_load, ndata_load);
    if (!bm) return hta_oom(err);
    int bad = summary_table(g, p, w, clip, bm, &HTA_CP_SUMMARY_TABLE, out) ||
              (top != HTA_CP_NO_BREAKDOWN && breakdown_table(g, p, w, clip, bm, top, out)) ||
              stats_table(g, p, w, clip, out);
    hta_cpath_bb_free(bm);
    if (bad) return hta_oom(err);
    return HTA_OK;
}

static hta_status summary(const hta_cp_graph *g, const hta_cp_path *p, const int64_t *w, const cp_clip *clip,
                          const char *const *data_load, size_t ndata_load, const hta_table_def *d, hta_result *out,
                          hta_error *err) {
    hta_cp_bb *bm = hta_cpath_bb_new(g, data_load, ndata_load);
    if (!bm) return hta_oom(err);
    int bad = summary_table(g, p, w, clip, bm, d, out) != HTA_OK;
    hta_cpath_bb_free(bm);
    return bad ? hta_oom(err) : HTA_OK;
}

hta_status hta_cpath_report(const hta_cp_graph *g, const hta_cp_path *p, const int64_t *w,
                            const char *const *data_load, size_t ndata_load, size_t top,
                            hta_result *out, hta_error *err) {
    return report(g, p, w, NULL, data_load, ndata_load, top, out, err);
}

hta_status cp_report_steps(const hta_cp_graph *g, const hta_cp_path *p, const cp_clip *clip,
                           const char *const *data_load, size_t ndata_load, size_t top, hta_result *out,
                           hta_error *err) {
    return report(g, p, NULL, clip, data_load, ndata_load, top, out, err);
}

hta_status hta_cpath_summary(const hta_cp_graph *g, const hta_cp_path *p, const int64_t *w,
                             const char *const *data_load, size_t ndata_load, const hta_table_def *d,
                             hta_result *out, hta_error *err) {
    return summary(g, p, w, NULL, data_load, ndata_load, d, out, err);
}

hta_status cp_summary_steps(const hta_cp_graph *g, const hta_cp_path *p, const cp_clip *clip,
                            const char *const *data_load, size_t ndata_load, const hta_table_def *d,
                            hta_result *out, hta_error *err) {
    return summary(g, p, NULL, clip, data_load, ndata_load, d, out, err);
}

hta_status hta_cpath_whatif_table(int64_t base, int64_t sim, size_t changed, size_t nodes, hta_result *out,
                                  hta_error *err) {
    hta_table *tb = hta_table_from_def(&HTA_CP_WHATIF_TABLE);
    if (!tb) return hta_oom(err);
    struct {
        const char *n;
        double v;
    } rows[] = {
        {"baseline_path_us", us(base)},
        {"simulated_path_us", us(sim)},
        {"saving_us", us(base - sim)},
        {"saving_percent", base ? (double)(base - sim) / (double)base * 100.0 : 0.0},
        {"edges_changed", (double)changed},
        {"simulated_path_nodes", (double)nodes},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        long r = hta_table_add_row(tb);
        if (r < 0 || hta_table_set_str(tb, (size_t)r, HTA_CP_WHATIF_NAME, rows[i].n)) {
            hta_table_free(tb);
            return hta_oom(err);
        }
        hta_table_set_float(tb, (size_t)r, HTA_CP_WHATIF_VALUE, rows[i].v);
    }
    if (hta_result_add(out, tb)) return hta_oom(err);
    return HTA_OK;
}
