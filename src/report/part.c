/* The report rank by rank (docs/scaling.md, "report"): hta_report_part gives what the report reads of
 * the ranks of a context, and nothing it does not: per rank the analyses' rows (temporal, idle, overlap,
 * launch_summary), the parts of the analyses summed over ranks (the kernel breakdown, the straggler
 * summary, hta_cpu_ops where a rank has no GPU work), its critical path's summary and finding, and its
 * profile (rp_rank: steps, collectives, series) as tables.  Tables travel between threads and processes
 * (hta-mpi) as any result does; rp_part_unpack turns the profiles back into rp_rank.  The whole load's
 * report is its own part reduced, so both give the same bytes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hta/breakdown.h"
#include "hta/cpuops.h"
#include "hta/comms.h"
#include "hta/efficiency.h"
#include "hta/launch.h"
#include "hta/sim.h"
#include "hta/util.h"
#include "core/bigbuf.h"
#include "report/internal.h"

/* The heap's free room given back between the part's phases where it is at least this much: the holes the
 * analyses' and the profile's arrays leave (30 MB on a 250 MB rank) are not filled by the next phase, which
 * allocates in other sizes, and would sit under the graph's build, the report's peak (119 against 108 MB). */
#define RP_TRIM_MIN ((size_t)4 << 20)

HTA_TABLE_DEFINE(RP_PART_RANKS);
HTA_TABLE_DEFINE(RP_PART_STEPS);
HTA_TABLE_DEFINE(RP_PART_COLLS);
HTA_TABLE_DEFINE(RP_PART_SERIES);
HTA_TABLE_DEFINE(RP_PART_NOTES);
HTA_TABLE_DEFINE(RP_PART_BLOCK);
HTA_TABLE_DEFINE(RP_PART_KNAMES);
HTA_TABLE_DEFINE(RP_PART_KSUMS);

static double num(const hta_table *t, size_t row, int col) { return hta_table_get_float(t, row, col); }
static const char *txt(const hta_table *t, size_t row, int col) { return hta_table_get_str(t, row, col); }

int rp_delay_bin(double us) { return us < 10 ? 0 : us < 100 ? 1 : us < 1e3 ? 2 : us < 1e4 ? 3 : us < 1e5 ? 4 : 5; }

/* Moves the table of declaration d from src to dst. */
static hta_status move(hta_result *dst, hta_result *src, const hta_table_def *d, hta_error *err) {
    hta_table *t;
    HTA_TRY(hta_result_take(src, d, &t, err));
    return hta_result_add(dst, t) ? hta_oom(err) : HTA_OK;
}

/* Moves every table of src to dst. */
static hta_status move_all(hta_result *dst, hta_result *src, hta_error *err) {
    while (src->n) {
        hta_table *t = src->tables[0];
        memmove(src->tables, src->tables + 1, --src->n * sizeof *src->tables);
        if (hta_result_add(dst, t)) return hta_oom(err);
    }
    return HTA_OK;
}

/* ---- the critical path of each rank ---- */

/* Rank k's critical path, the one engine's default answer (hta_sim_answer: the simulation graph's path over
 * the steps, the path `hta critical-path` prints; HTA's graph with --hta-compat): its summary rows into cp,
 * its time per step and bound_by class into p->cp_ns, its largest class into p->cp_bound, its finding (as a
 * rank of few would get it) into f; a rank the engine cannot cover gets a note instead. */
static void free_sim(void *s) { hta_sim_free(s); }

/* The simulation is the trace: replaying the unmodified graph gives each step its duration in the trace.
 * Where a step replays more than 1% apart (a dependency the graph misses, events the trace lacks), a note
 * says so, with both durations.  Only the CPU's steps (the window the report measures on them) and the
 * simulation graph's answer (ans: HTA's graph is not a schedule). */
static hta_status replay_check(const hta_result *ans, const rp_rank *p, int sim, hta_table *notes, hta_error *err) {
    const hta_table *stt;
    if (!sim || p->window != RP_WIN_STEPS || hta_result_table(ans, &HTA_SIM_STEPS_TABLE, &stt, err)) return HTA_OK;
    for (size_t i = 0; i < stt->nrows; i++) {
        int64_t num_ = hta_table_get_int(stt, i, HTA_SIM_STEPS_STEP);
        double wall = hta_table_get_float(stt, i, HTA_SIM_STEPS_WALL);
        for (size_t q = 0; q < p->nsteps; q++) {
            if (p->step_num[q] != num_) continue;
            double meas = (double)(p->step_end[q] - p->step_ts[q]) / 1000.0;
            if (meas <= 0 || fabs(wall - meas) <= 0.01 * meas) break;
            char msg[320];
            snprintf(msg, sizeof msg,
                     "rank %d: the simulation replays ProfilerStep#%lld in %.1f us, the trace has %.1f us (%.1f%% "
                     "apart): the trace lacks what the step's time depends on, and savings on it are approximate",
                     (int)p->rank, (long long)num_, wall, meas, 100.0 * fabs(wall - meas) / meas);
            long row = hta_table_add_row(notes);
            if (row < 0 || hta_table_set_str(notes, row, RP_PART_NOTES_NOTE, msg)) return hta_oom(err);
            hta_table_set_int(notes, row, RP_PART_NOTES_RANK, p->rank);
            break;
        }
    }
    return HTA_OK;
}

