/* Unit tests of the run context (hta/context.h): which ranks it loads, the
 * time origin it chooses, and the life of the per-rank views it shares --
 * built once, freed when an analysis is done with them unless the context
 * keeps them (the report), so a one-analysis run holds one view at a time. */
#include "hta/breakdown.h"
#include "hta/context.h"
#include "hta/report.h"
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

UNIT_MAIN(T(selection_loads_only_the_selected_rank), T(origin_is_the_trace_clock_unless_hta_compat),
          T(a_view_is_built_once_and_freed_when_done), T(analyses_leave_no_view_behind))
