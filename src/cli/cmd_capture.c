/* `hta capture HOST[:PORT]... | --hosts-file F | --slurm`: asks the htad of every host at once for a
 * trace of the running job (one common start time, so that every rank traces the same window),
 * waits for every expected trace, fetches traces and metrics into DIR and names the hosts and pids
 * that did not deliver; with --report, the report over both (docs/capture.md).  The daemons are not
 * trusted: every host is served by a thread of its own and every call ends by --timeout-ms, a size
 * must be an integer within --max-bytes and the bytes written must be as many, the daemons' text is
 * escaped before it is printed and quoted before it goes into a request. */
#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "hta/capture.h"
#include "hta/outfile.h"
#include "hta/report.h"

#define MAX_HOSTS 4096

typedef struct host {
    char name[256];      /* as given, without the port */
    char label[300];     /* in file names: name, or name-port when the port is not 1778 */
    int port;
    char capture[64];    /* the daemon's capture id (a plain name: checked) */
    char error[1100];    /* why it gave nothing */
    size_t npids;
    struct pidst *p;     /* per triggered pid, sorted by pid */
    int done;
} host;

typedef struct pidst {
    int32_t pid;
    char *state;         /* the last state the daemon said (escaped), with its error */
    char *file;          /* its name in the store (a plain name: checked) */
    int64_t size;        /* the stored size htaStatus gave, or -1 */
    int64_t fetched;     /* bytes written into DIR, or -1 */
    char *why;           /* why the fetch failed */
    int seen;            /* listed by the current htaStatus */
    char *dup;           /* another trace the daemon listed under the same pid: never fetched (one file per
                          * pid: DIR/HOST_PID.json holds the first, never a second written over it) */
} pidst;

typedef struct job {
    host *h;
    size_t nh;
    const char *req;     /* the htaCapture request, the same for every host */
    const char *out, *mdir;
    int64_t t_req, deadline, max_bytes;
    pthread_mutex_t mu;
} job;

static int64_t wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int add_host(host **hs, size_t *n, const char *spec, int port) {
    if (*n >= MAX_HOSTS) return -1;
    host *h = &(*hs)[(*n)++];
    memset(h, 0, sizeof *h);
    h->port = port;
    const char *colon = strrchr(spec, ':');
    size_t nl = strlen(spec);
    if (spec[0] == '[' && strchr(spec, ']')) { /* [v6]:port */
        const char *e = strchr(spec, ']');
        nl = (size_t)(e - spec - 1);
        memcpy(h->name, spec + 1, nl < 255 ? nl : 255);
        if (e[1] == ':') h->port = atoi(e + 2);
    } else if (colon && strchr(spec, ':') == colon) {
        nl = (size_t)(colon - spec);
        h->port = atoi(colon + 1);
        snprintf(h->name, sizeof h->name, "%.*s", (int)nl, spec);
    } else {
        snprintf(h->name, sizeof h->name, "%s", spec);
    }
    if (!h->name[0] || h->port <= 0 || h->port > 65535) return -2;
    snprintf(h->label, sizeof h->label, "%s", h->name);
    if (h->port != HTA_RPC_PORT) snprintf(h->label + strlen(h->label), sizeof h->label - strlen(h->label), "-%d", h->port);
    for (char *p = h->label; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr(".-", *p)) *p = '-';
    return 0;
}

/* SLURM_JOB_NODELIST: "gpu[01-03,07],login5" -> gpu01 gpu02 gpu03 gpu07 login5 (one bracket per name) */
static int slurm_hosts(const char *list, host **hs, size_t *n, int port) {
    const char *p = list;
    while (*p) {
        const char *lb = NULL, *end = p;
        while (*end && *end != ',') {
            if (*end == '[') {
                lb = end;
                end = strchr(end, ']');
                if (!end) return -1;
            }
            end++;
        }
        if (!lb) {
            char name[256];
            snprintf(name, sizeof name, "%.*s", (int)(end - p), p);
            if (add_host(hs, n, name, port)) return -1;
        } else {
            const char *rb = strchr(lb, ']');
            for (const char *q = lb + 1; q < rb;) {
                const char *qe = q;
                while (qe < rb && *qe != ',') qe++;
                char a[32] = "", b[32] = "";
                const char *dash = memchr(q, '-', (size_t)(qe - q));
                snprintf(a, sizeof a, "%.*s", (int)((dash ? dash : qe) - q), q);
                snprintf(b, sizeof b, "%.*s", dash ? (int)(qe - dash - 1) : (int)(qe - q), dash ? dash + 1 : q);
                long lo = atol(a), hi = atol(b);
                if (hi < lo || hi - lo > MAX_HOSTS) return -1;
                for (long k = lo; k <= hi; k++) {
                    char name[300];
                    snprintf(name, sizeof name, "%.*s%0*ld%.*s", (int)(lb - p), p, (int)strlen(a), k,
                             (int)(end - rb - 1), rb + 1);
                    if (add_host(hs, n, name, port)) return -1;
                }
                q = qe + (qe < rb);
            }
        }
        p = *end ? end + 1 : end;
    }
    return 0;
}

