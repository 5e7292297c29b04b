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

hta_status hta_sim_steps_table(const hta_sim *s, const int64_t *w, const int64_t *t, int64_t lo, int64_t hi,
                               const char *const *data_load, size_t ndata_load, hta_result *out,
                               hta_error *err) {
    const hta_cp_graph *g = s->g;
    hta_table *tb = hta_table_from_def(&HTA_SIM_STEPS_TABLE);
    hta_cp_bb *bm = hta_cpath_bb_new(g, data_load, ndata_load);
    if (!tb || !bm) {
        hta_table_free(tb);
        hta_cpath_bb_free(bm);
        return hta_oom(err);
    }
    for (size_t i = 0; i < s->nsteps; i++) {
        const hta_sim_step *st = &s->steps[i];
        if (t[st->start] < lo || t[st->end] > hi) continue;
        hta_cp_path p;
        hta_status rc = hta_sim_path(s, w, t, st->end, t[st->start], &p, err);
        if (rc) {
            hta_table_free(tb);
            hta_cpath_bb_free(bm);
            return rc;
        }
        int64_t col[HTA_SIM_STEPS_WAIT + 1] = {0}; /* ns: exact in any order (the job's engine sums by piece) */
        int64_t from = t[st->start];
        const char *lb = NULL; /* the last edge's class and its column: a path's edges come in runs of one class */
        int lc = 0;
        for (size_t j = 0; j + 1 < p.n; j++) {
            const hta_cp_edge *e = &g->edge[p.edge[j]];
            int64_t a = t[p.node[j]] > from ? t[p.node[j]] : from, z = t[p.node[j + 1]];
            if (z <= a) continue;
            const char *b = hta_cpath_bb(bm, e);
            if (b != lb) lb = b, lc = sim_step_column(b);
            col[lc] += z - a;
        }
        long r = hta_table_add_row(tb);
        if (r < 0) {
            hta_cpath_path_free(&p);
            hta_table_free(tb);
            hta_cpath_bb_free(bm);
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
    hta_cpath_bb_free(bm);
    if (hta_result_add(out, tb)) return hta_oom(err);
    return HTA_OK;
}

hta_status hta_sim_steps_whatif_table(const hta_sim *s, const int64_t *t0, const int64_t *t1, int64_t lo,
                                      int64_t hi, hta_result *out, hta_error *err) {
    hta_table *ts = hta_table_from_def(&HTA_SIM_WHATIF_STEPS_TABLE);
    if (!ts) return hta_oom(err);
    for (size_t i = 0; i < s->nsteps; i++) {
        const hta_sim_step *x = &s->steps[i];
        if (t0[x->start] < lo || t0[x->end] > hi) continue;
        int64_t b = t0[x->end] - t0[x->start], m = t1[x->end] - t1[x->start];
        long r = hta_table_add_row(ts);
        if (r < 0) {
            hta_table_free(ts);
            return hta_oom(err);
        }
        hta_table_set_int(ts, (size_t)r, HTA_SIM_WS_RANK, x->rank);
        hta_table_set_int(ts, (size_t)r, HTA_SIM_WS_STEP, x->number);
        hta_table_set_float(ts, (size_t)r, HTA_SIM_WS_BASE, us(b));
        hta_table_set_float(ts, (size_t)r, HTA_SIM_WS_SIM, us(m));
        hta_table_set_float(ts, (size_t)r, HTA_SIM_WS_SAVING, us(b - m));
        hta_table_set_float(ts, (size_t)r, HTA_SIM_WS_PCT, b ? (double)(b - m) / (double)b * 100.0 : 0.0);
    }
    if (hta_result_add(out, ts)) return hta_oom(err);
    return HTA_OK;
}
