/* Optional GPU timing through the CUDA runtime, found with dlopen.
 *
 * A GPU scope records a CUDA event at begin and at end on the caller's stream;
 * nothing waits on the GPU until flush.  Each device has anchors: events
 * recorded on a private idle stream whose CPU-clock time is known.  The first
 * is calibrated at the device's first GPU scope (record + synchronize, best of
 * five); later ones, at most one a second, are placed by their elapsed time
 * from the previous anchor.  An event's time is its anchor's plus
 * cudaEventElapsedTime (a float in ms: short spans keep it to a few ns).
 *
 * HTA_TRACE_CUDART=path picks the library (the tests use a fake one).
 */
#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_api.h"
#include "internal.h"

typedef struct htat_anchor {
    htat_cudaEvent_t ev;
    int64_t cpu_ns;  /* CLOCK_MONOTONIC just before the record */
    int64_t abs_ns;  /* its GPU time on the CPU clock; HTAT_UNRESOLVED until flush */
    struct htat_anchor *prev, *next;
} htat_anchor;

typedef struct htat_dev {
    pthread_mutex_t mu;
    _Atomic(htat_anchor *) cur;
    htat_anchor *first, *unresolved;
    htat_cudaStream_t stream;
    int64_t latency_ns;
} htat_dev;

#define ANCHOR_EVERY_NS 1000000000
#define CHAIN_MAX_MS 4000.0f

static struct {
    pthread_mutex_t mu;
    _Atomic int state; /* 0 not tried, 1 usable, -1 not usable */
    void *lib;
    htat_cudaGetDeviceCount_fn GetDeviceCount;
    htat_cudaGetDevice_fn GetDevice;
    htat_cudaSetDevice_fn SetDevice;
    htat_cudaEventCreateWithFlags_fn EventCreateWithFlags;
    htat_cudaEventRecord_fn EventRecord;
    htat_cudaEventSynchronize_fn EventSynchronize;
    htat_cudaEventElapsedTime_fn EventElapsedTime;
    htat_cudaEventDestroy_fn EventDestroy;
    htat_cudaStreamCreateWithFlags_fn StreamCreateWithFlags;
    htat_cudaStreamDestroy_fn StreamDestroy;
    htat_cudaStreamGetId_fn StreamGetId; /* optional (CUDA 12+) */
    htat_dev dev[HTAT_MAX_DEVICES];
    void *stream_ids[256]; /* ordinals when cudaStreamGetId is missing */
    unsigned nstream_ids;
} cu = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void *open_lib(void)
{
    const char *env = getenv("HTA_TRACE_CUDART");
    if (env && *env)
        return dlopen(env, RTLD_NOW | RTLD_LOCAL);
    static const char *const names[] = {"libcudart.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"};
    /* prefer a runtime the process already uses (e.g. PyTorch's) */
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_NOLOAD);
        if (h)
            return h;
    }
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (h)
            return h;
    }
    return NULL;
}

#define LOAD(field, sym)                                                   \
    do {                                                                   \
        *(void **)&cu.field = dlsym(cu.lib, sym);                          \
        if (!cu.field) {                                                   \
            htat_debug("CUDA runtime lacks %s", sym);                      \
            return 0;                                                      \
        }                                                                  \
    } while (0)

static int load(void)
{
    cu.lib = open_lib();
    if (!cu.lib) {
        htat_debug("no CUDA runtime: %s", dlerror());
        return 0;
    }
    LOAD(GetDeviceCount, "cudaGetDeviceCount");
    LOAD(GetDevice, "cudaGetDevice");
    LOAD(SetDevice, "cudaSetDevice");
    LOAD(EventCreateWithFlags, "cudaEventCreateWithFlags");
    LOAD(EventRecord, "cudaEventRecord");
    LOAD(EventSynchronize, "cudaEventSynchronize");
    LOAD(EventElapsedTime, "cudaEventElapsedTime");
    LOAD(EventDestroy, "cudaEventDestroy");
    LOAD(StreamCreateWithFlags, "cudaStreamCreateWithFlags");
    LOAD(StreamDestroy, "cudaStreamDestroy");
    *(void **)&cu.StreamGetId = dlsym(cu.lib, "cudaStreamGetId");
    int n = 0;
    if (cu.GetDeviceCount(&n) != HTAT_CUDA_SUCCESS || n <= 0) {
        htat_debug("CUDA runtime found but no device");
        return 0;
    }
    for (int i = 0; i < HTAT_MAX_DEVICES; i++)
        pthread_mutex_init(&cu.dev[i].mu, NULL);
    htat_debug("CUDA runtime loaded, %d device(s)", n);
    return 1;
}

