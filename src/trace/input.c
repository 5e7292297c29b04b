/* One trace file as a stream of JSON bytes: plain reads, or gzip (any number
 * of members) inflated block by block with ISA-L's igzip (zlib where ISA-L is
 * absent), so memory stays bounded whatever the file's size.  Errors name
 * the file and the compressed byte offset.  A gzip file is inflated by a
 * thread of its own a few blocks ahead of the parser (struct ahead), so the
 * two overlap as `igzip -dc FILE | parser` would. */
#include "trace/input.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef HTA_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#else
#include <zlib.h>
#endif

#define INBUF (1u << 18)
/* the inflating thread's blocks: AHEAD_N of AHEAD_BLOCK bytes it may be ahead of the parser */
#define AHEAD_BLOCK (1u << 20)
#define AHEAD_N 4

/* The inflating thread and the parser share these under mu: blocks head - tail are made and not yet
 * read (the parser has read pos bytes of block tail).  The thread alone touches the hta_input's gzip
 * state until done; the parser reads cut_at and consumed only after. */
typedef struct ahead {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    char *blk[AHEAD_N];
    size_t len[AHEAD_N];
    uint64_t consumed_after[AHEAD_N]; /* file bytes consumed once the block was made */
    size_t head, tail, pos;
    int done, stop;
    hta_status st; /* of the thread's last read, with err */
    hta_error err;
    uint64_t consumed_seen; /* file bytes behind the JSON the parser has read */
} ahead;

struct hta_input {
    const char *path;
    int fd;
    int gz;
    int eof;         /* no more file bytes */
    int member_done; /* current gzip member finished */
    int finished;
    uint64_t cut_at; /* gzip data ended before its member did: the compressed offset (0: not cut) */
    uint64_t size, consumed; /* file bytes read, and consumed by inflate */
    unsigned char *in;
    size_t in_pos, in_len;
#ifdef HTA_HAVE_ISAL
    struct inflate_state st;
#else
    z_stream zs;
#endif
    ahead *ah; /* a gzip file's inflating thread, NULL when reads inflate in the caller's thread */
};

static hta_status read_gz(hta_input *in, char *buf, size_t cap, size_t *got, hta_error *err);

static hta_status fill(hta_input *in, hta_error *err) {
    if (in->in_pos < in->in_len || in->eof) return HTA_OK;
    ssize_t k;
    do k = read(in->fd, in->in, INBUF);
    while (k < 0 && errno == EINTR);
    if (k < 0) return hta_fail(err, HTA_EIO, "%s: read error: %s", in->path, strerror(errno));
    in->in_pos = 0;
    in->in_len = (size_t)k;
    if (k == 0) in->eof = 1;
    return HTA_OK;
}

static void start_member(hta_input *in) {
#ifdef HTA_HAVE_ISAL
    isal_inflate_init(&in->st);
    in->st.crc_flag = ISAL_GZIP;
#else
    inflateReset(&in->zs);
#endif
    in->member_done = 0;
}

/* The inflating thread: blocks until the file ends, fails, or the reader closes it. */
static void *ahead_main(void *arg) {
    hta_input *in = arg;
    ahead *a = in->ah;
    for (;;) {
        pthread_mutex_lock(&a->mu);
        while (a->head - a->tail == AHEAD_N && !a->stop) pthread_cond_wait(&a->cv, &a->mu);
        int stop = a->stop;
        pthread_mutex_unlock(&a->mu);
        if (stop) break;
        size_t i = a->head % AHEAD_N, got = 0;
        hta_error e;
        hta_status st = read_gz(in, a->blk[i], AHEAD_BLOCK, &got, &e);
        pthread_mutex_lock(&a->mu);
        if (st) {
            a->st = st;
            a->err = e;
            a->done = 1;
        } else if (!got) {
            a->done = 1;
        } else {
            a->len[i] = got;
            a->consumed_after[i] = in->consumed;
            a->head++;
        }
        int done = a->done;
        pthread_cond_broadcast(&a->cv);
        pthread_mutex_unlock(&a->mu);
        if (done) break;
    }
    return NULL;
}

/* Starts the inflating thread; without memory or a thread, reads inflate in the caller's thread. */
static void ahead_start(hta_input *in) {
    ahead *a = calloc(1, sizeof *a);
    if (!a) return;
    int k = 0;
    for (; k < AHEAD_N; k++)
        if (!(a->blk[k] = malloc(AHEAD_BLOCK))) break;
    if (k == AHEAD_N) {
        pthread_mutex_init(&a->mu, NULL);
        pthread_cond_init(&a->cv, NULL);
        in->ah = a;
        if (pthread_create(&a->th, NULL, ahead_main, in) == 0) return;
        in->ah = NULL;
        pthread_mutex_destroy(&a->mu);
        pthread_cond_destroy(&a->cv);
    }
    for (int i = 0; i < k; i++) free(a->blk[i]);
    free(a);
}

