/* A merged trace (hta merge, docs/merge.md) loaded back as its ranks.  The merged file is one timeline:
 * every rank's events, rank after rank, with pids renumbered (pid_base + n) and flow ids spread
 * (id * id_stride + rank); its top-level htaMerge says how.  The parser reads htaMerge (merged_read), the
 * file loads as one rank as any other, and merged_split cuts that rank into the ranks htaMerge lists, so
 * that every analysis sees the ranks it would see in the folder the merge came from (docs/loading.md,
 * "Merged traces"):
 *   - each rank's share of traceEvents is a contiguous run (the writer writes rank after rank): its rows
 *     and flows are slices of the whole rank's, found by their index, which stays the position in the
 *     merged file;
 *   - the run's bounds come from htaMerge's per-rank event counts, or, for files written before those were
 *     recorded, from the pid ranges [pid_base, pid_base + pid_stride) of the rows;
 *   - pids go back to the original ones where htaMerge lists them, and flow ids are unspread, so that
 *     pid-based rules (devices, call-stack groups) and outputs are those of the original files;
 *   - times stay on the merged (aligned) timeline: that common clock is what the merge is for.  The file's
 *     baseTimeNanoseconds (the unix time of merged ts 0) is every rank's base. */
#include "trace/merged.h"

#include <stdlib.h>
#include <string.h>

#include "core/bigbuf.h"
#include "trace/json_field.h"
#include "hta/util.h"

/* ---------- reading htaMerge ---------- */

static char *dup_span(const char *s, const char *e) {
    char *d = malloc((size_t)(e - s) + 1);
    if (d) {
        memcpy(d, s, (size_t)(e - s));
        d[e - s] = 0;
    }
    return d;
}

/* An integer value, or INT64_MIN for anything else (skipped). */
static int64_t int_value(lex *L, const char *p, const char **out) {
    if (*p == '-' || (*p >= '0' && *p <= '9')) {
        lex_num n;
        int64_t v;
        if (lex_number(L, p, out, &n) == LEX_OK && !n.frac && lex_num_scaled(&n, 0, &v) == 0) return v;
        if (lex_skip_value(L, p, out) != LEX_OK) *out = L->end;
        return INT64_MIN;
    }
    if (lex_skip_value(L, p, out) != LEX_OK) *out = L->end;
    return INT64_MIN;
}

static int key_is(const char *k, size_t n, const char *lit) { return n == strlen(lit) && !memcmp(k, lit, n); }

/* The members of the object at p, one call of fn per key with p at its value; fn sets *out past the
 * value.  The text was validated, so a lexer failure only means "stop here". */
typedef int (*member_fn)(lex *L, void *ctx, const char *k, size_t kn, const char *p, const char **out);

static int members(lex *L, const char *p, member_fn fn, void *ctx) {
    if (*p != '{') return 0;
    p = lex_ws(p + 1);
    while (*p == '"') {
        const char *k;
        size_t kn;
        int esc;
        if (lex_key(L, p, &k, &kn, &esc, &p) != LEX_OK) return 0;
        const char *q = p;
        int rc = fn(L, ctx, k, esc ? 0 : kn, p, &q);
        if (rc) return rc;
        p = lex_ws(q);
        if (*p != ',') break;
        p = lex_ws(p + 1);
    }
    return 0;
}

/* The elements of the array at p, one call each with p at the element. */
typedef int (*element_fn)(lex *L, void *ctx, const char *p, const char **out);

static int elements(lex *L, const char *p, element_fn fn, void *ctx) {
    if (*p != '[') return 0;
    p = lex_ws(p + 1);
    while (*p && *p != ']') {
        const char *q = p;
        int rc = fn(L, ctx, p, &q);
        if (rc) return rc;
        p = lex_ws(q);
        if (*p != ',') break;
        p = lex_ws(p + 1);
    }
    return 0;
}

