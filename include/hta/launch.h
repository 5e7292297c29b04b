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
/* Tables: `cuda_kernel_launch_stats` (rank, correlation, cpu_duration,
 * gpu_duration, launch_delay, short_kernel, runtime_outlier,
 * launch_delay_outlier) and `launch_summary` (one row per rank: counts). */
hta_status hta_launch_stats(hta_ctx *ctx, const hta_launch_opts *o, hta_result *out, hta_error *err);

/* ---- `hta annotations` (§5.1) ---- */
typedef struct hta_annotation_opts {
    int use_cpu_annotation;     /* user_annotation instead of gpu_user_annotation */
    int num_kernels;            /* HTA default 1000 */
    double duration_ratio;      /* HTA default 0.8 */
    const char *const *allowlist; /* substrings never folded into "others" */
    size_t nallow;
} hta_annotation_opts;
void hta_annotation_opts_default(hta_annotation_opts *o);
/* Table `gpu_user_annotation_breakdown`: rank, name, count, sum (us), max (us),
 * min (us), stddev, mean (us). */
hta_status hta_annotation_breakdown(hta_ctx *ctx, const hta_annotation_opts *o, hta_result *out,
                                    hta_error *err);

/* ---- `hta stragglers` (§14) ---- */
typedef struct hta_straggler_opts {
    const int64_t *steps; /* profiler steps to use; NULL = all */
    size_t nsteps;
    int num_candidates;   /* HTA default 2 */
} hta_straggler_opts;
void hta_straggler_opts_default(hta_straggler_opts *o);
/* Tables: `potential_stragglers` (rank, flagged_steps), `straggler_metric`
 * (per rank and step: the chosen kernel's start, normalised start, flagged),
 * `straggler_kernels` (candidate (stream, kernel) pairs and their spread). */
hta_status hta_potential_stragglers(hta_ctx *ctx, const hta_straggler_opts *o, hta_result *out,
                                    hta_error *err);

/* ---- `hta ops` (§9) ---- */
typedef struct hta_aten_opts {
    const char *const *sort_by; /* output columns, descending; NULL = occurrence_count */
    size_t nsort;
} hta_aten_opts;
void hta_aten_opts_default(hta_aten_opts *o);
/* Table `aten_op_kernels_and_delay`: rank, aten_op_name, kernel_sequence,
 * occurrence_count, avg_aten_op_launch_delay, avg_runtime_delay. */
hta_status hta_aten_op_kernels(hta_ctx *ctx, const hta_aten_opts *o, hta_result *out, hta_error *err);

#ifdef __cplusplus
}
#endif
#endif
