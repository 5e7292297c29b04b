/* htad: the per-host profiling daemon (docs/capture.md).  Parses its options, opens its sockets
 * (libkineto's IPC socket, the request port, the /metrics port), and runs the main loop: answer
 * every libkineto poll at once, take a metrics sample every --interval-ms, look for finished traces
 * every 200 ms, hand each TCP connection to a thread.  SIGTERM or SIGINT: stop taking requests, let
 * the running ones and the store finish, remove the socket, exit 0. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "daemon/htad.h"

static void usage(FILE *f) {
    fprintf(f,
            "Usage: htad [options]\n"
            "The per-host profiling daemon: PyTorch processes started with KINETO_USE_DAEMON=1 register\n"
            "with it (dynolog's IPC protocol); `hta capture` or `dyno gputrace` ask it for traces; it keeps\n"
            "the finished traces and the host's and GPUs' metrics in a store (docs/capture.md).\n\n"
            "  --port N            requests (dynolog's JSON RPC and htad's own), default 1778\n"
            "  --http-port N       GET /metrics in Prometheus' text format, default 9778; 0: none\n"
            "  --listen ADDR       address of both ports, default 127.0.0.1; another address needs\n"
            "                      --token-file\n"
            "  --token-file F      the token requests from other hosts must carry (mode 0600 or stricter)\n"
            "  --store DIR|s3://BUCKET/PREFIX   where traces and metrics go, default /var/lib/htad\n"
            "  --s3-endpoint URL   the S3 endpoint (http://host:port); credentials from\n"
            "                      AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY\n"
            "  --s3-region R       default us-east-1\n"
            "  --trace-dir DIR     where libkineto writes traces (every trace path must lie directly\n"
            "                      in it), default /tmp/htad, created with mode 1777\n"
            "  --interval-ms N     metrics sampling period, default 1000\n"
            "  --gc-s N            drop processes silent for N s, default 60\n"
            "  --max-trace-mb N    larger trace files are refused, default 2048\n"
            "  --capture-margin-s N  a capture's traces are due N s after its window ends, default 60\n"
            "  --iterations-timeout-s N  the longest wait for a capture of N iterations, default 600\n"
            "  --keep-captures N   a folder store keeps the newest N captures, default 1000\n"
            "  --keep-mb N         and at most N MiB of them (the oldest go first), default 102400\n"
            "  --ipc-dir DIR       filesystem sockets in DIR (KINETO_IPC_SOCKET_DIR) instead of the\n"
            "                      abstract \\0dynolog\\0; default $KINETO_IPC_SOCKET_DIR\n"
            "  --nvml-lib PATH     NVML library to load, default libnvidia-ml.so.1\n"
            "  --dcgm-lib PATH     DCGM library to load, default libdcgm.so.4 or .3\n"
            "  --host NAME         this host's name in file names, default the hostname\n"
            "  --quiet             log only errors\n"
            "  --help\n");
}

static int num_arg(const char *opt, const char *v, long lo, long hi, int *out) {
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || *end || !*v || x < lo || x > hi) {
        fprintf(stderr, "htad: %s: '%s' is not a number in [%ld, %ld]\n", opt, v, lo, hi);
        return -1;
    }
    *out = (int)x;
    return 0;
}

static int parse(int argc, char **argv) {
    g_opt.listen = "127.0.0.1";
    g_opt.port = HTA_RPC_PORT;
    g_opt.http_port = 9778;
    g_opt.store = "/var/lib/htad";
    g_opt.trace_dir = "/tmp/htad";
    g_opt.interval_ms = 1000;
    g_opt.gc_s = 60;
    g_opt.ipc_dir = getenv("KINETO_IPC_SOCKET_DIR");
    int max_mb = 2048, keep_mb = 102400;
    g_opt.capture_margin_s = 60;
    g_opt.iterations_timeout_s = 600;
    g_opt.keep_captures = 1000;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        }
        if (!strcmp(a, "--quiet")) {
            g_opt.quiet = 1;
            continue;
        }
        static const char *const with_value[] = {"--port", "--http-port", "--interval-ms", "--gc-s", "--max-trace-mb",
                                                 "--capture-margin-s", "--iterations-timeout-s", "--keep-captures",
                                                 "--keep-mb",
                                                 "--listen", "--store", "--s3-endpoint", "--s3-region", "--trace-dir",
                                                 "--token-file", "--ipc-dir", "--nvml-lib", "--dcgm-lib", "--host"};
        int known = 0;
        for (size_t k = 0; k < sizeof with_value / sizeof *with_value; k++) known |= !strcmp(a, with_value[k]);
        if (!known || i + 1 >= argc) {
            fprintf(stderr, "htad: %s %s\nTry 'htad --help'.\n", known ? "a value is missing after" : "unknown option", a);
            return -1;
        }
        const char *v = argv[++i];
        int bad = 0;
        if (!strcmp(a, "--port")) bad = num_arg(a, v, 1, 65535, &g_opt.port);
        else if (!strcmp(a, "--http-port")) bad = num_arg(a, v, 0, 65535, &g_opt.http_port);
        else if (!strcmp(a, "--interval-ms")) bad = num_arg(a, v, 10, 3600000, &g_opt.interval_ms);
        else if (!strcmp(a, "--gc-s")) bad = num_arg(a, v, 1, 86400, &g_opt.gc_s);
        else if (!strcmp(a, "--max-trace-mb")) bad = num_arg(a, v, 1, 1 << 20, &max_mb);
        else if (!strcmp(a, "--capture-margin-s")) bad = num_arg(a, v, 1, 86400, &g_opt.capture_margin_s);
        else if (!strcmp(a, "--iterations-timeout-s")) bad = num_arg(a, v, 1, 86400, &g_opt.iterations_timeout_s);
        else if (!strcmp(a, "--keep-captures")) bad = num_arg(a, v, 1, 1000000, &g_opt.keep_captures);
        else if (!strcmp(a, "--keep-mb")) bad = num_arg(a, v, 1, INT_MAX, &keep_mb);
        else if (!strcmp(a, "--listen")) g_opt.listen = v;
        else if (!strcmp(a, "--store")) g_opt.store = v;
        else if (!strcmp(a, "--s3-endpoint")) g_opt.s3_endpoint = v;
        else if (!strcmp(a, "--s3-region")) g_opt.s3_region = v;
        else if (!strcmp(a, "--trace-dir")) g_opt.trace_dir = v;
        else if (!strcmp(a, "--token-file")) g_opt.token_file = v;
        else if (!strcmp(a, "--ipc-dir")) g_opt.ipc_dir = v;
        else if (!strcmp(a, "--nvml-lib")) g_opt.nvml_lib = v;
        else if (!strcmp(a, "--dcgm-lib")) g_opt.dcgm_lib = v;
        else if (!strcmp(a, "--host")) snprintf(g_opt.host, sizeof g_opt.host, "%s", v);
        else {
            fprintf(stderr, "htad: unknown option %s\nTry 'htad --help'.\n", a);
            return -1;
        }
        if (bad) return -1;
    }
    g_opt.max_trace_bytes = (int64_t)max_mb << 20;
    g_opt.keep_bytes = (int64_t)keep_mb << 20;
    if (!g_opt.host[0] && gethostname(g_opt.host, sizeof g_opt.host - 1)) snprintf(g_opt.host, sizeof g_opt.host, "host");
    /* the host name becomes part of file names */
    for (char *p = g_opt.host; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.", *p)) *p = '-';
    /* which htad this is, where several share a store (an NFS folder): its host and request port, never
     * both in use by two htads at once; the capture folders it makes carry it (store.c) */
    snprintf(g_opt.instance, sizeof g_opt.instance, "%s:%d", g_opt.host, g_opt.port);
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const char *p = g_opt.instance; *p; p++) h = (h ^ (unsigned char)*p) * 16777619u;
    snprintf(g_opt.tag, sizeof g_opt.tag, "%08x", (unsigned)h);
    return 0;
}

