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
 * thread that began it (a span, below, may end anywhere).  fork(): the child
 * starts with an empty buffer of its own (see docs/tracer.md).  Recording takes no lock and allocates nothing once the
 * thread's first buffer chunk exists (a new chunk every few thousand events,
 * reused after hta_tracer_discard()).
 *
 * Strings: names and keys (scope names, arg keys, ctx keys, slot keys) are kept
 * by pointer until the file is written, so they must stay valid until then:
 * string literals, or pointers returned by hta_tracer_intern().  String
 * *values* are copied.
 *
 * Every function returns HTA_TRACER_OK (0) or a negative hta_tracer_status;
 * hta_tracer_last_error() says why a write failed (path and errno text).
 * The library prints one-line warnings on stderr only where nobody else could
 * hear them: a malformed launcher variable (RANK=abc), an existing file it will
 * not overwrite (it writes beside it), and a failed write at exit.
 * HTA_TRACE_DEBUG=1 adds debug lines.
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

/* How a value is written in the file: INT and DOUBLE as JSON numbers (a
 * non-finite double as null), STR as a string, BOOL (u.i != 0) as true/false,
 * NULL as null, JSON (u.s: one JSON value as text, e.g. "[1, 2]") verbatim.
 * JSON text is checked when recorded (RFC 8259, at most 4096 bytes); invalid
 * text is refused with HTA_TRACER_EINVAL, so a written file always parses. */
typedef enum hta_tracer_type {
    HTA_TRACER_INT = 1,
    HTA_TRACER_DOUBLE = 2,
    HTA_TRACER_STR = 3,
    HTA_TRACER_BOOL = 4,
    HTA_TRACER_NULL = 5,
    HTA_TRACER_JSON = 6,
} hta_tracer_type;

typedef struct hta_tracer_value {
    int type; /* hta_tracer_type */
    union {
        int64_t i;     /* INT; BOOL: 0 false, else true */
        double d;
        const char *s; /* STR, JSON: NUL-terminated; copied by the library */
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
#define HTA_TRACER_ARG_BOOL(k, x) \
    ((hta_tracer_arg){.key = (k), .value = {.type = HTA_TRACER_BOOL, .u = {.i = (x) ? 1 : 0}}})
#define HTA_TRACER_ARG_NULL(k) ((hta_tracer_arg){.key = (k), .value = {.type = HTA_TRACER_NULL}})
#define HTA_TRACER_ARG_JSON(k, x) \
    ((hta_tracer_arg){.key = (k), .value = {.type = HTA_TRACER_JSON, .u = {.s = (x)}}})

/* Most args one event may carry (begin args, or slot values at end). */
#define HTA_TRACER_MAX_ARGS 64

/* ---- configuration ------------------------------------------------------ */

typedef struct hta_tracer_config {
    /* Identity; a negative value means "from the environment".  rank and
     * world_size come from the launcher: torchrun (RANK, WORLD_SIZE), Open MPI
     * (OMPI_COMM_WORLD_RANK/_SIZE), MPICH/Intel MPI (PMI_RANK, PMI_SIZE), Slurm
     * (SLURM_PROCID, SLURM_NTASKS), first found in that order; else 0 and 1.
     * A malformed value (RANK=abc, -1, 1.5, past INT_MAX) is ignored with one
     * warning on stderr naming it, and the next launcher's variable is used.
     * dp, pp, tp: HTA_TRACE_DP, HTA_TRACE_PP, HTA_TRACE_TP, else 0. */
    int rank, world_size, dp, pp, tp;
    /* Output file pattern; {rank} {dp} {pp} {tp} {world_size} {pid} are
     * replaced.  NULL: env HTA_TRACE_FILE, else HTA_TRACER_DEFAULT_PATTERN.
     * Missing folders are created.  A file that exists and was not written by
     * this process is never replaced: the trace goes to NAME.1.json (.2, ...)
     * beside it, with a warning.  A FIFO or character device is written
     * through; anything else that is not a regular file is refused. */
    const char *file_pattern;
    /* Write the file at exit (atexit): 1 yes, 0 no, -1 env HTA_TRACE_ATEXIT
     * (default yes).  Only when something was recorded since the last
     * successful flush; a failure is reported on stderr with the path. */
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

#define HTA_TRACER_DEFAULT_PATTERN "benchmark-data-{dp}-pipeline-{pp}-tensor-{tp}-rank-{rank}.json"

/* Fills *cfg with "from the environment" values (-1, NULL, 0). */
void hta_tracer_config_init(hta_tracer_config *cfg);

/* Configures the tracer (cfg NULL: environment and defaults).  Optional: the
 * first scope initialises from the environment.  Called again, or after
 * scopes were recorded, it updates identity, pattern, and exit flush; the
 * clock and what was recorded are kept.  Also records the clock anchor. */
int hta_tracer_init(const hta_tracer_config *cfg);

/* Writes everything recorded since init (or the last discard) to the rank's
 * file: a temporary file created beside it (exclusively, random name), then
 * rename().  Events stay in memory, so a later flush rewrites the file with
 * more.  Scopes still open are written ending at the flush, with arg
 * "unfinished": 1.  GPU events are resolved here (this waits for the GPU).
 * path_out (may be NULL) receives the file name written, at most path_cap
 * bytes.  HTA_TRACER_EIO: see hta_tracer_last_error(); nothing was replaced.
 * HTA_TRACER_DISABLED (HTA_TRACE=0): nothing written, no file touched. */
int hta_tracer_flush(void);
int hta_tracer_flush_path(char *path_out, size_t path_cap);

/* What the exit handler does: flush when exit flush is on and something was
 * recorded since the last successful flush; a failure is reported on stderr.
 * For language fronts that must flush before their runtime (and CUDA) shut
 * down; the C exit handler then finds nothing new and writes nothing. */
int hta_tracer_exit_flush(void);

/* The file name hta_tracer_flush() would write (after a redirection to
 * NAME.1.json, that name). */
int hta_tracer_output_path(char *path_out, size_t path_cap);

/* Why the calling thread's last failed flush failed: "cannot write PATH: No
 * space left on device" ("" when none).  Valid until its next flush. */
const char *hta_tracer_last_error(void);
/* The errno of that failure (0 when none or not a system error). */
int hta_tracer_last_errno(void);

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

/* ---- spans: scopes ended by handle --------------------------------------- */

/* A scope ended by its handle instead of by "the innermost": for scopes that
 * overlap on one thread without nesting (asyncio tasks, callbacks).  It takes
 * no part in the thread's ctx/slots stack (a language front keeps its own
 * context).  In the file, a span nests in another span only when it names it
 * as parent (in C scopes, by time); where spans overlap otherwise, they go on
 * extra tracks of the thread (tid + k * 4194304, named "<thread> (track k)"),
 * so that every track nests. */
/* Begins a span: its id (> 0), 0 when nothing was recorded (disabled, over the
 * memory cap), or a negative status (HTA_TRACER_EINVAL: no name, ctx or slots
 * given, bad args).  parent: the id of the span this one runs inside, 0 for
 * none.  With gpu=1 and no usable CUDA runtime the span is timed on the CPU
 * only (hta_tracer_gpu_available() says which). */
int64_t hta_tracer_span_begin(const hta_tracer_scope_desc *d, uint64_t parent);
/* Ends span id, on any thread; args are added to the event's, replacing begin
 * args with the same key (values known only at the end).  Ids <= 0 are
 * ignored, and so is a second end of the same span. */
int hta_tracer_span_end(int64_t id, const hta_tracer_arg *args, int nargs);

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