static void ahead_stop(hta_input *in) {
    ahead *a = in->ah;
    pthread_mutex_lock(&a->mu);
    a->stop = 1;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
    pthread_join(a->th, NULL);
    pthread_mutex_destroy(&a->mu);
    pthread_cond_destroy(&a->cv);
    for (int i = 0; i < AHEAD_N; i++) free(a->blk[i]);
    free(a);
    in->ah = NULL;
}

/* The parser's read from the inflating thread's blocks: what was inflated before a failure comes
 * first, the failure with the next read. */
static hta_status read_ahead(hta_input *in, char *buf, size_t cap, size_t *got, hta_error *err) {
    ahead *a = in->ah;
    size_t n = 0;
    hta_status st = HTA_OK;
    pthread_mutex_lock(&a->mu);
    while (n < cap) {
        while (a->tail == a->head && !a->done) pthread_cond_wait(&a->cv, &a->mu);
        if (a->tail == a->head) {
            /* the thread has finished: its reads of the file are over */
            a->consumed_seen = in->consumed;
            if (a->st && n == 0) {
                st = a->st;
                if (err) *err = a->err;
            }
            break;
        }
        size_t i = a->tail % AHEAD_N, k = a->len[i] - a->pos;
        if (k > cap - n) k = cap - n;
        pthread_mutex_unlock(&a->mu);
        memcpy(buf + n, a->blk[i] + a->pos, k);
        pthread_mutex_lock(&a->mu);
        n += k;
        a->pos += k;
        if (a->pos == a->len[i]) {
            a->consumed_seen = a->consumed_after[i];
            a->tail++;
            a->pos = 0;
            pthread_cond_broadcast(&a->cv);
        }
    }
    pthread_mutex_unlock(&a->mu);
    *got = n;
    return st;
}

hta_status hta_input_refuse_archive(const char *path, hta_error *err) {
    static const char *const ext[] = {".tar.gz", ".tgz", ".tar", ".zip", ".tar.bz2", ".tar.xz", ".tar.zst"};
    size_t l = strlen(path);
    for (size_t i = 0; i < sizeof ext / sizeof *ext; i++) {
        size_t e = strlen(ext[i]);
        if (l > e && !strcasecmp(path + l - e, ext[i]))
            return hta_fail(err, HTA_EFORMAT, "%s: an archive (%s): hta reads .json and .json.gz traces; extract %s "
                            "first", path, ext[i] + 1, path);
    }
    return HTA_OK;
}

hta_status hta_input_open(const char *path, hta_input **out, hta_error *err) {
    *out = NULL;
    HTA_TRY(hta_input_refuse_archive(path, err));
    /* O_NONBLOCK so that a FIFO (or a device) given as the trace cannot block the open for ever: it is
     * refused just below.  A trace is read more than once (the rank probe, derived traces stream it
     * again) and its size drives the progress, so only regular files are traces; the flag is cleared
     * before any read. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) return hta_fail(err, HTA_EIO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        hta_status st = hta_fail(err, HTA_EIO, "%s: %s", path, strerror(errno));
        close(fd);
        return st;
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return hta_fail(err, HTA_EIO, "%s: not a regular file (%s): hta reads a trace more than once; save it to a "
                        "file first", path,
                        S_ISFIFO(sb.st_mode) ? "a FIFO" : S_ISCHR(sb.st_mode) ? "a character device" :
                        S_ISBLK(sb.st_mode) ? "a block device" : S_ISSOCK(sb.st_mode) ? "a socket" : "a folder");
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    hta_input *in = calloc(1, sizeof *in);
    unsigned char *buf = malloc(INBUF);
    if (!in || !buf) {
        free(in);
        free(buf);
        close(fd);
        return hta_fail(err, HTA_ENOMEM, "%s: out of memory", path);
    }
    in->path = path;
    in->fd = fd;
    in->in = buf;
    in->size = (uint64_t)sb.st_size;
#ifdef HTA_HAVE_ISAL
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
    hta_status st = fill(in, err);
    if (st) {
        hta_input_close(in);
        return st;
    }
    in->gz = in->in_len >= 2 && in->in[0] == 0x1f && in->in[1] == 0x8b;
    if (in->gz) {
#ifndef HTA_HAVE_ISAL
        if (inflateInit2(&in->zs, 15 + 16) != Z_OK) {
            hta_input_close(in);
            return hta_fail(err, HTA_ENOMEM, "%s: cannot start zlib", path);
        }
#endif
        start_member(in);
        ahead_start(in);
    }
    *out = in;
    return HTA_OK;
}

static hta_status read_plain(hta_input *in, char *buf, size_t cap, size_t *got, hta_error *err) {
    size_t n = 0;
    /* bytes already buffered (the magic-number probe), then straight into buf */
    while (n < cap && in->in_pos >= in->in_len && !in->eof) {
        ssize_t k = read(in->fd, buf + n, cap - n);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return hta_fail(err, HTA_EIO, "%s: read error: %s", in->path, strerror(errno));
        if (k == 0) in->eof = 1;
        n += (size_t)k;
        in->consumed += (uint64_t)k;
    }
    while (n < cap) {
        hta_status st = fill(in, err);
        if (st) return st;
        if (in->in_pos >= in->in_len) break;
        size_t k = in->in_len - in->in_pos;
        if (k > cap - n) k = cap - n;
        memcpy(buf + n, in->in + in->in_pos, k);
        in->in_pos += k;
        in->consumed += k;
        n += k;
    }
    *got = n;
    return HTA_OK;
}

