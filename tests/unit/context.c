/* Unit tests of the run context (hta/context.h): which ranks it loads, the
 * time origin it chooses, and the life of the per-rank views it shares --
 * built once, freed when an analysis is done with them unless the context
 * keeps them (the report), so a one-analysis run holds one view at a time; and the rows a caller gives back
 * once it has built what it reads of them (the simulation graph), and what it leaves with the context. */
#include <stdlib.h>

#include "hta/breakdown.h"
#include "hta/context.h"
#include "hta/report.h"
#include "hta/sim.h"
#include "unit.h"

#define TF "tests/data/hta/trace_filter"

static hta_ctx *open_tf(const int32_t *ranks, size_t n, int compat) {
    hta_ctx_opts o = {0};
    o.ranks = ranks;
    o.nranks = n;
    o.hta_compat = compat;
    o.threads = 1;
    hta_ctx *c = NULL;
    hta_error e = {0};
    if (hta_ctx_open(TF, &o, &c, &e) != HTA_OK) UNIT_FAIL("open: %s", e.msg);
    return c;
}

static size_t nbuilt(const hta_ctx *c) {
    size_t n = 0;
    for (size_t k = 0; k < hta_ctx_nranks(c); k++) n += c->built[k];
    return n;
}

static void selection_loads_only_the_selected_rank(void) {
    const int32_t one[] = {1};
    hta_ctx *c = open_tf(one, 1, 0);
    if (!c) return;
    CHECK_EQ_I64(hta_ctx_nranks(c), 1);
    CHECK_EQ_I64(hta_ctx_rank(c, 0)->rank, 1);
    CHECK_EQ_I64(hta_ctx_find_rank(c, 1), 0);
    CHECK_EQ_I64(hta_ctx_find_rank(c, 0), -1);
    hta_ctx_free(c);
}

static void origin_is_the_trace_clock_unless_hta_compat(void) {
    hta_ctx *own = open_tf(NULL, 0, 0), *hta = open_tf(NULL, 0, 1);
    if (!own || !hta) return;
    CHECK_EQ_I64(own->origin_ns, 0);
    /* HTA's origin: the earliest (rounded) start over the loaded ranks */
    CHECK_EQ_I64(hta->origin_ns, hta_trace_origin(hta->trace, HTA_TIME_HTA));
    CHECK(hta->origin_ns > 1000000000000000000LL); /* epoch ns of 2023 */
    const hta_view *a, *b;
    hta_error e;
    CHECK_EQ_I64(hta_ctx_view(own, 1, &a, &e), HTA_OK);
    CHECK_EQ_I64(hta_ctx_view(hta, 1, &b, &e), HTA_OK);
    CHECK_EQ_I64(a->n, b->n);
    CHECK_EQ_I64(a->ts[0] - b->ts[0], hta->origin_ns);
    hta_ctx_free(own);
    hta_ctx_free(hta);
}

static void a_view_is_built_once_and_freed_when_done(void) {
    hta_ctx *c = open_tf(NULL, 0, 0);
    if (!c) return;
    const hta_view *v1, *v2;
    hta_error e;
    CHECK_EQ_I64(hta_ctx_view(c, 0, &v1, &e), HTA_OK);
    CHECK_EQ_I64(hta_ctx_view(c, 0, &v2, &e), HTA_OK);
    CHECK(v1 == v2);
    CHECK_EQ_I64(nbuilt(c), 1);
    hta_ctx_view_done(c, 0);
    CHECK_EQ_I64(nbuilt(c), 0);
    /* kept: done leaves it, and turning keep off frees them all */
    CHECK_EQ_I64(hta_ctx_keep_views(c, 1), 0);
    CHECK_EQ_I64(hta_ctx_view(c, 0, &v1, &e), HTA_OK);
    CHECK_EQ_I64(hta_ctx_view(c, 1, &v2, &e), HTA_OK);
    hta_ctx_view_done(c, 0);
    CHECK_EQ_I64(nbuilt(c), 2);
    CHECK_EQ_I64(hta_ctx_keep_views(c, 0), 1);
    CHECK_EQ_I64(nbuilt(c), 0);
    hta_ctx_free(c);
}

static void analyses_leave_no_view_behind(void) {
    hta_ctx *c = open_tf(NULL, 0, 0);
    if (!c) return;
    hta_result r;
    hta_error e;
    hta_result_init(&r);
    CHECK_EQ_I64(hta_temporal_breakdown(c, NULL, &r, &e), HTA_OK);
    CHECK_EQ_I64(hta_idle_breakdown(c, NULL, &r, &e), HTA_OK);
    CHECK_EQ_I64(nbuilt(c), 0);
    hta_result_free(&r);
    /* the report keeps them while it runs and restores the setting */
    hta_result_init(&r);
    hta_report_opts ro;
    hta_report_opts_default(&ro);
    ro.critical_path = 0;
    CHECK_EQ_I64(hta_report(c, &ro, &r, &e), HTA_OK);
    CHECK_EQ_I64(c->keep_views, 0);
    CHECK_EQ_I64(nbuilt(c), 0);
    hta_result_free(&r);
    hta_ctx_free(c);
}

/* A graph built while its rows are released is the graph built from rows that stay; the rank keeps its name
 * and loses its rows, views and kernel types. */