static void host_error(host *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void host_error(host *h, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(h->error, sizeof h->error, fmt, ap);
    va_end(ap);
    h->done = 1;
}

static const char *g_token;

/* Text from a daemon, safe to print (control characters escaped); malloc'd. */
static char *safe_dup(const char *s) {
    size_t n = strlen(s), cap = 4 * n + 1;
    char *o = malloc(cap);
    if (o) hta_escape_text(s, n, o, cap);
    return o;
}

/* ms left until the deadline, at most cap_ms; 0 when it has passed */
static int left_ms(int64_t deadline, int cap_ms) {
    int64_t l = deadline - wall_ms();
    return l <= 0 ? 0 : l > cap_ms ? cap_ms : (int)l;
}

static hta_status call(host *h, const char *body, int64_t deadline, hta_jval **rep, int *fd, hta_error *err) {
    char req[HTA_RPC_MAX_REQUEST];
    *rep = NULL;
    int ms = left_ms(deadline, 10000);
    if (!ms) return hta_fail(err, HTA_EIO, "%s:%d: timed out (--timeout-ms)", h->name, h->port);
    if (g_token) { /* the token first: a daemon judges a request from another host by its first bytes */
        hta_sbuf b = {0};
        hta_sb_quote(&b, g_token);
        snprintf(req, sizeof req, "{\"token\":%s,%s", b.p ? b.p : "\"\"", body + 1);
        hta_sb_free(&b);
    } else {
        snprintf(req, sizeof req, "%s", body);
    }
    HTA_TRY(hta_rpc_call(h->name, h->port, req, ms, rep, fd, err));
    const char *s = hta_json_str(*rep, "status");
    if (s && strcmp(s, "ok")) {
        const char *e = hta_json_str(*rep, "error");
        char *se = safe_dup(e ? e : s);
        hta_fail(err, HTA_EINVAL, "%s:%d: %s", h->name, h->port, se ? se : "(failed)");
        free(se);
        hta_json_free(*rep);
        *rep = NULL;
        if (fd && *fd >= 0) close(*fd), *fd = -1;
        return HTA_EINVAL;
    }
    return HTA_OK;
}

static int cmp_pidst(const void *a, const void *b) {
    int32_t x = ((const pidst *)a)->pid, y = ((const pidst *)b)->pid;
    return (x > y) - (x < y);
}

static pidst *find_pid(host *h, int32_t pid) {
    pidst key = {.pid = pid};
    return bsearch(&key, h->p, h->npids, sizeof *h->p, cmp_pidst);
}

static void trigger_host(job *j, host *h) {
    if (h->error[0]) return;
    hta_jval *rep;
    hta_error err = {0};
    if (call(h, j->req, j->deadline, &rep, NULL, &err)) {
        host_error(h, "%s", err.msg);
        return;
    }
    const char *id = hta_json_str(rep, "capture");
    const hta_jval *tr = hta_json_get(rep, "activityProfilersTriggered");
    int ok = id && hta_safe_name(id) && strlen(id) < sizeof h->capture && tr && tr->type == HTA_JARR;
    for (size_t q = 0; ok && q < tr->n; q++)
        ok = tr->v[q].type == HTA_JNUM && tr->v[q].is_int && tr->v[q].i > 0 && tr->v[q].i <= INT32_MAX;
    if (!ok) {
        host_error(h, "%s:%d: not an htad reply (a capture id that is a plain name, and pids)", h->name, h->port);
    } else {
        snprintf(h->capture, sizeof h->capture, "%s", id);
        h->p = calloc(tr->n + 1, sizeof *h->p);
        if (!h->p) {
            host_error(h, "out of memory");
        } else {
            for (size_t q = 0; q < tr->n; q++)
                h->p[h->npids++] = (pidst){(int32_t)tr->v[q].i, NULL, NULL, -1, -1, NULL, 0, NULL};
            qsort(h->p, h->npids, sizeof *h->p, cmp_pidst);
            size_t u = 0; /* a pid said twice is one trace */
            for (size_t q = 0; q < h->npids; q++)
                if (!u || h->p[u - 1].pid != h->p[q].pid) h->p[u++] = h->p[q];
            h->npids = u;
            int64_t busy = hta_json_int(rep, "activityProfilersBusy", 0);
            if (!h->npids)
                host_error(h, "%s:%d: no process could be triggered (%" PRId64 " busy with another capture)",
                           h->name, h->port, busy);
        }
    }
    hta_json_free(rep);
}

/* one htaStatus: the states of the host's traces; done when none is still expected */
static void poll_host(job *j, host *h) {
    hta_sbuf req = {0};
    HTA_SB_LIT(&req, "{\"fn\":\"htaStatus\",\"capture\":");
    hta_sb_quote(&req, h->capture);
    HTA_SB_LIT(&req, "}");
    hta_jval *rep;
    hta_error err = {0};
    hta_status st = req.oom ? hta_oom(&err) : call(h, req.p, j->deadline, &rep, NULL, &err);
    hta_sb_free(&req);
    if (st) {
        host_error(h, "%s", err.msg);
        return;
    }
    const hta_jval *tr = hta_json_get(rep, "traces");
    int pending = 0;
    for (size_t q = 0; q < h->npids; q++) h->p[q].seen = 0;
    for (size_t k = 0; tr && tr->type == HTA_JARR && k < tr->n; k++) {
        const hta_jval *t = &tr->v[k];
        const hta_jval *pv = hta_json_get(t, "pid"), *sz = hta_json_get(t, "size");
        pidst *p = pv && pv->type == HTA_JNUM && pv->is_int && pv->i > 0 && pv->i <= INT32_MAX
                       ? find_pid(h, (int32_t)pv->i) : NULL;
        const char *stn = hta_json_str(t, "state"), *nm = hta_json_str(t, "name"), *e = hta_json_str(t, "error");
        if (stn && (!strcmp(stn, "requested") || !strcmp(stn, "delivered") || !strcmp(stn, "storing"))) pending = 1;
        if (!p) continue;
        if (p->seen++) {
            /* a second trace under one pid (a daemon that names processes by a pid two of them share):
             * the first keeps the file, this one is said and counted as missing */
            if (!p->dup) p->dup = safe_dup(nm ? nm : "?");
            continue;
        }
        char buf[700];
        snprintf(buf, sizeof buf, "%s%s%s", stn ? stn : "?", e ? ": " : "", e ? e : "");
        free(p->state);
        p->state = safe_dup(buf);
        free(p->file);
        p->file = nm && hta_safe_name(nm) ? strdup(nm) : NULL;
        p->size = sz && sz->type == HTA_JNUM && sz->is_int && sz->i >= 0 ? sz->i : -1;
    }
    h->done = !pending;
    hta_json_free(rep);
}

typedef struct sink {
    hta_outfile *o;
    uint64_t n;
    int64_t deadline;
} sink;

static hta_status sink_out(void *ctx, const void *d, size_t n, hta_error *err) {
    sink *k = ctx;
    if (wall_ms() > k->deadline) return hta_fail(err, HTA_EIO, "timed out (--timeout-ms) after %llu bytes",
                                                 (unsigned long long)k->n);
    k->n += n;
    return hta_outfile_write(k->o, d, n, err);
}

/* fetches one file of the daemon (fn, with its JSON arguments) into path: all of the size it
 * announces, which must be an integer within max_bytes, or nothing (the output is not kept) */
static hta_status fetch(job *j, host *h, const char *body, const char *path, int64_t expect, uint64_t *size,
                        hta_error *err) {
    hta_jval *rep;
    int fd;
    *size = 0;
    HTA_TRY(call(h, body, j->deadline, &rep, &fd, err));
    const hta_jval *sz = hta_json_get(rep, "size");
    int ok = sz && sz->type == HTA_JNUM && sz->is_int && sz->i >= 0 && sz->i <= j->max_bytes;
    int64_t n = ok ? sz->i : -1;
    char said[40] = "none";
    if (sz && sz->type == HTA_JNUM) {
        if (sz->is_int) snprintf(said, sizeof said, "%" PRId64, sz->i);
        else snprintf(said, sizeof said, "%.6g", sz->d);
    }
    hta_json_free(rep);
    if (!ok) {
        close(fd);
        return hta_fail(err, HTA_EFORMAT, "%s:%d: the reply's size (%s) is not a non-negative integer within "
                        "--max-bytes %" PRId64, h->name, h->port, said, j->max_bytes);
    }
    if (expect >= 0 && n != expect) {
        close(fd);
        return hta_fail(err, HTA_EFORMAT, "%s:%d: the reply announces %" PRId64 " bytes, the status said %" PRId64,
                        h->name, h->port, n, expect);
    }
    hta_outfile *o;
    hta_status st = hta_outfile_open(path, &o, err);
    if (!st) {
        sink k = {o, 0, j->deadline};
        st = hta_rpc_read_raw(fd, (uint64_t)n, left_ms(j->deadline, 30000) + 1, sink_out, &k, err);
        if (!st && k.n != (uint64_t)n)
            st = hta_fail(err, HTA_EIO, "%llu bytes written of %" PRId64 " announced", (unsigned long long)k.n, n);
        hta_status cs = hta_outfile_close(o, !st, err);
        if (!st) st = cs;
        *size = k.n;
    }
    close(fd);
    return st;
}

static void follow_host(job *j, host *h) {
    if (h->capture[0] && !h->error[0] && !h->done && wall_ms() < j->deadline) poll_host(j, h);
}

/* fetches what arrived from the host, and its metrics */
static void fetch_host(job *j, host *h) {
    for (size_t q = 0; q < h->npids; q++) {
        pidst *p = &h->p[q];
        if (!p->state || strncmp(p->state, "stored", 6) || !p->file) continue;
        char path[4400];
        hta_sbuf body = {0};
        snprintf(path, sizeof path, "%s/%s_%d.json", j->out, h->label, (int)p->pid);
        HTA_SB_LIT(&body, "{\"fn\":\"htaFetch\",\"capture\":");
        hta_sb_quote(&body, h->capture);
        HTA_SB_LIT(&body, ",\"name\":");
        hta_sb_quote(&body, p->file);
        HTA_SB_LIT(&body, "}");
        hta_error err = {0};
        uint64_t size = 0;
        if (body.oom) hta_oom(&err);
        if (body.oom || fetch(j, h, body.p, path, p->size, &size, &err)) p->why = strdup(err.msg);
        else p->fetched = (int64_t)size;
        hta_sb_free(&body);
    }
    if (!h->capture[0]) return;
    char path[4600], body[200];
    uint64_t size;
    snprintf(path, sizeof path, "%s/%s.metrics.jsonl", j->mdir, h->label);
    snprintf(body, sizeof body, "{\"fn\":\"htaMetrics\",\"since_ms\":%" PRId64 ",\"until_ms\":%" PRId64 "}",
             j->t_req - 5000, wall_ms());
    hta_error err = {0};
    if (fetch(j, h, body, path, -1, &size, &err)) {
        pthread_mutex_lock(&j->mu);
        fprintf(stderr, "hta capture: %s: metrics: %s\n", h->name, err.msg);
        pthread_mutex_unlock(&j->mu);
    }
}

typedef struct pool {
    job *j;
    void (*fn)(job *, host *);
    size_t next;
} pool;

static void *pool_worker(void *arg) {
    pool *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->j->mu);
        size_t k = p->next++;
        pthread_mutex_unlock(&p->j->mu);
        if (k >= p->j->nh) return NULL;
        p->fn(p->j, &p->j->h[k]);
    }
}

