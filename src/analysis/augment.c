/* `hta counters --augment`: each rank's trace file re-written with counter
 * tracks appended (analyses.md §11.3, TF§15).  The derived-trace writer
 * (hta_rawout_derive) copies the original unchanged; this file only adds the
 * counter events at the end of traceEvents and names the output. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

#include "hta/counters.h"
#include "hta/rawjson.h"
#include "hta/util.h"

HTA_TABLE_DEFINE(HTA_AUGMENTED);

/* Shortest text that reads back as the same double. */
static void fmt_double(char *buf, size_t n, double v) {
    if (!isfinite(v)) v = 0;
    for (int p = 15; p <= 17; p++) {
        snprintf(buf, n, "%.*g", p, v);
        if (strtod(buf, NULL) == v) return;
    }
}

static int put_cb(void *w, const char *s, size_t n) { return hta_rawout_put(w, s, n); }

static int put_pid(hta_rawout *w, const hta_trace *t, const hta_thread *th) {
    if (th->pid_sym >= 0) return hta_json_quote(hta_sym(t->sym, (uint32_t)th->pid_sym), put_cb, w);
    char b[32];
    snprintf(b, sizeof b, "%lld", (long long)th->pid);
    return hta_rawout_puts(w, b);
}

typedef struct aug {
    const hta_trace *t;
    const hta_rank *r;
    const hta_queue_series *q;
    const hta_membw_series *m;
    int64_t origin;
    uint64_t nev;
} aug;

/* The counter events, at the end of traceEvents. */
static int write_counters(void *ctx, hta_rawout *w) {
    aug *a = ctx;
    char ts[32], val[40];
    const hta_rank *r = a->r;
    a->nev = hta_rawout_count(w);
    for (size_t k = 0; k < a->q->n; k++) {
        hta_raw_format_us(a->q->ts[k] + a->origin, 0, ts);
        if (hta_rawout_sep(w) || hta_rawout_puts(w, "{\"pid\": ") ||
            put_pid(w, a->t, hta_row_thread(r, a->q->dev_row[k])))
            return -1;
        char b[160];
        snprintf(b, sizeof b, ", \"ts\": %s, \"args\": {\"Queue Length\": %lld}, \"ph\": \"C\", "
                 "\"name\": \"Queue Length\", \"id\": %lld}", ts, (long long)a->q->queue[k], (long long)a->q->stream[k]);
        if (hta_rawout_puts(w, b)) return -1;
    }
    for (size_t k = 0; k < a->m->n; k++) {
        hta_raw_format_us(a->m->ts[k] + a->origin, 0, ts);
        fmt_double(val, sizeof val, a->m->bw[k]);
        if (hta_rawout_sep(w) || hta_rawout_puts(w, "{\"pid\": ") ||
            put_pid(w, a->t, hta_row_thread(r, a->m->row[k])))
            return -1;
        char b[160];
        snprintf(b, sizeof b, ", \"ts\": %s, \"args\": {\"Memcpy BW\": %s}, \"ph\": \"C\", \"name\": \"%s\"}", ts,
                 val, a->m->names[a->m->kind[k]]);
        if (hta_rawout_puts(w, b)) return -1;
    }
    return 0;
}

/* OUTDIR/<name with every ".json" replaced by "_with_counters.json">, as HTA names it. */
static char *out_name(const char *outdir, const char *path, int gz) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t bl = strlen(base), n = 0;
    for (const char *p = strstr(base, ".json"); p; p = strstr(p + 5, ".json")) n++;
    static const char suf[] = "_with_counters";
    size_t cap = strlen(outdir) + 1 + bl + (n + 1) * (sizeof suf + 8) + 1;
    char *s = malloc(cap);
    if (!s) return NULL;
    size_t o = (size_t)snprintf(s, cap, "%s/", outdir);
    if (!n) { /* no ".json" in the name: HTA would overwrite the input */
        snprintf(s + o, cap - o, "%s%s.json%s", base, suf, gz ? ".gz" : "");
        return s;
    }
    for (const char *p = base; *p;) {
        if (!strncmp(p, ".json", 5)) {
            o += (size_t)snprintf(s + o, cap - o, "%s.json", suf);
            p += 5;
        } else {
            s[o++] = *p++;
        }
    }
    s[o] = 0;
    return s;
}

typedef struct job {
    const hta_trace *t;
    const hta_view *v; /* built by the caller: views are not built in threads */
    hta_series_rules rules; /* the run context's: HTA's with hta_compat */
    const char *outdir;
    size_t ri;
    char *path; /* result */
    uint64_t nev, nq, nm;
    hta_status st;
    hta_error err;
} job;

/* Every counter at a time the loader reads (|t| < 2^62 ns, trace/parse.c): a series point past the last
 * event (a bandwidth's end, a whole-us rounding) could fall beyond it, and the trace would not load again.
 * Checked before the file is opened, so no such trace is written. */
