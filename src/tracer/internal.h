/* Private to libhtatrace: per-thread buffers, records, global state.
 *
 * Each thread appends records to a list of chunks it alone writes.  A record
 * is a run of 64-bit words; after writing one the thread publishes the
 * chunk's new length with a release store, so a flush running on another
 * thread reads a consistent prefix (acquire) without stopping anyone.
 *
 * Records (word 0 is the header: kind | nargs << 8 | flags << 16 | words << 32):
 *   BEGIN  hdr, name, raw_ts, [gpu: event, stream, anchor, device|stream_id << 32, resolved_ns], [span id, parent], args...
 *   END    hdr, raw_ts, [gpu: event, anchor, resolved_ns], [span id], args...   (args: slot values)
 *   TICK   hdr, name, raw_ts, args...
 * A flush pairs a BEGIN with its END by the thread's stack, or, for spans
 * (flag HTAT_RF_SPAN), by span id across all threads.
 * An arg is: key pointer, type | len << 8, then one word (int, double bits,
 * bool) or the string / JSON text bytes rounded up to words (none for null).
 */
#ifndef HTAT_INTERNAL_H
#define HTAT_INTERNAL_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HTAT_HAVE_TSC 1
#endif

#include "hta/tracer.h"

#define HTAT_LIKELY(x) __builtin_expect(!!(x), 1)
#define HTAT_UNLIKELY(x) __builtin_expect(!!(x), 0)

enum { HTAT_REC_BEGIN = 1, HTAT_REC_END = 2, HTAT_REC_TICK = 3 };
enum { HTAT_RF_GPU = 1, HTAT_RF_SPAN = 2 }; /* record flags */

#define HTAT_HDR(kind, nargs, flags, words) \
    ((uint64_t)(kind) | (uint64_t)(nargs) << 8 | (uint64_t)(flags) << 16 | (uint64_t)(words) << 32)
#define HTAT_HDR_KIND(h) ((unsigned)((h) & 0xff))
#define HTAT_HDR_NARGS(h) ((unsigned)(((h) >> 8) & 0xff))
#define HTAT_HDR_FLAGS(h) ((unsigned)(((h) >> 16) & 0xff))
#define HTAT_HDR_WORDS(h) ((size_t)((h) >> 32))

#define HTAT_BEGIN_GPU_WORDS 5
#define HTAT_END_GPU_WORDS 3

/* Where the optional parts of a BEGIN / END record are. */
static inline uint64_t *htat_begin_span_word(uint64_t *b)
{
    return b + 3 + ((b[0] >> 16 & HTAT_RF_GPU) ? HTAT_BEGIN_GPU_WORDS : 0);
}
static inline uint64_t *htat_begin_args(uint64_t *b)
{
    return htat_begin_span_word(b) + ((b[0] >> 16 & HTAT_RF_SPAN) ? 2 : 0);
}
static inline uint64_t *htat_end_span_word(uint64_t *e)
{
    return e + 2 + ((e[0] >> 16 & HTAT_RF_GPU) ? HTAT_END_GPU_WORDS : 0);
}
static inline uint64_t *htat_end_args(uint64_t *e)
{
    return htat_end_span_word(e) + ((e[0] >> 16 & HTAT_RF_SPAN) ? 1 : 0);
}
#define HTAT_MAX_STR 4096 /* longer string values are cut */
#define HTAT_UNRESOLVED INT64_MIN

typedef struct htat_chunk {
    _Atomic(struct htat_chunk *) next;
    _Atomic size_t used; /* words committed */
    size_t cap;          /* words */
    uint64_t data[];
} htat_chunk;

/* A ctx entry or a slot; the string buffer belongs to the entry and is reused. */
typedef struct htat_kv {
    const char *key;
    int type;
    int is_set;
    int64_t i;
    double d;
    char *s;
    size_t slen, scap;
} htat_kv;

enum { HTAT_F_TIMED = 1, HTAT_F_GPU = 2, HTAT_F_DROPPED = 4 };

typedef struct htat_frame {
    uint32_t flags;
    uint32_t ctx_at, nctx;
    uint32_t slot_at, nslots;
    int device;
    void *stream;
    uint64_t stream_id;
} htat_frame;

#define HTAT_MAX_DEVICES 64

typedef struct htat_evpool {
    void **ev;
    size_t n, cap;
} htat_evpool;

