/* Idle time breakdown (analyses.md §7): per rank and GPU stream, each gap
 * before a kernel/memcpy/memset is host_wait (its launch came after the
 * previous activity ended), kernel_wait (a gap shorter than the
 * consecutive-kernel delay) or other.
 *
 * Unlike HTA, streams are told apart per device (pid) as well as by stream id
 * (quirk A4), and a kernel whose launch is not in the trace has no launch time
 * instead of borrowing event 0's (quirk A3; --hta-compat borrows it). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/breakdown_rows.h"

HTA_TABLE_DEFINE(HTA_IDLE);
HTA_TABLE_DEFINE(HTA_IDLE_STATS);

void hta_idle_opts_default(hta_idle_opts *o) {
    *o = (hta_idle_opts){.consecutive_kernel_delay_ns = HTA_IDLE_DEFAULT_DELAY_NS};
}

enum { HOST_WAIT, KERNEL_WAIT, OTHER, NCAT };
static const char *const g_cat[NCAT] = {"host_wait", "kernel_wait", "other"};

typedef struct stream_key {
    int64_t pid, stream;
} stream_key;

typedef struct tables {
    hta_table *idle, *stats;
} tables;

/* HTA rounds every value of both tables to 2 decimals (§7 steps 6-7). */
static double r2(double x) { return hta_round(x, 2); }

/* One stream: rows idx[0..n) (view-ordered GPU rows), ts/end/launch in ns. */
static hta_status one_stream(tables *tb, int32_t rank, stream_key sk, uint32_t *idx, size_t n, const int64_t *ts,
                             const int64_t *end, const int64_t *launch, int64_t delay, double *scratch,
                             hta_error *err) {
    /* HTA sorts a stream's rows by ts.  Stable here, so ties keep HTA's row order (idx arrives in view
     * order); HTA's unstable sort gives the same numbers on every bundled trace (§0.6). */
    HTA_TRY(hta_stable_sort_idx_i64(idx, n, ts, err));
    int64_t sum[NCAT] = {0};
    size_t cnt[NCAT] = {0};
    int present[NCAT] = {0};
    unsigned char *cat = (unsigned char *)(scratch + n); /* n bytes after the n doubles */
    for (size_t k = 0; k < n; k++) {
        uint32_t i = idx[k];
        /* The first row has no gap (HTA: NaN): it is "other" and adds nothing, so every stream has an
         * "other" row, as in HTA. */
        int c = OTHER;
        if (k) {
            /* The previous row's end, not the latest end so far (§7 step 4): a gap after overlapping rows
             * can be negative, as in HTA. */
            int64_t prev_end = end[idx[k - 1]], gap = ts[i] - prev_end;
            /* The launch came after the stream had gone idle: the GPU waited for the host.  Without a
             * launch time (INT64_MIN) it cannot be host_wait; HTA would read event 0's time here (Quirk
             * A3).  The delay is in ns on both sides; HTA compares microseconds with its "30 ns" default
             * (A13), hence 30000. */
            if (launch[i] != INT64_MIN && launch[i] > prev_end) c = HOST_WAIT;
            else if (gap < delay) c = KERNEL_WAIT;
            sum[c] += gap;
            cnt[c]++;
        }
        cat[k] = (unsigned char)c;
        present[c] = 1;
    }
    int64_t total = sum[0] + sum[1] + sum[2];
    for (int c = 0; c < NCAT; c++) {
        if (!present[c]) continue;
        long row = hta_table_add_row(tb->idle);
        if (row < 0) return hta_oom(err);
        hta_table_set_int(tb->idle, row, HTA_IDLE_RANK, rank);
        hta_table_set_int(tb->idle, row, HTA_IDLE_STREAM, sk.stream);
        if (hta_table_set_str(tb->idle, row, HTA_IDLE_CATEGORY, g_cat[c])) return hta_oom(err);
        hta_table_set_float(tb->idle, row, HTA_IDLE_TIME, r2(sum[c] / 1000.0));
        /* ratio of microsecond values as HTA divides them; NaN (null) when the stream has no idle time */
        hta_table_set_float(tb->idle, row, HTA_IDLE_RATIO,
                            total ? r2((sum[c] / 1000.0) / (total / 1000.0)) : NAN);
        hta_table_set_int(tb->idle, row, HTA_IDLE_PID, sk.pid);
        if (!tb->stats) continue;
        size_t m = 0;
        /* Statistics of the gaps of this category; k from 1 because the first row's NaN gap is no sample
         * (describe counts non-null values). */
        for (size_t k = 1; k < n; k++)
            if (cat[k] == c) scratch[m++] = (ts[idx[k]] - end[idx[k - 1]]) / 1000.0;
        hta_describe d;
        hta_describe_values(scratch, m, &d);
        row = hta_table_add_row(tb->stats);
        if (row < 0 || hta_table_set_str(tb->stats, row, HTA_IDLE_STATS_CATEGORY, g_cat[c])) return hta_oom(err);
        hta_table_set_int(tb->stats, row, HTA_IDLE_STATS_RANK, rank);
        hta_table_set_int(tb->stats, row, HTA_IDLE_STATS_STREAM, sk.stream);
        const double v[] = {d.count, d.mean, d.std, d.min, d.p25, d.p50, d.p75, d.max};
        for (int j = 0; j < 8; j++) hta_table_set_float(tb->stats, row, HTA_IDLE_STATS_COUNT + j, r2(v[j]));
        hta_table_set_int(tb->stats, row, HTA_IDLE_STATS_PID, sk.pid);
    }
    return HTA_OK;
}

