/* Finds the rank files, parses them in parallel threads, resolves ranks and
 * merges the rank-local symbol tables into one. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hta/outfile.h"
#include "hta/trace.h"
#include "hta/util.h"
#include "trace/derive.h"
#include "trace/input.h"
#include "trace/json_field.h"
#include "trace/legacy.h"
#include "hta/vocab.h"
#include "trace/merged.h"
#include "trace/listing.h"
#include "core/bigbuf.h"
#include "trace/parse.h"
#include "trace/split.h"
#include "trace/rank_build.h"
#include "core/vec.h"
#include "hta/rawtrace.h"
#include "hta/vocab.h"

/* One file to parse.  Each has its own builder and rank-local symbol table, so the parsing threads share
 * nothing but the pool's counter; the symbols become global afterwards, in one thread. */
typedef struct job {
    char *path;
    hta_rank *r;
    rank_build b;
    hta_status st;
    hta_error err;
} job;

typedef struct pool {
    job *jobs;
    size_t njobs;
    const hta_load_opts *opts;
    size_t split; /* threads per file: more threads than files parse each file in parts (split.c) */
} pool;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* File k, on the first thread free (files differ in size, so threads take them one at a time rather than
 * in fixed shares), its outcome recorded in its job: failures are looked at afterwards, in file order, so the
 * error reported does not depend on which thread got there first. */
