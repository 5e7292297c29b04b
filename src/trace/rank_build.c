/* Building one rank's columnar tables while the parser streams events
 * (rank_build.h): rows appended to mmap'd columns, args into typed slots,
 * names interned into the rank's own symbol table (merged into the trace's
 * table after the parallel load), thread and process names, flows, metadata. */
#include "trace/rank_build.h"

#include <stdlib.h>
#include <string.h>

#include "core/bigbuf.h"
#include "core/hash.h"
#include "core/vec.h"

hta_status rank_build_init(rank_build *b, hta_rank *r) {
    memset(b, 0, sizeof *b);
    b->r = r;
    b->sym = hta_symtab_new();
    b->thread_cache_idx = UINT32_MAX;
    b->profiler_range_cat = -1;
    b->dist_rank = -1;
    for (int k = 0; k < HTA_ARG_KNOWN_COUNT; k++) b->known_local[k] = -1;
    if (!b->sym) return HTA_ENOMEM;
    /* stream index 0 is "no stream" */
    if (HTA_GROW(r->streams, b->streams_cap, 1)) return HTA_ENOMEM;
    r->streams[0] = -1;
    r->nstreams = 1;
    return HTA_OK;
}

void rank_build_free_scratch(rank_build *b) {
    merge_info_free(&b->merge);
    free(b->cats);
    free(b->names);
    free(b->thread_slot);
    b->cats = NULL;
    b->names = NULL;
    b->thread_slot = NULL;
}

/* Everything a rank holds but its path (rank_free, rank_build_restart). */
static void rank_free_contents(hta_rank *r) {
    hta_rank_release_rows(r, 0);
    free(r->streams);
    free(r->threads);
    for (size_t i = 0; i < r->nmeta; i++) {
        free((char *)r->meta[i].key);
        free((char *)r->meta[i].json);
    }
    free(r->meta);
}

hta_status rank_build_restart(rank_build *b) {
    hta_rank *r = b->r;
    rank_free_contents(r);
    hta_symtab_free(b->sym);
    rank_build_free_scratch(b);
    memset(r, 0, sizeof *r);
    /* the loader's "absent" markers (load.c, worker) */
    r->world_size = -1;
    r->base_time_ns = INT64_MIN;
    return rank_build_init(b, r);
}

static hta_status grow_rows_to(rank_build *b, size_t c) {
    hta_rank *r = b->r;
#define G(col)                                                     \
    do {                                                           \
        void *q = hta_big_realloc(r->col, c * sizeof *r->col);     \
        if (!q) return HTA_ENOMEM;                                 \
        r->col = q;                                                \
    } while (0)
    G(ts); G(dur); G(correlation); G(external_id); G(name); G(thread);
    G(index); G(args_off); G(cat); G(stream);
#undef G
    b->cap = c;
    return HTA_OK;
}

hta_status rank_build_grow_rows(rank_build *b) {
    return grow_rows_to(b, b->cap + b->cap / 16 + 8192); /* small steps: see hta_big_realloc */
}

hta_status rank_build_cat(rank_build *b, const char *s, size_t n, uint16_t *out) {
    uint32_t id = hta_symtab_intern(b->sym, s, n);
    if (id == UINT32_MAX) return HTA_ENOMEM;
    for (size_t i = b->ncats; i-- > 0;)
        if (b->cats[i] == id) {
            *out = (uint16_t)i;
            return HTA_OK;
        }
    if (b->ncats >= UINT16_MAX) return HTA_EFORMAT;
    if (HTA_GROW(b->cats, b->cats_cap, b->ncats + 1)) return HTA_ENOMEM;
    b->cats[b->ncats] = id;
    if (n == 19 && memcmp(s, "cuda_profiler_range", 19) == 0) b->profiler_range_cat = (int64_t)b->ncats;
    *out = (uint16_t)b->ncats++;
    return HTA_OK;
}

hta_status rank_build_stream(rank_build *b, int64_t v, uint16_t *out) {
    hta_rank *r = b->r;
    for (size_t i = 0; i < r->nstreams; i++)
        if (r->streams[i] == v) {
            *out = (uint16_t)i;
            return HTA_OK;
        }
    if (r->nstreams >= UINT16_MAX) return HTA_EFORMAT;
    if (HTA_GROW(r->streams, b->streams_cap, r->nstreams + 1)) return HTA_ENOMEM;
    r->streams[r->nstreams] = v;
    *out = (uint16_t)r->nstreams++;
    return HTA_OK;
}

