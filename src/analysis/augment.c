/* `hta counters --augment`: each rank's trace file re-written with counter
 * tracks appended (analyses.md §11.3, TF§15).  The original is streamed and
 * every event's raw text copied unchanged, so nothing is lost or reformatted;
 * the file is written to a temporary name and renamed when complete. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hta/counters.h"
#include "hta/rawtrace.h"
#include "hta/util.h"


/* Output buffered here: one write per 1 MiB, not per event. */
typedef struct obuf {
    hta_trace_out *o;
    char *b;
    size_t n, cap;
    hta_error *err;
    hta_status st;
} obuf;

static int ob_flush(obuf *w) {
    if (w->st) return -1;
    if (w->n && (w->st = hta_trace_out_write(w->o, w->b, w->n, w->err))) return -1;
    w->n = 0;
    return 0;
}

static int ob_put(obuf *w, const char *s, size_t len) {
    if (w->n + len > w->cap) {
        if (ob_flush(w)) return -1;
        if (len > w->cap) return (w->st = hta_trace_out_write(w->o, s, len, w->err)) ? -1 : 0;
    }
    memcpy(w->b + w->n, s, len);
    w->n += len;
    return 0;
}

static int ob_str(obuf *w, const char *s) { return ob_put(w, s, strlen(s)); }

static int ob_put_cb(void *w, const char *s, size_t n) { return ob_put(w, s, n); }
static int ob_jstr(obuf *w, const char *s) { return hta_json_quote(s, ob_put_cb, w); }

/* Absolute ns as microseconds, exact ("123", "123.5"). */
static void fmt_us(char *buf, size_t n, int64_t ns) {
    int neg = ns < 0;
    uint64_t a = neg ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    uint64_t us = a / 1000, frac = a % 1000;
    if (!frac) {
        snprintf(buf, n, "%s%llu", neg ? "-" : "", (unsigned long long)us);
        return;
    }
    char f[4];
    snprintf(f, sizeof f, "%03u", (unsigned)frac);
    for (int k = 2; k > 0 && f[k] == '0'; k--) f[k] = 0;
    snprintf(buf, n, "%s%llu.%s", neg ? "-" : "", (unsigned long long)us, f);
}

/* Shortest text that reads back as the same double. */
static void fmt_double(char *buf, size_t n, double v) {
    if (!isfinite(v)) v = 0;
    for (int p = 15; p <= 17; p++) {
        snprintf(buf, n, "%.*g", p, v);
        if (strtod(buf, NULL) == v) return;
    }
}

static int ob_pid(obuf *w, const hta_trace *t, const hta_thread *th) {
    if (th->pid_sym >= 0) return ob_jstr(w, hta_sym(t->sym, (uint32_t)th->pid_sym));
    char b[32];
    snprintf(b, sizeof b, "%lld", (long long)th->pid);
    return ob_str(w, b);
}

typedef struct aug {
    obuf w;
    const hta_trace *t;
    const hta_rank *r;
    const hta_queue_series *q;
    const hta_membw_series *m;
    int64_t origin;
    int in_events; /* 0 before, 1 inside, 2 after the traceEvents array */
    int nkeys;
    uint64_t nev, ncounters;
} aug;

static int write_counters(aug *a) {
    char ts[40], val[40];
    const hta_rank *r = a->r;
    for (size_t k = 0; k < a->q->n; k++) {
        fmt_us(ts, sizeof ts, a->q->ts[k] + a->origin);
        if (ob_str(&a->w, a->nev + a->ncounters ? ",\n{\"pid\": " : "\n{\"pid\": ") ||
            ob_pid(&a->w, a->t, hta_row_thread(r, a->q->dev_row[k])))
            return -1;
        char b[160];
        snprintf(b, sizeof b, ", \"ts\": %s, \"args\": {\"Queue Length\": %lld}, \"ph\": \"C\", "
                 "\"name\": \"Queue Length\", \"id\": %lld}", ts, (long long)a->q->queue[k], (long long)a->q->stream[k]);
        if (ob_str(&a->w, b)) return -1;
        a->ncounters++;
    }
    for (size_t k = 0; k < a->m->n; k++) {
        fmt_us(ts, sizeof ts, a->m->ts[k] + a->origin);
        fmt_double(val, sizeof val, a->m->bw[k]);
        if (ob_str(&a->w, a->nev + a->ncounters ? ",\n{\"pid\": " : "\n{\"pid\": ") ||
            ob_pid(&a->w, a->t, hta_row_thread(r, a->m->row[k])))
            return -1;
        char b[160];
        snprintf(b, sizeof b, ", \"ts\": %s, \"args\": {\"Memcpy BW\": %s}, \"ph\": \"C\", \"name\": \"%s\"}", ts,
                 val, a->m->names[a->m->kind[k]]);
        if (ob_str(&a->w, b)) return -1;
        a->ncounters++;
    }
    return 0;
}

static int open_events(aug *a) {
    a->in_events = 1;
    return ob_str(&a->w, a->nkeys++ ? ",\n\"traceEvents\": [" : "\"traceEvents\": [");
}

static int close_events(aug *a) {
    a->in_events = 2;
    if (write_counters(a)) return -1;
    return ob_str(&a->w, "\n]");
}

static int on_meta(void *ctx, const char *key, size_t klen, const char *json, size_t jlen) {
    aug *a = ctx;
    if (a->in_events == 1 && close_events(a)) return -1;
    if (ob_str(&a->w, a->nkeys++ ? ",\n\"" : "\"") || ob_put(&a->w, key, klen) || ob_str(&a->w, "\": ") ||
        ob_put(&a->w, json, jlen))
        return -1;
    return 0;
}

