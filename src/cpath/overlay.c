/* The critical path drawn on the original trace (critical-path.md §10). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cpath/internal.h"

typedef struct ov {
    const hta_trace *t;
    const hta_rank *r;
    const hta_cp_graph *g;
    const hta_cpath_overlay_opts *o;
    unsigned char *crit; /* per event index */
    size_t ncrit;
    unsigned char *on_path; /* per edge */
    const int32_t *row; /* per event: its row of r */
    hta_raw_obj obj;
} ov;

static int ov_event(void *ctx, hta_rawout *w, uint32_t index, const char *json, size_t len) {
    ov *x = ctx;
    int crit = index < x->ncrit && x->crit[index];
    if (!crit && x->o->all_events) return hta_rawout_event(w, json, len);
    int rc = hta_raw_obj_parse(&x->obj, json, len);
    if (rc) return rc == -2 ? hta_rawout_oom(w) : hta_rawout_event(w, json, len);
    if (!crit) { /* only critical events, and those that are no X (or annotations) */
        const hta_raw_member *ph = hta_raw_obj_get(&x->obj, "ph"), *cat = hta_raw_obj_get(&x->obj, "cat");
        int keep_cat = cat && (hta_raw_str_is(cat, "user_annotation") || hta_raw_str_is(cat, "python_function"));
        if (ph && hta_raw_str_is(ph, "X") && !keep_cat) return 0;
        return hta_rawout_event(w, json, len);
    }
    /* (HTA fails on a critical event without args; it gets them here) */
    static const char mark[] = "\"critical\": 1";
    return hta_rawout_add_arg(w, &x->obj, json, len, mark, sizeof mark - 1);
}

static void id_text(char *buf, size_t n, const hta_trace *t, int64_t v, int64_t sym) {
    if (sym >= 0) snprintf(buf, n, "\"%s\"", hta_sym(t->sym, (uint32_t)sym));
    else snprintf(buf, n, "%lld", (long long)v);
}

static int flow_end(hta_rawout *w, ov *x, uint32_t node, size_t id, const hta_cp_edge *e, int crit) {
    const hta_cp_graph *g = x->g;
    int is_start = hta_cp_node_is_start(g, node);
    const hta_cp_event *ev = &g->ev[hta_cp_node_ev(g, node)];
    const hta_rank *r = x->r;
    size_t row = (size_t)x->row[ev - g->ev];
    const hta_thread *th = hta_row_thread(r, row);
    int64_t ts = r->ts[row], dur = r->dur[row];
    int64_t t = is_start ? ts : ts + dur;
    if (!is_start && hta_row_arg_int(x->t, r, row, HTA_ARG_DEVICE, -1) >= 0) t -= dur < 1000 ? dur : 1000;
    char pid[300], tid[300], buf[1024];
    id_text(pid, sizeof pid, x->t, th->pid, th->pid_sym);
    id_text(tid, sizeof tid, x->t, th->tid, th->tid_sym);
    int is_s = node == e->u;
    int n = snprintf(buf, sizeof buf,
                     "{\"ph\": \"%s\", \"id\": %zu, \"pid\": %s, \"tid\": %s, \"ts\": %lld, \"cat\": "
                     "\"critical_path\", \"name\": \"critical_path\", \"args\": {\"weight\": %lld, "
                     "\"critical\": %s, \"type\": \"%s\"}%s}",
                     is_s ? "s" : "f", id, pid, tid, (long long)(t / 1000), (long long)(hta_cp_edge_w(g, (size_t)(e - g->edge)) / 1000),
                     crit ? "true" : "false", hta_cpath_edge_type_name(e->type), is_s ? "" : ", \"bp\": \"e\"");
    return hta_rawout_event(w, buf, (size_t)n);
}

