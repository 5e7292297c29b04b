/* One rank's critical path as `hta critical-path` asks for it (hta_cpath_ask, hta/sim.h): the engine chosen
 * once here, so that a front end only fills the options and prints.  The default answer is the simulation
 * graph's one path (hta_sim_answer); HTA's graph answers where HTA is asked for (--hta-compat, a stored
 * graph), with a what-if on a trace still run on the simulation graph; --save stores HTA's graph. */
#include <stdlib.h>
#include <string.h>

#include "cpath/internal.h"
#include "hta/sim.h"

static size_t breakdown_top(const hta_cpath_ask_opts *o, size_t dflt) {
    return o->all ? 0 : o->top > 0 ? (size_t)o->top : dflt;
}

/* The span of the annotation's instances, or every step (INT64_MIN, INT64_MAX). */
static hta_status span(hta_ctx *ctx, const hta_cpath_ask_opts *o, hta_sim_opts *so, hta_error *err) {
    so->lo = INT64_MIN;
    so->hi = INT64_MAX;
    if (o->cp->annotation && *o->cp->annotation) return hta_cpath_window(ctx, 0, o->cp, &so->lo, &so->hi, err);
    return HTA_OK;
}

/* The default answer: the simulation graph's one path through the span; the overlay draws that path. */
static hta_status sim_ask(hta_ctx *ctx, const hta_cpath_ask_opts *o, hta_result *res, hta_error *err) {
    hta_sim *sim = NULL;
    hta_cp_path p = {0};
    hta_sim_opts so = {o->rules, o->nrules, o->cp->data_load, o->cp->ndata_load, 0, 0,
                       !o->nrules || o->top > 0 || o->all, breakdown_top(o, 20), o->trace_out};
    HTA_TRY(span(ctx, o, &so, err));
    HTA_TRY(hta_sim_build(ctx, 0, &sim, err));
    hta_status st = hta_sim_answer(ctx, sim, &so, res, &p, err);
    if (!st && o->overlay) {
        hta_cpath_overlay_opts oo = {o->all_events, o->all_events && o->all_edges, 0, &p};
        char *written = NULL;
        st = hta_cpath_overlay(ctx, hta_sim_graph(sim), o->overlay, &oo, &written, err);
        if (!st) hta_result_note(res, "overlay written to %s", written);
        free(written);
    }
    if (!st && o->save) {
        hta_cp_graph *g = NULL;
        st = hta_cpath_build(ctx, 0, o->cp, &g, err);
        if (!st) st = hta_cpath_save(g, o->save, err);
        if (!st) hta_result_note(res, "HTA's graph saved to %s", o->save);
        hta_cpath_free(g);
    }
    hta_cpath_path_free(&p);
    hta_sim_free(sim);
    return st;
}

/* A what-if on a trace beside HTA's graph: the simulation graph's what_if tables and notes only (the rest is
 * HTA's graph's). */
static hta_status sim_what_if(hta_ctx *ctx, const hta_cpath_ask_opts *o, hta_result *res, hta_error *err) {
    hta_sim *sim = NULL;
    hta_result tmp;
    hta_result_init(&tmp);
    hta_sim_opts so = {o->rules, o->nrules, o->cp->data_load, o->cp->ndata_load, 0, 0, 0, 0, o->trace_out};
    hta_status st = span(ctx, o, &so, err);
    if (!st) st = hta_sim_build(ctx, 0, &sim, err);
    if (!st) st = hta_sim_answer(ctx, sim, &so, &tmp, NULL, err);
    for (size_t i = 0; !st && i < tmp.n; i++) {
        if (strncmp(tmp.tables[i]->name, "what_if", 7)) continue;
        if (hta_result_add(res, tmp.tables[i])) st = hta_oom(err);
        tmp.tables[i] = NULL;
    }
    if (!st) st = hta_result_copy_notes(res, &tmp, err);
    hta_result_free(&tmp);
    hta_sim_free(sim);
    return st;
}

/* A what-if on a stored graph: HTA's graph with the rules' weights, its new longest path on the same nodes and
 * tie rules, so that baseline and simulation differ only by the rules. */
static hta_status graph_what_if(const hta_cp_graph *g, const hta_cpath_ask_opts *o, hta_result *out, hta_error *err) {
    if (o->trace_out) return hta_fail(err, HTA_EINVAL, "--what-if-trace needs the trace (PATH), not only --graph");
    int64_t *w = malloc((g->nedge ? g->nedge : 1) * sizeof *w);
    hta_cp_path p = {0};
    hta_status st = HTA_OK;
    if (!w) return hta_oom(err);
    size_t changed = 0;
    HTA_TRY_GOTO(st, hta_cpath_whatif_weights(g, o->rules, o->nrules, w, &changed, err), done);
    HTA_TRY_GOTO(st, hta_cpath_longest(g, w, &p, err), done);
    HTA_TRY_GOTO(st, hta_cpath_whatif_table(g->path.length, p.length, changed, p.n, out, err), done);
    HTA_TRY_GOTO(st, hta_cpath_summary(g, &p, w, o->cp->data_load, o->cp->ndata_load, &HTA_CP_WHATIF_SUMMARY_TABLE,
                                       out, err),
                 done);
done:
    free(w);
    hta_cpath_path_free(&p);
    return st;
}

/* HTA's graph (built, or stored): its summary, breakdown and stats, after the what-if's tables. */
static hta_status hta_ask(hta_ctx *ctx, const hta_cpath_ask_opts *o, hta_result *res, hta_error *err) {
    hta_cp_graph *g = NULL;
    hta_status st = o->graph ? hta_cpath_load(o->graph, &g, err) : hta_cpath_build(ctx, 0, o->cp, &g, err);
    if (st) return st;
    for (size_t i = 0; i < g->nnotes; i++) hta_result_note(res, "%s", g->notes[i]);
    if (o->nrules) st = ctx ? sim_what_if(ctx, o, res, err) : graph_what_if(g, o, res, err);
    if (!st)
        st = hta_cpath_report(g, &g->path, NULL, o->cp->data_load, o->cp->ndata_load, breakdown_top(o, 0), res, err);
    if (!st && o->nrules && o->top <= 0 && !o->all) {
        /* under a what-if the breakdown comes only on request (--top, --all), as the simulation graph's does */
        hta_table *bd = NULL;
        st = hta_result_take(res, &HTA_CP_BREAKDOWN_TABLE, &bd, err);
        hta_table_free(bd);
    }
    if (!st && o->save) {
        st = hta_cpath_save(g, o->save, err);
        if (!st) hta_result_note(res, "graph saved to %s", o->save);
    }
    if (!st && o->overlay) {
        if (!ctx) {
            st = hta_fail(err, HTA_EINVAL, "--overlay needs the trace (PATH), not only --graph");
        } else {
            hta_cpath_overlay_opts oo = {o->all_events, o->all_events && o->all_edges, 0, NULL};
            char *written = NULL;
            st = hta_cpath_overlay(ctx, g, o->overlay, &oo, &written, err);
            if (!st) hta_result_note(res, "overlay written to %s", written);
            free(written);
        }
    }
    hta_cpath_free(g);
    return st;
}

hta_status hta_cpath_ask(hta_ctx *ctx, const hta_cpath_ask_opts *o, hta_result *out, hta_error *err) {
    if (!ctx && !o->graph) return hta_fail(err, HTA_EINVAL, "the critical path needs a trace or a stored graph");
    return o->graph || o->hta_graph ? hta_ask(ctx, o, out, err) : sim_ask(ctx, o, out, err);
}
