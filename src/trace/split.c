/* One large plain-JSON rank file parsed by several threads (issue 36): the file is cut into byte ranges,
 * each range's start moved to what looks like an event's '{' (a '}' ',' '{' with white space between),
 * the ranges parsed at once into builders of their own (parse.c, hta_parse_chunk), and the parts joined
 * in file order into the rank's builder, so that the rows, symbols, threads and streams are exactly the
 * ones one thread gives.
 *
 * A guessed start may lie inside a string that holds "},{"; it is never trusted.  Each chunk's parse
 * runs on past its range until it reaches a later chunk's start as an event's '{', which proves that
 * start right (the parser there is in the state a parse from the file's start has); a start it goes
 * past is a wrong guess and that chunk is dropped, its bytes parsed by the chunk before.  Anything
 * unusual in a chunk that counts (an error, a file cut short, a limit passed only by the whole) makes
 * the file parse again by one thread from its start, so errors and their byte offsets are one
 * thread's too. */
#include "trace/split.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/bigbuf.h"
#include "hta/util.h"
#include "trace/parse.h"

/* join(): a limit of the whole file passed, or a key met twice: one thread parses the file again */
#define JOIN_AGAIN HTA_EFORMAT

/* The bytes looked at around a cut for an event's start. */
#define WINDOW (1u << 20)
/* Below this many bytes per chunk the threads cost more than they save (HTA_SPLIT_MIN sets it: tests
 * split tiny files). */
#define MIN_CHUNK (16u << 20)
#define MAX_CHUNKS 64

typedef struct chunk {
    hta_rank *r;
    rank_build b;
    parse_chunk pc;
    hta_status st;
    hta_error err;
} chunk;

typedef struct split {
    const char *path;
    chunk *c;
    size_t n;
    hta_progress_fn progress;
    void *pctx;
    uint64_t size, span0; /* the file's bytes, chunk 0's share */
} split;

static uint64_t min_chunk(void) {
    const char *e = getenv("HTA_SPLIT_MIN");
    long long v = e && *e ? atoll(e) : 0;
    return v > 0 ? (uint64_t)v : MIN_CHUNK;
}

static int is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

/* The offset of the first '{' at or after off that follows '}' and ',' (white space between), within
 * WINDOW bytes; 0 when there is none. */
static uint64_t find_start(int fd, uint64_t off, char *buf) {
    ssize_t k;
    do k = pread(fd, buf, WINDOW, (off_t)off);
    while (k < 0 && errno == EINTR);
    if (k <= 0) return 0;
    for (ssize_t i = 0; i < k; i++) {
        if (buf[i] != '{') continue;
        ssize_t j = i - 1;
        while (j >= 0 && is_ws(buf[j])) j--;
        if (j < 0 || buf[j] != ',') continue;
        j--;
        while (j >= 0 && is_ws(buf[j])) j--;
        if (j >= 0 && buf[j] == '}') return off + (uint64_t)i;
    }
    return 0;
}

/* Chunk 0's progress, scaled to the file: it reads span0 of the size bytes. */
static void chunk0_progress(void *ctx, uint64_t done, uint64_t total) {
    split *s = ctx;
    (void)total;
    uint64_t d = s->span0 ? done * s->size / s->span0 : done;
    s->progress(s->pctx, d < s->size ? d : s->size, s->size);
}

/* Chunk k, on the first thread free: chunk 0 reports the progress. */
static void parse_one(void *arg, size_t k) {
    split *s = arg;
    chunk *c = &s->c[k];
    if (k == 0 || !c->b.sym) {
        if (k) c->st = HTA_ENOMEM;
        else c->st = hta_parse_chunk(s->path, &c->b, &c->pc, s->progress ? chunk0_progress : NULL, s, &c->err);
        return;
    }
    c->st = hta_parse_chunk(s->path, &c->b, &c->pc, NULL, NULL, &c->err);
}

/* The copy of a chunk's args and columns into b, renumbered (join): one item a column, taken by the
 * threads at once.  Column by column, b's column grows and the chunk's is freed once copied, so the peak
 * memory holds a few columns twice, not the whole chunk (mremap'd columns, bigbuf.h). */