static hta_status rank_path(hta_ctx *ctx, size_t k, int covered, int release, rp_rank *p, hta_arena *a,
                            hta_table *cp, findings *f, hta_table *notes, hta_error *err) {
    int32_t rank = p->rank;
    hta_cpath_opts co;
    hta_cpath_opts_default(&co);
    hta_cp_graph *hg = NULL;
    hta_sim *sim = NULL;
    const hta_cp_graph *g = NULL;
    hta_cp_bb *bm = NULL;
    hta_cp_path path = {0};
    hta_result part;
    hta_result_init(&part);
    /* a rank's own error, so that a failure the report goes past leaves err untouched */
    hta_error e2 = {0};
    const hta_table *sm;
    hta_status st;
    if (ctx->hta_compat) {
        st = hta_cpath_build(ctx, k, &co, &hg, &e2);
        if (!st) st = hta_cpath_longest(hg, NULL, &path, &e2);
        if (!st) st = hta_cpath_report(hg, &path, NULL, NULL, 0, HTA_CP_NO_BREAKDOWN, &part, &e2);
        g = hg;
    } else {
        /* the path through the report's window (its steps, HTA's last step dropped; the span without steps),
         * so that the path and the step the page prints are one stretch of time: the steps' default span
         * holds the last step too (the README's sample: a 1.23 s path beside a 607.9 ms step) */
        hta_sim_opts so = {NULL, 0, NULL, 0, INT64_MIN, INT64_MAX, 0, 0, NULL};
        if (p->nsteps) so.lo = p->step_ts[0], so.hi = p->step_end[p->nsteps - 1];
        st = release ? hta_sim_build_release(ctx, k, &sim, &e2) : hta_sim_build(ctx, k, &sim, &e2);
        if (!st) st = hta_sim_answer(ctx, sim, &so, &part, &path, &e2);
        if (sim) g = hta_sim_graph(sim);
    }
    /* Out of memory stops the report; any other failure means HTA's graph cannot cover this rank
     * (docs/critical-path.md), which is worth a note, not the whole report. */
    if (st == HTA_ENOMEM) {
        *err = e2;
    } else if (st) {
        long row = hta_table_add_row(notes);
        char msg[sizeof e2.msg + 64];
        snprintf(msg, sizeof msg, "rank %d: no critical path: %s", rank, e2.msg);
        if (row < 0 || hta_table_set_str(notes, row, RP_PART_NOTES_NOTE, msg)) st = hta_oom(err);
        else hta_table_set_int(notes, row, RP_PART_NOTES_RANK, rank), st = HTA_OK;
    } else if (!(st = replay_check(&part, p, sim != NULL, notes, err)) &&
               !(st = hta_result_table(&part, &HTA_CP_SUMMARY_TABLE, &sm, err)) &&
               !(bm = hta_cpath_bb_new(g, NULL, 0))) {
        st = hta_oom(err);
    } else if (!st) {
        /* the path's time per step and bound_by class: each edge's stretch [its start, the next node's time)
         * cut at the steps' edges, so that a step's path is never longer than the step */
        const char *lbb = NULL; /* the last edge's class and its index: a path's edges come in runs of one class */
        int lc = RP_NBOUND;
        for (size_t i = 0; i + 1 < path.n; i++) {
            const hta_cp_edge *e = &g->edge[path.edge[i]];
            const char *bb = hta_cpath_bb(bm, e);
            if (!bb) continue;
            if (bb != lbb)
                for (lbb = bb, lc = 0; lc < RP_NBOUND && strcmp(bb, rp_bound_names[lc]); lc++) {}
            int c = lc;
            if (c == RP_NBOUND) continue;
            int64_t e0 = hta_cp_node_ts(g, path.node[i]), z = hta_cp_node_ts(g, path.node[i + 1]);
            long q0 = rp_step_of(p, e0); /* the step holding e0; a step's edges are found from there on */
            if (q0 < 0) q0 = p->nsteps && e0 < p->step_ts[0] ? 0 : (long)p->nsteps;
            for (size_t q = (size_t)q0; q < p->nsteps && p->step_ts[q] < z; q++) {
                int64_t x = e0 > p->step_ts[q] ? e0 : p->step_ts[q], y = z < p->step_end[q] ? z : p->step_end[q];
                if (y > x) p->cp_ns[q * RP_NBOUND + (size_t)c] += y - x;
            }
        }
        /* the table and the finding: the path inside the window's steps (cp_ns), so that the path of a step is
         * never longer than the step and the page's path and step are one stretch of time; HTA's graph
         * (--hta-compat) gives no time between operators any weight, and keeps HTA's summary of its path */
        double dur[RP_NBOUND + 16], pct[RP_NBOUND + 16];
        const char *cls[RP_NBOUND + 16];
        size_t ncls = 0;
        int64_t total = 0;
        if (ctx->hta_compat) {
            for (size_t i = 0; i < sm->nrows && ncls < RP_NBOUND + 16; i++) {
                const char *bb = txt(sm, i, HTA_CP_SUMMARY_BOUND_BY);
                if (!bb || !*bb) continue; /* dependency and sync edges, which weigh 0: no bound */
                cls[ncls] = bb, dur[ncls] = num(sm, i, HTA_CP_SUMMARY_DURATION), pct[ncls++] = num(sm, i, HTA_CP_SUMMARY_PCTG);
            }
        } else {
            int64_t sum[RP_NBOUND] = {0};
            for (size_t q = 0; q < p->nsteps; q++)
                for (int c = 0; c < RP_NBOUND; c++) sum[c] += p->cp_ns[q * RP_NBOUND + (size_t)c], total += p->cp_ns[q * RP_NBOUND + (size_t)c];
            /* by name, as `hta critical-path` orders its summary */
            static const int order[RP_NBOUND] = {0, 1, 3, 2, 4, 5, 6};
            for (int o = 0; o < RP_NBOUND; o++) {
                int c = order[o];
                if (sum[c] <= 0) continue;
                cls[ncls] = rp_bound_names[c], dur[ncls] = (double)sum[c] / 1e3;
                pct[ncls++] = (double)sum[c] / (double)total * 100.0; /* as the summary computes it */
            }
        }
        long best = -1;
        for (size_t i = 0; i < ncls && !st; i++) {
            long row = hta_table_add_row(cp);
            if (row < 0 || hta_table_set_str(cp, row, HTA_REPORT_CPATH_BOUND_BY, cls[i])) {
                st = hta_oom(err);
                break;
            }
            hta_table_set_int(cp, row, HTA_REPORT_CPATH_RANK, rank);
            hta_table_set_float(cp, row, HTA_REPORT_CPATH_DURATION, dur[i]);
            hta_table_set_float(cp, row, HTA_REPORT_CPATH_PCTG, pct[i]);
            if (best < 0 || dur[i] > dur[best]) best = (long)i;
        }
        if (!st && best >= 0) {
            p->cp_bound = hta_arena_strdup(a, cls[best]);
            if (!p->cp_bound) st = hta_oom(err);
            char todo[256];
            snprintf(todo, sizeof todo,
                     "`hta critical-path --ranks %d --what-if RULE` estimates what an optimisation would save "
                     "(e.g. type:comm=x0.5, edge:launch=0, cpu=x0.7)", rank);
            int64_t len = ctx->hta_compat ? path.length : total;
            size_t ns_ = p->nsteps ? p->nsteps : 1;
            int steps = !ctx->hta_compat && p->step_num[0] >= 0 && p->window != RP_WIN_SPAN;
            /* a rank without GPU work: its bound_by is all cpu_bound; which calls make up the path says more */
            if (covered) rp_cpu_path_finding(f, g, &path, len, steps ? ns_ : 0, rank);
            else {
                char b1[32], b2[32], what[200];
                int64_t win = 0;
                for (size_t q = 0; q < p->nsteps; q++) win += p->step_end[q] - p->step_ts[q];
                /* the window's length beside the path's: one stretch of time, never shorter than the path */
                if (ctx->hta_compat)
                    snprintf(what, sizeof what, "critical path of the whole trace (HTA's graph) %s",
                             rp_dur(len, b1, sizeof b1));
                else if (!steps)
                    snprintf(what, sizeof what, "critical path of the window (the whole trace span, %s): %s",
                             rp_dur(win, b2, sizeof b2), rp_dur(len, b1, sizeof b1));
                else
                    snprintf(what, sizeof what, "critical path of the window (%zu step%s%s, %s): %s", ns_,
                             ns_ == 1 ? "" : "s", p->window == RP_WIN_GPU ? " on the GPU timeline" : "",
                             rp_dur(win, b2, sizeof b2), rp_dur(len, b1, sizeof b1));
                rp_add_finding(f, rank, "critical path", todo, "%s, %.1f%% %s", what, pct[best], cls[best]);
            }
        }
    }
    hta_result_free(&part);
    hta_cpath_bb_free(bm);
    hta_cpath_path_free(&path);
    hta_cpath_free(hg);
    /* a graph built from released rows stays with the context, whatever became of the answer: the savings'
     * job takes it */
    if (release && sim) {
        hta_status s2 = hta_ctx_leave(ctx, k, sim, free_sim, err);
        if (!st) st = s2;
    } else {
        hta_sim_free(sim);
    }
    return st;
}