static int is_loopback(const struct sockaddr_storage *a) {
    if (a->ss_family == AF_INET) return (ntohl(((const struct sockaddr_in *)a)->sin_addr.s_addr) >> 24) == 127;
    if (a->ss_family == AF_INET6) {
        const struct in6_addr *x = &((const struct sockaddr_in6 *)a)->sin6_addr;
        if (IN6_IS_ADDR_LOOPBACK(x)) return 1;
        return IN6_IS_ADDR_V4MAPPED(x) && x->s6_addr[12] == 127;
    }
    return 0;
}

static int listen_tcp(const char *addr, int port, int *loopback_only) {
    char ps[16];
    snprintf(ps, sizeof ps, "%d", port);
    struct addrinfo hints = {0}, *ai;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST;
    int gr = getaddrinfo(addr, ps, &hints, &ai);
    if (gr) {
        fprintf(stderr, "htad: --listen %s: %s\n", addr, gai_strerror(gr));
        return -1;
    }
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int one = 1;
    if (fd >= 0) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    /* a long accept queue (the kernel caps it at somaxconn): in a flood of connections a legitimate
     * client's is queued, not dropped to wait for the SYN retry (1 s, then 3 s) */
    if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 4096)) {
        fprintf(stderr, "htad: cannot listen on %s port %d: %s\n", addr, port, strerror(errno));
        if (fd >= 0) close(fd);
        freeaddrinfo(ai);
        return -1;
    }
    struct sockaddr_storage ss = {0};
    memcpy(&ss, ai->ai_addr, ai->ai_addrlen);
    *loopback_only = is_loopback(&ss);
    freeaddrinfo(ai);
    return fd;
}