typedef struct copy_job {
    rank_build *b;
    hta_rank *q;
    const uint32_t *map, *tm;
    const uint16_t *cm, *sm;
    size_t n0, a0, need;
    uint64_t ev_off;
    atomic_int next, nomem;
} copy_job;
#define COPY_ITEMS 11

static void *copy_worker(void *arg) {
    copy_job *j = arg;
    hta_rank *r = j->b->r, *q = j->q;
    const uint32_t *map = j->map, *tm = j->tm;
    const uint16_t *cm = j->cm, *sm = j->sm;
    size_t n0 = j->n0, need = j->need, cap = j->b->cap;
    uint32_t ev_off = (uint32_t)j->ev_off, a0 = (uint32_t)j->a0;
#define COPY_COL(col, v)                                                                          \
    do {                                                                                          \
        if (need > cap) {                                                                         \
            void *g = hta_big_realloc(r->col, need * sizeof *r->col);                             \
            if (!g) {                                                                             \
                atomic_store(&j->nomem, 1);                                                       \
                break;                                                                            \
            }                                                                                     \
            r->col = g;                                                                           \
        }                                                                                         \
        for (size_t i = 0; i < q->n; i++) r->col[n0 + i] = (v);                                  \
        hta_big_free(q->col), q->col = NULL;                                                      \
    } while (0)
    for (int k; (k = atomic_fetch_add(&j->next, 1)) < COPY_ITEMS;) {
        switch (k) {
        case 0:
            for (size_t i = 0; i < q->nargs; i++) {
                hta_arg a = q->args[i];
                a.key = map[a.key] & (HTA_ARG_MAX_KEY - 1);
                if (a.type == HTA_V_STR || a.type == HTA_V_JSON) a.v.sym = map[a.v.sym];
                r->args[a0 + i] = a;
            }
            hta_big_free(q->args), q->args = NULL;
            break;
        case 1: COPY_COL(ts, q->ts[i]); break;
        case 2: COPY_COL(dur, q->dur[i]); break;
        case 3: COPY_COL(correlation, q->correlation[i]); break;
        case 4: COPY_COL(external_id, q->external_id[i]); break;
        case 5: COPY_COL(name, map[q->name[i]]); break;
        case 6: COPY_COL(thread, tm[q->thread[i]]); break;
        case 7: COPY_COL(index, q->index[i] + ev_off); break;
        case 8: COPY_COL(args_off, q->args_off[i] + a0); break;
        case 9: COPY_COL(cat, cm[q->cat[i]]); break;
        default: COPY_COL(stream, sm[q->stream[i]]); break;
        }
    }
#undef COPY_COL
    return NULL;
}

/* Appends chunk c's rows, args, flows, threads, names and metadata to b (the chunks before it), its
 * local symbols, categories, streams and threads re-numbered in b's first-seen order: the numbering one
 * parse of the whole file gives.  ev_off: the events before the chunk.  JOIN_AGAIN: a limit of the whole
 * file passed (parse it again in one thread, which words the error). */
