/* Where htad keeps finished traces and metrics: a folder (STORE/ID/NAME) or an S3 bucket (s3.c),
 * and the one thread that moves traces there (taking what htad_tick put on queue.c), so that a slow
 * disk or network never delays the main loop's answers to libkineto.  A file appears in the store
 * complete or not at all: a folder's file through hta_outfile (temporary file, then rename), an S3 object through one PUT.  What a folder store
 * keeps, and whose its folders are, is retention.c's. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/htad.h"
#include "hta/outfile.h"

static char g_dir[PATH_MAX];
static htad_s3 *g_s3;

hta_status htad_store_open(const char *spec, hta_error *err) {
    if (!strncmp(spec, "s3://", 5)) {
        if (!g_opt.s3_endpoint) return hta_fail(err, HTA_EINVAL, "%s: --s3-endpoint URL is required", spec);
        return htad_s3_open(spec, g_opt.s3_endpoint, g_opt.s3_region, &g_s3, err);
    }
    if (mkdir(spec, 0755) && errno != EEXIST) return hta_fail(err, HTA_EIO, "%s: %s", spec, strerror(errno));
    if (!realpath(spec, g_dir)) return hta_fail(err, HTA_EIO, "%s: %s", spec, strerror(errno));
    struct stat st;
    if (stat(g_dir, &st) || !S_ISDIR(st.st_mode)) return hta_fail(err, HTA_EINVAL, "%s: not a folder", spec);
    return HTA_OK;
}

void htad_store_close(void) {
    htad_s3_close(g_s3);
    g_s3 = NULL;
}

int htad_store_is_s3(void) { return g_s3 != NULL; }

/* key is "ID/NAME", both safe names (checked by the callers): never a path out of the store, and the
 * ID folder is never a link (one planted there would lead out of it).  make: the folder is written into,
 * so it is this htad's (made now, with its marker, or carrying it already: retention.c). */
static hta_status dir_path(const char *key, char *out, size_t cap, int make, hta_error *err) {
    const char *slash = strchr(key, '/');
    if (!slash) return hta_fail(err, HTA_EINVAL, "%s: not ID/NAME", key);
    if ((size_t)snprintf(out, cap, "%s/%.*s", g_dir, (int)(slash - key), key) >= cap)
        return hta_fail(err, HTA_EINVAL, "%s: too long", key);
    int made = make && !mkdir(out, 0755);
    if (make && !made && errno != EEXIST) return hta_fail(err, HTA_EIO, "%s: %s", out, strerror(errno));
    struct stat st;
    if (lstat(out, &st)) return hta_fail(err, errno == ENOENT ? HTA_ENODATA : HTA_EIO, "%s: %s", key, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return hta_fail(err, HTA_EINVAL, "%.*s: not a folder of the store (a link is not followed)", (int)(slash - key),
                        key);
    if (make) HTA_TRY(htad_folder_claim(out, made, err));
    if ((size_t)snprintf(out, cap, "%s/%s", g_dir, key) >= cap) return hta_fail(err, HTA_EINVAL, "%s: too long", key);
    return HTA_OK;
}

void htad_store_fetched(const char *key) {
    const char *slash = strchr(key, '/');
    char folder[PATH_MAX + 200];
    if (g_s3 || !slash) return;
    if ((size_t)snprintf(folder, sizeof folder, "%s/%.*s", g_dir, (int)(slash - key), key) < sizeof folder)
        htad_folder_fetched(folder);
}

static hta_status put_dir(const char *key, int fd, const char *data, size_t n, hta_error *err) {
    char path[PATH_MAX + 200];
    HTA_TRY(dir_path(key, path, sizeof path, 1, err));
    hta_outfile *o;
    HTA_TRY(hta_outfile_open(path, &o, err));
    hta_status st = HTA_OK;
    if (fd < 0) {
        st = hta_outfile_write(o, data, n, err);
    } else {
        char buf[65536];
        for (size_t left = n; left && !st;) {
            ssize_t r = read(fd, buf, left < sizeof buf ? left : sizeof buf);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) {
                st = hta_fail(err, HTA_EIO, "reading the trace: %s", r ? strerror(errno) : "it shrank");
                break;
            }
            st = hta_outfile_write(o, buf, (size_t)r, err);
            left -= (size_t)r;
        }
    }
    if (st) {
        hta_outfile_close(o, 0, NULL);
        return st;
    }
    return hta_outfile_close(o, 1, err);
}

