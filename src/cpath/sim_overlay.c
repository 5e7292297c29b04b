/* The writer of the job's critical path for Perfetto (--all-ranks --overlay OUT): one trace of every rank on one
 * clock (the offsets the collectives' ends give), a process per rank with its threads and streams, every event at
 * its time, "critical": 1 on the path's events, and flow arrows along the path, across ranks where it hops at a
 * collective.  The bounded job engine (job/passes.c) writes rank by rank through it. */
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
    const hta_cp_thread *th = &g->thr[e->thr];
    us3(start - w->t0, a);
    us3(end - start, b);
    putf(w, ",\n{\"ph\": \"X\", \"cat\": ");
    hta_json_quote(hta_sym(g->sym, e->cat), put, w);
    putf(w, ", \"name\": ");
    hta_json_quote(hta_sym(g->sym, e->name), put, w);
    putf(w, ", \"pid\": %lld, \"tid\": %lld, \"ts\": %s, \"dur\": %s, \"args\": {\"rank\": %d, \"index\": %u%s}}",
         (long long)((int64_t)rank * 2 + (th->stream != -1)), (long long)(th->stream != -1 ? th->stream : th->tid), a, b,
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