typedef struct htat_thread {
    /* hot: written by the owner only */
    uint64_t *pos, *end;
    htat_chunk *cur;
    htat_frame *frames;
    uint32_t depth, fcap;

    /* owner-only, cold */
    htat_chunk *head;        /* oldest chunk still owned by the list */
    htat_chunk *free_chunks; /* recycled, linked by next */
    size_t bytes;            /* bytes in chunks (list + free) */
    htat_kv *ctx;
    uint32_t nctx, ctx_cap;
    htat_kv *slots;
    uint32_t nslots, slot_cap;
    htat_evpool pools[HTAT_MAX_DEVICES];
    void *last_stream;
    uint64_t last_stream_id;
    int last_stream_dev;

    /* shared */
    _Atomic(htat_chunk *) start_chunk; /* flush reads from here (discard moves it) */
    size_t start_off;                  /* guarded by the global lock */
    _Atomic uint64_t dropped;
    pthread_mutex_t ret_mu;             /* events handed back by flush */
    htat_evpool returned[HTAT_MAX_DEVICES];
    int tid;
    char name[64]; /* guarded by the global lock */
    /* where the buffer ended at the last successful flush (global lock) */
    htat_chunk *snap_chunk;
    size_t snap_used;
    uint64_t snap_dropped;
    struct htat_thread *next;
} htat_thread;

/* A file this process wrote: the pattern's path, where it went, its inode. */
typedef struct htat_owned {
    char *want, *actual;
    int suffix;
    unsigned long long dev, ino;
} htat_owned;

typedef struct htat_global {
    pthread_mutex_t mu; /* config, thread list, flush */
    int inited;
    int disabled;
    int debug;
    int rank, world_size, dp, pp, tp;
    int local_rank;          /* -1: not given by the launcher */
    const char *rank_source; /* the variable the rank came from, "config" or "default" */
    char *pattern;
    int flush_at_exit;
    int gpu_allowed;
    size_t chunk_words;
    size_t max_bytes;
    int atexit_registered;
    _Atomic int recorded;
    htat_thread *threads;
    int64_t unix0_ns, mono0_ns;
    int clean;               /* the last flush wrote everything recorded since (exit flush skips) */
    htat_owned *owned;       /* files written by this process */
    size_t nowned;
} htat_global;

extern htat_global htat_g;
extern int htat_clock_tsc;
extern _Atomic unsigned htat_gen;
extern __thread htat_thread *htat_tls __attribute__((tls_model("initial-exec")));
extern __thread unsigned htat_tls_gen __attribute__((tls_model("initial-exec")));

/* ---- clock.c ---- */
static inline uint64_t htat_now_raw(void)
{
#ifdef HTAT_HAVE_TSC
    if (HTAT_LIKELY(htat_clock_tsc))
        return __rdtsc();
#endif
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
int64_t htat_mono_ns(void);
int64_t htat_unix_ns(void);
void htat_clock_setup(void);          /* at global init: picks the clock, first calibration point */
typedef struct htat_clock_map {
    uint64_t raw0;
    int64_t ns0;
    double ns_per_raw;
} htat_clock_map;
void htat_clock_map_now(htat_clock_map *m); /* second calibration point (may sleep up to 20 ms) */
static inline int64_t htat_raw_to_ns(const htat_clock_map *m, uint64_t raw)
{
    int64_t d = (int64_t)(raw - m->raw0);
    return m->ns0 + (int64_t)__builtin_llround((double)d * m->ns_per_raw);
}
const char *htat_clock_name(void);

/* ---- buffer.c ---- */
htat_thread *htat_thread_new(void); /* registers the calling thread's new buffer; NULL: no memory */
uint64_t *htat_reserve_slow(htat_thread *t, size_t n, int force);
void htat_threads_free_all(void);
/* Segments readable by a flush: calls fn for each run of committed words. */
typedef void (*htat_segment_fn)(void *ctx, uint64_t *words, size_t n);
void htat_thread_segments(htat_thread *t, htat_segment_fn fn, void *ctx);
void htat_thread_discard(htat_thread *t);

/* ---- args (scope.c) ---- */
size_t htat_args_words(const hta_tracer_arg *args, int nargs);
uint64_t *htat_args_write(uint64_t *p, const hta_tracer_arg *args, int nargs);
size_t htat_kv_words(const htat_kv *kv, uint32_t n);
uint64_t *htat_kv_write(uint64_t *p, const htat_kv *kv, uint32_t n);

/* ---- context.c ---- */
int htat_ctx_push(htat_thread *t, htat_frame *f, const hta_tracer_scope_desc *d);
void htat_ctx_pop(htat_thread *t, htat_frame *f);
int htat_kv_store(htat_kv *kv, const hta_tracer_value *v);
void htat_kv_value(const htat_kv *kv, hta_tracer_value *out);
int htat_slot_set_from(htat_thread *t, uint32_t below_depth, const char *key, const hta_tracer_value *v);

/* ---- cuda.c ---- */
int htat_cuda_available(void);
/* Records the begin (or end) event of a GPU scope; fills the record words. */
int htat_gpu_begin(htat_thread *t, htat_frame *f, void *stream, uint64_t *w);
int htat_gpu_end(htat_thread *t, htat_frame *f, uint64_t *w);
/* At flush (global lock held): resolves one event to CPU-clock ns. */
int64_t htat_gpu_resolve(htat_thread *t, uint64_t *ev_word, uint64_t anchor_word, int device,
                         uint64_t *resolved_word, const htat_clock_map *m);
void htat_gpu_return_event(htat_thread *t, int device, void *ev);
void htat_gpu_free_thread(htat_thread *t);
void htat_gpu_shutdown(void);

/* ---- json.c, jsonval.c ---- */
size_t htat_utf8_len(const unsigned char *s, size_t n); /* a valid UTF-8 sequence's length, or 0 */
int htat_json_valid(const char *s, size_t len);         /* 1: exactly one RFC 8259 value */
void htat_json_str(FILE *f, const char *s, size_t len);
void htat_json_cstr(FILE *f, const char *s);
void htat_json_ts(FILE *f, int64_t ns);
void htat_json_double(FILE *f, double d);

/* ---- state.c ---- */
void htat_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void htat_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2))); /* one line on stderr */

