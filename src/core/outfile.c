/* The one writer of libhta's output files (hta/outfile.h): what the path names decides how it is
 * written (a temporary file renamed over a regular file or a missing path; a FIFO, a character device
 * or a /proc fd link written through), temporary files are created exclusively under unpredictable
 * names and listed in a fixed table that a signal handler can empty, and every error names the path
 * the caller gave and what the system said. */
#include "hta/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BUF (1u << 16)
#define MAX_LINKS 40 /* Linux's own limit on links followed in one lookup */

enum { REPLACE, THROUGH, APPEND };

struct hta_outfile {
    char *path;   /* as given: every message names it */
    char *target; /* REPLACE: the path renamed over (path with its final links followed) */
    char *tmp;    /* REPLACE: the temporary file */
    int mode, fd, slot;
    int had_target;      /* REPLACE: the target existed when opened */
    dev_t dev;           /* the file written or replaced (hta_outfile_is) */
    ino_t ino;
    unsigned char *buf;
    size_t n;
};

/* ---------- temporary files a signal handler can remove ----------
 * A fixed table, so that the handler needs no lock and no allocation: a slot is claimed (1) while its
 * path is written, armed (2) once the file exists, and freed (0) after the rename or the unlink.  The
 * handler only reads armed slots.  Signals are blocked in this thread around create + arm and rename +
 * disarm, so that neither a temporary file without its slot nor a slot without its file is seen. */
#define NSLOT 64
static struct {
    atomic_int state;
    char path[PATH_MAX];
} slots[NSLOT];

void hta_outfile_remove_temps(void) {
    for (int i = 0; i < NSLOT; i++)
        if (atomic_load(&slots[i].state) == 2) unlink(slots[i].path);
}

static int slot_claim(const char *path) {
    if (strlen(path) >= PATH_MAX) return -1;
    for (int i = 0; i < NSLOT; i++) {
        int free_ = 0;
        if (atomic_compare_exchange_strong(&slots[i].state, &free_, 1)) {
            strcpy(slots[i].path, path);
            return i;
        }
    }
    return -1; /* more than NSLOT outputs at once: still written, only not removed on a signal */
}

static void block_signals(sigset_t *old) {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, old);
}
static void restore_signals(const sigset_t *old) { pthread_sigmask(SIG_SETMASK, old, NULL); }

/* ---------- paths ---------- */

static char *dir_of(const char *p) {
    const char *s = strrchr(p, '/');
    if (!s) return strdup(".");
    if (s == p) return strdup("/");
    return strndup(p, (size_t)(s - p));
}

