/* Analyses: pure functions from a loaded trace and options to tables.
 * Each fills `out` (initialised by the caller) and returns HTA_OK or an error. */
#ifndef HTA_ANALYSIS_H
#define HTA_ANALYSIS_H

#include "hta/context.h"
#include "hta/table.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Defines, in an analysis's file, the whole analysis from its two halves (hta/table.h, "reducing parts"):
 * hta_<an>(ctx, o, out, err) reduces the one part of all the ranks of ctx, as the per-rank run reduces
 * the parts of its ranks, so both give the same result. */
#define HTA_ANALYSIS_WHOLE(an, opts_t)                                                                 \
    hta_status hta_##an(hta_ctx *ctx, const opts_t *o, hta_result *out, hta_error *err) {             \
        hta_result parts;                                                                            \
        hta_result_init(&parts);                                                                     \
        hta_status st = hta_##an##_part(ctx, o, &parts, err);                                        \
        if (!st) st = hta_##an##_reduce(o, &parts, out, err);                                        \
        hta_result_free(&parts);                                                                     \
        return st;                                                                                   \
    }

/* An analysis's options, NULL meaning its defaults: opts_t o##_dflt_ holds them, filled by
 * opts_t##_default, and o points at it; o must be a parameter or variable of type const opts_t *. */
#define HTA_OPTS_OR_DEFAULT(opts_t, o)                                                                 \
    opts_t o##_dflt_;                                                                                  \
    if (!(o)) opts_t##_default(&o##_dflt_), (o) = &o##_dflt_

/* For a column list: the statistics of durations that HTA's per-name
 * breakdowns print, under HTA's names; ids P_SUM, P_MAX, P_MIN, P_STDDEV,
 * P_MEAN; ONE names what a single duration belongs to. */
