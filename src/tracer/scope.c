/* The hot path: begin, end, tick, spans; the calling thread's buffer (found, or registered at its first
 * record) and its name. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "value.h"

/* ---- the calling thread's buffer ---- */

static inline htat_thread *htat_self(void)
{
    htat_thread *t = htat_tls;
    if (HTAT_LIKELY(t != NULL && htat_tls_gen == atomic_load_explicit(&htat_gen, memory_order_relaxed)))
        return t;
    return htat_thread_slow();
}

/* Room for n words, or NULL (dropped: over the cap, or no memory).  force:
 * ignore the cap (ends of scopes whose begin was written). */
static inline uint64_t *htat_reserve(htat_thread *t, size_t n, int force)
{
    if (HTAT_LIKELY((size_t)(t->end - t->pos) >= n))
        return t->pos;
    return htat_reserve_slow(t, n, force);
}

static inline void htat_commit(htat_thread *t, uint64_t *newpos)
{
    t->pos = newpos;
    atomic_store_explicit(&t->cur->used, (size_t)(newpos - t->cur->data), memory_order_release);
}

/* ---- the calling thread's name ---- */

int hta_tracer_thread_name(const char *name)
{
    if (!name)
        return HTA_TRACER_EINVAL;
    htat_thread *t = htat_self();
    if (!t)
        return htat_g.disabled ? HTA_TRACER_DISABLED : HTA_TRACER_ENOMEM;
    pthread_mutex_lock(&htat_g.mu);
    snprintf(t->name, sizeof t->name, "%s", name);
    pthread_mutex_unlock(&htat_g.mu);
    return HTA_TRACER_OK;
}

/* ---- args encoding ---- */

static size_t str_len(const char *s)
{
    if (!s)
        return 0;
    size_t n = strnlen(s, HTAT_MAX_STR);
    return n;
}

static inline int is_text(int type)
{
    return type == HTA_TRACER_STR || type == HTA_TRACER_JSON;
}

static inline size_t value_words(int type, size_t slen)
{
    return is_text(type) ? (slen + 7) / 8 : type == HTA_TRACER_NULL ? 0 : 1;
}

size_t htat_args_words(const hta_tracer_arg *args, int nargs)
{
    size_t w = 0;
    for (int i = 0; i < nargs; i++)
        w += 2 + value_words(args[i].value.type, is_text(args[i].value.type) ? str_len(args[i].value.u.s) : 0);
    return w;
}

static inline uint64_t *put_value(uint64_t *p, const char *key, int type, int64_t iv, double dv,
                                  const char *s, size_t slen)
{
    p[0] = (uint64_t)(uintptr_t)key;
    p[1] = (uint64_t)type | (uint64_t)slen << 8;
    if (type == HTA_TRACER_NULL)
        return p + 2;
    if (is_text(type)) {
        size_t w = (slen + 7) / 8;
        if (w) {
            p[1 + w] = 0; /* padding bytes of the last word */
            memcpy(p + 2, s, slen);
        }
        return p + 2 + w;
    }
    if (type == HTA_TRACER_DOUBLE)
        memcpy(&p[2], &dv, sizeof dv);
    else
        p[2] = (uint64_t)iv;
    return p + 3;
}

uint64_t *htat_args_write(uint64_t *p, const hta_tracer_arg *args, int nargs)
{
    for (int i = 0; i < nargs; i++) {
        const hta_tracer_value *v = &args[i].value;
        if (is_text(v->type))
            p = put_value(p, args[i].key, v->type, 0, 0, v->u.s, str_len(v->u.s));
        else if (v->type == HTA_TRACER_BOOL)
            p = put_value(p, args[i].key, v->type, v->u.i != 0, 0, NULL, 0);
        else
            p = put_value(p, args[i].key, v->type, v->u.i, v->u.d, NULL, 0);
    }
    return p;
}

size_t htat_kv_words(const htat_kv *kv, uint32_t n)
{
    size_t w = 0;
    for (uint32_t i = 0; i < n; i++)
        if (kv[i].is_set)
            w += 2 + value_words(kv[i].type, kv[i].slen);
    return w;
}

uint64_t *htat_kv_write(uint64_t *p, const htat_kv *kv, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (kv[i].is_set)
            p = put_value(p, kv[i].key, kv[i].type, kv[i].i, kv[i].d, kv[i].s, kv[i].slen);
    return p;
}

