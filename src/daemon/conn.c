/* htad's TCP side (docs/capture.md, "Deadlines and limits"): the request port and the /metrics port on
 * one thread of their own, every socket non-blocking, so that no peer can hold anything for long:
 *  - a request is judged from its first bytes (hta_rpc_head, hta_http_head: the length, the method,
 *    the token of a peer other than loopback) and must arrive whole within a total deadline;
 *  - a reply has a total deadline too (plus 1 s per MiB of a payload) and ends when the peer takes
 *    nothing for HTAD_STALL_MS: a stalled reader costs one connection for that long, no thread;
 *  - each port has its own connections (HTAD_CONN_PER_PORT); an address other than loopback has at
 *    most HTAD_CONN_PER_PEER, and those not yet past the token at most HTAD_CONN_UNAUTH per port; when
 *    a port's are all taken, the oldest unfinished request makes way for the new connection (idle and
 *    slow peers go first), so a client that sends its request at once is always served.
 * A fetch from S3 is the only blocking work: a worker thread gets the object, then the loop sends it. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon/htad.h"

#define MAX_CONNS (2 * HTAD_CONN_PER_PORT)
#define MAX_WORKERS 4

enum { P_READ, P_WORK, P_WRITE };

typedef struct hconn {
    int fd, http, remote, authed, phase, dead, closed;
    unsigned char peer[16];  /* the peer's address (IPv4 as v4-mapped IPv6) */
    int64_t t0, deadline, progress;
    unsigned char *in;
    size_t inlen, incap;
    hta_http_in hi;
    htad_reply rep;
    size_t off;
    off_t foff;
    uint64_t fleft;
    size_t slot;
} hconn;

static hconn *g_c[MAX_CONNS];
static size_t g_n;
static int g_ep = -1, g_lfd[2] = {-1, -1}, g_evfd = -1;
static pthread_t g_thr;
static atomic_int g_stopping, g_workers;
static pthread_mutex_t g_wmu = PTHREAD_MUTEX_INITIALIZER;
static hconn *g_done[MAX_WORKERS];
static hconn *g_grave[MAX_CONNS + 64]; /* closed in this round of events, freed after it */
static size_t g_ngrave;
static int g_ndone;

static void peer_key(const struct sockaddr_storage *a, unsigned char out[16], int *remote) {
    memset(out, 0, 16);
    *remote = 1;
    if (a->ss_family == AF_INET) {
        uint32_t v4 = ((const struct sockaddr_in *)a)->sin_addr.s_addr;
        out[10] = out[11] = 0xff;
        memcpy(out + 12, &v4, 4);
        *remote = (ntohl(v4) >> 24) != 127;
    } else if (a->ss_family == AF_INET6) {
        const struct in6_addr *x = &((const struct sockaddr_in6 *)a)->sin6_addr;
        memcpy(out, x, 16);
        *remote = !(IN6_IS_ADDR_LOOPBACK(x) || (IN6_IS_ADDR_V4MAPPED(x) && x->s6_addr[12] == 127));
    }
}

static void conn_close(hconn *c) {
    if (c->fd >= 0) close(c->fd);
    if (c->rep.file_fd >= 0) close(c->rep.file_fd);
    free(c->in);
    hta_sb_free(&c->rep.out);
    c->fd = c->rep.file_fd = -1;
    c->in = NULL;
    c->closed = 1;
    g_c[c->slot] = g_c[--g_n];
    g_c[c->slot]->slot = c->slot;
    htad_set_conn_count(g_n);
    if (g_ngrave < sizeof g_grave / sizeof *g_grave) g_grave[g_ngrave++] = c;
    else free(c); /* not reached: a round closes at most its own connections */
}

static void bury(void) {
    while (g_ngrave) free(g_grave[--g_ngrave]);
}

