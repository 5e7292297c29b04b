/* Saving a critical-path graph and reading it back (docs/critical-path.md,
 * "Graph file"): everything the report, the longest path and what-if need,
 * so a stored graph is analysed again without the trace.
 *
 * Layout (little-endian, fixed-size fields):
 *   "HTACPATH" u32 version=1 u32 flags(bit 0: zero-weight launch edges)
 *   i32 rank i64 origin_ns u64 nstrings nevents nnodes nedges nnotes
 *   strings: u32 length + bytes
 *   events:  i64 ts dur pid tid stream, u32 index name cat, i32 start end
 *   edges:   u32 u v, i64 w, i32 attr, u8 type   (networkx insertion order)
 *   notes:   u32 length + bytes
 * Nodes are implied by the events (start/end ids and times); node insertion
 * order by the edge order. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpath/internal.h"
#include "trace/json_lex.h"
#include "hta/outfile.h"

#define MAGIC "HTACPATH"
#define VERSION 1u

/* Writing goes through the one writer of output files (hta/outfile.h): a temporary file created
 * exclusively and renamed over the graph file when complete; the first failure is kept and the rest
 * is skipped. */
typedef struct wr {
    hta_outfile *f;
    hta_status st;
    hta_error *err;
} wr;

static void put(wr *w, const void *p, size_t n) {
    if (!w->st) w->st = hta_outfile_write(w->f, p, n, w->err);
}
static void put_u32(wr *w, uint32_t v) {
    unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16), (unsigned char)(v >> 24)};
    put(w, b, 4);
}
static void put_u64(wr *w, uint64_t v) {
    put_u32(w, (uint32_t)v);
    put_u32(w, (uint32_t)(v >> 32));
}
static void put_str(wr *w, const char *s, size_t n) {
    put_u32(w, (uint32_t)n);
    put(w, s, n);
}

hta_status hta_cpath_save(const hta_cp_graph *g, const char *path, hta_error *err) {
    wr w = {NULL, HTA_OK, err};
    HTA_TRY(hta_outfile_open(path, &w.f, err));
    put(&w, MAGIC, 8);
    put_u32(&w, VERSION);
    put_u32(&w, (g->zero_weight_launch ? 1u : 0u) | (g->hta_compat ? 2u : 0u));
    put_u32(&w, (uint32_t)g->rank);
    put_u64(&w, (uint64_t)g->origin_ns);
    uint32_t ns = hta_symtab_count(g->sym);
    put_u64(&w, ns);
    put_u64(&w, g->nev);
    put_u64(&w, g->nnode);
    put_u64(&w, g->nedge);
    put_u64(&w, g->nnotes);
    for (uint32_t i = 0; i < ns; i++) put_str(&w, hta_sym(g->sym, i), hta_sym_len(g->sym, i));
    for (size_t i = 0; i < g->nev; i++) {
        const hta_cp_event *e = &g->ev[i];
        put_u64(&w, (uint64_t)e->ts);
        put_u64(&w, (uint64_t)e->dur);
        const hta_cp_thread *th = &g->thr[e->thr];
        put_u64(&w, (uint64_t)th->pid);
        put_u64(&w, (uint64_t)th->tid);
        put_u64(&w, (uint64_t)th->stream);
        put_u32(&w, e->index);
        put_u32(&w, e->name);
        put_u32(&w, e->cat);
        put_u32(&w, (uint32_t)hta_cp_ev_start(g, i));
        put_u32(&w, (uint32_t)hta_cp_ev_end(g, i));
    }
    for (size_t i = 0; i < g->nedge; i++) {
        const hta_cp_edge *e = &g->edge[i];
        put_u32(&w, e->u);
        put_u32(&w, e->v);
        put_u64(&w, (uint64_t)hta_cp_edge_w(g, i));
        put_u32(&w, (uint32_t)e->attr);
        uint8_t type = (uint8_t)e->type;
        put(&w, &type, 1);
    }
    for (size_t i = 0; i < g->nnotes; i++) put_str(&w, g->notes[i], strlen(g->notes[i]));
    hta_status st = hta_outfile_close(w.f, !w.st, err);
    return w.st ? w.st : st;
}

typedef struct rd {
    const unsigned char *b, *p, *e; /* the file's bytes, the read position, the end */
    int bad;
} rd;