/* ---- a profile as rows ---- */

static hta_status pack(const rp_rank *p, hta_table *rk, hta_table *steps, hta_table *colls, hta_table *series,
                       hta_table *block, hta_error *err) {
    long row = hta_table_add_row(rk);
    if (row < 0 || hta_table_set_str(rk, row, RP_PART_RANKS_PATH, p->path)) return hta_oom(err);
    if (p->cp_bound && hta_table_set_str(rk, row, RP_PART_RANKS_CP_BOUND, p->cp_bound)) return hta_oom(err);
    const int64_t ints[] = {p->rank,          p->tracer,        p->has_gpu,      p->t0,
                            p->t1,            p->step_pid,      p->step_tid,     (int64_t)p->gaps_long,
                            (int64_t)p->gaps_short, p->gaps_long_ns, p->gaps_short_ns, p->gap_median_ns,
                            p->gap_max_ns,    p->cpu_steps_ns};
    static const int icol[] = {RP_PART_RANKS_RANK,       RP_PART_RANKS_TRACER,      RP_PART_RANKS_HAS_GPU,
                               RP_PART_RANKS_T0,         RP_PART_RANKS_T1,          RP_PART_RANKS_STEP_PID,
                               RP_PART_RANKS_STEP_TID,   RP_PART_RANKS_GAPS_LONG,   RP_PART_RANKS_GAPS_SHORT,
                               RP_PART_RANKS_GAPS_LONG_NS, RP_PART_RANKS_GAPS_SHORT_NS, RP_PART_RANKS_GAP_MEDIAN,
                               RP_PART_RANKS_GAP_MAX,    RP_PART_RANKS_CPU_STEPS};
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++) hta_table_set_int(rk, row, icol[i], ints[i]);
    hta_table_set_float(rk, row, RP_PART_RANKS_QUEUE_MEDIAN, p->queue_median);
    const int64_t more[] = {p->window,   p->lag_ns,   p->cpu_step_ns,   p->ncapture,
                            p->nklaunch, p->nkernels, p->nklaunch_none, p->prep_ns};
    if (p->prep_op && hta_table_set_str(rk, row, RP_PART_RANKS_PREP_OP, p->prep_op)) return hta_oom(err);
    for (int c = 0; c < (int)(sizeof more / sizeof *more); c++) hta_table_set_int(rk, row, RP_PART_RANKS_WINDOW + c, more[c]);
    hta_table_set_int(rk, row, RP_PART_RANKS_FILE_EVENTS, p->file_events);
    for (size_t i = 0; i < p->nblock; i++) {
        const rp_block *b = &p->block[i];
        long r = hta_table_add_row(block);
        if (r < 0 || hta_table_set_str(block, r, RP_PART_BLOCK_NAME, b->name) ||
            (b->op && hta_table_set_str(block, r, RP_PART_BLOCK_OP, b->op)))
            return hta_oom(err);
        hta_table_set_int(block, r, RP_PART_BLOCK_RANK, p->rank);
        hta_table_set_int(block, r, RP_PART_BLOCK_COUNT, b->count);
        hta_table_set_int(block, r, RP_PART_BLOCK_DUR, b->dur_ns);
        hta_table_set_int(block, r, RP_PART_BLOCK_IDLE, b->idle_ns);
    }
    for (int b = 0; b < RP_DELAY_BINS; b++) hta_table_set_int(rk, row, RP_PART_RANKS_DELAY0 + b, p->delays[b]);
    for (size_t s = 0; s < p->nsteps; s++) {
        long r = hta_table_add_row(steps);
        if (r < 0) return hta_oom(err);
        const int64_t v[] = {p->rank,       p->step_num[s],  p->step_ts[s],     p->step_end[s],
                             p->dl_ns[s],   p->sync_ns[s],   p->mem_ns[s],      p->comm_ns[s],
                             p->comp_ns[s], p->gpu_busy_ns[s], (int64_t)p->nsync[s], (int64_t)p->nlaunch[s]};
        for (int c = 0; c < (int)(sizeof v / sizeof *v); c++) hta_table_set_int(steps, r, RP_PART_STEPS_RANK + c, v[c]);
        for (int c = 0; c < RP_NBOUND; c++)
            hta_table_set_int(steps, r, RP_PART_STEPS_CP0 + c, p->cp_ns[s * RP_NBOUND + (size_t)c]);
        const int64_t w[] = {p->idle_block_ns[s], p->idle_wait_ns[s], p->idle_dl_ns[s],  p->idle_host_ns[s],
                             p->idle_bwait_ns[s], p->comm_excl_ns[s], p->comp_busy_ns[s], p->mem_excl_ns[s]};
        for (int c = 0; c < (int)(sizeof w / sizeof *w); c++) hta_table_set_int(steps, r, RP_PART_STEPS_IDLE_BLOCK + c, w[c]);
    }
    for (size_t i = 0; i < p->ncoll; i++) {
        long r = hta_table_add_row(colls);
        if (r < 0) return hta_oom(err);
        hta_table_set_int(colls, r, RP_PART_COLLS_RANK, p->rank);
        hta_table_set_int(colls, r, RP_PART_COLLS_STEP, p->coll_step[i]);
        hta_table_set_int(colls, r, RP_PART_COLLS_DUR, p->coll_dur[i]);
    }
    static const rp_series none; /* a profile that stopped before its series: 0 in every bin */
    const rp_series *ser = p->ser ? p->ser : &none;
    for (int b = 0; series && b < RP_BINS; b++) {
        long r = hta_table_add_row(series);
        if (r < 0) return hta_oom(err);
        hta_table_set_int(series, r, RP_PART_SERIES_RANK, p->rank);
        hta_table_set_float(series, r, RP_PART_SERIES_CPU, ser->cpu_busy[b]);
        hta_table_set_float(series, r, RP_PART_SERIES_GPU, ser->gpu_busy[b]);
        hta_table_set_float(series, r, RP_PART_SERIES_QUEUE, ser->queue[b]);
        hta_table_set_float(series, r, RP_PART_SERIES_MEMBW, ser->membw[b]);
    }
    return HTA_OK;
}