hta_status htad_store_put_file(const char *key, const char *path, uint32_t uid, int64_t *size, hta_error *err) {
    /* the trace folder is writable by every client: never follow a link planted there, never read a
     * FIFO or a device, never more than the limit */
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return hta_fail(err, HTA_EIO, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        close(fd);
        return hta_fail(err, HTA_EINVAL, "%s: not a regular file", path);
    }
    if (st.st_uid != uid) { /* another user's file planted under this process's predicted name */
        close(fd);
        return hta_fail(err, HTA_EINVAL, "%s: owned by uid %u, not by the process's user (uid %u)", path,
                        (unsigned)st.st_uid, (unsigned)uid);
    }
    if (st.st_size > g_opt.max_trace_bytes) {
        close(fd);
        return hta_fail(err, HTA_EINVAL, "%s: %lld bytes, more than --max-trace-mb", path, (long long)st.st_size);
    }
    *size = st.st_size;
    hta_status s = g_s3 ? htad_s3_put(g_s3, key, fd, NULL, (size_t)st.st_size, err)
                        : put_dir(key, fd, NULL, (size_t)st.st_size, err);
    close(fd);
    return s;
}

hta_status htad_store_put_mem(const char *key, const char *data, size_t n, hta_error *err) {
    return g_s3 ? htad_s3_put(g_s3, key, -1, data, n, err) : put_dir(key, -1, data, n, err);
}

hta_status htad_store_open_read(const char *key, int *fdp, uint64_t *size, hta_error *err) {
    *fdp = -1;
    int fd;
    if (g_s3) {
        /* the object is fetched whole into an unnamed temporary file first: its size heads the reply */
        fd = open(g_opt.trace_dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        if (fd < 0) return hta_fail(err, HTA_EIO, "%s: temporary file: %s", g_opt.trace_dir, strerror(errno));
        hta_status st = htad_s3_get_fd(g_s3, key, fd, g_opt.max_trace_bytes, err);
        if (st) {
            close(fd);
            return st;
        }
    } else {
        char path[PATH_MAX + 200];
        HTA_TRY(dir_path(key, path, sizeof path, 0, err));
        fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) return hta_fail(err, errno == ENOENT ? HTA_ENODATA : HTA_EIO, "%s: %s", key, strerror(errno));
    }
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        close(fd);
        return hta_fail(err, HTA_EINVAL, "%s: not a regular file", key);
    }
    *fdp = fd;
    *size = (uint64_t)st.st_size;
    return HTA_OK;
}

/* ---- the store thread ---- */

static pthread_t g_thr;

static void run_job(const htad_job *j) {
    char key[700], spool[512];
    uint32_t uid;
    hta_error err = {0};
    int64_t t0 = 0, t1 = 0;
    pthread_mutex_lock(&mu);
    htad_capture *c = htad_capture_find(j->id);
    if (!c) {
        pthread_mutex_unlock(&mu);
        return;
    }
    if (j->idx == (size_t)-1) {
        snprintf(key, sizeof key, "%s/%s.metrics.jsonl", c->id, g_opt.host);
        t0 = c->t_request_ms - 10000;
        t1 = c->t_done_ms + 1000;
        pthread_mutex_unlock(&mu);
        hta_sbuf b = {0};
        htad_metrics_jsonl(t0, t1, &b);
        hta_status st = b.oom ? hta_oom(&err) : htad_store_put_mem(key, b.p ? b.p : "", b.len, &err);
        if (st) htad_log("%s: %s", key, err.msg);
        hta_sb_free(&b);
        if (!g_s3) htad_retention(g_dir); /* a capture is complete: the oldest fetched make room (S3: the
                                           * bucket's lifecycle) */
        return;
    }
    snprintf(key, sizeof key, "%s/%s", c->id, c->tr[j->idx].name);
    snprintf(spool, sizeof spool, "%s", c->tr[j->idx].spool);
    uid = c->tr[j->idx].uid;
    pthread_mutex_unlock(&mu);
    int64_t size = -1;
    hta_status st = htad_store_put_file(key, spool, uid, &size, &err);
    if (!st) unlink(spool);
    pthread_mutex_lock(&mu);
    if ((c = htad_capture_find(j->id))) {
        htad_trace *t = &c->tr[j->idx];
        t->state = st ? TR_FAILED : TR_STORED;
        t->size = size;
        if (st) snprintf(t->error, sizeof t->error, "%.190s", err.msg);
    }
    if (!st) g_traces_stored_total++;
    pthread_mutex_unlock(&mu);
    if (st) htad_log("storing %s: %s", key, err.msg);
    else if (!g_opt.quiet) htad_log("stored %s (%lld bytes)", key, (long long)size);
}

static void *store_main(void *arg) {
    htad_job j;
    while (htad_queue_take(&j)) { /* 0: stopping, and every queued file was finished first */
        run_job(&j);
        htad_queue_done();
    }
    return NULL;
}

hta_status htad_store_start(hta_error *err) {
    if (pthread_create(&g_thr, NULL, store_main, NULL)) return hta_fail(err, HTA_EIO, "cannot start a thread");
    return HTA_OK;
}

void htad_store_stop(void) {
    htad_queue_stop();
    pthread_join(g_thr, NULL);
}
