/* The run context (hta/context.h): opens the selected ranks, decides the time
 * origin, the iteration-filter rule and the rows of the window once, and keeps
 * each rank's view. */
#include "hta/context.h"

#include <stdlib.h>
#include <string.h>

/* Marks the rows of c->window (none: frees the marks). */
static hta_status mark_window(hta_ctx *c, hta_error *err) {
    size_t n = c->trace->nranks;
    if (c->win)
        for (size_t k = 0; k < n; k++) free(c->win[k]);
    free(c->win);
    c->win = NULL;
    if (c->window.kind == HTA_WINDOW_NONE) return HTA_OK;
    /* marked once in the run's time mode: every view and every analysis then sees the same rows */
    c->win = calloc(n ? n : 1, sizeof *c->win);
    if (!c->win) return hta_oom(err);
    for (size_t k = 0; k < n; k++)
        if (!(c->win[k] = malloc(c->trace->ranks[k]->n ? c->trace->ranks[k]->n : 1))) return hta_oom(err);
    return hta_window_rows(c->trace, &c->window, c->view.time_mode, c->win, err);
}

static hta_status finish(hta_ctx *c, const hta_ctx_opts *o, hta_error *err) {
    static const hta_ctx_opts none;
    if (!o) o = &none;
    c->view = o->view;
    c->hta_compat = o->hta_compat;
    /* exact nanoseconds unless HTA's numbers are asked for: then its whole-us rounding */
    c->view.time_mode = o->hta_compat ? HTA_TIME_HTA : HTA_TIME_EXACT;
    c->view.hta_join = o->hta_compat;
    size_t n = c->trace->nranks;
    c->views = calloc(n ? n : 1, sizeof *c->views);
    c->built = calloc(n ? n : 1, 1);
    if (!c->views || !c->built) return hta_oom(err);
    /* HTA aligns the loaded ranks to their earliest event and filters
     * iterations when the loaded ranks together name two steps; by default
     * each rank is judged alone and keeps its own clock, so that loading
     * fewer ranks changes nothing about the ones loaded. */
    if (c->hta_compat) {
        c->origin_ns = hta_trace_origin(c->trace, c->view.time_mode);
        c->multi_step_all = hta_trace_multi_step(c->trace, SIZE_MAX);
    } else {
        c->origin_ns = 0;
        c->multi_step_all = -1;
    }
    c->window = o->window;
    c->comm_globs = o->comm_globs;
    c->ncomm_globs = o->ncomm_globs;
    if (!(c->ktypes = calloc(n ? n : 1, sizeof *c->ktypes))) return hta_oom(err);
    return mark_window(c, err);
}

hta_status hta_ctx_set_window(hta_ctx *c, const hta_window *w, hta_error *err) {
    hta_ctx_release_views(c);
    c->window = *w;
    hta_status st = mark_window(c, err);
    if (st) {
        /* the whole trace rather than a window half marked */
        c->window.kind = HTA_WINDOW_NONE;
        mark_window(c, NULL);
    }
    return st;
}

hta_status hta_ctx_adopt(hta_trace *t, const hta_ctx_opts *o, hta_ctx **out, hta_error *err) {
    *out = NULL;
    hta_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        hta_trace_free(t);
        return hta_oom(err);
    }
    c->trace = t;
    hta_status st = finish(c, o, err);
    if (st) {
        hta_ctx_free(c);
        return st;
    }
    *out = c;
    return HTA_OK;
}

hta_status hta_ctx_open(const char *path, const hta_ctx_opts *o, hta_ctx **out, hta_error *err) {
    static const hta_ctx_opts none;
    if (!o) o = &none;
    hta_load_opts lo = {0};
    lo.threads = o->threads;
    lo.warn = o->warn;
    lo.warn_ctx = o->warn_ctx;
    lo.progress = o->progress;
    lo.progress_ctx = o->progress_ctx;
    lo.only_ranks = o->ranks;
    lo.n_only_ranks = o->nranks;
    lo.hta_streams = o->hta_compat;
    lo.hta_names = o->hta_compat;
    hta_trace *t;
    *out = NULL;
    HTA_TRY(hta_trace_load(path, &lo, &t, err));
    return hta_ctx_adopt(t, o, out, err);
}