static const char *base_of(const char *p) {
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static int under_proc(const char *real) { return !strncmp(real, "/proc/", 6) || !strcmp(real, "/proc"); }

int hta_rank_file_name(const char *n) {
    size_t l = strlen(n);
    if (n[0] == '.') return 0;
    return (l > 5 && !strcmp(n + l - 5, ".json")) || (l > 3 && !strcmp(n + l - 3, ".gz"));
}

static const char *kind_of(mode_t m) {
    return S_ISDIR(m) ? "a folder" : S_ISSOCK(m) ? "a socket" : S_ISBLK(m) ? "a block device" :
           S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device" : "not a regular file";
}

/* Follows the final symbolic links of path (its folders resolve as the system resolves them):
 * *mode says how it is written, *target (REPLACE) what is renamed over, *sb the object when it
 * exists (*exists).  A link whose folder lies in /proc (/dev/stdout -> /proc/self/fd/1) is the
 * kernel's link to an open file, not a name: the object it leads to is written through. */
static hta_status resolve(const char *path, int *mode, char **target, struct stat *sb, int *exists,
                          hta_error *err) {
    *target = NULL;
    *exists = 0;
    char *cur = strdup(path);
    if (!cur) return hta_oom(err);
    hta_status st = HTA_OK;
    for (int hops = 0;; hops++) {
        if (hops > MAX_LINKS) {
            st = hta_fail(err, HTA_EIO, "%s: %s", path, strerror(ELOOP));
            break;
        }
        if (lstat(cur, sb) != 0) {
            if (errno != ENOENT) {
                st = hta_fail(err, HTA_EIO, "%s: %s", path, strerror(errno));
                break;
            }
            *mode = REPLACE; /* nothing there (or a link to nothing): created */
            *target = cur;
            return HTA_OK;
        }
        if (!S_ISLNK(sb->st_mode)) break;
        char *dir = dir_of(cur), *rdir = dir ? realpath(dir, NULL) : NULL;
        int e = errno;
        free(dir);
        if (!rdir) {
            st = hta_fail(err, HTA_EIO, "%s: %s", path, strerror(e));
            break;
        }
        if (under_proc(rdir)) {
            free(rdir);
            if (stat(path, sb) != 0) {
                st = hta_fail(err, HTA_EIO, "%s: %s", path, strerror(errno));
                break;
            }
            *exists = 1;
            if (S_ISFIFO(sb->st_mode) || S_ISCHR(sb->st_mode)) *mode = THROUGH;
            else if (S_ISREG(sb->st_mode)) *mode = APPEND;
            else st = hta_fail(err, HTA_EINVAL, "%s: %s: cannot write a file there", path, kind_of(sb->st_mode));
            free(cur);
            return st;
        }
        char link[PATH_MAX];
        ssize_t k = readlink(cur, link, sizeof link - 1);
        if (k < 0) {
            free(rdir);
            st = hta_fail(err, HTA_EIO, "%s: %s", path, strerror(errno));
            break;
        }
        link[k] = 0;
        size_t l = strlen(rdir) + (size_t)k + 2;
        char *next = malloc(l);
        if (!next) {
            free(rdir);
            st = hta_oom(err);
            break;
        }
        if (link[0] == '/') memcpy(next, link, (size_t)k + 1);
        else snprintf(next, l, "%s/%s", rdir, link);
        free(rdir);
        free(cur);
        cur = next;
    }
    if (st) {
        free(cur);
        return st;
    }
    *exists = 1;
    if (S_ISREG(sb->st_mode)) {
        *mode = REPLACE;
        *target = cur;
        return HTA_OK;
    }
    free(cur);
    if (S_ISFIFO(sb->st_mode) || S_ISCHR(sb->st_mode)) {
        *mode = THROUGH;
        return HTA_OK;
    }
    if (S_ISDIR(sb->st_mode)) return hta_fail(err, HTA_EINVAL, "%s: is a folder, not a file", path);
    return hta_fail(err, HTA_EINVAL, "%s: %s: hta writes only regular files, FIFOs and character devices",
                    path, kind_of(sb->st_mode));
}

/* ---------- the temporary file ---------- */

/* 10 characters of [0-9A-Za-z]: getrandom, or (where it fails) the clock, the pid and a counter
 * mixed by splitmix64; O_EXCL makes a guessed name harmless either way. */
static void random_chars(char *s, size_t n) {
    static const char al[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    unsigned char b[16];
    if (getrandom(b, n, GRND_NONBLOCK) != (ssize_t)n) {
        static atomic_uint_fast64_t ctr;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ ((uint64_t)getpid() << 40) ^
                     atomic_fetch_add(&ctr, 1) * 0x9e3779b97f4a7c15ull;
        for (size_t i = 0; i < n; i++) {
            x += 0x9e3779b97f4a7c15ull;
            uint64_t z = x;
            z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
            z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
            b[i] = (unsigned char)(z ^ (z >> 31));
        }
    }
    for (size_t i = 0; i < n; i++) s[i] = al[b[i] % 62];
    s[n] = 0;
}

/* Creates o->tmp beside o->target: ".NAME.tmp-XXXXXXXXXX" (hidden, so the loader never takes a
 * leftover for a rank; the name cut to stay within NAME_MAX). */
static hta_status create_temp(hta_outfile *o, hta_error *err) {
    char *dir = dir_of(o->target);
    if (!dir) return hta_oom(err);
    const char *base = base_of(o->target);
    int bl = (int)strnlen(base, 200);
    size_t l = strlen(dir) + (size_t)bl + 32;
    o->tmp = malloc(l);
    if (!o->tmp) {
        free(dir);
        return hta_oom(err);
    }
    hta_status st = HTA_OK;
    for (int tries = 0;; tries++) {
        char rnd[16];
        random_chars(rnd, 10);
        snprintf(o->tmp, l, "%s/.%.*s.tmp-%s", dir, bl, base, rnd);
        sigset_t old;
        block_signals(&old);
        o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
        int e = errno;
        if (o->fd >= 0) {
            o->slot = slot_claim(o->tmp);
            if (o->slot >= 0) atomic_store(&slots[o->slot].state, 2);
        }
        restore_signals(&old);
        if (o->fd >= 0) break;
        if (e == EEXIST && tries < 100) continue;
        st = hta_fail(err, HTA_EIO, "%s: cannot create a file in %s: %s", o->path, dir, strerror(e));
        break;
    }
    free(dir);
    return st;
}

static void unarm(hta_outfile *o) {
    if (o->slot >= 0) atomic_store(&slots[o->slot].state, 0);
    o->slot = -1;
}

/* ---------- the writer ---------- */

static void out_free(hta_outfile *o) {
    free(o->path);
    free(o->target);
    free(o->tmp);
    free(o->buf);
    free(o);
}

hta_status hta_outfile_open(const char *path, hta_outfile **out, hta_error *err) {
    *out = NULL;
    hta_outfile *o = calloc(1, sizeof *o);
    if (!o) return hta_oom(err);
    o->fd = -1;
    o->slot = -1;
    o->path = strdup(path);
    o->buf = malloc(BUF);
    if (!o->path || !o->buf) {
        out_free(o);
        return hta_oom(err);
    }
    struct stat sb;
    hta_status st = resolve(path, &o->mode, &o->target, &sb, &o->had_target, err);
    if (!st && o->mode == REPLACE) {
        if (o->had_target) {
            o->dev = sb.st_dev;
            o->ino = sb.st_ino;
        }
        st = create_temp(o, err);
    } else if (!st) {
        /* a FIFO blocks here until a reader opens it, as the shell's > does */
        int fl = O_WRONLY | O_CLOEXEC | O_NOCTTY | (o->mode == APPEND ? O_APPEND : 0);
        do o->fd = open(path, fl);
        while (o->fd < 0 && errno == EINTR);
        if (o->fd < 0) st = hta_fail(err, HTA_EIO, "%s: cannot open: %s", path, strerror(errno));
        else if (fstat(o->fd, &sb) == 0) {
            o->dev = sb.st_dev;
            o->ino = sb.st_ino;
        }
    }
    if (st) {
        if (o->fd >= 0) close(o->fd);
        out_free(o);
        return st;
    }
    *out = o;
    return HTA_OK;
}

static hta_status write_all(hta_outfile *o, const unsigned char *p, size_t n, hta_error *err) {
    while (n) {
        ssize_t k = write(o->fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return hta_fail(err, HTA_EIO, "%s: write error: %s", o->path, strerror(k < 0 ? errno : EIO));
        p += k;
        n -= (size_t)k;
    }
    return HTA_OK;
}

static hta_status flush(hta_outfile *o, hta_error *err) {
    size_t n = o->n;
    o->n = 0;
    return n ? write_all(o, o->buf, n, err) : HTA_OK;
}

hta_status hta_outfile_write(hta_outfile *o, const void *data, size_t len, hta_error *err) {
    const unsigned char *p = data;
    if (!len) return HTA_OK;
    if (o->n + len > BUF) {
        HTA_TRY(flush(o, err));
        if (len >= BUF) return write_all(o, p, len, err);
    }
    memcpy(o->buf + o->n, p, len);
    o->n += len;
    return HTA_OK;
}

hta_status hta_outfile_close(hta_outfile *o, int commit, hta_error *err) {
    if (!o) return HTA_OK;
    hta_status st = commit ? flush(o, err) : HTA_OK;
    /* close reports what a file system kept back until then (NFS, quotas) */
    if (close(o->fd) != 0 && commit && !st)
        st = hta_fail(err, HTA_EIO, "%s: write error: %s", o->path, strerror(errno));
    if (o->mode == REPLACE) {
        struct stat sb;
        if (commit && !st && lstat(o->target, &sb) == 0 && !S_ISREG(sb.st_mode))
            st = hta_fail(err, HTA_EIO, "%s: became %s while it was written; left as it is", o->path,
                          S_ISLNK(sb.st_mode) ? "a symbolic link" : kind_of(sb.st_mode));
        sigset_t old;
        block_signals(&old);
        if (commit && !st && rename(o->tmp, o->target) != 0)
            st = hta_fail(err, HTA_EIO, "%s: cannot put the file in place: %s", o->path, strerror(errno));
        if (!commit || st) unlink(o->tmp);
        unarm(o);
        restore_signals(&old);
    }
    out_free(o);
    return st;
}

const char *hta_outfile_path(const hta_outfile *o) { return o->path; }

int hta_outfile_is(const hta_outfile *o, const char *path) {
    struct stat sb;
    if (o->mode == REPLACE && !o->had_target) return 0;
    return stat(path, &sb) == 0 && sb.st_dev == o->dev && sb.st_ino == o->ino;
}

/* ---------- outputs against inputs ---------- */

hta_status hta_output_check(const char *out, const char *in, hta_error *err) {
    struct stat si, so;
    if (!out || !in || stat(in, &si) != 0) return HTA_OK; /* the loader reports a missing input */
    if (stat(out, &so) == 0 && so.st_dev == si.st_dev && so.st_ino == si.st_ino)
        return hta_fail(err, HTA_EINVAL, "%s is the input %s: refusing to write over it", out, in);
    /* an output that cannot be written (a folder, a socket, a loop of links) is reported now too, before
     * the input is read; the file that would appear in the folder is the path with its links followed */
    int mode, exists;
    char *target;
    HTA_TRY(resolve(out, &mode, &target, &so, &exists, err));
    if (!S_ISDIR(si.st_mode) || mode != REPLACE) {
        free(target);
        return HTA_OK;
    }
    char *dir = dir_of(target);
    struct stat sd;
    int inside = dir && stat(dir, &sd) == 0 && sd.st_dev == si.st_dev && sd.st_ino == si.st_ino &&
                 hta_rank_file_name(base_of(target));
    free(dir);
    free(target);
    if (inside && exists)
        return hta_fail(err, HTA_EINVAL, "%s is one of the input files of the folder %s: refusing to write over it",
                        out, in);
    if (inside)
        return hta_fail(err, HTA_EINVAL,
                        "%s is in the input folder %s, where the next load would read it as one more rank; "
                        "write it to another folder (or under a name not ending in .json or .gz)",
                        out, in);
    return HTA_OK;
}

hta_status hta_output_dir_check(const char *outdir, const char *in, hta_error *err) {
    struct stat si, so;
    if (!outdir || !in || stat(in, &si) != 0 || !S_ISDIR(si.st_mode) || stat(outdir, &so) != 0) return HTA_OK;
    if (so.st_dev == si.st_dev && so.st_ino == si.st_ino)
        return hta_fail(err, HTA_EINVAL,
                        "%s is the input folder %s: the traces written there would be read as more ranks the "
                        "next time it is loaded; write them to another folder",
                        outdir, in);
    return HTA_OK;
}
