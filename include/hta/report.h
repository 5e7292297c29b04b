/* `hta report`: every analysis that applies, distilled into what a person
 * can act on. */
#ifndef HTA_REPORT_H
#define HTA_REPORT_H

#include "hta/analysis.h"
#include "hta/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hta_report_opts {
    int top_kernels;   /* rows of `top_kernels` (default 10) */
    int critical_path; /* also the critical path of each rank (what bounds it) */
    const char *html;  /* also write the HTML page here (NULL: none), through hta/outfile.h */
    int release;       /* hta_report_part on a context that serves nothing after the part but the savings' job
                        * (hta_report_src.keep): each rank's rows are released as its critical path's graph is
                        * built (hta_sim_build_release), and the graph stays with the context (hta_ctx_leave)
                        * for the job, which then builds no graph of its own (default 0) */
} hta_report_opts;
void hta_report_opts_default(hta_report_opts *o); /* top 10 kernels, critical paths on */

/* Ranks without GPU work (CPU-only traces, libhtatrace files) also get the
 * tables of hta_cpu_ops (hta/cpuops.h: cpu_ranks, cpu_op_time with --top
 * rows per rank, cpu_steps, cpu_step_ops with 5 per step, scope_args when it
 * has rows), findings of area "cpu", and a critical-path finding that names
 * the calls on the path; kernel_types and top_kernels are left out when no
 * rank has GPU work. */
#define HTA_FINDINGS(T, C, D)                                                                                \
    T("findings", "the causes of lost time, one per cause for the whole job, ranked by what fixing it would "  \
                  "save (docs/report.md, \"Causes and savings\")")                                            \
    C(HTA_FINDINGS_CAUSE, "cause", STR, "",                                                                  \
      "capture_trace, data_loading, host_blocking, cpu_overhead, exposed_communication, straggler, "           \
      "gpu_compute or memory_copy")                                                                           \
    C(HTA_FINDINGS_RANKS, "ranks", STR, "", "the ranks it applies to, as --ranks takes them (0,2,5-7)")      \
    C(HTA_FINDINGS_SAVING_PCT, "saving_pct", FLOAT, "%",                                                     \
      "simulated saving with the cause removed, in % of the job's step time (the window: docs/report.md), "   \
      "1 decimal; empty where the engine could not measure that window")                                      \
    C(HTA_FINDINGS_SAVING_US, "saving_us", FLOAT, "us", "the same saving in us per step")                   \
    C(HTA_FINDINGS_EVIDENCE, "evidence", STR, "", "the figures that show the cause")                        \
    C(HTA_FINDINGS_TODO, "what_to_do", STR, "",                                                              \
      "what to do, fitted to the cause, and the what-if rules the saving was simulated with, in words")
HTA_TABLE_DECLARE(HTA_FINDINGS)

#define HTA_REPORT_HEADLINE(T, C, D)                                                                         \
    T("headline", "the job in one row: its step time and how busy its GPUs are")                            \
    C(HTA_REPORT_HEADLINE_RANKS, "ranks", INT, "", "ranks analysed")                                          \
    C(HTA_REPORT_HEADLINE_STEPS, "steps", INT, "", "ProfilerSteps analysed (the most of any rank)")           \
    C(HTA_REPORT_HEADLINE_STEP, "step_us", FLOAT, "us",                                                      \
      "step time: median over the steps of the slowest rank's step (the whole trace span with one "         \
      "ProfilerStep or none; steps on the GPU timeline where the GPU runs behind)")                           \
    C(HTA_REPORT_HEADLINE_GPU_BUSY, "gpu_busy_pctg", FLOAT, "%",                                             \
      "share of the window with a kernel, memcpy or memset running, over all ranks, 1 decimal")              \
    C(HTA_REPORT_HEADLINE_CPU_BUSY, "cpu_busy_pctg", FLOAT, "%",                                             \
      "share of the steps' time with a CPU event running on some thread, over all ranks, 1 decimal")
HTA_TABLE_DECLARE(HTA_REPORT_HEADLINE)

#define HTA_OBS(T, C, D)                                                                                     \
    T("observations", "what each analysis says, with its figures: for all ranks first, then rank by rank")   \
    C(HTA_OBS_RANK, "rank", INT, "", "the rank it is about; null for all ranks")                             \
    C(HTA_OBS_AREA, "area", STR, "",                                                                         \
      "idle, communication, launch, kernels, critical path, straggler, gpu, cpu or metrics")               \
    C(HTA_OBS_FINDING, "finding", STR, "", "what the figures say, with the figures")                         \
    C(HTA_OBS_TODO, "what_to_do", STR, "", "the usual remedies and the command to look further")
