/* The one writer of derived traces (hta/rawjson.h): the original file
 * streamed again and written back member by member and event by event, so
 * nothing is lost or reformatted, with the caller's hooks saying what
 * changes.  Output is buffered (one write per MiB, not per event) and goes
 * through hta_trace_out, which compresses and renames into place. */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hta/rawjson.h"

#define OUT_BUF (1u << 20)
#define MAX_EDITS 16

struct hta_rawout {
    hta_trace_out *o;
    char *buf;
    size_t n, cap;
    uint64_t bytes, nev;
    hta_error *err;
    hta_status st; /* the first failure; everything after it is a no-op */
    const hta_rawout_hooks *h;
    const char *in; /* the input being scanned */
    /* hta_rawout_derive's framing: traceEvents 0 not opened, 1 open, 2 closed */
    int state, nkeys;
};

int hta_raw_is_gzip(const char *path) {
    /* O_NONBLOCK: a FIFO at path must not block the open (the loader refuses it anyway) */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) return 0;
    struct stat sb;
    unsigned char m[2] = {0};
    int gz = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && pread(fd, m, 2, 0) == 2 && m[0] == 0x1f && m[1] == 0x8b;
    close(fd);
    return gz;
}

static int flush(hta_rawout *w) {
    if (w->st) return -1;
    if (w->n && (w->st = hta_trace_out_write(w->o, w->buf, w->n, w->err))) return -1;
    w->n = 0;
    return 0;
}

char *hta_rawout_room(hta_rawout *w, size_t need) {
    if (w->st) return NULL;
    if (w->n + need > w->cap) {
        if (flush(w)) return NULL;
        if (need > w->cap) {
            char *b = realloc(w->buf, need);
            if (!b) {
                w->st = hta_oom(w->err);
                return NULL;
            }
            w->buf = b;
            w->cap = need;
        }
    }
    return w->buf + w->n;
}

void hta_rawout_wrote(hta_rawout *w, size_t n) {
    w->n += n;
    w->bytes += n;
}

int hta_rawout_put(hta_rawout *w, const void *s, size_t n) {
    if (n > w->cap && !flush(w)) { /* big pieces (a huge event) go straight out */
        if ((w->st = hta_trace_out_write(w->o, s, n, w->err))) return -1;
        w->bytes += n;
        return 0;
    }
    char *d = hta_rawout_room(w, n);
    if (!d) return -1;
    memcpy(d, s, n);
    hta_rawout_wrote(w, n);
    return 0;
}

int hta_rawout_puts(hta_rawout *w, const char *s) { return hta_rawout_put(w, s, strlen(s)); }

int hta_rawout_sep(hta_rawout *w) { return w->nev++ ? hta_rawout_put(w, ",\n", 2) : hta_rawout_put(w, "\n", 1); }

int hta_rawout_event(hta_rawout *w, const char *json, size_t len) {
    return hta_rawout_sep(w) || hta_rawout_put(w, json, len);
}

int hta_rawout_edited(hta_rawout *w, const char *json, size_t len, const hta_raw_edit *e, size_t n) {
    if (n > MAX_EDITS) return hta_rawout_fail(w, HTA_EINVAL, "more than %d edits of one event", MAX_EDITS);
    size_t ord[MAX_EDITS]; /* by position, stable */
    for (size_t i = 0; i < n; i++) {
        size_t j = i;
        for (; j > 0 && e[ord[j - 1]].at > e[i].at; j--) ord[j] = ord[j - 1];
        ord[j] = i;
    }
    if (hta_rawout_sep(w)) return -1;
    const char *p = json;
    for (size_t i = 0; i < n; i++) {
        const hta_raw_edit *x = &e[ord[i]];
        if (hta_rawout_put(w, p, (size_t)(x->at - p)) || hta_rawout_put(w, x->text, x->len)) return -1;
        p = x->end;
    }
    return hta_rawout_put(w, p, (size_t)(json + len - p));
}

#define INSERT(at, s) ((hta_raw_edit){(at), (at), (s), sizeof(s) - 1})

int hta_rawout_add_arg(hta_rawout *w, const hta_raw_obj *o, const char *json, size_t len, const char *member,
                       size_t mlen) {
    const hta_raw_member *a = hta_raw_obj_get(o, "args");
    hta_raw_edit e[3];
    size_t n = 0;
    if (a && a->val[0] == '{') {
        const char *close = a->val + a->vlen - 1, *q = a->val + 1;
        while (q < close && (*q == ' ' || *q == '\n' || *q == '\r' || *q == '\t')) q++;
        if (q < close) e[n++] = INSERT(close, ", ");
        e[n++] = (hta_raw_edit){close, close, member, mlen};
        return hta_rawout_edited(w, json, len, e, n);
    }
    /* no args object: a new one, after the members there are (a non-object
     * args stays; the new one is the last, the one read) */
    if (o->n) e[n++] = INSERT(o->close, ", \"args\": {");
    else e[n++] = INSERT(o->close, "\"args\": {");
    e[n++] = (hta_raw_edit){o->close, o->close, member, mlen};
    e[n++] = INSERT(o->close, "}");
    return hta_rawout_edited(w, json, len, e, n);
}

int hta_rawout_fail(hta_rawout *w, hta_status code, const char *fmt, ...) {
    if (w->st) return -1;
    va_list ap;
    va_start(ap, fmt);
    w->st = hta_vfail(w->err, code, fmt, ap);
    va_end(ap);
    return -1;
}

int hta_rawout_oom(hta_rawout *w) {
    if (!w->st) w->st = hta_oom(w->err);
    return -1;
}

