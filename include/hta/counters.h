/* Counter analyses (queue length, memory bandwidth, analyses.md §10-§11),
 * traces augmented with counter tracks, frequent kernel sequences (§12),
 * trace diff (§15) and CUPTI range-profiler counters (§13). */
#ifndef HTA_COUNTERS_H
#define HTA_COUNTERS_H

#include "hta/analysis.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How ties in time are ordered before the running sums.  HTA sorts with
 * numpy's unstable quicksort; hta orders ties by the table's own order
 * (launches before device activity, then HTA's row order).  The numpy order
 * is kept only to show that a difference from HTA is tie order alone. */
typedef enum hta_tie_order { HTA_TIES_STABLE = 0, HTA_TIES_NUMPY = 1 } hta_tie_order;

/* Queue length of one rank (§10.1): samples in stream-major order (streams
 * ascending, then time).  Each sample is a launch (+1) or the start of a
 * device activity (-1) and holds the length after it. */
typedef struct hta_queue_series {
    size_t n;
    int64_t *ts;       /* ns relative to the view origin */
    int64_t *stream;
    uint32_t *row;     /* rank row of the launch or device activity */
    uint32_t *dev_row; /* device row that gives stream, pid and tid */
    int64_t *queue;
} hta_queue_series;

/* Scratch comes from arena `scratch` (reset before returning; NULL: a
 * private arena); the series is malloc'ed, freed by hta_queue_series_free. */
hta_status hta_queue_series_build(const hta_view *v, hta_tie_order ties, hta_arena *scratch,
                                  hta_queue_series *out, hta_error *err);
void hta_queue_series_free(hta_queue_series *s);

/* Memory bandwidth of one rank (§11.1): per memory kind (names[], ascending),
 * the running sum of the bandwidth of the copies/memsets in flight. */
typedef struct hta_membw_series {
    size_t n;
    int64_t *ts;      /* ns relative to the view origin */
    uint32_t *row;    /* rank row of the copy/memset */
    uint16_t *kind;   /* index into names */
    double *bw;       /* GB/s after this point */
    char names[16][16];
    size_t nnames;
} hta_membw_series;

/* Scratch as hta_queue_series_build's. */
hta_status hta_membw_series_build(const hta_view *v, hta_tie_order ties, hta_arena *scratch,
                                  hta_membw_series *out, hta_error *err);
void hta_membw_series_free(hta_membw_series *s);

typedef struct hta_counters_opts {
    int64_t max_queue_length; /* HTA's default 1024 */
    int series;               /* also return the time series tables */
    hta_tie_order ties;
} hta_counters_opts;
void hta_counters_opts_default(hta_counters_opts *o); /* HTA's max queue length 1024, stable ties */

/* Tables `queue_length_summary`, `memory_bw_summary`,
 * `time_spent_blocked_on_full_queue` and with o->series `queue_length_series`,
 * `memory_bw_series`. */
hta_status hta_counters(hta_ctx *ctx, const hta_counters_opts *o, hta_result *out, hta_error *err);

/* Writes, for every selected rank, OUTDIR/<stem>_with_counters.json[.gz]:
 * the original file with every event kept and counter events (ph "C")
 * appended: "Queue Length" per stream, bandwidth per memory kind.  Adds a
 * table `augmented` (rank, file, events, counter_events). */
hta_status hta_counters_augment(hta_ctx *ctx, const hta_counters_opts *o, const char *outdir,
                                hta_result *out, hta_error *err);

/* Frequent CUDA kernel sequences (§12). */
typedef struct hta_patterns_opts {
    const char *op;       /* substring of the root operator's name */
    int min_len;          /* 3 */
    int top_k;            /* 5 (overlay only) */
    const char *overlay;  /* directory for overlaid_<file>, or NULL */
} hta_patterns_opts;
void hta_patterns_opts_default(hta_patterns_opts *o); /* HTA's: min length 3, top 5 */

hta_status hta_patterns(hta_ctx *ctx, const hta_patterns_opts *o, hta_result *out, hta_error *err);

/* Trace diff (§15): tables `compare_traces` and `ops_diff`. */
typedef enum hta_diff_device { HTA_DIFF_ALL, HTA_DIFF_CPU, HTA_DIFF_GPU } hta_diff_device;
typedef struct hta_diff_opts {
    int short_names;
    hta_diff_device device;
    int32_t control_rank, test_rank;           /* -1: first rank */
    int64_t control_iteration, test_iteration; /* -1: first iteration */
    const char *control_label, *test_label;    /* "Control", "Test" */
} hta_diff_opts;
void hta_diff_opts_default(hta_diff_opts *o); /* first rank and first iteration of each side */

hta_status hta_trace_diff(hta_ctx *control, hta_ctx *test, const hta_diff_opts *o,
                          hta_result *out, hta_error *err);

/* CUPTI range-profiler counters with their operator stacks (§13): table
 * `cupti_counter_data_with_operators`. */
hta_status hta_cupti_counters(hta_ctx *ctx, hta_result *out, hta_error *err);

#ifdef __cplusplus
}
#endif
#endif
