/* `hta info`: what was loaded, per rank (cmd_info.c prints it).  Reads the rank's own columns, exact ns on
 * the trace's clock, to report what the file holds; only the per-category row counts go through the view,
 * to show what HTA's profiler-step filter keeps. */
#include <stdlib.h>
#include <string.h>

#include "hta/analysis.h"
#include "hta/vocab.h"

HTA_TABLE_DEFINE(HTA_INFO_RANKS);
HTA_TABLE_DEFINE(HTA_INFO_CATEGORIES);
HTA_TABLE_DEFINE(HTA_INFO_STREAMS);

static hta_status ranks_table(const hta_trace *t, size_t ns, hta_result *out,
                              hta_error *err) {
    hta_table *tb = hta_table_from_def(&HTA_INFO_RANKS_TABLE);
    int64_t *stepno = calloc(hta_symtab_count(t->sym) + 1, sizeof *stepno); /* hta_sym_step's memo */
    if (!tb || !stepno) goto oom;
    for (size_t k = 0; k < ns; k++) {
        const hta_rank *r = t->ranks[k];
        long row = hta_table_add_row(tb);
        if (row < 0) goto oom;
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        int64_t first = -1, last = -1, nsteps = 0;
        /* devices: pids of rows on a GPU stream (Kineto writes GPU activity with pid = device, TF§4.2); a
         * rank drives a few devices, so a short list searched linearly will do */
        int64_t dev[64];
        size_t nd = 0;
        for (size_t i = 0; i < r->n; i++) {
            if (r->ts[i] < lo) lo = r->ts[i];
            /* ends as everywhere else: ts + dur, a negative duration counted as 0 */
            int64_t e = r->ts[i] + (r->dur[i] > 0 ? r->dur[i] : 0);
            if (e > hi) hi = e;
            int64_t s = hta_sym_step(t, r->name[i], stepno);
            /* Kineto writes each ProfilerStep#N twice: a CPU user_annotation and a gpu_user_annotation
             * copy that has no stream either (Q9).  Rows without a stream (stream index 0), minus the
             * GPU copies, count each step once. */
            if (s >= 0 && r->stream[i] == 0 &&
                hta_cat_classify(hta_sym(t->sym, hta_row_cat_sym(t, r, i))) != HTA_CC_GPU_USER_ANNOTATION) {
                nsteps++;
                if (first < 0 || s < first) first = s;
                if (s > last) last = s;
            }
            if (hta_row_stream(r, i) >= 0) {
                int64_t p = hta_row_thread(r, i)->pid;
                size_t d = 0;
                while (d < nd && dev[d] != p) d++;
                if (d == nd && nd < 64) dev[nd++] = p;
            }
        }
        char devs[512] = "";
        for (size_t d = 0; d < nd; d++) {
            size_t l = strlen(devs);
            snprintf(devs + l, sizeof devs - l, "%s%lld", d ? "," : "", (long long)dev[d]);
        }
        size_t gs = 0;
        /* streams[0] is the -1 of CPU rows, not a GPU stream */
        for (size_t s = 1; s < r->nstreams; s++) gs += r->streams[s] >= 0;
        hta_table_set_int(tb, row, HTA_INFO_RANKS_RANK, r->rank);
        if (hta_table_set_str(tb, row, HTA_INFO_RANKS_FILE, r->path)) goto oom;
        if (hta_table_set_str(tb, row, HTA_INFO_RANKS_SOURCE, r->rank_source)) goto oom;
        if (r->world_size >= 0) hta_table_set_int(tb, row, HTA_INFO_RANKS_WORLD_SIZE, r->world_size);
        else hta_table_set_null(tb, row, HTA_INFO_RANKS_WORLD_SIZE);
        hta_table_set_int(tb, row, HTA_INFO_RANKS_EVENTS, (int64_t)r->n_events);
        hta_table_set_int(tb, row, HTA_INFO_RANKS_ROWS, (int64_t)r->n);
        hta_table_set_int(tb, row, HTA_INFO_RANKS_FLOWS, (int64_t)r->nflows);
        hta_table_set_int(tb, row, HTA_INFO_RANKS_THREADS, (int64_t)r->nthreads);
        hta_table_set_int(tb, row, HTA_INFO_RANKS_STREAMS, (int64_t)gs);
        if (hta_table_set_str(tb, row, HTA_INFO_RANKS_DEVICES, devs)) goto oom;
        if (r->n) {
            hta_table_set_int(tb, row, HTA_INFO_RANKS_START, lo);
            hta_table_set_float(tb, row, HTA_INFO_RANKS_SPAN, (double)(hi - lo) / 1000.0);
        } else {
            hta_table_set_null(tb, row, HTA_INFO_RANKS_START);
        }
        hta_table_set_int(tb, row, HTA_INFO_RANKS_STEPS, nsteps);
        if (nsteps) {
            hta_table_set_int(tb, row, HTA_INFO_RANKS_FIRST_STEP, first);
            hta_table_set_int(tb, row, HTA_INFO_RANKS_LAST_STEP, last);
        } else {
            hta_table_set_null(tb, row, HTA_INFO_RANKS_FIRST_STEP);
            hta_table_set_null(tb, row, HTA_INFO_RANKS_LAST_STEP);
        }
        /* whether HTA rounds this file's times to whole us (TF§6): the reason numbers differ from HTA's
         * unless --hta-compat */
        hta_table_set_int(tb, row, HTA_INFO_RANKS_NS, r->ts_fractional);
        hta_table_set_int(tb, row, HTA_INFO_RANKS_BYTES_READ, (int64_t)r->bytes_in);
        hta_table_set_int(tb, row, HTA_INFO_RANKS_BYTES_JSON, (int64_t)r->bytes_json);
        hta_table_set_float(tb, row, HTA_INFO_RANKS_LOAD_S, r->load_seconds);
    }
    free(stepno);
    if (hta_result_add(out, tb)) return hta_oom(err);
    return HTA_OK;
oom:
    free(stepno);
    hta_table_free(tb);
    return hta_oom(err);
}

