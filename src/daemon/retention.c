/* Retention of a folder store (docs/capture.md, "Retention"): which capture folders are this htad's, and
 * the removal of the oldest of them once they were fetched.  Several htads may share one store (an NFS
 * folder on a cluster), and a store may hold a person's own files: a folder is this htad's only when it
 * carries its marker (.htad-capture: the host and instance, written when the folder is made), and only
 * the files it wrote there are ever removed.  A capture is removed only once a file of it was fetched
 * (.htad-fetched) and it is finished; --keep-captures and --keep-mb count those captures only, so a capture
 * nobody has fetched yet is never lost to the limits. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/htad.h"
#include "hta/outfile.h"

#define OWNER ".htad-capture"
#define FETCHED ".htad-fetched"

static int owner_text(char *b, size_t n) {
    return snprintf(b, n, "htad capture folder\nhost %s\ninstance %s\n", g_opt.host, g_opt.instance);
}

/* 1 when the folder (an open directory) carries this htad's marker */
static int is_mine(int dfd) {
    char want[700], got[700];
    int n = owner_text(want, sizeof want);
    int fd = openat(dfd, OWNER, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return 0;
    struct stat st;
    ssize_t r = fstat(fd, &st) || !S_ISREG(st.st_mode) ? -1 : read(fd, got, sizeof got);
    close(fd);
    return r == n && !memcmp(got, want, (size_t)n);
}

hta_status htad_folder_claim(const char *folder, int made, hta_error *err) {
    if (!made) {
        int dfd = open(folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int mine = dfd >= 0 && is_mine(dfd);
        if (dfd >= 0) close(dfd);
        if (!mine)
            return hta_fail(err, HTA_EINVAL, "%s: a folder this htad (%s) did not make: nothing is written into it",
                            folder, g_opt.instance);
        return HTA_OK;
    }
    char path[PATH_MAX + 64], text[700];
    snprintf(path, sizeof path, "%s/" OWNER, folder);
    int n = owner_text(text, sizeof text);
    hta_outfile *o;
    HTA_TRY(hta_outfile_open(path, &o, err));
    hta_status st = hta_outfile_write(o, text, (size_t)n, err);
    if (st) {
        hta_outfile_close(o, 0, NULL);
        return st;
    }
    return hta_outfile_close(o, 1, err);
}

void htad_folder_fetched(const char *folder) {
    int dfd = open(folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0) return;
    if (is_mine(dfd)) {
        int fd = openat(dfd, FETCHED, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd >= 0) close(fd);
    }
    close(dfd);
}

/* A file this htad writes into its capture folders: HOST_*.json (traces), HOST.metrics.jsonl. */
static int written_here(const char *name) {
    size_t h = strlen(g_opt.host), n = strlen(name);
    if (strncmp(name, g_opt.host, h) || !hta_safe_name(name)) return 0;
    if (name[h] == '_' && n > h + 5 && !strcmp(name + n - 5, ".json")) return 1;
    return !strcmp(name + h, ".metrics.jsonl");
}

typedef struct kept {
    char name[256];
    int64_t t;     /* the capture's time: its id starts with the request's Unix ms */
    int64_t bytes;
} kept;

static int cmp_kept(const void *a, const void *b) {
    const kept *x = a, *y = b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* The bytes of the regular files directly in a folder; with do_remove, what this htad wrote there is
 * removed (and nothing else): its files, then its markers. */
static int64_t folder_bytes(int dfd, int do_remove) {
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return -1;
    }
    int64_t sum = 0;
    for (struct dirent *e; (e = readdir(d));) {
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode)) continue;
        sum += (int64_t)st.st_size;
        if (do_remove && written_here(e->d_name)) unlinkat(dirfd(d), e->d_name, 0);
    }
    if (do_remove) {
        unlinkat(dirfd(d), FETCHED, 0);
        unlinkat(dirfd(d), OWNER, 0); /* last: a folder left with others' files is no longer this htad's */
    }
    closedir(d);
    return sum;
}

/* The in-memory capture of a removed folder: its stored traces say so (htaStatus never says "stored"
 * for a file that is gone). */
static void say_removed(const char *id) {
    pthread_mutex_lock(&mu);
    htad_capture *c = htad_capture_find(id);
    for (size_t k = 0; c && k < c->n; k++) {
        htad_trace *t = &c->tr[k];
        if (t->state != TR_STORED) continue;
        t->state = TR_REMOVED;
        snprintf(t->error, sizeof t->error, "removed by retention after it was fetched (--keep-captures %d, "
                 "--keep-mb %lld)", g_opt.keep_captures, (long long)(g_opt.keep_bytes >> 20));
    }
    pthread_mutex_unlock(&mu);
}

void htad_retention(const char *store) {
    DIR *d = opendir(store);
    if (!d) {
        htad_log("retention: %s: %s", store, strerror(errno));
        pthread_mutex_lock(&mu);
        g_retention_passes_total++;
        pthread_mutex_unlock(&mu);
        return;
    }
    kept *k = NULL;
    size_t n = 0, cap = 0;
    int64_t total = 0;
    for (struct dirent *e; (e = readdir(d));) {
        struct stat st;
        if (!hta_safe_name(e->d_name) || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
            !S_ISDIR(st.st_mode))
            continue;
        pthread_mutex_lock(&mu); /* a capture still running keeps its folder */
        const htad_capture *c = htad_capture_find(e->d_name);
        int running = c && !c->t_done_ms;
        pthread_mutex_unlock(&mu);
        if (running) continue;
        int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) continue;
        struct stat fs;
        int candidate = is_mine(fd) && !fstatat(fd, FETCHED, &fs, AT_SYMLINK_NOFOLLOW) && S_ISREG(fs.st_mode);
        int64_t bytes = candidate ? folder_bytes(fd, 0) : (close(fd), -1);
        if (bytes < 0) continue;
        if (n == cap) {
            kept *g = realloc(k, (cap = cap ? 2 * cap : 64) * sizeof *k);
            if (!g) break;
            k = g;
        }
        snprintf(k[n].name, sizeof k[n].name, "%s", e->d_name);
        k[n].t = strtoll(e->d_name, NULL, 10);
        k[n++].bytes = bytes;
        total += bytes;
    }
    if (n > 1) qsort(k, n, sizeof *k, cmp_kept);
    for (size_t q = 0; q < n && (n - q > (size_t)g_opt.keep_captures || total > g_opt.keep_bytes); q++) {
        int fd = openat(dirfd(d), k[q].name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) continue;
        folder_bytes(fd, 1);
        total -= k[q].bytes;
        say_removed(k[q].name);
        pthread_mutex_lock(&mu);
        g_captures_removed_total++;
        pthread_mutex_unlock(&mu);
        if (!unlinkat(dirfd(d), k[q].name, AT_REMOVEDIR)) {
            if (!g_opt.quiet) htad_log("retention: capture %s removed (%lld bytes)", k[q].name, (long long)k[q].bytes);
        } else {
            htad_log("retention: capture %s: its files removed; the folder stays, with files htad did not write",
                     k[q].name);
        }
    }
    free(k);
    closedir(d);
    pthread_mutex_lock(&mu);
    g_retention_passes_total++; /* after the pass: what it removed is gone by now */
    pthread_mutex_unlock(&mu);
}
