/* Flush: pairs each thread's begin/end records and writes the rank's
 * Chrome-trace JSON (temporary file, then rename). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

typedef struct seg {
    uint64_t *w;
    size_t n;
} seg;

typedef struct item {
    uint64_t *b; /* BEGIN or TICK record */
    uint64_t *e; /* END record, NULL while open */
} item;

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

typedef struct flush_ctx {
    FILE *f;
    htat_clock_map map;
    int64_t flush_ns;
    int pid;
    int first; /* no event written yet */
    vec gpu_events; /* item, for the GPU pass */
    vec tracks;     /* gpu_track */
    int oom;
} flush_ctx;

static void sep(flush_ctx *c)
{
    fputs(c->first ? "\n  " : ",\n  ", c->f);
    c->first = 0;
}

/* Writes n encoded args starting at *pp; returns the word after them. */
static uint64_t *write_args(FILE *f, uint64_t *p, unsigned n, int *any)
{
    for (unsigned i = 0; i < n; i++) {
        const char *key = (const char *)(uintptr_t)p[0];
        unsigned type = (unsigned)(p[1] & 0xff);
        size_t len = (size_t)(p[1] >> 8);
        fputs(*any ? ", " : "", f);
        *any = 1;
        htat_json_cstr(f, key);
        fputs(": ", f);
        if (type == HTA_TRACER_STR) {
            htat_json_str(f, (const char *)(p + 2), len);
            p += 2 + (len + 7) / 8;
        } else if (type == HTA_TRACER_DOUBLE) {
            double d;
            memcpy(&d, &p[2], sizeof d);
            htat_json_double(f, d);
            p += 3;
        } else {
            fprintf(f, "%lld", (long long)(int64_t)p[2]);
            p += 3;
        }
    }
    return p;
}

static void write_begin_args(FILE *f, uint64_t *b, uint64_t *e, int *any)
{
    uint64_t h = b[0];
    uint64_t *p = b + 3 + ((HTAT_HDR_FLAGS(h) & HTAT_RF_GPU) ? HTAT_BEGIN_GPU_WORDS : 0);
    write_args(f, p, HTAT_HDR_NARGS(h), any);
    if (e) {
        uint64_t he = e[0];
        write_args(f, e + 2 + ((HTAT_HDR_FLAGS(he) & HTAT_RF_GPU) ? HTAT_END_GPU_WORDS : 0), HTAT_HDR_NARGS(he), any);
    } else {
        fputs(*any ? ", " : "", f);
        fputs("\"unfinished\": 1", f);
        *any = 1;
    }
}

