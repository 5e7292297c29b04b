/* libhtatrace: cheap named scopes for training code, written as one
 * Chrome-trace JSON per rank (see docs/tracer.md).
 *
 *   hta_tracer_init(NULL);                 // optional: env + defaults otherwise
 *   {
 *       HTA_TRACER_SCOPE("forward");       // ends at the end of the block
 *       ...
 *   }
 *   hta_tracer_flush();                    // optional: also done at exit
 *
 * Threads: every thread records into its own buffer; a scope must end on the
 * thread that began it.  Recording takes no lock and allocates nothing once the
 * thread's first buffer chunk exists (a new chunk every few thousand events,
 * reused after hta_tracer_discard()).
 *
 * Strings: names and keys (scope names, arg keys, ctx keys, slot keys) are kept
 * by pointer until the file is written, so they must stay valid until then:
 * string literals, or pointers returned by hta_tracer_intern().  String
 * *values* are copied.
 *
 * Every function returns HTA_TRACER_OK (0) or a negative hta_tracer_status.
 * The library never prints, except to stderr when HTA_TRACE_DEBUG=1.
 */
#ifndef HTA_TRACER_H
#define HTA_TRACER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

#define HTA_TRACER_VERSION 1

typedef enum hta_tracer_status {
    HTA_TRACER_OK = 0,
    HTA_TRACER_EINVAL = -1,   /* bad argument (NULL name, negative count, ...) */
    HTA_TRACER_ENOMEM = -2,   /* allocation failed */
    HTA_TRACER_EIO = -3,      /* the trace file could not be written */
    HTA_TRACER_ENOENT = -4,   /* get/set: no enclosing scope has that key or slot */
    HTA_TRACER_ESTATE = -5,   /* end without begin, or call in the wrong state */
    HTA_TRACER_ENOCUDA = -6,  /* GPU timing asked for but no usable CUDA runtime */
    HTA_TRACER_DISABLED = -7, /* tracing disabled (HTA_TRACE=0): every call does nothing */
} hta_tracer_status;

/* Returns a static English name for a status ("HTA_TRACER_EIO: ..."). */
const char *hta_tracer_strerror(int status);

/* ---- values and args ---------------------------------------------------- */

typedef enum hta_tracer_type {
    HTA_TRACER_INT = 1,
    HTA_TRACER_DOUBLE = 2,
    HTA_TRACER_STR = 3,
} hta_tracer_type;

typedef struct hta_tracer_value {
    int type; /* hta_tracer_type */
    union {
        int64_t i;
        double d;
        const char *s; /* NUL-terminated; copied by the library */
    } u;
} hta_tracer_value;

/* A key=value pair: scope and tick args, and ctx entries. */
typedef struct hta_tracer_arg {
    const char *key; /* kept by pointer: literal or hta_tracer_intern() */
    hta_tracer_value value;
} hta_tracer_arg;

#define HTA_TRACER_ARG_INT(k, x) \
    ((hta_tracer_arg){.key = (k), .value = {.type = HTA_TRACER_INT, .u = {.i = (int64_t)(x)}}})
#define HTA_TRACER_ARG_DOUBLE(k, x) \
    ((hta_tracer_arg){.key = (k), .value = {.type = HTA_TRACER_DOUBLE, .u = {.d = (double)(x)}}})
#define HTA_TRACER_ARG_STR(k, x) \
    ((hta_tracer_arg){.key = (k), .value = {.type = HTA_TRACER_STR, .u = {.s = (x)}}})

/* Most args one event may carry (begin args, or slot values at end). */
#define HTA_TRACER_MAX_ARGS 64

/* ---- configuration ------------------------------------------------------ */

typedef struct hta_tracer_config {
    /* Identity; a negative value means "from the environment, else 0"
     * (RANK, WORLD_SIZE (default 1), HTA_TRACE_DP, HTA_TRACE_PP, HTA_TRACE_TP). */
    int rank, world_size, dp, pp, tp;
    /* Output file pattern; {rank} {dp} {pp} {tp} {world_size} {pid} are
     * replaced.  NULL: env HTA_TRACE_FILE, else HTA_TRACER_DEFAULT_PATTERN. */
    const char *file_pattern;
    /* Write the file at exit (atexit): 1 yes, 0 no, -1 env HTA_TRACE_ATEXIT
     * (default yes).  Only when something was recorded. */
    int flush_at_exit;
    /* GPU timing: 1 allowed when a CUDA runtime is found, 0 never, -1 env
     * HTA_TRACE_GPU (default 1).  Scopes still opt in one by one. */
    int gpu;
    /* Bytes per buffer chunk (0: 1 MiB) and per-thread cap on recorded bytes
     * (0: env HTA_TRACE_MAX_MB, else unlimited).  Beyond the cap, new scopes
     * and ticks are dropped and counted (htaTracer.dropped_events in the file);
     * begin still opens the scope and returns HTA_TRACER_OK. */
    size_t chunk_bytes, max_bytes_per_thread;
} hta_tracer_config;

#define HTA_TRACER_DEFAULT_PATTERN "benchmark-data-{dp}-pipeline-{pp}-tensor-{tp}.json"

/* Fills *cfg with "from the environment" values (-1, NULL, 0). */
void hta_tracer_config_init(hta_tracer_config *cfg);

/* Configures the tracer (cfg NULL: environment and defaults).  Optional: the
 * first scope initialises from the environment.  Called again, or after
 * scopes were recorded, it updates identity, pattern, and exit flush; the
 * clock and what was recorded are kept.  Also records the clock anchor. */
int hta_tracer_init(const hta_tracer_config *cfg);

