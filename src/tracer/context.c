/* Context: ctx values passed down to descendant scopes, slots filled by them.
 *
 * Each thread keeps two stacks of entries (ctx, slots); a frame owns a run of
 * each.  Entries keep their string buffers when popped, so a warm thread does
 * not allocate.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "value.h"

static int kv_reserve(htat_kv **kv, uint32_t *cap, uint32_t need)
{
    if (need <= *cap)
        return HTA_TRACER_OK;
    uint32_t ncap = *cap ? *cap : 16;
    while (ncap < need)
        ncap *= 2;
    htat_kv *n = realloc(*kv, ncap * sizeof *n);
    if (!n)
        return HTA_TRACER_ENOMEM;
    memset(n + *cap, 0, (ncap - *cap) * sizeof *n);
    *kv = n;
    *cap = ncap;
    return HTA_TRACER_OK;
}

int htat_kv_store(htat_kv *kv, const hta_tracer_value *v)
{
    switch (v->type) {
    case HTA_TRACER_INT:
        kv->i = v->u.i;
        break;
    case HTA_TRACER_BOOL:
        kv->i = v->u.i != 0;
        break;
    case HTA_TRACER_NULL:
        break;
    case HTA_TRACER_DOUBLE:
        kv->d = v->u.d;
        break;
    case HTA_TRACER_STR:
    case HTA_TRACER_JSON: {
        size_t n = v->u.s ? strnlen(v->u.s, HTAT_MAX_STR) : 0;
        if (n + 1 > kv->scap) {
            char *s = realloc(kv->s, n + 1);
            if (!s)
                return HTA_TRACER_ENOMEM;
            kv->s = s;
            kv->scap = n + 1;
        }
        if (n)
            memcpy(kv->s, v->u.s, n);
        kv->s[n] = 0;
        kv->slen = n;
        break;
    }
    default:
        return HTA_TRACER_EINVAL;
    }
    kv->type = v->type;
    kv->is_set = 1;
    return HTA_TRACER_OK;
}

void htat_kv_value(const htat_kv *kv, hta_tracer_value *out)
{
    memset(out, 0, sizeof *out);
    out->type = kv->type;
    if (kv->type == HTA_TRACER_INT || kv->type == HTA_TRACER_BOOL)
        out->u.i = kv->i;
    else if (kv->type == HTA_TRACER_DOUBLE)
        out->u.d = kv->d;
    else if (kv->type == HTA_TRACER_STR || kv->type == HTA_TRACER_JSON)
        out->u.s = kv->s;
}

int htat_ctx_push(htat_thread *t, htat_frame *f, const hta_tracer_scope_desc *d)
{
    f->ctx_at = t->nctx;
    f->slot_at = t->nslots;
    if (kv_reserve(&t->ctx, &t->ctx_cap, t->nctx + (uint32_t)d->nctx) != HTA_TRACER_OK ||
        kv_reserve(&t->slots, &t->slot_cap, t->nslots + (uint32_t)d->nslots) != HTA_TRACER_OK)
        return HTA_TRACER_ENOMEM;
    for (int i = 0; i < d->nctx; i++) {
        htat_kv *kv = &t->ctx[t->nctx + (uint32_t)i];
        kv->key = d->ctx[i].key;
        if (htat_kv_store(kv, &d->ctx[i].value) != HTA_TRACER_OK)
            return HTA_TRACER_ENOMEM;
    }
    for (int i = 0; i < d->nslots; i++) {
        htat_kv *kv = &t->slots[t->nslots + (uint32_t)i];
        kv->key = d->slots[i];
        kv->is_set = 0;
    }
    t->nctx += (uint32_t)d->nctx;
    t->nslots += (uint32_t)d->nslots;
    f->nctx = (uint32_t)d->nctx;
    f->nslots = (uint32_t)d->nslots;
    return HTA_TRACER_OK;
}

void htat_ctx_pop(htat_thread *t, htat_frame *f)
{
    t->nctx = f->ctx_at;
    t->nslots = f->slot_at;
    f->nctx = f->nslots = 0;
}

/* Frames [0, below_depth) are searched, innermost first. */
int htat_slot_set_from(htat_thread *t, uint32_t below_depth, const char *key, const hta_tracer_value *v)
{
    for (uint32_t d = below_depth; d-- > 0;) {
        htat_frame *f = &t->frames[d];
        for (uint32_t i = 0; i < f->nslots; i++) {
            htat_kv *kv = &t->slots[f->slot_at + i];
            if (kv->key == key || strcmp(kv->key, key) == 0)
                return htat_kv_store(kv, v);
        }
    }
    return HTA_TRACER_ENOENT;
}

static htat_thread *self_if_registered(void)
{
    htat_thread *t = htat_tls;
    if (!t || htat_tls_gen != atomic_load_explicit(&htat_gen, memory_order_relaxed))
        return NULL;
    return t;
}

int hta_tracer_get(const char *key, hta_tracer_value *out)
{
    if (!key || !out)
        return HTA_TRACER_EINVAL;
    htat_thread *t = self_if_registered();
    if (!t)
        return htat_g.disabled ? HTA_TRACER_DISABLED : HTA_TRACER_ENOENT;
    for (uint32_t d = t->depth; d-- > 0;) {
        htat_frame *f = &t->frames[d];
        for (uint32_t i = f->nctx; i-- > 0;) {
            htat_kv *kv = &t->ctx[f->ctx_at + i];
            if (kv->key == key || strcmp(kv->key, key) == 0) {
                htat_kv_value(kv, out);
                return HTA_TRACER_OK;
            }
        }
    }
    return HTA_TRACER_ENOENT;
}

int hta_tracer_set(const char *key, const hta_tracer_value *value)
{
    if (!key || !value || !htat_value_valid(value))
        return HTA_TRACER_EINVAL;
    htat_thread *t = self_if_registered();
    if (!t)
        return htat_g.disabled ? HTA_TRACER_DISABLED : HTA_TRACER_ENOENT;
    return htat_slot_set_from(t, t->depth, key, value);
}

int hta_tracer_set_int(const char *key, int64_t v)
{
    hta_tracer_value x = {.type = HTA_TRACER_INT, .u = {.i = v}};
    return hta_tracer_set(key, &x);
}

int hta_tracer_set_double(const char *key, double v)
{
    hta_tracer_value x = {.type = HTA_TRACER_DOUBLE, .u = {.d = v}};
    return hta_tracer_set(key, &x);
}

int hta_tracer_set_str(const char *key, const char *v)
{
    hta_tracer_value x = {.type = HTA_TRACER_STR, .u = {.s = v}};
    return hta_tracer_set(key, &x);
}