static void write_thread(flush_ctx *c, htat_thread *t)
{
    vec segs = {.size = sizeof(seg)};
    vec items = {.size = sizeof(item)};
    vec stack = {.size = sizeof(size_t)};
    htat_thread_segments(t, on_segment, &segs);

    for (size_t si = 0; si < segs.n; si++) {
        seg *s = (seg *)segs.p + si;
        uint64_t *p = s->w, *end = s->w + s->n;
        while (p < end) {
            uint64_t h = p[0];
            size_t words = HTAT_HDR_WORDS(h);
            if (words == 0)
                break; /* cannot happen; never loop forever */
            unsigned kind = HTAT_HDR_KIND(h);
            if (kind == HTAT_REC_BEGIN || kind == HTAT_REC_TICK) {
                item *it = vec_push(&items);
                size_t *sp = kind == HTAT_REC_BEGIN ? vec_push(&stack) : NULL;
                if (!it || (kind == HTAT_REC_BEGIN && !sp)) {
                    c->oom = 1;
                    break;
                }
                it->b = p;
                it->e = NULL;
                if (sp)
                    *sp = items.n - 1;
            } else if (kind == HTAT_REC_END && stack.n) {
                /* an END with an empty stack began before a discard: skipped */
                size_t idx = ((size_t *)stack.p)[--stack.n];
                ((item *)items.p)[idx].e = p;
            }
            p += words;
        }
    }

    sep(c);
    fprintf(c->f, "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, \"tid\": %d, \"args\": {\"name\": ", c->pid,
            t->tid);
    htat_json_cstr(c->f, t->name);
    fputs("}}", c->f);

    for (size_t i = 0; i < items.n; i++) {
        item *it = (item *)items.p + i;
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
            write_args(c->f, it->b + 3, HTAT_HDR_NARGS(h), &any);
            fputs("}}", c->f);
            continue;
        }
        int64_t end = it->e ? htat_raw_to_ns(&c->map, it->e[1]) : c->flush_ns;
        if (end < ts)
            end = ts;
        fputs("{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": ", c->f);
        htat_json_cstr(c->f, name);
        fprintf(c->f, ", \"pid\": %d, \"tid\": %d, \"ts\": ", c->pid, t->tid);
        htat_json_ts(c->f, ts);
        fputs(", \"dur\": ", c->f);
        htat_json_ts(c->f, end - ts);
        fputs(", \"args\": {", c->f);
        int any = 0;
        write_begin_args(c->f, it->b, it->e, &any);
        fputs("}}", c->f);

        if (HTAT_HDR_FLAGS(h) & HTAT_RF_GPU) {
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
                    continue;
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
                any = 1;
                write_begin_args(c->f, it->b, it->e, &any);
                fputs("}}", c->f);
            }
    }
    free(segs.p);
    free(items.p);
    free(stack.p);
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

int htat_flush_locked(char *path_out, size_t path_cap)
{
    char path[4096], tmp[4200];
    int rc = htat_format_path(path, sizeof path);
    if (rc != HTA_TRACER_OK)
        return rc;
    if (path_out && path_cap) {
        if (strlen(path) + 1 > path_cap)
            return HTA_TRACER_EINVAL;
        strcpy(path_out, path);
    }
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());

    flush_ctx c = {.first = 1, .pid = (int)getpid(), .tracks = {.size = sizeof(gpu_track)}};
    uint64_t raw_now = htat_now_raw();
    htat_clock_map_now(&c.map);
    c.flush_ns = htat_raw_to_ns(&c.map, raw_now);

    c.f = fopen(tmp, "w");
    if (!c.f) {
        htat_debug("cannot write %s: %s", tmp, strerror(errno));
        return HTA_TRACER_EIO;
    }
    static char iobuf[1 << 16];
    setvbuf(c.f, iobuf, _IOFBF, sizeof iobuf);

    uint64_t dropped = 0;
    for (htat_thread *t = htat_g.threads; t; t = t->next)
        dropped += atomic_load_explicit(&t->dropped, memory_order_relaxed);

    FILE *f = c.f;
    fprintf(f, "{\n\"schemaVersion\": 1,\n\"displayTimeUnit\": \"ms\",\n");
    fprintf(f,
            "\"distributedInfo\": {\"backend\": \"htatrace\", \"rank\": %d, \"world_size\": %d, \"dp_rank\": %d, "
            "\"pp_rank\": %d, \"tp_rank\": %d},\n",
            htat_g.rank, htat_g.world_size, htat_g.dp, htat_g.pp, htat_g.tp);
    fprintf(f, "\"htaClockAnchor\": {\"unix_ns\": %lld, \"monotonic_ns\": %lld, \"ts_clock\": \"CLOCK_MONOTONIC\", "
               "\"source\": \"%s\"},\n",
            (long long)htat_g.unix0_ns, (long long)htat_g.mono0_ns, htat_clock_name());
    fprintf(f, "\"htaTracer\": {\"version\": %d, \"pid\": %d, \"dropped_events\": %llu},\n", HTA_TRACER_VERSION,
            c.pid, (unsigned long long)dropped);
    fputs("\"traceEvents\": [", f);
    sep(&c);
    fprintf(f, "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %d, \"tid\": 0, \"args\": {\"name\": \"rank %d\"}}",
            c.pid, htat_g.rank);
    sep(&c);
    fprintf(f, "{\"ph\": \"M\", \"name\": \"process_sort_index\", \"pid\": %d, \"tid\": 0, \"args\": {\"sort_index\": %d}}",
            c.pid, htat_g.rank);
    for (htat_thread *t = htat_g.threads; t; t = t->next)
        write_thread(&c, t);
    gpu_track *tr = c.tracks.p;
    for (size_t k = 0; k < c.tracks.n; k++) {
        sep(&c);
        fprintf(f, "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %d, \"tid\": 0, \"args\": {\"name\": \"GPU %d\"}}",
                tr[k].device, tr[k].device);
        sep(&c);
        fprintf(f, "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, \"tid\": %u, \"args\": {\"name\": \"stream %u\"}}",
                tr[k].device, tr[k].stream, tr[k].stream);
    }
    free(c.tracks.p);
    fputs("\n]\n}\n", f);
    int bad = ferror(f) != 0;
    bad |= fclose(f) != 0;
    if (bad || c.oom || rename(tmp, path) != 0) {
        htat_debug("writing %s failed: %s", path, c.oom ? "out of memory" : strerror(errno));
        unlink(tmp);
        return c.oom ? HTA_TRACER_ENOMEM : HTA_TRACER_EIO;
    }
    htat_debug("wrote %s", path);
    return HTA_TRACER_OK;
}

int hta_tracer_flush_path(char *path_out, size_t path_cap)
{
    int rc = htat_global_init();
    if (rc != HTA_TRACER_OK)
        return rc;
    pthread_mutex_lock(&htat_g.mu);
    rc = htat_flush_locked(path_out, path_cap);
    pthread_mutex_unlock(&htat_g.mu);
    return rc;
}

int hta_tracer_flush(void)
{
    return hta_tracer_flush_path(NULL, 0);
}

int hta_tracer_output_path(char *path_out, size_t path_cap)
{
    if (!path_out)
        return HTA_TRACER_EINVAL;
    int rc = htat_global_init();
    if (rc != HTA_TRACER_OK)
        return rc;
    pthread_mutex_lock(&htat_g.mu);
    rc = htat_format_path(path_out, path_cap);
    pthread_mutex_unlock(&htat_g.mu);
    return rc;
}