static int ov_tail(void *ctx, hta_rawout *w) {
    ov *x = ctx;
    const hta_cp_graph *g = x->g;
    size_t id = 0;
    if (x->o->all_edges) {
        for (size_t i = 0; i < g->nedge; i++) {
            const hta_cp_edge *e = &g->edge[i];
            if (e->type == HTA_CP_LAUNCH && hta_cp_edge_w(g, i) == 0 && g->zero_weight_launch && !x->o->show_zero_weight_launch)
                continue;
            if (flow_end(w, x, e->u, id, e, x->on_path[i]) || flow_end(w, x, e->v, id, e, x->on_path[i])) return 1;
            id++;
        }
        return 0;
    }
    const hta_cp_path *pp = x->o->path ? x->o->path : &g->path;
    for (size_t i = 0; i + 1 < pp->n; i++) {
        const hta_cp_edge *e = &g->edge[pp->edge[i]];
        if (e->type != HTA_CP_DEPENDENCY && e->type != HTA_CP_LAUNCH && e->type != HTA_CP_SYNC) continue;
        if (flow_end(w, x, e->u, id, e, 1) || flow_end(w, x, e->v, id, e, 1)) return 1;
        id++;
    }
    return 0;
}

hta_status hta_cpath_overlay(hta_ctx *ctx, const hta_cp_graph *g, const char *outdir,
                             const hta_cpath_overlay_opts *o, char **written, hta_error *err) {
    const hta_trace *t = ctx->trace;
    *written = NULL;
    const hta_rank *r = NULL;
    for (size_t i = 0; i < t->nranks; i++)
        if (t->ranks[i]->rank == g->rank) r = t->ranks[i];
    if (!r) return hta_fail(err, HTA_EINVAL, "rank %d is not in the trace", (int)g->rank);
    /* the events' rows: HTA's graph built from the trace keeps them (a saved one has none); a simulation graph's
     * are found by their event indices */
    if (g->ev_node && !g->ev_row && g->nev) return hta_fail(err, HTA_EINVAL, "the graph was not built from this trace");
    int32_t *rows = NULL;
    if (!g->ev_row) HTA_TRY(cp_ev_rows(g, r, &rows, err));
    hta_status dst = hta_output_dir(outdir, err);
    if (dst) {
        free(rows);
        return dst;
    }
    const char *base = strrchr(r->path, '/');
    base = base ? base + 1 : r->path;
    size_t pl = strlen(outdir) + strlen(base) + 40;
    char *path = malloc(pl);
    if (!path) {
        free(rows);
        return hta_oom(err);
    }
    snprintf(path, pl, "%s/overlaid_critical_path_%s", outdir, base);

    ov x = {t, r, g, o, NULL, 0, NULL, g->ev_row ? g->ev_row : rows, {0}};
    for (size_t i = 0; i < g->nev; i++)
        if (g->ev[i].index + 1 > x.ncrit) x.ncrit = g->ev[i].index + 1;
    x.crit = calloc(x.ncrit ? x.ncrit : 1, 1);
    x.on_path = calloc(g->nedge ? g->nedge : 1, 1);
    if (!x.crit || !x.on_path) {
        free(x.crit);
        free(x.on_path);
        free(rows);
        free(path);
        return hta_oom(err);
    }
    const hta_cp_path *pp = o->path ? o->path : &g->path;
    for (size_t i = 0; i < pp->n; i++) x.crit[g->ev[hta_cp_node_ev(g, pp->node[i])].index] = 1;
    for (size_t i = 0; i + 1 < pp->n; i++) x.on_path[pp->edge[i]] = 1;
    hta_rawout_hooks h = {.event = ov_event, .tail = ov_tail, .ctx = &x};
    hta_status st = hta_rawout_derive(r->path, path, hta_raw_is_gzip(r->path), &h, err);
    hta_raw_obj_free(&x.obj);
    free(x.crit);
    free(x.on_path);
    free(rows);
    if (st) {
        free(path);
        return st;
    }
    *written = path;
    return HTA_OK;
}
