/* CUDA kernel launch statistics (analyses.md §8): per launch, the CPU-side
 * duration, the GPU-side duration and the delay between the end of the launch
 * call and the start of the GPU work, plus HTA's three outlier counts. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/corr_runs.h"
#include "hta/launch.h"
#include "hta/util.h"
#include "hta/vocab.h"


HTA_TABLE_DEFINE(HTA_LAUNCH_STATS);
HTA_TABLE_DEFINE(HTA_LAUNCH_SUMMARY);

/* The part's own table (hta/table.h, "reducing parts"): one row per context. */
#define HTA_LAUNCH_PART(T, C, D)                                                                          \
    T("launch_part", "per context: how many names of its trace are launch calls")                        \
    C(HTA_LP_NAMES, "launch_names", INT, "", "names that launch_syms selects")                           \
    C(HTA_LP_COMPAT, "hta_compat", INT, "", "1 with --hta-compat (HTA's names, and its note)")
HTA_TABLE_LOCAL(HTA_LAUNCH_PART);

void hta_launch_opts_default(hta_launch_opts *o) {
    *o = (hta_launch_opts){.runtime_cutoff_us = 50, .launch_delay_cutoff_us = 100, .include_memory_events = 1};
}

/* HTA's join is on correlation ids (§8): the launch ids as a set, the GPU rows grouped by id (corr_runs), so
 * all the partners of one id are one contiguous run, found in view order. */

/* Which names are launches, per symbol: kernel and graph launches of every vendor, plus stream-ordered
 * copies and sets with include_memory_events; with --hta-compat HTA's lists (TF§4.4), which know no HIP
 * and no driver launch.  Returns how many names of the trace qualify. */
static size_t launch_syms(const hta_ctx *ctx, int mem, unsigned char *sel) {
    const hta_trace *t = ctx->trace;
    size_t nsym = hta_symtab_count(t->sym), n = 0;
    memset(sel, 0, nsym ? nsym : 1);
    if (ctx->hta_compat)
        return hta_symtab_mark(t->sym, hta_launch_stats_names_hta, sel) +
               (mem ? hta_symtab_mark(t->sym, hta_launch_stats_memory_names_hta, sel) : 0);
    for (size_t s = 0; s < nsym; s++) {
        unsigned f = hta_sym_api(t, (uint32_t)s);
        if ((f & HTA_API_LAUNCH) || (mem && hta_api_enqueues(f))) sel[s] = 1, n++;
    }
    return n;
}