static const unsigned char *take(rd *r, size_t n) {
    if (r->bad || (size_t)(r->e - r->p) < n) {
        r->bad = 1;
        return NULL;
    }
    const unsigned char *q = r->p;
    r->p += n;
    return q;
}
static uint32_t get_u32(rd *r) {
    const unsigned char *b = take(r, 4);
    return b ? (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24 : 0;
}
static uint64_t get_u64(rd *r) {
    uint64_t lo = get_u32(r);
    return lo | (uint64_t)get_u32(r) << 32;
}
static int time_ok(int64_t t) { return t >= -HTA_TIME_MAX_NS && t <= HTA_TIME_MAX_NS; }

/* A saved graph is input like a trace: every count, index, time and string is checked before it is
 * used, and a failure names the file, the byte and the rule (docs/critical-path.md, "Graph file").
 * Times and weights lie within the trace model's range (trace.h: HTA_TIME_MAX_NS), strings are valid
 * UTF-8 without NUL (they are printed, as JSON too), so nothing a report computes from them overflows or
 * writes invalid output; the path's length is checked as it is summed (graph.c). */
#define CORRUPT(at, ...)                                                                                   \
    do {                                                                                                   \
        st = hta_fail(err, HTA_EFORMAT, "%s: byte %zu: corrupt critical-path graph file: " __VA_ARGS__);   \
        (void)(at);                                                                                        \
        goto fail;                                                                                         \
    } while (0)

hta_status hta_cpath_load(const char *path, hta_cp_graph **out, hta_error *err) {
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return hta_fail(err, HTA_EIO, "%s: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    while (buf) {
        if (n == cap) {
            unsigned char *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
        }
        size_t k = fread(buf + n, 1, cap - n, f);
        n += k;
        if (!k) break;
    }
    int ioerr = ferror(f);
    fclose(f);
    if (!buf) return hta_oom(err);
    if (ioerr) {
        free(buf);
        return hta_fail(err, HTA_EIO, "%s: read error", path);
    }
    rd r = {buf, buf, buf + n, 0};
    hta_cp_graph *g = calloc(1, sizeof *g);
    unsigned char *have = NULL;
    cp_thrmap tm = {0};
    hta_status st = HTA_OK;
#define AT ((size_t)(r.p - r.b))
    const unsigned char *m = take(&r, 8);
    if (!m || memcmp(m, MAGIC, 8)) {
        st = hta_fail(err, HTA_EFORMAT, "%s: not a critical-path graph file", path);
        goto fail;
    }
    uint32_t ver = get_u32(&r);
    if (ver != VERSION) {
        st = hta_fail(err, HTA_EFORMAT, "%s: graph file version %u, this hta reads %u", path, ver, VERSION);
        goto fail;
    }
    if (!g || !(g->sym = hta_symtab_new())) goto oom;
    uint32_t flags = get_u32(&r);
    g->zero_weight_launch = (int)(flags & 1);
    g->hta_compat = (int)(flags >> 1 & 1);
    g->rank = (int32_t)get_u32(&r);
    size_t at = AT;
    g->origin_ns = (int64_t)get_u64(&r);
    if (!r.bad && !time_ok(g->origin_ns)) CORRUPT(at, "origin beyond the times hta holds (|t| < 2^62 ns)", path, at);
    uint64_t ns = get_u64(&r), nev = get_u64(&r), nnode = get_u64(&r), nedge = get_u64(&r), nnotes = get_u64(&r);
    size_t left = (size_t)(r.e - r.p);
    /* counts bounded by the bytes left (event 60 bytes, edge 21, string 4+) and by the 32-bit ids that
     * name strings, events and nodes */
    if (r.bad) CORRUPT(AT, "truncated header", path, AT);
    if (ns > left / 4 || nev > left / 60 || nedge > left / 21 || nnotes > left / 4 || nnode > 2 * nev ||
        ns > UINT32_MAX - 1 || nev >= HTA_CP_MAX_EVENTS || nnode > INT32_MAX || nedge > UINT32_MAX - 1)
        CORRUPT(AT, "counts larger than the file (%llu strings, %llu events, %llu nodes, %llu edges)", path, AT,
                (unsigned long long)ns, (unsigned long long)nev, (unsigned long long)nnode,
                (unsigned long long)nedge);
    for (uint64_t i = 0; i < ns; i++) {
        at = AT;
        uint32_t l = get_u32(&r);
        const unsigned char *s = take(&r, l);
        if (!s) CORRUPT(at, "string %llu runs past the end", path, at, (unsigned long long)i);
        if (!lex_utf8_valid((const char *)s, l))
            CORRUPT(at, "string %llu is not valid UTF-8 (or holds a NUL)", path, at, (unsigned long long)i);
        uint32_t id = hta_symtab_intern(g->sym, (const char *)s, l);
        if (id == UINT32_MAX) goto oom;
        if (id != i) CORRUPT(at, "string %llu is a duplicate", path, at, (unsigned long long)i);
    }
    g->ev = calloc(nev ? nev : 1, sizeof *g->ev);
    g->node = calloc(nnode ? nnode : 1, sizeof *g->node);
    g->edge = calloc(nedge ? nedge : 1, sizeof *g->edge);
    g->ev_node = malloc(2 * (nev ? nev : 1) * sizeof *g->ev_node);
    if (!g->ev || !g->node || !g->edge || !g->ev_node) goto oom;
    g->nev = nev;
    g->nnode = nnode;
    have = calloc(nnode ? nnode : 1, 1);
    if (!have) goto oom;
    for (size_t i = 0; i < nev; i++) {
        hta_cp_event *e = &g->ev[i];
        at = AT;
        e->ts = (int64_t)get_u64(&r);
        e->dur = (int64_t)get_u64(&r);
        int64_t pid = (int64_t)get_u64(&r), tid = (int64_t)get_u64(&r), stream = (int64_t)get_u64(&r);
        if (cp_thr_id(g, &tm, pid, tid, stream, &e->thr, NULL)) goto oom;
        e->index = get_u32(&r);
        e->name = get_u32(&r);
        e->cat = get_u32(&r);
        int32_t *sn = &g->ev_node[2 * i], *en = &g->ev_node[2 * i + 1];
        *sn = (int32_t)get_u32(&r);
        *en = (int32_t)get_u32(&r);
        if (r.bad) CORRUPT(at, "event %zu runs past the end", path, at, i);
        /* both in range, so their sum cannot overflow; the end is a node time and must be in range too */
        if (!time_ok(e->ts) || !time_ok(e->dur) || !time_ok(e->ts + e->dur))
            CORRUPT(at, "event %zu: ts or ts + dur beyond the times hta holds (|t| < 2^62 ns)", path, at, i);
        if (e->name >= ns || e->cat >= ns) CORRUPT(at, "event %zu: string id out of range", path, at, i);
        if ((*sn < 0) != (*en < 0) || *sn >= (int64_t)nnode || *en >= (int64_t)nnode || (*sn >= 0 && *sn == *en))
            CORRUPT(at, "event %zu: node id out of range", path, at, i);
        if (*sn >= 0) {
            if (have[*sn] || have[*en]) CORRUPT(at, "event %zu: a node of another event", path, at, i);
            have[*sn] = have[*en] = 1;
            g->node[*sn] = (hta_cp_node){e->ts, (uint32_t)i, 1};
            g->node[*en] = (hta_cp_node){e->ts + e->dur, (uint32_t)i, 0};
        }
    }
    cp_thrmap_free(&tm);
    for (size_t i = 0; i < nnode; i++)
        if (!have[i]) CORRUPT(AT, "node %zu belongs to no event", path, AT, i);
    free(have);
    have = NULL;
    for (size_t i = 0; i < nedge; i++) {
        hta_cp_edge *e = &g->edge[i];
        at = AT;
        e->u = get_u32(&r);
        e->v = get_u32(&r);
        int64_t ew = (int64_t)get_u64(&r);
        e->attr = (int32_t)get_u32(&r);
        const unsigned char *t = take(&r, 1);
        if (!t) CORRUPT(at, "edge %zu runs past the end", path, at, i);
        if (e->u >= nnode || e->v >= nnode || e->u == e->v || *t >= HTA_CP_NTYPES || e->attr < -1 ||
            e->attr >= (int64_t)nev)
            CORRUPT(at, "edge %zu: node, type or event out of range", path, at, i);
        if (!time_ok(ew)) CORRUPT(at, "edge %zu: weight beyond the times hta holds (|t| < 2^62 ns)", path, at, i);
        e->type = *t;
        if (cp_edge_set_w(g, i, ew, NULL)) goto oom;
    }
    g->nedge = nedge;
    for (uint64_t i = 0; i < nnotes; i++) {
        at = AT;
        uint32_t l = get_u32(&r);
        const unsigned char *s = take(&r, l);
        if (!s) CORRUPT(at, "note %llu runs past the end", path, at, (unsigned long long)i);
        if (!lex_utf8_valid((const char *)s, l) || l > INT32_MAX)
            CORRUPT(at, "note %llu is not valid UTF-8 (or holds a NUL)", path, at, (unsigned long long)i);
        if (cp_note(g, NULL, "%.*s", (int)l, (const char *)s)) goto oom;
    }
    if (r.p != r.e) CORRUPT(AT, "bytes after the last note", path, AT);
#undef AT
    if (cp_graph_order(g, NULL)) goto oom;
    free(buf);
    if ((st = hta_cpath_longest(g, NULL, &g->path, err))) {
        hta_error_prefix(err, path);
        hta_cpath_free(g);
        return st;
    }
    *out = g;
    return HTA_OK;
oom:
    st = hta_oom(err);
fail:
    cp_thrmap_free(&tm);
    free(have);
    free(buf);
    hta_cpath_free(g);
    return st;
}
