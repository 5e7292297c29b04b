/* htad's HTTP side: GET /metrics in Prometheus' text format (version 0.0.4), nothing else.  A
 * request is read up to its blank line (8 KiB at most, 5 s at most); a scrape from another host
 * needs "Authorization: Bearer TOKEN" as the RPC needs its token. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "daemon/htad.h"

static void send_all(int fd, const char *p, size_t n) {
    while (n) {
        struct pollfd pf = {fd, POLLOUT, 0};
        if (poll(&pf, 1, 5000) <= 0) return;
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            return;
        }
        p += w;
        n -= (size_t)w;
    }
}

static void respond(int fd, const char *status, const char *ctype, const char *body, size_t n) {
    char h[256];
    int hn = snprintf(h, sizeof h, "HTTP/1.0 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
                      status, ctype, n);
    send_all(fd, h, (size_t)hn);
    send_all(fd, body, n);
}

static int bearer_ok(const char *req) {
    if (!g_opt.token[0]) return 0;
    for (const char *l = strstr(req, "\r\n"); l; l = strstr(l + 2, "\r\n")) {
        if (!strncasecmp(l + 2, "Authorization: Bearer ", 22)) {
            const char *t = l + 24;
            size_t n = strcspn(t, "\r\n");
            return n == strlen(g_opt.token) && !memcmp(t, g_opt.token, n);
        }
    }
    return 0;
}

void htad_serve_http(int fd, int trusted) {
    char req[8193];
    size_t n = 0;
    while (n < sizeof req - 1) {
        struct pollfd pf = {fd, POLLIN, 0};
        if (poll(&pf, 1, 5000) <= 0) return;
        ssize_t r = recv(fd, req + n, sizeof req - 1 - n, 0);
        if (r <= 0) return;
        n += (size_t)r;
        req[n] = 0;
        if (strstr(req, "\r\n\r\n") || strstr(req, "\n\n")) break;
    }
    static const char txt[] = "text/plain; charset=utf-8";
    if (n == sizeof req - 1) return respond(fd, "431 Request Header Fields Too Large", txt, "too large\n", 10);
    if (strncmp(req, "GET ", 4)) return respond(fd, "405 Method Not Allowed", txt, "only GET\n", 9);
    if (strncmp(req + 4, "/metrics ", 9) && strncmp(req + 4, "/metrics?", 9))
        return respond(fd, "404 Not Found", txt, "only /metrics\n", 14);
    if (!trusted && !bearer_ok(req)) return respond(fd, "401 Unauthorized", txt, "token required\n", 15);
    hta_sbuf b = {0};
    htad_metrics_prometheus(&b);
    if (b.oom) respond(fd, "500 Internal Server Error", txt, "out of memory\n", 14);
    else respond(fd, "200 OK", "text/plain; version=0.0.4; charset=utf-8", b.p, b.len);
    hta_sb_free(&b);
}