/* Writes everything recorded since init (or the last discard) to the rank's
 * file: a temporary file in the same folder, then rename().  Events stay in
 * memory, so a later flush rewrites the file with more.  Scopes still open
 * are written ending at the flush, with arg "unfinished": 1.  GPU events are
 * resolved here (this waits for the GPU to reach them).
 * path_out (may be NULL) receives the file name, at most path_cap bytes. */
int hta_tracer_flush(void);
int hta_tracer_flush_path(char *path_out, size_t path_cap);

/* What the exit handler does: flush when exit flush is on and something was
 * recorded.  For language fronts that must flush before their runtime (and
 * CUDA) shut down; the C exit handler later rewrites the same file. */
int hta_tracer_exit_flush(void);

/* The file name hta_tracer_flush() would write. */
int hta_tracer_output_path(char *path_out, size_t path_cap);

/* Drops every event recorded so far, in all threads; memory is reused. */
int hta_tracer_discard(void);

/* Frees everything.  Only when no other thread is recording; does not flush.
 * A later call initialises again from scratch. */
int hta_tracer_shutdown(void);

/* A library-owned copy of s that lives until shutdown; equal strings give the
 * same pointer.  Takes a lock: call it once per distinct name, not per scope. */
const char *hta_tracer_intern(const char *s);

/* Names the calling thread in the trace (copied; default: the OS thread name). */
int hta_tracer_thread_name(const char *name);

/* ---- scopes -------------------------------------------------------------- */

int hta_tracer_begin(const char *name);
int hta_tracer_begin_args(const char *name, const hta_tracer_arg *args, int nargs);
/* Ends the innermost open scope of the calling thread. */
int hta_tracer_end(void);

/* Everything a scope can have. */
typedef struct hta_tracer_scope_desc {
    const char *name;            /* NULL: context-only scope, not timed */
    const hta_tracer_arg *args;  /* recorded at begin */
    int nargs;
    const hta_tracer_arg *ctx;   /* values descendants read with hta_tracer_get */
    int nctx;
    const char *const *slots;    /* keys descendants fill with hta_tracer_set */
    int nslots;
    int gpu;                     /* 1: also time on the GPU (CUDA events) */
    void *stream;                /* cudaStream_t for gpu; NULL: default stream */
} hta_tracer_scope_desc;

/* Begins a scope.  With gpu=1 and no usable CUDA runtime the scope is still
 * recorded on the CPU and HTA_TRACER_ENOCUDA is returned (the scope is open:
 * end it as usual).  Any other error leaves no scope open. */
int hta_tracer_begin_desc(const hta_tracer_scope_desc *desc);

/* Context.  get: the value of key in the innermost open scope (this one
 * included) whose ctx has it; string values stay valid while that scope is
 * open.  set: stores value in the innermost open scope that declared key as a
 * slot; it is written as an arg of that scope when it ends (a later set
 * replaces an earlier one).  A context-only scope passes its slot values up
 * to the next enclosing scope that declares them. */
int hta_tracer_get(const char *key, hta_tracer_value *out);
int hta_tracer_set(const char *key, const hta_tracer_value *value);
int hta_tracer_set_int(const char *key, int64_t v);
int hta_tracer_set_double(const char *key, double v);
int hta_tracer_set_str(const char *key, const char *v);

/* An instant event (ph "i") on the calling thread. */
int hta_tracer_tick(const char *name, const hta_tracer_arg *args, int nargs);

/* Open scopes of the calling thread. */
int hta_tracer_depth(void);

/* 1 when GPU timing works in this process (CUDA runtime found, a device). */
int hta_tracer_gpu_available(void);

#pragma GCC visibility pop

/* ---- automatic end of scope -------------------------------------------- */

static inline void hta_tracer_scope_cleanup_(int *started)
{
    if (*started == HTA_TRACER_OK || *started == HTA_TRACER_ENOCUDA)
        hta_tracer_end();
}

#define HTA_TRACER_CAT2_(a, b) a##b
#define HTA_TRACER_CAT_(a, b) HTA_TRACER_CAT2_(a, b)

/* HTA_TRACER_SCOPE("name"): the scope ends when the enclosing block does
 * (any exit: end of block, return, break, goto). */
#define HTA_TRACER_SCOPE(name)                                                 \
    __attribute__((cleanup(hta_tracer_scope_cleanup_), unused)) int           \
    HTA_TRACER_CAT_(hta_tracer_scope_, __LINE__) = hta_tracer_begin(name)

/* HTA_TRACER_SCOPE_ARGS("name", HTA_TRACER_ARG_INT("k", 1), ...): with args. */
#define HTA_TRACER_SCOPE_ARGS(name, ...)                                       \
    __attribute__((cleanup(hta_tracer_scope_cleanup_), unused)) int           \
    HTA_TRACER_CAT_(hta_tracer_scope_, __LINE__) = hta_tracer_begin_args(      \
        (name), (const hta_tracer_arg[]){__VA_ARGS__},                         \
        (int)(sizeof((const hta_tracer_arg[]){__VA_ARGS__}) / sizeof(hta_tracer_arg)))

/* HTA_TRACER_SCOPE_DESC(&desc): with a full descriptor (ctx, slots, gpu). */
#define HTA_TRACER_SCOPE_DESC(desc_ptr)                                        \
    __attribute__((cleanup(hta_tracer_scope_cleanup_), unused)) int           \
    HTA_TRACER_CAT_(hta_tracer_scope_, __LINE__) = hta_tracer_begin_desc(desc_ptr)

#ifdef __cplusplus
}
#endif
#endif