/* ---- the part ---- */

static hta_status part_run(hta_ctx *ctx, const hta_report_opts *o, hta_result *out, hta_error *err) {
    size_t ns = hta_ctx_nranks(ctx);
    hta_result r;
    hta_result_init(&r);
    hta_arena pa = HTA_ARENA_INIT;
    rp_rank *pr = HTA_ANEW(&pa, rp_rank, ns);
    unsigned char *on = HTA_ANEW(&pa, unsigned char, ns);
    hta_table *rk = hta_table_from_def(&RP_PART_RANKS_TABLE), *steps = hta_table_from_def(&RP_PART_STEPS_TABLE),
              *colls = hta_table_from_def(&RP_PART_COLLS_TABLE), *series = hta_table_from_def(&RP_PART_SERIES_TABLE),
              *notes = hta_table_from_def(&RP_PART_NOTES_TABLE), *cp = hta_table_from_def(&HTA_REPORT_CPATH_TABLE),
              *block = hta_table_from_def(&RP_PART_BLOCK_TABLE);
    findings f = {hta_table_from_def(&RP_PART_FINDINGS_TABLE), 1, 0};
    hta_status st = HTA_OK;
    if (!pr || !on || !rk || !steps || !colls || !series || !notes || !cp || !f.t || !block) {
        st = hta_oom(err);
        goto done;
    }
    memset(pr, 0, (ns ? ns : 1) * sizeof *pr);
    /* Every analysis with its library defaults, so that every figure of the report is one the analysis'
     * own command prints (tests/report/test_report.py checks that they agree).  temporal's notes are the
     * part's notes: the report passes them on. */
    HTA_TRY_GOTO(st, hta_temporal_breakdown(ctx, NULL, &r, err), done);
    HTA_TRY_GOTO(st, hta_result_copy_notes(out, &r, err), done);
    const hta_table *tt;
    HTA_TRY_GOTO(st, hta_result_table(&r, &HTA_TEMPORAL_TABLE, &tt, err), done);
    /* the ranks the CPU part covers: no GPU span (temporal's), or a libhtatrace file */
    for (size_t k = 0; k < ns; k++) {
        const hta_rank *hr = hta_ctx_rank(ctx, k);
        double span = NAN;
        for (size_t i = 0; i < tt->nrows; i++)
            if (num(tt, i, HTA_TEMPORAL_RANK) == hr->rank)
                span = num(tt, i, HTA_TEMPORAL_IDLE_US) + num(tt, i, HTA_TEMPORAL_COMPUTE_US) +
                       num(tt, i, HTA_TEMPORAL_NON_COMPUTE_US);
        on[k] = (unsigned char)rp_covered(hta_rank_is_tracer(hr), span);
    }
    HTA_TRY_GOTO(st, move(out, &r, &HTA_TEMPORAL_TABLE, err), done);
    hta_result_free(&r);
    HTA_TRY_GOTO(st, hta_idle_breakdown(ctx, NULL, &r, err), done);
    HTA_TRY_GOTO(st, move(out, &r, &HTA_IDLE_TABLE, err), done);
    hta_result_free(&r);
    hta_kernel_opts ko;
    rp_kernel_opts(&ko);
    HTA_TRY_GOTO(st, hta_kernel_breakdown_part(ctx, &ko, &r, err), done);
    HTA_TRY_GOTO(st, move_all(out, &r, err), done);
    hta_result_free(&r);
    HTA_TRY_GOTO(st, hta_efficiency_part(ctx, NULL, &r, err), done); /* efficiency.c reduces it */
    HTA_TRY_GOTO(st, move_all(out, &r, err), done);
    hta_result_free(&r);
    HTA_TRY_GOTO(st, hta_comms_part(ctx, NULL, &r, err), done); /* comms.c reduces it */
    HTA_TRY_GOTO(st, move_all(out, &r, err), done);
    hta_result_free(&r);
    HTA_TRY_GOTO(st, hta_overlap(ctx, NULL, &r, err), done);
    HTA_TRY_GOTO(st, move(out, &r, &HTA_OVERLAP_TABLE, err), done);
    hta_result_free(&r);
    /* launches: the summary row of each rank, and each rank's launch delays binned for the page */
    HTA_TRY_GOTO(st, hta_launch_stats(ctx, NULL, &r, err), done);
    HTA_TRY_GOTO(st, move(out, &r, &HTA_LAUNCH_SUMMARY_TABLE, err), done);
    const hta_table *ls;
    HTA_TRY_GOTO(st, hta_result_table(&r, &HTA_LAUNCH_STATS_TABLE, &ls, err), done);
    for (size_t i = 0; i < ls->nrows; i++) {
        double d = num(ls, i, HTA_LAUNCH_STATS_DELAY);
        long k = hta_ctx_find_rank(ctx, (int32_t)hta_table_get_int(ls, i, HTA_LAUNCH_STATS_RANK));
        if (!isnan(d) && k >= 0) pr[k].delays[rp_delay_bin(d)]++;
    }
    hta_result_free(&r);
    HTA_TRY_GOTO(st, hta_straggler_summary(ctx, &r, err), done);
    HTA_TRY_GOTO(st, move_all(out, &r, err), done);
    hta_result_free(&r);
    size_t n_on = 0;
    for (size_t k = 0; k < ns; k++) n_on += on[k];
    if (n_on) {
        hta_cpu_ops_opts co;
        rp_cpu_opts(&co);
        HTA_TRY_GOTO(st, hta_cpu_ops_part(ctx, &co, &r, err), done);
        HTA_TRY_GOTO(st, move_all(out, &r, err), done);
        hta_result_free(&r);
    }
    /* what the diagnosis and the page read of each rank, while the views are still built; the analyses' spare
     * scratch goes first: the profile takes room of its own, in other sizes */
    hta_arena_trim(&ctx->scratch);
    hta_heap_trim(RP_TRIM_MIN);
    for (size_t k = 0; k < ns; k++) {
        int64_t d[RP_DELAY_BINS];
        memcpy(d, pr[k].delays, sizeof d);
        HTA_TRY_GOTO(st, rp_profile_build(ctx, k, &pa, &pr[k], err), done);
        memcpy(pr[k].delays, d, sizeof d);
        pr[k].path = hta_ctx_rank(ctx, k)->path;
        pr[k].tracer = hta_rank_is_tracer(hta_ctx_rank(ctx, k));
        pr[k].file_events = (int64_t)hta_ctx_rank(ctx, k)->n_events;
    }
    /* the critical path builds one rank's graph at a time and needs memory of its own: give back the
     * views the analyses shared, their spare scratch and the holes they left in the heap first (the graph's
     * build allocates in other sizes: it would not fill them).  Where the context serves nothing after the
     * part (o->release), each rank's rows go as its graph is built, and the graph stays for the savings. */
    hta_ctx_keep_views(ctx, 0);
    hta_arena_trim(&ctx->scratch);
    hta_heap_trim(RP_TRIM_MIN);
    for (size_t k = 0; o->critical_path && k < ns; k++)
        HTA_TRY_GOTO(st, rank_path(ctx, k, on[k], o->release && !ctx->hta_compat, &pr[k], &pa, cp, &f, notes, err),
                     done);
    if (!f.ok) {
        st = hta_oom(err);
        goto done;
    }
    /* the series only for the page: 240 rows a rank that nothing else reads */
    if (!o->html) hta_table_free(series), series = NULL;
    for (size_t k = 0; k < ns; k++) HTA_TRY_GOTO(st, pack(&pr[k], rk, steps, colls, series, block, err), done);
    hta_table *mine[] = {rk, steps, colls, notes, f.t, cp, series, block};
    int keep[] = {1, 1, 1, o->critical_path, o->critical_path, o->critical_path, series != NULL, 1};
    rk = steps = colls = series = notes = f.t = cp = block = NULL;
    for (size_t i = 0; i < sizeof mine / sizeof *mine; i++) {
        if (!keep[i] || st) hta_table_free(mine[i]);
        else if (hta_result_add(out, mine[i])) st = hta_oom(err);
    }
done:
    hta_result_free(&r);
    hta_table_free(rk), hta_table_free(steps), hta_table_free(colls), hta_table_free(series);
    hta_table_free(notes), hta_table_free(cp), hta_table_free(f.t), hta_table_free(block);
    hta_arena_free(&pa);
    return st;
}

