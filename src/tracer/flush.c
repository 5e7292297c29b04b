/* Flush: pairs each BEGIN with its END (by the thread's stack; spans by id,
 * across threads), lays the scopes of each thread out on tracks that nest,
 * and writes the rank's Chrome-trace JSON through output.c.
 *
 * Tracks: C scopes nest by construction, but spans (asyncio tasks) can
 * overlap on one thread without nesting, which neither the viewers nor the
 * analyses (self time, critical path) can read on one tid.  Each scope, in
 * begin order, goes on the first track where it nests; track 0 is the thread
 * itself, so a program whose scopes nest is written exactly as before.  A
 * span nests only under spans that are its ancestors (its parent, theirs...):
 * a task's scope whose time falls inside another task's scope is not its
 * child.  C scopes are synchronous: they nest by time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* Linux pids and tids are below 2^22 (PID_MAX_LIMIT): track k of thread tid
 * is written as tid + k * 2^22, which no real thread has. */
#define TRACK_TID_STRIDE 4194304LL

typedef struct seg {
    uint64_t *w;
    size_t n;
} seg;

typedef struct item {
    uint64_t *b; /* BEGIN or TICK record */
    uint64_t *e; /* END record, NULL while open */
    int track;
} item;

static uint64_t item_span(const item *it)
{
    return (HTAT_HDR_FLAGS(it->b[0]) & HTAT_RF_SPAN) ? htat_begin_span_word(it->b)[0] : 0;
}

static uint64_t item_parent(const item *it)
{
    return (HTAT_HDR_FLAGS(it->b[0]) & HTAT_RF_SPAN) ? htat_begin_span_word(it->b)[1] : 0;
}

typedef struct vec {
    void *p;
    size_t n, cap, size;
} vec;

static void *vec_push(vec *v)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 256;
        void *p = realloc(v->p, cap * v->size);
        if (!p)
            return NULL;
        v->p = p;
        v->cap = cap;
    }
    return (char *)v->p + v->size * v->n++;
}

static void on_segment(void *ctx, uint64_t *w, size_t n)
{
    vec *v = ctx;
    seg *s = vec_push(v);
    if (s) {
        s->w = w;
        s->n = n;
    }
}

typedef struct gpu_track {
    int device;
    uint32_t stream;
} gpu_track;

/* A span's BEGIN, or END, found while scanning: paired by id afterwards. */
typedef struct span_ref {
    uint64_t id, parent;
    size_t thread, item; /* BEGIN: where its item is */
    uint64_t *e;         /* END record */
} span_ref;

typedef struct thread_items {
    htat_thread *t;
    vec items; /* item */
    int ntracks;
} thread_items;

typedef struct flush_ctx {
    FILE *f;
    htat_clock_map map;
    int64_t flush_ns;
    int pid;
    int first;  /* no event written yet */
    vec tracks; /* gpu_track */
    int oom;
} flush_ctx;

static void sep(flush_ctx *c)
{
    fputs(c->first ? "\n  " : ",\n  ", c->f);
    c->first = 0;
}

/* The word after an encoded arg. */
static uint64_t *arg_next(uint64_t *p)
{
    unsigned type = (unsigned)(p[1] & 0xff);
    size_t len = (size_t)(p[1] >> 8);
    if (type == HTA_TRACER_STR || type == HTA_TRACER_JSON)
        return p + 2 + (len + 7) / 8;
    return p + (type == HTA_TRACER_NULL ? 2 : 3);
}

static int has_key(uint64_t *p, unsigned n, const char *key)
{
    for (unsigned i = 0; i < n; i++, p = arg_next(p)) {
        const char *k = (const char *)(uintptr_t)p[0];
        if (k == key || strcmp(k, key) == 0)
            return 1;
    }
    return 0;
}

/* Writes n encoded args at p, leaving out the keys also in (over, nover):
 * values known at the end replace those given at the begin. */