static int args_valid(const hta_tracer_arg *args, int nargs)
{
    if (nargs < 0 || nargs > HTA_TRACER_MAX_ARGS || (nargs && !args))
        return 0;
    for (int i = 0; i < nargs; i++)
        if (!args[i].key || !htat_value_valid(&args[i].value))
            return 0;
    return 1;
}

/* ---- frames ---- */

static int frames_grow(htat_thread *t)
{
    uint32_t cap = t->fcap * 2;
    htat_frame *f = realloc(t->frames, cap * sizeof *f);
    if (!f)
        return HTA_TRACER_ENOMEM;
    t->frames = f;
    t->fcap = cap;
    return HTA_TRACER_OK;
}

static inline htat_frame *frame_push(htat_thread *t)
{
    if (HTAT_UNLIKELY(t->depth == t->fcap) && frames_grow(t) != HTA_TRACER_OK)
        return NULL;
    return &t->frames[t->depth++];
}

/* A new frame on this thread's stack, in *tp and *fp; or the error (tracer disabled, out of memory). */
static inline int frame_open(htat_thread **tp, htat_frame **fp)
{
    htat_thread *t = htat_self();
    if (HTAT_UNLIKELY(!t))
        return htat_g.disabled ? HTA_TRACER_DISABLED : HTA_TRACER_ENOMEM;
    htat_frame *f = frame_push(t);
    if (HTAT_UNLIKELY(!f))
        return HTA_TRACER_ENOMEM;
    f->flags = 0;
    f->nctx = 0;
    f->nslots = 0;
    *tp = t;
    *fp = f;
    return HTA_TRACER_OK;
}

/* The frame's begin record, `words` words, the frame marked timed; NULL when the ring is full: the frame
 * is then marked dropped (its end writes nothing) and the drop counted. */
static inline uint64_t *begin_reserve(htat_thread *t, htat_frame *f, size_t words)
{
    uint64_t *p = htat_reserve(t, words, 0);
    if (HTAT_UNLIKELY(!p)) {
        f->flags = HTAT_F_DROPPED;
        atomic_fetch_add_explicit(&t->dropped, 1, memory_order_relaxed);
        return NULL;
    }
    f->flags = HTAT_F_TIMED;
    return p;
}

/* ---- begin ---- */

/* A scope with its args (name and args checked); inlined into hta_tracer_begin with none, where the args'
 * code folds away. */
static inline int begin_scope(const char *name, const hta_tracer_arg *args, int nargs)
{
    htat_thread *t;
    htat_frame *f;
    int rc = frame_open(&t, &f);
    if (HTAT_UNLIKELY(rc != HTA_TRACER_OK))
        return rc;
    size_t words = 3 + htat_args_words(args, nargs);
    uint64_t *p = begin_reserve(t, f, words);
    if (HTAT_UNLIKELY(!p))
        return HTA_TRACER_OK;
    p[0] = HTAT_HDR(HTAT_REC_BEGIN, nargs, 0, words);
    p[1] = (uint64_t)(uintptr_t)name;
    uint64_t *q = htat_args_write(p + 3, args, nargs);
    p[2] = htat_now_raw();
    htat_commit(t, q);
    return HTA_TRACER_OK;
}

int hta_tracer_begin(const char *name)
{
    if (HTAT_UNLIKELY(!name))
        return HTA_TRACER_EINVAL;
    return begin_scope(name, NULL, 0);
}

int hta_tracer_begin_args(const char *name, const hta_tracer_arg *args, int nargs)
{
    if (HTAT_UNLIKELY(!name || !args_valid(args, nargs)))
        return HTA_TRACER_EINVAL;
    return begin_scope(name, args, nargs);
}

