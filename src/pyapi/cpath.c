/* The critical path for the Python C API, as `hta critical-path` answers it: by default the simulation
 * graph's one path through the span the annotation selects (hta_sim_answer); with hta_compat, or from a
 * saved file, HTA's graph (hta/cpath.h).  Its report tables, its overlay, and saving HTA's graph. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hta/sim.h"
#include "pyapi/internal.h"

/* "N" or "A:B" (inclusive), as HTA's instance_id int or tuple. */
static hta_status parse_instance(const char *s, int64_t *a, int64_t *b, hta_error *err) {
    char *e;
    errno = 0;
    long long x = strtoll(s, &e, 10), y = x;
    if (e != s && !errno && x >= 0 && *e == ':') {
        const char *q = e + 1;
        y = strtoll(q, &e, 10);
        if (e == q || y < x) e = (char *)s;
    }
    if (e == s || *e || errno || x < 0) return hta_fail(err, HTA_EINVAL, "instance_id: bad '%s' (N or A:B)", s);
    *a = x;
    *b = y;
    return HTA_OK;
}

/* The graph's own copies of the options' strings (the Python text goes when the call returns). */
static hta_status keep_opts(hta_py_graph *g, const py_opts *o, hta_error *err) {
    const char **dl = NULL;
    HTA_TRY(py_opt_list(o, "data_load", &dl, &g->ndata_load, err));
    hta_status st = HTA_OK;
    if (g->ndata_load && !(g->data_load = calloc(g->ndata_load, sizeof *g->data_load))) st = hta_oom(err);
    for (size_t i = 0; !st && i < g->ndata_load; i++)
        if (!(g->data_load[i] = strdup(dl[i]))) st = hta_oom(err);
    free(dl);
    const char *an = py_opt(o, "annotation");
    if (!st && !(g->annotation = strdup(an ? an : ""))) st = hta_oom(err);
    hta_cpath_opts_default(&g->o);
    g->o.annotation = g->annotation;
    g->o.data_load = (const char *const *)g->data_load;
    g->o.ndata_load = g->ndata_load;
    if (!st) st = py_opt_flag(o, "zero_weight_launch", &g->o.zero_weight_launch, err);
    if (!st && py_opt(o, "instance")) st = parse_instance(py_opt(o, "instance"), &g->o.instance_a, &g->o.instance_b, err);
    return st;
}

hta_status hta_py_cp_build(hta_py_ctx *c, int32_t rank, const char *opts, hta_py_graph **out, hta_error *err) {
    *out = NULL;
    HTA_TRY(py_need(c, err));
    long k = hta_ctx_find_rank(c->ctx, rank);
    if (k < 0) return hta_fail(err, HTA_EINVAL, "critical_path_analysis: rank %d is not loaded", (int)rank);
    py_opts o;
    HTA_TRY(py_opts_parse(opts, &o, err));
    static const char *const keys[] = {"annotation", "instance", "data_load", "zero_weight_launch", NULL};
    hta_py_graph *g = calloc(1, sizeof *g);
    hta_status st = g ? py_opts_check(&o, "critical_path_analysis", keys, err) : hta_oom(err);
    if (!st) st = keep_opts(g, &o, err);
    py_opts_free(&o);
    if (!st) {
        g->rank = rank;
        g->lo = INT64_MIN, g->hi = INT64_MAX;
        if (c->ctx->hta_compat) {
            st = hta_cpath_build(c->ctx, (size_t)k, &g->o, &g->g, err);
        } else {
            /* the command's default: the span the annotation's instances select, then one path through it */
            if (*g->annotation) st = hta_cpath_window(c->ctx, (size_t)k, &g->o, &g->lo, &g->hi, err);
            if (!st) st = hta_sim_build(c->ctx, (size_t)k, &g->sim, err);
        }
    }
    if (st) {
        hta_py_cp_free(g);
        return st;
    }
    *out = g;
    return HTA_OK;
}

hta_status hta_py_cp_load(const char *path, hta_py_graph **out, hta_error *err) {
    *out = NULL;
    hta_py_graph *g = calloc(1, sizeof *g);
    if (!g) return hta_oom(err);
    hta_status st = hta_cpath_load(path, &g->g, err);
    if (st) {
        free(g);
        return st;
    }
    g->rank = g->g->rank;
    *out = g;
    return HTA_OK;
}

/* The simulation graph needs its session: the one it was built in, still open. */
static hta_status need_session(const hta_py_ctx *c, const hta_py_graph *g, hta_error *err) {
    if (!c || !c->ctx || hta_ctx_find_rank(c->ctx, g->rank) < 0)
        return hta_fail(err, HTA_EINVAL, "the critical path's trace is not open (rank %d)", (int)g->rank);
    return HTA_OK;
}

