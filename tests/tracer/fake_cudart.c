/* A fake CUDA runtime for the tracer tests (loaded with HTA_TRACE_CUDART):
 * one device; an event "completes" when recorded, at CLOCK_MONOTONIC plus
 * FAKE_CUDA_LATENCY_NS (default 3000), like a GPU running a little behind. */
#include <pthread.h>

#pragma GCC visibility push(default)
#include <stdlib.h>
#include <time.h>

typedef struct fake_event {
    long long ns;
    int recorded;
} fake_event;

typedef struct fake_stream {
    unsigned long long id;
} fake_stream;

static int device;
static unsigned long long next_stream_id = 13;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static long long mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long latency(void)
{
    const char *e = getenv("FAKE_CUDA_LATENCY_NS");
    return e ? atoll(e) : 3000;
}

int cudaGetDeviceCount(int *n);
int cudaGetDevice(int *d);
int cudaSetDevice(int d);
int cudaEventCreateWithFlags(void **ev, unsigned flags);
int cudaEventRecord(void *ev, void *stream);
int cudaEventSynchronize(void *ev);
int cudaEventElapsedTime(float *ms, void *a, void *b);
int cudaEventDestroy(void *ev);
int cudaStreamCreateWithFlags(void **s, unsigned flags);
int cudaStreamDestroy(void *s);
int cudaStreamGetId(void *s, unsigned long long *id);

int cudaGetDeviceCount(int *n) { *n = 1; return 0; }
int cudaGetDevice(int *d) { *d = device; return 0; }
int cudaSetDevice(int d) { if (d != 0) return 101; device = d; return 0; }

int cudaEventCreateWithFlags(void **ev, unsigned flags)
{
    (void)flags;
    *ev = calloc(1, sizeof(fake_event));
    return *ev ? 0 : 2;
}

int cudaEventRecord(void *ev, void *stream)
{
    (void)stream;
    fake_event *e = ev;
    e->ns = mono() + latency();
    e->recorded = 1;
    return 0;
}

int cudaEventSynchronize(void *ev)
{
    fake_event *e = ev;
    if (!e->recorded)
        return 0;
    while (mono() < e->ns)
        ;
    return 0;
}

int cudaEventElapsedTime(float *ms, void *a, void *b)
{
    fake_event *x = a, *y = b;
    if (!x->recorded || !y->recorded)
        return 600; /* cudaErrorNotReady-like */
    *ms = (float)((double)(y->ns - x->ns) / 1e6);
    return 0;
}

int cudaEventDestroy(void *ev) { free(ev); return 0; }

int cudaStreamCreateWithFlags(void **s, unsigned flags)
{
    (void)flags;
    fake_stream *st = malloc(sizeof *st);
    if (!st)
        return 2;
    pthread_mutex_lock(&mu);
    st->id = next_stream_id++;
    pthread_mutex_unlock(&mu);
    *s = st;
    return 0;
}

int cudaStreamDestroy(void *s) { free(s); return 0; }

int cudaStreamGetId(void *s, unsigned long long *id)
{
    *id = s ? ((fake_stream *)s)->id : 7;
    return 0;
}