#define HTA_DURATION_STATS_COLS(C, P, ONE)                                                                   \
    C(P##_SUM, "sum (us)", FLOAT, "us", "summed duration")                                                   \
    C(P##_MAX, "max (us)", FLOAT, "us", "longest duration")                                                  \
    C(P##_MIN, "min (us)", FLOAT, "us", "shortest duration")                                                 \
    C(P##_STDDEV, "stddev", FLOAT, "us", "sample standard deviation of the durations; 0 for a single " ONE)  \
    C(P##_MEAN, "mean (us)", FLOAT, "us", "mean duration")

/* `hta info`: tables `ranks`, `categories`, `streams`. */
#define HTA_INFO_RANKS(T, C, D)                                                                              \
    T("ranks", "what was loaded, one row per rank")                                                          \
    HTA_RANK_COL(C, HTA_INFO_RANKS)                                                                          \
    C(HTA_INFO_RANKS_FILE, "file", STR, "", "trace file")                                                    \
    C(HTA_INFO_RANKS_SOURCE, "rank_source", STR, "",                                                         \
      "where the rank comes from: distributedInfo, file name or file order")                                 \
    C(HTA_INFO_RANKS_WORLD_SIZE, "world_size", INT, "", "world size in distributedInfo; null when absent")   \
    C(HTA_INFO_RANKS_EVENTS, "events", INT, "", "elements of traceEvents")                                   \
    C(HTA_INFO_RANKS_ROWS, "rows", INT, "", "events kept as rows (with dur and cat)")                        \
    C(HTA_INFO_RANKS_FLOWS, "flows", INT, "", "flow events")                                                 \
    C(HTA_INFO_RANKS_THREADS, "threads", INT, "", "threads (pid, tid)")                                      \
    C(HTA_INFO_RANKS_STREAMS, "gpu_streams", INT, "", "GPU streams")                                         \
    C(HTA_INFO_RANKS_DEVICES, "devices", STR, "", "pids of the rows on a GPU stream, comma-separated")       \
    C(HTA_INFO_RANKS_START, "start_ns", INT, "ns",                                                           \
      "earliest row start, on the trace's clock; null without rows")                                         \
    C(HTA_INFO_RANKS_SPAN, "span_us", FLOAT, "us", "earliest row start to latest row end")                   \
    C(HTA_INFO_RANKS_STEPS, "profiler_steps", INT, "", "ProfilerStep#N events")                              \
    C(HTA_INFO_RANKS_FIRST_STEP, "first_step", INT, "", "lowest step number; null without steps")            \
    C(HTA_INFO_RANKS_LAST_STEP, "last_step", INT, "", "highest step number; null without steps")             \
    C(HTA_INFO_RANKS_NS, "ns_resolution", INT, "",                                                           \
      "1 when some ts has a fraction of a us (HTA rounds them)")                                             \
    C(HTA_INFO_RANKS_BYTES_READ, "bytes_read", INT, "", "bytes read from disk")                              \
    C(HTA_INFO_RANKS_BYTES_JSON, "bytes_json", INT, "", "bytes of JSON text (after gunzip)")                 \
    C(HTA_INFO_RANKS_LOAD_S, "load_s", FLOAT, "s", "time to load the file")
HTA_TABLE_DECLARE(HTA_INFO_RANKS)

#define HTA_INFO_CATEGORIES(T, C, D)                                                                         \
    T("categories", "events per rank and category, in the file and in HTA's table")                          \
    HTA_RANK_COL(C, HTA_INFO_CATEGORIES)                                                                     \
    C(HTA_INFO_CATEGORIES_CAT, "cat", STR, "", "category")                                                   \
    C(HTA_INFO_CATEGORIES_EVENTS, "events", INT, "", "rows of this category in the file")                    \
    C(HTA_INFO_CATEGORIES_ROWS, "rows", INT, "", "of them in HTA's table (after its profiler-step filter)")
HTA_TABLE_DECLARE(HTA_INFO_CATEGORIES)

#define HTA_INFO_STREAMS(T, C, D)                                                                            \
    T("streams", "per rank and GPU stream: rows and busy time")                                              \
    HTA_RANK_COL(C, HTA_INFO_STREAMS)                                                                        \
    C(HTA_INFO_STREAMS_STREAM, "stream", INT, "", "GPU stream")                                              \
    C(HTA_INFO_STREAMS_ROWS, "rows", INT, "", "rows on the stream")                                          \
    C(HTA_INFO_STREAMS_KERNELS, "kernels", INT, "", "kernels among them")                                    \
    C(HTA_INFO_STREAMS_BUSY, "busy_us", FLOAT, "us", "summed duration of its kernels, memcpys and memsets")
HTA_TABLE_DECLARE(HTA_INFO_STREAMS)

hta_status hta_info(hta_ctx *ctx, hta_result *out, hta_error *err);

/* `hta events`: the rows themselves, for inspection and scripting. */
typedef struct hta_events_opts {
    const char *cat;      /* only this category (NULL = all) */
    const char *name;     /* only names containing this text (NULL = all) */
    int hta_table;        /* rows of HTA's table (view: filtered, aligned, rounded) instead of the file */
    long limit;           /* at most this many rows per rank; <= 0 = all */
} hta_events_opts;
void hta_events_opts_default(hta_events_opts *o);

#define HTA_EVENTS(T, C, D)                                                                                  \
    T("events", "the rows (or with --hta-table HTA's view of them) with the links derived at load")          \
    HTA_RANK_COL(C, HTA_EVENTS)                                                                              \
    C(HTA_EVENTS_INDEX, "index", INT, "", "event index (position in traceEvents)")                           \
    C(HTA_EVENTS_CAT, "cat", STR, "", "category")                                                            \
    C(HTA_EVENTS_NAME, "name", STR, "", "event name")                                                        \
    C(HTA_EVENTS_PID, "pid", INT, "", "process id")                                                          \
    C(HTA_EVENTS_TID, "tid", INT, "", "thread id")                                                           \
    C(HTA_EVENTS_TS, "ts_ns", INT, "ns", "start: as written, or with --hta-table HTA's (relative, rounded)") \
    C(HTA_EVENTS_DUR, "dur_ns", INT, "ns", "duration")                                                       \
    C(HTA_EVENTS_STREAM, "stream", INT, "", "GPU stream, -1 for none")                                       \
    C(HTA_EVENTS_CORRELATION, "correlation", INT, "", "correlation id, -1 for none")                         \
    C(HTA_EVENTS_EXTERNAL_ID, "external_id", INT, "", "args 'External id', -1 for none")                     \
    C(HTA_EVENTS_PARTNER, "partner", INT, "",                                                                \
      "event index of the CPU launch or GPU activity it pairs with; null for none")                          \
    C(HTA_EVENTS_PARENT, "parent", INT, "", "event index of the enclosing call; null at the top")            \
    C(HTA_EVENTS_DEPTH, "depth", INT, "", "depth on the call stack")                                         \
    C(HTA_EVENTS_ITERATION, "iteration", INT, "", "profiler step holding the event; null outside the steps")
HTA_TABLE_DECLARE(HTA_EVENTS)

hta_status hta_events(hta_ctx *ctx, const hta_events_opts *eo,
                      hta_result *out, hta_error *err);

#ifdef __cplusplus
}
#endif
#endif