static void write_args(FILE *f, uint64_t *p, unsigned n, uint64_t *over, unsigned nover, int *any)
{
    for (unsigned i = 0; i < n; i++, p = arg_next(p)) {
        const char *key = (const char *)(uintptr_t)p[0];
        if (nover && has_key(over, nover, key))
            continue;
        unsigned type = (unsigned)(p[1] & 0xff);
        size_t len = (size_t)(p[1] >> 8);
        fputs(*any ? ", " : "", f);
        *any = 1;
        htat_json_cstr(f, key);
        fputs(": ", f);
        switch (type) {
        case HTA_TRACER_STR:
            htat_json_str(f, (const char *)(p + 2), len);
            break;
        case HTA_TRACER_JSON:
            fwrite(p + 2, 1, len, f); /* checked when recorded */
            break;
        case HTA_TRACER_DOUBLE: {
            double d;
            memcpy(&d, &p[2], sizeof d);
            htat_json_double(f, d);
            break;
        }
        case HTA_TRACER_BOOL:
            fputs(p[2] ? "true" : "false", f);
            break;
        case HTA_TRACER_NULL:
            fputs("null", f);
            break;
        default:
            fprintf(f, "%lld", (long long)(int64_t)p[2]);
            break;
        }
    }
}

static void write_scope_args(FILE *f, uint64_t *b, uint64_t *e, int *any)
{
    uint64_t *eargs = e ? htat_end_args(e) : NULL;
    unsigned ne = e ? HTAT_HDR_NARGS(e[0]) : 0;
    write_args(f, htat_begin_args(b), HTAT_HDR_NARGS(b[0]), eargs, ne, any);
    if (e) {
        write_args(f, eargs, ne, NULL, 0, any);
    } else {
        fputs(*any ? ", " : "", f);
        fputs("\"unfinished\": 1", f);
        *any = 1;
    }
}

/* ---- collecting: items per thread, stack pairing, span references ---- */

static void collect_thread(flush_ctx *c, size_t ti, thread_items *th, vec *begins, vec *ends)
{
    vec segs = {.size = sizeof(seg)};
    vec stack = {.size = sizeof(size_t)};
    htat_thread_segments(th->t, on_segment, &segs);
    for (size_t si = 0; si < segs.n && !c->oom; si++) {
        seg *s = (seg *)segs.p + si;
        uint64_t *p = s->w, *end = s->w + s->n;
        while (p < end) {
            uint64_t h = p[0];
            size_t words = HTAT_HDR_WORDS(h);
            if (words == 0)
                break; /* cannot happen; never loop forever */
            unsigned kind = HTAT_HDR_KIND(h);
            int span = (HTAT_HDR_FLAGS(h) & HTAT_RF_SPAN) != 0;
            if (kind == HTAT_REC_BEGIN || kind == HTAT_REC_TICK) {
                item *it = vec_push(&th->items);
                if (!it) {
                    c->oom = 1;
                    break;
                }
                it->b = p;
                it->e = NULL;
                it->track = 0;
                if (kind == HTAT_REC_BEGIN) {
                    if (span) {
                        span_ref *r = vec_push(begins);
                        if (!r) {
                            c->oom = 1;
                            break;
                        }
                        *r = (span_ref){.id = htat_begin_span_word(p)[0], .parent = htat_begin_span_word(p)[1],
                                        .thread = ti, .item = th->items.n - 1};
                    } else {
                        size_t *sp = vec_push(&stack);
                        if (!sp) {
                            c->oom = 1;
                            break;
                        }
                        *sp = th->items.n - 1;
                    }
                }
            } else if (kind == HTAT_REC_END && span) {
                span_ref *r = vec_push(ends);
                if (!r) {
                    c->oom = 1;
                    break;
                }
                *r = (span_ref){.id = *htat_end_span_word(p), .e = p};
            } else if (kind == HTAT_REC_END && stack.n) {
                /* an END with an empty stack began before a discard: skipped */
                size_t idx = ((size_t *)stack.p)[--stack.n];
                ((item *)th->items.p)[idx].e = p;
            }
            p += words;
        }
    }
    free(segs.p);
    free(stack.p);
}

