/* Breakdown analyses (analyses.md §1-§4, §6, §7): where the GPU time goes.
 *
 *   hta_temporal_breakdown  table `temporal_breakdown`: idle / compute / non-compute time per rank
 *   hta_idle_breakdown      tables `idle_time` (+ `interval_stats`): why each stream was idle
 *   hta_kernel_breakdown    tables `kernel_type`, `all_kernels`: time by kernel type and by kernel
 *   hta_overlap             table `comm_comp_overlap`: share of communication overlapped by compute
 *
 * All are pure: they read the trace, fill `out` (initialised by the caller)
 * and never print.  Times are computed in int64 ns on HTA's view of each rank
 * and reported in microseconds.  Ranks HTA cannot analyse (no GPU activity)
 * get an empty or zero result and a note in `out` saying why.
 */
#ifndef HTA_BREAKDOWN_H
#define HTA_BREAKDOWN_H

#include "hta/analysis.h"
#include "hta/util.h"
#include "hta/vocab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which rows count as GPU activity in temporal, kernel and overlap analyses. */
typedef enum hta_gpu_rows {
    /* kernels, memcpys and memsets on a GPU stream (categories kernel, Kernel,
     * gpu_memcpy, Memcpy, gpu_memset, Memset, mtia_ccp_events) */
    HTA_GPU_ROWS_ACTIVITY = 0,
    /* every row with a stream, as HTA (quirk A2): also cuda_sync records
     * (Stream Sync, Context Sync...) and Triton's stream-0 cpu_ops */
    HTA_GPU_ROWS_ANY_STREAM = 1,
} hta_gpu_rows;

typedef struct hta_temporal_opts {
    hta_gpu_rows gpu_rows;
} hta_temporal_opts;
void hta_temporal_opts_default(hta_temporal_opts *o);

#define HTA_TEMPORAL(T, C, D)                                                                                \
    T("temporal_breakdown", "per rank, the span from the first GPU activity to the last: idle, compute, "    \
                            "non-compute")                                                                   \
    HTA_RANK_COL(C, HTA_TEMPORAL)                                                                            \
    C(HTA_TEMPORAL_IDLE_US, "idle_time(us)", FLOAT, "us", "time in the span with no GPU activity")           \
    C(HTA_TEMPORAL_COMPUTE_US, "compute_time(us)", FLOAT, "us", "time a COMPUTATION kernel runs")            \
    C(HTA_TEMPORAL_NON_COMPUTE_US, "non_compute_time(us)", FLOAT, "us",                                      \
      "time only other GPU activity runs (communication, memory)")                                           \
    C(HTA_TEMPORAL_KERNEL_US, "kernel_time(us)", FLOAT, "us",                                                \
      "the span: first GPU activity start to last end")                                                      \
    C(HTA_TEMPORAL_IDLE_PCTG, "idle_time_pctg", FLOAT, "%",                                                  \
      "idle_time of kernel_time, 2 decimals; null when that is 0")                                           \
    C(HTA_TEMPORAL_COMPUTE_PCTG, "compute_time_pctg", FLOAT, "%", "compute_time of kernel_time, 2 decimals") \
    C(HTA_TEMPORAL_NON_COMPUTE_PCTG, "non_compute_time_pctg", FLOAT, "%",                                    \
      "non_compute_time of kernel_time, 2 decimals")
HTA_TABLE_DECLARE(HTA_TEMPORAL)

hta_status hta_temporal_breakdown(hta_ctx *ctx, const hta_temporal_opts *o, hta_result *out,
                                  hta_error *err);

typedef struct hta_idle_opts {
    int64_t consecutive_kernel_delay_ns; /* gaps below this are kernel_wait; HTA's 30 "ns" is 30 us */
    int interval_stats;                  /* also the `interval_stats` table */
    const int64_t *streams;              /* only these stream ids (NULL = all) */
    size_t nstreams;
} hta_idle_opts;

#define HTA_IDLE_DEFAULT_DELAY_NS 30000
void hta_idle_opts_default(hta_idle_opts *o);

#define HTA_IDLE(T, C, D)                                                                                    \
    T("idle_time", "per rank, GPU stream and cause: the idle gaps before kernels, memcpys and memsets")      \
    HTA_RANK_COL(C, HTA_IDLE)                                                                                \
    C(HTA_IDLE_STREAM, "stream", INT, "", "GPU stream id")                                                   \
    C(HTA_IDLE_CATEGORY, "idle_category", STR, "",                                                           \
      "host_wait (launched after the stream went idle), kernel_wait (short gap) or other")                   \
    C(HTA_IDLE_TIME, "idle_time", FLOAT, "us", "the gaps of this category, summed; 2 decimals")              \
    C(HTA_IDLE_RATIO, "idle_time_ratio", FLOAT, "",                                                          \
      "share of the stream's idle time, 2 decimals; null when that is 0")                                    \
    C(HTA_IDLE_PID, "pid", INT, "", "device (process id) of the stream")
HTA_TABLE_DECLARE(HTA_IDLE)

