/* Derived trace files: bytes, compressed when asked, handed to the one writer of output files
 * (hta/outfile.h), which puts a regular file in place only when complete (temporary file + rename) and
 * writes a FIFO or a device through, so a failure never leaves a half-written trace.
 * Gzip output goes through ISA-L's igzip (level 1) when it is installed:
 * several times faster than zlib at a similar ratio on trace JSON. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hta/outfile.h"
#include "hta/rawjson.h"

#ifdef HTA_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#else
#include <zlib.h>
#endif

#define BUF (1u << 18)

struct hta_trace_out {
    hta_outfile *f;
    int gz;
    unsigned char *in, *out; /* gzip: pending input, compressed output */
    size_t nin;
#ifdef HTA_HAVE_ISAL
    struct isal_zstream zs;
    unsigned char *level_buf;
#else
    z_stream zs;
#endif
};

static void out_free(hta_trace_out *o) {
    free(o->in);
    free(o->out);
#ifdef HTA_HAVE_ISAL
    free(o->level_buf);
#endif
    free(o);
}

hta_status hta_output_dir(const char *dir, hta_error *err) {
    struct stat sb;
    if (stat(dir, &sb) == 0)
        return S_ISDIR(sb.st_mode) ? HTA_OK : hta_fail(err, HTA_EINVAL, "%s exists and is not a folder", dir);
    char *p = strdup(dir);
    if (!p) return hta_oom(err);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/') continue;
        *s = 0;
        mkdir(p, 0777); /* parents: errors show up on the last mkdir */
        *s = '/';
    }
    int e = mkdir(p, 0777) != 0 ? errno : 0;
    free(p);
    if (e == EEXIST && stat(dir, &sb) == 0 && !S_ISDIR(sb.st_mode))
        return hta_fail(err, HTA_EINVAL, "%s exists and is not a folder", dir);
    return e && e != EEXIST ? hta_fail(err, HTA_EIO, "%s: cannot create folder: %s", dir, strerror(e)) : HTA_OK;
}

hta_status hta_trace_out_open(const char *path, int gz, hta_trace_out **out, hta_error *err) {
    *out = NULL;
    hta_trace_out *o = calloc(1, sizeof *o);
    if (!o) return hta_oom(err);
    o->gz = gz;
    if (gz) {
        o->in = malloc(BUF);
        o->out = malloc(BUF);
    }
    int ok = !gz || (o->in && o->out);
#ifdef HTA_HAVE_ISAL
    if (ok && gz) {
        isal_deflate_init(&o->zs);
        o->zs.level = 1;
        o->zs.level_buf_size = ISAL_DEF_LVL1_DEFAULT;
        o->level_buf = malloc(ISAL_DEF_LVL1_DEFAULT);
        o->zs.level_buf = o->level_buf;
        o->zs.gzip_flag = IGZIP_GZIP;
        ok = o->level_buf != NULL;
    }
#else
    if (ok && gz) ok = deflateInit2(&o->zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK;
#endif
    if (!ok) {
        out_free(o);
        return hta_oom(err);
    }
    hta_status st = hta_outfile_open(path, &o->f, err);
    if (st) {
#ifndef HTA_HAVE_ISAL
        if (gz) deflateEnd(&o->zs);
#endif
        out_free(o);
        return st;
    }
    *out = o;
    return HTA_OK;
}

/* Compresses the pending input (all of it when last). */
static hta_status deflate_pending(hta_trace_out *o, int last, hta_error *err) {
#ifdef HTA_HAVE_ISAL
    o->zs.next_in = o->in;
    o->zs.avail_in = (uint32_t)o->nin;
    o->zs.end_of_stream = (uint16_t)last;
    do {
        o->zs.next_out = o->out;
        o->zs.avail_out = BUF;
        if (isal_deflate(&o->zs) != COMP_OK)
            return hta_fail(err, HTA_EIO, "%s: compression failed", hta_outfile_path(o->f));
        size_t made = BUF - o->zs.avail_out;
        HTA_TRY(hta_outfile_write(o->f, o->out, made, err));
    } while (o->zs.avail_in || (last && o->zs.internal_state.state != ZSTATE_END));
#else
    o->zs.next_in = o->in;
    o->zs.avail_in = (uInt)o->nin;
    int rc;
    do {
        o->zs.next_out = o->out;
        o->zs.avail_out = BUF;
        rc = deflate(&o->zs, last ? Z_FINISH : Z_NO_FLUSH);
        if (rc == Z_STREAM_ERROR) return hta_fail(err, HTA_EIO, "%s: compression failed", hta_outfile_path(o->f));
        size_t made = BUF - o->zs.avail_out;
        HTA_TRY(hta_outfile_write(o->f, o->out, made, err));
    } while (o->zs.avail_in || (last && rc != Z_STREAM_END));
#endif
    o->nin = 0;
    return HTA_OK;
}

hta_status hta_trace_out_write(hta_trace_out *o, const void *data, size_t len, hta_error *err) {
    const char *p = data;
    if (!o->gz) return hta_outfile_write(o->f, p, len, err);
    while (len) {
        size_t k = BUF - o->nin < len ? BUF - o->nin : len;
        memcpy(o->in + o->nin, p, k);
        o->nin += k;
        p += k;
        len -= k;
        if (o->nin == BUF) {
            hta_status st = deflate_pending(o, 0, err);
            if (st) return st;
        }
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
    if (!big) return hta_oom(err);
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    hta_status st = hta_trace_out_write(o, big, (size_t)n, err);
    free(big);
    return st;
}

const char *hta_trace_out_path(const hta_trace_out *o) { return hta_outfile_path(o->f); }

int hta_trace_out_is(const hta_trace_out *o, const char *path) { return hta_outfile_is(o->f, path); }

hta_status hta_trace_out_close(hta_trace_out *o, int commit, hta_error *err) {
    if (!o) return HTA_OK;
    hta_status st = HTA_OK;
    if (commit && o->gz) st = deflate_pending(o, 1, err);
#ifndef HTA_HAVE_ISAL
    if (o->gz) deflateEnd(&o->zs);
#endif
    hta_status cst = hta_outfile_close(o->f, commit && !st, err);
    if (!st) st = cst;
    out_free(o);
    return st;
}