/* Rows are matched to the launch names by symbol id: the names are looked up once, not compared per row. */
static hta_status one_rank(hta_ctx *ctx, size_t ri, const hta_launch_opts *o, const unsigned char *sel,
                           hta_table *tb, hta_table *sum, hta_error *err) {
    const hta_trace *t = ctx->trace;
    const hta_rank *r = t->ranks[ri];
    const hta_view *v;
    hta_status st = hta_ctx_view(ctx, ri, &v, err);
    if (st) return st;
    /* scratch of this rank: released on every return below */
    hta_arena_mark mark = hta_arena_save(&ctx->scratch);
    int64_t *ids = HTA_ANEW(&ctx->scratch, int64_t, v->n);
    uint32_t *pos = HTA_ANEW(&ctx->scratch, uint32_t, v->n);
    uint32_t *cand = HTA_ANEW(&ctx->scratch, uint32_t, v->n); /* the rows with an id: the passes below read these */
    corr_runs launches, gpu;
    if (!ids || !pos || !cand) {
        hta_arena_reset(&ctx->scratch, mark);
        return hta_oom(err);
    }
    size_t nc = 0, ng = 0, ncand = 0;
    for (size_t k = 0; k < v->n; k++) {
        uint32_t i = v->row[k];
        /* A launch without a correlation id (-1) would join every uncorrelated
         * CPU row with every uncorrelated GPU row: it links nothing.  Launch ids are >= 0, so a row without
         * one joins nothing either. */
        if (r->correlation[i] < 0) continue;
        cand[ncand++] = (uint32_t)k;
        if (sel[r->name[i]]) ids[nc] = r->correlation[i], pos[nc++] = (uint32_t)k;
    }
    if ((st = corr_runs_build(ids, pos, nc, &ctx->scratch, &launches, err))) {
        hta_arena_reset(&ctx->scratch, mark);
        return st;
    }
    /* §8: the GPU side is every row with a stream whose id a launch has; times and durations come from the
     * view (HTA's rounding, no negative durations) */
    size_t a, b;
    for (size_t c = 0; c < ncand; c++) {
        size_t k = cand[c];
        uint32_t i = v->row[k];
        if (hta_row_stream(r, i) == -1) continue;
        corr_runs_find(&launches, r->correlation[i], &a, &b);
        if (a < b) ids[ng] = r->correlation[i], pos[ng++] = (uint32_t)k;
    }
    if ((st = corr_runs_build(ids, pos, ng, &ctx->scratch, &gpu, err))) {
        hta_arena_reset(&ctx->scratch, mark);
        return st;
    }

    int64_t nl = 0, nshort = 0, nrt = 0, nld = 0;
    double scpu = 0, sgpu = 0, sdelay = 0;
    /* Output rows in the order of the CPU rows in HTA's table, one per CPU x GPU pair with one id (an
     * inner join, §8), so a launch with two GPU activities gives two rows as in HTA. */
    for (size_t c = 0; c < ncand; c++) {
        size_t k = cand[c];
        uint32_t i = v->row[k];
        if (hta_row_stream(r, i) != -1) continue;
        corr_runs_find(&launches, r->correlation[i], &a, &b);
        if (a == b) continue;
        /* A graph replay starts its kernels one after another: after the first, a kernel waits for the one
         * before it, not for the launch call, so its delay counts from the later of the two ends. */
        int graph = !ctx->hta_compat && (hta_sym_api(t, r->name[i]) & HTA_API_GRAPH_LAUNCH);
        int64_t ready = v->ts[k] + v->dur[k];
        size_t first, end;
        corr_runs_find(&gpu, r->correlation[i], &first, &end);
        for (size_t g = first; g < end; g++) {
            size_t gk = gpu.pos[g];
            int64_t delay = v->ts[gk] - ready;
            if (graph && v->ts[gk] + v->dur[gk] > ready) ready = v->ts[gk] + v->dur[gk];
            /* GPU start minus CPU end, clipped at 0 (§8): work that starts before the launch call returns
             * has no delay. */
            if (delay < 0) delay = 0;
            double cpu_us = (double)v->dur[k] / 1000.0, gpu_us = (double)v->dur[gk] / 1000.0;
            double delay_us = (double)delay / 1000.0;
            /* HTA's rules for its plots (§8), compared in us as HTA does: a short kernel ran for less time
             * than its launch call took. */
            int sk = cpu_us <= o->runtime_cutoff_us && gpu_us < cpu_us;
            /* a graph's launch call is one call, however many kernels it starts */
            int ro = cpu_us > o->runtime_cutoff_us && !(graph && g > first);
            int lo = delay_us > o->launch_delay_cutoff_us;
            long row = hta_table_add_row(tb);
            if (row < 0) {
                hta_arena_reset(&ctx->scratch, mark);
                return hta_oom(err);
            }
            hta_table_set_int(tb, row, HTA_LAUNCH_STATS_RANK, r->rank);
            hta_table_set_int(tb, row, HTA_LAUNCH_STATS_CORRELATION, r->correlation[i]);
            hta_table_set_float(tb, row, HTA_LAUNCH_STATS_CPU, cpu_us);
            hta_table_set_float(tb, row, HTA_LAUNCH_STATS_GPU, gpu_us);
            hta_table_set_float(tb, row, HTA_LAUNCH_STATS_DELAY, delay_us);
            hta_table_set_int(tb, row, HTA_LAUNCH_STATS_SHORT, sk);
            hta_table_set_int(tb, row, HTA_LAUNCH_STATS_RUNTIME_OUTLIER, ro);
            hta_table_set_int(tb, row, HTA_LAUNCH_STATS_DELAY_OUTLIER, lo);
            nl++;
            nshort += sk;
            nrt += ro;
            nld += lo;
            scpu += cpu_us;
            sgpu += gpu_us;
            sdelay += delay_us;
        }
    }
    hta_arena_reset(&ctx->scratch, mark);

    long row = hta_table_add_row(sum);
    if (row < 0) return hta_oom(err);
    hta_table_set_int(sum, row, HTA_LAUNCH_SUMMARY_RANK, r->rank);
    hta_table_set_int(sum, row, HTA_LAUNCH_SUMMARY_LAUNCHES, nl);
    hta_table_set_int(sum, row, HTA_LAUNCH_SUMMARY_SHORT, nshort);
    hta_table_set_int(sum, row, HTA_LAUNCH_SUMMARY_RUNTIME_OUTLIERS, nrt);
    hta_table_set_int(sum, row, HTA_LAUNCH_SUMMARY_DELAY_OUTLIERS, nld);
    hta_table_set_float(sum, row, HTA_LAUNCH_SUMMARY_RUNTIME_CUTOFF, o->runtime_cutoff_us);
    hta_table_set_float(sum, row, HTA_LAUNCH_SUMMARY_DELAY_CUTOFF, o->launch_delay_cutoff_us);
    /* means over the launch x kernel pairs, the rows of the table above; null for a rank without launches */
    hta_table_set_float(sum, row, HTA_LAUNCH_SUMMARY_MEAN_CPU, nl ? scpu / (double)nl : NAN);
    hta_table_set_float(sum, row, HTA_LAUNCH_SUMMARY_MEAN_GPU, nl ? sgpu / (double)nl : NAN);
    hta_table_set_float(sum, row, HTA_LAUNCH_SUMMARY_MEAN_DELAY, nl ? sdelay / (double)nl : NAN);
    return HTA_OK;
}

