/* Per-thread buffers: registration, chunks, recycling after discard. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "internal.h"

static htat_chunk *chunk_new(size_t words)
{
    htat_chunk *c = malloc(sizeof *c + words * sizeof(uint64_t));
    if (!c)
        return NULL;
    atomic_init(&c->next, NULL);
    atomic_init(&c->used, 0);
    c->cap = words;
    return c;
}

/* Chunks before start_chunk are no longer read by any flush: reuse them. */
static void recycle(htat_thread *t)
{
    htat_chunk *stop = atomic_load_explicit(&t->start_chunk, memory_order_acquire);
    while (t->head != stop && t->head != t->cur) {
        htat_chunk *c = t->head;
        t->head = atomic_load_explicit(&c->next, memory_order_relaxed);
        atomic_store_explicit(&c->next, t->free_chunks, memory_order_relaxed);
        t->free_chunks = c;
    }
}

uint64_t *htat_reserve_slow(htat_thread *t, size_t n, int force)
{
    recycle(t);
    htat_chunk *c = NULL;
    if (t->free_chunks && t->free_chunks->cap >= n) {
        c = t->free_chunks;
        t->free_chunks = atomic_load_explicit(&c->next, memory_order_relaxed);
        atomic_store_explicit(&c->next, NULL, memory_order_relaxed);
        atomic_store_explicit(&c->used, 0, memory_order_relaxed);
    } else {
        if (!force && htat_g.max_bytes && t->bytes >= htat_g.max_bytes)
            return NULL;
        size_t words = htat_g.chunk_words > n ? htat_g.chunk_words : n;
        c = chunk_new(words);
        if (!c)
            return NULL;
        t->bytes += words * sizeof(uint64_t);
    }
    /* The chunk is linked only after it is clean; then the writer moves on. */
    atomic_store_explicit(&t->cur->next, c, memory_order_release);
    t->cur = c;
    t->pos = c->data;
    t->end = c->data + c->cap;
    return t->pos;
}

static int gettid_(void)
{
    return (int)syscall(SYS_gettid);
}

htat_thread *htat_thread_new(void)
{
    htat_thread *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->cur = chunk_new(htat_g.chunk_words);
    t->fcap = 64;
    t->frames = malloc(t->fcap * sizeof *t->frames);
    if (!t->cur || !t->frames) {
        free(t->cur);
        free(t->frames);
        free(t);
        return NULL;
    }
    t->bytes = t->cur->cap * sizeof(uint64_t);
    t->head = t->cur;
    t->pos = t->cur->data;
    t->end = t->cur->data + t->cur->cap;
    atomic_init(&t->start_chunk, t->cur);
    t->start_off = 0;
    atomic_init(&t->dropped, 0);
    pthread_mutex_init(&t->ret_mu, NULL);
    t->tid = gettid_();
    t->last_stream_dev = -1;
    if (pthread_getname_np(pthread_self(), t->name, sizeof t->name) != 0 || !t->name[0])
        snprintf(t->name, sizeof t->name, "thread %d", t->tid);

    pthread_mutex_lock(&htat_g.mu);
    htat_thread **tail = &htat_g.threads; /* registration order */
    while (*tail)
        tail = &(*tail)->next;
    *tail = t;
    atomic_store(&htat_g.recorded, 1);
    htat_tls = t;
    htat_tls_gen = atomic_load(&htat_gen);
    pthread_mutex_unlock(&htat_g.mu);
    htat_debug("thread %d registered (%s)", t->tid, t->name);
    return t;
}

void htat_thread_segments(htat_thread *t, htat_segment_fn fn, void *ctx)
{
    htat_chunk *c = atomic_load_explicit(&t->start_chunk, memory_order_acquire);
    size_t off = t->start_off;
    while (c) {
        /* next first: once it is set, used is final */
        htat_chunk *nx = atomic_load_explicit(&c->next, memory_order_acquire);
        size_t used = atomic_load_explicit(&c->used, memory_order_acquire);
        if (used > off)
            fn(ctx, c->data + off, used - off);
        off = 0;
        c = nx;
    }
}

void htat_thread_discard(htat_thread *t)
{
    htat_chunk *c = atomic_load_explicit(&t->start_chunk, memory_order_acquire);
    for (;;) {
        htat_chunk *nx = atomic_load_explicit(&c->next, memory_order_acquire);
        if (!nx) {
            t->start_off = atomic_load_explicit(&c->used, memory_order_acquire);
            break;
        }
        c = nx;
    }
    atomic_store_explicit(&t->start_chunk, c, memory_order_release);
    atomic_store_explicit(&t->dropped, 0, memory_order_relaxed);
}

static void kv_free(htat_kv *kv, uint32_t cap)
{
    for (uint32_t i = 0; i < cap; i++)
        free(kv[i].s);
    free(kv);
}

void htat_threads_free_all(void)
{
    htat_thread *t = htat_g.threads;
    while (t) {
        htat_thread *nx = t->next;
        htat_chunk *c = t->head;
        while (c) {
            htat_chunk *cn = atomic_load(&c->next);
            free(c);
            c = cn;
        }
        c = t->free_chunks;
        while (c) {
            htat_chunk *cn = atomic_load(&c->next);
            free(c);
            c = cn;
        }
        htat_gpu_free_thread(t);
        kv_free(t->ctx, t->ctx_cap);
        kv_free(t->slots, t->slot_cap);
        free(t->frames);
        pthread_mutex_destroy(&t->ret_mu);
        free(t);
        t = nx;
    }
    htat_g.threads = NULL;
}
