/* Launch-side analyses (analyses.md §5.1, §8, §9, §14): CUDA kernel launch
 * statistics, GPU user-annotation breakdown, potential stragglers, ATen op ->
 * kernel sequences with their delays.  Each is a pure function from a loaded
 * trace and options to result tables; times in the tables are microseconds. */
#ifndef HTA_LAUNCH_H
#define HTA_LAUNCH_H

#include "hta/analysis.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- `hta launch` (§8) ---- */
typedef struct hta_launch_opts {
    double runtime_cutoff_us;      /* HTA default 50 */
    double launch_delay_cutoff_us; /* HTA default 100 */
    int include_memory_events;     /* cudaMemcpyAsync/cudaMemsetAsync too (HTA default 1) */
} hta_launch_opts;
void hta_launch_opts_default(hta_launch_opts *o);

#define HTA_LAUNCH_STATS(T, C, D)                                                                            \
    T("cuda_kernel_launch_stats", "one row per launch call and the GPU activity of its correlation id")      \
    HTA_RANK_COL(C, HTA_LAUNCH_STATS)                                                                        \
    C(HTA_LAUNCH_STATS_CORRELATION, "correlation", INT, "", "correlation id of the launch and its activity") \
    C(HTA_LAUNCH_STATS_CPU, "cpu_duration", FLOAT, "us", "duration of the launch call")                      \
    C(HTA_LAUNCH_STATS_GPU, "gpu_duration", FLOAT, "us", "duration of the GPU activity")                     \
    C(HTA_LAUNCH_STATS_DELAY, "launch_delay", FLOAT, "us",                                                   \
      "GPU start minus the end of the launch call, >= 0")                                                    \
    C(HTA_LAUNCH_STATS_SHORT, "short_kernel", INT, "",                                                       \
      "1 if cpu_duration <= the runtime cutoff and gpu_duration < cpu_duration")                             \
    C(HTA_LAUNCH_STATS_RUNTIME_OUTLIER, "runtime_outlier", INT, "",                                          \
      "1 if cpu_duration > the runtime cutoff")                                                              \
    C(HTA_LAUNCH_STATS_DELAY_OUTLIER, "launch_delay_outlier", INT, "",                                       \
      "1 if launch_delay > the launch-delay cutoff")
HTA_TABLE_DECLARE(HTA_LAUNCH_STATS)

#define HTA_LAUNCH_SUMMARY(T, C, D)                                                                          \
    T("launch_summary", "per rank: launches, outliers and mean durations")                                   \
    HTA_RANK_COL(C, HTA_LAUNCH_SUMMARY)                                                                      \
    C(HTA_LAUNCH_SUMMARY_LAUNCHES, "launches", INT, "", "rows of cuda_kernel_launch_stats")                  \
    C(HTA_LAUNCH_SUMMARY_SHORT, "short_kernels", INT, "", "launches with short_kernel")                      \
    C(HTA_LAUNCH_SUMMARY_RUNTIME_OUTLIERS, "runtime_outliers", INT, "", "launches with runtime_outlier")     \
    C(HTA_LAUNCH_SUMMARY_DELAY_OUTLIERS, "launch_delay_outliers", INT, "",                                   \
      "launches with launch_delay_outlier")                                                                  \
    C(HTA_LAUNCH_SUMMARY_RUNTIME_CUTOFF, "runtime_cutoff_us", FLOAT, "us", "--runtime-cutoff")                  \
    C(HTA_LAUNCH_SUMMARY_DELAY_CUTOFF, "launch_delay_cutoff_us", FLOAT, "us", "--launch-delay-cutoff")          \
    C(HTA_LAUNCH_SUMMARY_MEAN_CPU, "mean_cpu_duration_us", FLOAT, "us",                                         \
      "mean cpu_duration; null without launches")                                                            \
    C(HTA_LAUNCH_SUMMARY_MEAN_GPU, "mean_gpu_duration_us", FLOAT, "us", "mean gpu_duration")                    \
    C(HTA_LAUNCH_SUMMARY_MEAN_DELAY, "mean_launch_delay_us", FLOAT, "us", "mean launch_delay")