static void load_one(void *arg, size_t k) {
    pool *p = arg;
    job *j = &p->jobs[k];
    double t0 = now_s();
    j->r = calloc(1, sizeof *j->r);
    if (!j->r || rank_build_init(&j->b, j->r)) {
        j->st = hta_fail(&j->err, HTA_ENOMEM, "%s: out of memory", j->path);
        return;
    }
    j->r->world_size = -1;
    /* "absent" until the file says otherwise (hta_rank): -1 and INT64_MIN are the markers trace.h
     * documents */
    j->r->base_time_ns = INT64_MIN;
    j->st = hta_parse_split(j->path, &j->b, p->split, p->opts->progress, p->opts->progress_ctx, &j->err);
    j->r->ev_end = j->r->n_events;
    if (!j->st && rank_build_finish(&j->b))
        j->st = hta_fail(&j->err, HTA_ENOMEM, "%s: out of memory", j->path);
    j->r->load_seconds = now_s() - t0;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void warnf(const hta_load_opts *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warnf(const hta_load_opts *o, const char *fmt, ...) {
    if (!o->warn) return;
    char msg[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    o->warn(o->warn_ctx, msg);
}

hta_status hta_list_rank_files(const char *path, const hta_load_opts *o, char ***files, size_t *nf,
                               hta_error *err) {
    struct stat sb;
    if (stat(path, &sb) != 0) return hta_fail(err, HTA_EIO, "%s: %s", path, strerror(errno));
    size_t cap = 0;
    *files = NULL;
    *nf = 0;
    /* A file is taken as given, whatever its name: the name rule only picks a folder's files. */
    if (!S_ISDIR(sb.st_mode)) {
        *files = malloc(sizeof **files);
        if (!*files || !((*files)[0] = strdup(path))) return hta_oom(err);
        *nf = 1;
        return HTA_OK;
    }
    DIR *d = opendir(path);
    if (!d) return hta_fail(err, HTA_EIO, "%s: %s", path, strerror(errno));
    struct dirent *de;
    while ((de = readdir(d))) {
        /* hidden files and . / .. are no traces, and are not listed (as ls does): the temporary files of
         * hta's writer (hta/outfile.h) are hidden, so a leftover one is never read as a rank */
        if (de->d_name[0] == '.') continue;
        size_t l = strlen(path) + strlen(de->d_name) + 2;
        char *full = malloc(l);
        if (!full) goto oom;
        snprintf(full, l, "%s%s%s", path, path[strlen(path) - 1] == '/' ? "" : "/", de->d_name);
        /* Only regular files can be traces (trace/input.c refuses the rest), and every file skipped is
         * named: a rank that silently goes missing changes every cross-rank answer.  Sub-folders are
         * named only when they are named like trace files. */
        /* an archive among the traces is named as one (exit 1), not read as broken JSON or skipped */
        if (hta_input_refuse_archive(full, err)) {
            free(full);
            closedir(d);
            return HTA_EFORMAT;
        }
        int named = hta_rank_file_name(de->d_name);
        struct stat fs;
        const char *why = NULL;
        char buf[256];
        if (stat(full, &fs) != 0) {
            int e = errno;
            struct stat ls;
            if (e == ENOENT && lstat(full, &ls) == 0 && S_ISLNK(ls.st_mode)) {
                why = "a symbolic link to nothing";
            } else {
                snprintf(buf, sizeof buf, "%s", strerror(e));
                why = buf;
            }
        } else if (S_ISDIR(fs.st_mode)) {
            if (!named) {
                free(full);
                continue;
            }
            why = "a folder";
        } else if (!S_ISREG(fs.st_mode)) {
            why = S_ISFIFO(fs.st_mode)  ? "a FIFO, not a regular file"
                  : S_ISSOCK(fs.st_mode) ? "a socket, not a regular file"
                                         : "a device, not a regular file";
        } else if (!named) {
            why = "not a .json or .gz trace file";
        } else {
            int fd = open(full, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
            if (fd < 0) {
                snprintf(buf, sizeof buf, "cannot open: %s", strerror(errno));
                why = buf;
            } else {
                close(fd);
            }
        }
        if (why) {
            warnf(o, "%s: skipped (%s)", full, why);
            free(full);
            continue;
        }
        if (HTA_GROW(*files, cap, *nf + 1)) {
            free(full);
            goto oom;
        }
        (*files)[(*nf)++] = full;
    }
    closedir(d);
    /* HTA gives a TraceAnalysis with no ranks here (Q4) and fails later; an error names the folder now. */
    if (*nf == 0) return hta_fail(err, HTA_ENODATA, "%s: no trace files (.json, .json.gz) in folder", path);
    /* readdir's order is the file system's (HTA's os.listdir is unspecified too); sorted, the file order
     * and the ranks it gives are the same on every machine */
    qsort(*files, *nf, sizeof **files, cmp_str);
    return HTA_OK;
oom: /* the caller frees the files listed so far */
    closedir(d);
    return hta_oom(err);
}

/* "rank-3", "rank_3", "rank3", "worker3", "node1_rank12" -> last such number.  A fallback of hta's: HTA
 * never looks at the file name and makes such a file rank 0 (TF§2, Q3). */
static int64_t rank_from_name(const char *path) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    int64_t found = -1;
    static const char *const words[] = {"rank", "worker", "Rank", "RANK"};
    for (size_t w = 0; w < sizeof words / sizeof *words; w++) {
        size_t wl = strlen(words[w]);
        for (const char *s = base; (s = strstr(s, words[w])); s += wl) {
            const char *q = s + wl;
            if (*q == '-' || *q == '_' || *q == '.') q++;
            if (!isdigit((unsigned char)*q)) continue;
            int64_t v = 0;
            /* capped, so that a long run of digits (a date, a job id) cannot overflow */
            while (isdigit((unsigned char)*q) && v < 100000000) v = v * 10 + (*q++ - '0');
            found = v;
        }
    }
    return found;
}

static int cmp_rank(const void *a, const void *b) {
    const hta_rank *x = *(hta_rank *const *)a, *y = *(hta_rank *const *)b;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* Re-encodes every local symbol of rank r into the global table.  Called rank by rank in ascending rank
 * order, so global ids are in first-seen order and the same on every run, whatever order the threads
 * finished in (HTA's depend on Python's hash seed, Q5). */
static hta_status merge_symbols(hta_trace *t, rank_build *b, uint32_t **cat_map_io, hta_error *err) {
    hta_rank *r = b->r;
    uint32_t nl = hta_symtab_count(b->sym);
    uint32_t *map = malloc((nl ? nl : 1) * sizeof *map);
    if (!map) return hta_oom(err);
    hta_status st = HTA_OK;
    for (uint32_t i = 0; i < nl; i++) {
        map[i] = hta_symtab_intern(t->sym, hta_sym(b->sym, i), hta_sym_len(b->sym, i));
        if (map[i] == UINT32_MAX) {
            st = hta_oom(err);
            goto out;
        }
    }
    for (size_t i = 0; i < r->n; i++) r->name[i] = map[r->name[i]];
    for (size_t i = 0; i < r->nargs; i++) {
        hta_arg *a = &r->args[i];
        uint32_t k = map[a->key];
        /* an arg's key is a 28-bit field (trace.h); the global table can pass that even when no rank's
         * local one did */
        if (k >= HTA_ARG_MAX_KEY) {
            st = hta_fail(err, HTA_EFORMAT, "%s: too many distinct strings over the ranks (args keys past %u)",
                          r->path, (unsigned)HTA_ARG_MAX_KEY);
            goto out;
        }
        a->key = k & (HTA_ARG_MAX_KEY - 1);
        if (a->type == HTA_V_STR || a->type == HTA_V_JSON) a->v.sym = map[a->v.sym];
    }
    for (size_t i = 0; i < r->nflows; i++) r->flows[i].cat = map[r->flows[i].cat];
    for (size_t i = 0; i < r->nthreads; i++) {
        hta_thread *th = &r->threads[i];
        if (th->pid_sym >= 0) th->pid_sym = map[th->pid_sym];
        if (th->tid_sym >= 0) th->tid_sym = map[th->tid_sym];
        if (th->thread_name >= 0) th->thread_name = map[th->thread_name];
        if (th->process_name >= 0) th->process_name = map[th->process_name];
    }
    /* categories: local index -> global category index */
    uint32_t *cm = realloc(*cat_map_io, (b->ncats ? b->ncats : 1) * sizeof *cm);
    if (!cm) {
        st = hta_oom(err);
        goto out;
    }
    *cat_map_io = cm;
    for (size_t c = 0; c < b->ncats; c++) {
        uint32_t g = map[b->cats[c]];
        size_t k = 0;
        while (k < t->ncats && t->cats[k] != g) k++;
        if (k == t->ncats) {
            /* the category column is uint16 */
            if (t->ncats >= UINT16_MAX) {
                st = hta_fail(err, HTA_EFORMAT, "%s: more than %u categories over the ranks", r->path,
                              (unsigned)UINT16_MAX);
                goto out;
            }
            uint32_t *nc = realloc(t->cats, (t->ncats + 1) * sizeof *nc);
            if (!nc) {
                st = hta_oom(err);
                goto out;
            }
            t->cats = nc;
            t->cats[t->ncats++] = g;
        }
        cm[c] = (uint32_t)k;
    }
    for (size_t i = 0; i < r->n; i++) r->cat[i] = (uint16_t)cm[r->cat[i]];
out:
    free(map);
    return st;
}

/* Probing a file's head for its rank: Kineto writes distributedInfo before
 * traceEvents, so the first block tells, and a file of an unselected rank is
 * never parsed.  The scan stops at distributedInfo or at the first event. */
typedef struct probe {
    int64_t rank; /* -1: the head does not say */
    int merged;   /* the head holds htaMerge (a merged trace) */
} probe;

static int probe_meta(void *ctx, const char *key, size_t klen, const char *json, size_t jlen) {
    if (klen == 8 && !memcmp(key, "htaMerge", 8)) ((probe *)ctx)->merged = 1;
    if (klen != 15 || memcmp(key, "distributedInfo", 15) || !jlen || json[0] != '{') return 0;
    char *txt = strndup(json, jlen);
    if (!txt) return 1;
    ((probe *)ctx)->rank = hta_json_int_field(txt, "rank");
    free(txt);
    return 1;
}

static int probe_event(void *ctx, uint32_t index, const char *json, size_t len) {
    (void)ctx, (void)index, (void)json, (void)len;
    return 1; /* events began without distributedInfo: only a full parse can tell */
}

int64_t hta_probe_rank(const char *path, int *merged) {
    probe p = {-1, 0};
    hta_raw_callbacks cb = {probe_meta, probe_event, &p};
    hta_error e;
    (void)hta_raw_scan(path, &cb, &e); /* stopped early on purpose; errors surface when parsed */
    if (merged) *merged = p.merged;
    return p.rank >= 0 && p.rank <= INT32_MAX ? p.rank : -1;
}

/* Each merged trace (hta merge) becomes the ranks its htaMerge lists (merged.c), in place of the one rank
 * it was loaded as; ranks stay in ascending order.  Runs after the symbols are global, so the cut ranks
 * share the whole file's symbols as they are. */
static hta_status split_merged(hta_trace *t, pool *p, const hta_load_opts *o, hta_error *err) {
    for (size_t i = 0; i < t->nranks; i++) {
        hta_rank *w = t->ranks[i];
        job *j = NULL;
        for (size_t k = 0; k < p->njobs; k++)
            if (p->jobs[k].st == HTA_OK && p->jobs[k].r == w) j = &p->jobs[k];
        if (!j || !j->b.merge.present) continue;
        hta_rank **parts;
        size_t np;
        const char *why;
        HTA_TRY(merged_split(t, w, &j->b.merge, &parts, &np, &why, err));
        if (!np) {
            warnf(o, "%s: a merged trace whose htaMerge cannot be used (%s): loaded as one rank", w->path, why);
            continue;
        }
        hta_rank **nr = realloc(t->ranks, (t->nranks + np - 1) * sizeof *nr);
        if (!nr) {
            for (size_t k = 0; k < np; k++) rank_free(parts[k]);
            free(parts);
            return hta_oom(err);
        }
        t->ranks = nr;
        memmove(&t->ranks[i + np], &t->ranks[i + 1], (t->nranks - i - 1) * sizeof *t->ranks);
        memcpy(&t->ranks[i], parts, np * sizeof *parts);
        t->nranks += np - 1;
        free(parts);
        j->r = NULL;
        rank_free(w);
        i += np - 1;
    }
    qsort(t->ranks, t->nranks, sizeof *t->ranks, cmp_rank);
    return HTA_OK;
}

static int wanted(const hta_load_opts *o, int32_t rank) {
    if (!o->only_ranks) return 1;
    for (size_t i = 0; i < o->n_only_ranks; i++)
        if (o->only_ranks[i] == rank) return 1;
    return 0;
}

hta_status hta_trace_load(const char *path, const hta_load_opts *opts, hta_trace **out,
                          hta_error *err) {
    static const hta_load_opts none;
    const hta_load_opts *o = opts ? opts : &none;
    *out = NULL;
    char **files = NULL;
    size_t nf = 0;
    hta_status st = hta_list_rank_files(path, o, &files, &nf, err);
    if (st) {
        for (size_t i = 0; i < nf; i++) free(files[i]);
        free(files);
        return st;
    }
    /* with a rank selection, files whose head names another rank are not read
     * further; their ranks still count as taken for the file-order fallback */
    int32_t *other = NULL;
    size_t nother = 0, nf_all = nf;
    /* Probing costs a scan of each file's head only; a single file is parsed anyway. */
    if (o->only_ranks && nf > 1) {
        other = malloc(nf * sizeof *other);
        if (!other) {
            for (size_t i = 0; i < nf; i++) free(files[i]);
            free(files);
            return hta_oom(err);
        }
        size_t keep = 0;
        for (size_t i = 0; i < nf; i++) {
            /* -1 (the head does not say) keeps the file: only a full parse can place it */
            int64_t pr = hta_probe_rank(files[i], NULL);
            if (pr >= 0 && !wanted(o, (int32_t)pr)) {
                other[nother++] = (int32_t)pr;
                free(files[i]);
            } else {
                files[keep++] = files[i];
            }
        }
        nf = keep;
    }
    pool p = {.jobs = calloc(nf ? nf : 1, sizeof(job)), .njobs = nf, .opts = o};
    hta_trace *t = calloc(1, sizeof *t);
    if (!p.jobs || !t || !(t->sym = hta_symtab_new())) {
        st = hta_oom(err);
        goto done;
    }
    for (size_t i = 0; i < nf; i++) p.jobs[i].path = files[i];
    /* at most one thread per file; the threads left over parse the files in parts */
    p.split = nf ? hta_threads(o->threads) / nf : 1;
    hta_parallel_items(o->threads, nf, load_one, &p);

    /* errors: in folder mode a JSON file without traceEvents is not a trace.  Otherwise the first failing
     * file in file order is the one reported, whichever thread failed first. */
    size_t nok = 0;
    for (size_t i = 0; i < nf; i++) {
        job *j = &p.jobs[i];
        if (j->st == HTA_OK) {
            nok++;
            continue;
        }
        /* A folder may hold other JSON (configs, results) beside the traces; a single file the user named
         * must be a trace. */
        if (nf_all > 1 && j->st == HTA_ENOTTRACE) {
            warnf(o, "%s: skipped (JSON without traceEvents)", j->path);
            continue;
        }
        *err = j->err;
        st = j->st;
        goto done;
    }
    /* A merged trace (hta merge) beside per-rank traces is, as a rule, the merge of those very files
     * written into their folder: read as well, its ranks would clash with theirs or, where the files
     * name no rank, count twice.  It is skipped, and named; loaded on its own it gives its ranks back. */
    size_t nmerged = 0;
    for (size_t i = 0; i < nf; i++) nmerged += p.jobs[i].st == HTA_OK && p.jobs[i].b.merge.present;
    for (size_t i = 0; nmerged && nmerged < nok && i < nf; i++) {
        job *j = &p.jobs[i];
        if (j->st != HTA_OK || !j->b.merge.present) continue;
        warnf(o, "%s: skipped (a merged trace (hta merge) beside per-rank traces; load it on its own)", j->path);
        j->st = HTA_ENOTTRACE; /* no rank of this load: freed with the unused builders */
    }
    if (nmerged && nmerged < nok) nok -= nmerged;
    if (nok == 0) {
        st = nother ? hta_fail(err, HTA_ENODATA, "%s: none of the requested ranks is in the trace", path)
                    : hta_fail(err, HTA_ENODATA, "%s: no trace files", path);
        goto done;
    }

    /* ranks: distributedInfo.rank, else a number in the file name, else file order */
    t->ranks = calloc(nok, sizeof *t->ranks);
    if (!t->ranks) {
        st = hta_oom(err);
        goto done;
    }
    for (size_t i = 0; i < nf; i++) {
        job *j = &p.jobs[i];
        if (j->st) continue;
        hta_rank *r = j->r;
        if (j->b.cut)
            warnf(o, "%s: truncated at byte %llu (a crashed job's trace?): loaded the %llu complete events before "
                     "%sbyte %llu; the rest is lost",
                  j->path, (unsigned long long)j->b.cut_file, (unsigned long long)r->n_events,
                  j->b.cut == 2 ? "JSON " : "", (unsigned long long)j->b.cut_json);
        r->path = j->path;
        j->path = NULL;
        if (j->b.dist_rank >= 0 && j->b.dist_rank <= INT32_MAX) {
            r->rank = (int32_t)j->b.dist_rank;
            r->rank_source = "distributedInfo";
        } else if (j->b.merge.n && j->b.merge.parts[0].rank >= 0 && j->b.merge.parts[0].rank <= INT32_MAX) {
            /* a merged trace: its ranks come from htaMerge once it is split (below); until then it sorts
             * as its first rank */
            r->rank = (int32_t)j->b.merge.parts[0].rank;
            r->rank_source = "htaMerge";
        } else if (rank_from_name(r->path) >= 0) {
            r->rank = (int32_t)rank_from_name(r->path);
            r->rank_source = "file name";
            warnf(o, "%s: no distributedInfo.rank; rank %d taken from the file name", r->path, r->rank);
        } else {
            r->rank = -1;
            r->rank_source = "file order";
        }
        t->ranks[t->nranks++] = r;
    }
    for (size_t i = 0; i < t->nranks; i++) {
        hta_rank *r = t->ranks[i];
        if (r->rank >= 0) continue;
        /* the smallest rank no file claims, unselected files included, so that every file gets a rank of
         * its own */
        int32_t cand = 0;
        for (int again = 1; again;) {
            again = 0;
            for (size_t k = 0; k < t->nranks; k++)
                if (t->ranks[k]->rank == cand) cand++, again = 1;
            for (size_t k = 0; k < nother; k++)
                if (other[k] == cand) cand++, again = 1;
            for (size_t k = 0; k < nf; k++)
                for (size_t m = 0; p.jobs[k].st == HTA_OK && m < p.jobs[k].b.merge.n; m++)
                    if (p.jobs[k].b.merge.parts[m].rank == cand) cand++, again = 1;
        }
        r->rank = cand;
        warnf(o, "%s: no distributedInfo.rank and no rank in the file name; using rank %d (file order)",
              r->path, cand);
    }
    /* sort jobs' builders along with ranks: find builder by rank pointer */
    qsort(t->ranks, t->nranks, sizeof *t->ranks, cmp_rank);
    uint32_t *cat_map = NULL;
    for (size_t i = 0; i < t->nranks; i++) {
        rank_build *b = NULL;
        for (size_t k = 0; k < nf; k++)
            if (p.jobs[k].st == HTA_OK && p.jobs[k].r == t->ranks[i]) b = &p.jobs[k].b;
        if ((st = merge_symbols(t, b, &cat_map, err))) {
            free(cat_map);
            goto done;
        }
    }
    free(cat_map);
    if ((st = split_merged(t, &p, o, err))) goto done;
    /* HTA lets the later file replace the earlier (Q3); which of two files is the rank is a question only
     * the user can answer.  (After the split: a merged trace's ranks claim theirs too.) */
    for (size_t i = 0; i < t->nranks; i++)
        for (size_t k = i + 1; k < t->nranks; k++)
            if (t->ranks[i]->rank == t->ranks[k]->rank) {
                st = hta_fail(err, HTA_EFORMAT, "%s and %s both claim rank %d", t->ranks[i]->path,
                              t->ranks[k]->path, t->ranks[i]->rank);
                goto done;
            }
    /* drop ranks the caller did not ask for: files whose head did not name a rank are only placed after
     * the full parse */
    size_t keep = 0;
    for (size_t i = 0; i < t->nranks; i++) {
        hta_rank *r = t->ranks[i];
        if (wanted(o, r->rank)) t->ranks[keep++] = r;
        else {
            for (size_t k = 0; k < nf; k++)
                if (p.jobs[k].r == r) p.jobs[k].r = NULL;
            rank_free(r);
        }
    }
    t->nranks = keep;
    /* The known arg keys, Event Sync and Context Sync as global symbol ids, looked up once: analyses then
     * test rows by id. */
    for (int k = 0; k < HTA_ARG_KNOWN_COUNT; k++) {
        const char *nm = hta_arg_key_name((hta_arg_key)k);
        t->arg_sym[k] = (int32_t)hta_symtab_find(t->sym, nm, strlen(nm));
    }
    const char *es = hta_sync_kind_name(HTA_SYNC_EVENT_SYNC), *cs = hta_sync_kind_name(HTA_SYNC_CONTEXT_SYNC);
    t->sym_event_sync = hta_symtab_find(t->sym, es, strlen(es));
    t->sym_context_sync = hta_symtab_find(t->sym, cs, strlen(cs));
    /* PyTorch <= 1.9's names as today's, before anything reads categories and
     * before the symbols are counted for t->api (legacy.c interns today's names) */
    if (!o->hta_names) {
        int legacy;
        HTA_TRY_GOTO(st, hta_legacy_names(t, &legacy, err), done);
    }
    /* what each name means as a host call, once: analyses then test bits per row */
    size_t nsym = hta_symtab_count(t->sym);
    if (!(t->api = malloc((nsym ? nsym : 1) * sizeof *t->api))) {
        st = hta_oom(err);
        goto done;
    }
    for (size_t s = 0; s < nsym; s++) t->api[s] = (uint16_t)hta_api_of(hta_sym(t->sym, (uint32_t)s));
    /* derived last: partner, call stack and iteration read names through the global symbols */
    for (size_t i = 0; i < t->nranks; i++)
        HTA_TRY_GOTO(st, hta_derive_rank(t, t->ranks[i], o->hta_streams, o->threads, err), done);
    st = HTA_OK;
done:
    /* One cleanup for success and failure: every builder's local symbols and scratch go (the global table
     * has the names now), and a rank goes unless the trace took it. */
    for (size_t k = 0; k < nf; k++) {
        if (!p.jobs) break;
        job *j = &p.jobs[k];
        if (j->b.sym) hta_symtab_free(j->b.sym);
        rank_build_free_scratch(&j->b);
        if (j->r) {
            int owned = 0;
            for (size_t i = 0; t && i < t->nranks; i++) owned |= t->ranks[i] == j->r;
            if (!owned) rank_free(j->r);
        }
        free(j->path);
    }
    free(p.jobs);
    free(files);
    free(other);
    if (st) {
        hta_trace_free(t);
        return st;
    }
    if (t->nranks == 0) {
        hta_trace_free(t);
        return hta_fail(err, HTA_ENODATA, "%s: none of the requested ranks is in the trace", path);
    }
    *out = t;
    return HTA_OK;
}

void hta_trace_free(hta_trace *t) {
    if (!t) return;
    for (size_t i = 0; i < t->nranks; i++) rank_free(t->ranks[i]);
    free(t->ranks);
    free(t->cats);
    free(t->api);
    hta_symtab_free(t->sym);
    free(t);
}