static int read_token(void) {
    int fd = open(g_opt.token_file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) {
        fprintf(stderr, "htad: %s: %s\n", g_opt.token_file, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode) || (st.st_mode & 077)) {
        fprintf(stderr, "htad: %s: must be a regular file readable by its owner only (chmod 600)\n", g_opt.token_file);
        close(fd);
        return -1;
    }
    ssize_t n = read(fd, g_opt.token, sizeof g_opt.token - 1);
    close(fd);
    if (n < 0) n = 0;
    g_opt.token[n] = 0;
    g_opt.token[strcspn(g_opt.token, "\r\n")] = 0;
    if (!hta_token_ok(g_opt.token)) {
        fprintf(stderr, "htad: %s: the token must have 16 to %d printable ASCII characters, without spaces, "
                        "quotes or backslashes\n", g_opt.token_file, HTA_TOKEN_MAX);
        return -1;
    }
    return 0;
}

static int trace_dir_setup(void) {
    static char real[PATH_MAX];
    struct stat st;
    if (lstat(g_opt.trace_dir, &st)) {
        if (errno != ENOENT || mkdir(g_opt.trace_dir, 01777) || chmod(g_opt.trace_dir, 01777)) {
            fprintf(stderr, "htad: --trace-dir %s: %s\n", g_opt.trace_dir, strerror(errno));
            return -1;
        }
    } else if (!S_ISDIR(st.st_mode)) {
        fprintf(stderr, "htad: --trace-dir %s: not a folder (a link is not followed)\n", g_opt.trace_dir);
        return -1;
    }
    if (!realpath(g_opt.trace_dir, real)) {
        fprintf(stderr, "htad: --trace-dir %s: %s\n", g_opt.trace_dir, strerror(errno));
        return -1;
    }
    g_opt.trace_dir = real;
    if (strncmp(real, "/tmp/", 5))
        htad_log("note: libkineto accepts trace paths outside /tmp only with KINETO_ONDEMAND_TRACE_DIR=%s", real);
    return 0;
}

static int ipc_open(struct sockaddr_un *me) {
    unsigned len;
    hta_error err = {0};
    if (hta_ipc_addr(g_opt.ipc_dir, HTA_IPC_DAEMON_NAME, me, &len, &err)) {
        fprintf(stderr, "htad: %s\n", err.msg);
        return -1;
    }
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return -1;
    if (g_opt.ipc_dir && *g_opt.ipc_dir) unlink(me->sun_path);
    if (bind(fd, (struct sockaddr *)me, len)) {
        fprintf(stderr, "htad: cannot bind the IPC socket %s%s: %s%s\n", g_opt.ipc_dir && *g_opt.ipc_dir ? "" : "@",
                g_opt.ipc_dir && *g_opt.ipc_dir ? me->sun_path : HTA_IPC_DAEMON_NAME, strerror(errno),
                errno == EADDRINUSE ? " (is another htad or dynolog running?)" : "");
        close(fd);
        return -1;
    }
    if (g_opt.ipc_dir && *g_opt.ipc_dir) chmod(me->sun_path, 0666); /* every user's processes poll */
    int one = 1; /* every datagram then carries its sender's pid and uid, from the kernel */
    if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof one)) {
        fprintf(stderr, "htad: SO_PASSCRED: %s\n", strerror(errno));
        close(fd);
        return -1;
    }
    int buf = 1 << 20;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
    return fd;
}