int htat_cuda_available(void)
{
    int s = atomic_load_explicit(&cu.state, memory_order_acquire);
    if (HTAT_LIKELY(s != 0))
        return s > 0;
    pthread_mutex_lock(&cu.mu);
    s = atomic_load(&cu.state);
    if (s == 0) {
        s = load() ? 1 : -1;
        atomic_store_explicit(&cu.state, s, memory_order_release);
    }
    pthread_mutex_unlock(&cu.mu);
    return s > 0;
}

int hta_tracer_gpu_available(void)
{
    return htat_cuda_available();
}

/* ---- anchors ---- */

static htat_anchor *anchor_new(htat_dev *d)
{
    htat_anchor *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    if (cu.EventCreateWithFlags(&a->ev, HTAT_CUDA_EVENT_DEFAULT) != HTAT_CUDA_SUCCESS) {
        free(a);
        return NULL;
    }
    a->abs_ns = HTAT_UNRESOLVED;
    (void)d;
    return a;
}

/* First anchor of a device: the one whose record + synchronize round trip was
 * shortest; its time is the middle of that round trip. */
static htat_anchor *anchor_calibrated(htat_dev *d)
{
    htat_anchor *best = NULL;
    int64_t best_rt = INT64_MAX;
    for (int i = 0; i < 5; i++) {
        htat_anchor *a = anchor_new(d);
        if (!a)
            break;
        int64_t c0 = htat_mono_ns();
        int ok = cu.EventRecord(a->ev, d->stream) == HTAT_CUDA_SUCCESS &&
                 cu.EventSynchronize(a->ev) == HTAT_CUDA_SUCCESS;
        int64_t c1 = htat_mono_ns();
        if (ok && c1 - c0 < best_rt) {
            if (best) {
                cu.EventDestroy(best->ev);
                free(best);
            }
            best = a;
            best_rt = c1 - c0;
            a->cpu_ns = c0;
            a->abs_ns = c0 + (c1 - c0) / 2;
        } else {
            cu.EventDestroy(a->ev);
            free(a);
        }
    }
    if (best)
        d->latency_ns = best->abs_ns - best->cpu_ns;
    return best;
}

/* The anchor for an event recorded now on device dev (dev is current). */
static htat_anchor *current_anchor(int dev)
{
    htat_dev *d = &cu.dev[dev];
    int64_t now = htat_mono_ns();
    htat_anchor *a = atomic_load_explicit(&d->cur, memory_order_acquire);
    if (HTAT_LIKELY(a && now - a->cpu_ns < ANCHOR_EVERY_NS))
        return a;
    pthread_mutex_lock(&d->mu);
    a = atomic_load(&d->cur);
    if (!a) {
        if (cu.StreamCreateWithFlags(&d->stream, HTAT_CUDA_STREAM_NON_BLOCKING) == HTAT_CUDA_SUCCESS &&
            (a = anchor_calibrated(d)) != NULL) {
            d->first = a;
            d->unresolved = NULL;
            atomic_store_explicit(&d->cur, a, memory_order_release);
            htat_debug("GPU %d: anchor latency %lld ns", dev, (long long)d->latency_ns);
        }
    } else if (now - a->cpu_ns >= ANCHOR_EVERY_NS) {
        htat_anchor *n = anchor_new(d);
        if (n) {
            n->cpu_ns = htat_mono_ns();
            if (cu.EventRecord(n->ev, d->stream) == HTAT_CUDA_SUCCESS) {
                n->prev = a;
                a->next = n;
                if (!d->unresolved)
                    d->unresolved = n;
                atomic_store_explicit(&d->cur, n, memory_order_release);
                a = n;
            } else {
                cu.EventDestroy(n->ev);
                free(n);
            }
        }
    }
    pthread_mutex_unlock(&d->mu);
    return a;
}

