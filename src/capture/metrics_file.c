/* The metrics file of a capture (docs/capture.md, "Metrics file"): JSON lines, one host sample per
 * line with its GPUs, written by htad from its window of samples and read by the report
 * (src/report/report_metrics.c).  A value that could not be read is left out of the line. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hta/capture.h"

static void num(hta_sbuf *b, const char *key, double v) {
    if (!isnan(v)) hta_sb_printf(b, ",\"%s\":%.4f", key, v);
}

static void inum(hta_sbuf *b, const char *key, int64_t v) {
    if (v >= 0) hta_sb_printf(b, ",\"%s\":%lld", key, (long long)v);
}

void hta_metrics_line(hta_sbuf *b, const char *host, const hta_metrics_sample *s) {
    hta_sb_printf(b, "{\"t_ms\":%lld,\"host\":", (long long)s->t_ms);
    hta_sb_quote(b, host);
    num(b, "cpu_busy", s->cpu_busy);
    num(b, "cpu_iowait", s->cpu_iowait);
    inum(b, "mem_used_bytes", s->mem_used);
    inum(b, "mem_total_bytes", s->mem_total);
    HTA_SB_LIT(b, ",\"gpus\":[");
    for (int g = 0; g < s->ngpus; g++) {
        const hta_gpu_sample *x = &s->gpus[g];
        hta_sb_printf(b, "%s{\"gpu\":%d", g ? "," : "", (int)x->gpu);
        num(b, "util", x->util);
        inum(b, "mem_used_bytes", x->mem_used);
        inum(b, "mem_total_bytes", x->mem_total);
        num(b, "power_w", x->power_w);
        inum(b, "sm_clock_mhz", x->sm_clock_mhz);
        inum(b, "mem_clock_mhz", x->mem_clock_mhz);
        num(b, "sm_active", x->sm_active);
        num(b, "tensor_active", x->tensor_active);
        HTA_SB_LIT(b, "}");
    }
    HTA_SB_LIT(b, "]}\n");
}

static double fget(const hta_jval *o, const char *k) {
    const hta_jval *v = hta_json_get(o, k);
    return v && v->type == HTA_JNUM ? v->d : NAN;
}

static int64_t iget(const hta_jval *o, const char *k) {
    const hta_jval *v = hta_json_get(o, k);
    return v && v->type == HTA_JNUM ? (int64_t)v->d : -1;
}

static int parse_line(const hta_jval *o, hta_metrics_sample *s) {
    if (o->type != HTA_JOBJ || !hta_json_get(o, "t_ms")) return -1;
    memset(s, 0, sizeof *s);
    s->t_ms = iget(o, "t_ms");
    s->cpu_busy = fget(o, "cpu_busy");
    s->cpu_iowait = fget(o, "cpu_iowait");
    s->mem_used = iget(o, "mem_used_bytes");
    s->mem_total = iget(o, "mem_total_bytes");
    const hta_jval *g = hta_json_get(o, "gpus");
    for (size_t k = 0; g && g->type == HTA_JARR && k < g->n && s->ngpus < HTA_METRICS_MAX_GPUS; k++) {
        const hta_jval *x = &g->v[k];
        hta_gpu_sample *y = &s->gpus[s->ngpus++];
        y->gpu = (int32_t)iget(x, "gpu");
        y->util = fget(x, "util");
        y->mem_used = iget(x, "mem_used_bytes");
        y->mem_total = iget(x, "mem_total_bytes");
        y->power_w = fget(x, "power_w");
        y->sm_clock_mhz = iget(x, "sm_clock_mhz");
        y->mem_clock_mhz = iget(x, "mem_clock_mhz");
        y->sm_active = fget(x, "sm_active");
        y->tensor_active = fget(x, "tensor_active");
    }
    return 0;
}

hta_status hta_metrics_read(const char *path, hta_metrics_sample **out, size_t *n, char *host, size_t cap,
                            hta_error *err) {
    *out = NULL;
    *n = 0;
    if (cap) host[0] = 0;
    FILE *f = fopen(path, "re");
    if (!f) return hta_fail(err, HTA_EIO, "%s: %s", path, strerror(errno));
    char *line = NULL;
    size_t lcap = 0, have = 0;
    ssize_t len;
    hta_metrics_sample *v = NULL;
    hta_status st = HTA_OK;
    while ((len = getline(&line, &lcap, f)) > 0) {
        hta_jval *o;
        if (hta_json_parse(line, (size_t)len, &o, NULL)) continue; /* a torn last line, or a stray one */
        if (*n == have) {
            have = have ? have * 2 : 64;
            hta_metrics_sample *nv = realloc(v, have * sizeof *nv);
            if (!nv) {
                hta_json_free(o);
                st = hta_oom(err);
                break;
            }
            v = nv;
        }
        if (!parse_line(o, &v[*n])) {
            const char *h = hta_json_str(o, "host");
            if (h && cap && !host[0]) snprintf(host, cap, "%s", h);
            (*n)++;
        }
        hta_json_free(o);
    }
    free(line);
    fclose(f);
    if (st) {
        free(v);
        *n = 0;
        return st;
    }
    *out = v;
    return HTA_OK;
}
