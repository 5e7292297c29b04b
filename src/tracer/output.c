/* Where a flush writes, chosen so that no trace is lost and nothing else is:
 *  - a missing file: its folders are made (mkdir -p), then a temporary file
 *    beside it (O_EXCL, random name, mode 0666 less the umask) is renamed in
 *    without replacing anything (renameat2 RENAME_NOREPLACE, else link());
 *  - a regular file this process wrote (same device and inode): replaced by
 *    rename(), so readers see the old or the new trace, never half of one;
 *  - a regular file it did not write (an older run's, another process's):
 *    kept; the trace goes to NAME.1.json (.2, ...) beside it, with a warning;
 *  - a FIFO or character device: written through, one whole document per
 *    flush (a FIFO without a reader is an error, not a hang);
 *    /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N write to the
 *    process's own descriptor N, at its offset, as a shell's > would;
 *  - anything else (a folder, a socket, a link to nothing): refused.
 * Every failure names the path and the errno text; the temporary file is
 * removed.  Called with the global lock held.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define MAX_SUFFIX 9999

static int fail(htat_out *o, int err, const char *what)
{
    htat_set_error(err, "cannot write %s: %s", o->path, what ? what : strerror(err));
    return HTA_TRACER_EIO;
}

/* ---- files this process wrote ---- */

static htat_owned *owned_find(const char *want)
{
    for (size_t i = 0; i < htat_g.nowned; i++)
        if (strcmp(htat_g.owned[i].want, want) == 0)
            return &htat_g.owned[i];
    return NULL;
}

static int owned_inode(const struct stat *st)
{
    for (size_t i = 0; i < htat_g.nowned; i++)
        if (htat_g.owned[i].dev == (unsigned long long)st->st_dev &&
            htat_g.owned[i].ino == (unsigned long long)st->st_ino)
            return 1;
    return 0;
}

/* Records that want was written to actual; 1 when actual is new for want. */
static int owned_set(const char *want, const char *actual, int suffix, const struct stat *st)
{
    htat_owned *o = owned_find(want);
    int changed = 1;
    if (!o) {
        htat_owned *n = realloc(htat_g.owned, (htat_g.nowned + 1) * sizeof *n);
        if (!n)
            return 1;
        htat_g.owned = n;
        o = &n[htat_g.nowned];
        o->want = strdup(want);
        o->actual = NULL;
        if (!o->want)
            return 1;
        htat_g.nowned++;
    } else if (o->actual && strcmp(o->actual, actual) == 0) {
        changed = 0;
    }
    if (changed) {
        char *a = strdup(actual);
        if (a) {
            free(o->actual);
            o->actual = a;
        }
    }
    o->suffix = suffix;
    o->dev = (unsigned long long)st->st_dev;
    o->ino = (unsigned long long)st->st_ino;
    return changed;
}

void htat_owned_clear(void)
{
    for (size_t i = 0; i < htat_g.nowned; i++) {
        free(htat_g.owned[i].want);
        free(htat_g.owned[i].actual);
    }
    free(htat_g.owned);
    htat_g.owned = NULL;
    htat_g.nowned = 0;
}

const char *htat_out_actual(const char *want)
{
    htat_owned *o = owned_find(want);
    return o && o->actual ? o->actual : want;
}

/* ---- names ---- */

/* base with ".n" before its extension: a/trace.json -> a/trace.1.json. */
static int suffixed(const char *base, int n, char *out, size_t cap)
{
    const char *slash = strrchr(base, '/');
    const char *name = slash ? slash + 1 : base;
    const char *dot = strrchr(name, '.');
    if (!dot || dot == name)
        dot = name + strlen(name);
    int len = snprintf(out, cap, "%.*s.%d%s", (int)(dot - base), base, n, dot);
    return len > 0 && (size_t)len < cap ? 0 : -1;
}

/* The descriptor a path names by convention, or -1. */
static int std_fd(const char *p)
{
    if (strcmp(p, "/dev/stdout") == 0)
        return 1;
    if (strcmp(p, "/dev/stderr") == 0)
        return 2;
    const char *d = NULL;
    if (strncmp(p, "/dev/fd/", 8) == 0)
        d = p + 8;
    else if (strncmp(p, "/proc/self/fd/", 14) == 0)
        d = p + 14;
    if (!d || !*d || strlen(d) > 9)
        return -1;
    for (const char *c = d; *c; c++)
        if (*c < '0' || *c > '9')
            return -1;
    return atoi(d);
}

static uint64_t random64(void)
{
    uint64_t r;
    static _Atomic uint64_t counter;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
        r = (uint64_t)htat_mono_ns() ^ (uint64_t)getpid() << 32 ^ atomic_fetch_add(&counter, 1);
    r += 0x9e3779b97f4a7c15u; /* splitmix64: spreads a weak fallback seed */
    r = (r ^ (r >> 30)) * 0xbf58476d1ce4e5b9u;
    r = (r ^ (r >> 27)) * 0x94d049bb133111ebu;
    return r ^ (r >> 31);
}

/* ---- the stream: stdio over our own write(), so that the first errno of a
 * failed write is kept for the message (ENOSPC, EFBIG, EPIPE...) ---- */