static int on_event(void *ctx, uint32_t index, const char *json, size_t len) {
    aug *a = ctx;
    (void)index;
    if (a->in_events == 0 && open_events(a)) return -1;
    if (a->in_events == 2) return -1; /* a second traceEvents array: not a trace we wrote */
    if (ob_str(&a->w, a->nev ? ",\n" : "\n") || ob_put(&a->w, json, len)) return -1;
    a->nev++;
    return 0;
}

static int is_gzip(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    unsigned char m[2] = {0};
    size_t got = fread(m, 1, 2, f);
    fclose(f);
    return got == 2 && m[0] == 0x1f && m[1] == 0x8b;
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
    const hta_counters_opts *o;
    const char *outdir;
    size_t ri;
    char *path; /* result */
    uint64_t nev, nq, nm;
    hta_status st;
    hta_error err;
} job;

static hta_status augment_rank(job *j, char *buf) {
    const hta_trace *t = j->t;
    const hta_counters_opts *o = j->o;
    const char *outdir = j->outdir;
    size_t ri = j->ri;
    hta_error *err = &j->err;
    const hta_rank *r = t->ranks[ri];
    const hta_view *v = j->v;
    hta_queue_series q = {0};
    hta_membw_series m = {0};
    char *path = NULL;
    hta_status st;
    if ((st = hta_queue_series_build(v, o->ties, NULL, &q, err))) goto done;
    if ((st = hta_membw_series_build(v, o->ties, NULL, &m, err))) goto done;
    int gz = is_gzip(r->path);
    path = out_name(outdir, r->path, gz);
    if (!path) {
        st = hta_oom(err);
        goto done;
    }
    aug a = {{0}, t, r, &q, &m, v->origin_ns, 0, 0, 0, 0};
    a.w.b = buf;
    a.w.cap = 1 << 20;
    a.w.err = err;
    if ((st = hta_trace_out_open(path, gz, &a.w.o, err))) goto done;
    hta_raw_callbacks cb = {on_meta, on_event, &a};
    int bad = ob_str(&a.w, "{\n");
    if (!bad) {
        st = hta_raw_scan(r->path, &cb, err);
        if (a.w.st) st = a.w.st; /* the write error, not "stopped by caller" */
        bad = st != HTA_OK;
    }
    if (!bad && a.in_events == 0) bad = open_events(&a);
    if (!bad && a.in_events == 1) bad = close_events(&a);
    if (!bad) bad = ob_str(&a.w, "\n}\n") || ob_flush(&a.w);
    if (bad && !st) st = a.w.st ? a.w.st : hta_fail(err, HTA_EIO, "%s: write error", path);
    hta_status cst = hta_trace_out_close(a.w.o, !bad, bad ? NULL : err);
    if (!st) st = cst;
    if (st) {
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
    char *buf = malloc(1 << 20);
    for (;;) {
        pthread_mutex_lock(&p->mu);
        size_t k = p->next++;
        pthread_mutex_unlock(&p->mu);
        if (k >= p->n) break;
        job *j = &p->jobs[k];
        j->st = buf ? augment_rank(j, buf) : hta_oom(&j->err);
    }
    free(buf);
    return NULL;
}

hta_status hta_counters_augment(hta_ctx *ctx, const hta_counters_opts *o, const char *outdir,
                                hta_result *out, hta_error *err) {
    hta_counters_opts dflt_;
    if (!o) hta_counters_opts_default(&dflt_), o = &dflt_;
    const hta_trace *t = ctx->trace;
    hta_status dst = hta_output_dir(outdir, err);
    if (dst) return dst;
    hta_table *tb = hta_table_new("augmented");
    if (!tb) return hta_oom(err);
    static const char *const cols[] = {"rank", "file", "events", "queue_length_events", "memory_bw_events"};
    static const hta_col_type ty[] = {HTA_COL_INT, HTA_COL_STR, HTA_COL_INT, HTA_COL_INT, HTA_COL_INT};
    for (size_t c = 0; c < 5; c++)
        if (hta_table_add_col(tb, cols[c], ty[c]) < 0) {
            hta_table_free(tb);
            return hta_oom(err);
        }
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
        p.jobs[k] = (job){.t = t, .v = v, .o = o, .outdir = outdir, .ri = k};
    }
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    size_t nth = ncpu > 1 ? (size_t)ncpu : 1;
    if (nth > ns) nth = ns;
    if (nth > 64) nth = 64;
    pthread_t th[64];
    size_t started = 0;
    for (size_t k = 1; k < nth; k++)
        if (!pthread_create(&th[started], NULL, worker, &p)) started++;
    worker(&p);
    for (size_t k = 0; k < started; k++) pthread_join(th[k], NULL);
    hta_status st = HTA_OK;
    for (size_t k = 0; k < ns; k++) {
        job *j = &p.jobs[k];
        if (!st && j->st) {
            st = j->st;
            *err = j->err;
        }
        if (!st) {
            long row = hta_table_add_row(tb);
            if (row < 0 || hta_table_set_str(tb, (size_t)row, 1, j->path)) {
                st = hta_oom(err);
            } else {
                hta_table_set_int(tb, (size_t)row, 0, t->ranks[j->ri]->rank);
                hta_table_set_int(tb, (size_t)row, 2, (int64_t)j->nev);
                hta_table_set_int(tb, (size_t)row, 3, (int64_t)j->nq);
                hta_table_set_int(tb, (size_t)row, 4, (int64_t)j->nm);
            }
        }
        free(j->path);
    }
    free(p.jobs);
    if (st) {
        hta_table_free(tb);
        return st;
    }
    return hta_result_add(out, tb) ? hta_oom(err) : HTA_OK;
}