static void a_graph_built_releasing_its_rows_is_the_same_graph(void) {
    hta_ctx *keep = open_tf(NULL, 0, 0), *rel = open_tf(NULL, 0, 0);
    if (!keep || !rel) return;
    hta_error e = {0};
    const uint8_t *kt;
    const hta_view *v;
    CHECK_EQ_I64(hta_ctx_view(rel, 1, &v, &e), HTA_OK);
    CHECK_EQ_I64(hta_ctx_kernel_types(rel, 1, &kt, &e), HTA_OK);
    hta_sim *a = NULL, *b = NULL;
    CHECK_EQ_I64(hta_sim_build(keep, 1, &a, &e), HTA_OK);
    CHECK_EQ_I64(hta_sim_build_release(rel, 1, &b, &e), HTA_OK);
    if (!a || !b) return;
    const hta_cp_graph *ga = hta_sim_graph(a), *gb = hta_sim_graph(b);
    CHECK(ga->nev > 100);
    CHECK_EQ_I64(gb->nev, ga->nev);
    CHECK_EQ_I64(gb->nnode, ga->nnode);
    CHECK_EQ_I64(gb->nedge, ga->nedge);
    int same = ga->nedge == gb->nedge && ga->nnode == gb->nnode;
    for (size_t i = 0; same && i < ga->nedge; i++)
        same = ga->edge[i].u == gb->edge[i].u && ga->edge[i].v == gb->edge[i].v && hta_cp_edge_w(ga, i) == hta_cp_edge_w(gb, i);
    for (size_t i = 0; same && i < ga->nnode; i++) same = hta_cp_node_ts(ga, i) == hta_cp_node_ts(gb, i);
    CHECK(same);
    /* the same schedule */
    int64_t *ta = malloc(ga->nnode * sizeof *ta), *tb = malloc(gb->nnode * sizeof *tb);
    CHECK_EQ_I64(hta_sim_run(a, NULL, ta, &e), HTA_OK);
    CHECK_EQ_I64(hta_sim_run(b, NULL, tb, &e), HTA_OK);
    CHECK(!memcmp(ta, tb, ga->nnode * sizeof *ta));
    free(ta), free(tb);
    /* rank 1 of rel is a name now: no rows, no view, no kernel types; rank 0 and keep's rank 1 are whole */
    CHECK(hta_ctx_rows_released(rel, 1));
    CHECK(!hta_ctx_rows_released(rel, 0));
    CHECK(!hta_ctx_rows_released(keep, 1));
    CHECK_EQ_I64(hta_ctx_rank(rel, 1)->n, 0);
    CHECK_EQ_I64(hta_ctx_rank(rel, 1)->rank, 1);
    CHECK(hta_ctx_rank(rel, 1)->ts == NULL && hta_ctx_rank(rel, 1)->args == NULL);
    CHECK(!rel->built[1] && rel->ktypes[1] == NULL);
    CHECK_EQ_I64(hta_ctx_rank(rel, 0)->n, hta_ctx_rank(keep, 0)->n);
    CHECK(hta_ctx_rank(keep, 1)->n > 0);
    hta_sim_free(a);
    hta_sim_free(b);
    hta_ctx_free(keep);
    hta_ctx_free(rel);
}

/* A partial release keeps the rows and the columns asked for. */
static void a_partial_release_keeps_the_columns_asked_for(void) {
    hta_ctx *c = open_tf(NULL, 0, 0);
    if (!c) return;
    size_t n = hta_ctx_rank(c, 0)->n;
    int64_t ts0 = hta_ctx_rank(c, 0)->ts[0];
    hta_ctx_release_rows(c, 0, HTA_COL_TS | HTA_COL_NAME);
    const hta_rank *r = hta_ctx_rank(c, 0);
    CHECK_EQ_I64(r->n, n);
    CHECK(r->ts != NULL && r->name != NULL);
    CHECK_EQ_I64(r->ts[0], ts0);
    CHECK(r->dur == NULL && r->args == NULL && r->flows == NULL && r->partner == NULL);
    CHECK_EQ_I64(r->nargs, 0);
    CHECK(!hta_ctx_rows_released(c, 0));
    hta_ctx_release_rows(c, 0, 0);
    CHECK(hta_ctx_rows_released(c, 0));
    CHECK_EQ_I64(hta_ctx_rank(c, 0)->n, 0);
    hta_ctx_free(c);
}

static int freed;
static void count_free(void *p) {
    freed++;
    free(p);
}

/* What is left with a context is given back once, or freed with the context. */
static void what_is_left_is_taken_once_or_freed_with_the_context(void) {
    hta_ctx *c = open_tf(NULL, 0, 0);
    if (!c) return;
    hta_error e = {0};
    freed = 0;
    CHECK(hta_ctx_take(c, 0) == NULL);
    void *p = malloc(8);
    CHECK_EQ_I64(hta_ctx_leave(c, 0, p, count_free, &e), HTA_OK);
    CHECK(hta_ctx_take(c, 1) == NULL);
    CHECK(hta_ctx_take(c, 0) == p);
    CHECK(hta_ctx_take(c, 0) == NULL);
    free(p);
    CHECK_EQ_I64(hta_ctx_leave(c, 1, malloc(8), count_free, &e), HTA_OK);
    CHECK_EQ_I64(freed, 0);
    hta_ctx_free(c);
    CHECK_EQ_I64(freed, 1);
}

UNIT_MAIN(T(selection_loads_only_the_selected_rank), T(origin_is_the_trace_clock_unless_hta_compat),
          T(a_view_is_built_once_and_freed_when_done), T(analyses_leave_no_view_behind),
          T(a_graph_built_releasing_its_rows_is_the_same_graph), T(a_partial_release_keeps_the_columns_asked_for),
          T(what_is_left_is_taken_once_or_freed_with_the_context))
