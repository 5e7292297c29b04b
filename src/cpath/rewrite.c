/* Streaming a trace file into a derived one: top-level keys in file order,
 * each event passed through a callback, extra events appended at the end of
 * traceEvents (overlay flows).  Memory stays bounded by one event. */
#include <string.h>

#include "cpath/internal.h"

static int on_meta(void *ctx, const char *key, size_t klen, const char *json, size_t jlen) {
    cp_rw *rw = ctx;
    if (rw->state == 1) {
        if (rw->tail && rw->tail(rw)) return 1;
        if (cp_rw_put(rw, "\n]", 2)) return 1;
        rw->state = 2;
    }
    if (rw->nkeys++ && cp_rw_put(rw, ",\n", 2)) return 1;
    return cp_rw_put(rw, "\"", 1) || cp_rw_put(rw, key, klen) || cp_rw_put(rw, "\": ", 3) ||
           cp_rw_put(rw, json, jlen);
}

static int open_events(cp_rw *rw) {
    if (rw->state) return 0;
    if (rw->nkeys++ && cp_rw_put(rw, ",\n", 2)) return 1;
    rw->state = 1;
    return cp_rw_put(rw, "\"traceEvents\": [", 16);
}

static int on_event(void *ctx, uint32_t index, const char *json, size_t len) {
    cp_rw *rw = ctx;
    if (open_events(rw)) return 1;
    return rw->event(rw, index, json, len);
}

int cp_rw_put(cp_rw *rw, const char *s, size_t n) {
    if (rw->st) return 1;
    rw->st = hta_trace_out_write(rw->o, s, n, rw->err);
    return rw->st != HTA_OK;
}

int cp_rw_sep(cp_rw *rw) {
    int first = rw->nevents++ == 0;
    return first ? cp_rw_put(rw, "\n", 1) : cp_rw_put(rw, ",\n", 2);
}

hta_status cp_rewrite(cp_rw *rw, const char *in, const char *out, int gz, hta_error *err) {
    rw->err = err;
    rw->st = HTA_OK;
    hta_status st = hta_trace_out_open(out, gz, &rw->o, err);
    if (st) return st;
    hta_raw_callbacks cb = {on_meta, on_event, rw};
    if (cp_rw_put(rw, "{\n", 2)) goto fail;
    st = hta_raw_scan(in, &cb, err);
    if (st) {
        if (rw->st) st = rw->st;
        goto fail;
    }
    if (open_events(rw)) goto fail;
    if (rw->state == 1) {
        if (rw->tail && rw->tail(rw)) goto fail;
        if (cp_rw_put(rw, "\n]", 2)) goto fail;
    }
    if (cp_rw_put(rw, "\n}\n", 3)) goto fail;
    return hta_trace_out_close(rw->o, 1, err);
fail:
    if (!st) st = rw->st ? rw->st : hta_oom(err);
    hta_error e2;
    hta_trace_out_close(rw->o, 0, &e2);
    return st;
}