static int pid_element(lex *L, void *ctx, const char *p, const char **out) {
    merge_part *mp = ctx;
    if (lex_skip_value(L, p, out) != LEX_OK) return 0;
    char **np = realloc(mp->pids, (mp->npids + 1) * sizeof *np);
    if (!np) return -1;
    mp->pids = np;
    if (!(mp->pids[mp->npids] = dup_span(p, *out))) return -1;
    mp->npids++;
    return 0;
}

static int part_member(lex *L, void *ctx, const char *k, size_t kn, const char *p, const char **out) {
    merge_part *mp = ctx;
    if (key_is(k, kn, "rank")) {
        mp->rank = int_value(L, p, out);
    } else if (key_is(k, kn, "pid_base")) {
        mp->pid_base = int_value(L, p, out);
    } else if (key_is(k, kn, "events")) {
        int64_t v = int_value(L, p, out);
        mp->events = v >= 0 ? v : -1;
    } else {
        if (lex_skip_value(L, p, out) != LEX_OK) {
            *out = L->end;
            return 0;
        }
        if (key_is(k, kn, "distributedInfo") && *p == '{') {
            free(mp->dinfo);
            if (!(mp->dinfo = dup_span(p, *out))) return -1;
        } else if (key_is(k, kn, "pids") && *p == '[') {
            /* an empty list is a list: pids is non-NULL once the key is there */
            if (!mp->pids && !(mp->pids = malloc(sizeof *mp->pids))) return -1;
            return elements(L, p, pid_element, mp);
        }
    }
    return 0;
}

static int rank_element(lex *L, void *ctx, const char *p, const char **out) {
    merge_info *m = ctx;
    if (lex_skip_value(L, p, out) != LEX_OK) return 0;
    if (*p != '{') return 0;
    merge_part *np = realloc(m->parts, (m->n + 1) * sizeof *np);
    if (!np) return -1;
    m->parts = np;
    merge_part *mp = &m->parts[m->n++];
    *mp = (merge_part){INT64_MIN, INT64_MIN, -1, NULL, NULL, 0};
    return members(L, p, part_member, mp);
}

static int top_member(lex *L, void *ctx, const char *k, size_t kn, const char *p, const char **out) {
    merge_info *m = ctx;
    if (key_is(k, kn, "pid_stride")) {
        m->pid_stride = int_value(L, p, out);
        return 0;
    }
    if (key_is(k, kn, "id_stride")) {
        m->id_stride = int_value(L, p, out);
        return 0;
    }
    if (lex_skip_value(L, p, out) != LEX_OK) {
        *out = L->end;
        return 0;
    }
    return key_is(k, kn, "ranks") ? elements(L, p, rank_element, m) : 0;
}

int merged_read(lex *L, const char *p, merge_info *m) {
    merge_info_free(m); /* a second htaMerge replaces the first, as the metadata keeps the last */
    m->present = 1;
    m->pid_stride = m->id_stride = -1;
    return members(L, p, top_member, m) ? -1 : 0;
}

/* ---------- splitting ---------- */

/* First position in the ascending idx[0..n) whose value is >= v. */
static size_t lower_bound_u32(const uint32_t *idx, size_t n, uint64_t v) {
    size_t lo = HTA_LOWER_BOUND(n, mid, idx[mid] < v);
    return lo;
}

static size_t flows_lower_bound(const hta_flow *f, size_t n, uint64_t v) {
    size_t lo = HTA_LOWER_BOUND(n, mid, f[mid].index < v);
    return lo;
}

/* The original pid of a thread, from htaMerge's list, read as the parser reads a pid (ev_id in parse.c):
 * a number, numeric text as that number, other text as a symbol with id -1. */