/* Per rank: what outlives its rows (hta_ctx_leave). */
struct hta_ctx_kept {
    void *p;
    void (*free_fn)(void *);
    int released;
};

void hta_ctx_free(hta_ctx *c) {
    if (!c) return;
    for (size_t k = 0; c->kept && k < c->trace->nranks; k++)
        if (c->kept[k].p) c->kept[k].free_fn(c->kept[k].p);
    free(c->kept);
    if (c->views)
        for (size_t k = 0; k < c->trace->nranks; k++)
            if (c->built[k]) hta_view_free(&c->views[k]);
    free(c->views);
    free(c->built);
    if (c->win)
        for (size_t k = 0; k < c->trace->nranks; k++) free(c->win[k]);
    free(c->win);
    if (c->ktypes)
        for (size_t k = 0; k < c->trace->nranks; k++) free(c->ktypes[k]);
    free(c->ktypes);
    hta_arena_free(&c->scratch);
    hta_trace_free(c->trace);
    free(c);
}

hta_status hta_ctx_view_with(const hta_ctx *c, size_t k, const hta_view_opts *vo, hta_view *v,
                             hta_error *err) {
    hta_view_frame f = {c->origin_ns, c->multi_step_all, hta_ctx_window_rows(c, k)};
    return hta_view_build(c->trace, k, vo, &f, v, err);
}

hta_status hta_ctx_view(hta_ctx *c, size_t k, const hta_view **v, hta_error *err) {
    if (!c->built[k]) {
        HTA_TRY(hta_ctx_view_with(c, k, &c->view, &c->views[k], err));
        c->built[k] = 1;
    }
    *v = &c->views[k];
    return HTA_OK;
}

void hta_ctx_view_done(hta_ctx *c, size_t k) {
    if (!c->keep_views && c->built[k]) hta_view_free(&c->views[k]), c->built[k] = 0;
}

int hta_ctx_keep_views(hta_ctx *c, int keep) {
    int old = c->keep_views;
    c->keep_views = keep;
    if (!keep) hta_ctx_release_views(c);
    return old;
}

void hta_ctx_release_views(hta_ctx *c) {
    for (size_t k = 0; k < c->trace->nranks; k++)
        if (c->built[k]) hta_view_free(&c->views[k]), c->built[k] = 0;
}

long hta_ctx_find_rank(const hta_ctx *c, int32_t rank) {
    for (size_t k = 0; k < c->trace->nranks; k++)
        if (c->trace->ranks[k]->rank == rank) return (long)k;
    return -1;
}

/* The per-rank slots, made on first use: most runs never release a rank. */
static int kept_slots(hta_ctx *c) {
    if (!c->kept) c->kept = calloc(c->trace->nranks ? c->trace->nranks : 1, sizeof *c->kept);
    return c->kept != NULL;
}

void hta_ctx_release_rows(hta_ctx *c, size_t k, unsigned keep) {
    if (c->built[k]) hta_view_free(&c->views[k]), c->built[k] = 0;
    hta_rank_release_rows(c->trace->ranks[k], keep);
    if (keep) return; /* the rows stay: their kernel types and window marks too */
    free(c->ktypes[k]), c->ktypes[k] = NULL;
    if (c->win) free(c->win[k]), c->win[k] = NULL;
    /* without the slot (out of memory) the rank reads as one of no rows, which it now is */
    if (kept_slots(c)) c->kept[k].released = 1;
}

int hta_ctx_rows_released(const hta_ctx *c, size_t k) { return c->kept && c->kept[k].released; }

hta_status hta_ctx_leave(hta_ctx *c, size_t k, void *p, void (*free_fn)(void *), hta_error *err) {
    if (!kept_slots(c)) {
        free_fn(p);
        return hta_oom(err);
    }
    if (c->kept[k].p) c->kept[k].free_fn(c->kept[k].p);
    c->kept[k].p = p, c->kept[k].free_fn = free_fn;
    return HTA_OK;
}

void *hta_ctx_take(hta_ctx *c, size_t k) {
    if (!c->kept || !c->kept[k].p) return NULL;
    void *p = c->kept[k].p;
    c->kept[k].p = NULL;
    return p;
}