static int wanted_stream(const hta_idle_opts *o, int64_t s) {
    if (!o->streams) return 1;
    for (size_t i = 0; i < o->nstreams; i++)
        if (o->streams[i] == s) return 1;
    return 0;
}

static hta_status one_rank(hta_ctx *ctx, size_t ri, const hta_idle_opts *o, tables *tb, hta_result *out,
                           hta_error *err) {
    const hta_trace *t = ctx->trace;
    bd_rows b;
    hta_status st = bd_rows_build(ctx, ri, HTA_GPU_ROWS_ACTIVITY, &b, err);
    if (st) return st;
    const hta_rank *r = b.v->r;
    size_t n = b.n, vn = b.v->n;
    /* scratch of this rank: released at `done`, whatever happened */
    hta_arena *A = &ctx->scratch;
    hta_arena_mark mark = hta_arena_save(A);
    /* The launch time must come from the view (same origin and rounding as the kernel's), so the partner's
     * rank row is mapped to its view position.  A launch the filter dropped has none: HTA's lookup in its
     * filtered table gives NaN there too. */
    int32_t *vpos = HTA_ANEW(A, int32_t, r->n); /* rank row -> view position */
    int64_t *end = HTA_ANEW(A, int64_t, n), *launch = HTA_ANEW(A, int64_t, n);
    uint32_t *idx = HTA_ANEW(A, uint32_t, n), *sid = HTA_ANEW(A, uint32_t, n);
    stream_key *keys = HTA_ANEW(A, stream_key, n);
    /* n doubles for describe() plus n category bytes behind them (one_stream), in one allocation */
    double *scratch = hta_arena_array(A, n ? n : 1, sizeof(double) + 1);
    size_t *start = NULL;
    size_t nk = 0;
    if (!vpos || !end || !launch || !idx || !sid || !keys || !scratch) goto oom;
    for (size_t i = 0; i < r->n; i++) vpos[i] = -1;
    for (size_t k = 0; k < vn; k++) vpos[b.v->row[k]] = (int32_t)k;
    /* streams in order of first appearance (§7 step 3); a small open-addressing map keyed by (pid,
     * stream), because HTA's key by stream id alone mixes devices (Quirk A4) */
    size_t hcap = 64;
    while (hcap < 2 * n) hcap <<= 1;
    int32_t *h = HTA_ANEW(A, int32_t, hcap);
    if (!h) goto oom;
    memset(h, 0xff, hcap * sizeof *h);
    /* --hta-compat: a row with a correlation id whose launch is not in the file has HTA's
     * index_correlation 0, and HTA's lookup of key 0 reads event 0 of the file (Quirk A3, Q7), where it
     * survived the filter (a cpu_op late in the step makes such a gap host_wait: the DLRM job's rank 1) */
    int64_t ev0 = INT64_MIN;
    if (ctx->hta_compat && r->n && r->index[0] == 0 && vpos[0] >= 0) ev0 = b.v->ts[vpos[0]];
    for (size_t i = 0; i < n; i++) {
        size_t row = b.v->row[b.pos[i]];
        end[i] = b.ts[i] + b.dur[i];
        int32_t p = r->partner[row];
        launch[i] = p != HTA_NO_ROW && vpos[p] >= 0 ? b.v->ts[vpos[p]] : INT64_MIN;
        if (p == HTA_NO_ROW && r->correlation[row] >= 0) launch[i] = ev0;
        stream_key sk = {hta_row_thread(r, row)->pid, hta_row_stream(r, row)};
        uint64_t hv = (uint64_t)sk.pid * 0x9E3779B97F4A7C15ull ^ (uint64_t)sk.stream * 0xC2B2AE3D27D4EB4Full;
        /* the high bits of the products are the well mixed ones */
        size_t j = (size_t)(hv >> 17) & (hcap - 1);
        while (h[j] >= 0 && (keys[h[j]].pid != sk.pid || keys[h[j]].stream != sk.stream)) j = (j + 1) & (hcap - 1);
        if (h[j] < 0) {
            keys[nk] = sk;
            h[j] = (int32_t)nk++;
        }
        sid[i] = (uint32_t)h[j];
    }
    /* bucket rows by stream (a counting sort, which is stable), keeping view order inside each for the tie
     * order of one_stream's sort */
    start = hta_arena_calloc(A, nk + 1, sizeof *start);
    size_t *fill = HTA_ANEW(A, size_t, nk);
    if (!start || !fill) goto oom;
    for (size_t i = 0; i < n; i++) start[sid[i] + 1]++;
    for (size_t s = 0; s < nk; s++) start[s + 1] += start[s];
    memcpy(fill, start, nk * sizeof *fill);
    for (size_t i = 0; i < n; i++) idx[fill[sid[i]]++] = (uint32_t)i;
    int32_t rank = r->rank;
    size_t used = 0;
    for (size_t s = 0; s < nk; s++) {
        /* --streams names stream ids, as HTA's option does: a stream id selects it on every device */
        if (!wanted_stream(o, keys[s].stream)) continue;
        used++;
        HTA_TRY_GOTO(st, one_stream(tb, rank, keys[s], idx + start[s], start[s + 1] - start[s], b.ts, end, launch,
                                    o->consecutive_kernel_delay_ns, scratch, err), done);
    }
    if (!n) bd_note_empty(t, r, HTA_GPU_ROWS_ACTIVITY, "kernels, memcpys or memsets: no idle time", out);
    else if (!used) hta_result_note(out, "rank %d has none of the requested streams", rank);
    goto done;
oom:
    st = hta_oom(err);
done:
    hta_arena_reset(A, mark);
    bd_rows_free(&b);
    return st;
}

hta_status hta_idle_breakdown(hta_ctx *ctx, const hta_idle_opts *o, hta_result *out, hta_error *err) {
    HTA_OPTS_OR_DEFAULT(hta_idle_opts, o);
    tables tb = {hta_table_from_def(&HTA_IDLE_TABLE), NULL};
    if (o->interval_stats) tb.stats = hta_table_from_def(&HTA_IDLE_STATS_TABLE);
    size_t ns = hta_ctx_nranks(ctx);
    if (!tb.idle || (o->interval_stats && !tb.stats)) {
        hta_table_free(tb.idle);
        hta_table_free(tb.stats);
        return hta_oom(err);
    }
    for (size_t k = 0; k < ns; k++) {
        hta_status s = one_rank(ctx, k, o, &tb, out, err); /* its bd_rows says when the view is done */
        if (s) {
            hta_table_free(tb.idle);
            hta_table_free(tb.stats);
            return s;
        }
    }
    if (hta_result_add(out, tb.idle)) {
        hta_table_free(tb.stats);
        return hta_oom(err);
    }
    if (tb.stats && hta_result_add(out, tb.stats)) return hta_oom(err);
    return HTA_OK;
}
