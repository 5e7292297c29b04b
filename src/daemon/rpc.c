/* htad's TCP requests (docs/capture.md, "Requests"): dynolog's JSON RPC, so that `dyno gputrace`
 * works against htad, and htad's own requests that `hta capture` uses to trigger a capture, follow it
 * and fetch its files.  One request per connection, on its own thread; every request is bounded
 * (HTA_RPC_MAX_REQUEST) and checked before anything changes, and every refusal says why. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon/htad.h"

#define IO_TIMEOUT_MS 10000

static void reply_text(int fd, const char *s, size_t n) {
    hta_error err;
    hta_rpc_write(fd, s, n, IO_TIMEOUT_MS, &err);
}

static void reply_error(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reply_error(int fd, const char *fmt, ...) {
    char msg[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    hta_sbuf b = {0};
    HTA_SB_LIT(&b, "{\"status\":\"failed\",\"error\":");
    hta_sb_quote(&b, msg);
    HTA_SB_LIT(&b, "}");
    if (!b.oom) reply_text(fd, b.p, b.len);
    hta_sb_free(&b);
    pthread_mutex_lock(&mu);
    g_requests_refused_total++;
    pthread_mutex_unlock(&mu);
    if (!g_opt.quiet) htad_log("request refused: %s", msg);
}

/* pids: an array of int32 (at most HTAD_MAX_TRACES); absent is allowed when !required */
static int get_pids(int fd, const hta_jval *req, htad_request *r, int required) {
    const hta_jval *p = hta_json_get(req, "pids");
    if (!p) {
        if (required) reply_error(fd, "'pids' is required (an array of process ids; [0] or [] for all)");
        return !required;
    }
    if (p->type != HTA_JARR) {
        reply_error(fd, "'pids' must be an array of integers");
        return 0;
    }
    if (p->n > HTAD_MAX_TRACES) {
        reply_error(fd, "'pids' has %zu entries: at most %d", p->n, HTAD_MAX_TRACES);
        return 0;
    }
    for (size_t k = 0; k < p->n; k++) {
        if (p->v[k].type != HTA_JNUM || !p->v[k].is_int || p->v[k].i < 0 || p->v[k].i > INT32_MAX) {
            reply_error(fd, "'pids'[%zu] is not a process id", k);
            return 0;
        }
        r->pids[k] = (int32_t)p->v[k].i;
    }
    r->npids = p->n;
    return 1;
}

/* an integer member in [lo, hi], def when absent; 0 after replying an error */
static int get_int(int fd, const hta_jval *req, const char *key, int64_t lo, int64_t hi, int64_t def, int64_t *out) {
    const hta_jval *v = hta_json_get(req, key);
    if (!v) {
        *out = def;
        return 1;
    }
    if (v->type != HTA_JNUM || !v->is_int || v->i < lo || v->i > hi) {
        reply_error(fd, "'%s' must be an integer in [%lld, %lld]", key, (long long)lo, (long long)hi);
        return 0;
    }
    *out = v->i;
    return 1;
}

static void trigger(int fd, const hta_jval *req, int dyno) {
    htad_request r;
    memset(&r, 0, sizeof r);
    if (!get_int(fd, req, "job_id", INT64_MIN, INT64_MAX, 0, &r.job_id) ||
        !get_int(fd, req, "process_limit", 0, 1000000, 1000, &r.limit) || !get_pids(fd, req, &r, dyno))
        return;
    if (dyno) {
        r.config = hta_json_str(req, "config");
        if (!r.config) {
            reply_error(fd, "'config' is required (the Kineto config text)");
            return;
        }
    } else {
        hta_capture_opts *o = &r.copts;
        if (!get_int(fd, req, "duration_ms", 1, 3600000, 500, &o->duration_ms) ||
            !get_int(fd, req, "iterations", 0, 1000000, 0, &o->iterations) ||
            !get_int(fd, req, "start_time_ms", 0, INT64_MAX, 0, &o->start_time_ms) ||
            !get_int(fd, req, "warmup_s", -1, 3600, -1, &o->warmup_s))
            return;
    }
    hta_sbuf b = {0};
    hta_error err = {0};
    if (htad_trigger(&r, &b, &err)) reply_error(fd, "%s", err.msg);
    else if (b.oom) reply_error(fd, "out of memory");
    else reply_text(fd, b.p, b.len);
    hta_sb_free(&b);
}

typedef struct fetch_ctx {
    int fd;
    int header_sent; /* after the header, an error can only end the connection */
} fetch_ctx;

static hta_status send_header(void *ctx, uint64_t size, hta_error *err) {
    ((fetch_ctx *)ctx)->header_sent = 1;
    char h[80];
    int n = snprintf(h, sizeof h, "{\"status\":\"ok\",\"size\":%llu}", (unsigned long long)size);
    return hta_rpc_write(((fetch_ctx *)ctx)->fd, h, (size_t)n, IO_TIMEOUT_MS, err);
}

