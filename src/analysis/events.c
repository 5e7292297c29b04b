/* `hta events`: one table of rows, with the derived links as event indexes. */
#include <stdlib.h>
#include <string.h>

#include "hta/analysis.h"

void hta_events_opts_default(hta_events_opts *o) { memset(o, 0, sizeof *o); }

hta_status hta_events(hta_ctx *ctx, const hta_events_opts *eo,
                      hta_result *out, hta_error *err) {
    const hta_trace *t = ctx->trace;
    static const hta_col_spec cols[] = {
        {"rank", HTA_COL_INT},   {"index", HTA_COL_INT},    {"cat", HTA_COL_STR},
        {"name", HTA_COL_STR},   {"pid", HTA_COL_INT},      {"tid", HTA_COL_INT},
        {"ts_ns", HTA_COL_INT},  {"dur_ns", HTA_COL_INT},   {"stream", HTA_COL_INT},
        {"correlation", HTA_COL_INT}, {"external_id", HTA_COL_INT}, {"partner", HTA_COL_INT},
        {"parent", HTA_COL_INT}, {"depth", HTA_COL_INT},    {"iteration", HTA_COL_INT},
    };
    size_t ns = hta_ctx_nranks(ctx);
    hta_table *tb = hta_table_new_with("events", cols, sizeof cols / sizeof *cols);
    hta_status st = HTA_OK;
    if (!tb) goto oom;
    for (size_t k = 0; k < ns; k++) {
        const hta_rank *r = t->ranks[k];
        const hta_view *v = NULL;
        int use_view = eo->hta_table;
        if (use_view && (st = hta_ctx_view(ctx, k, &v, err))) goto fail;
        size_t n = use_view ? v->n : r->n;
        long emitted = 0;
        for (size_t j = 0; j < n && (eo->limit <= 0 || emitted < eo->limit); j++) {
            size_t i = use_view ? v->row[j] : j;
            const char *cat = hta_sym(t->sym, hta_row_cat_sym(t, r, i));
            const char *nm = hta_sym(t->sym, r->name[i]);
            if (eo->cat && strcmp(cat, eo->cat)) continue;
            if (eo->name && !strstr(nm, eo->name)) continue;
            long row = hta_table_add_row(tb);
            if (row < 0 || hta_table_set_str(tb, row, 2, cat) || hta_table_set_str(tb, row, 3, nm)) {
                goto oom;
            }
            const hta_thread *th = hta_row_thread(r, i);
            hta_table_set_int(tb, row, 0, r->rank);
            hta_table_set_int(tb, row, 1, r->index[i]);
            hta_table_set_int(tb, row, 4, th->pid);
            hta_table_set_int(tb, row, 5, th->tid);
            hta_table_set_int(tb, row, 6, use_view ? v->ts[j] : r->ts[i]);
            hta_table_set_int(tb, row, 7, use_view ? v->dur[j] : r->dur[i]);
            hta_table_set_int(tb, row, 8, hta_row_stream(r, i));
            hta_table_set_int(tb, row, 9, r->correlation[i]);
            hta_table_set_int(tb, row, 10, r->external_id[i]);
            if (r->partner[i] >= 0) hta_table_set_int(tb, row, 11, r->index[r->partner[i]]);
            else hta_table_set_null(tb, row, 11);
            if (r->parent[i] >= 0) hta_table_set_int(tb, row, 12, r->index[r->parent[i]]);
            else hta_table_set_null(tb, row, 12);
            hta_table_set_int(tb, row, 13, r->depth[i]);
            if (r->iteration[i] == HTA_ITER_NAN) hta_table_set_null(tb, row, 14);
            else hta_table_set_int(tb, row, 14, r->iteration[i]);
            emitted++;
        }
    }
    if (hta_result_add(out, tb)) return hta_oom(err);
    return HTA_OK;
oom:
    st = hta_oom(err);
fail:
    hta_table_free(tb);
    return st;
}
