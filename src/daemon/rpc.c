/* htad's TCP requests (docs/capture.md, "Requests"): dynolog's JSON RPC, so that `dyno gputrace`
 * works against htad, and htad's own requests that `hta capture` uses to trigger a capture, follow it
 * and fetch its files.  One complete request (read by conn.c) in, its reply out: bytes to send and,
 * for a fetch, the stored file to stream after them.  Every request is checked before anything
 * changes, and every refusal says why. */
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

/* The reply so far: a framed JSON text (dynolog's int32 length first). */
static void reply_text(htad_reply *r, const char *s, size_t n) {
    int32_t len = (int32_t)n;
    hta_sb_add(&r->out, (const char *)&len, 4);
    hta_sb_add(&r->out, s, n);
}

static void reply_error(htad_reply *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reply_error(htad_reply *r, const char *fmt, ...) {
    char msg[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    hta_sbuf b = {0};
    HTA_SB_LIT(&b, "{\"status\":\"failed\",\"error\":");
    hta_sb_quote(&b, msg);
    HTA_SB_LIT(&b, "}");
    r->out.len = 0;
    if (!b.oom) reply_text(r, b.p, b.len);
    hta_sb_free(&b);
    r->refused = 1;
    pthread_mutex_lock(&mu);
    g_requests_refused_total++;
    pthread_mutex_unlock(&mu);
    if (!g_opt.quiet) htad_log("request refused: %s", msg);
}

void htad_rpc_refuse(htad_reply *r, const char *why) { reply_error(r, "%s", why); }

/* pids: an array of int32 (at most HTAD_MAX_TRACES); absent is allowed when !required */
static int get_pids(htad_reply *rp, const hta_jval *req, htad_request *r, int required) {
    const hta_jval *p = hta_json_get(req, "pids");
    if (!p) {
        if (required) reply_error(rp, "'pids' is required (an array of process ids; [0] or [] for all)");
        return !required;
    }
    if (p->type != HTA_JARR) {
        reply_error(rp, "'pids' must be an array of integers");
        return 0;
    }
    if (p->n > HTAD_MAX_TRACES) {
        reply_error(rp, "'pids' has %zu entries: at most %d", p->n, HTAD_MAX_TRACES);
        return 0;
    }
    for (size_t k = 0; k < p->n; k++) {
        if (p->v[k].type != HTA_JNUM || !p->v[k].is_int || p->v[k].i < 0 || p->v[k].i > INT32_MAX) {
            reply_error(rp, "'pids'[%zu] is not a process id", k);
            return 0;
        }
        r->pids[k] = (int32_t)p->v[k].i;
    }
    r->npids = p->n;
    return 1;
}

/* an integer member in [lo, hi], def when absent; 0 after replying an error */
static int get_int(htad_reply *rp, const hta_jval *req, const char *key, int64_t lo, int64_t hi, int64_t def, int64_t *out) {
    const hta_jval *v = hta_json_get(req, key);
    if (!v) {
        *out = def;
        return 1;
    }
    if (v->type != HTA_JNUM || !v->is_int || v->i < lo || v->i > hi) {
        reply_error(rp, "'%s' must be an integer in [%lld, %lld]", key, (long long)lo, (long long)hi);
        return 0;
    }
    *out = v->i;
    return 1;
}

static void trigger(htad_reply *rp, const hta_jval *req, int dyno) {
    htad_request r;
    memset(&r, 0, sizeof r);
    if (!get_int(rp, req, "job_id", INT64_MIN, INT64_MAX, 0, &r.job_id) ||
        !get_int(rp, req, "process_limit", 0, 1000000, 1000, &r.limit) || !get_pids(rp, req, &r, dyno))
        return;
    if (dyno) {
        r.config = hta_json_str(req, "config");
        if (!r.config) {
            reply_error(rp, "'config' is required (the Kineto config text)");
            return;
        }
    } else {
        hta_capture_opts *o = &r.copts;
        if (!get_int(rp, req, "duration_ms", 1, 3600000, 500, &o->duration_ms) ||
            !get_int(rp, req, "iterations", 0, 1000000, 0, &o->iterations) ||
            !get_int(rp, req, "start_time_ms", 0, INT64_MAX, 0, &o->start_time_ms) ||
            !get_int(rp, req, "warmup_s", -1, 3600, -1, &o->warmup_s))
            return;
    }
    hta_sbuf b = {0};
    hta_error err = {0};
    if (htad_trigger(&r, &b, &err)) reply_error(rp, "%s", err.msg);
    else if (b.oom) reply_error(rp, "out of memory");
    else reply_text(rp, b.p, b.len);
    hta_sb_free(&b);
}

/* The payload's header; the payload follows it (a file the connection streams, or bytes). */
static void payload_header(htad_reply *r, uint64_t size) {
    char h[80];
    int n = snprintf(h, sizeof h, "{\"status\":\"ok\",\"size\":%llu}", (unsigned long long)size);
    reply_text(r, h, (size_t)n);
}

static void fetch(htad_reply *r, const hta_jval *req) {
    const char *id = hta_json_str(req, "capture"), *name = hta_json_str(req, "name");
    if (!id || !name) {
        reply_error(r, "'capture' and 'name' are required");
        return;
    }
    /* both become one path component each in the store: nothing that could climb out of it */
    if (!hta_safe_name(id) || !hta_safe_name(name)) {
        reply_error(r, "'%s/%s': a capture id and a file name are plain names (letters, digits, '._-')", id,
                    name);
        return;
    }
    snprintf(r->key, sizeof r->key, "%s/%s", id, name);
    if (htad_store_is_s3()) return; /* a worker gets the object first (htad_rpc_fetch_open) */
    htad_rpc_fetch_open(r);
}

void htad_rpc_fetch_open(htad_reply *r) {
    hta_error err = {0};
    uint64_t size = 0;
    if (htad_store_open_read(r->key, &r->file_fd, &size, &err)) {
        r->key[0] = 0;
        reply_error(r, "%s", err.msg);
        return;
    }
    htad_store_fetched(r->key); /* its file is open: retention may remove the capture from now on */
    r->key[0] = 0;
    r->file_size = size;
    payload_header(r, size);
}

static void metrics(htad_reply *r, const hta_jval *req) {
    int64_t since, until;
    if (!get_int(r, req, "since_ms", 0, INT64_MAX, 0, &since) ||
        !get_int(r, req, "until_ms", 0, INT64_MAX, INT64_MAX, &until))
        return;
    hta_sbuf b = {0};
    htad_metrics_jsonl(since, until, &b);
    if (b.oom) {
        reply_error(r, "out of memory");
    } else {
        payload_header(r, b.len);
        hta_sb_add(&r->out, b.p ? b.p : "", b.len);
    }
    hta_sb_free(&b);
}

static void status(htad_reply *r, const hta_jval *req) {
    const char *id = hta_json_str(req, "capture");
    hta_sbuf b = {0};
    pthread_mutex_lock(&mu);
    const htad_capture *c = id ? htad_capture_find(id) : NULL;
    if (c) htad_capture_json(c, &b);
    pthread_mutex_unlock(&mu);
    if (!id) reply_error(r, "'capture' is required");
    else if (!c) reply_error(r, "no capture '%s' in memory", id);
    else if (b.oom) reply_error(r, "out of memory");
    else reply_text(r, b.p, b.len);
    hta_sb_free(&b);
}

void htad_rpc_handle(const char *txt, size_t len, htad_reply *r) {
    hta_error err = {0};
    pthread_mutex_lock(&mu);
    g_requests_total++;
    pthread_mutex_unlock(&mu);
    hta_jval *req = NULL;
    if (hta_json_parse(txt, len, &req, &err)) {
        reply_error(r, "malformed request: %s", err.msg);
        return;
    }
    /* the token, where one is needed, was checked in the request's first bytes (hta_rpc_head) */
    const char *fn = hta_json_str(req, "fn");
    if (!fn) reply_error(r, "the request is not an object with a string 'fn'");
    else if (!strcmp(fn, "getStatus")) reply_text(r, "{\"status\":1}", 12);
    else if (!strcmp(fn, "getVersion")) reply_text(r, "{\"version\":\"htad 1.0\"}", 22);
    else if (!strcmp(fn, "setKinetOnDemandRequest")) trigger(r, req, 1);
    else if (!strcmp(fn, "htaCapture")) trigger(r, req, 0);
    else if (!strcmp(fn, "dcgmProfPause") || !strcmp(fn, "dcgmProfResume")) reply_text(r, "{\"status\":true}", 15);
    else if (!strcmp(fn, "htaStatus")) status(r, req);
    else if (!strcmp(fn, "htaFetch")) fetch(r, req);
    else if (!strcmp(fn, "htaMetrics")) metrics(r, req);
    else reply_error(r, "unknown fn '%s'", fn);
    hta_json_free(req);
}