/* fn on every host, 64 at once: a silent host holds one thread until its call's deadline, no more */
static void on_every_host(job *j, void (*fn)(job *, host *)) {
    pool p = {j, fn, 0};
    size_t nthr = j->nh < 64 ? j->nh : 64;
    pthread_t th[64];
    int started[64] = {0};
    for (size_t t = 1; t < nthr; t++) started[t] = !pthread_create(&th[t], NULL, pool_worker, &p);
    pool_worker(&p); /* this thread too (and alone, if no thread could start) */
    for (size_t t = 1; t < nthr; t++)
        if (started[t]) pthread_join(th[t], NULL);
}

static void usage(FILE *f) {
    fprintf(f,
            "Usage: hta capture HOST[:PORT]... | --hosts-file F | --slurm  -o DIR [options]\n"
            "Asks the htad daemon of every host at once to trace the job's processes (a common start\n"
            "time, so that every rank traces the same window), waits for every trace, and fetches the\n"
            "traces (DIR/HOST_PID.json) and the hosts' metrics (DIR/metrics/HOST.metrics.jsonl).  The\n"
            "hosts and pids that did not deliver are listed, and the exit status is then 1.\n\n"
            "  -o, --output DIR            where the files go (created; required)\n"
            "  --duration-ms N             trace for N ms (default 500)\n"
            "  --iterations N              trace N iterations (steps) instead, from the next one\n"
            "  --job-id N                  the job's SLURM_JOB_ID as the processes see it (default 0)\n"
            "  --pids P,Q                  only these processes, or their descendants (default all)\n"
            "  --process-limit N           at most N processes per host (default 1000)\n"
            "  --start-delay-ms N          start N ms from now on every host (default 12000: libkineto\n"
            "                              polls every 5 s and warms up for 5 s)\n"
            "  --warmup-s N                libkineto's warm-up before tracing (default: its own, 5 s)\n"
            "  --timeout-ms N              wait at most N ms after the start for every trace, then\n"
            "                              fetch what arrived in at most N ms more (default 60000)\n"
            "  --max-bytes N               a daemon's file larger than N bytes is refused (default\n"
            "                              4294967296)\n"
            "  --port N                    the daemons' port when HOST has none (default 1778)\n"
            "  --hosts-file F              one HOST[:PORT] per line ('#' starts a comment)\n"
            "  --slurm                     the hosts of SLURM_JOB_NODELIST; --job-id from SLURM_JOB_ID\n"
            "  --token-file F              the daemons' token (for hosts other than this one)\n"
            "  --report                    then the report over DIR (hta report), metrics included\n"
            "  --help\n");
}

