/* One rank's critical-path answer from one path (hta/sim.h, hta_sim_answer): the span a selection asks
 * for, the simulation graph's path through it, and every table (summary, breakdown, stats, steps, and the
 * what-if's) from that one path, so that they add up to the same time. */
#include <stdlib.h>
#include <string.h>

#include "cpath/sim_internal.h"

/* The span's end nodes under schedule t: the window's (lo/hi given: the earliest node at or after lo, the
 * latest at or before hi), else the steps' (the earliest start, the latest end), else the whole run's. */
static int span_nodes(const hta_sim *s, const int64_t *t, int64_t lo, int64_t hi, uint32_t *a, uint32_t *z) {
    const hta_cp_graph *g = s->g;
    *a = *z = UINT32_MAX;
    if (lo == INT64_MIN && hi == INT64_MAX && s->nsteps) {
        for (size_t i = 0; i < s->nsteps; i++) {
            uint32_t x = s->steps[i].start, y = s->steps[i].end, ge = s->steps[i].gend;
            if (*a == UINT32_MAX || t[x] < t[*a]) *a = x;
            if (*z == UINT32_MAX || t[y] > t[*z]) *z = y;
            /* the steps' GPU work is theirs too: where the GPU runs behind the host, the last step's kernels
             * end after its annotation, and the time until they end is the run's (an inference step that
             * launches everything, then syncs after the step) */
            if (ge != UINT32_MAX && t[ge] > t[*z]) *z = ge;
        }
        return 0;
    }
    for (uint32_t v = 0; v < g->nnode; v++) {
        if (t[v] < lo || t[v] > hi) continue;
        if (*a == UINT32_MAX || t[v] < t[*a]) *a = v;
        if (*z == UINT32_MAX || t[v] > t[*z]) *z = v;
    }
    return *a == UINT32_MAX ? -1 : 0;
}

hta_status hta_sim_answer(hta_ctx *ctx, const hta_sim *s, const hta_sim_opts *o, hta_result *out,
                          hta_cp_path *path, hta_error *err) {
    const hta_cp_graph *g = s->g;
    size_t nn = g->nnode ? g->nnode : 1, ne = g->nedge ? g->nedge : 1;
    int64_t *t0 = malloc(nn * sizeof *t0), *t1 = NULL, *w = NULL;
    hta_cp_path p0 = {0}, p1 = {0};
    hta_status st = HTA_OK;
    if (!t0) goto oom;
    HTA_TRY_GOTO(st, hta_sim_run(s, NULL, t0, err), done);
    uint32_t a, z;
    if (span_nodes(s, t0, o->lo, o->hi, &a, &z)) {
        st = hta_fail(err, HTA_ENODATA, "rank %d: the window holds no event of the critical path's graph",
                      (int)g->rank);
        goto done;
    }
    int explicit_span = o->lo != INT64_MIN || o->hi != INT64_MAX;
    HTA_TRY_GOTO(st, hta_sim_path(s, NULL, t0, z, t0[a], &p0, err), done);
    if (o->nrules) {
        /* the what-if first: the answer a user asked for */
        if (!(t1 = malloc(nn * sizeof *t1)) || !(w = malloc(ne * sizeof *w))) goto oom;
        size_t changed = 0;
        HTA_TRY_GOTO(st, hta_sim_weights(s, o->rules, o->nrules, w, &changed, err), done);
        HTA_TRY_GOTO(st, hta_sim_run(s, w, t1, err), done);
        uint32_t a1 = a, z1 = z;
        /* the steps' span: the steps may end in another order once changed */
        if (!explicit_span) span_nodes(s, t1, INT64_MIN, INT64_MAX, &a1, &z1);
        HTA_TRY_GOTO(st, hta_sim_path(s, w, t1, z1, t1[a1], &p1, err), done);
        HTA_TRY_GOTO(st, hta_cpath_whatif_table(t0[z] - t0[a], t1[z1] - t1[a1], changed, p1.n, out, err), done);
        HTA_TRY_GOTO(st, hta_sim_steps_whatif_table(s, t0, t1, t0[a], t0[z], out, err), done);
        cp_clip c1 = {t1, t1[a1]};
        HTA_TRY_GOTO(st, cp_summary_steps(g, &p1, &c1, o->data_load, o->ndata_load, &HTA_CP_WHATIF_SUMMARY_TABLE,
                                          out, err),
                     done);
        if (s->sync_calls && !s->sync_records)
            hta_result_note(out, "the trace has no CUDA sync records (cuda_sync): which GPU work each of its %zu "
                                 "host syncs waited for is inferred (every stream's last work launched before it)",
                            s->sync_calls);
        if (s->host_waits || s->gpu_waits)
            hta_result_note(out, "waits read from the timing (no call records them): %zu host stretch%s ended "
                                 "as the GPU's queue drained, %zu queued GPU operation%s started as another "
                                 "stream's work ended",
                            s->host_waits, s->host_waits == 1 ? "" : "es", s->gpu_waits, s->gpu_waits == 1 ? "" : "s");
        if (!explicit_span && s->nsteps < 2)
            hta_result_note(out, "%s: the saving is that of this window only; steps differ (data loading, syncs "
                                 "every N steps), so profile several",
                            s->nsteps ? "a single iteration" : "no ProfilerStep");
        if (o->trace_out) {
            HTA_TRY_GOTO(st, hta_sim_trace(ctx, s, t1, o->trace_out, err), done);
            hta_result_note(out, "simulated trace written to %s", o->trace_out);
        }
        /* the what-if's schedule and weights are done with */
        free(t1);
        free(w);
        hta_cpath_path_free(&p1);
        t1 = w = NULL;
    }
    cp_clip c0 = {t0, t0[a]};
    if (p0.n) p0.length = t0[z] - (t0[p0.node[0]] > t0[a] ? t0[p0.node[0]] : t0[a]);
    HTA_TRY_GOTO(st, cp_report_steps(g, &p0, &c0, o->data_load, o->ndata_load,
                                     o->breakdown ? o->top : HTA_CP_NO_BREAKDOWN, out, err), done);
    HTA_TRY_GOTO(st, hta_sim_steps_table(s, NULL, t0, t0[a], t0[z], o->data_load, o->ndata_load, out, err), done);
    if (path) {
        *path = p0;
        memset(&p0, 0, sizeof p0);
    }
    goto done;
oom:
    st = hta_oom(err);
done:
    hta_cpath_path_free(&p0);
    hta_cpath_path_free(&p1);
    free(t0);
    free(t1);
    free(w);
    return st;
}
