/* htad's S3 store: s3://BUCKET/PREFIX on an S3-compatible endpoint (AWS, MinIO, Ceph, s3rver), path-
 * style URLs, one PUT or GET per object through libcurl, every request signed with AWS SigV4
 * (sigv4.c).  Credentials come from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (a systemd
 * EnvironmentFile), never from the command line where ps would show them. */
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/htad.h"

struct htad_s3 {
    char base[512];   /* endpoint URL without a trailing / */
    char host[256];   /* host[:port] as the Host header says it */
    char bucket[128], prefix[256], region[64];
    char ak[128], sk[128];
};

hta_status htad_s3_open(const char *url, const char *endpoint, const char *region, htad_s3 **out, hta_error *err) {
    htad_s3 *s = calloc(1, sizeof *s);
    if (!s) return hta_oom(err);
    const char *b = url + 5, *slash = strchr(b, '/');
    size_t bl = slash ? (size_t)(slash - b) : strlen(b);
    const char *ak = getenv("AWS_ACCESS_KEY_ID"), *sk = getenv("AWS_SECRET_ACCESS_KEY");
    const char *h = strstr(endpoint, "://");
    hta_status st = HTA_OK;
    if (!bl || bl >= sizeof s->bucket) st = hta_fail(err, HTA_EINVAL, "%s: no bucket name", url);
    else if (!h || strncmp(endpoint, "http", 4)) st = hta_fail(err, HTA_EINVAL, "%s: not an http(s) URL", endpoint);
    else if (!ak || !sk) st = hta_fail(err, HTA_EINVAL, "S3: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set");
    if (st) {
        free(s);
        return st;
    }
    memcpy(s->bucket, b, bl);
    snprintf(s->prefix, sizeof s->prefix, "%s", slash && slash[1] ? slash + 1 : "");
    size_t pl = strlen(s->prefix);
    if (pl && s->prefix[pl - 1] != '/' && pl + 1 < sizeof s->prefix) strcat(s->prefix, "/");
    snprintf(s->base, sizeof s->base, "%s", endpoint);
    size_t el = strlen(s->base);
    while (el && s->base[el - 1] == '/') s->base[--el] = 0;
    snprintf(s->host, sizeof s->host, "%.*s", (int)strcspn(h + 3, "/"), h + 3);
    snprintf(s->region, sizeof s->region, "%s", region ? region : "us-east-1");
    snprintf(s->ak, sizeof s->ak, "%s", ak);
    snprintf(s->sk, sizeof s->sk, "%s", sk);
    if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
        free(s);
        return hta_fail(err, HTA_EIO, "libcurl does not initialise");
    }
    *out = s;
    return HTA_OK;
}

void htad_s3_close(htad_s3 *s) {
    if (!s) return;
    free(s);
    curl_global_cleanup();
}

/* AWS's URI encoding of a path: unreserved characters and '/' as they are */
static void uri_path(const htad_s3 *s, const char *key, char *out, size_t cap) {
    char raw[1024];
    snprintf(raw, sizeof raw, "/%s/%s%s", s->bucket, s->prefix, key);
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)raw; *p && n + 4 < cap; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || strchr("-_.~/", *p))
            out[n++] = (char)*p;
        else n += (size_t)snprintf(out + n, cap - n, "%%%02X", *p);
    }
    out[n] = 0;
}

typedef struct io {
    int fd;            /* the PUT's source file, or -1: data */
    const char *data;
    size_t n, off;
    int dst;           /* the GET's destination file, or -1 */
    uint64_t got, max; /* the GET's body so far, and its bound */
    CURL *c;
    int64_t deadline;  /* monotonic ms */
    char errbody[256]; /* the start of an error reply (S3's XML) */
    size_t errn;
} io;

static size_t read_cb(char *buf, size_t sz, size_t nm, void *ctx) {
    io *x = ctx;
    size_t want = sz * nm, left = x->n - x->off;
    if (want > left) want = left;
    if (x->fd >= 0) {
        ssize_t r = pread(x->fd, buf, want, (off_t)x->off);
        if (r < 0) return CURL_READFUNC_ABORT;
        want = (size_t)r;
    } else {
        memcpy(buf, x->data + x->off, want);
    }
    x->off += want;
    return want;
}

static size_t write_cb(char *buf, size_t sz, size_t nm, void *ctx) {
    io *x = ctx;
    size_t n = sz * nm;
    long code = 0;
    curl_easy_getinfo(x->c, CURLINFO_RESPONSE_CODE, &code);
    if (x->dst >= 0 && code / 100 == 2) {
        /* the body of a successful GET, bounded: an endpoint that sends without end is cut off */
        if ((x->got += n) > x->max) return 0;
        for (size_t put = 0; put < n;) {
            ssize_t w = write(x->dst, buf + put, n - put);
            if (w < 0) return 0;
            put += (size_t)w;
        }
    } else if (x->errn < sizeof x->errbody - 1) {
        size_t k = n < sizeof x->errbody - 1 - x->errn ? n : sizeof x->errbody - 1 - x->errn;
        memcpy(x->errbody + x->errn, buf, k);
        x->errn += k;
    }
    return n;
}

