/* The open GPU spans (hta_tracer_span_begin with a stream, scope.c): the stream each was begun on, kept
 * until its end records the end event there.  A small table under a lock: GPU spans cost microseconds
 * anyway, CPU spans never come here. */
#include <stdlib.h>

#include "internal.h"

typedef struct gpu_span {
    int64_t id;
    void *stream;
} gpu_span;

static pthread_mutex_t gpu_spans_mu = PTHREAD_MUTEX_INITIALIZER;
static gpu_span *gpu_spans;
static size_t ngpu_spans, gpu_spans_cap;

int htat_gpu_span_put(int64_t id, void *stream)
{
    int rc = 0;
    pthread_mutex_lock(&gpu_spans_mu);
    if (ngpu_spans == gpu_spans_cap) {
        size_t cap = gpu_spans_cap ? gpu_spans_cap * 2 : 64;
        gpu_span *n = realloc(gpu_spans, cap * sizeof *n);
        if (n) {
            gpu_spans = n;
            gpu_spans_cap = cap;
        }
    }
    if (ngpu_spans < gpu_spans_cap)
        gpu_spans[ngpu_spans++] = (gpu_span){id, stream};
    else
        rc = -1;
    pthread_mutex_unlock(&gpu_spans_mu);
    return rc;
}

int htat_gpu_span_take(int64_t id, void **stream)
{
    int found = 0;
    pthread_mutex_lock(&gpu_spans_mu);
    for (size_t i = ngpu_spans; i-- > 0;) { /* the newest first: spans end in rough LIFO order */
        if (gpu_spans[i].id == id) {
            *stream = gpu_spans[i].stream;
            gpu_spans[i] = gpu_spans[--ngpu_spans];
            found = 1;
            break;
        }
    }
    pthread_mutex_unlock(&gpu_spans_mu);
    return found;
}

void htat_spans_free(void)
{
    pthread_mutex_lock(&gpu_spans_mu);
    free(gpu_spans);
    gpu_spans = NULL;
    ngpu_spans = gpu_spans_cap = 0;
    pthread_mutex_unlock(&gpu_spans_mu);
}