HTA_TABLE_DECLARE(HTA_OBS)

#define HTA_REPORT_RANKS(T, C, D)                                                                            \
    T("ranks", "key figures per rank, from the analyses the report runs")                                    \
    HTA_RANK_COL(C, HTA_REPORT_RANKS)                                                                        \
    C(HTA_REPORT_RANKS_SPAN, "span_us", FLOAT, "us",                                                         \
      "GPU span: temporal's idle + compute + non-compute time")                                              \
    C(HTA_REPORT_RANKS_KERNEL, "kernel_time_us", FLOAT, "us", "temporal's kernel_time")                      \
    C(HTA_REPORT_RANKS_IDLE, "idle_pctg", FLOAT, "%", "temporal's idle_time_pctg")                           \
    C(HTA_REPORT_RANKS_COMPUTE, "compute_pctg", FLOAT, "%", "temporal's compute_time_pctg")                  \
    C(HTA_REPORT_RANKS_NON_COMPUTE, "non_compute_pctg", FLOAT, "%", "temporal's non_compute_time_pctg")      \
    C(HTA_REPORT_RANKS_CAUSE, "main_idle_cause", STR, "",                                                    \
      "the idle category with the most time, all streams")                                                   \
    C(HTA_REPORT_RANKS_CAUSE_PCTG, "main_idle_cause_pctg", FLOAT, "%",                                       \
      "its share of the idle time, 2 decimals")                                                              \
    C(HTA_REPORT_RANKS_COMM, "comm_time_us", FLOAT, "us", "overlap's comm_time")                             \
    C(HTA_REPORT_RANKS_OVERLAP, "comm_comp_overlap_pctg", FLOAT, "%", "overlap's comp_comm_overlap_pctg")    \
    C(HTA_REPORT_RANKS_LAUNCHES, "launches", INT, "", "launch's launches")                                   \
    C(HTA_REPORT_RANKS_DELAY_OUTLIERS, "launch_delay_outliers", INT, "", "launch's launch_delay_outliers")   \
    C(HTA_REPORT_RANKS_MEAN_DELAY, "mean_launch_delay_us", FLOAT, "us", "launch's mean_launch_delay")        \
    C(HTA_REPORT_RANKS_SHORT, "short_kernels", INT, "", "launch's short_kernels")
HTA_TABLE_DECLARE(HTA_REPORT_RANKS)

#define HTA_REPORT_KERNEL_TYPES(T, C, D)                                                                     \
    T("kernel_types", "the kernels command's kernel_type table over the selected ranks")                     \
    C(HTA_REPORT_KERNEL_TYPES_TYPE, "kernel_type", STR, "", "kernel type, or 'A overlapping B'")             \
    C(HTA_REPORT_KERNEL_TYPES_SUM, "sum_us", FLOAT, "us", "time")                                            \
    C(HTA_REPORT_KERNEL_TYPES_PCTG, "percentage", FLOAT, "%", "of the summed time of all rows, 1 decimal")
HTA_TABLE_DECLARE(HTA_REPORT_KERNEL_TYPES)

#define HTA_TOP_KERNELS(T, C, D)                                                                             \
    T("top_kernels", "the kernels with the most GPU time over all selected ranks (--top N)")                 \
    C(HTA_TOP_KERNELS_NAME, "name", STR, "", "kernel name, in full (the table format cuts a long one in the middle)")                                        \
    C(HTA_TOP_KERNELS_TYPE, "kernel_type", STR, "", "COMPUTATION, COMMUNICATION or MEMORY")                  \
    C(HTA_TOP_KERNELS_COUNT, "count", INT, "", "number of kernels")                                          \
    C(HTA_TOP_KERNELS_SUM, "sum_us", FLOAT, "us", "summed duration")                                         \
    C(HTA_TOP_KERNELS_MEAN, "mean_us", FLOAT, "us", "mean duration")                                         \
    C(HTA_TOP_KERNELS_PCTG, "pctg", FLOAT, "%", "of all kernel time, 2 decimals")
HTA_TABLE_DECLARE(HTA_TOP_KERNELS)

#define HTA_REPORT_CPATH(T, C, D)                                                                            \
    T("critical_path", "per rank: what bounds its critical path, critical-path's summary (not with "         \
                       "--no-critical-path)")                                                                \
    HTA_RANK_COL(C, HTA_REPORT_CPATH)                                                                        \
    C(HTA_REPORT_CPATH_BOUND_BY, "bound_by", STR, "", "bound_by class (see hta critical-path --help)")       \
    C(HTA_REPORT_CPATH_DURATION, "duration_us", FLOAT, "us", "summed weight of its path edges")              \
    C(HTA_REPORT_CPATH_PCTG, "percentage", FLOAT, "%", "of the path's length")
