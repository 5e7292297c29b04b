/* `hta events`: one table of rows, with the derived links as event indexes. */
#include <stdlib.h>
#include <string.h>

#include "hta/analysis.h"

HTA_TABLE_DEFINE(HTA_EVENTS);

void hta_events_opts_default(hta_events_opts *o) { memset(o, 0, sizeof *o); }

hta_status hta_events(hta_ctx *ctx, const hta_events_opts *eo,
                      hta_result *out, hta_error *err) {
    const hta_trace *t = ctx->trace;
    size_t ns = hta_ctx_nranks(ctx);
    hta_table *tb = hta_table_from_def(&HTA_EVENTS_TABLE);
    hta_status st = HTA_OK;
    if (!tb) goto oom;
    for (size_t k = 0; k < ns; k++) {
        const hta_rank *r = t->ranks[k];
        const hta_view *v = NULL;
        int use_view = eo->hta_table;
        if (use_view && (st = hta_ctx_view(ctx, k, &v, err))) goto fail;
        size_t n = use_view ? v->n : r->n;
        /* the rows as written, but only the window's when there is one (the view has only those) */
        const unsigned char *win = use_view ? NULL : hta_ctx_window_rows(ctx, k);
        long emitted = 0;
        for (size_t j = 0; j < n && (eo->limit <= 0 || emitted < eo->limit); j++) {
            size_t i = use_view ? v->row[j] : j;
            if (win && !win[i]) continue;
            const char *cat = hta_sym(t->sym, hta_row_cat_sym(t, r, i));
            const char *nm = hta_sym(t->sym, r->name[i]);
            if (eo->cat && strcmp(cat, eo->cat)) continue;
            if (eo->name && !strstr(nm, eo->name)) continue;
            long row = hta_table_add_row(tb);
            if (row < 0 || hta_table_set_str(tb, row, HTA_EVENTS_CAT, cat) ||
                hta_table_set_str(tb, row, HTA_EVENTS_NAME, nm)) {
                goto oom;
            }
            const hta_thread *th = hta_row_thread(r, i);
            hta_table_set_int(tb, row, HTA_EVENTS_RANK, r->rank);
            hta_table_set_int(tb, row, HTA_EVENTS_INDEX, r->index[i]);
            hta_table_set_int(tb, row, HTA_EVENTS_PID, th->pid);
            hta_table_set_int(tb, row, HTA_EVENTS_TID, th->tid);
            hta_table_set_int(tb, row, HTA_EVENTS_TS, use_view ? v->ts[j] : r->ts[i]);
            hta_table_set_int(tb, row, HTA_EVENTS_DUR, use_view ? v->dur[j] : r->dur[i]);
            hta_table_set_int(tb, row, HTA_EVENTS_STREAM, hta_row_stream(r, i));
            hta_table_set_int(tb, row, HTA_EVENTS_CORRELATION, r->correlation[i]);
            hta_table_set_int(tb, row, HTA_EVENTS_EXTERNAL_ID, r->external_id[i]);
            if (r->partner[i] >= 0) hta_table_set_int(tb, row, HTA_EVENTS_PARTNER, r->index[r->partner[i]]);
            else hta_table_set_null(tb, row, HTA_EVENTS_PARTNER);
            if (r->parent[i] >= 0) hta_table_set_int(tb, row, HTA_EVENTS_PARENT, r->index[r->parent[i]]);
            else hta_table_set_null(tb, row, HTA_EVENTS_PARENT);
            hta_table_set_int(tb, row, HTA_EVENTS_DEPTH, r->depth[i]);
            if (r->iteration[i] == HTA_ITER_NAN) hta_table_set_null(tb, row, HTA_EVENTS_ITERATION);
            else hta_table_set_int(tb, row, HTA_EVENTS_ITERATION, r->iteration[i]);
            emitted++;
        }
        if (use_view) hta_ctx_view_done(ctx, k);
    }
    if (hta_result_add(out, tb)) return hta_oom(err);
    return HTA_OK;
oom:
    st = hta_oom(err);
fail:
    hta_table_free(tb);
    return st;
}