static hta_status send_bytes(void *ctx, const void *data, size_t n, hta_error *err) {
    int fd = ((fetch_ctx *)ctx)->fd;
    const char *p = data;
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0) return hta_fail(err, HTA_EIO, "sending: %s", strerror(errno));
        p += w;
        n -= (size_t)w;
    }
    return HTA_OK;
}

static void fetch(int fd, const hta_jval *req) {
    const char *id = hta_json_str(req, "capture"), *name = hta_json_str(req, "name");
    if (!id || !name) {
        reply_error(fd, "'capture' and 'name' are required");
        return;
    }
    /* both become one path component each in the store: nothing that could climb out of it */
    if (!hta_safe_name(id) || !hta_safe_name(name)) {
        reply_error(fd, "'%s/%s': a capture id and a file name are plain names (letters, digits, '._-')",
                    id, name);
        return;
    }
    char key[600];
    snprintf(key, sizeof key, "%s/%s", id, name);
    fetch_ctx fc = {fd, 0};
    hta_error err = {0};
    if (htad_store_get(key, send_header, send_bytes, &fc, &err)) {
        if (!fc.header_sent) reply_error(fd, "%s", err.msg);
        else htad_log("fetch %s: %s", key, err.msg);
    }
}

static void metrics(int fd, const hta_jval *req) {
    int64_t since, until;
    if (!get_int(fd, req, "since_ms", 0, INT64_MAX, 0, &since) ||
        !get_int(fd, req, "until_ms", 0, INT64_MAX, INT64_MAX, &until))
        return;
    hta_sbuf b = {0};
    htad_metrics_jsonl(since, until, &b);
    if (b.oom) {
        reply_error(fd, "out of memory");
    } else {
        fetch_ctx fc = {fd, 0};
        hta_error err;
        if (!send_header(&fc, b.len, &err) && b.len) send_bytes(&fc, b.p, b.len, &err);
    }
    hta_sb_free(&b);
}

/* constant time: the token is not guessed byte by byte from the reply's timing */
static int token_ok(const char *t) {
    if (!t || !g_opt.token[0]) return 0;
    size_t a = strlen(t), b = strlen(g_opt.token);
    unsigned char d = a != b;
    for (size_t k = 0; k < b; k++) d |= (unsigned char)(g_opt.token[k] ^ (k < a ? t[k] : 0));
    return d == 0;
}

void htad_serve_rpc(int fd, int trusted) {
    char *txt = NULL;
    size_t len = 0;
    hta_error err = {0};
    pthread_mutex_lock(&mu);
    g_requests_total++;
    pthread_mutex_unlock(&mu);
    if (hta_rpc_read(fd, HTA_RPC_MAX_REQUEST, IO_TIMEOUT_MS, &txt, &len, &err)) {
        reply_error(fd, "%s", err.msg);
        return;
    }
    hta_jval *req = NULL;
    if (hta_json_parse(txt, len, &req, &err)) {
        reply_error(fd, "malformed request: %s", err.msg);
        free(txt);
        return;
    }
    free(txt);
    const char *fn = hta_json_str(req, "fn");
    if (!fn) reply_error(fd, "the request is not an object with a string 'fn'");
    else if (!trusted && !token_ok(hta_json_str(req, "token")))
        reply_error(fd, "a request from another host needs the daemon's token ('token')");
    else if (!strcmp(fn, "getStatus")) reply_text(fd, "{\"status\":1}", 12);
    else if (!strcmp(fn, "getVersion")) reply_text(fd, "{\"version\":\"htad 1.0\"}", 22);
    else if (!strcmp(fn, "setKinetOnDemandRequest")) trigger(fd, req, 1);
    else if (!strcmp(fn, "htaCapture")) trigger(fd, req, 0);
    else if (!strcmp(fn, "dcgmProfPause") || !strcmp(fn, "dcgmProfResume")) reply_text(fd, "{\"status\":true}", 15);
    else if (!strcmp(fn, "htaStatus")) {
        const char *id = hta_json_str(req, "capture");
        hta_sbuf b = {0};
        pthread_mutex_lock(&mu);
        const htad_capture *c = id ? htad_capture_find(id) : NULL;
        if (c) htad_capture_json(c, &b);
        pthread_mutex_unlock(&mu);
        if (!id) reply_error(fd, "'capture' is required");
        else if (!c) reply_error(fd, "no capture '%s' in memory", id);
        else reply_text(fd, b.p, b.len);
        hta_sb_free(&b);
    } else if (!strcmp(fn, "htaFetch")) fetch(fd, req);
    else if (!strcmp(fn, "htaMetrics")) metrics(fd, req);
    else reply_error(fd, "unknown fn '%s'", fn);
    hta_json_free(req);
}
