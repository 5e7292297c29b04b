/* `hta counters`: queue-length and memory-bandwidth summaries, time blocked
 * on a full launch queue (analyses.md §10.2, §10.3, §11.2). */
#include <stdlib.h>
#include <string.h>

#include "hta/counters.h"
#include "hta/util.h"

HTA_TABLE_DEFINE(HTA_QUEUE_SUMMARY);
HTA_TABLE_DEFINE(HTA_MEMBW_SUMMARY);
HTA_TABLE_DEFINE(HTA_QUEUE_BLOCKED);
HTA_TABLE_DEFINE(HTA_QUEUE_SERIES);
HTA_TABLE_DEFINE(HTA_MEMBW_SERIES);

/* The part's own table (hta/table.h, "reducing parts"): one row per context. */
#define HTA_COUNTERS_PART(T, C, D)                                                                        \
    T("counters_part", "per context: its ranks, and those with a memory-bandwidth series")               \
    C(HTA_CP_RANKS, "ranks", INT, "", "ranks of the context")                                            \
    C(HTA_CP_MEMBW, "ranks_with_membw", INT, "", "ranks with memory copies or memsets on a GPU stream")
HTA_TABLE_LOCAL(HTA_COUNTERS_PART);

void hta_counters_opts_default(hta_counters_opts *o) { *o = (hta_counters_opts){.max_queue_length = 1024}; }

/* add_stats fills both summaries: rank, key, then the describe() columns.  The assertion makes the build
 * fail if the two declarations ever drift apart. */
_Static_assert((int)HTA_MEMBW_SUMMARY_RANK == HTA_QUEUE_SUMMARY_RANK &&
                   (int)HTA_MEMBW_SUMMARY_NAME == HTA_QUEUE_SUMMARY_STREAM &&
                   (int)HTA_MEMBW_SUMMARY_COUNT == HTA_QUEUE_SUMMARY_COUNT,
               "queue_length_summary and memory_bw_summary share their layout");

static hta_status add_stats(hta_table *tb, int32_t rank, int64_t ikey, const char *skey, double *v, size_t n,
                            hta_error *err) {
    hta_describe d;
    /* pandas' describe() (§10.2, §11.2): sample std, linearly interpolated quartiles; v is sorted in place */
    hta_describe_values(v, n, &d);
    long row = hta_table_add_row(tb);
    if (row < 0) return hta_oom(err);
    hta_table_set_int(tb, (size_t)row, HTA_QUEUE_SUMMARY_RANK, rank);
    if (skey) {
        if (hta_table_set_str(tb, (size_t)row, HTA_MEMBW_SUMMARY_NAME, skey)) return hta_oom(err);
    } else {
        hta_table_set_int(tb, (size_t)row, HTA_QUEUE_SUMMARY_STREAM, ikey);
    }
    const double s[8] = {d.count, d.mean, d.std, d.min, d.p25, d.p50, d.p75, d.max};
    for (int c = 0; c < 8; c++) hta_table_set_float(tb, (size_t)row, HTA_QUEUE_SUMMARY_COUNT + c, s[c]);
    return HTA_OK;
}

typedef struct tables {
    hta_table *qsum, *bsum, *blocked, *qser, *bser;
} tables;