static hta_status counters_loadable(const char *path, const hta_queue_series *q, const hta_membw_series *m,
                                    int64_t origin, hta_error *err) {
    for (size_t k = 0; k < q->n + m->n; k++) {
        int64_t t = (k < q->n ? q->ts[k] : m->ts[k - q->n]) + origin; /* both < 2^62: no wrap */
        if (t > HTA_TIME_MAX_NS || t < -HTA_TIME_MAX_NS)
            return hta_fail(err, HTA_EINVAL, "%s: augment: a %s counter would be at a time beyond the times hta "
                            "holds (|t| < 2^62 ns): the trace would not load again", path,
                            k < q->n ? "queue length" : "memory bandwidth");
    }
    return HTA_OK;
}

static hta_status augment_rank(job *j) {
    const hta_trace *t = j->t;
    const char *outdir = j->outdir;
    size_t ri = j->ri;
    hta_error *err = &j->err;
    const hta_rank *r = t->ranks[ri];
    const hta_view *v = j->v;
    hta_queue_series q = {0};
    hta_membw_series m = {0};
    char *path = NULL;
    hta_status st;
    if ((st = hta_queue_series_build(v, j->rules, NULL, &q, err))) goto done;
    if ((st = hta_membw_series_build(v, j->rules, NULL, &m, err))) goto done;
    if ((st = counters_loadable(r->path, &q, &m, v->origin_ns, err))) goto done;
    int gz = hta_raw_is_gzip(r->path);
    path = out_name(outdir, r->path, gz);
    if (!path) {
        st = hta_oom(err);
        goto done;
    }
    aug a = {t, r, &q, &m, v->origin_ns, 0};
    hta_rawout_hooks h = {.tail = write_counters, .ctx = &a};
    if ((st = hta_rawout_derive(r->path, path, gz, &h, err))) {
        hta_error_prefix(err, "augment");
        goto done;
    }
    j->path = path;
    path = NULL;
    j->nev = a.nev;
    j->nq = q.n;
    j->nm = m.n;
done:
    free(path);
    hta_queue_series_free(&q);
    hta_membw_series_free(&m);
    return st;
}

/* Ranks are written in parallel: gzip output is compression bound. */
typedef struct pool {
    job *jobs;
    size_t n, next;
    pthread_mutex_t mu;
} pool;

static void *worker(void *arg) {
    pool *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        size_t k = p->next++;
        pthread_mutex_unlock(&p->mu);
        if (k >= p->n) break;
        job *j = &p->jobs[k];
        j->st = augment_rank(j);
    }
    return NULL;
}

hta_status hta_counters_augment(hta_ctx *ctx, const hta_counters_opts *o, const char *outdir,
                                hta_result *out, hta_error *err) {
    HTA_OPTS_OR_DEFAULT(hta_counters_opts, o);
    const hta_trace *t = ctx->trace;
    hta_status dst = hta_output_dir(outdir, err);
    if (dst) return dst;
    hta_table *tb = hta_table_from_def(&HTA_AUGMENTED_TABLE);
    if (!tb) return hta_oom(err);
    size_t ns = hta_ctx_nranks(ctx);
    pool p = {calloc(ns ? ns : 1, sizeof(job)), ns, 0, PTHREAD_MUTEX_INITIALIZER};
    if (!p.jobs) {
        free(p.jobs);
        hta_table_free(tb);
        return hta_oom(err);
    }
    /* views first: the context is not shared between threads */
    for (size_t k = 0; k < ns; k++) {
        const hta_view *v;
        hta_status vst = hta_ctx_view(ctx, k, &v, err);
        if (vst) {
            free(p.jobs);
            hta_table_free(tb);
            return vst;
        }
        p.jobs[k] = (job){.t = t, .v = v, .outdir = outdir, .ri = k,
                           .rules = ctx->hta_compat ? HTA_SERIES_HTA : HTA_SERIES_EXACT};
    }
    hta_parallel(0, ns, worker, &p);
    hta_status st = HTA_OK;
    for (size_t k = 0; k < ns; k++) {
        job *j = &p.jobs[k];
        if (!st && j->st) {
            st = j->st;
            *err = j->err;
        }
        if (!st) {
            long row = hta_table_add_row(tb);
            if (row < 0 || hta_table_set_str(tb, (size_t)row, HTA_AUGMENTED_FILE, j->path)) {
                st = hta_oom(err);
            } else {
                hta_table_set_int(tb, (size_t)row, HTA_AUGMENTED_RANK, t->ranks[j->ri]->rank);
                hta_table_set_int(tb, (size_t)row, HTA_AUGMENTED_EVENTS, (int64_t)j->nev);
                hta_table_set_int(tb, (size_t)row, HTA_AUGMENTED_QUEUE_EVENTS, (int64_t)j->nq);
                hta_table_set_int(tb, (size_t)row, HTA_AUGMENTED_MEMBW_EVENTS, (int64_t)j->nm);
            }
        }
        free(j->path);
        hta_ctx_view_done(ctx, k); /* the threads needed every view at once */
    }
    free(p.jobs);
    if (st) {
        hta_table_free(tb);
        return st;
    }
    return hta_result_add(out, tb) ? hta_oom(err) : HTA_OK;
}