/* events per category: in the file, and in HTA's table (after its filter) */
static hta_status categories_table(hta_ctx *ctx, size_t ns, hta_result *out, hta_error *err) {
    const hta_trace *t = ctx->trace;
    hta_table *tb = hta_table_from_def(&HTA_INFO_CATEGORIES_TABLE);
    if (!tb) return hta_oom(err);
    size_t nc = t->ncats;
    int64_t *ev = malloc((nc ? nc : 1) * sizeof *ev), *rw = malloc((nc ? nc : 1) * sizeof *rw);
    size_t *ord = malloc((nc ? nc : 1) * sizeof *ord);
    if (!ev || !rw || !ord) {
        free(ev);
        free(rw);
        free(ord);
        goto oom;
    }
    /* categories by name, so the output does not depend on which category the file happened to show first
     * (indexes are in first-seen order); insertion sort: a trace has a few dozen categories */
    for (size_t c = 0; c < nc; c++) ord[c] = c;
    for (size_t a = 1; a < nc; a++)
        for (size_t b = a; b > 0 && strcmp(hta_sym(t->sym, t->cats[ord[b - 1]]), hta_sym(t->sym, t->cats[ord[b]])) > 0; b--) {
            size_t x = ord[b];
            ord[b] = ord[b - 1];
            ord[b - 1] = x;
        }
    hta_status st = HTA_OK;
    for (size_t k = 0; k < ns && !st; k++) {
        const hta_rank *r = t->ranks[k];
        memset(ev, 0, nc * sizeof *ev);
        memset(rw, 0, nc * sizeof *rw);
        for (size_t i = 0; i < r->n; i++) ev[r->cat[i]]++;
        const hta_view *v;
        if ((st = hta_ctx_view(ctx, k, &v, err))) break;
        /* The view is HTA's table after its filter; it is given back at once, so one rank's view is held
         * at a time. */
        for (size_t i = 0; i < v->n; i++) rw[r->cat[v->row[i]]]++;
        hta_ctx_view_done(ctx, k);
        for (size_t c = 0; c < nc; c++) {
            size_t cc = ord[c];
            /* a category only other ranks have gets no row for this rank: category indexes are shared by
             * all ranks */
            if (!ev[cc]) continue;
            long row = hta_table_add_row(tb);
            if (row < 0 || hta_table_set_str(tb, row, HTA_INFO_CATEGORIES_CAT, hta_sym(t->sym, t->cats[cc]))) {
                st = hta_oom(err);
                break;
            }
            hta_table_set_int(tb, row, HTA_INFO_CATEGORIES_RANK, r->rank);
            hta_table_set_int(tb, row, HTA_INFO_CATEGORIES_EVENTS, ev[cc]);
            hta_table_set_int(tb, row, HTA_INFO_CATEGORIES_ROWS, rw[cc]);
        }
    }
    free(ev);
    free(rw);
    free(ord);
    if (st) {
        hta_table_free(tb);
        return st;
    }
    if (hta_result_add(out, tb)) return hta_oom(err);
    return HTA_OK;
oom:
    hta_table_free(tb);
    return hta_oom(err);
}