hta_status hta_py_cp_save(hta_py_ctx *c, hta_py_graph *g, const char *path, hta_error *err) {
    if (!g->g) {
        /* default mode: HTA's graph of the same selection, built for the file (as `--save` does) */
        HTA_TRY(need_session(c, g, err));
        HTA_TRY(hta_cpath_build(c->ctx, (size_t)hta_ctx_find_rank(c->ctx, g->rank), &g->o, &g->g, err));
    }
    return hta_cpath_save(g->g, path, err);
}

int32_t hta_py_cp_rank(const hta_py_graph *g) { return g->rank; }

hta_status hta_py_cp_report(hta_py_ctx *c, const hta_py_graph *g, const char *opts, hta_py_result **out,
                            hta_error *err) {
    *out = NULL;
    py_opts o;
    HTA_TRY(py_opts_parse(opts, &o, err));
    static const char *const keys[] = {"top", NULL};
    long long top = 0;
    hta_result res;
    hta_result_init(&res);
    hta_status st = py_opts_check(&o, "critical path report", keys, err);
    if (!st) st = py_opt_int(&o, "top", &top, err);
    py_opts_free(&o);
    if (!st && top < 0) st = hta_fail(err, HTA_EINVAL, "top: %lld (>= 0)", top);
    const char *const *dl = (const char *const *)g->data_load;
    if (!st && g->sim) {
        hta_sim_opts so = {NULL, 0, dl, g->ndata_load, g->lo, g->hi, 1, (size_t)top, NULL};
        st = need_session(c, g, err);
        if (!st) st = hta_sim_answer(c->ctx, g->sim, &so, &res, NULL, err);
    } else if (!st) {
        /* the graph's notes first, as the command prints them */
        for (size_t i = 0; !st && i < g->g->nnotes; i++)
            if (hta_result_note(&res, "%s", g->g->notes[i]) < 0) st = hta_oom(err);
        if (!st) st = hta_cpath_report(g->g, &g->g->path, NULL, dl, g->ndata_load, (size_t)top, &res, err);
    }
    return py_result_out(st, &res, out, err);
}

hta_status hta_py_cp_overlay(hta_py_ctx *c, const hta_py_graph *g, const char *outdir, const char *opts,
                             hta_py_result **out, hta_error *err) {
    *out = NULL;
    py_opts o;
    HTA_TRY(py_opts_parse(opts, &o, err));
    static const char *const keys[] = {"all_events", "all_edges", NULL};
    hta_cpath_overlay_opts oo = {0, 0, 0, NULL};
    hta_result res, tmp;
    hta_result_init(&res);
    hta_result_init(&tmp);
    hta_cp_path p = {0};
    char *written = NULL;
    hta_status st = py_opts_check(&o, "overlay_critical_path_analysis", keys, err);
    if (!st) st = py_opt_flag(&o, "all_events", &oo.all_events, err);
    if (!st) st = py_opt_flag(&o, "all_edges", &oo.all_edges, err);
    py_opts_free(&o);
    oo.all_edges = oo.all_events && oo.all_edges; /* HTA: show_all_edges only with every event shown */
    if (!st) st = need_session(c, g, err);
    const hta_rank *r = st ? NULL : hta_ctx_rank(c->ctx, (size_t)hta_ctx_find_rank(c->ctx, g->rank));
    if (r && r->merged)
        st = hta_fail(err, HTA_EINVAL, "%s: a merged trace (hta merge): the overlay rewrites the per-rank files",
                      r->path);
    if (!st && g->sim) {
        /* the answer's path, drawn on the simulation graph */
        hta_sim_opts so = {NULL, 0, (const char *const *)g->data_load, g->ndata_load, g->lo, g->hi, 0, 0, NULL};
        st = hta_sim_answer(c->ctx, g->sim, &so, &tmp, &p, err);
        oo.path = &p;
        if (!st) st = hta_cpath_overlay(c->ctx, hta_sim_graph(g->sim), outdir, &oo, &written, err);
    } else if (!st) {
        st = hta_cpath_overlay(c->ctx, g->g, outdir, &oo, &written, err);
    }
    if (!st && hta_result_note(&res, "%s", written) < 0) st = hta_oom(err);
    free(written);
    hta_cpath_path_free(&p);
    hta_result_free(&tmp);
    return py_result_out(st, &res, out, err);
}

void hta_py_cp_free(hta_py_graph *g) {
    if (!g) return;
    hta_cpath_free(g->g);
    hta_sim_free(g->sim);
    for (size_t i = 0; i < g->ndata_load; i++) free(g->data_load ? g->data_load[i] : NULL);
    free(g->data_load);
    free(g->annotation);
    free(g);
}