static int cmp_span(const void *a, const void *b)
{
    uint64_t x = ((const span_ref *)a)->id, y = ((const span_ref *)b)->id;
    return x < y ? -1 : x > y;
}

/* Each span END to its BEGIN (any thread); ENDs whose BEGIN was discarded, or
 * that end a span a second time, are left out. */
static span_ref *find_span(const vec *begins, uint64_t id)
{
    span_ref *b = begins->p;
    size_t lo = 0, hi = begins->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (b[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < begins->n && b[lo].id == id ? &b[lo] : NULL;
}

static void pair_spans(thread_items *ths, vec *begins, vec *ends)
{
    if (begins->n > 1)
        qsort(begins->p, begins->n, sizeof(span_ref), cmp_span);
    for (size_t i = 0; i < ends->n; i++) {
        span_ref *e = (span_ref *)ends->p + i;
        span_ref *b = find_span(begins, e->id);
        if (b) {
            item *it = (item *)ths[b->thread].items.p + b->item;
            if (!it->e)
                it->e = e->e;
        }
    }
}

/* Is span a the span parent or one of its ancestors?  A parent began before
 * its child, so ids fall along the chain: the walk ends below a. */
static int is_ancestor(const vec *begins, uint64_t a, uint64_t parent)
{
    while (parent >= a) {
        if (parent == a)
            return 1;
        span_ref *r = find_span(begins, parent);
        if (!r || r->parent >= parent)
            return 0;
        parent = r->parent;
    }
    return 0;
}

/* ---- tracks ---- */

typedef struct open_scope {
    int64_t end;
    uint64_t span_top; /* the innermost span at or below this entry, 0 for none */
} open_scope;

typedef struct track {
    open_scope *open; /* innermost last */
    size_t n, cap;
} track;

static int64_t item_end(flush_ctx *c, item *it)
{
    int64_t b = htat_raw_to_ns(&c->map, it->b[2]);
    int64_t e = it->e ? htat_raw_to_ns(&c->map, it->e[1]) : c->flush_ns;
    return e < b ? b : e;
}

static void layout(flush_ctx *c, thread_items *th, const vec *begins)
{
    vec tracks = {.size = sizeof(track)};
    th->ntracks = 1;
    for (size_t i = 0; i < th->items.n && !c->oom; i++) {
        item *it = (item *)th->items.p + i;
        if (HTAT_HDR_KIND(it->b[0]) != HTAT_REC_BEGIN)
            continue; /* ticks stay on the thread's own track */
        int64_t b = htat_raw_to_ns(&c->map, it->b[2]), e = item_end(c, it);
        uint64_t span = item_span(it), parent = item_parent(it);
        for (size_t k = 0;; k++) {
            if (k == tracks.n) {
                track *t = vec_push(&tracks);
                if (!t) {
                    c->oom = 1;
                    break;
                }
                memset(t, 0, sizeof *t);
            }
            track *t = (track *)tracks.p + k;
            while (t->n && t->open[t->n - 1].end <= b)
                t->n--;
            open_scope *top = t->n ? &t->open[t->n - 1] : NULL;
            if (top && top->end < e)
                continue; /* would overlap it */
            if (span && top && top->span_top && !is_ancestor(begins, top->span_top, parent))
                continue; /* inside another task's span by time only */
            if (t->n == t->cap) {
                size_t cap = t->cap ? t->cap * 2 : 16;
                open_scope *n = realloc(t->open, cap * sizeof *n);
                if (!n) {
                    c->oom = 1;
                    break;
                }
                t->open = n;
                t->cap = cap;
                top = t->n ? &t->open[t->n - 1] : NULL;
            }
            t->open[t->n] = (open_scope){.end = e, .span_top = span ? span : top ? top->span_top : 0};
            t->n++;
            it->track = (int)k;
            if ((int)k + 1 > th->ntracks)
                th->ntracks = (int)k + 1;
            break;
        }
    }
    for (size_t k = 0; k < tracks.n; k++)
        free(((track *)tracks.p)[k].open);
    free(tracks.p);
}

/* ---- writing ---- */

static long long track_tid(htat_thread *t, int k)
{
    return (long long)t->tid + k * TRACK_TID_STRIDE;
}

static void write_gpu(flush_ctx *c, htat_thread *t, item *it, const char *name)
{
    uint64_t *g = it->b + 3;
    int dev = (int)(g[3] & 0xffffffffu);
    uint32_t sid = (uint32_t)(g[3] >> 32);
    int64_t gb = htat_gpu_resolve(t, &g[0], g[2], dev, &g[4], &c->map);
    int64_t ge = HTAT_UNRESOLVED;
    if (it->e && (HTAT_HDR_FLAGS(it->e[0]) & HTAT_RF_GPU)) {
        uint64_t *ge_w = it->e + 2;
        ge = htat_gpu_resolve(t, &ge_w[0], ge_w[1], dev, &ge_w[2], &c->map);
    }
    if (gb == HTAT_UNRESOLVED || ge == HTAT_UNRESOLVED)
        return;
    size_t k;
    gpu_track *tr = c->tracks.p;
    for (k = 0; k < c->tracks.n; k++)
        if (tr[k].device == dev && tr[k].stream == sid)
            break;
    if (k == c->tracks.n) {
        tr = vec_push(&c->tracks);
        if (tr) {
            tr->device = dev;
            tr->stream = sid;
        }
    }
    sep(c);
    fputs("{\"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": ", c->f);
    htat_json_cstr(c->f, name);
    fprintf(c->f, ", \"pid\": %d, \"tid\": %u, \"ts\": ", dev, sid);
    htat_json_ts(c->f, gb);
    fputs(", \"dur\": ", c->f);
    htat_json_ts(c->f, ge > gb ? ge - gb : 0);
    fprintf(c->f, ", \"args\": {\"device\": %d, \"stream\": %u, \"cpu_tid\": %d", dev, sid, t->tid);
    int any = 1;
    write_scope_args(c->f, it->b, it->e, &any);
    fputs("}}", c->f);
}

static void write_thread(flush_ctx *c, thread_items *th)
{
    htat_thread *t = th->t;
    for (int k = 0; k < th->ntracks; k++) {
        sep(c);
        fprintf(c->f, "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, \"tid\": %lld, \"args\": {\"name\": ",
                c->pid, track_tid(t, k));
        if (k == 0) {
            htat_json_cstr(c->f, t->name);
        } else {
            char n[96];
            snprintf(n, sizeof n, "%s (track %d)", t->name, k);
            htat_json_cstr(c->f, n);
        }
        fputs("}}", c->f);
    }

    for (size_t i = 0; i < th->items.n; i++) {
        item *it = (item *)th->items.p + i;
        uint64_t h = it->b[0];
        const char *name = (const char *)(uintptr_t)it->b[1];
        int64_t ts = htat_raw_to_ns(&c->map, it->b[2]);
        sep(c);
        if (HTAT_HDR_KIND(h) == HTAT_REC_TICK) {
            fputs("{\"ph\": \"i\", \"s\": \"t\", \"cat\": \"user_annotation\", \"name\": ", c->f);
            htat_json_cstr(c->f, name);
            fprintf(c->f, ", \"pid\": %d, \"tid\": %d, \"ts\": ", c->pid, t->tid);
            htat_json_ts(c->f, ts);
            fputs(", \"args\": {", c->f);
            int any = 0;
            write_args(c->f, it->b + 3, HTAT_HDR_NARGS(h), NULL, 0, &any);
            fputs("}}", c->f);
            continue;
        }
        fputs("{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": ", c->f);
        htat_json_cstr(c->f, name);
        fprintf(c->f, ", \"pid\": %d, \"tid\": %lld, \"ts\": ", c->pid, track_tid(t, it->track));
        htat_json_ts(c->f, ts);
        fputs(", \"dur\": ", c->f);
        htat_json_ts(c->f, item_end(c, it) - ts);
        fputs(", \"args\": {", c->f);
        int any = 0;
        write_scope_args(c->f, it->b, it->e, &any);
        fputs("}}", c->f);
        if (HTAT_HDR_FLAGS(h) & HTAT_RF_GPU)
            write_gpu(c, t, it, name);
    }
}

/* Expands the pattern into out. */
int htat_format_path(char *out, size_t cap)
{
    const char *p = htat_g.pattern ? htat_g.pattern : HTA_TRACER_DEFAULT_PATTERN;
    size_t n = 0;
    while (*p) {
        char num[32];
        const char *rep = NULL;
        size_t skip = 0;
        static const char *const keys[] = {"{rank}", "{dp}", "{pp}", "{tp}", "{world_size}", "{pid}"};
        int vals[] = {htat_g.rank, htat_g.dp, htat_g.pp, htat_g.tp, htat_g.world_size, (int)getpid()};
        if (*p == '{') {
            for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
                size_t kl = strlen(keys[k]);
                if (strncmp(p, keys[k], kl) == 0) {
                    snprintf(num, sizeof num, "%d", vals[k]);
                    rep = num;
                    skip = kl;
                    break;
                }
            }
        }
        if (!rep) {
            num[0] = *p;
            num[1] = 0;
            rep = num;
            skip = 1;
        }
        size_t rl = strlen(rep);
        if (n + rl + 1 > cap)
            return HTA_TRACER_EINVAL;
        memcpy(out + n, rep, rl);
        n += rl;
        p += skip;
    }
    if (n == 0)
        return HTA_TRACER_EINVAL;
    out[n] = 0;
    return HTA_TRACER_OK;
}

/* Where t's buffer ends now: the last chunk and its committed words. */
void htat_thread_tail(htat_thread *t, htat_chunk **chunk, size_t *used)
{
    htat_chunk *c = atomic_load_explicit(&t->start_chunk, memory_order_acquire);
    for (;;) {
        htat_chunk *nx = atomic_load_explicit(&c->next, memory_order_acquire);
        if (!nx)
            break;
        c = nx;
    }
    *chunk = c;
    *used = atomic_load_explicit(&c->used, memory_order_acquire);
}

int htat_dirty_locked(void)
{
    if (!htat_g.clean)
        return 1;
    for (htat_thread *t = htat_g.threads; t; t = t->next) {
        htat_chunk *c;
        size_t used;
        htat_thread_tail(t, &c, &used);
        if (c != t->snap_chunk || used != t->snap_used ||
            atomic_load_explicit(&t->dropped, memory_order_relaxed) != t->snap_dropped)
            return 1;
    }
    return 0;
}

static void write_document(flush_ctx *c, thread_items *ths, size_t nth)
{
    uint64_t dropped = 0;
    for (size_t i = 0; i < nth; i++)
        dropped += atomic_load_explicit(&ths[i].t->dropped, memory_order_relaxed);
    FILE *f = c->f;
    fprintf(f, "{\n\"schemaVersion\": 1,\n\"displayTimeUnit\": \"ms\",\n");
    fprintf(f,
            "\"distributedInfo\": {\"backend\": \"htatrace\", \"rank\": %d, \"world_size\": %d, \"dp_rank\": %d, "
            "\"pp_rank\": %d, \"tp_rank\": %d},\n",
            htat_g.rank, htat_g.world_size, htat_g.dp, htat_g.pp, htat_g.tp);
    fprintf(f, "\"htaClockAnchor\": {\"unix_ns\": %lld, \"monotonic_ns\": %lld, \"ts_clock\": \"CLOCK_MONOTONIC\", "
               "\"source\": \"%s\"},\n",
            (long long)htat_g.unix0_ns, (long long)htat_g.mono0_ns, htat_clock_name());
    fprintf(f, "\"htaTracer\": {\"version\": %d, \"pid\": %d, \"dropped_events\": %llu, \"rank_source\": ",
            HTA_TRACER_VERSION, c->pid, (unsigned long long)dropped);
    htat_json_cstr(f, htat_g.rank_source ? htat_g.rank_source : "default");
    if (htat_g.local_rank >= 0)
        fprintf(f, ", \"local_rank\": %d", htat_g.local_rank);
    fputs("},\n\"traceEvents\": [", f);
    sep(c);
    fprintf(f, "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %d, \"tid\": 0, \"args\": {\"name\": \"rank %d\"}}",
            c->pid, htat_g.rank);
    sep(c);
    fprintf(f, "{\"ph\": \"M\", \"name\": \"process_sort_index\", \"pid\": %d, \"tid\": 0, \"args\": {\"sort_index\": %d}}",
            c->pid, htat_g.rank);
    for (size_t i = 0; i < nth; i++)
        write_thread(c, &ths[i]);
    gpu_track *tr = c->tracks.p;
    for (size_t k = 0; k < c->tracks.n; k++) {
        sep(c);
        fprintf(f, "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %d, \"tid\": 0, \"args\": {\"name\": \"GPU %d\"}}",
                tr[k].device, tr[k].device);
        sep(c);
        fprintf(f, "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, \"tid\": %u, \"args\": {\"name\": \"stream %u\"}}",
                tr[k].device, tr[k].stream, tr[k].stream);
    }
    fputs("\n]\n}\n", f);
}

int htat_flush_locked(char *path_out, size_t path_cap)
{
    if (htat_g.disabled)
        return HTA_TRACER_DISABLED; /* HTA_TRACE=0: no file is touched */
    char want[4096];
    int rc = htat_format_path(want, sizeof want);
    if (rc != HTA_TRACER_OK) {
        htat_set_error(ENAMETOOLONG, "cannot write the trace: the file pattern expands to nothing or too long");
        return rc;
    }

    flush_ctx c = {.first = 1, .pid = (int)getpid(), .tracks = {.size = sizeof(gpu_track)}};
    uint64_t raw_now = htat_now_raw();
    htat_clock_map_now(&c.map);
    c.flush_ns = htat_raw_to_ns(&c.map, raw_now);

    size_t nth = 0;
    for (htat_thread *t = htat_g.threads; t; t = t->next)
        nth++;
    thread_items *ths = calloc(nth ? nth : 1, sizeof *ths);
    vec begins = {.size = sizeof(span_ref)}, ends = {.size = sizeof(span_ref)};
    if (!ths)
        return HTA_TRACER_ENOMEM;
    /* where each buffer ends before reading it: what a later exit flush compares with */
    size_t i = 0;
    for (htat_thread *t = htat_g.threads; t; t = t->next, i++) {
        ths[i].t = t;
        ths[i].items.size = sizeof(item);
        htat_thread_tail(t, &t->snap_chunk, &t->snap_used);
        t->snap_dropped = atomic_load_explicit(&t->dropped, memory_order_relaxed);
    }
    for (i = 0; i < nth && !c.oom; i++)
        collect_thread(&c, i, &ths[i], &begins, &ends);
    if (!c.oom)
        pair_spans(ths, &begins, &ends);
    for (i = 0; i < nth && !c.oom; i++)
        layout(&c, &ths[i], &begins);

    htat_out out;
    if (c.oom) {
        htat_set_error(ENOMEM, "cannot write %s: out of memory", want);
        rc = HTA_TRACER_ENOMEM;
    } else {
        rc = htat_out_open(&out, want);
    }
    if (rc == HTA_TRACER_OK) {
        c.f = out.f;
        write_document(&c, ths, nth);
        rc = htat_out_commit(&out);
    }
    for (i = 0; i < nth; i++)
        free(ths[i].items.p);
    free(ths);
    free(begins.p);
    free(ends.p);
    free(c.tracks.p);
    if (rc != HTA_TRACER_OK) {
        htat_g.clean = 0;
        return rc;
    }
    htat_g.clean = 1;
    htat_debug("wrote %s", out.path);
    if (path_out && path_cap) {
        if (strlen(out.path) + 1 > path_cap)
            return HTA_TRACER_EINVAL;
        strcpy(path_out, out.path);
    }
    return HTA_TRACER_OK;
}