static ssize_t cookie_write(void *cookie, const char *buf, size_t n)
{
    htat_out *o = cookie;
    size_t done = 0;
    while (!o->err && done < n) {
        ssize_t w = write(o->fd, buf + done, n - done);
        if (w > 0) {
            done += (size_t)w;
        } else if (w < 0 && errno == EINTR) {
            continue;
        } else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            /* a non-blocking descriptor (someone's stdout): wait, but not forever */
            struct pollfd p = {.fd = o->fd, .events = POLLOUT};
            if (poll(&p, 1, 10000) <= 0)
                o->err = EAGAIN;
        } else {
            o->err = w < 0 ? errno : EIO;
        }
    }
    return (ssize_t)n; /* after an error the rest is dropped: the error is reported at commit */
}

static int make_stream(htat_out *o)
{
    static char iobuf[1 << 16]; /* one flush at a time (global lock) */
    cookie_io_functions_t io = {.write = cookie_write};
    o->f = fopencookie(o, "w", io);
    if (!o->f) {
        int err = errno;
        htat_out_abort(o);
        return fail(o, err, NULL);
    }
    setvbuf(o->f, iobuf, _IOFBF, sizeof iobuf);
    return HTA_TRACER_OK;
}

/* Writing through a pipe whose reader left raises SIGPIPE, which would kill
 * the traced program (at exit, even): it is held back and swallowed. */
static void sigpipe_hold(htat_out *o)
{
    sigset_t s, pend;
    sigemptyset(&s);
    sigaddset(&s, SIGPIPE);
    sigpending(&pend);
    o->sigpipe_pending = sigismember(&pend, SIGPIPE) == 1;
    o->sigpipe_blocked = pthread_sigmask(SIG_BLOCK, &s, &o->oldmask) == 0;
}

static void sigpipe_release(htat_out *o)
{
    if (!o->sigpipe_blocked)
        return;
    if (o->err == EPIPE && !o->sigpipe_pending) {
        sigset_t s;
        sigemptyset(&s);
        sigaddset(&s, SIGPIPE);
        struct timespec zero = {0, 0};
        sigtimedwait(&s, NULL, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &o->oldmask, NULL);
    o->sigpipe_blocked = 0;
}

static int open_through(htat_out *o, int fdnum)
{
    int fd;
    if (fdnum >= 0) {
        fd = fcntl(fdnum, F_DUPFD_CLOEXEC, 3);
        if (fd < 0) {
            int err = errno;
            char what[256];
            snprintf(what, sizeof what, "descriptor %d: %s", fdnum, strerror(err));
            return fail(o, err, what);
        }
    } else {
        /* O_NONBLOCK: a FIFO nobody reads fails with ENXIO instead of blocking forever */
        fd = open(o->path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0) {
            int err = errno;
            return fail(o, err, err == ENXIO ? "a FIFO with no reader (No such device or address)" : NULL);
        }
        int fl = fcntl(fd, F_GETFL);
        if (fl >= 0)
            fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    }
    o->fd = fd;
    o->through = 1;
    sigpipe_hold(o);
    return make_stream(o);
}

/* mkdir -p of the file's folder (mode 0777 less the umask). */
static int make_dirs(htat_out *o)
{
    char d[4096];
    snprintf(d, sizeof d, "%s", o->path);
    char *slash = strrchr(d, '/');
    if (!slash || slash == d)
        return HTA_TRACER_OK;
    *slash = 0;
    struct stat st;
    if (stat(d, &st) == 0 && S_ISDIR(st.st_mode))
        return HTA_TRACER_OK;
    for (char *p = d + 1;; p++) {
        if (*p != '/' && *p != 0)
            continue;
        char c = *p;
        *p = 0;
        if (mkdir(d, 0777) != 0) {
            int err = errno;
            if (err != EEXIST || stat(d, &st) != 0 || !S_ISDIR(st.st_mode)) {
                if (err == EEXIST)
                    err = ENOTDIR;
                char what[4200];
                snprintf(what, sizeof what, "cannot create folder %s: %s", d, strerror(err));
                return fail(o, err, what);
            }
        } else {
            htat_debug("created folder %s", d);
        }
        *p = c;
        if (!c)
            break;
    }
    return HTA_TRACER_OK;
}

static int open_tmp(htat_out *o)
{
    for (int tries = 0; tries < 100; tries++) {
        int len = snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%016llx", o->path, (unsigned long long)random64());
        if (len < 0 || (size_t)len >= sizeof o->tmp) {
            o->tmp[0] = 0;
            return fail(o, ENAMETOOLONG, NULL);
        }
        int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
        if (fd >= 0) {
            o->fd = fd;
            return make_stream(o);
        }
        if (errno != EEXIST) {
            int err = errno;
            o->tmp[0] = 0;
            return fail(o, err, NULL);
        }
    }
    o->tmp[0] = 0;
    return fail(o, EEXIST, "no free temporary name beside it");
}

/* Chooses the destination for o->path (the pattern's path, or where it went
 * before) and opens the stream. */
static int choose(htat_out *o)
{
    for (;;) {
        struct stat st, lst;
        if (stat(o->path, &st) != 0) {
            int err = errno;
            if (err != ENOENT)
                return fail(o, err, NULL);
            if (lstat(o->path, &lst) == 0)
                return fail(o, ENOENT, "a symbolic link to a missing file");
            int rc = make_dirs(o);
            return rc != HTA_TRACER_OK ? rc : open_tmp(o);
        }
        if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))
            return open_through(o, -1);
        if (S_ISDIR(st.st_mode))
            return fail(o, EISDIR, NULL);
        if (!S_ISREG(st.st_mode))
            return fail(o, EINVAL, "not a regular file, FIFO or character device");
        if (lstat(o->path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
            /* a link to a regular file: the rules apply to that file, in its folder */
            char real[PATH_MAX];
            if (!realpath(o->path, real))
                return fail(o, errno, NULL);
            snprintf(o->path, sizeof o->path, "%s", real);
            if (o->suffix == 0)
                snprintf(o->base, sizeof o->base, "%s", real);
            continue;
        }
        if (owned_inode(&st)) {
            o->replace = 1;
            return open_tmp(o);
        }
        /* someone else's file: kept; the next free NAME.n.json */
        do {
            if (++o->suffix > MAX_SUFFIX || suffixed(o->base, o->suffix, o->path, sizeof o->path) != 0) {
                snprintf(o->path, sizeof o->path, "%s", o->base);
                return fail(o, EEXIST, "it exists, was not written by this process, and no NAME.n is free");
            }
        } while (lstat(o->path, &lst) == 0 && !(S_ISREG(lst.st_mode) && owned_inode(&lst)));
    }
}

