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
    const char *const *comm_globs; /* --comm-kernel: more kernel names (fnmatch globs) that are
                            * communication, with either rule; the strings and the array must
                            * outlive the context */
    size_t ncomm_globs;
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
    const char *const *comm_globs; /* as opened */
    size_t ncomm_globs;
    uint8_t **ktypes;      /* per rank, per row: its kernel type, built on first use (hta_ctx_kernel_types) */
    unsigned char **win;   /* with a window: per rank, per row, 1 = inside it; NULL without */
    hta_arena scratch;     /* per analysis call: take a mark, reset to it on return */
    struct hta_ctx_kept *kept; /* per rank: what a caller built from it and left with the context
                            * (hta_ctx_leave), and whether its rows were released */
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
/* Per row of rank k, its kernel type (hta_kernel_type, hta/vocab.h), meaningful for the device rows: the
 * one classification of kernels that the breakdowns (kernels, temporal, overlap, idle) and the report
 * read.  By default: the corrected name rule (hta_kernel_type_of: NCCL, RCCL, MSCCL, DeepEP, NVSHMEM,
 * custom all-reduce), and a computation kernel launched from inside a communication operator
 * (hta_is_comm_op_name: c10d::*, record_param_comms) is communication too, found through the launch's
 * call stack (trace/derive.c's partner and parents).  With hta_compat: HTA's get_kernel_type.  Either
 * way a name matching a --comm-kernel glob is communication.  Computed once per rank, on first use, and
 * kept with the context. */
hta_status hta_ctx_kernel_types(hta_ctx *c, size_t k, const uint8_t **types, hta_error *err);
/* Analyses the rows of window w from now on (kind HTA_WINDOW_NONE: every row): the rows are marked
 * again and the views dropped; the ranks stay loaded.  w's spec text must outlive the context.  On
 * failure (no row in w: HTA_ENODATA) the context keeps no window. */
hta_status hta_ctx_set_window(hta_ctx *c, const hta_window *w, hta_error *err);
/* Index of `rank` among the loaded ranks, or -1. */
long hta_ctx_find_rank(const hta_ctx *c, int32_t rank);

/* ---- what outlives a rank's rows ----
 *
 * A caller that built what its later passes read from rank k (the simulation graph) gives the rows back
 * before it goes on, so that the rank's model and what was built from it are not held at once: the rank's
 * views, kernel types and window marks go with them, and it keeps only what names it and the columns in keep
 * (hta_rank_release_rows: a caller may give the columns it no longer reads back first, then the rest, keep 0).
 * Nothing may read a column released; hta_ctx_rows_released says which ranks have none left.  What was built can
 * stay with the context for a later pass over it (the report's parts leave each rank's graph for the
 * savings, hta_job_opts.keep): hta_ctx_leave puts it there, hta_ctx_take takes it back (NULL: none), and
 * hta_ctx_free frees what was never taken, with the function given. */
void hta_ctx_release_rows(hta_ctx *c, size_t k, unsigned keep);
int hta_ctx_rows_released(const hta_ctx *c, size_t k);
hta_status hta_ctx_leave(hta_ctx *c, size_t k, void *p, void (*free_fn)(void *), hta_error *err);
void *hta_ctx_take(hta_ctx *c, size_t k);

/* ---- the per-rank iteration: bounded memory for any number of ranks (docs/scaling.md) ----
 *
 * For work that looks at one rank at a time: fn runs on a context of one rank, for each file of a rank
 * plan (hta/trace.h, per_rank set), and the context is freed when fn returns, so at most `threads`
 * rank models are alive at once, whatever the number of ranks.  fn runs in worker threads, several at
 * once: it may touch only its context and what belongs to its index (a slot of its own per index: the
 * per-rank result or summary it keeps).  A context of one rank gives that rank's numbers exactly as the
 * context of all ranks does when the run keeps each rank's own clock and filter (not hta_compat) and
 * its window is decided per rank (not annot:NAME#K): hta_ctx_per_rank_ok says so. */
typedef hta_status (*hta_rank_fn)(hta_ctx *ctx, size_t index, void *user, hta_error *err);

typedef struct hta_each_opts {
    const size_t *which; /* indices into the plan's files to visit, any order (NULL = all, ascending) */
    size_t n;            /* how many (with which) */
    int threads;         /* contexts alive at once; 0 = number of CPUs */
    /* the loaders' warnings of file `index`, given from the calling thread after every file is done; NULL:
     * through o->warn */
    void (*warn_at)(void *user, size_t index, const char *msg);
    /* Contexts kept between iterations, per file of the plan (NULL: each is freed after its visit).  A file
     * with a context in keep[index] is visited on it, without loading; one without is loaded, and its
     * context stays in keep[index] (the caller frees them).  For several passes over a few ranks, where
     * the contexts alive at once would be as many anyway (no more than `threads` files). */
    hta_ctx **keep;
} hta_each_opts;

/* Visits every listed file.  On failure: the failing file first in the visiting order is reported
 * (whichever thread failed first), *failed = its index in the plan, *in_load = 1 when its load failed
 * (0: fn failed); files after a failure may not be visited.  A file that proves to be JSON without
 * traceEvents is skipped with a warning, as the whole load of a folder skips it: fn is not called.  The loaders' warnings are given through
 * o->warn from the calling thread, file by file in the visiting order, after every file is done. */
hta_status hta_ctx_each_rank(const hta_rank_plan *p, const hta_ctx_opts *o, const hta_each_opts *eo,
                             hta_rank_fn fn, void *user, size_t *failed, int *in_load, hta_error *err);
/* 1 when the per-rank iteration gives the numbers of the whole context for options o. */
int hta_ctx_per_rank_ok(const hta_ctx_opts *o);

#ifdef __cplusplus
}
#endif
#endif