hta_status hta_report_part(hta_ctx *ctx, const hta_report_opts *o, hta_result *out, hta_error *err) {
    hta_report_opts dflt_;
    if (!o) hta_report_opts_default(&dflt_), o = &dflt_;
    /* every analysis of the report reads the same views: build each once */
    int kept = hta_ctx_keep_views(ctx, 1);
    hta_status st = part_run(ctx, o, out, err);
    hta_ctx_keep_views(ctx, kept);
    /* a part is kept until every rank's is made: no room beyond its rows (tables of one row or a few reserve
     * 16, most of a small part's bytes) */
    for (size_t i = 0; !st && i < out->n; i++) hta_table_fit(out->tables[i]);
    return st;
}

/* ---- the parts folded as they come ---- */

/* part's all_kernels rows into acc's report_part_kernels (one row per type and name) and report_part_kernel_sums
 * (one per rank and name); part's all_kernels is left empty, so that the kernel breakdown's reduce still finds
 * one (its kernel types are all the report reads of it) */
hta_status rp_kernels_fold(hta_result *acc, hta_result *part, hta_error *err) {
    /* taken out (checked against its declaration: parts that travelled come back without one), an empty one
     * put back */
    hta_table *ak = NULL;
    if (hta_result_find(part, HTA_ALL_KERNELS_TABLE.name)) {
        HTA_TRY(hta_result_take(part, &HTA_ALL_KERNELS_TABLE, &ak, err));
        hta_table *empty = hta_table_from_def(&HTA_ALL_KERNELS_TABLE);
        if (!empty || hta_result_add(part, empty)) {
            hta_table_free(ak), hta_table_free(empty);
            return hta_oom(err);
        }
    }
    hta_table *kn = hta_result_table_in(acc, &RP_PART_KNAMES_TABLE);
    hta_table *ks = hta_result_table_in(acc, &RP_PART_KSUMS_TABLE), *mine = hta_table_from_def(&RP_PART_KNAMES_TABLE);
    size_t n = ak ? ak->nrows : 0, *at = malloc((n ? n : 1) * sizeof *at);
    hta_status st = HTA_OK;
    if (!kn || !ks || !mine || !at) {
        st = hta_oom(err);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        long row = hta_table_add_row(mine);
        const char *type = hta_table_get_str(ak, i, HTA_ALL_KERNELS_TYPE);
        const char *name = hta_table_get_str(ak, i, HTA_ALL_KERNELS_NAME);
        if (row < 0 || hta_table_set_str(mine, (size_t)row, RP_PART_KNAMES_TYPE, type) ||
            hta_table_set_str(mine, (size_t)row, RP_PART_KNAMES_NAME, name)) {
            st = hta_oom(err);
            goto out;
        }
        hta_table_set_int(mine, (size_t)row, RP_PART_KNAMES_COUNT, hta_table_get_int(ak, i, HTA_ALL_KERNELS_COUNT));
    }
    static const int keys[] = {RP_PART_KNAMES_TYPE, RP_PART_KNAMES_NAME}, sums[] = {RP_PART_KNAMES_COUNT};
    if ((st = hta_table_fold_rows(kn, mine, keys, 2, sums, 1, NULL, NULL, at, err))) goto out;
    for (size_t i = 0; i < n; i++) {
        long row = hta_table_add_row(ks);
        if (row < 0) {
            st = hta_oom(err);
            goto out;
        }
        hta_table_set_int(ks, (size_t)row, RP_PART_KSUMS_KEY, (int64_t)at[i]);
        hta_table_set_int(ks, (size_t)row, RP_PART_KSUMS_RANK, hta_table_get_int(ak, i, HTA_ALL_KERNELS_RANK));
        hta_table_set_float(ks, (size_t)row, RP_PART_KSUMS_SUM, hta_table_get_float(ak, i, HTA_ALL_KERNELS_SUM));
    }
out:
    hta_table_free(ak);
    hta_table_free(mine);
    free(at);
    return st;
}