HTA_TABLE_DECLARE(HTA_LAUNCH_SUMMARY)

hta_status hta_launch_stats(hta_ctx *ctx, const hta_launch_opts *o, hta_result *out, hta_error *err);
/* Its two halves (hta/table.h, "reducing parts"): both tables' rows of the ranks of ctx and how many launch
 * names they have; the reduce notes a run without any. */
hta_status hta_launch_stats_part(hta_ctx *ctx, const hta_launch_opts *o, hta_result *out, hta_error *err);
hta_status hta_launch_stats_reduce(const hta_launch_opts *o, hta_result *parts, hta_result *out, hta_error *err);

/* ---- `hta annotations` (§5.1) ---- */
typedef struct hta_annotation_opts {
    int use_cpu_annotation;     /* user_annotation instead of gpu_user_annotation */
    int num_kernels;            /* HTA default 1000 */
    double duration_ratio;      /* HTA default 0.8 */
    const char *const *allowlist; /* substrings never folded into "others" */
    size_t nallow;
} hta_annotation_opts;
void hta_annotation_opts_default(hta_annotation_opts *o);

#define HTA_ANNOTATIONS(T, C, D)                                                                             \
    T("gpu_user_annotation_breakdown", "per rank and annotation name: duration statistics (--top folds "     \
                                       "the rest into others)")                                              \
    HTA_RANK_COL(C, HTA_ANNOTATIONS)                                                                         \
    C(HTA_ANNOTATIONS_NAME, "name", STR, "", "annotation name (record_function), or others")                 \
    C(HTA_ANNOTATIONS_COUNT, "count", INT, "", "number of instances")                                        \
    HTA_DURATION_STATS_COLS(C, HTA_ANNOTATIONS, "instance")
HTA_TABLE_DECLARE(HTA_ANNOTATIONS)

hta_status hta_annotation_breakdown(hta_ctx *ctx, const hta_annotation_opts *o, hta_result *out,
                                    hta_error *err);
/* Its two halves (hta/table.h, "reducing parts"): the rows of the ranks of ctx, whether they have the
 * annotation category and how many names they folded; the reduce gives the notes about the whole run. */
hta_status hta_annotation_breakdown_part(hta_ctx *ctx, const hta_annotation_opts *o, hta_result *out,
                                         hta_error *err);
hta_status hta_annotation_breakdown_reduce(const hta_annotation_opts *o, hta_result *parts, hta_result *out,
                                           hta_error *err);

/* ---- `hta stragglers` (§14) ---- */
typedef struct hta_straggler_opts {
    const int64_t *steps; /* profiler steps to use; NULL = all */
    size_t nsteps;
    int num_candidates;   /* HTA default 2 */
} hta_straggler_opts;
void hta_straggler_opts_default(hta_straggler_opts *o);

#define HTA_STRAGGLERS(T, C, D)                                                                              \
    T("potential_stragglers", "the ranks flagged in the most steps (at most --candidates)")                  \
    HTA_RANK_COL(C, HTA_STRAGGLERS)                                                                          \
    C(HTA_STRAGGLERS_FLAGGED, "flagged_steps", INT, "",                                                      \
      "steps in which the rank was among the latest starters")                                               \
    C(HTA_STRAGGLERS_STEPS, "steps", INT, "", "steps in which the rank ran the chosen kernel")               \
    C(HTA_STRAGGLERS_MEAN_START, "mean_normalized_start", FLOAT, "",                                         \
      "mean of its normalized_start_time over those steps")
HTA_TABLE_DECLARE(HTA_STRAGGLERS)

