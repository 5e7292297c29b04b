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

hta_status hta_idle_breakdown(hta_ctx *ctx, const hta_idle_opts *o, hta_result *out, hta_error *err);

typedef struct hta_kernel_opts {
    hta_gpu_rows gpu_rows;
    int top;               /* kernels shown per type and rank before the rest become "others" (HTA: 10) */
    double duration_ratio; /* names whose cumulative share is above this quantile become "others" (0.8) */
    int include_memory;    /* analyse MEMORY kernels too (HTA's TraceAnalysis default: yes) */
} hta_kernel_opts;
void hta_kernel_opts_default(hta_kernel_opts *o); /* HTA's: top 10, ratio 0.8, memory kernels in */

hta_status hta_kernel_breakdown(hta_ctx *ctx, const hta_kernel_opts *o, hta_result *out,
                                hta_error *err);

typedef struct hta_overlap_opts {
    hta_gpu_rows gpu_rows;
} hta_overlap_opts;
void hta_overlap_opts_default(hta_overlap_opts *o);

hta_status hta_overlap(hta_ctx *ctx, const hta_overlap_opts *o, hta_result *out, hta_error *err);

/* Kernel type with HTA's rule (analyses.md §1) corrected: communication is
 * recognised under every NCCL/RCCL/HCCL naming (hta_is_nccl_kernel_name), and
 * HIP memory operations (hipMemcpy*, hipMemset*) are MEMORY instead of HTA's
 * "every hip* name is COMMUNICATION". */
hta_kernel_type hta_breakdown_kernel_type(const char *name);

#ifdef __cplusplus
}
#endif
#endif