static hta_status restore_pid(hta_trace *t, const merge_part *mp, hta_thread *th) {
    /* (differences in uint64: htaMerge's numbers are the file's, any int64) */
    if (!mp->pids || th->pid_sym >= 0 || th->pid < mp->pid_base ||
        (uint64_t)th->pid - (uint64_t)mp->pid_base >= mp->npids)
        return HTA_OK;
    const char *txt = mp->pids[(uint64_t)th->pid - (uint64_t)mp->pid_base];
    size_t len = strlen(txt);
    if (txt[0] == '"' && len >= 2) {
        const char *s = txt + 1;
        size_t n = len - 2;
        if (memchr(s, '\\', n)) return HTA_OK; /* escaped text: rare enough to keep the merged number */
        char tmp[32], *end;
        if (n > 0 && n < sizeof tmp && (s[0] == '-' || (s[0] >= '0' && s[0] <= '9'))) {
            memcpy(tmp, s, n);
            tmp[n] = 0;
            long long x = strtoll(tmp, &end, 10);
            if (*end == 0) {
                th->pid = x;
                return HTA_OK;
            }
        }
        uint32_t id = hta_symtab_intern(t->sym, s, n);
        if (id == UINT32_MAX) return HTA_ENOMEM;
        th->pid = -1;
        th->pid_sym = id;
    } else if (txt[0] == '-' || (txt[0] >= '0' && txt[0] <= '9')) {
        char *end;
        long long x = strtoll(txt, &end, 10);
        if (*end == 0) th->pid = x; /* a fraction (no trace has one) keeps the merged number */
    } else if (!strcmp(txt, "null")) {
        th->pid = -1; /* the parser's pid of an event whose pid is null */
    }
    return HTA_OK;
}

/* The merge writer spreads flow ids as id * S + rank (id * S - rank below 0); back to id. */
static int64_t unspread_id(int64_t x, int64_t s, int64_t rk) {
    if (s <= 0) return x;
    if (x >= 0 && x >= rk && (x - rk) % s == 0) return (x - rk) / s;
    if (x < 0 && (x + rk) % s == 0) return (x + rk) / s;
    return x;
}

static char *dupz(const char *s) { return s ? strdup(s) : NULL; }