#define HTA_STRAGGLER_METRIC(T, C, D)                                                                        \
    T("straggler_metric", "per rank and step: when the chosen collective kernel starts, and whether the "    \
                          "rank is flagged")                                                                 \
    HTA_RANK_COL(C, HTA_STRAGGLER_METRIC)                                                                    \
    C(HTA_STRAGGLER_METRIC_STEP, "step", INT, "", "profiler step (ProfilerStep#N)")                          \
    C(HTA_STRAGGLER_METRIC_STREAM, "stream", INT, "", "GPU stream of the kernel")                            \
    C(HTA_STRAGGLER_METRIC_KERNEL, "kernel", STR, "", "name of the chosen collective kernel")                \
    C(HTA_STRAGGLER_METRIC_START, "start_us", FLOAT, "us", "kernel start")                                   \
    C(HTA_STRAGGLER_METRIC_NORM_START, "normalized_start_time", FLOAT, "",                                   \
      "start minus the first event, in mean step times (HTA's metric)")                                      \
    C(HTA_STRAGGLER_METRIC_DURATION, "duration_us", FLOAT, "us", "kernel duration")                          \
    C(HTA_STRAGGLER_METRIC_NORM_DURATION, "normalized_duration", FLOAT, "", "duration in mean step times")   \
    C(HTA_STRAGGLER_METRIC_FLAGGED, "flagged", INT, "",                                                      \
      "1 if among the --candidates latest starters of the step")
HTA_TABLE_DECLARE(HTA_STRAGGLER_METRIC)

#define HTA_STRAGGLER_KERNELS(T, C, D)                                                                       \
    T("straggler_kernels", "candidate collective kernels and how much their duration varies between ranks")  \
    C(HTA_STRAGGLER_KERNELS_STREAM, "stream", INT, "", "GPU stream")                                         \
    C(HTA_STRAGGLER_KERNELS_KERNEL, "kernel", STR, "", "kernel name")                                        \
    C(HTA_STRAGGLER_KERNELS_RANKS, "ranks", INT, "", "ranks that ran it")                                    \
    C(HTA_STRAGGLER_KERNELS_STEPS, "steps", INT, "", "steps it ran in")                                      \
    C(HTA_STRAGGLER_KERNELS_SPREAD, "mean_duration_std", FLOAT, "",                                          \
      "mean over steps of the standard deviation across ranks of its duration in mean step times")           \
    C(HTA_STRAGGLER_KERNELS_CHOSEN, "chosen", INT, "", "1 for the kernel straggler_metric follows")
HTA_TABLE_DECLARE(HTA_STRAGGLER_KERNELS)

hta_status hta_potential_stragglers(hta_ctx *ctx, const hta_straggler_opts *o, hta_result *out,
                                    hta_error *err);

/* Rank by rank (docs/scaling.md): hta_potential_stragglers is hta_straggler_summary followed by
 * hta_stragglers_from_summary.  The summary of a rank is what the cross-rank analysis reads of it: the
 * steps its rows name, the span of each iteration's rows, and its collective kernels (start, duration),
 * a few rows per step; as tables it travels between processes (hta-mpi) as any result does.  The
 * summaries of several contexts, appended in rank order (hta_result_append), give the answer of one
 * context holding all those ranks, byte for byte. */
#define HTA_STRAGGLER_SUM_RANKS(T, C, D)                                                                     \
    T("straggler_summary_ranks", "summary: the ranks summarised")                                            \
    HTA_RANK_COL(C, HTA_SSUM)
HTA_TABLE_DECLARE(HTA_STRAGGLER_SUM_RANKS)

#define HTA_STRAGGLER_SUM_ITERS(T, C, D)                                                                     \
    T("straggler_summary_iterations", "summary: per rank, each step its rows name and each iteration of "    \
                                      "its rows")                                                            \
    HTA_RANK_COL(C, HTA_SSUM_ITER)                                                                           \
    C(HTA_SSUM_ITER, "iteration", INT, "", "step number")                                                    \
    C(HTA_SSUM_ITER_NAMED, "named", INT, "", "1 when a row of the rank is named ProfilerStep#iteration")     \
    C(HTA_SSUM_ITER_ROWS, "rows", INT, "", "rows of this iteration")                                         \
    C(HTA_SSUM_ITER_FIRST, "first_ns", INT, "ns", "earliest start of those rows (view frame)")               \
    C(HTA_SSUM_ITER_END, "end_ns", INT, "ns", "latest end of those rows (view frame)")