HTA_TABLE_DECLARE(HTA_REPORT_CPATH)

/* Only when the traces' folder has metrics files (DIR/metrics/HOST.metrics.jsonl, written by `hta capture`
 * from htad; docs/capture.md): src/report/report_metrics.c. */
#define HTA_GPU_METRICS(T, C, D)                                                                             \
    T("gpu_metrics", "per host and GPU, from the metrics htad sampled while tracing (only when "             \
                     "DIR/metrics/ has them)")                                                               \
    C(HTA_GPU_METRICS_HOST, "host", STR, "", "host, as its metrics file is named")                           \
    C(HTA_GPU_METRICS_GPU, "gpu", INT, "", "GPU index; null: a host without GPU figures")                    \
    C(HTA_GPU_METRICS_SAMPLES, "samples", INT, "", "samples in the file")                                    \
    C(HTA_GPU_METRICS_UTIL, "gpu_util_pctg", FLOAT, "%", "mean NVML utilisation (a kernel running)")         \
    C(HTA_GPU_METRICS_SM, "sm_active_pctg", FLOAT, "%", "mean DCGM SM activity; null without DCGM")          \
    C(HTA_GPU_METRICS_TENSOR, "tensor_active_pctg", FLOAT, "%", "mean DCGM tensor-pipe activity")            \
    C(HTA_GPU_METRICS_MEM_USED, "mem_used_max_gb", FLOAT, "GB", "most GPU memory in use in any sample")      \
    C(HTA_GPU_METRICS_MEM_TOTAL, "mem_total_gb", FLOAT, "GB", "GPU memory")                                  \
    C(HTA_GPU_METRICS_POWER, "power_w", FLOAT, "W", "mean power draw")                                       \
    C(HTA_GPU_METRICS_IDLE, "idle_samples", INT, "", "samples with utilisation under 10%")                   \
    C(HTA_GPU_METRICS_CPU, "cpu_busy_pctg", FLOAT, "%", "the host's mean CPU busy share")                    \
    C(HTA_GPU_METRICS_CPU_IDLE, "cpu_busy_when_idle_pctg", FLOAT, "%",                                       \
      "the host's mean CPU busy share in this GPU's idle samples")
HTA_TABLE_DECLARE(HTA_GPU_METRICS)

hta_status hta_report(hta_ctx *ctx, const hta_report_opts *o, hta_result *out, hta_error *err);

/* Rank by rank (docs/scaling.md): hta_report is hta_report_part on the context, then hta_report_reduce of
 * that part.  The part of a context is what the report reads of its ranks: per rank the analyses' rows,
 * the summaries of the cross-rank ones (kernel types, stragglers), the critical path's summary, and a
 * profile of its steps, collectives and time series: a few rows per step and collective, 240 per rank
 * for the series.  The parts of several contexts, appended in rank order (hta_result_append), reduce
 * to the report of one context holding all those ranks, byte for byte. */
hta_status hta_report_part(hta_ctx *ctx, const hta_report_opts *o, hta_result *out, hta_error *err);
/* part put into acc as it comes, in rank order (instead of hta_result_append; docs/scaling.md, "report"): the
 * rows summed over the ranks folded per key (the kernels by name, efficiency's operators), the rest
 * appended; hta_report_reduce of acc gives the same bytes as of the parts appended, and part is left empty. */
hta_status hta_report_fold(hta_result *acc, hta_result *part, hta_error *err);

/* Where the reduce reads the ranks again: the savings re-run every rank through the what-if engine
 * (hta/sim.h, hta_job_*), one rank's graph at a time.  Either the loaded context, or a rank plan's files
 * with the options they are loaded with. */
typedef struct hta_report_src {
    hta_ctx *ctx;              /* the whole load; NULL: the plan's files */
    const hta_rank_plan *plan; /* the files (hta_rank_plan_make), in the parts' rank order */
    const hta_ctx_opts *co;    /* how they load (threads too) */
    const hta_job_dist *dist;  /* with the plan: the savings' passes shared among processes (hta-mpi; the
                                * others follow, hta_job_follow), or NULL */
    hta_ctx **keep;            /* with the plan: the files' contexts kept since the parts (hta_job_opts.keep),
                                * or NULL */
} hta_report_src;
/* The report from the parts of every rank (appended in rank order; the reduce takes tables out of it). */
hta_status hta_report_reduce(const hta_report_opts *o, const hta_report_src *src, hta_result *parts,
                             hta_result *out, hta_error *err);

#ifdef __cplusplus
}
#endif
#endif