/* Places every anchor up to and including a (flush; global lock held). */
static int64_t anchor_time(int dev, htat_anchor *a)
{
    if (a->abs_ns != HTAT_UNRESOLVED)
        return a->abs_ns;
    htat_dev *d = &cu.dev[dev];
    pthread_mutex_lock(&d->mu);
    for (htat_anchor *x = d->unresolved; x; x = x->next) {
        float ms = 0;
        htat_anchor *p = x->prev;
        if (cu.EventSynchronize(x->ev) == HTAT_CUDA_SUCCESS &&
            cu.EventElapsedTime(&ms, p->ev, x->ev) == HTAT_CUDA_SUCCESS && fabsf(ms) < CHAIN_MAX_MS)
            x->abs_ns = p->abs_ns + llround((double)ms * 1e6);
        else
            x->abs_ns = x->cpu_ns + d->latency_ns;
        d->unresolved = x->next;
        if (x == a)
            break;
    }
    pthread_mutex_unlock(&d->mu);
    return a->abs_ns;
}

/* ---- event pools ---- */

static int pool_push(htat_evpool *p, void *ev)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 64;
        void **n = realloc(p->ev, cap * sizeof *n);
        if (!n)
            return -1;
        p->ev = n;
        p->cap = cap;
    }
    p->ev[p->n++] = ev;
    return 0;
}

static void *pool_get(htat_thread *t, int dev)
{
    htat_evpool *p = &t->pools[dev];
    if (p->n == 0) {
        pthread_mutex_lock(&t->ret_mu);
        htat_evpool tmp = *p;
        *p = t->returned[dev];
        t->returned[dev] = tmp;
        pthread_mutex_unlock(&t->ret_mu);
    }
    if (p->n)
        return p->ev[--p->n];
    htat_cudaEvent_t ev = NULL;
    if (cu.EventCreateWithFlags(&ev, HTAT_CUDA_EVENT_DEFAULT) != HTAT_CUDA_SUCCESS)
        return NULL;
    return ev;
}

void htat_gpu_return_event(htat_thread *t, int dev, void *ev)
{
    pthread_mutex_lock(&t->ret_mu);
    if (pool_push(&t->returned[dev], ev) != 0)
        cu.EventDestroy(ev);
    pthread_mutex_unlock(&t->ret_mu);
}

static uint32_t stream_id(htat_thread *t, int dev, void *stream)
{
    if (t->last_stream_dev == dev && t->last_stream == stream)
        return (uint32_t)t->last_stream_id;
    uint32_t id = 0;
    unsigned long long sid = 0;
    if (cu.StreamGetId && cu.StreamGetId(stream, &sid) == HTAT_CUDA_SUCCESS) {
        id = (uint32_t)sid;
    } else if (stream) {
        pthread_mutex_lock(&cu.mu);
        unsigned k;
        for (k = 0; k < cu.nstream_ids && cu.stream_ids[k] != stream; k++)
            ;
        if (k == cu.nstream_ids && k < 256)
            cu.stream_ids[cu.nstream_ids++] = stream;
        id = k + 1;
        pthread_mutex_unlock(&cu.mu);
    }
    t->last_stream_dev = dev;
    t->last_stream = stream;
    t->last_stream_id = id;
    return id;
}

/* ---- recording ---- */

int htat_gpu_begin(htat_thread *t, htat_frame *f, void *stream, uint64_t *w)
{
    int dev = -1;
    if (cu.GetDevice(&dev) != HTAT_CUDA_SUCCESS || dev < 0 || dev >= HTAT_MAX_DEVICES)
        return HTA_TRACER_ENOCUDA;
    htat_anchor *a = current_anchor(dev);
    if (!a)
        return HTA_TRACER_ENOCUDA;
    void *ev = pool_get(t, dev);
    if (!ev)
        return HTA_TRACER_ENOCUDA;
    if (cu.EventRecord(ev, stream) != HTAT_CUDA_SUCCESS) {
        pool_push(&t->pools[dev], ev);
        return HTA_TRACER_ENOCUDA;
    }
    f->device = dev;
    f->stream = stream;
    w[0] = (uint64_t)(uintptr_t)ev;
    w[1] = (uint64_t)(uintptr_t)stream;
    w[2] = (uint64_t)(uintptr_t)a;
    w[3] = (uint64_t)(uint32_t)dev | (uint64_t)stream_id(t, dev, stream) << 32;
    w[4] = (uint64_t)HTAT_UNRESOLVED;
    return HTA_TRACER_OK;
}