/* A dropped datagram is logged, one line per second at most: a flood does not flood the log. */
static void ipc_drop(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void ipc_drop(const char *fmt, ...) {
    static int64_t last;
    static unsigned long quiet;
    pthread_mutex_lock(&mu);
    g_polls_dropped_total++;
    pthread_mutex_unlock(&mu);
    int64_t now = htad_mono_ms();
    if (now - last < 1000) {
        quiet++;
        return;
    }
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    htad_log("IPC: %s: dropped%s", msg, quiet ? " (and more in the last second)" : "");
    last = now;
    quiet = 0;
}

static void ipc_handle(int fd) {
    static unsigned char in[65536], out[65536];
    for (int k = 0; k < 256; k++) { /* drain, but let the loop breathe */
        struct sockaddr_un from;
        union {
            struct cmsghdr h;
            char b[CMSG_SPACE(sizeof(struct ucred))];
        } cb;
        struct iovec iov = {in, sizeof in};
        struct msghdr mh = {.msg_name = &from, .msg_namelen = sizeof from, .msg_iov = &iov, .msg_iovlen = 1,
                            .msg_control = cb.b, .msg_controllen = sizeof cb.b};
        ssize_t n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (n < 0) return;
        socklen_t fl = mh.msg_namelen;
        /* the sender, as the kernel says (SO_PASSCRED): the only identity a poll is matched by */
        struct ucred cr = {0, 0, 0};
        int have = 0;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
            if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS && c->cmsg_len >= CMSG_LEN(sizeof cr)) {
                memcpy(&cr, CMSG_DATA(c), sizeof cr);
                have = 1;
            } else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
                int *fds = (int *)CMSG_DATA(c); /* descriptors nobody asked for */
                for (size_t q = 0; q < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); q++) close(fds[q]);
            }
        }
        hta_ipc_msg m;
        hta_error err = {0};
        if (hta_ipc_parse(in, (size_t)n, &m, &err)) {
            ipc_drop("%s", err.msg);
            continue;
        }
        if (g_opt.ipc_dir && *g_opt.ipc_dir) {
            /* filesystem mode: only peers in the same folder (dynolog's rule, without its abort) */
            size_t dl = strlen(g_opt.ipc_dir);
            if (fl <= offsetof(struct sockaddr_un, sun_path) || strncmp(from.sun_path, g_opt.ipc_dir, dl) ||
                from.sun_path[dl] != '/') {
                ipc_drop("a datagram from outside %s", g_opt.ipc_dir);
                continue;
            }
        }
        htad_peer peer;
        if (!have || cr.pid <= 0 || (!htad_known_peer(cr.pid, cr.uid, &peer) && htad_peer_lookup(cr.pid, &peer))) {
            ipc_drop("a datagram whose sender the kernel does not name (pid %d)", (int)cr.pid);
            continue;
        }
        peer.uid = cr.uid;
        size_t rl = 0;
        if (!strncmp(m.type, "req", 3)) {
            hta_ipc_req r;
            if (hta_ipc_parse_req(&m, &r, &err)) {
                ipc_drop("%s", err.msg);
                continue;
            }
            if (r.pids[0] != peer.pids[0]) { /* a poll in another process's name */
                ipc_drop("process %d (uid %u) polls as pid %d", (int)peer.pids[0], (unsigned)cr.uid, (int)r.pids[0]);
                continue;
            }
            hta_sbuf cfg = {0};
            htad_on_req(&r, &peer, &cfg);
            rl = hta_ipc_build(out, sizeof out, "req", cfg.p, cfg.oom ? 0 : cfg.len);
            hta_sb_free(&cfg);
        } else if (!strncmp(m.type, "ctxt", 4)) {
            if (m.size != 16) continue;
            int32_t gpu, pid, cnt;
            int64_t job;
            memcpy(&gpu, m.payload, 4);
            memcpy(&pid, m.payload + 4, 4);
            memcpy(&job, m.payload + 8, 8);
            if (pid != peer.pids[0]) {
                ipc_drop("process %d (uid %u) registers a context as pid %d", (int)peer.pids[0], (unsigned)cr.uid,
                         (int)pid);
                continue;
            }
            cnt = htad_on_ctxt(job, gpu, &peer);
            rl = hta_ipc_build(out, sizeof out, "ctxt", &cnt, 4);
        } else {
            continue;
        }
        if (rl && sendto(fd, out, rl, MSG_DONTWAIT, (struct sockaddr *)&from, fl) < 0 && !g_opt.quiet)
            htad_log("IPC: reply: %s", strerror(errno));
    }
}

