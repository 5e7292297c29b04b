/* libFuzzer target: any bytes as what htad receives from the network (src/capture/): a TCP request's JSON
 * (hta_json_parse and its accessors, then written back and parsed again: the same tree), a datagram
 * (hta_ipc_parse, hta_ipc_parse_req), a config text (hta_config_log_file, then the path rules and
 * libkineto's pid file name).  Every refusal must say why; nothing may read out of bounds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hta/capture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void write_json(hta_sbuf *b, const hta_jval *v) {
    switch (v->type) {
    case HTA_JNULL: HTA_SB_LIT(b, "null"); break;
    case HTA_JBOOL: hta_sb_printf(b, "%s", v->b ? "true" : "false"); break;
    case HTA_JNUM:
        if (v->is_int) hta_sb_printf(b, "%lld", (long long)v->i);
        else hta_sb_printf(b, "%.17g", v->d);
        break;
    case HTA_JSTR: hta_sb_quote(b, v->s); break;
    case HTA_JARR:
    case HTA_JOBJ:
        hta_sb_add(b, v->type == HTA_JARR ? "[" : "{", 1);
        for (size_t k = 0; k < v->n; k++) {
            if (k) HTA_SB_LIT(b, ",");
            if (v->type == HTA_JOBJ) {
                hta_sb_quote(b, v->k[k]);
                HTA_SB_LIT(b, ":");
            }
            write_json(b, &v->v[k]);
        }
        hta_sb_add(b, v->type == HTA_JARR ? "]" : "}", 1);
        break;
    }
}

static int same(const hta_jval *a, const hta_jval *b) {
    if (a->type != b->type || a->n != b->n) return 0;
    if (a->type == HTA_JBOOL) return a->b == b->b;
    if (a->type == HTA_JNUM) return a->is_int ? b->is_int && a->i == b->i : 1; /* doubles: inf/nan text */
    if (a->type == HTA_JSTR) return !strcmp(a->s, b->s);
    for (size_t k = 0; k < a->n; k++)
        if ((a->type == HTA_JOBJ && strcmp(a->k[k], b->k[k])) || !same(&a->v[k], &b->v[k])) return 0;
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    hta_error err = {0};
    hta_jval *v = NULL;
    if (hta_json_parse((const char *)data, size, &v, &err) == HTA_OK) {
        hta_json_str(v, "fn");
        hta_json_int(v, "pids", 0);
        hta_sbuf b = {0};
        write_json(&b, v);
        hta_jval *w = NULL;
        if (!b.oom && hta_json_parse(b.p, b.len, &w, &err) != HTA_OK) abort(); /* what we write, we read */
        if (w && !same(v, w)) abort();
        hta_json_free(w);
        hta_sb_free(&b);
        hta_json_free(v);
    } else if (!err.msg[0]) {
        abort();
    }
    hta_ipc_msg m;
    err.msg[0] = 0;
    if (hta_ipc_parse(data, size, &m, &err) == HTA_OK) {
        if (m.size + HTA_IPC_HEADER != size || m.type[32]) abort();
        hta_ipc_req r;
        if (hta_ipc_parse_req(&m, &r, &err) == HTA_OK && (r.npids <= 0 || r.npids > HTA_IPC_MAX_PIDS)) abort();
    } else if (!err.msg[0]) {
        abort();
    }
    char lf[512], path[600];
    if (hta_config_log_file((const char *)data, size, lf, sizeof lf)) {
        if (strlen(lf) >= sizeof lf) abort();
        if (hta_path_confined(lf, "/tmp/htad", &err) == HTA_OK &&
            (strncmp(lf, "/tmp/htad/", 10) || strstr(lf, "..") || strchr(lf + 10, '/')))
            abort();
        hta_kineto_trace_path(lf, 12345, path, sizeof path);
    }
    return 0;
}
