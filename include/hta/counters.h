/* Counter analyses (queue length, memory bandwidth, analyses.md §10-§11),
 * traces augmented with counter tracks, frequent kernel sequences (§12),
 * trace diff (§15) and CUPTI range-profiler counters (§13). */
#ifndef HTA_COUNTERS_H
#define HTA_COUNTERS_H

#include "hta/analysis.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The rules of the counter series.  HTA_SERIES_EXACT (the default): every
 * vendor's launches and stream-ordered copies feed the queue (vocab.h,
 * hta_api_enqueues), and ties in time keep the table's own order (launches
 * before device activity, then HTA's row order).  HTA_SERIES_HTA (the run
 * context's hta_compat): HTA's 12 "runtime launch" names and numpy's unstable
 * quicksort order of ties. */
typedef enum hta_series_rules { HTA_SERIES_EXACT = 0, HTA_SERIES_HTA = 1 } hta_series_rules;

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
hta_status hta_queue_series_build(const hta_view *v, hta_series_rules rules, hta_arena *scratch,
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
hta_status hta_membw_series_build(const hta_view *v, hta_series_rules rules, hta_arena *scratch,
                                  hta_membw_series *out, hta_error *err);
void hta_membw_series_free(hta_membw_series *s);

typedef struct hta_counters_opts {
    int64_t max_queue_length; /* HTA's default 1024 */
    int series;               /* also return the time series tables */
} hta_counters_opts;
void hta_counters_opts_default(hta_counters_opts *o); /* HTA's max queue length 1024 */

#define HTA_QUEUE_SUMMARY(T, C, D)                                                                           \
    T("queue_length_summary", "per rank and stream: statistics of the launch-queue length samples (not "     \
                              "time-weighted)")                                                              \
    HTA_RANK_COL(C, HTA_QUEUE_SUMMARY)                                                                       \
    C(HTA_QUEUE_SUMMARY_STREAM, "stream", INT, "", "GPU stream")                                             \
    HTA_DESCRIBE_COLS(C, HTA_QUEUE_SUMMARY, "", "queue length samples")
HTA_TABLE_DECLARE(HTA_QUEUE_SUMMARY)

#define HTA_MEMBW_SUMMARY(T, C, D)                                                                           \
    T("memory_bw_summary", "per rank and memory kind: statistics of the bandwidth samples above 0")          \
    HTA_RANK_COL(C, HTA_MEMBW_SUMMARY)                                                                       \
    C(HTA_MEMBW_SUMMARY_NAME, "name", STR, "",                                                               \
      "memory kind: Memcpy HtoD, Memcpy DtoH, Memcpy DtoD, Memset ...")                                      \
    HTA_DESCRIBE_COLS(C, HTA_MEMBW_SUMMARY, "GB/s", "bandwidth samples")
HTA_TABLE_DECLARE(HTA_MEMBW_SUMMARY)

#define HTA_QUEUE_BLOCKED(T, C, D)                                                                           \
    T("time_spent_blocked_on_full_queue", "per rank, every stream whose launch queue reached "               \
                                          "--max-queue-length")                                              \
    HTA_RANK_COL(C, HTA_QUEUE_BLOCKED)                                                                       \
    C(HTA_QUEUE_BLOCKED_STREAM, "stream", INT, "", "GPU stream")                                             \
    C(HTA_QUEUE_BLOCKED_DURATION, "duration_at_max_queue_length", FLOAT, "us",                               \
      "time the queue stayed at or above the maximum")                                                       \
    C(HTA_QUEUE_BLOCKED_RELATIVE, "relative_duration_at_max_queue_length", FLOAT, "",                        \
      "that time as a fraction of the rank's trace span")
HTA_TABLE_DECLARE(HTA_QUEUE_BLOCKED)

#define HTA_QUEUE_SERIES(T, C, D)                                                                            \
    T("queue_length_series", "with --series: the queue length after each launch (+1) and each activity "     \
                             "start (-1), stream by stream in time order")                                   \
    HTA_RANK_COL(C, HTA_QUEUE_SERIES)                                                                        \
    C(HTA_QUEUE_SERIES_INDEX, "index", INT, "",                                                              \
      "event index (position in traceEvents) of the launch or activity")                                     \
    C(HTA_QUEUE_SERIES_TS, "ts", FLOAT, "us", "time of the sample")                                          \
    C(HTA_QUEUE_SERIES_PID, "pid", INT, "", "device (process id) of the activity")                           \
    C(HTA_QUEUE_SERIES_TID, "tid", INT, "", "thread id of the activity")                                     \
    C(HTA_QUEUE_SERIES_STREAM, "stream", INT, "", "GPU stream")                                              \
    C(HTA_QUEUE_SERIES_LENGTH, "queue_length", INT, "", "queue length after the sample")
HTA_TABLE_DECLARE(HTA_QUEUE_SERIES)

#define HTA_MEMBW_SERIES(T, C, D)                                                                            \
    T("memory_bw_series", "with --series: the bandwidth in flight after each copy or memset starts or "      \
                          "ends, kind by kind in time order")                                                \
    HTA_RANK_COL(C, HTA_MEMBW_SERIES)                                                                        \
    C(HTA_MEMBW_SERIES_INDEX, "index", INT, "",                                                              \
      "event index (position in traceEvents) of the copy or memset")                                         \
    C(HTA_MEMBW_SERIES_TS, "ts", FLOAT, "us", "time of the sample")                                          \
    C(HTA_MEMBW_SERIES_PID, "pid", INT, "", "device (process id) of the copy")                               \
    C(HTA_MEMBW_SERIES_NAME, "name", STR, "", "memory kind")                                                 \
    C(HTA_MEMBW_SERIES_BW, "memory_bw_gbps", FLOAT, "GB/s",                                                  \
      "bandwidth of the copies of this kind in flight")
HTA_TABLE_DECLARE(HTA_MEMBW_SERIES)

hta_status hta_counters(hta_ctx *ctx, const hta_counters_opts *o, hta_result *out, hta_error *err);
/* Its two halves (hta/table.h, "reducing parts"): the tables' rows of the ranks of ctx, their notes, and
 * how many ranks have memory bandwidth; the reduce notes a run where none has. */
hta_status hta_counters_part(hta_ctx *ctx, const hta_counters_opts *o, hta_result *out, hta_error *err);
hta_status hta_counters_reduce(const hta_counters_opts *o, hta_result *parts, hta_result *out, hta_error *err);

#define HTA_AUGMENTED(T, C, D)                                                                               \
    T("augmented", "with --augment: the traces written with counter tracks, one per rank")                   \
    HTA_RANK_COL(C, HTA_AUGMENTED)                                                                           \
    C(HTA_AUGMENTED_FILE, "file", STR, "", "path of the trace written")                                      \
    C(HTA_AUGMENTED_EVENTS, "events", INT, "", "events of the original trace, all kept")                     \
    C(HTA_AUGMENTED_QUEUE_EVENTS, "queue_length_events", INT, "", "Queue Length counter events added")       \
    C(HTA_AUGMENTED_MEMBW_EVENTS, "memory_bw_events", INT, "", "memory bandwidth counter events added")
HTA_TABLE_DECLARE(HTA_AUGMENTED)

/* Writes, for every selected rank, OUTDIR/<stem>_with_counters.json[.gz]:
 * the original file with every event kept and counter events (ph "C")
 * appended: "Queue Length" per stream, bandwidth per memory kind.  Adds the
 * table `augmented`. */
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

#define HTA_PATTERNS(T, C, D)                                                                                \
    T("frequent_cuda_kernel_sequences", "per rank: the kernel sequences launched under the --op operator, "  \
                                        "most frequent first")                                               \
    C(HTA_PATTERNS_PATTERN, "pattern", STR, "",                                                              \
      "the operator's name and its kernels' names in time order, joined by '|'")                             \
    C(HTA_PATTERNS_COUNT, "count", INT, "", "calls with this pattern")                                       \
    C(HTA_PATTERNS_KERNEL_US, "GPU kernel duration (us)", FLOAT, "us", "the kernels' summed duration")       \
    C(HTA_PATTERNS_OP_US, "CPU op duration (us)", FLOAT, "us", "the calls' summed duration")                 \
    HTA_RANK_COL(C, HTA_PATTERNS)
HTA_TABLE_DECLARE(HTA_PATTERNS)

hta_status hta_patterns(hta_ctx *ctx, const hta_patterns_opts *o, hta_result *out, hta_error *err);

/* Trace diff (§15). */
#define HTA_DIFF(T, C, D)                                                                                    \
    T("compare_traces", "per operator or kernel name: counts and total durations in the compared "           \
                        "iteration of each trace")                                                           \
    C(HTA_DIFF_NAME, "name", STR, "", "operator or kernel name (header short_name with --short-names)")      \
    C(HTA_DIFF_CONTROL_COUNTS, "Control_counts", FLOAT, "",                                                  \
      "occurrences in the control trace (header: the control label, then _counts)")                          \
    C(HTA_DIFF_CONTROL_DURATION, "Control_total_duration", FLOAT, "us",                                      \
      "their summed duration (header: the control label, then _total_duration)")                             \
    C(HTA_DIFF_TEST_COUNTS, "Test_counts", FLOAT, "",                                                        \
      "occurrences in the test trace (header: the test label, then _counts)")                                \
    C(HTA_DIFF_TEST_DURATION, "Test_total_duration", FLOAT, "us",                                            \
      "their summed duration (header: the test label, then _total_duration)")                                \
    C(HTA_DIFF_DIFF_COUNTS, "diff_counts", FLOAT, "", "test minus control counts")                           \
    C(HTA_DIFF_DIFF_DURATION, "diff_duration", FLOAT, "us", "test minus control duration")                   \
    C(HTA_DIFF_CHANGE, "counts_change_categories", STR, "", "+, - or =: the sign of diff_counts")
HTA_TABLE_DECLARE(HTA_DIFF)

#define HTA_OPS_DIFF(T, C, D)                                                                                \
    T("ops_diff", "the names added, deleted, increased, decreased or unchanged from control to test")        \
    C(HTA_OPS_DIFF_CATEGORY, "category", STR, "", "added, deleted, increased, decreased or unchanged")       \
    C(HTA_OPS_DIFF_NAME, "name", STR, "", "operator or kernel name (full)")
HTA_TABLE_DECLARE(HTA_OPS_DIFF)

typedef enum hta_diff_device { HTA_DIFF_ALL, HTA_DIFF_CPU, HTA_DIFF_GPU } hta_diff_device;
typedef struct hta_diff_opts {
    int short_names;
    int by_category;  /* compare GPU rows by vendor-neutral kernel category (hta_kernel_category_of) */
    hta_diff_device device;
    int32_t control_rank, test_rank;           /* -1: first rank */
    int64_t control_iteration, test_iteration; /* -1: the first iteration; every row of a trace without
                                                * ProfilerStep, or of the context's window when it has one */
    const char *control_label, *test_label;    /* "Control", "Test" */
    /* Rows by the size of the change, largest first: |diff_duration|, then |diff_counts|, then the name
     * (ops_diff too, within each of its lists).  With hta_compat HTA's order instead: the control's
     * names, then the test's own.  top > 0: only the first top rows of compare_traces and of each
     * ops_diff list. */
    size_t top;
    /* 1: names folded before matching (hta_diff_fold_name): memory addresses (0x...) and numeric template
     * arguments, which differ between two runs of one program (the CLI's default; 0 here: HTA's names) */
    int fold_names;
} hta_diff_opts;
/* name with every 0x-prefixed hex number written 0x* and every template argument that is an integer literal
 * ("128", "(int)4", "2u") written N, into out (at least strlen(name) + 1 bytes: never longer). */
void hta_diff_fold_name(const char *name, char *out);
void hta_diff_opts_default(hta_diff_opts *o); /* first rank and first iteration (see above) of each side */

hta_status hta_trace_diff(hta_ctx *control, hta_ctx *test, const hta_diff_opts *o,
                          hta_result *out, hta_error *err);

/* CUPTI range-profiler counters with their operator stacks (§13).  The
 * columns from bytes to out_split_size are HTA's default arg columns (TF§5.1),
 * with HTA's value when the arg is absent. */
#define HTA_CUPTI(T, C, D)                                                                                   \
    T("cupti_counter_data_with_operators", "one row per CUPTI profiled range: its counters and the "         \
                                           "operator stack of the kernel's launch")                          \
    HTA_RANK_COL(C, HTA_CUPTI)                                                                               \
    C(HTA_CUPTI_INDEX, "index", INT, "", "event index (position in traceEvents)")                            \
    C(HTA_CUPTI_CAT, "cat", STR, "", "category (cuda_profiler_range)")                                       \
    C(HTA_CUPTI_NAME, "name", STR, "", "event name")                                                         \
    C(HTA_CUPTI_PID, "pid", INT, "", "process id")                                                           \
    C(HTA_CUPTI_TID, "tid", INT, "", "thread id")                                                            \
    C(HTA_CUPTI_TS, "ts", FLOAT, "us", "range start")                                                        \
    C(HTA_CUPTI_DUR, "dur", FLOAT, "us", "range duration")                                                   \
    C(HTA_CUPTI_STREAM, "stream", INT, "", "GPU stream, -1 for none")                                        \
    C(HTA_CUPTI_CORRELATION, "correlation", INT, "", "correlation id, -1 for none")                          \
    C(HTA_CUPTI_BYTES, "bytes", INT, "", "args bytes; -1 when absent")                                       \
    C(HTA_CUPTI_MEMORY_BW, "memory_bw_gbps", FLOAT, "GB/s", "args 'memory bandwidth (GB/s)'; 0 when absent") \
    C(HTA_CUPTI_WAIT_STREAM, "wait_on_stream", INT, "", "args wait_on_stream; -1 when absent")               \
    C(HTA_CUPTI_WAIT_EVENT, "wait_on_cuda_event_record_corr_id", INT, "",                                    \
      "args wait_on_cuda_event_record_corr_id; -1 when absent")                                              \
    C(HTA_CUPTI_INPUT_DIMS, "input_dims", STR, "", "args 'Input Dims'; '-1' when absent")                    \
    C(HTA_CUPTI_INPUT_TYPE, "input_type", STR, "", "args 'Input type'; '-1' when absent")                    \
    C(HTA_CUPTI_INPUT_STRIDES, "input_strides", STR, "", "args 'Input Strides'; '-1' when absent")           \
    C(HTA_CUPTI_EXTERNAL_ID, "external_id", INT, "", "args 'External id'; -1 when absent")                   \
    C(HTA_CUPTI_PYTHON_ID, "python_id", INT, "", "args 'Python id'; -1 when absent")                         \
    C(HTA_CUPTI_PYTHON_PARENT, "python_parent_id", INT, "", "args 'Python parent id'; -1 when absent")       \
    C(HTA_CUPTI_COLLECTIVE, "collective_name", STR, "", "args 'Collective name'; '' when absent")            \
    C(HTA_CUPTI_IN_NELEMS, "in_msg_nelems", INT, "", "args 'In msg nelems'; 0 when absent")                  \
    C(HTA_CUPTI_OUT_NELEMS, "out_msg_nelems", INT, "", "args 'Out msg nelems'; 0 when absent")               \
    C(HTA_CUPTI_DTYPE, "msg_dtype", STR, "", "args dtype; '' when absent")                                   \
    C(HTA_CUPTI_GROUP_SIZE, "group_size", INT, "", "args 'Group size'; 0 when absent")                       \
    C(HTA_CUPTI_PROCESS_RANK, "process_rank", INT, "", "args Rank; -1 when absent")                          \
    C(HTA_CUPTI_IN_SPLIT, "in_split_size", STR, "", "args 'In split size'; '[]' when absent")                \
    C(HTA_CUPTI_OUT_SPLIT, "out_split_size", STR, "", "args 'Out split size'; '[]' when absent")             \
    D(HTA_CUPTI_INDEX_CORRELATION, "<counter>", INT, "",                                                     \
      "one column per counter: every args key of the ranges, by name; -1 when absent")                       \
    C(HTA_CUPTI_INDEX_CORRELATION, "index_correlation", INT, "",                                             \
      "event index of the correlated launch or activity (0: none; -1: no correlation id)")                   \
    C(HTA_CUPTI_ITERATION, "iteration", INT, "", "profiler step; null outside the steps")                    \
    C(HTA_CUPTI_END, "end", FLOAT, "us", "ts + dur")                                                         \
    C(HTA_CUPTI_DEPTH, "depth", INT, "", "depth in HTA's call graph (-1: not in it)")                        \
    C(HTA_CUPTI_HEIGHT, "height", INT, "", "height in HTA's call graph (-1: not in it)")                     \
    C(HTA_CUPTI_PARENT, "parent", INT, "", "event index of the call-graph parent (a root: minus the tid)")   \
    C(HTA_CUPTI_NUM_KERNELS, "num_kernels", INT, "", "kernels in its call-graph subtree")                    \
    C(HTA_CUPTI_KERNEL_DUR, "kernel_dur_sum", FLOAT, "us", "their summed duration")                          \
    C(HTA_CUPTI_KERNEL_SPAN, "kernel_span", FLOAT, "us",                                                     \
      "last kernel end minus first kernel start; 0 without kernels")                                         \
    C(HTA_CUPTI_FIRST_KERNEL, "first_kernel_start", FLOAT, "us", "first kernel start; -1 without kernels")   \
    C(HTA_CUPTI_LAST_KERNEL, "last_kernel_end", FLOAT, "us", "last kernel end; -1 without kernels")          \
    C(HTA_CUPTI_INDEX_RUNTIME, "index_runtime", INT, "", "event index of the paired cudaLaunchKernel")       \
    C(HTA_CUPTI_OP_STACK, "op_stack", STR, "",                                                               \
      "the launch's cpu_op ancestors, outermost first, joined by '|'")                                       \
    C(HTA_CUPTI_TOP_OP, "top_level_op", STR, "", "outermost of them; null when none")                        \
    C(HTA_CUPTI_BOTTOM_OP, "bottom_level_op", STR, "", "innermost of them; null when none")
HTA_TABLE_DECLARE(HTA_CUPTI)

hta_status hta_cupti_counters(hta_ctx *ctx, hta_result *out, hta_error *err);
/* Its two halves (hta/table.h, "reducing parts"): the rows of the ranks of ctx without the counter
 * columns, each row's counter values, the counter names its ranks have, and how many ranges; the reduce
 * gives the table the counter columns of every rank (sorted by name; -1 where a rank lacks one). */
hta_status hta_cupti_counters_part(hta_ctx *ctx, hta_result *out, hta_error *err);
hta_status hta_cupti_counters_reduce(hta_result *parts, hta_result *out, hta_error *err);

#ifdef __cplusplus
}
#endif
#endif