static hta_status streams_table(const hta_trace *t, size_t ns, hta_result *out,
                                hta_error *err) {
    hta_table *tb = hta_table_from_def(&HTA_INFO_STREAMS_TABLE);
    if (!tb) return hta_oom(err);
    hta_cat_class *cc = malloc((t->ncats ? t->ncats : 1) * sizeof *cc);
    if (!cc) goto oom;
    /* classified once per category: rows are then tested by index */
    for (size_t c = 0; c < t->ncats; c++) cc[c] = hta_cat_classify(hta_sym(t->sym, t->cats[c]));
    for (size_t k = 0; k < ns; k++) {
        const hta_rank *r = t->ranks[k];
        /* r->stream[] is an index into the rank's distinct streams, so a dense array replaces any lookup. */
        int64_t *acc = calloc(3 * r->nstreams, sizeof *acc); /* rows, kernels, busy ns per stream */
        if (!acc) {
            free(cc);
            goto oom;
        }
        for (size_t i = 0; i < r->n; i++) {
            int64_t *a = acc + 3 * r->stream[i];
            hta_cat_class c = cc[r->cat[i]];
            a[0]++;
            a[1] += c == HTA_CC_KERNEL;
            /* busy time is GPU work only, not sync records (Quirk A2); a sum, so overlapping rows on a
             * stream count twice */
            if (c == HTA_CC_KERNEL || c == HTA_CC_MEMCPY || c == HTA_CC_MEMSET) a[2] += r->dur[i];
        }
        /* every stream the rank has, in first-seen order (the order of its stream indexes); busy time in
         * us, from exact ns */
        for (size_t s = 1; s < r->nstreams; s++) {
            long row = hta_table_add_row(tb);
            if (row < 0) {
                free(acc);
                free(cc);
                goto oom;
            }
            hta_table_set_int(tb, row, HTA_INFO_STREAMS_RANK, r->rank);
            hta_table_set_int(tb, row, HTA_INFO_STREAMS_STREAM, r->streams[s]);
            hta_table_set_int(tb, row, HTA_INFO_STREAMS_ROWS, acc[3 * s]);
            hta_table_set_int(tb, row, HTA_INFO_STREAMS_KERNELS, acc[3 * s + 1]);
            hta_table_set_float(tb, row, HTA_INFO_STREAMS_BUSY, (double)acc[3 * s + 2] / 1000.0);
        }
        free(acc);
    }
    free(cc);
    if (hta_result_add(out, tb)) return hta_oom(err);
    return HTA_OK;
oom:
    hta_table_free(tb);
    return hta_oom(err);
}

hta_status hta_info(hta_ctx *ctx, hta_result *out, hta_error *err) {
    const hta_trace *t = ctx->trace;
    size_t ns = hta_ctx_nranks(ctx);
    hta_status st = ranks_table(t, ns, out, err);
    if (!st) st = categories_table(ctx, ns, out, err);
    if (!st) st = streams_table(t, ns, out, err);
    return st;
}
