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

typedef struct sim_ow {
    hta_outfile *o;
    hta_error *err;
    hta_status st;
    int64_t t0;
    int first;
    uint64_t id;
    size_t n;
    char buf[1 << 16];
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

hta_status sim_ow_open(const char *path, int64_t t0, sim_ow **out, hta_error *err) {
    ow *w = calloc(1, sizeof *w);
    if (!w) return hta_oom(err);
    w->err = err;
    w->t0 = t0;
    w->first = 1;
    w->id = 1;
    hta_status st = hta_outfile_open(path, &w->o, err);
    if (st) {
        free(w);
        return st;
    }
    putf(w, "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n");
    *out = w;
    return HTA_OK;
}

void sim_ow_rank(sim_ow *w, int32_t rank) {
    for (int gpu = 0; gpu < 2; gpu++)
        putf(w, "%s{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %lld, \"tid\": 0, \"args\": {\"name\": "
                "\"rank %d %s\"}}", w->first ? "" : ",\n", (long long)(rank * 2 + gpu), (int)rank, gpu ? "GPU" : "CPU"),
            w->first = 0;
}

void sim_ow_event(sim_ow *w, const hta_cp_graph *g, const hta_cp_event *e, int32_t rank, int64_t start, int64_t end,
                  int crit) {
    char a[40], b[40];
    us3(start - w->t0, a);
    us3(end - start, b);
    putf(w, ",\n{\"ph\": \"X\", \"cat\": ");
    hta_json_quote(hta_sym(g->sym, e->cat), put, w);
    putf(w, ", \"name\": ");
    hta_json_quote(hta_sym(g->sym, e->name), put, w);
    putf(w, ", \"pid\": %lld, \"tid\": %lld, \"ts\": %s, \"dur\": %s, \"args\": {\"rank\": %d, \"index\": %u%s}}",
         (long long)((int64_t)rank * 2 + (e->stream != -1)), (long long)(e->stream != -1 ? e->stream : e->tid), a, b,
         (int)rank, e->index, crit ? ", \"critical\": 1" : "");
}

void sim_ow_flow(sim_ow *w, const sim_flow *f) {
    char a[40], b[40];
    us3(f->ts_u - w->t0, a);
    us3(f->ts_v - w->t0, b);
    putf(w, ",\n{\"ph\": \"s\", \"cat\": \"critical_path\", \"name\": \"critical_path\", \"id\": %llu, \"pid\": "
            "%lld, \"tid\": %lld, \"ts\": %s, \"args\": {\"type\": \"%s\", \"hop\": %d}}",
         (unsigned long long)w->id, (long long)f->pid_u, (long long)f->tid_u, a, hta_cpath_edge_type_name(f->type),
         f->hop);
    putf(w, ",\n{\"ph\": \"f\", \"bp\": \"e\", \"cat\": \"critical_path\", \"name\": \"critical_path\", \"id\": "
            "%llu, \"pid\": %lld, \"tid\": %lld, \"ts\": %s}",
         (unsigned long long)w->id, (long long)f->pid_v, (long long)f->tid_v, b);
    w->id++;
}

hta_status sim_ow_close(sim_ow *w, int ok) {
    putf(w, "\n]}\n");
    flush(w);
    hta_error ignored = {0};
    hta_status st = w->st;
    hta_status cst = hta_outfile_close(w->o, ok && !st, st || !ok ? &ignored : w->err);
    free(w);
    return st ? st : cst;
}

/* The merged process and thread of a joined graph's event. */
static sim_flow flow_of(const hta_sim *s, const int64_t *t, uint32_t nu, uint32_t nv, int type) {
    const hta_cp_graph *g = s->g;
    const hta_cp_event *u = &g->ev[g->node[nu].ev], *v = &g->ev[g->node[nv].ev];
    return (sim_flow){(int64_t)s->ev_rank[g->node[nu].ev] * 2 + (u->stream != -1), u->stream != -1 ? u->stream : u->tid,
                      t[nu], (int64_t)s->ev_rank[g->node[nv].ev] * 2 + (v->stream != -1),
                      v->stream != -1 ? v->stream : v->tid, t[nv], type,
                      s->ev_rank[g->node[nu].ev] != s->ev_rank[g->node[nv].ev]};
}

hta_status hta_sim_overlay(const hta_sim *s, const int64_t *t, const hta_cp_path *p, const char *out_path,
                           hta_error *err) {
    const hta_cp_graph *g = s->g;
    if (!s->ev_rank) return hta_fail(err, HTA_EINVAL, "the job's overlay needs --all-ranks");
    unsigned char *crit = calloc(g->nev ? g->nev : 1, 1);
    if (!crit) return hta_oom(err);
    for (size_t i = 0; i < p->n; i++) crit[g->node[p->node[i]].ev] = 1;
    int64_t t0 = INT64_MAX;
    for (size_t v = 0; v < g->nnode; v++)
        if (t[v] < t0) t0 = t[v];
    sim_ow *w = NULL;
    hta_status st = sim_ow_open(out_path, t0, &w, err);
    if (st) {
        free(crit);
        return st;
    }
    /* a process per rank and side, named */
    int32_t lastr = INT32_MIN;
    for (size_t x = 0; x < g->nev; x++) {
        if (s->ev_rank[x] == lastr) continue;
        lastr = s->ev_rank[x];
        sim_ow_rank(w, lastr);
    }
    for (size_t x = 0; x < g->nev && !w->st; x++)
        sim_ow_event(w, g, &g->ev[x], s->ev_rank[x], t[g->ev[x].start], t[g->ev[x].end], crit[x]);
    /* the path's arrows: one flow per edge between two events, across ranks at a hop */
    for (size_t i = 0; i + 1 < p->n && !w->st; i++) {
        if (g->node[p->node[i]].ev == g->node[p->node[i + 1]].ev) continue;
        sim_flow f = flow_of(s, t, p->node[i], p->node[i + 1], g->edge[p->edge[i]].type);
        sim_ow_flow(w, &f);
    }
    free(crit);
    return sim_ow_close(w, 1);
}