static hta_status join(rank_build *b, chunk *c, uint64_t ev_off, size_t threads) {
    hta_rank *r = b->r, *q = c->r;
    rank_build *cb = &c->b;
    hta_status st = HTA_ENOMEM;
    uint32_t nl = hta_symtab_count(cb->sym);
    uint32_t *map = malloc(((size_t)nl + 1) * sizeof *map);
    uint16_t *cm = malloc((cb->ncats + 1) * sizeof *cm), *sm = malloc((q->nstreams + 1) * sizeof *sm);
    uint32_t *tm = malloc((q->nthreads + 1) * sizeof *tm);
    if (!map || !cm || !sm || !tm) goto out;
    for (uint32_t i = 0; i < nl; i++)
        if ((map[i] = hta_symtab_intern(b->sym, hta_sym(cb->sym, i), hta_sym_len(cb->sym, i))) == UINT32_MAX)
            goto out;
    for (size_t i = 0; i < cb->ncats; i++) {
        uint32_t g = map[cb->cats[i]];
        if ((st = rank_build_cat(b, hta_sym(b->sym, g), hta_sym_len(b->sym, g), &cm[i]))) goto limit;
    }
    for (size_t i = 0; i < q->nstreams; i++)
        if ((st = rank_build_stream(b, q->streams[i], &sm[i]))) goto limit;
    for (size_t i = 0; i < q->nthreads; i++) {
        const hta_thread *t = &q->threads[i];
        if ((st = rank_build_thread(b, t->pid, t->tid, t->pid_sym >= 0 ? (int64_t)map[t->pid_sym] : -1,
                                    t->tid_sym >= 0 ? (int64_t)map[t->tid_sym] : -1, &tm[i])))
            goto limit;
    }
    size_t n0 = r->n, a0 = r->nargs, f0 = r->nflows;
    if (ev_off + q->n_events > UINT32_MAX || a0 + q->nargs > UINT32_MAX) goto again;
    /* an arg's key is a 28-bit field (trace.h): the whole file's symbols can pass it where no chunk's
     * did (one thread's parse then says where) */
    if (hta_symtab_count(b->sym) > HTA_ARG_MAX_KEY) goto again;
    st = HTA_ENOMEM;
    if (rank_build_reserve(b, 0, a0 + q->nargs, f0 + q->nflows)) goto out;
    size_t need = n0 + q->n;
    copy_job j = {.b = b, .q = q, .map = map, .tm = tm, .cm = cm, .sm = sm, .n0 = n0, .a0 = a0, .need = need,
                  .ev_off = ev_off};
    atomic_init(&j.next, 0);
    atomic_init(&j.nomem, 0);
    hta_parallel(threads, COPY_ITEMS, copy_worker, &j);
    if (atomic_load(&j.nomem)) goto out;
    if (need > b->cap) b->cap = need;
    for (size_t i = 0; i < q->nflows; i++) {
        hta_flow f = q->flows[i];
        f.index += (uint32_t)ev_off;
        f.thread = tm[f.thread];
        /* no category: the file's symbol 0, as one parse writes it (parse.h) */
        f.cat = f.cat == UINT32_MAX ? 0 : map[f.cat];
        r->flows[f0 + i] = f;
    }
    r->n += q->n;
    r->nargs += q->nargs;
    r->nflows += q->nflows;
    for (size_t i = 0; i < cb->nnames; i++) {
        const meta_name *m = &cb->names[i];
        if (rank_build_name(b, m->pid, m->tid, m->is_thread, map[m->value])) goto out;
    }
    for (size_t i = 0; i < q->nmeta; i++) {
        if (rank_build_meta(b, q->meta[i].key, strlen(q->meta[i].key), q->meta[i].json,
                            strlen(q->meta[i].json)))
            goto out;
    }
    /* the rank's fields that top-level keys set: a key met on both sides of the events (written twice)
     * is left to one thread's parse */
    if (cb->top_keys & b->top_keys) goto again;
    if (cb->top_keys & TOP_DIST) b->dist_rank = cb->dist_rank, r->world_size = q->world_size;
    if (cb->top_keys & TOP_BASE) r->base_time_ns = q->base_time_ns;
    if (cb->top_keys & TOP_MERGE) {
        merge_info_free(&b->merge);
        b->merge = cb->merge;
        memset(&cb->merge, 0, sizeof cb->merge);
    }
    b->top_keys |= cb->top_keys;
    r->n_events += q->n_events;
    if (q->t_min < r->t_min) r->t_min = q->t_min;
    if (q->t_max > r->t_max) r->t_max = q->t_max;
    r->ts_fractional |= q->ts_fractional;
    r->dur_not_int |= q->dur_not_int;
    r->pid_text |= q->pid_text;
    r->tid_text |= q->tid_text;
    r->bytes_in = q->bytes_in;
    r->bytes_json = q->bytes_json;
    st = HTA_OK;
    goto out;
limit:
    if (st != HTA_ENOMEM) st = JOIN_AGAIN;
    goto out;
again:
    st = JOIN_AGAIN;
out:
    free(map);
    free(cm);
    free(sm);
    free(tm);
    return st;
}

static void chunk_free(chunk *c) {
    if (c->b.sym) hta_symtab_free(c->b.sym);
    rank_build_free_scratch(&c->b);
    rank_free(c->r);
}

/* Where the chunks start: the file's start, then an event's start near each equal cut.  n: how many
 * chunks the threads and the file's size allow (0 or 1: no split). */