hta_status hta_launch_stats_part(hta_ctx *ctx, const hta_launch_opts *o, hta_result *out, hta_error *err) {
    HTA_OPTS_OR_DEFAULT(hta_launch_opts, o);
    const hta_trace *t = ctx->trace;
    hta_table *tb = hta_table_from_def(&HTA_LAUNCH_STATS_TABLE);
    hta_table *sum = hta_table_from_def(&HTA_LAUNCH_SUMMARY_TABLE);
    hta_table *part = hta_table_from_def(&HTA_LAUNCH_PART_TABLE);
    unsigned char *sel = malloc(hta_symtab_count(t->sym) + 1);
    hta_status st = HTA_OK;
    long row;
    if (!tb || !sum || !part || !sel || (row = hta_table_add_row(part)) < 0) {
        st = hta_oom(err);
        goto out;
    }
    size_t nids = launch_syms(ctx, o->include_memory_events, sel);
    hta_table_set_int(part, (size_t)row, HTA_LP_NAMES, (int64_t)nids);
    hta_table_set_int(part, (size_t)row, HTA_LP_COMPAT, ctx->hta_compat != 0);
    size_t ns = hta_ctx_nranks(ctx);
    for (size_t k = 0; k < ns && !st; k++) {
        st = one_rank(ctx, k, o, sel, tb, sum, err);
        hta_ctx_view_done(ctx, k);
    }
    hta_table *all[] = {tb, sum, part};
    for (size_t k = 0; k < 3 && !st; k++) {
        /* out owns them from here (hta_result_add frees the one it fails to add) */
        if (hta_result_add(out, all[k])) st = hta_oom(err);
        all[k] = NULL;
    }
    tb = all[0], sum = all[1], part = all[2];
out:
    free(sel);
    hta_table_free(tb);
    hta_table_free(sum);
    hta_table_free(part);
    return st;
}

hta_status hta_launch_stats_reduce(const hta_launch_opts *o, hta_result *parts, hta_result *out, hta_error *err) {
    HTA_OPTS_OR_DEFAULT(hta_launch_opts, o);
    hta_table *part, *tb, *sum;
    HTA_TRY(hta_result_take(parts, &HTA_LAUNCH_PART_TABLE, &part, err));
    int64_t nids = hta_table_sum_int(part, HTA_LP_NAMES), compat = hta_table_sum_int(part, HTA_LP_COMPAT);
    hta_table_free(part);
    HTA_TRY(hta_result_copy_notes(out, parts, err));
    /* No launch name at all is worth a note: on AMD and Triton traces HTA's names never match (§8), and an
     * empty table alone would look like a bug. */
    if (!nids && compat &&
        hta_result_note(out,
                        "no cudaLaunchKernel/cudaLaunchKernelExC/runFunction%s calls in the trace: HTA's launch "
                        "statistics know no other launch API (HIP, cuLaunchKernel), so the table is empty",
                        o->include_memory_events ? "/cudaMemcpyAsync/cudaMemsetAsync" : ""))
        return hta_oom(err);
    if (!nids && !compat && hta_result_note(out, "no kernel launch call (CUDA, HIP or MTIA) in the trace: the table is empty"))
        return hta_oom(err);
    HTA_TRY(hta_result_take(parts, &HTA_LAUNCH_STATS_TABLE, &tb, err));
    if (hta_result_add(out, tb)) return hta_oom(err);
    HTA_TRY(hta_result_take(parts, &HTA_LAUNCH_SUMMARY_TABLE, &sum, err));
    return hta_result_add(out, sum) ? hta_oom(err) : HTA_OK;
}

HTA_ANALYSIS_WHOLE(launch_stats, hta_launch_opts)