/* Rank p of the merged file: rows [r0, r1) and flows [f0, f1) of w, events [b, e). */
static hta_status make_part(hta_trace *t, const hta_rank *w, const merge_info *m, size_t pi, uint64_t b,
                            uint64_t e, hta_rank **out) {
    const merge_part *mp = &m->parts[pi];
    size_t r0 = lower_bound_u32(w->index, w->n, b), r1 = lower_bound_u32(w->index, w->n, e);
    size_t f0 = flows_lower_bound(w->flows, w->nflows, b), f1 = flows_lower_bound(w->flows, w->nflows, e);
    size_t n = r1 - r0, m1 = n ? n : 1, nf = f1 - f0;
    uint32_t *tmap = NULL;
    uint16_t *smap = NULL;
    hta_rank *r = calloc(1, sizeof *r);
    if (!r) return HTA_ENOMEM;
    *out = r;
    r->rank = (int32_t)mp->rank;
    r->path = dupz(w->path);
    r->rank_source = "htaMerge";
    r->world_size = mp->dinfo ? hta_json_int_field(mp->dinfo, "world_size") : -1;
    r->base_time_ns = w->base_time_ns;
    r->ts_fractional = w->ts_fractional;
    /* the file's figures: the ranks share one file and one load */
    r->bytes_in = w->bytes_in;
    r->bytes_json = w->bytes_json;
    r->load_seconds = w->load_seconds;
    r->n_events = w->n_events;
    r->ev_begin = b;
    r->ev_end = e;
    r->merged = 1;
    r->n = n;
    if (!r->path) goto oom;
#define SLICE(col)                                                          \
    do {                                                                    \
        if (!(r->col = hta_big_realloc(NULL, m1 * sizeof *r->col))) goto oom; \
        if (n) memcpy(r->col, w->col + r0, n * sizeof *r->col);              \
    } while (0)
    SLICE(ts); SLICE(dur); SLICE(correlation); SLICE(external_id); SLICE(name); SLICE(index); SLICE(cat);
    SLICE(thread); SLICE(stream);
#undef SLICE
    /* derived at load, after the split (hta_derive_rank) */
    r->partner = hta_big_realloc(NULL, m1 * sizeof *r->partner);
    r->parent = hta_big_realloc(NULL, m1 * sizeof *r->parent);
    r->depth = hta_big_realloc(NULL, m1 * sizeof *r->depth);
    r->iteration = hta_big_realloc(NULL, m1 * sizeof *r->iteration);
    if (!r->partner || !r->parent || !r->depth || !r->iteration) goto oom;
    /* args: one run, offsets rebased */
    uint32_t a0 = w->args_off[r0];
    r->nargs = w->args_off[r1] - a0;
    if (!(r->args_off = hta_big_realloc(NULL, (n + 1) * sizeof *r->args_off))) goto oom;
    for (size_t i = 0; i <= n; i++) r->args_off[i] = w->args_off[r0 + i] - a0;
    if (!(r->args = hta_big_realloc(NULL, (r->nargs ? r->nargs : 1) * sizeof *r->args))) goto oom;
    if (r->nargs) memcpy(r->args, w->args + a0, r->nargs * sizeof *r->args);
    if (!(r->flows = hta_big_realloc(NULL, (nf ? nf : 1) * sizeof *r->flows))) goto oom;
    if (nf) memcpy(r->flows, w->flows + f0, nf * sizeof *r->flows);
    r->nflows = nf;

    /* threads and streams: the rank's own, numbered in first-use order over its events, as the parser
     * numbers them in a file of its own */
    tmap = malloc((w->nthreads ? w->nthreads : 1) * sizeof *tmap);
    r->threads = malloc((w->nthreads ? w->nthreads : 1) * sizeof *r->threads);
    smap = malloc(w->nstreams * sizeof *smap);
    r->streams = malloc(w->nstreams * sizeof *r->streams);
    if (!tmap || !r->threads || !smap || !r->streams) goto oom;
    memset(tmap, 0xFF, (w->nthreads ? w->nthreads : 1) * sizeof *tmap);
    memset(smap, 0xFF, w->nstreams * sizeof *smap);
    smap[0] = 0;
    r->streams[0] = -1;
    r->nstreams = 1;
    for (size_t i = 0, j = 0; i < n || j < nf;) {
        /* rows and flows in event order */
        int row = j >= nf || (i < n && r->index[i] < r->flows[j].index);
        uint32_t *th = row ? &r->thread[i] : &r->flows[j].thread;
        if (tmap[*th] == UINT32_MAX) {
            hta_thread x = w->threads[*th];
            if (restore_pid(t, mp, &x)) goto oom;
            tmap[*th] = (uint32_t)r->nthreads;
            r->threads[r->nthreads++] = x;
        }
        *th = tmap[*th];
        if (row) {
            uint16_t s = r->stream[i];
            if (smap[s] == UINT16_MAX) {
                smap[s] = (uint16_t)r->nstreams;
                r->streams[r->nstreams++] = w->streams[s];
            }
            r->stream[i] = smap[s];
            i++;
        } else {
            r->flows[j].id = unspread_id(r->flows[j].id, m->id_stride, mp->rank);
            j++;
        }
    }

    /* metadata: the file's top-level keys, and the rank's own distributedInfo that htaMerge kept */
    r->meta = calloc(w->nmeta + 1, sizeof *r->meta);
    if (!r->meta) goto oom;
    for (size_t i = 0; i < w->nmeta; i++) {
        if (mp->dinfo && !strcmp(w->meta[i].key, "distributedInfo")) continue;
        hta_meta *x = &r->meta[r->nmeta++];
        x->key = dupz(w->meta[i].key);
        x->json = dupz(w->meta[i].json);
        if (!x->key || !x->json) goto oom;
    }
    if (mp->dinfo) {
        hta_meta *x = &r->meta[r->nmeta++];
        x->key = strdup("distributedInfo");
        x->json = strdup(mp->dinfo);
        if (!x->key || !x->json) goto oom;
    }
    free(tmap);
    free(smap);
    return HTA_OK;
oom:
    free(tmap);
    free(smap);
    return HTA_ENOMEM;
}