static uint64_t thread_key_hash(int64_t pid, int64_t tid) {
    return hta_hash_u64((uint64_t)pid * 0x9E3779B97F4A7C15ull ^ (uint64_t)tid);
}

static uint64_t thread_hash(const void *ctx, size_t i) {
    const hta_thread *t = &((const hta_rank *)ctx)->threads[i];
    return thread_key_hash(t->pid, t->tid);
}

static hta_status thread_rehash(rank_build *b) {
    size_t ns = b->thread_nslot ? b->thread_nslot * 2 : 64;
    int rc = hta_slots_rebuild(&b->thread_slot, &b->thread_nslot, ns, b->r->nthreads, thread_hash, b->r);
    return rc ? HTA_ENOMEM : HTA_OK;
}

hta_status rank_build_thread(rank_build *b, int64_t pid, int64_t tid, int64_t pid_sym, int64_t tid_sym,
                             uint32_t *out) {
    /* A thread is its (pid, tid) as written: two string pids ("CPU functions", "CUDA functions" of torch's
     * legacy export) both have id -1 and differ only by their text, so the texts are part of the key */
    if (b->thread_cache_idx != UINT32_MAX && b->thread_cache_pid == pid && b->thread_cache_tid == tid &&
        b->thread_cache_psym == pid_sym && b->thread_cache_tsym == tid_sym) {
        *out = b->thread_cache_idx;
        return HTA_OK;
    }
    hta_rank *r = b->r;
    if (!b->thread_slot) HTA_TRY(thread_rehash(b));
    size_t j = thread_key_hash(pid, tid) & (b->thread_nslot - 1);
    for (;;) {
        uint32_t v = b->thread_slot[j];
        if (!v) break;
        const hta_thread *t = &r->threads[v - 1];
        if (t->pid == pid && t->tid == tid && t->pid_sym == pid_sym && t->tid_sym == tid_sym) {
            *out = v - 1;
            goto hit;
        }
        j = (j + 1) & (b->thread_nslot - 1);
    }
    if (r->nthreads >= UINT32_MAX - 1) return HTA_EFORMAT;
    if (HTA_GROW(r->threads, b->threads_cap, r->nthreads + 1)) return HTA_ENOMEM;
    r->threads[r->nthreads] = (hta_thread){pid, tid, pid_sym, tid_sym, -1, -1};
    b->thread_slot[j] = (uint32_t)r->nthreads + 1;
    *out = (uint32_t)r->nthreads++;
    if (r->nthreads * 2 > b->thread_nslot) HTA_TRY(thread_rehash(b));
hit:
    b->thread_cache_idx = *out;
    b->thread_cache_pid = pid;
    b->thread_cache_tid = tid;
    b->thread_cache_psym = pid_sym;
    b->thread_cache_tsym = tid_sym;
    return HTA_OK;
}

static hta_status big_grow(void **p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return HTA_OK;
    size_t n = *cap + *cap / 16 + 8192;
    if (n < need) n = need;
    void *q = hta_big_realloc(*p, n * elem);
    if (!q) return HTA_ENOMEM;
    *p = q;
    *cap = n;
    return HTA_OK;
}

hta_arg *rank_build_arg(rank_build *b) {
    hta_rank *r = b->r;
    if (r->nargs == b->args_cap && big_grow((void **)&r->args, &b->args_cap, r->nargs + 1, sizeof *r->args))
        return NULL;
    return &r->args[r->nargs++];
}

hta_flow *rank_build_flow(rank_build *b) {
    hta_rank *r = b->r;
    if (r->nflows == b->flows_cap && big_grow((void **)&r->flows, &b->flows_cap, r->nflows + 1, sizeof *r->flows))
        return NULL;
    return &r->flows[r->nflows++];
}

hta_status rank_build_reserve(rank_build *b, size_t rows, size_t args, size_t flows) {
    hta_rank *r = b->r;
    if (rows > b->cap) HTA_TRY(grow_rows_to(b, rows));
    HTA_TRY(big_grow((void **)&r->args, &b->args_cap, args, sizeof *r->args));
    return big_grow((void **)&r->flows, &b->flows_cap, flows, sizeof *r->flows);
}