int hta_tracer_begin_desc(const hta_tracer_scope_desc *d)
{
    if (!d || !args_valid(d->args, d->nargs) || !args_valid(d->ctx, d->nctx) || d->nslots < 0 ||
        d->nslots > HTA_TRACER_MAX_ARGS || (d->nslots && !d->slots))
        return HTA_TRACER_EINVAL;
    for (int i = 0; i < d->nslots; i++)
        if (!d->slots[i])
            return HTA_TRACER_EINVAL;
    htat_thread *t;
    htat_frame *f;
    int rc = frame_open(&t, &f);
    if (rc != HTA_TRACER_OK)
        return rc;
    rc = htat_ctx_push(t, f, d);
    if (rc != HTA_TRACER_OK) {
        t->depth--;
        return rc;
    }
    if (!d->name)
        return HTA_TRACER_OK; /* context only */

    int want_gpu = d->gpu && htat_g.gpu_allowed;
    int gpu = want_gpu && htat_cuda_available();
    size_t words = 3 + (gpu ? HTAT_BEGIN_GPU_WORDS : 0) + htat_args_words(d->args, d->nargs);
    uint64_t *p = begin_reserve(t, f, words);
    if (!p)
        return HTA_TRACER_OK;
    uint64_t *q = p + 3;
    if (gpu) {
        if (htat_gpu_begin(t, f, d->stream, q) == HTA_TRACER_OK) {
            f->flags |= HTAT_F_GPU;
            q += HTAT_BEGIN_GPU_WORDS;
        } else {
            gpu = 0;
            words -= HTAT_BEGIN_GPU_WORDS;
        }
    }
    p[0] = HTAT_HDR(HTAT_REC_BEGIN, d->nargs, gpu ? HTAT_RF_GPU : 0, words);
    p[1] = (uint64_t)(uintptr_t)d->name;
    q = htat_args_write(q, d->args, d->nargs);
    p[2] = htat_now_raw();
    htat_commit(t, q);
    return (d->gpu && !gpu) ? HTA_TRACER_ENOCUDA : HTA_TRACER_OK;
}

/* ---- end ---- */

static int end_slow(htat_thread *t, htat_frame *f, uint64_t ts)
{
    int rc = HTA_TRACER_OK;
    if (f->flags & HTAT_F_TIMED) {
        int gpu = (f->flags & HTAT_F_GPU) != 0;
        const htat_kv *slots = t->slots + f->slot_at;
        unsigned nset = 0;
        for (uint32_t i = 0; i < f->nslots; i++)
            nset += slots[i].is_set != 0;
        size_t words = 2 + (gpu ? HTAT_END_GPU_WORDS : 0) + htat_kv_words(slots, f->nslots);
        uint64_t *p = htat_reserve(t, words, 1);
        if (p) {
            uint64_t *q = p + 2;
            if (gpu) {
                htat_gpu_end(t, f, q);
                q += HTAT_END_GPU_WORDS;
            }
            p[0] = HTAT_HDR(HTAT_REC_END, nset, gpu ? HTAT_RF_GPU : 0, words);
            p[1] = ts;
            q = htat_kv_write(q, slots, f->nslots);
            htat_commit(t, q);
        } else {
            rc = HTA_TRACER_ENOMEM;
        }
    } else if (!(f->flags & HTAT_F_DROPPED) && f->nslots) {
        /* context-only: hand set slot values up to the next declaring scope */
        const htat_kv *slots = t->slots + f->slot_at;
        for (uint32_t i = 0; i < f->nslots; i++) {
            if (!slots[i].is_set)
                continue;
            hta_tracer_value v;
            htat_kv_value(&slots[i], &v);
            htat_slot_set_from(t, t->depth, slots[i].key, &v);
        }
    }
    htat_ctx_pop(t, f);
    return rc;
}

int hta_tracer_end(void)
{
    uint64_t ts = htat_now_raw();
    htat_thread *t = htat_tls;
    if (HTAT_UNLIKELY(!t || htat_tls_gen != atomic_load_explicit(&htat_gen, memory_order_relaxed)))
        return htat_g.disabled ? HTA_TRACER_DISABLED : HTA_TRACER_ESTATE;
    if (HTAT_UNLIKELY(t->depth == 0))
        return HTA_TRACER_ESTATE;
    htat_frame *f = &t->frames[--t->depth];
    if (HTAT_LIKELY(f->flags == HTAT_F_TIMED && f->nslots == 0 && f->nctx == 0)) {
        uint64_t *p = htat_reserve(t, 2, 1);
        if (HTAT_UNLIKELY(!p))
            return HTA_TRACER_ENOMEM;
        p[0] = HTAT_HDR(HTAT_REC_END, 0, 0, 2);
        p[1] = ts;
        htat_commit(t, p + 2);
        return HTA_TRACER_OK;
    }
    return end_slow(t, f, ts);
}

int hta_tracer_depth(void)
{
    htat_thread *t = htat_tls;
    if (!t || htat_tls_gen != atomic_load_explicit(&htat_gen, memory_order_relaxed))
        return 0;
    return (int)t->depth;
}

/* ---- spans: ended by id, paired by id at flush ----
 * An id is seq << 8 | gpu flag 0x80 | device: increasing with time (a parent's
 * id is below its children's), and saying at the end whether a CUDA event is
 * due there.  The stream of an open GPU span is kept in a small table: GPU
 * spans cost microseconds anyway, CPU spans take no lock. */

#define SPAN_GPU 0x80u

static _Atomic uint64_t span_seq;