#define HTA_IDLE_STATS(T, C, D)                                                                              \
    T("interval_stats", "with --stats: statistics of the idle gaps per rank, stream and cause, 2 decimals")  \
    C(HTA_IDLE_STATS_CATEGORY, "idle_category", STR, "", "host_wait, kernel_wait or other")                  \
    HTA_RANK_COL(C, HTA_IDLE_STATS)                                                                          \
    C(HTA_IDLE_STATS_STREAM, "stream", INT, "", "GPU stream id")                                             \
    HTA_DESCRIBE_COLS(C, HTA_IDLE_STATS, "us", "gaps")                                                       \
    C(HTA_IDLE_STATS_PID, "pid", INT, "", "device (process id) of the stream")
HTA_TABLE_DECLARE(HTA_IDLE_STATS)

hta_status hta_idle_breakdown(hta_ctx *ctx, const hta_idle_opts *o, hta_result *out, hta_error *err);

typedef struct hta_kernel_opts {
    hta_gpu_rows gpu_rows;
    int top;               /* kernels shown per type and rank before the rest become "others" (HTA: 10) */
    double duration_ratio; /* names whose cumulative share is above this quantile become "others" (0.8) */
    int include_memory;    /* analyse MEMORY kernels too (HTA's TraceAnalysis default: yes) */
    int categories;        /* all_kernels gets the `category` column (hta_kernel_category_of); not HTA's */
} hta_kernel_opts;
void hta_kernel_opts_default(hta_kernel_opts *o); /* HTA's: top 10, ratio 0.8, memory kernels in */

#define HTA_KERNEL_TYPE(T, C, D)                                                                             \
    T("kernel_type", "all ranks together: the time each kernel type runs alone, and each overlap of types")  \
    C(HTA_KERNEL_TYPE_TYPE, "kernel_type", STR, "",                                                          \
      "COMPUTATION, COMMUNICATION, MEMORY, or 'A overlapping B' for the time they run at once")              \
    C(HTA_KERNEL_TYPE_SUM, "sum", FLOAT, "us", "time, summed over ranks")                                    \
    C(HTA_KERNEL_TYPE_PCTG, "percentage", FLOAT, "%", "of the summed time of all rows, 1 decimal")
HTA_TABLE_DECLARE(HTA_KERNEL_TYPE)

#define HTA_ALL_KERNELS(T, C, D)                                                                             \
    T("all_kernels", "per rank, kernel type and kernel name: duration statistics (--top folds the rest "     \
                     "into others)")                                                                         \
    C(HTA_ALL_KERNELS_NAME, "name", STR, "", "full kernel name, or others")                                  \
    HTA_DURATION_STATS_COLS(C, HTA_ALL_KERNELS, "kernel")                                                    \
    C(HTA_ALL_KERNELS_TYPE, "kernel_type", STR, "", "COMPUTATION, COMMUNICATION or MEMORY")                  \
    D(HTA_ALL_KERNELS_RANK, "category", STR, "", "not with --hta-compat: gemm, attention, convolution, "     \
      "normalization, elementwise, reduction, communication, memory or other, by name, the same for CUDA "   \
      "and ROCm; null for others")                                                                           \
    HTA_RANK_COL(C, HTA_ALL_KERNELS)                                                                         \
    C(HTA_ALL_KERNELS_COUNT, "count", INT, "", "number of kernels")
HTA_TABLE_DECLARE(HTA_ALL_KERNELS)

hta_status hta_kernel_breakdown(hta_ctx *ctx, const hta_kernel_opts *o, hta_result *out,
                                hta_error *err);
/* Its two halves (hta/table.h, "reducing parts"): the part of the ranks of ctx (all_kernels' rows of each
 * rank, each rank's time per kernel-type label in ns, the notes) and the reduce of the parts, appended in
 * rank order, into kernel_type (summed over the ranks) and all_kernels (in HTA's order). */
hta_status hta_kernel_breakdown_part(hta_ctx *ctx, const hta_kernel_opts *o, hta_result *out, hta_error *err);
hta_status hta_kernel_breakdown_reduce(const hta_kernel_opts *o, hta_result *parts, hta_result *out,
                                       hta_error *err);

typedef struct hta_overlap_opts {
    hta_gpu_rows gpu_rows;
} hta_overlap_opts;
void hta_overlap_opts_default(hta_overlap_opts *o);

#define HTA_OVERLAP(T, C, D)                                                                                 \
    T("comm_comp_overlap", "per rank: how much of the communication time computation runs too")              \
    HTA_RANK_COL(C, HTA_OVERLAP)                                                                             \
    C(HTA_OVERLAP_PCTG, "comp_comm_overlap_pctg", FLOAT, "%",                                                \
      "overlap_time of comm_time, 2 decimals; null without communication")                                   \
    C(HTA_OVERLAP_COMM_US, "comm_time(us)", FLOAT, "us", "time some communication kernel runs")              \
    C(HTA_OVERLAP_COMP_US, "comp_time(us)", FLOAT, "us", "time some computation kernel runs")                \
    C(HTA_OVERLAP_BOTH_US, "overlap_time(us)", FLOAT, "us", "time both run")
HTA_TABLE_DECLARE(HTA_OVERLAP)

hta_status hta_overlap(hta_ctx *ctx, const hta_overlap_opts *o, hta_result *out, hta_error *err);



#ifdef __cplusplus
}
#endif
#endif