/* Every transfer ends: at its own deadline, or at the shutdown's (htad_stop_by_ms, SIGTERM + 10 s). */
static int progress_cb(void *ctx, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un) {
    (void)dt, (void)dn, (void)ut, (void)un;
    int64_t stop = htad_stop_by_ms(), now = htad_mono_ms();
    return (stop && now > stop) || now > ((io *)ctx)->deadline;
}

static hta_status request(htad_s3 *s, const char *method, const char *key, io *x, const char *payload_hash,
                          hta_error *err) {
    char path[1200], url[2000], auth[600], date[32], hdr[4][700];
    uri_path(s, key, path, sizeof path);
    snprintf(url, sizeof url, "%s%s", s->base, path);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof date, "%Y%m%dT%H%M%SZ", &tm);
    htad_sigv4(method, s->host, path, "", payload_hash, date, s->region, s->ak, s->sk, auth, sizeof auth);
    CURL *c = curl_easy_init();
    if (!c) return hta_oom(err);
    x->c = c;
    struct curl_slist *hl = NULL;
    snprintf(hdr[0], sizeof hdr[0], "Host: %s", s->host);
    snprintf(hdr[1], sizeof hdr[1], "x-amz-date: %s", date);
    snprintf(hdr[2], sizeof hdr[2], "x-amz-content-sha256: %s", payload_hash);
    snprintf(hdr[3], sizeof hdr[3], "Authorization: %s", auth);
    for (int k = 0; k < 4; k++) hl = curl_slist_append(hl, hdr[k]);
    hl = curl_slist_append(hl, "Expect:");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L); /* a stalled transfer ends after 30 s */
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 30L);
    /* and every transfer by its deadline: 60 s, and 1 s per MiB at least (or SIGTERM's 10 s) */
    x->deadline = htad_mono_ms() + 60000 + (int64_t)((x->dst >= 0 ? x->max : x->n) >> 20) * 1000;
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, progress_cb);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, x);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write_cb);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, x);
    if (!strcmp(method, "PUT")) {
        curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(c, CURLOPT_READFUNCTION, read_cb);
        curl_easy_setopt(c, CURLOPT_READDATA, x);
        curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)x->n);
    }
    CURLcode rc = curl_easy_perform(c);
    long code = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_slist_free_all(hl);
    curl_easy_cleanup(c);
    if (rc == CURLE_WRITE_ERROR && x->got > x->max)
        return hta_fail(err, HTA_EIO, "S3 %s %s: more than %llu bytes", method, url, (unsigned long long)x->max);
    if (rc == CURLE_ABORTED_BY_CALLBACK)
        return hta_fail(err, HTA_EIO, "S3 %s %s: %s", method, url,
                        htad_stop_by_ms() ? "stopped: htad is shutting down" : "past its deadline");
    if (rc != CURLE_OK) return hta_fail(err, HTA_EIO, "S3 %s %s: %s", method, url, curl_easy_strerror(rc));
    if (code / 100 != 2) {
        x->errbody[x->errn] = 0;
        for (char *p = x->errbody; *p; p++)
            if (*p == '\n' || *p == '\r') *p = ' ';
        return hta_fail(err, code == 404 ? HTA_ENODATA : HTA_EIO, "S3 %s %s: HTTP %ld %s", method, url, code,
                        x->errbody);
    }
    return HTA_OK;
}

hta_status htad_s3_put(htad_s3 *s, const char *key, int fd, const char *data, size_t n, hta_error *err) {
    /* the payload's hash is signed too: the file is read once for it, once to send it */
    htad_sha sh;
    htad_sha256_init(&sh);
    if (fd >= 0) {
        char buf[65536];
        for (size_t off = 0; off < n;) {
            ssize_t r = pread(fd, buf, n - off < sizeof buf ? n - off : sizeof buf, (off_t)off);
            if (r <= 0) return hta_fail(err, HTA_EIO, "reading for S3: %s", r ? strerror(errno) : "file shrank");
            htad_sha256_add(&sh, buf, (size_t)r);
            off += (size_t)r;
        }
    } else {
        htad_sha256_add(&sh, data, n);
    }
    unsigned char d[32];
    char hash[65];
    htad_sha256_end(&sh, d);
    htad_hex(d, 32, hash);
    io x = {.fd = fd, .data = data, .n = n, .dst = -1};
    return request(s, "PUT", key, &x, hash, err);
}

hta_status htad_s3_get_fd(htad_s3 *s, const char *key, int fd, uint64_t max, hta_error *err) {
    if (ftruncate(fd, 0)) return hta_fail(err, HTA_EIO, "truncate: %s", strerror(errno));
    io x = {.fd = -1, .dst = fd, .max = max};
    static const char empty[] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    return request(s, "GET", key, &x, empty, err);
}
