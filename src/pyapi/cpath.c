/* The critical path for the Python C API: HTA's graph of one rank (hta/cpath.h), built from the
 * session or loaded from a saved file, its report tables, its overlay, and saving it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

hta_status hta_py_cp_build(hta_py_ctx *c, int32_t rank, const char *opts, hta_py_graph **out, hta_error *err) {
    *out = NULL;
    long k = hta_ctx_find_rank(c->ctx, rank);
    if (k < 0) return hta_fail(err, HTA_EINVAL, "critical_path_analysis: rank %d is not loaded", (int)rank);
    py_opts o;
    HTA_TRY(py_opts_parse(opts, &o, err));
    static const char *const keys[] = {"annotation", "instance", "data_load", "zero_weight_launch", NULL};
    hta_cpath_opts co;
    hta_cpath_opts_default(&co);
    const char **dl = NULL;
    hta_py_graph *g = calloc(1, sizeof *g);
    hta_status st = g ? py_opts_check(&o, "critical_path_analysis", keys, err) : hta_oom(err);
    if (!st) st = py_opt_list(&o, "data_load", &dl, &co.ndata_load, err);
    if (!st) st = py_opt_flag(&o, "zero_weight_launch", &co.zero_weight_launch, err);
    if (!st && py_opt(&o, "instance")) st = parse_instance(py_opt(&o, "instance"), &co.instance_a, &co.instance_b, err);
    if (!st) {
        co.annotation = py_opt(&o, "annotation") ? py_opt(&o, "annotation") : "";
        co.data_load = dl;
        st = hta_cpath_build(c->ctx, (size_t)k, &co, &g->g, err);
    }
    free(dl);
    py_opts_free(&o);
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
    *out = g;
    return HTA_OK;
}

hta_status hta_py_cp_save(const hta_py_graph *g, const char *path, hta_error *err) {
    return hta_cpath_save(g->g, path, err);
}

int32_t hta_py_cp_rank(const hta_py_graph *g) { return g->g->rank; }

hta_status hta_py_cp_report(const hta_py_graph *g, const char *opts, hta_py_result **out, hta_error *err) {
    *out = NULL;
    py_opts o;
    HTA_TRY(py_opts_parse(opts, &o, err));
    static const char *const keys[] = {"data_load", "top", NULL};
    const char **dl = NULL;
    size_t ndl = 0;
    long long top = 0;
    hta_result res;
    hta_result_init(&res);
    hta_status st = py_opts_check(&o, "critical path report", keys, err);
    if (!st) st = py_opt_list(&o, "data_load", &dl, &ndl, err);
    if (!st) st = py_opt_int(&o, "top", &top, err);
    /* the graph's notes first, as the command prints them */
    for (size_t i = 0; !st && i < g->g->nnotes; i++)
        if (hta_result_note(&res, "%s", g->g->notes[i]) < 0) st = hta_oom(err);
    if (!st) st = hta_cpath_report(g->g, &g->g->path, dl, ndl, top > 0 ? (size_t)top : 0, &res, err);
    free(dl);
    py_opts_free(&o);
    return py_result_out(st, &res, out, err);
}

hta_status hta_py_cp_overlay(hta_py_ctx *c, const hta_py_graph *g, const char *outdir, const char *opts,
                             hta_py_result **out, hta_error *err) {
    *out = NULL;
    py_opts o;
    HTA_TRY(py_opts_parse(opts, &o, err));
    static const char *const keys[] = {"all_events", "all_edges", NULL};
    hta_cpath_overlay_opts oo = {0, 0, 0};
    hta_result res;
    hta_result_init(&res);
    char *written = NULL;
    hta_status st = py_opts_check(&o, "overlay_critical_path_analysis", keys, err);
    if (!st) st = py_opt_flag(&o, "all_events", &oo.all_events, err);
    if (!st) st = py_opt_flag(&o, "all_edges", &oo.all_edges, err);
    py_opts_free(&o);
    oo.all_edges = oo.all_events && oo.all_edges; /* HTA: show_all_edges only with every event shown */
    long k = hta_ctx_find_rank(c->ctx, g->g->rank);
    if (!st && k >= 0 && hta_ctx_rank(c->ctx, (size_t)k)->merged)
        st = hta_fail(err, HTA_EINVAL, "%s: a merged trace (hta merge): the overlay rewrites the per-rank files",
                      hta_ctx_rank(c->ctx, (size_t)k)->path);
    if (!st) st = hta_cpath_overlay(c->ctx, g->g, outdir, &oo, &written, err);
    if (!st && hta_result_note(&res, "%s", written) < 0) st = hta_oom(err);
    free(written);
    return py_result_out(st, &res, out, err);
}

void hta_py_cp_free(hta_py_graph *g) {
    if (!g) return;
    hta_cpath_free(g->g);
    free(g);
}
