/* HTA's view of one rank: the table Python HTA's load_traces() hands to its
 * analyses.  Rows outside the profiled iterations are dropped (TF§10.2), the
 * rows come GPU block first then CPU block as HTA orders them, and times are
 * relative to an origin the run context chooses (hta/context.h): the trace's
 * own clock by default, HTA's earliest event of all ranks with --hta-compat.
 *
 * Times are int64 ns.  HTA_TIME_HTA reproduces HTA's rounding of traces with
 * fractional microseconds (start up to the next whole us, end down to the
 * previous one) except that a duration never goes negative (HTA's quirk Q6
 * gives -1 us); HTA_TIME_EXACT keeps the nanoseconds as written.
 */
#ifndef HTA_VIEW_H
#define HTA_VIEW_H

#include "hta/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum hta_time_mode { HTA_TIME_EXACT = 0, HTA_TIME_HTA = 1 } hta_time_mode;

typedef struct hta_view_opts {
    hta_time_mode time_mode;
    int include_last_profiler_step; /* HTA's include_last_profiler_step */
    int no_filter;                  /* keep every row, in file order */
    /* HTA's inner join exactly (TF§10.2 step 4, --hta-compat): a GPU row stays only with a kept CPU row of
     * its correlation, so work whose launch is not in the trace goes.  0 (the default): such a row
     * (MIOpen's transposes, copies, kernels launched before the profiler started) stays by its own start,
     * as a window keeps it (docs/differences-from-hta.md). */
    int hta_join;
} hta_view_opts;

typedef struct hta_view {
    const hta_trace *t;
    const hta_rank *r;
    size_t n;
    uint32_t *row;  /* row of r for each view position */
    int64_t *ts;    /* ns relative to origin_ns */
    int64_t *dur;   /* ns, >= 0 */
    int64_t origin_ns; /* absolute ns subtracted from ts */
} hta_view;

/* What a rank's view needs from the whole run, decided once by the run
 * context instead of scanning every rank at each view build. */
typedef struct hta_view_frame {
    int64_t origin_ns; /* subtracted from every start time */
    int multi_step;    /* 1: HTA's iteration filter applies (>= 2 ProfilerStep names), 0: not,
                        * -1: decide from this rank's own steps */
    const unsigned char *window; /* per row of the rank: 1 = inside the window (hta_window_rows);
                                  * NULL = no window.  A window replaces the iteration filter: it
                                  * decides which rows stay, the filter's rule only their order. */
} hta_view_frame;

/* ---- windows (--window): the part of each rank's trace the analyses see ----
 *
 *   START:END          a time range, from the rank's first event (as a timeline viewer shows it);
 *                      each end a number with unit ns, us (default), ms or s ("10ms:25ms",
 *                      "1500:2500", "2.5ms:", ":1s"); an empty end is open
 *   annot:NAME         every instance of the CPU events named NAME (exact, or a glob with * ? [..]):
 *                      a user_annotation, ProfilerStep#N, a record_function range, an operator
 *   annot:NAME#K       only the K-th instance of each rank (from 0, by start time); used only when
 *                      no event is named NAME#K itself, so annot:ProfilerStep#3 is step 3
 *
 * A row is in the window when its start lies in the range (start <= t < end) or in one of the
 * instances' spans (an instance of zero duration holds its own start); a GPU row (on a stream) with a
 * launch belongs where its launch starts, one without (NCCL on a side stream with no correlation, a
 * gpu_user_annotation) by its own start.  Times in the run's time mode. */
typedef enum hta_window_kind { HTA_WINDOW_NONE = 0, HTA_WINDOW_TIME, HTA_WINDOW_ANNOT } hta_window_kind;

typedef struct hta_window {
    hta_window_kind kind;
    int64_t start_ns, end_ns; /* TIME: from the rank's first event; INT64_MIN / INT64_MAX when open */
    const char *name;         /* ANNOT: NAME or NAME#K as written (points into the spec) */
    size_t name_len;          /* its length */
    size_t base_len;          /* ANNOT with a #K suffix: length of NAME without it; else name_len */
    int64_t instance;         /* ANNOT: K of the #K suffix, -1 without one */
    const char *spec;         /* the text parsed (not copied: must outlive the window) */
} hta_window;

/* Parses spec into w (see above).  HTA_EINVAL with a message naming spec when it is malformed. */
hta_status hta_window_parse(const char *spec, hta_window *w, hta_error *err);

/* Marks the rows of every rank of t inside w: keep[k][i] = 1 for row i of rank k (keep[k] has
 * t->ranks[k]->n entries, filled here).  NAME#K is resolved once for all ranks (K-th instance only
 * when no rank has an event matching NAME#K as a whole).  HTA_ENODATA with a message naming the window
 * when no row of any rank is in it. */
hta_status hta_window_rows(const hta_trace *t, const hta_window *w, hta_time_mode mode, unsigned char **keep,
                           hta_error *err);

/* The origin HTA aligns all ranks to: min over every row of every rank of the
 * (rounded, in HTA_TIME_HTA mode) start time. */
int64_t hta_trace_origin(const hta_trace *t, hta_time_mode mode);

/* The N of symbol s's ProfilerStep#N (-1: s names no step), remembered in memo (one int64 a symbol,
 * zeroed by the caller: 0 is not yet asked; NULL asks every time): rows are many and their names few, and
 * the question is a string compare, which row by row was a serial tenth of `info` after a split load. */
int64_t hta_sym_step(const hta_trace *t, uint32_t s, int64_t *memo);

/* 1 when ranks[ri] (or, with ri == SIZE_MAX, all ranks together) hold two or
 * more distinct ProfilerStep#N names: HTA's |P| >= 2 (TF§10.2). */
int hta_trace_multi_step(const hta_trace *t, size_t ri);

/* Fills v for rank t->ranks[ri].  Free with hta_view_free. */
hta_status hta_view_build(const hta_trace *t, size_t ri, const hta_view_opts *o,
                          const hta_view_frame *f, hta_view *v, hta_error *err);
void hta_view_free(hta_view *v);

/* Start and end of row i of r in the given mode, absolute ns. */
void hta_row_times(const hta_rank *r, size_t i, hta_time_mode mode, int64_t *ts, int64_t *end);

#ifdef __cplusplus
}
#endif
#endif