static hta_status rank_queue(const hta_view *v, const hta_queue_series *q, const hta_counters_opts *o, tables *tb,
                             double *buf, hta_error *err) {
    const hta_rank *r = v->r;
    /* HTA's get_trace_duration (§10.3): latest start minus earliest start of the rank's table, ends not
     * included. */
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t k = 0; k < v->n; k++) {
        if (v->ts[k] < lo) lo = v->ts[k];
        if (v->ts[k] > hi) hi = v->ts[k];
    }
    /* an empty view has no duration (and lo > hi would overflow) */
    double span = v->n ? (double)(hi - lo) : 0.0;
    /* the series is stream-major (queue_length.c): each stream is one run of samples */
    for (size_t a = 0; a < q->n;) {
        size_t b = a;
        int64_t blocked = 0;
        int reached = 0;
        while (b < q->n && q->stream[b] == q->stream[a]) {
            /* statistics of the samples as they are, not weighted by how long each value held (§10.2) */
            buf[b - a] = (double)q->queue[b];
            /* a full queue: CUDA blocks further launches to the stream until an entry frees (HTA's
             * CUDA_MAX_LAUNCH_QUEUE_PER_STREAM, 1024) */
            if (q->queue[b] >= o->max_queue_length) {
                reached = 1;
                /* a sample's value holds until the stream's next sample; the last one has no successor and
                 * adds nothing (§10.3) */
                if (b + 1 < q->n && q->stream[b + 1] == q->stream[a]) blocked += q->ts[b + 1] - q->ts[b];
            }
            b++;
        }
        HTA_TRY(add_stats(tb->qsum, r->rank, q->stream[a], NULL, buf, b - a, err));
        if (reached) { /* every stream, not only the last one (HTA's A6) */
            long row = hta_table_add_row(tb->blocked);
            if (row < 0) return hta_oom(err);
            hta_table_set_int(tb->blocked, (size_t)row, HTA_QUEUE_BLOCKED_RANK, r->rank);
            hta_table_set_int(tb->blocked, (size_t)row, HTA_QUEUE_BLOCKED_STREAM, q->stream[a]);
            hta_table_set_float(tb->blocked, (size_t)row, HTA_QUEUE_BLOCKED_DURATION, (double)blocked / 1000.0);
            hta_table_set_float(tb->blocked, (size_t)row, HTA_QUEUE_BLOCKED_RELATIVE,
                                span > 0 ? (double)blocked / span : 0.0);
        }
        a = b;
    }
    if (!tb->qser) return HTA_OK;
    for (size_t k = 0; k < q->n; k++) {
        long row = hta_table_add_row(tb->qser);
        if (row < 0) return hta_oom(err);
        const hta_thread *th = hta_row_thread(r, q->dev_row[k]);
        hta_table_set_int(tb->qser, (size_t)row, HTA_QUEUE_SERIES_RANK, r->rank);
        /* HTA's row key, the event's position in traceEvents; the time through hta_ns_to_us because it is
         * absolute (the trace's clock) by default; pid/tid are the device row's, as HTA copies them onto
         * the launch sample (§10.1 step 3). */
        hta_table_set_int(tb->qser, (size_t)row, HTA_QUEUE_SERIES_INDEX, r->index[q->row[k]]);
        hta_table_set_float(tb->qser, (size_t)row, HTA_QUEUE_SERIES_TS, hta_ns_to_us(q->ts[k]));
        hta_table_set_int(tb->qser, (size_t)row, HTA_QUEUE_SERIES_PID, th->pid);
        hta_table_set_int(tb->qser, (size_t)row, HTA_QUEUE_SERIES_TID, th->tid);
        hta_table_set_int(tb->qser, (size_t)row, HTA_QUEUE_SERIES_STREAM, q->stream[k]);
        hta_table_set_int(tb->qser, (size_t)row, HTA_QUEUE_SERIES_LENGTH, q->queue[k]);
    }
    return HTA_OK;
}

static hta_status rank_membw(const hta_view *v, const hta_membw_series *m, tables *tb, double *buf,
                             hta_error *err) {
    const hta_rank *r = v->r;
    /* the series is grouped by memory kind (memory_bw.c): one run per kind */
    for (size_t a = 0; a < m->n;) {
        size_t b = a, nb = 0;
        for (; b < m->n && m->kind[b] == m->kind[a]; b++)
            if (m->bw[b] > 0) buf[nb++] = m->bw[b]; /* float residues count (A14) */
        /* a kind whose values are all <= 0 gets no row (HTA: an empty table, e.g. AMD without bandwidth
         * args) */
        if (nb) HTA_TRY(add_stats(tb->bsum, r->rank, 0, m->names[m->kind[a]], buf, nb, err));
        a = b;
    }
    if (!tb->bser) return HTA_OK;
    for (size_t k = 0; k < m->n; k++) {
        long row = hta_table_add_row(tb->bser);
        if (row < 0) return hta_oom(err);
        hta_table_set_int(tb->bser, (size_t)row, HTA_MEMBW_SERIES_RANK, r->rank);
        hta_table_set_int(tb->bser, (size_t)row, HTA_MEMBW_SERIES_INDEX, r->index[m->row[k]]);
        hta_table_set_float(tb->bser, (size_t)row, HTA_MEMBW_SERIES_TS, hta_ns_to_us(m->ts[k]));
        hta_table_set_int(tb->bser, (size_t)row, HTA_MEMBW_SERIES_PID, hta_row_thread(r, m->row[k])->pid);
        if (hta_table_set_str(tb->bser, (size_t)row, HTA_MEMBW_SERIES_NAME, m->names[m->kind[k]])) return hta_oom(err);
        hta_table_set_float(tb->bser, (size_t)row, HTA_MEMBW_SERIES_BW, m->bw[k]);
    }
    return HTA_OK;
}