static int bad_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad_usage(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "hta capture: ");
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'hta capture --help'.\n");
    return EXIT_USAGE;
}

static int parse_i64(const char *v, int64_t lo, int64_t *out) {
    char *e;
    errno = 0;
    long long x = strtoll(v, &e, 10);
    if (errno || *e || !*v || x < lo) return -1;
    *out = x;
    return 0;
}

static int cmd_capture(int argc, char **argv) {
    const char *out = NULL, *hosts_file = NULL, *pids = NULL, *token_file = NULL;
    int64_t duration = 500, iters = 0, job_id = 0, limit = 1000, delay = 12000, warmup = -1, timeout = 60000,
            port = HTA_RPC_PORT, max_bytes = (int64_t)4 << 30;
    int slurm = 0, report = 0, job_given = 0;
    const char **specs = calloc((size_t)argc + 1, sizeof *specs);
    size_t nspecs = 0;
    if (!specs) return 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int64_t *num = NULL, lo = 0;
        const char **str = NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            free(specs);
            return 0;
        } else if (!strcmp(a, "--slurm")) slurm = 1;
        else if (!strcmp(a, "--report")) report = 1;
        else if (!strcmp(a, "-o") || !strcmp(a, "--output")) str = &out;
        else if (!strcmp(a, "--hosts-file")) str = &hosts_file;
        else if (!strcmp(a, "--pids")) str = &pids;
        else if (!strcmp(a, "--token-file")) str = &token_file;
        else if (!strcmp(a, "--duration-ms")) num = &duration, lo = 1;
        else if (!strcmp(a, "--iterations")) num = &iters, lo = 1;
        else if (!strcmp(a, "--job-id")) num = &job_id, lo = INT64_MIN, job_given = 1;
        else if (!strcmp(a, "--process-limit")) num = &limit, lo = 1;
        else if (!strcmp(a, "--start-delay-ms")) num = &delay;
        else if (!strcmp(a, "--warmup-s")) num = &warmup;
        else if (!strcmp(a, "--timeout-ms")) num = &timeout, lo = 1;
        else if (!strcmp(a, "--port")) num = &port, lo = 1;
        else if (!strcmp(a, "--max-bytes")) num = &max_bytes;
        else if (a[0] == '-') {
            free(specs);
            return bad_usage("unknown option '%s'", a);
        } else specs[nspecs++] = a;
        if ((num || str) && i + 1 >= argc) {
            free(specs);
            return bad_usage("%s needs a value", a);
        }
        if (str) *str = argv[++i];
        if (num && parse_i64(argv[++i], lo, num)) {
            free(specs);
            return bad_usage("'%s' is not a valid number here", argv[i]);
        }
    }
    int rc = 0;
    host *hs = calloc(MAX_HOSTS, sizeof *hs);
    size_t nh = 0;
    if (!hs) {
        free(specs);
        return 1;
    }
    for (size_t k = 0; k < nspecs && !rc; k++)
        if (add_host(&hs, &nh, specs[k], (int)port)) rc = bad_usage("bad host '%s' (HOST or HOST:PORT)", specs[k]);
    free(specs);
    if (!rc && hosts_file) {
        FILE *f = fopen(hosts_file, "re");
        if (!f) {
            fprintf(stderr, "hta capture: %s: %s\n", hosts_file, strerror(errno));
            rc = 1;
        }
        char line[512];
        while (f && !rc && fgets(line, sizeof line, f)) {
            line[strcspn(line, "#\r\n")] = 0;
            char *s = line + strspn(line, " \t");
            s[strcspn(s, " \t")] = 0;
            if (*s && add_host(&hs, &nh, s, (int)port)) rc = bad_usage("bad host '%s' in the hosts file", s);
        }
        if (f) fclose(f);
    }
    if (!rc && slurm) {
        const char *nl = getenv("SLURM_JOB_NODELIST"), *jid = getenv("SLURM_JOB_ID");
        if (!nl) rc = bad_usage("%s", "--slurm: SLURM_JOB_NODELIST is not set");
        else if (slurm_hosts(nl, &hs, &nh, (int)port)) rc = bad_usage("cannot read SLURM_JOB_NODELIST '%s'", nl);
        if (!rc && jid && !job_given) job_id = strtoll(jid, NULL, 10);
    }
    if (!rc && !nh) rc = bad_usage("%s", "no hosts: give HOST[:PORT]..., --hosts-file or --slurm");
    if (!rc && !out) rc = bad_usage("%s", "-o DIR is required");
    if (!rc && token_file) {
        static char tok[256];
        FILE *f = fopen(token_file, "re");
        if (!f || !fgets(tok, sizeof tok, f)) {
            fprintf(stderr, "hta capture: %s: %s\n", token_file, f ? "empty" : strerror(errno));
            rc = 1;
        }
        if (f) fclose(f);
        tok[strcspn(tok, "\r\n")] = 0;
        g_token = tok;
    }
    char mdir[4200];
    if (!rc) {
        snprintf(mdir, sizeof mdir, "%s/metrics", out);
        if ((mkdir(out, 0755) && errno != EEXIST) || (mkdir(mdir, 0755) && errno != EEXIST)) {
            fprintf(stderr, "hta capture: %s: %s\n", out, strerror(errno));
            rc = 1;
        }
    }
    if (rc) {
        free(hs);
        return rc;
    }
    /* the request: one common start time for every host */
    int64_t t_req = wall_ms(), start = t_req + delay;
    hta_sbuf rq = {0};
    hta_sb_printf(&rq, "{\"fn\":\"htaCapture\",\"job_id\":%" PRId64 ",\"process_limit\":%" PRId64, job_id, limit);
    if (iters > 0) hta_sb_printf(&rq, ",\"iterations\":%" PRId64, iters);
    else hta_sb_printf(&rq, ",\"duration_ms\":%" PRId64 ",\"start_time_ms\":%" PRId64, duration, start);
    if (warmup >= 0) hta_sb_printf(&rq, ",\"warmup_s\":%" PRId64, warmup);
    if (pids) {
        HTA_SB_LIT(&rq, ",\"pids\":[");
        for (const char *p = pids; *p;) {
            char *e;
            long v = strtol(p, &e, 10);
            if (e == p || v < 0) {
                hta_sb_free(&rq);
                free(hs);
                return bad_usage("--pids '%s': a list of process ids", pids);
            }
            hta_sb_printf(&rq, "%s%ld", p == pids ? "" : ",", v);
            p = *e == ',' ? e + 1 : e;
            if (*e && *e != ',') p = "";
        }
        HTA_SB_LIT(&rq, "]");
    }
    HTA_SB_LIT(&rq, "}");
    /* every host at once (64 threads): trigger, follow until every trace is settled, fetch; each call
     * ends by the deadline, so the whole command does however many hosts are silent */
    job j = {hs, nh, rq.p, out, mdir, t_req, (iters > 0 ? t_req : start) + timeout, max_bytes,
             PTHREAD_MUTEX_INITIALIZER};
    on_every_host(&j, trigger_host);
    size_t ntrig = 0;
    for (size_t k = 0; k < nh; k++) ntrig += hs[k].npids;
    fprintf(stderr, "hta capture: %zu processes on %zu hosts triggered; waiting for their traces\n", ntrig, nh);
    for (;;) {
        on_every_host(&j, follow_host);
        size_t open = 0;
        for (size_t k = 0; k < nh; k++) open += hs[k].capture[0] && !hs[k].error[0] && !hs[k].done;
        if (!open || wall_ms() >= j.deadline) break;
        usleep((useconds_t)left_ms(j.deadline, 300) * 1000 + 1000);
    }
    /* what arrived is fetched in as long again at most, after a last look at the hosts still open
     * (one whose trigger took the whole wait has not been asked yet) */
    j.deadline = wall_ms() + timeout;
    on_every_host(&j, follow_host);
    on_every_host(&j, fetch_host);
    hta_sb_free(&rq);
    int missing = 0, fetched = 0;
    printf("%-30s %8s  %-10s %12s  %s\n", "host", "pid", "state", "bytes", "file");
    for (size_t k = 0; k < nh; k++) {
        host *h = &hs[k];
        for (size_t q = 0; q < h->npids; q++) {
            pidst *p = &h->p[q];
            const char *st = p->state ? p->state : "requested";
            char path[4400] = "";
            if (p->fetched >= 0) snprintf(path, sizeof path, "%s/%s_%d.json", out, h->label, (int)p->pid);
            fetched += p->fetched >= 0;
            if (p->fetched < 0) {
                missing++;
                fprintf(stderr, "hta capture: no trace from %s pid %d (%s%s)\n", h->name, (int)p->pid,
                        p->why ? "failed: fetch: " : "",
                        p->why ? p->why
                        : !strncmp(st, "requested", 9) || !strncmp(st, "delivered", 9) ? "timed out" : st);
            }
            char state[16];
            snprintf(state, sizeof state, "%.*s", (int)strcspn(st, ":"), st);
            printf("%-30s %8d  %-10s %12lld  %s\n", h->name, (int)p->pid,
                   p->fetched >= 0 ? "fetched" : p->why ? "failed" : state,
                   (long long)(p->fetched >= 0 ? p->fetched : 0), path[0] ? path : "-");
            if (p->dup) {
                missing++;
                fprintf(stderr, "hta capture: no trace from %s pid %d (failed: the daemon listed pid %d for a second "
                        "trace, %s: one file per pid, not fetched)\n", h->name, (int)p->pid, (int)p->pid, p->dup);
                printf("%-30s %8d  %-10s %12lld  %s\n", h->name, (int)p->pid, "failed", 0LL, "-");
            }
        }
        if (h->error[0]) {
            missing++;
            fprintf(stderr, "hta capture: no trace from %s: %s\n", h->name, h->error);
        }
    }
    fflush(stdout);
    for (size_t k = 0; k < nh; k++) {
        for (size_t q = 0; q < hs[k].npids; q++) {
            free(hs[k].p[q].state);
            free(hs[k].p[q].file);
            free(hs[k].p[q].why);
            free(hs[k].p[q].dup);
        }
        free(hs[k].p);
    }
    free(hs);
    if (missing) fprintf(stderr, "hta capture: %d expected traces did not arrive\n", missing);
    if (report && !fetched) fprintf(stderr, "hta capture: no trace arrived: no report\n");
    if (report && fetched) {
        char *rargv[] = {"capture", (char *)out, NULL};
        cli_common c;
        int prc = cli_parse(2, rargv, "DIR", "", NULL, 1, 1, &c);
        if (prc >= 0) return prc;
        hta_ctx *ctx;
        if ((prc = cli_open(&c, out, &ctx))) return prc;
        hta_result res;
        hta_result_init(&res);
        hta_error err = {0};
        hta_status st = hta_report(ctx, NULL, &res, &err);
        hta_ctx_free(ctx);
        if (st) {
            hta_result_free(&res);
            return cli_fail("capture", &err);
        }
        prc = cli_emit(&c, &res);
        if (prc) return prc;
    }
    return missing ? 1 : 0;
}

HTA_CLI_COMMAND(70, "capture", "trace a running job on every host through htad; traces and metrics into DIR",
                cmd_capture, NULL)
