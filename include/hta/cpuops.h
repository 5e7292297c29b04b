/* CPU operator time (`hta cpu-ops`): where the CPU threads spend their time,
 * for traces HTA's GPU-centred analyses say nothing about (CPU-only profiles,
 * files written by libhtatrace) and for the CPU side of any trace.
 *
 *   cpu_ranks     per rank: span, threads, calls, steps
 *   cpu_op_time   per rank and operator (cpu_op) or annotation / scope
 *                 (user_annotation): count, inclusive and self time
 *   cpu_steps     per rank and ProfilerStep: duration and what dominates it
 *   cpu_step_ops  per rank, step and operator: the operators with the most
 *                 self time in the step
 *   scope_args    per rank, scope and numeric arg: count, sum, mean, min, max
 *                 (libhtatrace files; any trace with args = 1; empty otherwise)
 *
 * HTA has no such analysis.  Rows are those of the run context's view (its
 * iteration filter); durations are the nanoseconds as written, not the
 * view's whole-us rounding: rounding every short nested row down would move
 * its time into its parent's self time, which is the figure this analysis is
 * about.  Self time is a row's duration less the part of it covered by the
 * rows directly nested in it on the same thread (the call stack derived at
 * load: hta_rank.parent), whatever their category. */
#ifndef HTA_CPUOPS_H
#define HTA_CPUOPS_H

#include "hta/analysis.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hta_cpu_ops_opts {
    int top;      /* cpu_op_time: at most this many names per rank, most self time first; <= 0: all */
    int step_top; /* cpu_step_ops: operators per step (default 5); <= 0: all */
    int args;     /* scope_args: 1 always, 0 never, -1 (default) for ranks written by libhtatrace */
} hta_cpu_ops_opts;
void hta_cpu_ops_opts_default(hta_cpu_ops_opts *o); /* all names, 5 per step, args for tracer files */

/* 1 when rank r was written by libhtatrace: its file has the htaTracer member,
 * or distributedInfo.backend "htatrace". */
int hta_rank_is_tracer(const hta_rank *r);

#define HTA_CPU_RANKS(T, C, D)                                                                               \
    T("cpu_ranks", "per rank: the CPU side at a glance (the span the percentages are of, threads, steps)")  \
    HTA_RANK_COL(C, HTA_CPU_RANKS)                                                                           \
    C(HTA_CPU_RANKS_SPAN, "span (us)", FLOAT, "us",                                                          \
      "first CPU row start to last CPU row end in the analysed window; null without CPU rows")              \
    C(HTA_CPU_RANKS_THREADS, "threads", INT, "", "threads with CPU rows")                                    \
    C(HTA_CPU_RANKS_CALLS, "calls", INT, "", "cpu_op and user_annotation rows, ProfilerSteps apart")         \
    C(HTA_CPU_RANKS_STEPS, "steps", INT, "", "ProfilerSteps")                                                \
    C(HTA_CPU_RANKS_MEAN_STEP, "mean_step (us)", FLOAT, "us", "their mean duration; null without steps")     \
    C(HTA_CPU_RANKS_TRACER, "tracer", INT, "", "1 when the file was written by libhtatrace")
HTA_TABLE_DECLARE(HTA_CPU_RANKS)

#define HTA_CPU_OP_TIME(T, C, D)                                                                             \
    T("cpu_op_time", "per rank and CPU operator or user annotation (libhtatrace scope): count, inclusive "   \
                     "and self time; most self time first")                                                  \
    HTA_RANK_COL(C, HTA_CPU_OP_TIME)                                                                         \
    C(HTA_CPU_OP_TIME_NAME, "name", STR, "", "operator, annotation or scope name")                           \
    C(HTA_CPU_OP_TIME_CAT, "cat", STR, "", "cpu_op or user_annotation")                                      \
    C(HTA_CPU_OP_TIME_COUNT, "count", INT, "", "number of calls")                                            \
    C(HTA_CPU_OP_TIME_TOTAL, "total_time (us)", FLOAT, "us",                                                 \
      "summed duration, the calls nested in them included (a call nested in one of the same name counts "    \
      "twice)")                                                                                              \
    C(HTA_CPU_OP_TIME_SELF, "self_time (us)", FLOAT, "us",                                                   \
      "summed duration less the rows nested directly in each call on its thread")                            \
    C(HTA_CPU_OP_TIME_MEAN, "mean_time (us)", FLOAT, "us", "mean duration of a call")                        \
    C(HTA_CPU_OP_TIME_MAX, "max_time (us)", FLOAT, "us", "longest call")                                     \
    C(HTA_CPU_OP_TIME_SELF_PCTG, "self_pctg", FLOAT, "%",                                                    \
      "self_time of the rank's span (first CPU row start to last CPU row end), 2 decimals; threads run at "  \
      "once, so shares can add up to more than 100")                                                         \
    C(HTA_CPU_OP_TIME_TOTAL_PCTG, "total_pctg", FLOAT, "%", "total_time of the rank's span, 2 decimals")