static void start_write(hconn *c) {
    int64_t now = htad_mono_ms();
    c->phase = P_WRITE;
    c->fleft = c->rep.file_fd >= 0 ? c->rep.file_size : 0;
    c->deadline = now + HTAD_REPLY_MS + (int64_t)(c->fleft >> 20) * 1000;
    c->progress = now;
    struct epoll_event ev = {.events = EPOLLOUT, .data.ptr = c};
    epoll_ctl(g_ep, EPOLL_CTL_MOD, c->fd, &ev);
}

/* sends what the socket takes now; closes the connection when the reply is out or the peer gone */
static void on_write(hconn *c) {
    while (c->off < c->rep.out.len) {
        ssize_t w = send(c->fd, c->rep.out.p + c->off, c->rep.out.len - c->off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && errno == EAGAIN) return;
        if (w <= 0) return conn_close(c);
        c->off += (size_t)w;
        c->progress = htad_mono_ms();
    }
    while (c->fleft) {
        ssize_t w = sendfile(c->fd, c->rep.file_fd, &c->foff, c->fleft < (1u << 20) ? (size_t)c->fleft : 1u << 20);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && errno == EAGAIN) return;
        if (w <= 0) { /* the peer went, or the file shrank: the reply cannot be completed */
            if (w == 0) htad_log("fetch: the stored file shrank while it was sent");
            return conn_close(c);
        }
        c->fleft -= (uint64_t)w;
        c->progress = htad_mono_ms();
    }
    shutdown(c->fd, SHUT_WR);
    conn_close(c);
}

static void *worker(void *arg) {
    hconn *c = arg;
    htad_rpc_fetch_open(&c->rep);
    pthread_mutex_lock(&g_wmu);
    g_done[g_ndone++] = c;
    pthread_mutex_unlock(&g_wmu);
    uint64_t one = 1;
    if (write(g_evfd, &one, 8) < 0) { /* the loop also looks every 100 ms */ }
    return NULL;
}

static void handle(hconn *c, size_t total) {
    if (c->http) {
        htad_http_reply(200, "", &c->rep);
    } else {
        htad_rpc_handle((const char *)c->in + 4, total - 4, &c->rep);
        if (c->rep.key[0]) { /* a fetch from S3: a worker gets the object */
            pthread_t t;
            pthread_attr_t at;
            pthread_attr_init(&at);
            pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
            c->phase = P_WORK;
            c->deadline = htad_mono_ms() + 60000 + (g_opt.max_trace_bytes >> 20) * 1000;
            struct epoll_event ev = {.events = 0, .data.ptr = c};
            epoll_ctl(g_ep, EPOLL_CTL_MOD, c->fd, &ev);
            int ok = atomic_fetch_add(&g_workers, 1) < MAX_WORKERS && !pthread_create(&t, &at, worker, c);
            pthread_attr_destroy(&at);
            if (ok) return;
            atomic_fetch_sub(&g_workers, 1);
            c->rep.key[0] = 0;
            htad_rpc_refuse(&c->rep, "busy: " "4 fetches from S3 are running; try again");
        }
    }
    start_write(c);
    on_write(c);
}

/* reads what has arrived and judges the request as far as its bytes allow */
static void on_read(hconn *c) {
    size_t max = c->http ? HTA_HTTP_MAX_HEAD + 1 : 4 + HTA_RPC_MAX_REQUEST;
    for (;;) {
        if (c->inlen == c->incap) {
            if (c->incap == max) break;
            size_t cap = c->incap ? c->incap * 2 : 512;
            unsigned char *p = realloc(c->in, cap < max ? cap : max);
            if (!p) return conn_close(c);
            c->in = p;
            c->incap = cap < max ? cap : max;
        }
        ssize_t r = recv(c->fd, c->in + c->inlen, c->incap - c->inlen, MSG_DONTWAIT);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && errno == EAGAIN) break;
        if (r <= 0) return conn_close(c); /* the peer left before its request was complete */
        c->inlen += (size_t)r;
    }
    char why[300];
    const char *token = c->remote ? g_opt.token : NULL;
    if (c->http) {
        int status = 0;
        int v = hta_http_head(&c->hi, (const char *)c->in, c->inlen, token, &status, why, sizeof why);
        if (v == 0) return;
        if (v > 0) {
            c->authed = 1;
            return handle(c, c->inlen);
        }
        htad_http_reply(status, why, &c->rep);
    } else {
        size_t total = 0;
        int v = hta_rpc_head(c->in, c->inlen, HTA_RPC_MAX_REQUEST, token, &total, &c->authed, why, sizeof why);
        if (v == 0) return;
        if (v > 0) return handle(c, total);
        htad_rpc_refuse(&c->rep, why);
    }
    start_write(c);
    on_write(c);
}

