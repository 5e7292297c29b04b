/* Tables of the simulation graph: per-step critical paths and the what-if (hta/sim.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpath/sim_internal.h"

HTA_TABLE_DEFINE(HTA_SIM_STEPS);
HTA_TABLE_DEFINE(HTA_SIM_WHATIF_STEPS);

static double us(int64_t ns) { return (double)ns / 1000.0; }

/* The column of HTA_SIM_STEPS a path edge's time goes to. */
int sim_step_column(const char *b) {
    if (!strcmp(b, "cpu_bound")) return HTA_SIM_STEPS_CPU;
    if (!strcmp(b, "data_loading")) return HTA_SIM_STEPS_DATA;
    if (!strcmp(b, "gpu_compute_bound")) return HTA_SIM_STEPS_COMP;
    if (!strcmp(b, "gpu_communication_bound")) return HTA_SIM_STEPS_COMM;
    if (!strcmp(b, "rank_wait")) return HTA_SIM_STEPS_RWAIT;
    if (!strcmp(b, "gpu_kernel_launch_overhead") || !strcmp(b, "gpu_kernel_kernel_overhead"))
        return HTA_SIM_STEPS_LAUNCH;
    return HTA_SIM_STEPS_WAIT;
}

hta_status hta_sim_steps_table(const hta_sim *s, const int64_t *w, const int64_t *t,
                               const char *const *data_load, size_t ndata_load, hta_result *out,
                               hta_error *err) {
    const hta_cp_graph *g = s->g;
    hta_table *tb = hta_table_from_def(&HTA_SIM_STEPS_TABLE);
    if (!tb) return hta_oom(err);
    for (size_t i = 0; i < s->nsteps; i++) {
        const hta_sim_step *st = &s->steps[i];
        hta_cp_path p;
        hta_status rc = hta_sim_path(s, w, t, st->end, t[st->start], &p, err);
        if (rc) {
            hta_table_free(tb);
            return rc;
        }
        int64_t col[HTA_SIM_STEPS_WAIT + 1] = {0}; /* ns: exact in any order (the job's engine sums by piece) */
        int64_t from = t[st->start];
        for (size_t j = 0; j + 1 < p.n; j++) {
            const hta_cp_edge *e = &g->edge[p.edge[j]];
            int64_t a = t[p.node[j]] > from ? t[p.node[j]] : from, z = t[p.node[j + 1]];
            if (z > a) col[sim_step_column(hta_cpath_bound_by(g, e, data_load, ndata_load))] += z - a;
        }
        long r = hta_table_add_row(tb);
        if (r < 0) {
            hta_cpath_path_free(&p);
            hta_table_free(tb);
            return hta_oom(err);
        }
        hta_table_set_int(tb, (size_t)r, HTA_SIM_STEPS_RANK, st->rank);
        hta_table_set_int(tb, (size_t)r, HTA_SIM_STEPS_STEP, st->number);
        hta_table_set_float(tb, (size_t)r, HTA_SIM_STEPS_WALL, us(t[st->end] - t[st->start]));
        int64_t first = p.n ? t[p.node[0]] : t[st->end];
        hta_table_set_float(tb, (size_t)r, HTA_SIM_STEPS_PATH, us(t[st->end] - (first > from ? first : from)));
        for (int c = HTA_SIM_STEPS_CPU; c <= HTA_SIM_STEPS_WAIT; c++) hta_table_set_float(tb, (size_t)r, c, us(col[c]));
        hta_cpath_path_free(&p);
    }
    if (hta_result_add(out, tb)) return hta_oom(err);
    return HTA_OK;
}

/* The span the totals are measured over: the steps' when there are some, else the whole run. */
static void span(const hta_sim *s, const int64_t *t, int64_t *a, int64_t *z) {
    if (s->nsteps) {
        *a = t[s->steps[0].start];
        *z = t[s->steps[0].end];
        for (size_t i = 0; i < s->nsteps; i++) {
            if (t[s->steps[i].start] < *a) *a = t[s->steps[i].start];
            if (t[s->steps[i].end] > *z) *z = t[s->steps[i].end];
        }
        return;
    }
    *a = INT64_MAX;
    *z = INT64_MIN;
    for (size_t v = 0; v < s->g->nnode; v++) {
        if (t[v] < *a) *a = t[v];
        if (t[v] > *z) *z = t[v];
    }
    if (*a > *z) *a = *z = 0;
}

