/* The run context: everything one run of hta works on and derives once.
 *
 * It owns the loaded ranks (exactly the selected ones: `--ranks` reaches the
 * loader, which opens only the files of those ranks), the time origin of the
 * run, each rank's HTA view (built on first use, then shared by every
 * analysis of the run) and a scratch arena for the analysis being run.
 * Every analysis, the critical path and merge take a context; the options a
 * context is opened with never reach them in any other shape.
 *
 * Times: by default every time keeps the trace's own clock (the nanoseconds as
 * written), so which ranks are selected never changes a row's time.  With
 * hta_compat the origin is Python HTA's: the earliest start over the loaded
 * ranks (spec TF§10.1).
 *
 * A window (hta/view.h: a time range or an annotation's instances) is applied
 * here once: the rows outside it are marked at open, every view leaves them
 * out as the iteration filter leaves rows out, and the few analyses that read
 * a rank's rows directly ask hta_ctx_window_rows.  A trace without
 * ProfilerStep is one window, the whole trace.
 *
 * A context is used by one thread at a time. */
#ifndef HTA_CONTEXT_H
#define HTA_CONTEXT_H

#include "hta/arena.h"
#include "hta/trace.h"
#include "hta/view.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hta_ctx_opts {
    const int32_t *ranks;  /* load only these ranks (NULL = all); copied */
    size_t nranks;
    hta_view_opts view;    /* how HTA's table of each rank is formed */
    int hta_compat;        /* Python HTA's numbers exactly, quirks included (its time origin,
                            * its iteration filter over all ranks, its rules where analyses differ) */
    int threads;           /* ranks loaded in parallel; 0 = number of CPUs */
    hta_window window;     /* the part of each rank analysed (kind HTA_WINDOW_NONE: all of it); its spec
                            * text must outlive the context */
    hta_warn_fn warn;      /* loader warnings; may be NULL */
    void *warn_ctx;
    hta_progress_fn progress; /* loader progress (from loader threads); may be NULL */
    void *progress_ctx;
} hta_ctx_opts;

typedef struct hta_ctx {
    hta_trace *trace;      /* owned: the selected ranks, ascending */
    hta_view_opts view;
    int hta_compat;
    int64_t origin_ns;     /* absolute ns of time 0 in every view (0: the trace's own clock) */
    hta_view *views;       /* per rank, built on first use */
    unsigned char *built;  /* views[k] is valid */
    int multi_step_all;    /* hta_compat: >= 2 ProfilerStep names over all loaded ranks */
    int keep_views;        /* hta_ctx_view_done keeps the views (several analyses will use them) */
    hta_window window;     /* as opened */
    unsigned char **win;   /* with a window: per rank, per row, 1 = inside it; NULL without */
    hta_arena scratch;     /* per analysis call: take a mark, reset to it on return */
} hta_ctx;

/* Loads path (a trace file or a folder of rank files) as o says. */
hta_status hta_ctx_open(const char *path, const hta_ctx_opts *o, hta_ctx **out, hta_error *err);
/* A context over an already loaded trace (taken over: freed with the context). */
hta_status hta_ctx_adopt(hta_trace *t, const hta_ctx_opts *o, hta_ctx **out, hta_error *err);
void hta_ctx_free(hta_ctx *c);

static inline size_t hta_ctx_nranks(const hta_ctx *c) { return c->trace->nranks; }
static inline const hta_rank *hta_ctx_rank(const hta_ctx *c, size_t k) { return c->trace->ranks[k]; }

/* Rank k's view with the context's options, built on first use.  A caller
 * done with it says so with hta_ctx_view_done: the view is then freed, so
 * an analysis that goes rank by rank holds one view at a time, unless the
 * context keeps views (hta_ctx_keep_views) because several analyses of the
 * run will read them (the report). */
hta_status hta_ctx_view(hta_ctx *c, size_t k, const hta_view **v, hta_error *err);
void hta_ctx_view_done(hta_ctx *c, size_t k);
/* keep = 1: views stay built until the context is freed or keep goes back to
 * 0 (which frees them); returns the previous setting. */
int hta_ctx_keep_views(hta_ctx *c, int keep);
/* Rank k's view with other options (same origin and filter rule), owned by
 * the caller: free with hta_view_free. */
hta_status hta_ctx_view_with(const hta_ctx *c, size_t k, const hta_view_opts *vo, hta_view *v,
                             hta_error *err);
/* Frees every cached view (the next hta_ctx_view builds it again): for a
 * caller that is done with the views, or a benchmark that times the build. */
void hta_ctx_release_views(hta_ctx *c);
/* With a window: per row of rank k, 1 when the row is inside it; NULL when the run has no window (every
 * row is in).  For analyses that read a rank's rows instead of its view. */
static inline const unsigned char *hta_ctx_window_rows(const hta_ctx *c, size_t k) {
    return c->win ? c->win[k] : NULL;
}
/* Index of `rank` among the loaded ranks, or -1. */
long hta_ctx_find_rank(const hta_ctx *c, int32_t rank);

#ifdef __cplusplus
}
#endif
#endif