/* ---- intern.c ---- */
void htat_intern_free(void);
extern pthread_mutex_t htat_intern_mu;

/* ---- spans.c: the streams of the open GPU spans ---- */
int htat_gpu_span_put(int64_t id, void *stream); /* 0, or -1: no memory */
int htat_gpu_span_take(int64_t id, void **stream); /* 1: found (and removed) */
void htat_spans_free(void); /* shutdown */

/* ---- config.c: init, flushes, thread registration, shutdown ---- */
int htat_global_init(void); /* idempotent; lock not held */
/* Registers the calling thread, setting the library up at its first use; NULL when disabled or out of
 * memory (scope.c's htat_self, on a thread's first record). */
htat_thread *htat_thread_slow(void);

/* ---- env.c: identity from the launcher (lock held) ---- */
void htat_env_identity(const hta_tracer_config *cfg);
int htat_env_int(const char *name, int dflt); /* a non-negative int; malformed: warned, dflt */

/* ---- fork.c ---- */
void htat_fork_register(void);  /* once, at first init */
void htat_fork_wait(void);      /* before taking the global lock for a flush: lets a fork in */

/* ---- error.c: the calling thread's last write error ---- */
void htat_set_error(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void htat_clear_error(void);
const char *htat_error_text(void);

/* ---- output.c: where a flush writes (lock held) ---- */
typedef struct htat_out {
    FILE *f;
    int fd, err;            /* err: the first write error (errno) */
    int through;            /* writing through a FIFO / character device / descriptor */
    int replace;            /* replacing our own file (rename over it) */
    int suffix;             /* redirected to NAME.<suffix>.json, else 0 */
    int sigpipe_blocked, sigpipe_pending;
    sigset_t oldmask;
    char want[4096];        /* the pattern's path */
    char base[4096];        /* what a suffix is added to: want, or the file a link leads to */
    char path[4096];        /* the file written */
    char tmp[4200];         /* the temporary file, "" when none */
} htat_out;
int htat_out_open(htat_out *o, const char *want);
int htat_out_commit(htat_out *o); /* closes; on failure removes the temporary file */
void htat_out_abort(htat_out *o);
const char *htat_out_actual(const char *want); /* where want went last time, or want */
void htat_owned_clear(void);

/* ---- flush.c ---- */
int htat_flush_locked(char *path_out, size_t cap);
int htat_format_path(char *out, size_t cap);
int htat_dirty_locked(void); /* something recorded since the last successful flush */
void htat_thread_tail(htat_thread *t, htat_chunk **chunk, size_t *used);

/* ---- cuda.c: fork ---- */
void htat_gpu_fork_prepare(void);
void htat_gpu_fork_parent(void);
void htat_gpu_fork_child(void); /* CUDA is unusable in a fork child: GPU scopes become CPU-only */

#endif
