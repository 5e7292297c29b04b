/* Derived trace files: written to a temporary name and renamed into place
 * only when complete, so a failure never leaves a half-written trace. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "hta/rawtrace.h"

struct hta_trace_out {
    char *path, *tmp;
    FILE *f;
    gzFile gz;
};

hta_status hta_trace_out_open(const char *path, int gz, hta_trace_out **out, hta_error *err) {
    *out = NULL;
    hta_trace_out *o = calloc(1, sizeof *o);
    if (!o) return hta_fail(err, HTA_ENOMEM, "out of memory");
    size_t l = strlen(path);
    o->path = strdup(path);
    o->tmp = malloc(l + 16);
    if (!o->path || !o->tmp) {
        free(o->path);
        free(o->tmp);
        free(o);
        return hta_fail(err, HTA_ENOMEM, "out of memory");
    }
    snprintf(o->tmp, l + 16, "%s.tmp%d", path, (int)getpid() % 100000);
    if (gz) o->gz = gzopen(o->tmp, "wb1");
    else o->f = fopen(o->tmp, "wb");
    if (!o->gz && !o->f) {
        hta_status st = hta_fail(err, HTA_EIO, "%s: cannot create: %s", o->tmp, strerror(errno));
        free(o->path);
        free(o->tmp);
        free(o);
        return st;
    }
    if (o->gz) gzbuffer(o->gz, 1 << 18);
    *out = o;
    return HTA_OK;
}

hta_status hta_trace_out_write(hta_trace_out *o, const void *data, size_t len, hta_error *err) {
    const char *p = data;
    while (len) {
        size_t k = len > (1u << 30) ? (1u << 30) : len;
        int ok = o->gz ? gzwrite(o->gz, p, (unsigned)k) == (int)k : fwrite(p, 1, k, o->f) == k;
        if (!ok) return hta_fail(err, HTA_EIO, "%s: write error", o->tmp);
        p += k;
        len -= k;
    }
    return HTA_OK;
}

hta_status hta_trace_out_printf(hta_trace_out *o, hta_error *err, const char *fmt, ...) {
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0) return hta_fail(err, HTA_EINVAL, "format error");
    if ((size_t)n < sizeof buf) return hta_trace_out_write(o, buf, (size_t)n, err);
    char *big = malloc((size_t)n + 1);
    if (!big) return hta_fail(err, HTA_ENOMEM, "out of memory");
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    hta_status st = hta_trace_out_write(o, big, (size_t)n, err);
    free(big);
    return st;
}

hta_status hta_trace_out_close(hta_trace_out *o, int commit, hta_error *err) {
    if (!o) return HTA_OK;
    int bad = o->gz ? gzclose(o->gz) != Z_OK : fclose(o->f) != 0;
    hta_status st = HTA_OK;
    if (commit && bad) st = hta_fail(err, HTA_EIO, "%s: write error", o->tmp);
    if (commit && !bad && rename(o->tmp, o->path) != 0)
        st = hta_fail(err, HTA_EIO, "%s: cannot rename to %s: %s", o->tmp, o->path, strerror(errno));
    if (!commit || st) unlink(o->tmp);
    free(o->path);
    free(o->tmp);
    free(o);
    return st;
}
