/* The per-rank iteration (hta/context.h): worker threads take the plan's files one at a time, open a
 * context of that rank alone, run the caller's function on it and free it, so the rank models alive at
 * once are at most the number of threads.  Warnings are kept per file and given in order at the end, so
 * that what a run prints does not depend on which thread finished first. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hta/context.h"
#include "hta/util.h"

/* A visit's outcome; its error apart, made only where it failed (a slot per rank file: 1 KB each otherwise). */
typedef struct slot {
    char **warn;
    size_t nwarn;
    hta_status st;
    int in_load;
    hta_error *err;
} slot;

typedef struct each {
    const hta_rank_plan *p;
    const hta_ctx_opts *o;
    const hta_each_opts *eo;
    hta_rank_fn fn;
    void *user;
    slot *slots; /* per visit */
    atomic_size_t next;
    atomic_int stop; /* a visit failed: the others are not started */
} each;

static void keep_warning(void *ctx, const char *msg) {
    slot *s = ctx;
    (void)hta_strlist_add(&s->warn, &s->nwarn, "%s", msg); /* lost to a full memory: the load reports that */
}

static hta_error *error_copy(const hta_error *x) {
    hta_error *y = malloc(sizeof *y);
    if (y) *y = *x;
    return y;
}

static size_t visits(const each *e) { return e->eo->which ? e->eo->n : e->p->n; }

static void *worker(void *arg) {
    each *e = arg;
    for (;;) {
        size_t v = atomic_fetch_add(&e->next, 1);
        if (v >= visits(e) || atomic_load(&e->stop)) break;
        size_t i = e->eo->which ? e->eo->which[v] : v;
        slot *s = &e->slots[v];
        hta_ctx_opts o = *e->o;
        /* one file, one thread: the parallelism is across files */
        o.ranks = NULL, o.nranks = 0, o.threads = 1;
        o.warn = keep_warning, o.warn_ctx = s;
        o.progress = NULL;
        hta_ctx *c = e->eo->keep ? e->eo->keep[i] : NULL;
        hta_error err = {0};
        if (c) {
            s->st = e->fn(c, i, e->user, &err);
            if (s->st) atomic_store(&e->stop, 1), s->err = error_copy(&err);
            continue;
        }
        s->st = hta_ctx_open(e->p->files[i].path, &o, &c, &err);
        /* the plan promised exactly this rank; anything else (a file changed since) is an error, not a
         * silently different answer */
        if (!s->st && (hta_ctx_nranks(c) != 1 || hta_ctx_rank(c, 0)->rank != e->p->files[i].rank))
            s->st = hta_fail(&err, HTA_EFORMAT, "%s: no longer the rank %d its head named", e->p->files[i].path,
                             e->p->files[i].rank);
        /* as the whole load of a folder does: other JSON beside the traces is named and passed over */
        if (s->st == HTA_ENOTTRACE) {
            char msg[1200];
            snprintf(msg, sizeof msg, "%s: skipped (JSON without traceEvents)", e->p->files[i].path);
            keep_warning(s, msg);
            s->st = HTA_OK;
            continue;
        }
        s->in_load = s->st != HTA_OK;
        if (!s->st) s->st = e->fn(c, i, e->user, &err);
        if (e->eo->keep && !s->in_load) e->eo->keep[i] = c;
        else hta_ctx_free(c);
        if (s->st) atomic_store(&e->stop, 1), s->err = error_copy(&err);
    }
    return NULL;
}

hta_status hta_ctx_each_rank(const hta_rank_plan *p, const hta_ctx_opts *o, const hta_each_opts *eo,
                             hta_rank_fn fn, void *user, size_t *failed, int *in_load, hta_error *err) {
    static const hta_each_opts all;
    if (!eo) eo = &all;
    each e = {p, o, eo, fn, user, NULL, 0, 0};
    size_t nv = visits(&e);
    *failed = SIZE_MAX;
    *in_load = 0;
    if (!(e.slots = calloc(nv ? nv : 1, sizeof *e.slots))) return hta_oom(err);
    atomic_init(&e.next, 0);
    atomic_init(&e.stop, 0);
    hta_parallel(eo->threads, nv, worker, &e);
    hta_status st = HTA_OK;
    for (size_t v = 0; v < nv; v++) {
        slot *s = &e.slots[v];
        for (size_t w = 0; w < s->nwarn; w++) {
            if (eo->warn_at) eo->warn_at(user, eo->which ? eo->which[v] : v, s->warn[w]);
            else if (o->warn) o->warn(o->warn_ctx, s->warn[w]);
            free(s->warn[w]);
        }
        free(s->warn);
        if (s->st && !st) {
            st = s->st;
            if (s->err) *err = *s->err;
            else hta_oom(err); /* no room for the error's copy */
            *failed = eo->which ? eo->which[v] : v;
            *in_load = s->in_load;
        }
        free(s->err);
    }
    free(e.slots);
    return st;
}

int hta_ctx_per_rank_ok(const hta_ctx_opts *o) {
    if (o->hta_compat) return 0; /* HTA's origin and filter are decided over all ranks */
    /* annot:NAME#K is resolved over all ranks (the K-th instance only where no rank has NAME#K itself) */
    if (o->window.kind == HTA_WINDOW_ANNOT && o->window.instance >= 0) return 0;
    return 1;
}
