/* dynolog's TCP request framing (dynolog-ipc.md §5): a native-order int32 length, then that many
 * bytes of JSON, in both directions; and the client side of it that `hta capture` uses.  Every wait
 * has a deadline and every length a bound, so a silent or hostile peer costs a timeout, nothing more. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "hta/capture.h"

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits until fd is readable (or writable); 0, or -1 on timeout with errno ETIMEDOUT. */
static int wait_fd(int fd, short ev, int64_t deadline) {
    for (;;) {
        int64_t left = deadline - now_ms();
        if (left <= 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        struct pollfd p = {fd, ev, 0};
        int r = poll(&p, 1, (int)(left > 1000000 ? 1000000 : left));
        if (r > 0) return 0;
        if (r < 0 && errno != EINTR) return -1;
    }
}

static hta_status read_full(int fd, void *buf, size_t n, int64_t deadline, hta_error *err) {
    size_t got = 0;
    while (got < n) {
        if (wait_fd(fd, POLLIN, deadline)) return hta_fail(err, HTA_EIO, "reading the reply: %s", strerror(errno));
        ssize_t r = recv(fd, (char *)buf + got, n - got, 0);
        if (r == 0) return hta_fail(err, HTA_EIO, "connection closed after %zu of %zu bytes", got, n);
        if (r < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            return hta_fail(err, HTA_EIO, "reading: %s", strerror(errno));
        }
        got += (size_t)r;
    }
    return HTA_OK;
}

hta_status hta_rpc_read(int fd, size_t max, int timeout_ms, char **out, size_t *len, hta_error *err) {
    *out = NULL;
    int64_t deadline = now_ms() + timeout_ms;
    int32_t n;
    HTA_TRY(read_full(fd, &n, 4, deadline, err));
    if (n < 0 || (size_t)n > max)
        return hta_fail(err, HTA_EINVAL, "message of %d bytes: the limit is %zu", n, max);
    char *b = malloc((size_t)n + 1);
    if (!b) return hta_oom(err);
    hta_status st = read_full(fd, b, (size_t)n, deadline, err);
    if (st) {
        free(b);
        return st;
    }
    b[n] = 0;
    *out = b;
    *len = (size_t)n;
    return HTA_OK;
}

static hta_status write_full(int fd, const void *buf, size_t n, int64_t deadline, hta_error *err) {
    size_t put = 0;
    while (put < n) {
        if (wait_fd(fd, POLLOUT, deadline)) return hta_fail(err, HTA_EIO, "writing: %s", strerror(errno));
        ssize_t r = send(fd, (const char *)buf + put, n - put, MSG_NOSIGNAL);
        if (r < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            return hta_fail(err, HTA_EIO, "writing: %s", strerror(errno));
        }
        put += (size_t)r;
    }
    return HTA_OK;
}

hta_status hta_rpc_write(int fd, const char *msg, size_t len, int timeout_ms, hta_error *err) {
    if (len > INT32_MAX) return hta_fail(err, HTA_EINVAL, "message of %zu bytes is too long", len);
    int64_t deadline = now_ms() + timeout_ms;
    int32_t n = (int32_t)len;
    HTA_TRY(write_full(fd, &n, 4, deadline, err));
    return write_full(fd, msg, len, deadline, err);
}

hta_status hta_rpc_read_raw(int fd, uint64_t n, int timeout_ms, hta_sink_fn sink, void *ctx, hta_error *err) {
    char buf[65536];
    while (n) {
        size_t k = n < sizeof buf ? (size_t)n : sizeof buf;
        /* the deadline is per piece: a large file over a slow link keeps going while bytes flow */
        HTA_TRY(read_full(fd, buf, k, now_ms() + timeout_ms, err));
        HTA_TRY(sink(ctx, buf, k, err));
        n -= k;
    }
    return HTA_OK;
}

hta_status hta_rpc_connect(const char *host, int port, int timeout_ms, int *fdp, hta_error *err) {
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    struct addrinfo hints = {0}, *ai = NULL;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_family = AF_UNSPEC;
    int gr = getaddrinfo(host, ps, &hints, &ai);
    if (gr) return hta_fail(err, HTA_EIO, "%s: %s", host, gai_strerror(gr));
    int64_t deadline = now_ms() + timeout_ms;
    int last = ECONNREFUSED;
    for (struct addrinfo *a = ai; a; a = a->ai_next) {
        int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
        if (fd < 0) {
            last = errno;
            continue;
        }
        int r = connect(fd, a->ai_addr, a->ai_addrlen);
        if (r < 0 && errno == EINPROGRESS) {
            if (wait_fd(fd, POLLOUT, deadline) == 0) {
                int e = 0;
                socklen_t el = sizeof e;
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el);
                r = e ? -1 : 0;
                errno = e;
            }
        }
        if (r == 0) {
            freeaddrinfo(ai);
            *fdp = fd;
            return HTA_OK;
        }
        last = errno;
        close(fd);
    }
    freeaddrinfo(ai);
    return hta_fail(err, HTA_EIO, "%s:%d: %s", host, port, strerror(last));
}

hta_status hta_rpc_call(const char *host, int port, const char *req, int timeout_ms, hta_jval **reply,
                        int *fd_out, hta_error *err) {
    *reply = NULL;
    if (fd_out) *fd_out = -1;
    int fd;
    HTA_TRY(hta_rpc_connect(host, port, timeout_ms, &fd, err));
    char *txt = NULL;
    size_t len = 0;
    hta_status st = hta_rpc_write(fd, req, strlen(req), timeout_ms, err);
    /* replies are small JSON; a payload that follows one is read apart (hta_rpc_read_raw) */
    if (!st) st = hta_rpc_read(fd, 16u << 20, timeout_ms, &txt, &len, err);
    if (!st) st = hta_json_parse(txt, len, reply, err);
    free(txt);
    if (st || !fd_out) close(fd);
    else *fd_out = fd;
    if (st) {
        char pre[300];
        snprintf(pre, sizeof pre, "%s:%d", host, port);
        hta_error_prefix(err, pre);
    }
    return st;
}