int main(int argc, char **argv) {
    if (parse(argc, argv)) return 2;
    int lo_rpc = 1, lo_http = 1;
    if (g_opt.token_file && read_token()) return 2;
    if (trace_dir_setup()) return 1;
    /* signals are taken by the main loop (signalfd); every thread inherits the mask */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);
    int sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
    int rfd = listen_tcp(g_opt.listen, g_opt.port, &lo_rpc);
    if (rfd < 0) return 1;
    int hfd = -1;
    if (g_opt.http_port && (hfd = listen_tcp(g_opt.listen, g_opt.http_port, &lo_http)) < 0) return 1;
    if ((!lo_rpc || !lo_http) && !g_opt.token[0]) {
        fprintf(stderr, "htad: listening on %s (not loopback) needs --token-file\n", g_opt.listen);
        return 2;
    }
    struct sockaddr_un me;
    int ifd = ipc_open(&me);
    if (ifd < 0) return 1;
    hta_error err = {0};
    if (htad_store_open(g_opt.store, &err) || htad_store_start(&err)) {
        fprintf(stderr, "htad: --store %s: %s\n", g_opt.store, err.msg);
        return 1;
    }
    htad_metrics_init();
    /* every connection is a descriptor: room for both ports' (the soft limit is often 1024) */
    struct rlimit rl;
    if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < 4 * HTAD_CONN_PER_PORT) {
        rl.rlim_cur = rl.rlim_max < 4 * HTAD_CONN_PER_PORT ? rl.rlim_max : 4 * HTAD_CONN_PER_PORT;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (htad_conn_start(rfd, hfd, &err)) {
        fprintf(stderr, "htad: %s\n", err.msg);
        return 1;
    }
    int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    struct itimerspec its = {{g_opt.interval_ms / 1000, (g_opt.interval_ms % 1000) * 1000000L},
                             {g_opt.interval_ms / 1000, (g_opt.interval_ms % 1000) * 1000000L}};
    timerfd_settime(tfd, 0, &its, NULL);
    htad_log("listening: requests %s:%d, /metrics %s, IPC %s%s, store %s, traces in %s", g_opt.listen, g_opt.port,
             g_opt.http_port ? "on" : "off", g_opt.ipc_dir && *g_opt.ipc_dir ? me.sun_path : "@",
             g_opt.ipc_dir && *g_opt.ipc_dir ? "" : HTA_IPC_DAEMON_NAME, g_opt.store, g_opt.trace_dir);
    if (g_opt.http_port) htad_log("/metrics on port %d", g_opt.http_port);
    int64_t next_tick = htad_mono_ms();
    for (;;) {
        struct pollfd p[3] = {{ifd, POLLIN, 0}, {sfd, POLLIN, 0}, {tfd, POLLIN, 0}};
        int64_t wait = next_tick - htad_mono_ms();
        int r = poll(p, 3, wait < 0 ? 0 : (int)wait);
        if (r < 0 && errno != EINTR) break;
        if (p[0].revents) ipc_handle(ifd);
        if (p[1].revents) {
            struct signalfd_siginfo si;
            if (read(sfd, &si, sizeof si) > 0) {
                htad_log("signal %u: shutting down", si.ssi_signo);
                break;
            }
        }
        if (p[2].revents) {
            uint64_t x;
            if (read(tfd, &x, sizeof x) > 0) htad_metrics_sample();
        }
        if (htad_mono_ms() >= next_tick) {
            htad_tick();
            next_tick = htad_mono_ms() + 200;
        }
    }
    /* clean shutdown: no new requests; running ones finish (10 s at most, S3 transfers included);
     * traces already found are stored completely; the socket file goes */
    htad_set_stop_by(htad_mono_ms() + 10000);
    close(ifd);
    if (g_opt.ipc_dir && *g_opt.ipc_dir) unlink(me.sun_path);
    htad_conn_stop();
    htad_tick();        /* traces already written go to the store */
    htad_store_drain();
    htad_tick();        /* captures they complete get their metrics file */
    htad_store_stop();
    htad_store_close();
    htad_metrics_close();
    pthread_mutex_lock(&mu);
    htad_registry_free();
    pthread_mutex_unlock(&mu);
    close(tfd);
    close(sfd);
    htad_log("stopped");
    return 0;
}