hta_status merged_split(hta_trace *t, const hta_rank *w, const merge_info *m, hta_rank ***parts,
                        size_t *nparts, const char **why, hta_error *err) {
    *parts = NULL;
    *nparts = 0;
    *why = NULL;
    size_t np = m->n;
    if (!np) {
        *why = "it lists no ranks";
        return HTA_OK;
    }
    for (size_t i = 0; i < np; i++) {
        if (m->parts[i].rank < 0 || m->parts[i].rank > INT32_MAX) {
            *why = "a rank it lists is no rank number";
            return HTA_OK;
        }
        for (size_t k = 0; k < i; k++)
            if (m->parts[k].rank == m->parts[i].rank) {
                *why = "it lists a rank twice";
                return HTA_OK;
            }
    }
    hta_status st = HTA_OK;
    uint64_t *begin = calloc(np + 1, sizeof *begin);
    int64_t *thr_part = malloc((w->nthreads ? w->nthreads : 1) * sizeof *thr_part);
    hta_rank **out = calloc(np, sizeof *out);
    if (!begin || !thr_part || !out) goto oom;
    /* The runs' bounds: from the event counts the writer records ... */
    uint64_t sum = 0;
    int by_count = 1;
    for (size_t i = 0; i < np; i++) {
        /* counts that cannot add up to the file's (negative, absent, or past it) are no counts */
        if (m->parts[i].events < 0 || (uint64_t)m->parts[i].events > w->n_events - sum) by_count = 0;
        else sum += (uint64_t)m->parts[i].events;
    }
    if (by_count && sum == w->n_events) {
        for (size_t i = 0; i < np; i++) begin[i + 1] = begin[i] + (uint64_t)m->parts[i].events;
    } else {
        /* ... or, without them, from the pid ranges: a run starts at its rank's first row or flow (the
         * metadata before it goes with the rank before, which cannot be told apart); every row and flow
         * must then lie in its own rank's run */
        if (m->pid_stride <= 0) {
            *why = "it says neither how many events each rank has nor its pid_stride";
            goto out;
        }
        for (size_t k = 0; k < w->nthreads; k++) {
            const hta_thread *th = &w->threads[k];
            thr_part[k] = -1;
            for (size_t i = 0; i < np && th->pid_sym < 0; i++)
                if (th->pid >= m->parts[i].pid_base &&
                    (uint64_t)th->pid - (uint64_t)m->parts[i].pid_base < (uint64_t)m->pid_stride)
                    thr_part[k] = (int64_t)i;
        }
        for (size_t i = 0; i <= np; i++) begin[i] = UINT64_MAX;
        for (size_t i = 0; i < w->n; i++) {
            int64_t pp = thr_part[w->thread[i]];
            if (pp >= 0 && w->index[i] < begin[pp]) begin[pp] = w->index[i];
        }
        for (size_t i = 0; i < w->nflows; i++) {
            int64_t pp = thr_part[w->flows[i].thread];
            if (pp >= 0 && w->flows[i].index < begin[pp]) begin[pp] = w->flows[i].index;
        }
        begin[0] = 0;
        begin[np] = w->n_events;
        for (size_t i = np - 1; i > 0; i--)
            if (begin[i] == UINT64_MAX) begin[i] = begin[i + 1]; /* a rank without rows: an empty run */
        for (size_t i = 0; i < np; i++)
            if (begin[i] > begin[i + 1]) {
                *why = "its ranks' events are not one rank after the other";
                goto out;
            }
        for (size_t i = 0; i < w->n; i++) {
            int64_t pp = thr_part[w->thread[i]];
            if (pp >= 0 && (w->index[i] < begin[pp] || w->index[i] >= begin[pp + 1])) {
                *why = "its ranks' events are not one rank after the other";
                goto out;
            }
        }
    }
    for (size_t i = 0; i < np; i++)
        if ((st = make_part(t, w, m, i, begin[i], begin[i + 1], &out[i]))) goto oom;
    *parts = out;
    *nparts = np;
    out = NULL;
    goto out;
oom:
    st = hta_oom(err);
out:
    if (out)
        for (size_t i = 0; i < np; i++) rank_free(out[i]);
    free(out);
    free(begin);
    free(thr_part);
    return st;
}
