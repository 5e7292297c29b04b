/* The loaded trace: one columnar table per rank plus one symbol table.
 *
 * Every kept event (HTA's rule: it has `dur` and `cat`, and `cat` is not
 * "Trace") is one row.  Times are exact int64 nanoseconds parsed from the
 * decimal text (Kineto writes microseconds), never through a double.
 * Rows are in file order; `index` is the event's position in traceEvents,
 * counting every event, as HTA's `index` column.
 *
 * Ownership: hta_trace_load() allocates everything; hta_trace_free() frees it.
 * Nothing here is modified by analyses.
 */
#ifndef HTA_TRACE_H
#define HTA_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "hta/error.h"
#include "hta/symtab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The range of every time the model holds (docs/loading.md, "Limits"): each ts, dur, ts + dur and
 * baseTimeNanoseconds lies in [-HTA_TIME_MAX_NS, HTA_TIME_MAX_NS], |t| < 2^62 ns (about 146 years either
 * side of the clock's zero), and the durations of one rank's rows add up to at most HTA_TIME_MAX_NS.
 * The loader refuses anything beyond, so the difference of any two times, a time plus a duration, and
 * any sum of a rank's durations fit int64 without a check. */
#define HTA_TIME_MAX_NS (((int64_t)1 << 62) - 1)

/* Args that get a typed slot.  Values are kept only for these keys, plus every
 * key of a `cuda_profiler_range` event (CUPTI counters); any other arg can be
 * read back from the file with hta_trace_raw_events(). */
typedef enum hta_arg_key {
    HTA_ARG_BYTES,              /* "bytes" */
    HTA_ARG_MEMORY_BW,          /* "memory bandwidth (GB/s)" */
    HTA_ARG_WAIT_ON_STREAM,     /* "wait_on_stream" */
    HTA_ARG_WAIT_ON_EVENT_CORR, /* "wait_on_cuda_event_record_corr_id" */
    HTA_ARG_WAIT_ON_EVENT_ID,   /* "wait_on_cuda_event_id" */
    HTA_ARG_INPUT_DIMS,         /* "Input Dims" */
    HTA_ARG_INPUT_TYPE,         /* "Input type" */
    HTA_ARG_INPUT_STRIDES,      /* "Input Strides" */
    HTA_ARG_PYTHON_ID,          /* "Python id" */
    HTA_ARG_PYTHON_PARENT_ID,   /* "Python parent id" */
    HTA_ARG_COLLECTIVE_NAME,    /* "Collective name" */
    HTA_ARG_IN_MSG_NELEMS,      /* "In msg nelems" */
    HTA_ARG_OUT_MSG_NELEMS,     /* "Out msg nelems" */
    HTA_ARG_DTYPE,              /* "dtype" */
    HTA_ARG_GROUP_SIZE,         /* "Group size" */
    HTA_ARG_PROCESS_RANK,       /* "Rank" */
    HTA_ARG_IN_SPLIT_SIZE,      /* "In split size" */
    HTA_ARG_OUT_SPLIT_SIZE,     /* "Out split size" */
    HTA_ARG_PG_NAME,            /* "Process Group Name" */
    HTA_ARG_PG_DESC,            /* "Process Group Description" */
    HTA_ARG_PG_RANKS,           /* "Process Group Ranks" */
    HTA_ARG_SEQ,                /* "Seq" */
    HTA_ARG_QUEUED,             /* "queued" */
    HTA_ARG_DEVICE,             /* "device" */
    HTA_ARG_KERNEL_BACKEND,     /* "kernel_backend" */
    HTA_ARG_COMMS_ID,           /* "Comms Id" (a collective instance's id on every rank) */
    HTA_ARG_EXTERNAL_ID_LEGACY, /* "external id": PyTorch <= 1.9's runtime calls and kernels (the
                                 * external_id column unless hta_load_opts.hta_names) */
    HTA_ARG_CONCRETE_INPUTS,    /* "Concrete Inputs" (scalar arguments of an operator, record_shapes) */
    HTA_ARG_SRC_RANK,           /* "Src Rank": a recv's peer, its global rank (PyTorch's saveNcclMeta) */
    HTA_ARG_DST_RANK,           /* "Dst Rank": a send's peer, its global rank */
    HTA_ARG_KNOWN_COUNT
} hta_arg_key;

/* The raw args key of a known slot ("memory bandwidth (GB/s)", ...). */
const char *hta_arg_key_name(hta_arg_key k);

typedef enum hta_value_type {
    HTA_V_INT = 1,   /* JSON integer */
    HTA_V_FLOAT = 2, /* JSON number with fraction or exponent */
    HTA_V_STR = 3,   /* JSON string; sym = interned unescaped text */
    HTA_V_JSON = 4,  /* array, object, true/false/null; sym = compact raw JSON */
} hta_value_type;

/* 12 bytes: args are the largest part of the model after the columns. */
typedef struct __attribute__((packed, aligned(4))) hta_arg {
    uint32_t key : 28; /* symbol id of the raw key (< HTA_ARG_MAX_KEY) */
    uint32_t type : 4; /* hta_value_type */
    union {
        int64_t i;
        double f;
        uint32_t sym;
    } v;
} hta_arg;
#define HTA_ARG_MAX_KEY (1u << 28)

/* (pid, tid) of a row.  Numeric ids as written; a string pid/tid that is not
 * a number keeps its text in *_sym and gets id -1. */
typedef struct hta_thread {
    int64_t pid, tid;
    int64_t pid_sym, tid_sym; /* -1 when numeric */
    int64_t thread_name;      /* symbol of the "thread_name" metadata, -1 if none */
    int64_t process_name;     /* symbol of the "process_name" metadata, -1 if none */
} hta_thread;

/* Flow events (ph s/t/f): kept apart from the rows (HTA drops them).  A
 * flow's time is that of the event it binds to. */
typedef struct hta_flow {
    int64_t id;
    uint32_t index;   /* position in traceEvents */
    uint32_t thread;  /* index into hta_rank.threads */
    uint32_t cat;     /* symbol id */
    char ph;          /* 's', 't' or 'f' */
    char bp_enclosing;/* 1 when "bp": "e" */
} hta_flow;

/* A top-level key other than traceEvents, with its value as compact JSON. */
typedef struct hta_meta {
    const char *key;
    const char *json;
} hta_meta;

#define HTA_NO_ROW (-1)
#define HTA_ITER_NONE (-1) /* no ProfilerStep contains the event */
#define HTA_ITER_NAN (-2)  /* HTA leaves NaN: stream-0 device work that is not a cpu_op */

typedef struct hta_rank {
    int32_t rank;
    const char *path;         /* as given, or folder/name */
    const char *rank_source;  /* "distributedInfo", "file name", "file order" */
    int64_t world_size;       /* distributedInfo.world_size, -1 if absent */
    int64_t base_time_ns;     /* baseTimeNanoseconds, INT64_MIN if absent */
    int64_t t_min, t_max;     /* earliest and latest time (ts, ts + dur) of any event of the file, kept or
                               * not (t_min > t_max when none has a ts): what a rewrite of it may meet */
    int ts_fractional;        /* some ts had a fraction or was missing: HTA rounds */
    int dur_not_int;          /* some event of the file had no dur, or a dur with a fraction (HTA's dur column
                               * is then float64, TF§4.2) */
    int pid_text, tid_text;   /* some event had a pid / tid that is text ("Spans"): HTA's column is object */
    uint64_t bytes_in;        /* bytes read from disk */
    uint64_t bytes_json;      /* bytes of JSON text (after gunzip) */
    double load_seconds;
    uint64_t n_events;        /* every element of traceEvents (of the file: index < n_events) */
    /* A merged trace (hta merge, htaMerge) loads as its ranks: each holds its own rows, flows and threads,
     * ev_begin .. ev_end are its elements of the merged file's traceEvents (0 .. n_events for any other
     * file), and merged is set: path is then shared with the other ranks of that file, so a derived trace
     * (a rewrite of path) is refused for it. */
    uint64_t ev_begin, ev_end;
    int merged;
    int legacy_schema;        /* written in PyTorch <= 1.9's names (Operator, Runtime, "external id", ...),
                               * read as today's (hta_load_opts.hta_names 0, docs/loading.md) */

    /* rows: kept events */
    size_t n;
    int64_t *ts;            /* ns as written (absolute) */
    int64_t *dur;           /* ns */
    int64_t *correlation;   /* args.correlation, -1 if absent */
    int64_t *external_id;   /* args["External id"], -1 if absent */
    uint32_t *name;         /* symbol id */
    uint32_t *thread;       /* index into threads */
    uint32_t *index;        /* position in traceEvents */
    uint32_t *args_off;     /* args of row i: args[args_off[i] .. args_off[i+1]) */
    uint16_t *cat;          /* index into hta_trace.cats */
    uint16_t *stream;       /* index into streams; streams[0] == -1 (no stream) */
    /* derived at load */
    int32_t *partner;       /* CPU launch <-> GPU activity by correlation, or HTA_NO_ROW */
    int32_t *parent;        /* enclosing row on the same thread, or HTA_NO_ROW */
    int16_t *depth;         /* 0 for top-level CPU rows; GPU rows: launch depth + 1, or -1 */
    int32_t *iteration;     /* ProfilerStep number, HTA_ITER_NONE or HTA_ITER_NAN */

    hta_arg *args;
    size_t nargs;

    int64_t *streams;       /* distinct normalised stream values; [0] = -1 */
    size_t nstreams;
    hta_thread *threads;
    size_t nthreads;
    hta_flow *flows;
    size_t nflows;
    hta_meta *meta;
    size_t nmeta;
} hta_rank;

typedef struct hta_trace {
    hta_symtab *sym;
    hta_rank **ranks; /* ascending rank */
    size_t nranks;
    uint32_t *cats;   /* category index -> symbol id */
    size_t ncats;
    int32_t arg_sym[HTA_ARG_KNOWN_COUNT]; /* symbol of each known key, -1 if never seen */
    int64_t sym_event_sync, sym_context_sync; /* "Event Sync", "Context Sync" or -1 */
    uint16_t *api;    /* per symbol: its hta_api_of bits (vocab.h), decided once at load */
} hta_trace;

/* The HTA_API_* bits of symbol `sym` (a row's name): launch, sync, copy... of every vendor. */
static inline unsigned hta_sym_api(const hta_trace *t, uint32_t sym) { return t->api[sym]; }

typedef void (*hta_warn_fn)(void *ctx, const char *msg);
typedef void (*hta_progress_fn)(void *ctx, uint64_t bytes_done, uint64_t bytes_total);

typedef struct hta_load_opts {
    int threads;               /* ranks loaded in parallel, a file in parts when there are fewer files than
                                * threads (split.c); 0 = number of CPUs */
    hta_warn_fn warn;          /* warnings (rank fallbacks, skipped files); may be NULL */
    void *warn_ctx;
    hta_progress_fn progress;  /* called from loader threads; may be NULL */
    void *progress_ctx;
    const int32_t *only_ranks; /* keep only these ranks (NULL = all) */
    size_t n_only_ranks;
    /* HTA's reading of args.stream: a host call that names the stream it
     * enqueues to (ROCm's hipLaunchKernel rows do) is on that stream, so HTA
     * takes it for GPU work.  0 (the default): host calls (HTA_CC_RUNTIME)
     * have no stream, and the GPU rows are the device's own (docs/loading.md). */
    int hta_streams;
    /* HTA's reading of PyTorch <= 1.9's schema: its categories (Operator, Runtime, Kernel, Memcpy,
     * Memset) and its runtime calls' and kernels' "external id" stay as written.  0 (the default): they
     * read as today's (cpu_op, cuda_runtime, kernel, gpu_memcpy, gpu_memset, External id), so an old
     * trace has the same steps, operators and launches as a new one (docs/loading.md, "PyTorch 1.9"). */
    int hta_names;
} hta_load_opts;

/* Loads PATH: a trace file (.json, .json.gz, .gz) or a folder with one file
 * per rank.  On failure *out is NULL and err names the file and byte offset. */
hta_status hta_trace_load(const char *path, const hta_load_opts *opts, hta_trace **out,
                          hta_error *err);
void hta_trace_free(hta_trace *t);
/* The columns of a rank's rows, for hta_rank_release_rows' keep (ARGS: args and args_off). */
enum {
    HTA_COL_TS = 1 << 0,      HTA_COL_DUR = 1 << 1,     HTA_COL_CORRELATION = 1 << 2, HTA_COL_EXTERNAL_ID = 1 << 3,
    HTA_COL_NAME = 1 << 4,    HTA_COL_THREAD = 1 << 5,  HTA_COL_INDEX = 1 << 6,       HTA_COL_ARGS = 1 << 7,
    HTA_COL_CAT = 1 << 8,     HTA_COL_STREAM = 1 << 9,  HTA_COL_PARTNER = 1 << 10,    HTA_COL_PARENT = 1 << 11,
    HTA_COL_DEPTH = 1 << 12,  HTA_COL_ITERATION = 1 << 13, HTA_COL_FLOWS = 1 << 14
};
/* Gives rank r's rows back to the system, but for the columns in keep (HTA_COL_*), keeping what names the
 * rank (rank, path, world size, threads, streams, metadata).  keep 0: every row goes (n, nargs and nflows
 * become 0); otherwise the rows stay, with only the columns kept (a phase that reads no more of them). */
void hta_rank_release_rows(hta_rank *r, unsigned keep);

/* ---- the rank plan: which file is which rank, before any file is parsed ----
 *
 * For the per-rank iteration (hta_ctx_each_rank, docs/scaling.md): a folder whose every rank file names
 * its rank in its head (Kineto writes distributedInfo before traceEvents), no two the same rank and none
 * a merged trace, can be loaded one file at a time, each file giving exactly its rank, as the whole load
 * would.  Anything else (a single file, a rank only the file name or file order gives, a merged trace,
 * a file that is no trace) is left to the whole load: per_rank is 0 and why says the reason. */
typedef struct hta_rank_file {
    char *path;
    int32_t rank;
    uint64_t bytes; /* size on disk: how work is shared out */
} hta_rank_file;

typedef struct hta_rank_plan {
    hta_rank_file *files; /* the selected ranks' files, ascending rank */
    size_t n;
    int per_rank;         /* 1: each file can be loaded alone (above) */
    const char *why;      /* per_rank 0: why not (static text) */
    char **warnings;      /* the listing's warnings (files skipped), to be given when per_rank is used */
    size_t nwarnings;
} hta_rank_plan;

/* Lists path and probes each file's head.  only/nonly: the selected ranks (NULL = all); none of them
 * present is HTA_ENODATA, as in the whole load. */
hta_status hta_rank_plan_make(const char *path, const int32_t *only, size_t nonly, hta_rank_plan *p,
                              hta_error *err);
void hta_rank_plan_free(hta_rank_plan *p);
/* Whether a trace file's head names its rank (distributedInfo.rank) or it is a merged trace: a trace
 * derived from it (what-if, overlay, augment) keeps that claim, so the two must not share a folder. */
int hta_file_claims_rank(const char *path);

/* ---- row accessors (inline: analyses call them in loops) ---- */

static inline uint32_t hta_row_cat_sym(const hta_trace *t, const hta_rank *r, size_t i) {
    return t->cats[r->cat[i]];
}
static inline int64_t hta_row_stream(const hta_rank *r, size_t i) {
    return r->streams[r->stream[i]];
}
static inline const hta_thread *hta_row_thread(const hta_rank *r, size_t i) {
    return &r->threads[r->thread[i]];
}

/* The raw JSON of the rank's top-level key (the last one written), or NULL. */
const char *hta_rank_meta(const hta_rank *r, const char *key);

/* The arg `key` (a symbol id) of row i, or NULL. */
const hta_arg *hta_row_arg(const hta_rank *r, size_t i, int64_t key_sym);
/* Known-slot helpers with HTA's defaults when absent. */
int64_t hta_row_arg_int(const hta_trace *t, const hta_rank *r, size_t i, hta_arg_key k,
                        int64_t dflt);
double hta_row_arg_num(const hta_trace *t, const hta_rank *r, size_t i, hta_arg_key k,
                       double dflt);
/* Text of a string/JSON arg, or dflt. */
const char *hta_row_arg_text(const hta_trace *t, const hta_rank *r, size_t i, hta_arg_key k,
                             const char *dflt);

/* Category of a row, by HTA's categories. */
typedef enum hta_cat_class {
    HTA_CC_OTHER,
    HTA_CC_CPU_OP,
    HTA_CC_USER_ANNOTATION,
    HTA_CC_GPU_USER_ANNOTATION,
    HTA_CC_PYTHON_FUNCTION,
    HTA_CC_RUNTIME,     /* cuda_runtime, cuda_driver, mtia_runtime, Runtime */
    HTA_CC_KERNEL,      /* kernel, Kernel, mtia_ccp_events */
    HTA_CC_MEMCPY,      /* gpu_memcpy, Memcpy */
    HTA_CC_MEMSET,      /* gpu_memset, Memset */
    HTA_CC_CUDA_SYNC,
    HTA_CC_PROFILER_RANGE, /* cuda_profiler_range */
} hta_cat_class;
hta_cat_class hta_cat_classify(const char *cat);

/* GPU activity as TF§7.1 defines it (correlation, iteration filter). */
int hta_row_is_gpu_corr(const hta_trace *t, const hta_rank *r, size_t i);

/* Streams every element of traceEvents whose row index is in rows[] (sorted
 * ascending, kept-row numbers) and calls fn with the event's raw JSON text.
 * Re-reads the file: for the rare arg that has no slot. */
typedef int (*hta_raw_event_fn)(void *ctx, size_t row, const char *json, size_t len);
hta_status hta_trace_raw_events(const hta_rank *r, const size_t *rows, size_t nrows,
                                hta_raw_event_fn fn, void *ctx, hta_error *err);

#ifdef __cplusplus
}
#endif
#endif