/* After a member ends: another member, zero padding, or garbage. */
static hta_status next_member(hta_input *in, hta_error *err) {
    for (;;) {
        hta_status st = fill(in, err);
        if (st) return st;
        if (in->in_pos >= in->in_len) {
            in->finished = 1;
            return HTA_OK;
        }
        unsigned char c = in->in[in->in_pos];
        if (c == 0) { /* padding some writers leave */
            in->in_pos++;
            in->consumed++;
            continue;
        }
        if (c != 0x1f)
            return hta_fail(err, HTA_EFORMAT, "%s: byte %llu: trailing garbage after gzip data",
                            in->path, (unsigned long long)in->consumed);
        start_member(in);
        return HTA_OK;
    }
}

static hta_status read_gz(hta_input *in, char *buf, size_t cap, size_t *got, hta_error *err) {
    size_t n = 0;
    while (n < cap && !in->finished) {
        if (in->member_done) {
            hta_status st = next_member(in, err);
            if (st) return st;
            continue;
        }
        hta_status st = fill(in, err);
        if (st) return st;
        size_t avail = in->in_len - in->in_pos;
        if (avail == 0 && in->eof) {
            /* cut short: what was inflated is the input; the JSON reader judges it */
            in->cut_at = in->consumed ? in->consumed : 1;
            in->finished = 1;
            break;
        }
        size_t want = cap - n;
        if (want > UINT32_MAX) want = UINT32_MAX;
#ifdef HTA_HAVE_ISAL
        in->st.next_in = in->in + in->in_pos;
        in->st.avail_in = (uint32_t)avail;
        in->st.next_out = (uint8_t *)buf + n;
        in->st.avail_out = (uint32_t)want;
        int rc = isal_inflate(&in->st);
        size_t used = avail - in->st.avail_in;
        size_t made = want - in->st.avail_out;
        if (rc < 0)
            return hta_fail(err, HTA_EFORMAT, "%s: byte %llu: corrupt gzip data (%s)", in->path,
                            (unsigned long long)(in->consumed + used),
                            rc == ISAL_INCORRECT_CHECKSUM ? "checksum mismatch"
                            : rc == ISAL_INVALID_WRAPPER  ? "bad gzip header"
                                                          : "invalid deflate stream");
        int done = in->st.block_state == ISAL_BLOCK_FINISH;
#else
        in->zs.next_in = in->in + in->in_pos;
        in->zs.avail_in = (uInt)avail;
        in->zs.next_out = (Bytef *)buf + n;
        in->zs.avail_out = (uInt)want;
        int rc = inflate(&in->zs, Z_NO_FLUSH);
        size_t used = avail - in->zs.avail_in;
        size_t made = want - in->zs.avail_out;
        if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR)
            return hta_fail(err, HTA_EFORMAT, "%s: byte %llu: corrupt gzip data (%s)", in->path,
                            (unsigned long long)(in->consumed + used),
                            in->zs.msg ? in->zs.msg : "inflate error");
        int done = rc == Z_STREAM_END;
#endif
        in->in_pos += used;
        in->consumed += used;
        n += made;
        if (done) in->member_done = 1;
        else if (used == 0 && made == 0 && in->eof) {
            in->cut_at = in->consumed ? in->consumed : 1;
            in->finished = 1;
        }
    }
    *got = n;
    return HTA_OK;
}

hta_status hta_input_read(hta_input *in, char *buf, size_t cap, size_t *got, hta_error *err) {
    if (in->ah) return read_ahead(in, buf, cap, got, err);
    return in->gz ? read_gz(in, buf, cap, got, err) : read_plain(in, buf, cap, got, err);
}

hta_status hta_input_seek(hta_input *in, uint64_t off, hta_error *err) {
    if (in->gz) return hta_fail(err, HTA_EINVAL, "%s: a gzip file cannot be read from the middle", in->path);
    if (lseek(in->fd, (off_t)off, SEEK_SET) < 0)
        return hta_fail(err, HTA_EIO, "%s: seek: %s", in->path, strerror(errno));
    in->in_pos = in->in_len = 0;
    in->eof = 0;
    in->consumed = off;
    return HTA_OK;
}

void hta_input_close(hta_input *in) {
    if (!in) return;
    if (in->ah) ahead_stop(in);
#ifndef HTA_HAVE_ISAL
    if (in->gz) inflateEnd(&in->zs);
#endif
    if (in->fd >= 0) close(in->fd);
    free(in->in);
    free(in);
}

int hta_input_is_gzip(const hta_input *in) { return in->gz; }
uint64_t hta_input_bytes_in(const hta_input *in) { return in->ah ? in->ah->consumed_seen : in->consumed; }
uint64_t hta_input_cut_at(const hta_input *in) { return in->cut_at; }
uint64_t hta_input_file_size(const hta_input *in) { return in->size; }
const char *hta_input_path(const hta_input *in) { return in->path; }