hta_status hta_sim_whatif(hta_ctx *ctx, const hta_sim *s, const hta_cpath_rule *rules, size_t nrules,
                          const char *const *data_load, size_t ndata_load, const char *trace_out,
                          hta_result *out, hta_error *err) {
    const hta_cp_graph *g = s->g;
    size_t nn = g->nnode ? g->nnode : 1;
    int64_t *w = malloc((g->nedge ? g->nedge : 1) * sizeof *w);
    int64_t *t0 = malloc(nn * sizeof *t0), *t1 = malloc(nn * sizeof *t1);
    hta_cp_path p = {0};
    hta_status st = HTA_OK;
    hta_table *ts = NULL;
    if (!w || !t0 || !t1) {
        st = hta_oom(err);
        goto done;
    }
    size_t changed = 0;
    HTA_TRY_GOTO(st, hta_sim_weights(s, rules, nrules, w, &changed, err), done);
    HTA_TRY_GOTO(st, hta_sim_run(s, NULL, t0, err), done);
    HTA_TRY_GOTO(st, hta_sim_run(s, w, t1, err), done);
    int64_t a0, z0, a1, z1;
    span(s, t0, &a0, &z0);
    span(s, t1, &a1, &z1);
    /* the simulated path through the same span */
    uint32_t last = s->nsteps ? s->steps[0].end : hta_sim_last_node(s, t1);
    for (size_t i = 0; i < s->nsteps; i++)
        if (t1[s->steps[i].end] > t1[last]) last = s->steps[i].end;
    HTA_TRY_GOTO(st, hta_sim_path(s, w, t1, last, a1, &p, err), done);
    HTA_TRY_GOTO(st, hta_cpath_whatif_table(z0 - a0, z1 - a1, changed, p.n, out, err), done);
    ts = hta_table_from_def(&HTA_SIM_WHATIF_STEPS_TABLE);
    if (!ts) goto oom;
    for (size_t i = 0; i < s->nsteps; i++) {
        const hta_sim_step *x = &s->steps[i];
        int64_t b = t0[x->end] - t0[x->start], m = t1[x->end] - t1[x->start];
        long r = hta_table_add_row(ts);
        if (r < 0) goto oom;
        hta_table_set_int(ts, (size_t)r, HTA_SIM_WS_RANK, x->rank);
        hta_table_set_int(ts, (size_t)r, HTA_SIM_WS_STEP, x->number);
        hta_table_set_float(ts, (size_t)r, HTA_SIM_WS_BASE, us(b));
        hta_table_set_float(ts, (size_t)r, HTA_SIM_WS_SIM, us(m));
        hta_table_set_float(ts, (size_t)r, HTA_SIM_WS_SAVING, us(b - m));
        hta_table_set_float(ts, (size_t)r, HTA_SIM_WS_PCT, b ? (double)(b - m) / (double)b * 100.0 : 0.0);
    }
    if (hta_result_add(out, ts)) {
        ts = NULL;
        goto oom;
    }
    ts = NULL;
    HTA_TRY_GOTO(st, hta_cpath_summary(g, &p, w, data_load, ndata_load, &HTA_CP_WHATIF_SUMMARY_TABLE, out, err),
                 done);
    /* HTA's caveats, where they limit this result */
    if (s->sync_calls && !s->sync_records)
        hta_result_note(out, "the trace has no CUDA sync records (cuda_sync): which GPU work each of its %zu host "
                             "syncs waited for is inferred (every stream's last work launched before it)",
                        s->sync_calls);
    if (s->nsteps < 2)
        hta_result_note(out, "%s: the saving is that of this window only; steps differ (data loading, syncs "
                             "every N steps), so profile several", s->nsteps ? "a single iteration" : "no ProfilerStep");
    if (trace_out) {
        HTA_TRY_GOTO(st, hta_sim_trace(ctx, s, t1, trace_out, err), done);
        hta_result_note(out, "simulated trace written to %s", trace_out);
    }
    goto done;
oom:
    st = hta_oom(err);
done:
    hta_table_free(ts);
    hta_cpath_path_free(&p);
    free(w);
    free(t0);
    free(t1);
    return st;
}