/* makes way on a full port: the oldest unfinished request (a peer short of its token first), else the
 * reply that has waited longest on a reader that takes nothing; 0 when every connection is busy */
static int evict(int http, int remote_unauth_only) {
    hconn *v = NULL;
    int64_t now = htad_mono_ms();
    for (size_t k = 0; k < g_n; k++) {
        hconn *c = g_c[k];
        if (c->http != http || c->phase != P_READ) continue;
        int weak = c->remote && !c->authed;
        if (remote_unauth_only && !weak) continue;
        int vweak = v && v->remote && !v->authed;
        if (!v || (weak && !vweak) || (weak == vweak && c->t0 < v->t0)) v = c;
    }
    for (size_t k = 0; !v && !remote_unauth_only && k < g_n; k++) {
        hconn *c = g_c[k];
        if (c->http == http && c->phase == P_WRITE && now - c->progress > 1000 &&
            (!v || c->progress < v->progress))
            v = c;
    }
    if (!v) return 0;
    conn_close(v);
    return 1;
}

static void accept_all(int http) {
    for (int k = 0; k < 256; k++) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        int fd = accept4(g_lfd[http], (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
            /* out of descriptors: an unfinished request makes way, the next round takes the peer */
            if ((errno == EMFILE || errno == ENFILE) && evict(http, 0)) continue;
            return;
        }
        unsigned char peer[16];
        int remote;
        peer_key(&ss, peer, &remote);
        size_t same = 0, port = 0, unauth = 0;
        for (size_t q = 0; q < g_n; q++) {
            const hconn *c = g_c[q];
            same += c->remote && !memcmp(c->peer, peer, 16);
            port += c->http == http;
            unauth += c->http == http && c->remote && !c->authed;
        }
        int ok = !atomic_load(&g_stopping) && g_n < MAX_CONNS && (!remote || same < HTAD_CONN_PER_PEER);
        if (ok && remote && unauth >= HTAD_CONN_UNAUTH) ok = evict(http, 1);
        if (ok && port >= HTAD_CONN_PER_PORT) ok = evict(http, 0);
        hconn *c = ok ? calloc(1, sizeof *c) : NULL;
        if (!c) {
            close(fd);
            pthread_mutex_lock(&mu);
            g_requests_refused_total++;
            pthread_mutex_unlock(&mu);
            continue;
        }
        c->fd = fd;
        c->http = http;
        c->remote = remote;
        memcpy(c->peer, peer, 16);
        c->rep.file_fd = -1;
        c->t0 = htad_mono_ms();
        c->deadline = c->t0 + (http ? HTAD_HTTP_HEAD_MS : HTAD_REQUEST_MS);
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
        if (epoll_ctl(g_ep, EPOLL_CTL_ADD, fd, &ev)) {
            close(fd);
            free(c);
            continue;
        }
        c->slot = g_n;
        g_c[g_n++] = c;
        htad_set_conn_count(g_n);
    }
}

/* deadlines: a request that has not arrived whole, a reply not taken, are ended */
static void expire(int64_t now, int all) {
    for (size_t k = g_n; k-- > 0;) {
        hconn *c = g_c[k];
        if (c->phase == P_WORK) {
            if (now > c->deadline || all) c->dead = 1; /* closed when its worker is done */
            continue;
        }
        int late = all || now > c->deadline || (c->phase == P_WRITE && now - c->progress > HTAD_STALL_MS);
        if (!late) continue;
        if (c->phase == P_READ && !all) { /* one try to say why; a peer that reads nothing gets nothing */
            hta_sb_free(&c->rep.out);
            if (c->http) htad_http_reply(408, "the request head did not arrive in time", &c->rep);
            else htad_rpc_refuse(&c->rep, "the request did not arrive within 10 s");
            send(c->fd, c->rep.out.p, c->rep.out.len, MSG_NOSIGNAL | MSG_DONTWAIT);
        }
        conn_close(c);
    }
}