static char *dupn(const char *s, size_t n) {
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

hta_status rank_build_meta(rank_build *b, const char *key, size_t klen, const char *json, size_t jlen) {
    hta_rank *r = b->r;
    if (HTA_GROW(r->meta, b->meta_cap, r->nmeta + 1)) return HTA_ENOMEM;
    char *k = dupn(key, klen), *v = dupn(json, jlen);
    if (!k || !v) {
        free(k);
        free(v);
        return HTA_ENOMEM;
    }
    r->meta[r->nmeta++] = (hta_meta){k, v};
    return HTA_OK;
}

hta_status rank_build_name(rank_build *b, int64_t pid, int64_t tid, int is_thread, uint32_t value) {
    if (HTA_GROW(b->names, b->names_cap, b->nnames + 1)) return HTA_ENOMEM;
    b->names[b->nnames++] = (meta_name){pid, tid, is_thread, value};
    return HTA_OK;
}

hta_status rank_build_finish(rank_build *b) {
    hta_rank *r = b->r;
    size_t n = r->n;
    void *q = hta_big_realloc(r->args_off, (n + 1) * sizeof *r->args_off);
    if (!q) return HTA_ENOMEM;
    /* give back the spare room growth left before the derived columns come */
    hta_big_shrink(r->ts, n * sizeof *r->ts);
    hta_big_shrink(r->dur, n * sizeof *r->dur);
    hta_big_shrink(r->correlation, n * sizeof *r->correlation);
    hta_big_shrink(r->external_id, n * sizeof *r->external_id);
    hta_big_shrink(r->name, n * sizeof *r->name);
    hta_big_shrink(r->thread, n * sizeof *r->thread);
    hta_big_shrink(r->index, n * sizeof *r->index);
    hta_big_shrink(r->cat, n * sizeof *r->cat);
    hta_big_shrink(r->stream, n * sizeof *r->stream);
    hta_big_shrink(r->args, r->nargs * sizeof *r->args);
    hta_big_shrink(r->flows, r->nflows * sizeof *r->flows);
    r->args_off = q;
    r->args_off[n] = (uint32_t)r->nargs;
    size_t m = n ? n : 1;
    r->partner = hta_big_realloc(NULL, m * sizeof *r->partner);
    r->parent = hta_big_realloc(NULL, m * sizeof *r->parent);
    r->depth = hta_big_realloc(NULL, m * sizeof *r->depth);
    r->iteration = hta_big_realloc(NULL, m * sizeof *r->iteration);
    if (!r->partner || !r->parent || !r->depth || !r->iteration) return HTA_ENOMEM;
    /* apply process/thread names to the threads that have rows */
    for (size_t i = 0; i < b->nnames; i++) {
        const meta_name *mn = &b->names[i];
        for (size_t t = 0; t < r->nthreads; t++) {
            hta_thread *th = &r->threads[t];
            if (th->pid != mn->pid) continue;
            if (mn->is_thread && th->tid == mn->tid) th->thread_name = mn->value;
            if (!mn->is_thread) th->process_name = mn->value;
        }
    }
    return HTA_OK;
}

void merge_info_free(merge_info *m) {
    for (size_t i = 0; i < m->n; i++) {
        merge_part *p = &m->parts[i];
        free(p->dinfo);
        for (size_t j = 0; p->pids && j < p->npids; j++) free(p->pids[j]);
        free(p->pids);
    }
    free(m->parts);
    memset(m, 0, sizeof *m);
}

/* The columns come from hta_big_realloc (mmap'd, bigbuf.h) and must go back through hta_big_free; the
 * small tables are plain malloc. */
void hta_rank_release_rows(hta_rank *r, unsigned keep) {
#define GO(bit, col) (void)(!(keep & (bit)) && (hta_big_free(r->col), r->col = NULL, 1))
    GO(HTA_COL_TS, ts), GO(HTA_COL_DUR, dur), GO(HTA_COL_CORRELATION, correlation);
    GO(HTA_COL_EXTERNAL_ID, external_id), GO(HTA_COL_NAME, name), GO(HTA_COL_THREAD, thread);
    GO(HTA_COL_INDEX, index), GO(HTA_COL_ARGS, args_off), GO(HTA_COL_ARGS, args), GO(HTA_COL_CAT, cat);
    GO(HTA_COL_STREAM, stream), GO(HTA_COL_PARTNER, partner), GO(HTA_COL_PARENT, parent);
    GO(HTA_COL_DEPTH, depth), GO(HTA_COL_ITERATION, iteration), GO(HTA_COL_FLOWS, flows);
#undef GO
    if (!(keep & HTA_COL_ARGS)) r->nargs = 0;
    if (!(keep & HTA_COL_FLOWS)) r->nflows = 0;
    if (!keep) r->n = 0;
}

void rank_free(hta_rank *r) {
    if (!r) return;
    free((char *)r->path);
    rank_free_contents(r);
    free(r);
}