hta_status hta_report_fold(hta_result *acc, hta_result *part, hta_error *err) {
    HTA_TRY(rp_kernels_fold(acc, part, err));
    HTA_TRY(hta_comms_fold(acc, part, err));
    HTA_TRY(hta_straggler_fold(acc, part, err));
    /* efficiency's operators folded, and everything else appended (the per-rank rows the reduce reads) */
    return hta_efficiency_fold(acc, part, err);
}

/* ---- the profiles back ---- */

/* *s copied into a (NULL stays NULL): the profiles' strings outlive the parts' tables, which go before the
 * savings (rp_parts_trim) */
static int arena_str(hta_arena *a, const char **s) { return *s && !(*s = hta_arena_strdup(a, *s)); }

hta_status rp_part_unpack(hta_result *parts, hta_arena *a, rp_parts *o, hta_error *err) {
    memset(o, 0, sizeof *o);
    HTA_TRY(hta_result_take(parts, &RP_PART_RANKS_TABLE, &o->ranks, err));
    HTA_TRY(hta_result_take(parts, &RP_PART_STEPS_TABLE, &o->steps, err));
    HTA_TRY(hta_result_take(parts, &RP_PART_COLLS_TABLE, &o->colls, err));
    HTA_TRY(hta_result_take(parts, &RP_PART_BLOCK_TABLE, &o->block, err));
    /* the series only with --html (a part without them: the series stay 0) */
    if (hta_result_find(parts, RP_PART_SERIES_TABLE.name))
        HTA_TRY(hta_result_take(parts, &RP_PART_SERIES_TABLE, &o->series, err));
    const hta_table *rk = o->ranks, *st = o->steps, *cl = o->colls, *se = o->series;
    size_t n = rk->nrows;
    o->n = n;
    o->pr = HTA_ANEW(a, rp_rank, n);
    if (!o->pr) return hta_oom(err);
    memset(o->pr, 0, (n ? n : 1) * sizeof *o->pr);
    /* the rows of each table come rank by rank, in the order of the ranks table */
    const hta_table *bl = o->block;
    size_t si = 0, ci = 0, bi = 0, li = 0;
    for (size_t k = 0; k < n; k++) {
        rp_rank *p = &o->pr[k];
        int64_t rank = hta_table_get_int(rk, k, RP_PART_RANKS_RANK);
        p->rank = (int32_t)rank;
        p->path = txt(rk, k, RP_PART_RANKS_PATH);
        p->cp_bound = txt(rk, k, RP_PART_RANKS_CP_BOUND);
        p->prep_op = txt(rk, k, RP_PART_RANKS_PREP_OP);
        if (arena_str(a, &p->path) || arena_str(a, &p->cp_bound) || arena_str(a, &p->prep_op)) return hta_oom(err);
        p->tracer = (int)hta_table_get_int(rk, k, RP_PART_RANKS_TRACER);
        p->has_gpu = (int)hta_table_get_int(rk, k, RP_PART_RANKS_HAS_GPU);
        p->t0 = hta_table_get_int(rk, k, RP_PART_RANKS_T0);
        p->t1 = hta_table_get_int(rk, k, RP_PART_RANKS_T1);
        p->step_pid = hta_table_get_int(rk, k, RP_PART_RANKS_STEP_PID);
        p->step_tid = hta_table_get_int(rk, k, RP_PART_RANKS_STEP_TID);
        p->gaps_long = (size_t)hta_table_get_int(rk, k, RP_PART_RANKS_GAPS_LONG);
        p->gaps_short = (size_t)hta_table_get_int(rk, k, RP_PART_RANKS_GAPS_SHORT);
        p->gaps_long_ns = hta_table_get_int(rk, k, RP_PART_RANKS_GAPS_LONG_NS);
        p->gaps_short_ns = hta_table_get_int(rk, k, RP_PART_RANKS_GAPS_SHORT_NS);
        p->gap_median_ns = hta_table_get_int(rk, k, RP_PART_RANKS_GAP_MEDIAN);
        p->gap_max_ns = hta_table_get_int(rk, k, RP_PART_RANKS_GAP_MAX);
        p->cpu_steps_ns = hta_table_get_int(rk, k, RP_PART_RANKS_CPU_STEPS);
        p->queue_median = num(rk, k, RP_PART_RANKS_QUEUE_MEDIAN);
        for (int b = 0; b < RP_DELAY_BINS; b++) p->delays[b] = hta_table_get_int(rk, k, RP_PART_RANKS_DELAY0 + b);
        p->window = (int)hta_table_get_int(rk, k, RP_PART_RANKS_WINDOW);
        int64_t *more[] = {&p->lag_ns, &p->cpu_step_ns, &p->ncapture, &p->nklaunch, &p->nkernels,
                           &p->nklaunch_none, &p->prep_ns}; /* pack's order */
        p->file_events = hta_table_get_int(rk, k, RP_PART_RANKS_FILE_EVENTS);
        for (int c = 0; c < (int)(sizeof more / sizeof *more); c++) *more[c] = hta_table_get_int(rk, k, RP_PART_RANKS_LAG + c);
        size_t l0 = li;
        while (li < bl->nrows && hta_table_get_int(bl, li, RP_PART_BLOCK_RANK) == rank) li++;
        p->nblock = li - l0;
        p->block = HTA_ANEW(a, rp_block, p->nblock);
        if (!p->block) return hta_oom(err);
        for (size_t i = 0; i < p->nblock; i++) {
            p->block[i] = (rp_block){txt(bl, l0 + i, RP_PART_BLOCK_NAME), txt(bl, l0 + i, RP_PART_BLOCK_OP),
                                     hta_table_get_int(bl, l0 + i, RP_PART_BLOCK_COUNT),
                                     hta_table_get_int(bl, l0 + i, RP_PART_BLOCK_DUR),
                                     hta_table_get_int(bl, l0 + i, RP_PART_BLOCK_IDLE)};
            if (arena_str(a, &p->block[i].name) || arena_str(a, &p->block[i].op)) return hta_oom(err);
        }
        size_t s0 = si, c0 = ci;
        while (si < st->nrows && hta_table_get_int(st, si, RP_PART_STEPS_RANK) == rank) si++;
        while (ci < cl->nrows && hta_table_get_int(cl, ci, RP_PART_COLLS_RANK) == rank) ci++;
        size_t ms = si - s0, mc = ci - c0;
        if (!ms) return hta_fail(err, HTA_EINVAL, "the report's parts: rank %lld has no step", (long long)rank);
        p->nsteps = ms, p->ncoll = mc;
        p->step_num = HTA_ANEW(a, int64_t, ms), p->step_ts = HTA_ANEW(a, int64_t, ms);
        p->step_end = HTA_ANEW(a, int64_t, ms), p->dl_ns = HTA_ANEW(a, int64_t, ms);
        p->sync_ns = HTA_ANEW(a, int64_t, ms), p->mem_ns = HTA_ANEW(a, int64_t, ms);
        p->comm_ns = HTA_ANEW(a, int64_t, ms), p->comp_ns = HTA_ANEW(a, int64_t, ms);
        p->gpu_busy_ns = HTA_ANEW(a, int64_t, ms), p->late_ns = HTA_ANEW(a, int64_t, ms);
        p->nsync = HTA_ANEW(a, size_t, ms), p->nlaunch = HTA_ANEW(a, size_t, ms);
        p->cp_ns = HTA_ANEW(a, int64_t, ms * RP_NBOUND);
        p->coll_step = HTA_ANEW(a, int32_t, mc), p->coll_dur = HTA_ANEW(a, int64_t, mc);
        if (!p->step_num || !p->step_ts || !p->step_end || !p->dl_ns || !p->sync_ns || !p->mem_ns || !p->comm_ns ||
            !p->comp_ns || !p->gpu_busy_ns || !p->late_ns || !p->nsync || !p->nlaunch || !p->cp_ns ||
            !p->coll_step || !p->coll_dur)
            return hta_oom(err);
        int64_t **zs[] = {&p->idle_block_ns, &p->idle_wait_ns, &p->idle_dl_ns,  &p->idle_host_ns,
                          &p->idle_bwait_ns, &p->comm_excl_ns, &p->comp_busy_ns, &p->mem_excl_ns};
        int64_t *attr[8];
        for (int c = 0; c < 8; c++)
            if (!(attr[c] = *zs[c] = HTA_ANEW(a, int64_t, ms))) return hta_oom(err);
        int64_t *dst[] = {p->step_num, p->step_ts, p->step_end, p->dl_ns, p->sync_ns,
                          p->mem_ns,   p->comm_ns, p->comp_ns,  p->gpu_busy_ns};
        for (size_t s = 0; s < ms; s++) {
            for (int c = 0; c < 9; c++) dst[c][s] = hta_table_get_int(st, s0 + s, RP_PART_STEPS_NUM + c);
            p->nsync[s] = (size_t)hta_table_get_int(st, s0 + s, RP_PART_STEPS_NSYNC);
            p->nlaunch[s] = (size_t)hta_table_get_int(st, s0 + s, RP_PART_STEPS_NLAUNCH);
            p->late_ns[s] = 0;
            for (int c = 0; c < RP_NBOUND; c++)
                p->cp_ns[s * RP_NBOUND + (size_t)c] = hta_table_get_int(st, s0 + s, RP_PART_STEPS_CP0 + c);
            for (int c = 0; c < 8; c++) attr[c][s] = hta_table_get_int(st, s0 + s, RP_PART_STEPS_IDLE_BLOCK + c);
        }
        for (size_t i = 0; i < mc; i++) {
            p->coll_step[i] = (int32_t)hta_table_get_int(cl, c0 + i, RP_PART_COLLS_STEP);
            p->coll_dur[i] = hta_table_get_int(cl, c0 + i, RP_PART_COLLS_DUR);
        }
        if (se && bi + RP_BINS > se->nrows)
            return hta_fail(err, HTA_EINVAL, "the report's parts: rank %lld has no series", (long long)rank);
        if (se && !(p->ser = HTA_ANEW(a, rp_series, 1))) return hta_oom(err);
        for (int b = 0; se && b < RP_BINS; b++, bi++) {
            p->ser->cpu_busy[b] = (float)num(se, bi, RP_PART_SERIES_CPU);
            p->ser->gpu_busy[b] = (float)num(se, bi, RP_PART_SERIES_GPU);
            p->ser->queue[b] = (float)num(se, bi, RP_PART_SERIES_QUEUE);
            p->ser->membw[b] = (float)num(se, bi, RP_PART_SERIES_MEMBW);
        }
    }
    return HTA_OK;
}

void rp_parts_trim(rp_parts *o) {
    hta_table_free(o->ranks), hta_table_free(o->steps), hta_table_free(o->colls), hta_table_free(o->series);
    hta_table_free(o->block);
    o->ranks = o->steps = o->colls = o->series = o->block = NULL;
}

void rp_parts_free(rp_parts *o) {
    rp_parts_trim(o);
    memset(o, 0, sizeof *o);
}