uint64_t hta_rawout_count(const hta_rawout *w) { return w->nev; }
uint64_t hta_rawout_bytes(const hta_rawout *w) { return w->bytes; }

hta_status hta_rawout_open(const char *out, int gz, hta_rawout **wp, hta_error *err) {
    *wp = NULL;
    hta_rawout *w = calloc(1, sizeof *w);
    if (w) w->buf = malloc(OUT_BUF);
    if (!w || !w->buf) {
        free(w);
        return hta_oom(err);
    }
    w->cap = OUT_BUF;
    w->err = err;
    hta_status st = hta_trace_out_open(out, gz, &w->o, err);
    if (st) {
        free(w->buf);
        free(w);
        return st;
    }
    *wp = w;
    return HTA_OK;
}

hta_status hta_rawout_close(hta_rawout *w, int commit) {
    if (!w) return HTA_OK;
    if (commit) flush(w);
    commit = commit && !w->st;
    hta_status st = hta_trace_out_close(w->o, commit, commit ? w->err : NULL);
    if (!st) st = w->st;
    free(w->buf);
    free(w);
    return st;
}

/* ---- the scan's callbacks ---- */

/* A hook's non-zero answer without a recorded failure still stops the
 * writer with a message. */
static int stopped(hta_rawout *w, int rc) {
    if (rc && !w->st) w->st = hta_fail(w->err, HTA_EINVAL, "stopped by a derived-trace hook");
    return rc;
}

static int open_events(hta_rawout *w) {
    if (w->state) return 0;
    w->state = 1;
    return hta_rawout_puts(w, w->nkeys++ ? ",\n\"traceEvents\": [" : "\"traceEvents\": [");
}

/* traceEvents is closed with its tail when the next top-level member or the
 * end of the file comes. */
static int close_events(hta_rawout *w) {
    w->state = 2;
    if (w->h->tail && stopped(w, w->h->tail(w->h->ctx, w))) return -1;
    return hta_rawout_put(w, "\n]", 2);
}

static int on_meta(void *ctx, const char *key, size_t klen, const char *json, size_t jlen) {
    hta_rawout *w = ctx;
    /* A merged trace (hta merge) loads as several ranks that share its one file (docs/loading.md), and the
     * hooks of a derived trace speak of one of them, with its original pids: a rewrite of the file would
     * carry every rank's events under the merged pids, and each rank's output would take the same name.
     * Refused, before anything is renamed into place (the writer's callers check hta_rank.merged first;
     * this is the guard for every caller).  htaMerge comes last, so the scan has run by now. */
    if (klen == 8 && !memcmp(key, "htaMerge", 8))
        return hta_rawout_fail(w, HTA_EINVAL,
                               "%s: a merged trace (hta merge): derived traces are written from the per-rank "
                               "files it was merged from, not from the merged file",
                               w->in);
    if (w->h->meta && stopped(w, w->h->meta(w->h->ctx, w, key, klen, json, jlen))) return -1;
    return 0;
}

static int derive_meta(void *ctx, const char *key, size_t klen, const char *json, size_t jlen) {
    hta_rawout *w = ctx;
    if (on_meta(w, key, klen, json, jlen) || (w->state == 1 && close_events(w))) return -1;
    return hta_rawout_puts(w, w->nkeys++ ? ",\n\"" : "\"") || hta_rawout_put(w, key, klen) ||
           hta_rawout_put(w, "\": ", 3) || hta_rawout_put(w, json, jlen);
}

static int on_event(void *ctx, uint32_t index, const char *json, size_t len) {
    hta_rawout *w = ctx;
    if (w->h->event) return stopped(w, w->h->event(w->h->ctx, w, index, json, len));
    return hta_rawout_event(w, json, len);
}

/* (The scan refuses a second traceEvents array, so events never come after
 * close_events.) */
static int derive_event(void *ctx, uint32_t index, const char *json, size_t len) {
    return open_events(ctx) || on_event(ctx, index, json, len);
}

static hta_status scan(hta_rawout *w, const char *in, const hta_rawout_hooks *hooks, int derive) {
    static const hta_rawout_hooks none = {0};
    w->h = hooks ? hooks : &none;
    w->in = in;
    /* the writer's own guard (the CLI checks its paths before any work): reading a file while its
     * replacement is written is harmless, but the result would overwrite the trace it came from */
    if (hta_trace_out_is(w->o, in)) {
        hta_rawout_fail(w, HTA_EINVAL, "%s is the input %s: refusing to write over it", hta_trace_out_path(w->o),
                        in);
        return w->st;
    }
    hta_raw_callbacks cb = {.meta = derive ? derive_meta : on_meta, .event = derive ? derive_event : on_event,
                            .ctx = w};
    hta_error e;
    hta_status st = hta_raw_scan(in, &cb, &e);
    if (w->st) return w->st; /* ours, not the scan's "stopped by caller" */
    if (st) {
        if (w->err) *w->err = e;
        w->st = st;
    }
    return st;
}

hta_status hta_rawout_events(hta_rawout *w, const char *in, const hta_rawout_hooks *hooks) {
    return scan(w, in, hooks, 0);
}

hta_status hta_rawout_derive(const char *in, const char *out, int gz, const hta_rawout_hooks *hooks,
                             hta_error *err) {
    hta_rawout *w;
    HTA_TRY(hta_rawout_open(out, gz, &w, err));
    if (!hta_rawout_put(w, "{\n", 2) && !scan(w, in, hooks, 1) && !open_events(w) &&
        (w->state != 1 || !close_events(w)))
        hta_rawout_put(w, "\n}\n", 3);
    return hta_rawout_close(w, 1);
}
