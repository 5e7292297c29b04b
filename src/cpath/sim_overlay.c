/* The job's critical path drawn for Perfetto (--all-ranks --overlay OUT): one trace of every rank on one clock
 * (the offsets the collectives' ends give), a process per rank with its threads and streams, every event of the
 * joined graph at its time, "critical": 1 on the path's events, and flow arrows along the path, across ranks
 * where it hops at a collective. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpath/sim_internal.h"
#include "hta/outfile.h"
#include "hta/util.h"
#include "hta/vocab.h"

typedef struct ow {
    hta_outfile *o;
    hta_error *err;
    hta_status st;
    char buf[1 << 16];
    size_t n;
} ow;

static int flush(ow *w) {
    if (!w->st && w->n) w->st = hta_outfile_write(w->o, w->buf, w->n, w->err);
    w->n = 0;
    return w->st ? -1 : 0;
}

static int put(void *ctx, const char *s, size_t n) {
    ow *w = ctx;
    if (w->st) return -1;
    if (w->n + n > sizeof w->buf && flush(w)) return -1;
    if (n > sizeof w->buf) {
        w->st = hta_outfile_write(w->o, s, n, w->err);
        return w->st ? -1 : 0;
    }
    memcpy(w->buf + w->n, s, n);
    w->n += n;
    return 0;
}

static int putf(ow *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int putf(ow *w, const char *fmt, ...) {
    char b[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof b) return -1;
    return put(w, b, (size_t)n);
}

/* ns as us with 3 decimals, the trace format's precision */
static void us3(int64_t ns, char *b) {
    char sign = ns < 0 ? '-' : 0;
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    snprintf(b, 40, "%s%llu.%03llu", sign ? "-" : "", (unsigned long long)(a / 1000), (unsigned long long)(a % 1000));
}

/* The merged process of a rank's event: rank * 2 for its CPU threads, rank * 2 + 1 for its GPU. */
static int64_t opid(const hta_sim *s, uint32_t x) {
    return (int64_t)s->ev_rank[x] * 2 + (s->g->ev[x].stream != -1);
}

static int64_t otid(const hta_cp_event *e) { return e->stream != -1 ? e->stream : e->tid; }

hta_status hta_sim_overlay(const hta_sim *s, const int64_t *t, const hta_cp_path *p, const char *out_path,
                           hta_error *err) {
    const hta_cp_graph *g = s->g;
    if (!s->ev_rank) return hta_fail(err, HTA_EINVAL, "the job's overlay needs --all-ranks");
    unsigned char *crit = calloc(g->nev ? g->nev : 1, 1);
    if (!crit) return hta_oom(err);
    for (size_t i = 0; i < p->n; i++) crit[g->node[p->node[i]].ev] = 1;
    ow w = {0};
    w.err = err;
    hta_status st = hta_outfile_open(out_path, &w.o, err);
    if (st) {
        free(crit);
        return st;
    }
    int64_t t0 = INT64_MAX;
    for (size_t v = 0; v < g->nnode; v++)
        if (t[v] < t0) t0 = t[v];
    char a[40], b[40];
    putf(&w, "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n");
    /* a process per rank and side, named */
    int32_t lastr = INT32_MIN;
    int first = 1;
    for (size_t x = 0; x < g->nev; x++) {
        if (s->ev_rank[x] == lastr) continue;
        lastr = s->ev_rank[x];
        for (int gpu = 0; gpu < 2; gpu++)
            putf(&w, "%s{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %lld, \"tid\": 0, \"args\": {\"name\": "
                     "\"rank %d %s\"}}", first ? "" : ",\n", (long long)(lastr * 2 + gpu), (int)lastr,
                 gpu ? "GPU" : "CPU"), first = 0;
    }
    for (size_t x = 0; x < g->nev && !w.st; x++) {
        const hta_cp_event *e = &g->ev[x];
        us3(t[e->start] - t0, a);
        us3(t[e->end] - t[e->start], b);
        putf(&w, ",\n{\"ph\": \"X\", \"cat\": ");
        hta_json_quote(hta_sym(g->sym, e->cat), put, &w);
        putf(&w, ", \"name\": ");
        hta_json_quote(hta_sym(g->sym, e->name), put, &w);
        putf(&w, ", \"pid\": %lld, \"tid\": %lld, \"ts\": %s, \"dur\": %s, \"args\": {\"rank\": %d, \"index\": %u%s}}",
             (long long)opid(s, (uint32_t)x), (long long)otid(e), a, b, (int)s->ev_rank[x], e->index,
             crit[x] ? ", \"critical\": 1" : "");
    }
    /* the path's arrows: one flow per edge between two events, across ranks at a hop */
    uint64_t id = 1;
    for (size_t i = 0; i + 1 < p->n && !w.st; i++) {
        uint32_t u = g->node[p->node[i]].ev, v = g->node[p->node[i + 1]].ev;
        if (u == v) continue;
        const hta_cp_edge *e = &g->edge[p->edge[i]];
        us3(t[p->node[i]] - t0, a);
        us3(t[p->node[i + 1]] - t0, b);
        int hop = s->ev_rank[u] != s->ev_rank[v];
        putf(&w, ",\n{\"ph\": \"s\", \"cat\": \"critical_path\", \"name\": \"critical_path\", \"id\": %llu, \"pid\": "
                 "%lld, \"tid\": %lld, \"ts\": %s, \"args\": {\"type\": \"%s\", \"hop\": %d}}",
             (unsigned long long)id, (long long)opid(s, u), (long long)otid(&g->ev[u]), a,
             hta_cpath_edge_type_name(e->type), hop);
        putf(&w, ",\n{\"ph\": \"f\", \"bp\": \"e\", \"cat\": \"critical_path\", \"name\": \"critical_path\", \"id\": "
                 "%llu, \"pid\": %lld, \"tid\": %lld, \"ts\": %s}",
             (unsigned long long)id, (long long)opid(s, v), (long long)otid(&g->ev[v]), b);
        id++;
    }
    putf(&w, "\n]}\n");
    flush(&w);
    free(crit);
    hta_error ignored = {0};
    hta_status cst = hta_outfile_close(w.o, !w.st, w.st ? &ignored : err);
    return w.st ? w.st : cst;
}