int64_t hta_tracer_span_begin(const hta_tracer_scope_desc *d, uint64_t parent)
{
    if (!d || !d->name || d->nctx || d->nslots || !args_valid(d->args, d->nargs))
        return HTA_TRACER_EINVAL;
    htat_thread *t = htat_self();
    if (!t)
        return htat_g.disabled ? 0 : HTA_TRACER_ENOMEM;
    int gpu = d->gpu && htat_g.gpu_allowed && htat_cuda_available();
    size_t words = 3 + (gpu ? HTAT_BEGIN_GPU_WORDS : 0) + 2 + htat_args_words(d->args, d->nargs);
    uint64_t *p = htat_reserve(t, words, 0);
    if (!p) {
        atomic_fetch_add_explicit(&t->dropped, 1, memory_order_relaxed);
        return 0;
    }
    uint64_t seq = atomic_fetch_add_explicit(&span_seq, 1, memory_order_relaxed) + 1;
    uint64_t *q = p + 3;
    htat_frame f = {.device = 0};
    if (gpu) {
        if (htat_gpu_begin(t, &f, d->stream, q) == HTA_TRACER_OK) {
            q += HTAT_BEGIN_GPU_WORDS;
        } else {
            gpu = 0;
            words -= HTAT_BEGIN_GPU_WORDS;
        }
    }
    int64_t id = (int64_t)(seq << 8 | (gpu ? SPAN_GPU | (uint64_t)(f.device & 0x7f) : 0));
    if (gpu && htat_gpu_span_put(id, f.stream) != 0)
        id &= ~(int64_t)0xff; /* no memory to remember the stream: the GPU end is skipped */
    *q++ = (uint64_t)id;
    *q++ = parent;
    p[0] = HTAT_HDR(HTAT_REC_BEGIN, d->nargs, (gpu ? HTAT_RF_GPU : 0) | HTAT_RF_SPAN, words);
    p[1] = (uint64_t)(uintptr_t)d->name;
    q = htat_args_write(q, d->args, d->nargs);
    p[2] = htat_now_raw();
    htat_commit(t, q);
    return id;
}

int hta_tracer_span_end(int64_t id, const hta_tracer_arg *args, int nargs)
{
    uint64_t ts = htat_now_raw();
    if (!args_valid(args, nargs))
        return HTA_TRACER_EINVAL;
    if (id <= 0)
        return HTA_TRACER_OK; /* nothing was recorded */
    htat_thread *t = htat_self();
    if (!t)
        return htat_g.disabled ? HTA_TRACER_DISABLED : HTA_TRACER_ENOMEM;
    void *stream = NULL;
    int gpu = (id & SPAN_GPU) && htat_gpu_span_take(id, &stream); /* a second end finds nothing */
    size_t words = 2 + (gpu ? HTAT_END_GPU_WORDS : 0) + 1 + htat_args_words(args, nargs);
    uint64_t *p = htat_reserve(t, words, 1);
    if (!p)
        return HTA_TRACER_ENOMEM;
    uint64_t *q = p + 2;
    if (gpu) {
        htat_frame f = {.device = (int)(id & 0x7f), .stream = stream};
        htat_gpu_end(t, &f, q);
        q += HTAT_END_GPU_WORDS;
    }
    *q++ = (uint64_t)id;
    p[0] = HTAT_HDR(HTAT_REC_END, nargs, (gpu ? HTAT_RF_GPU : 0) | HTAT_RF_SPAN, words);
    p[1] = ts;
    q = htat_args_write(q, args, nargs);
    htat_commit(t, q);
    return HTA_TRACER_OK;
}

/* ---- tick ---- */

int hta_tracer_tick(const char *name, const hta_tracer_arg *args, int nargs)
{
    if (!name || !args_valid(args, nargs))
        return HTA_TRACER_EINVAL;
    htat_thread *t = htat_self();
    if (!t)
        return htat_g.disabled ? HTA_TRACER_DISABLED : HTA_TRACER_ENOMEM;
    uint64_t ts = htat_now_raw();
    size_t words = 3 + htat_args_words(args, nargs);
    uint64_t *p = htat_reserve(t, words, 0);
    if (!p) {
        atomic_fetch_add_explicit(&t->dropped, 1, memory_order_relaxed);
        return HTA_TRACER_OK;
    }
    p[0] = HTAT_HDR(HTAT_REC_TICK, nargs, 0, words);
    p[1] = (uint64_t)(uintptr_t)name;
    p[2] = ts;
    htat_commit(t, htat_args_write(p + 3, args, nargs));
    return HTA_TRACER_OK;
}