hta_status hta_counters_part(hta_ctx *ctx, const hta_counters_opts *o, hta_result *out, hta_error *err) {
    HTA_OPTS_OR_DEFAULT(hta_counters_opts, o);
    const hta_trace *t = ctx->trace;
    tables tb = {0};
    hta_table *part = hta_table_from_def(&HTA_COUNTERS_PART_TABLE);
    long prow = part ? hta_table_add_row(part) : -1;
    double *buf = NULL;
    const hta_view *v = NULL;
    hta_queue_series q = {0};
    hta_membw_series m = {0};
    hta_status st = HTA_OK;
    tb.qsum = hta_table_from_def(&HTA_QUEUE_SUMMARY_TABLE);
    tb.bsum = hta_table_from_def(&HTA_MEMBW_SUMMARY_TABLE);
    tb.blocked = hta_table_from_def(&HTA_QUEUE_BLOCKED_TABLE);
    if (o->series) {
        tb.qser = hta_table_from_def(&HTA_QUEUE_SERIES_TABLE);
        tb.bser = hta_table_from_def(&HTA_MEMBW_SERIES_TABLE);
    }
    if (!tb.qsum || !tb.bsum || !tb.blocked || (o->series && (!tb.qser || !tb.bser)) || prow < 0) goto oom;
    size_t ns = hta_ctx_nranks(ctx);
    size_t with_q = 0, with_m = 0;
    for (size_t k = 0; k < ns; k++) {
        const hta_rank *r = t->ranks[k];
        if ((st = hta_ctx_view(ctx, k, &v, err))) goto fail;
        if ((st = hta_queue_series_build(v, ctx->hta_compat ? HTA_SERIES_HTA : HTA_SERIES_EXACT, &ctx->scratch, &q, err))) goto fail;
        if ((st = hta_membw_series_build(v, ctx->hta_compat ? HTA_SERIES_HTA : HTA_SERIES_EXACT, &ctx->scratch, &m, err))) goto fail;
        /* one sample buffer for both series, grown to the larger; the views go one rank at a time */
        size_t need = q.n > m.n ? q.n : m.n;
        double *nb = realloc(buf, (need ? need : 1) * sizeof *nb);
        if (!nb) goto oom;
        buf = nb;
        if ((st = rank_queue(v, &q, o, &tb, buf, err)) || (st = rank_membw(v, &m, &tb, buf, err))) goto fail;
        /* a rank without a launch -> device pair (a CPU-only trace) has no queue to speak of; HTA leaves
         * it out of its dict */
        if (q.n) with_q++;
        else if (hta_result_note(out, "rank %d: no kernel launches with device activity: no queue length", r->rank))
            goto oom;
        if (m.n) with_m++;
        hta_ctx_view_done(ctx, k);
        hta_queue_series_free(&q);
        hta_membw_series_free(&m);
    }
    free(buf);
    hta_table_set_int(part, (size_t)prow, HTA_CP_RANKS, (int64_t)ns);
    hta_table_set_int(part, (size_t)prow, HTA_CP_MEMBW, (int64_t)with_m);
    /* the tables in declaration order, the series only when asked for (NULL otherwise), then the part's */
    hta_table *all[] = {tb.qsum, tb.bsum, tb.blocked, tb.qser, tb.bser, part};
    memset(&tb, 0, sizeof tb);
    for (size_t k = 0; k < 6; k++)
        if (all[k] && hta_result_add(out, all[k])) {
            for (size_t j = k + 1; j < 6; j++) hta_table_free(all[j]);
            return hta_oom(err);
        }
    return HTA_OK;
oom:
    st = hta_oom(err);
fail:
    hta_queue_series_free(&q);
    hta_membw_series_free(&m);
    free(buf);
    hta_table_free(tb.qsum);
    hta_table_free(tb.bsum);
    hta_table_free(tb.blocked);
    hta_table_free(tb.qser);
    hta_table_free(tb.bser);
    hta_table_free(part);
    return st;
}

hta_status hta_counters_reduce(const hta_counters_opts *o, hta_result *parts, hta_result *out, hta_error *err) {
    HTA_OPTS_OR_DEFAULT(hta_counters_opts, o);
    hta_table *part;
    HTA_TRY(hta_result_take(parts, &HTA_COUNTERS_PART_TABLE, &part, err));
    int64_t ns = hta_table_sum_int(part, HTA_CP_RANKS), with_m = hta_table_sum_int(part, HTA_CP_MEMBW);
    hta_table_free(part);
    HTA_TRY(hta_result_copy_notes(out, parts, err));
    if (!with_m && ns && hta_result_note(out, "no memory copies or memsets on a GPU stream: no memory bandwidth"))
        return hta_oom(err);
    const hta_table_def *defs[] = {&HTA_QUEUE_SUMMARY_TABLE, &HTA_MEMBW_SUMMARY_TABLE, &HTA_QUEUE_BLOCKED_TABLE,
                                   &HTA_QUEUE_SERIES_TABLE, &HTA_MEMBW_SERIES_TABLE};
    for (size_t k = 0; k < (o->series ? 5u : 3u); k++) {
        hta_table *t;
        HTA_TRY(hta_result_take(parts, defs[k], &t, err));
        if (hta_result_add(out, t)) return hta_oom(err);
    }
    return HTA_OK;
}

HTA_ANALYSIS_WHOLE(counters, hta_counters_opts)