static void take_done(void) {
    uint64_t x;
    if (read(g_evfd, &x, 8) < 0) { /* nothing new */ }
    pthread_mutex_lock(&g_wmu);
    int n = g_ndone;
    hconn *d[MAX_WORKERS];
    memcpy(d, g_done, sizeof *d * (size_t)n);
    g_ndone = 0;
    pthread_mutex_unlock(&g_wmu);
    for (int k = 0; k < n; k++) {
        atomic_fetch_sub(&g_workers, 1);
        if (d[k]->dead) {
            conn_close(d[k]);
        } else {
            start_write(d[k]);
            on_write(d[k]);
        }
    }
    bury();
}

static void *conn_main(void *arg) {
    (void)arg;
    struct epoll_event evs[64];
    int64_t last = 0;
    for (;;) {
        int stopping = atomic_load(&g_stopping);
        int64_t now = htad_mono_ms();
        if (stopping && g_lfd[0] >= 0) { /* no new connections; the open ones may finish */
            for (int p = 0; p < 2; p++)
                if (g_lfd[p] >= 0) close(g_lfd[p]), g_lfd[p] = -1;
        }
        if (stopping && (!g_n || (htad_stop_by_ms() && now > htad_stop_by_ms()))) {
            expire(now, 1);
            bury();
            while (atomic_load(&g_workers) > 0) { /* the S3 transfers end by the stop time too */
                usleep(20000);
                take_done();
            }
            return NULL;
        }
        /* idle (no connection): no wake-ups at all; the deadlines are looked at every 100 ms otherwise */
        int n = epoll_wait(g_ep, evs, 64, g_n || atomic_load(&g_workers) ? 100 : -1);
        for (int k = 0; k < n; k++) {
            void *p = evs[k].data.ptr;
            if (p == &g_lfd[0]) accept_all(0);
            else if (p == &g_lfd[1]) accept_all(1);
            else if (p == &g_evfd) take_done();
            else {
                hconn *c = p;
                if (c->closed) continue; /* by an earlier event of this round (made way) */
                if (c->phase == P_READ) on_read(c);
                else if (c->phase == P_WRITE) on_write(c);
            }
        }
        now = htad_mono_ms();
        if (now - last >= 100) {
            expire(now, 0);
            take_done();
            last = now;
        }
        bury();
    }
}

hta_status htad_conn_start(int rfd, int hfd, hta_error *err) {
    g_ep = epoll_create1(EPOLL_CLOEXEC);
    g_evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (g_ep < 0 || g_evfd < 0) return hta_fail(err, HTA_EIO, "epoll: %s", strerror(errno));
    g_lfd[0] = rfd;
    g_lfd[1] = hfd;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &g_lfd[0]};
    epoll_ctl(g_ep, EPOLL_CTL_ADD, rfd, &ev);
    if (hfd >= 0) {
        ev.data.ptr = &g_lfd[1];
        epoll_ctl(g_ep, EPOLL_CTL_ADD, hfd, &ev);
    }
    ev.data.ptr = &g_evfd;
    epoll_ctl(g_ep, EPOLL_CTL_ADD, g_evfd, &ev);
    if (pthread_create(&g_thr, NULL, conn_main, NULL)) return hta_fail(err, HTA_EIO, "cannot start a thread");
    return HTA_OK;
}

void htad_conn_stop(void) {
    atomic_store(&g_stopping, 1);
    uint64_t one = 1;
    if (write(g_evfd, &one, 8) < 0) { /* it looks every 100 ms anyway */ }
    pthread_join(g_thr, NULL);
    close(g_ep);
    close(g_evfd);
}