int htat_out_open(htat_out *o, const char *want)
{
    memset(o, 0, sizeof *o);
    o->fd = -1;
    snprintf(o->want, sizeof o->want, "%s", want);
    snprintf(o->base, sizeof o->base, "%s", want);
    snprintf(o->path, sizeof o->path, "%s", want);
    htat_clear_error();
    int fdnum = std_fd(want);
    if (fdnum >= 0)
        return open_through(o, fdnum);
    htat_owned *ow = owned_find(want);
    if (ow && ow->actual) {
        snprintf(o->path, sizeof o->path, "%s", ow->actual);
        o->suffix = ow->suffix;
    }
    return choose(o);
}

/* Moves tmp to path unless path exists: 0, or an errno. */
static int place_new(const char *tmp, const char *path)
{
    if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0)
        return 0;
    int err = errno;
    if (err != EINVAL && err != ENOSYS && err != ENOTSUP)
        return err;
    if (link(tmp, path) == 0) { /* filesystems without RENAME_NOREPLACE */
        unlink(tmp);
        return 0;
    }
    err = errno;
    if (err == EEXIST || (err != EPERM && err != ENOTSUP && err != ENOSYS))
        return err;
    /* no hard links either (FAT, some FUSE): check, then rename */
    struct stat st;
    if (lstat(path, &st) == 0)
        return EEXIST;
    return rename(tmp, path) == 0 ? 0 : errno;
}

void htat_out_abort(htat_out *o)
{
    if (o->f) {
        FILE *f = o->f;
        o->f = NULL;
        fclose(f);
    }
    if (o->fd >= 0) {
        close(o->fd);
        o->fd = -1;
    }
    if (o->tmp[0]) {
        unlink(o->tmp);
        o->tmp[0] = 0;
    }
    sigpipe_release(o);
}

int htat_out_commit(htat_out *o)
{
    if (fflush(o->f) != 0 && !o->err)
        o->err = errno ? errno : EIO;
    FILE *f = o->f;
    o->f = NULL;
    fclose(f);
    int err = o->err;
    struct stat st;
    if (!o->through) {
        /* on the disk before the rename: a crash leaves the old trace or the new one */
        if (!err && fsync(o->fd) != 0)
            err = errno;
        if (!err && fstat(o->fd, &st) != 0)
            err = errno;
    }
    if (close(o->fd) != 0 && !err && errno != EINTR)
        err = errno; /* NFS reports write errors here */
    o->fd = -1;
    if (err) {
        o->err = err;
        htat_out_abort(o);
        return fail(o, err, NULL);
    }
    if (o->through) {
        sigpipe_release(o);
        return HTA_TRACER_OK;
    }
    if (o->replace) {
        if (rename(o->tmp, o->path) != 0) {
            err = errno;
            htat_out_abort(o);
            return fail(o, err, NULL);
        }
    } else {
        while ((err = place_new(o->tmp, o->path)) != 0) {
            if (err != EEXIST || o->suffix >= MAX_SUFFIX ||
                suffixed(o->base, o->suffix + 1, o->path, sizeof o->path) != 0) {
                htat_out_abort(o);
                return fail(o, err, NULL);
            }
            o->suffix++; /* taken meanwhile (another process): the next name */
        }
    }
    o->tmp[0] = 0;
    if (owned_set(o->want, o->path, o->suffix, &st) && o->suffix)
        htat_warn("%s exists and was not written by this process: kept; this trace is in %s", o->base, o->path);
    return HTA_TRACER_OK;
}