HTA_TABLE_DECLARE(HTA_CPU_OP_TIME)

#define HTA_CPU_STEPS(T, C, D)                                                                               \
    T("cpu_steps", "per rank and ProfilerStep: its duration and the operator with the most self time in it") \
    HTA_RANK_COL(C, HTA_CPU_STEPS)                                                                           \
    C(HTA_CPU_STEPS_STEP, "step", INT, "", "N of ProfilerStep#N")                                            \
    C(HTA_CPU_STEPS_DURATION, "duration (us)", FLOAT, "us", "the ProfilerStep's duration")                   \
    C(HTA_CPU_STEPS_OPS, "ops", INT, "", "operators and annotations that start in the step (any thread)")    \
    C(HTA_CPU_STEPS_OUTSIDE, "outside_ops (us)", FLOAT, "us",                                                \
      "time of the step on its own thread outside every recorded row (the step's self time)")                \
    C(HTA_CPU_STEPS_TOP, "top_op", STR, "", "the operator or annotation with the most self time in the step") \
    C(HTA_CPU_STEPS_TOP_SELF, "top_op_self (us)", FLOAT, "us", "its self time in the step")                  \
    C(HTA_CPU_STEPS_TOP_PCTG, "top_op_pctg", FLOAT, "%", "its self time of the step's duration, 2 decimals")
HTA_TABLE_DECLARE(HTA_CPU_STEPS)

#define HTA_CPU_STEP_OPS(T, C, D)                                                                            \
    T("cpu_step_ops", "per rank and ProfilerStep: the operators with the most self time in it (--step-top)") \
    HTA_RANK_COL(C, HTA_CPU_STEP_OPS)                                                                        \
    C(HTA_CPU_STEP_OPS_STEP, "step", INT, "", "N of ProfilerStep#N")                                         \
    C(HTA_CPU_STEP_OPS_NAME, "name", STR, "", "operator or annotation name")                                 \
    C(HTA_CPU_STEP_OPS_CAT, "cat", STR, "", "cpu_op or user_annotation")                                     \
    C(HTA_CPU_STEP_OPS_COUNT, "count", INT, "", "calls in the step")                                         \
    C(HTA_CPU_STEP_OPS_SELF, "self_time (us)", FLOAT, "us",                                                  \
      "their summed self time in the step (a call running past the step's end: the part inside, self time "  \
      "in proportion)")                                                                                      \
    C(HTA_CPU_STEP_OPS_TOTAL, "total_time (us)", FLOAT, "us", "their summed duration in the step")          \
    C(HTA_CPU_STEP_OPS_PCTG, "step_pctg", FLOAT, "%",                                                        \
      "self_time of the step's duration, 2 decimals (several threads: can add up to more than 100)")
HTA_TABLE_DECLARE(HTA_CPU_STEP_OPS)

#define HTA_SCOPE_ARGS(T, C, D)                                                                              \
    T("scope_args", "per rank, scope (annotation) and numeric arg: statistics of the values (libhtatrace "   \
                    "files, or --args)")                                                                     \
    HTA_RANK_COL(C, HTA_SCOPE_ARGS)                                                                          \
    C(HTA_SCOPE_ARGS_NAME, "name", STR, "", "scope, annotation or operator name")                            \
    C(HTA_SCOPE_ARGS_ARG, "arg", STR, "", "key in the event's args (begin args and slots alike)")            \
    C(HTA_SCOPE_ARGS_COUNT, "count", INT, "", "calls with a numeric value for it")                           \
    C(HTA_SCOPE_ARGS_SUM, "sum", FLOAT, "", "summed value")                                                  \
    C(HTA_SCOPE_ARGS_MEAN, "mean", FLOAT, "", "mean value")                                                  \
    C(HTA_SCOPE_ARGS_MIN, "min", FLOAT, "", "smallest value")                                                \
    C(HTA_SCOPE_ARGS_MAX, "max", FLOAT, "", "largest value")
HTA_TABLE_DECLARE(HTA_SCOPE_ARGS)

/* Tables cpu_ranks, cpu_op_time, cpu_steps, cpu_step_ops and scope_args,
 * always all five.  A call belongs to the step holding its start (hta_rank.iteration).
 * A rank without CPU rows adds a cpu_ranks row only. */
hta_status hta_cpu_ops(hta_ctx *ctx, const hta_cpu_ops_opts *o, hta_result *out, hta_error *err);
/* Its two halves (hta/table.h, "reducing parts"): the five tables' rows of the ranks of ctx; the reduce
 * notes a run without any operator row. */
hta_status hta_cpu_ops_part(hta_ctx *ctx, const hta_cpu_ops_opts *o, hta_result *out, hta_error *err);
hta_status hta_cpu_ops_reduce(const hta_cpu_ops_opts *o, hta_result *parts, hta_result *out, hta_error *err);

#ifdef __cplusplus
}
#endif
#endif