static size_t plan(const char *path, size_t threads, uint64_t *starts, int *array_form, uint64_t *size) {
    if (threads < 2) return 1;
    /* not blocking on a FIFO given as the trace: hta_input_open refuses it with its message */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) return 1;
    struct stat sb;
    char *buf = NULL;
    size_t n = 1;
    if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) goto out;
    *size = (uint64_t)sb.st_size;
    size_t want = threads > MAX_CHUNKS ? MAX_CHUNKS : threads;
    uint64_t per = min_chunk();
    if (*size / per < want) want = (size_t)(*size / per);
    if (want < 2 || !(buf = malloc(WINDOW))) goto out;
    /* the first byte: a gzip file is read as a stream (no split); '[' is Chrome's bare array */
    ssize_t k = pread(fd, buf, 4096, 0);
    ssize_t i = 0;
    while (i < k && is_ws(buf[i])) i++;
    if (i >= k || (buf[i] != '{' && buf[i] != '[')) goto out;
    *array_form = buf[i] == '[';
    starts[0] = 0;
    for (size_t c = 1; c < want; c++) {
        uint64_t at = find_start(fd, *size / want * c, buf);
        if (at > starts[n - 1]) starts[n++] = at;
    }
out:
    free(buf);
    close(fd);
    return n;
}

hta_status hta_parse_split(const char *path, rank_build *b, size_t threads, hta_progress_fn progress,
                           void *pctx, hta_error *err) {
    uint64_t starts[MAX_CHUNKS], size = 0;
    int array_form = 0;
    size_t n = plan(path, threads, starts, &array_form, &size);
    if (n < 2) return hta_parse_file(path, b, progress, pctx, err);
    split s = {.path = path, .n = n, .progress = progress, .pctx = pctx, .size = size, .span0 = starts[1]};
    chunk *c = calloc(n, sizeof *c);
    if (!c) return hta_fail(err, HTA_ENOMEM, "%s: out of memory", path);
    s.c = c;
    c[0].r = b->r;
    c[0].b = *b;
    for (size_t k = 0; k < n; k++) {
        c[k].pc.start = starts[k];
        c[k].pc.array_form = array_form;
        c[k].pc.stops = starts + k + 1;
        c[k].pc.nstops = n - k - 1;
        if (k && (c[k].r = calloc(1, sizeof *c[k].r))) {
            c[k].r->world_size = -1;
            c[k].r->base_time_ns = INT64_MIN;
            if (rank_build_init(&c[k].b, c[k].r)) {
                if (c[k].b.sym) hta_symtab_free(c[k].b.sym);
                c[k].b.sym = NULL;
            } else {
                c[k].r->t_min = INT64_MAX;
                c[k].r->t_max = INT64_MIN;
            }
        }
    }
    hta_parallel_items((int)threads, n, parse_one, &s);
    *b = c[0].b;
    /* the chain of proven chunks: 0, then the one each reached.  A failure in it (chunk 0's included)
     * is worded by one thread's parse below. */
    hta_status st = HTA_OK;
    uint64_t ev_off = b->r->n_events, dur_sum = c[0].pc.dur_sum;
    int again = c[0].st != HTA_OK || b->cut;
    for (size_t k = 0; !again && c[k].pc.landed < c[k].pc.nstops;) {
        k += 1 + c[k].pc.landed;
        if (c[k].st || c[k].b.cut) {
            again = 1;
            break;
        }
        dur_sum += c[k].pc.dur_sum;
        hta_status js = join(b, &c[k], ev_off, threads);
        if (js == HTA_ENOMEM) {
            st = hta_fail(err, HTA_ENOMEM, "%s: out of memory", path);
            break;
        }
        if (js) again = 1;
        ev_off += c[k].r->n_events;
    }
    if (dur_sum > (uint64_t)HTA_TIME_MAX_NS) again = 1;
    for (size_t k = 1; k < n; k++) chunk_free(&c[k]);
    if (!st && again) {
        /* one thread's parse, from the start: its result or its error */
        if (rank_build_restart(b)) st = hta_fail(err, HTA_ENOMEM, "%s: out of memory", path);
        else st = hta_parse_file(path, b, progress, pctx, err);
    }
    free(c);
    return st;
}