HTA_TABLE_DECLARE(HTA_STRAGGLER_SUM_ITERS)

/* a summarised communication kernel's columns but its name (ids P_RANK .. P_POS) */
#define HTA_SSUM_KERNEL_COLS(C, P)                                                                           \
    HTA_RANK_COL(C, P)                                                                                       \
    C(P##_STREAM, "stream", INT, "", "GPU stream")                                                           \
    C(P##_ITER, "iteration", INT, "", "iteration of the kernel")                                             \
    C(P##_TS, "ts_ns", INT, "ns", "start (view frame)")                                                      \
    C(P##_DUR, "dur_ns", INT, "ns", "duration")                                                              \
    C(P##_POS, "pos", INT, "", "position in the rank's view (table order)")

#define HTA_STRAGGLER_SUM_COLLS(T, C, D)                                                                     \
    T("straggler_summary_collectives", "summary: per rank, its communication kernels in a step")             \
    HTA_SSUM_KERNEL_COLS(C, HTA_SSUM_COLL)                                                                   \
    C(HTA_SSUM_COLL_NAME, "kernel", STR, "", "kernel name")
HTA_TABLE_DECLARE(HTA_STRAGGLER_SUM_COLLS)

/* The summary of every rank of ctx, in ctx's rank order, added to out (its three tables). */
hta_status hta_straggler_summary(hta_ctx *ctx, hta_result *out, hta_error *err);
/* part's collective kernels folded into acc as they come (the report's parts): their names once, each kernel
 * naming its name's row; hta_stragglers_from_summary reads either form. */
hta_status hta_straggler_fold(hta_result *acc, hta_result *part, hta_error *err);
/* The analysis from summaries (every rank's, appended in rank order); hta_compat as the context that
 * made them had it. */
hta_status hta_stragglers_from_summary(const hta_result *sum, const hta_straggler_opts *o, int hta_compat,
                                       hta_result *out, hta_error *err);

/* ---- `hta ops` (§9) ---- */
typedef struct hta_aten_opts {
    const char *const *sort_by; /* output columns, descending; NULL = occurrence_count */
    size_t nsort;
} hta_aten_opts;
void hta_aten_opts_default(hta_aten_opts *o);

#define HTA_ATEN_OPS(T, C, D)                                                                                \
    T("aten_op_kernels_and_delay", "per rank, ATen op and the kernel sequence its instances launched: "      \
                                   "count and mean delays")                                                  \
    HTA_RANK_COL(C, HTA_ATEN_OPS)                                                                            \
    C(HTA_ATEN_OPS_OP, "aten_op_name", STR, "", "innermost aten:: op enclosing the launches")                \
    C(HTA_ATEN_OPS_SEQUENCE, "kernel_sequence", STR, "", "full kernel names joined by ' -> '")               \
    C(HTA_ATEN_OPS_COUNT, "occurrence_count", INT, "", "op instances that launched this sequence")           \
    C(HTA_ATEN_OPS_LAUNCH_DELAY, "avg_aten_op_launch_delay", FLOAT, "us",                                    \
      "mean of first launch start minus op start, 3 decimals")                                               \
    C(HTA_ATEN_OPS_RUNTIME_DELAY, "avg_runtime_delay", FLOAT, "us",                                          \
      "mean of first kernel start minus its launch start, 3 decimals")
HTA_TABLE_DECLARE(HTA_ATEN_OPS)

hta_status hta_aten_op_kernels(hta_ctx *ctx, const hta_aten_opts *o, hta_result *out, hta_error *err);
/* Its two halves (hta/table.h, "reducing parts"): the rows of the ranks of ctx and the launches they skipped
 * (outside every op, without a kernel, with several); the reduce gives the notes about the whole run. */
hta_status hta_aten_op_kernels_part(hta_ctx *ctx, const hta_aten_opts *o, hta_result *out, hta_error *err);
hta_status hta_aten_op_kernels_reduce(const hta_aten_opts *o, hta_result *parts, hta_result *out, hta_error *err);

#ifdef __cplusplus
}
#endif
#endif