int htat_gpu_end(htat_thread *t, htat_frame *f, uint64_t *w)
{
    int dev = f->device, cur = -1;
    w[0] = 0;
    w[1] = 0;
    w[2] = (uint64_t)HTAT_UNRESOLVED;
    if (cu.GetDevice(&cur) != HTAT_CUDA_SUCCESS)
        return HTA_TRACER_ENOCUDA;
    if (cur != dev && cu.SetDevice(dev) != HTAT_CUDA_SUCCESS)
        return HTA_TRACER_ENOCUDA;
    int rc = HTA_TRACER_ENOCUDA;
    htat_anchor *a = current_anchor(dev);
    void *ev = a ? pool_get(t, dev) : NULL;
    if (ev) {
        if (cu.EventRecord(ev, f->stream) == HTAT_CUDA_SUCCESS) {
            w[0] = (uint64_t)(uintptr_t)ev;
            w[1] = (uint64_t)(uintptr_t)a;
            rc = HTA_TRACER_OK;
        } else {
            pool_push(&t->pools[dev], ev);
        }
    }
    if (cur != dev)
        cu.SetDevice(cur);
    return rc;
}

int64_t htat_gpu_resolve(htat_thread *t, uint64_t *ev_word, uint64_t anchor_word, int dev,
                         uint64_t *resolved_word, const htat_clock_map *m)
{
    (void)m; /* anchors are on CLOCK_MONOTONIC already */
    if ((int64_t)*resolved_word != HTAT_UNRESOLVED)
        return (int64_t)*resolved_word;
    void *ev = (void *)(uintptr_t)*ev_word;
    htat_anchor *a = (htat_anchor *)(uintptr_t)anchor_word;
    if (!ev || !a || dev < 0 || dev >= HTAT_MAX_DEVICES || atomic_load(&cu.state) <= 0)
        return HTAT_UNRESOLVED;
    int64_t base = anchor_time(dev, a);
    float ms = 0;
    if (cu.EventSynchronize(ev) != HTAT_CUDA_SUCCESS || cu.EventElapsedTime(&ms, a->ev, ev) != HTAT_CUDA_SUCCESS) {
        htat_debug("GPU event could not be resolved");
        return HTAT_UNRESOLVED;
    }
    int64_t ns = base + llround((double)ms * 1e6);
    *resolved_word = (uint64_t)ns;
    *ev_word = 0;
    htat_gpu_return_event(t, dev, ev);
    return ns;
}

static void pool_free(htat_evpool *p)
{
    for (size_t i = 0; i < p->n; i++)
        if (atomic_load(&cu.state) > 0)
            cu.EventDestroy(p->ev[i]);
    free(p->ev);
    memset(p, 0, sizeof *p);
}

void htat_gpu_free_thread(htat_thread *t)
{
    for (int d = 0; d < HTAT_MAX_DEVICES; d++) {
        pool_free(&t->pools[d]);
        pool_free(&t->returned[d]);
    }
}

/* ---- fork ---- */

void htat_gpu_fork_prepare(void)
{
    pthread_mutex_lock(&cu.mu); /* a load() in progress finishes first */
}

void htat_gpu_fork_parent(void)
{
    pthread_mutex_unlock(&cu.mu);
}

void htat_gpu_fork_child(void)
{
    /* a runtime the parent initialised does not work in the child; events and
     * anchors are left alone (destroying them would call into it) */
    if (atomic_load(&cu.state) > 0)
        atomic_store(&cu.state, -1);
    pthread_mutex_unlock(&cu.mu);
}

void htat_gpu_shutdown(void)
{
    if (atomic_load(&cu.state) <= 0)
        return;
    for (int i = 0; i < HTAT_MAX_DEVICES; i++) {
        htat_dev *d = &cu.dev[i];
        pthread_mutex_lock(&d->mu);
        htat_anchor *a = d->first;
        while (a) {
            htat_anchor *n = a->next;
            cu.EventDestroy(a->ev);
            free(a);
            a = n;
        }
        if (d->stream)
            cu.StreamDestroy(d->stream);
        d->stream = NULL;
        d->first = d->unresolved = NULL;
        atomic_store(&d->cur, NULL);
        pthread_mutex_unlock(&d->mu);
    }
    pthread_mutex_lock(&cu.mu);
    cu.nstream_ids = 0;
    pthread_mutex_unlock(&cu.mu);
}
