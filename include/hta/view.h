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
} hta_view_frame;

/* The origin HTA aligns all ranks to: min over every row of every rank of the
 * (rounded, in HTA_TIME_HTA mode) start time. */
int64_t hta_trace_origin(const hta_trace *t, hta_time_mode mode);
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
