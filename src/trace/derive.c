/* What is derived once per rank after loading (derive.h): HTA's rounding of
 * a row's times, the CPU launch <-> GPU activity partner (by correlation),
 * the call-stack parent and depth of each row, and the ProfilerStep iteration
 * every row belongs to (TF§7-§9). */
#include "trace/derive.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "hta/util.h"
#include "hta/vocab.h"

/* HTA rounds only files where some ts has a fraction or is missing (TF§6: its ts column is then float);
 * integer-us files keep their times, and so do their rows here. */
static void round_row(const hta_rank *r, size_t i, int64_t *ts, int64_t *end, int q6) {
    int64_t t = r->ts[i], d = r->dur[i];
    if (!r->ts_fractional) {
        *ts = t;
        *end = t + (d > 0 ? d : 0);
        return;
    }
    /* HTA holds microseconds in doubles: ts = ceil(ts), end = floor(ts + dur).
     * Reproduce the double arithmetic (it matters at 1e15 us, where a double
     * has quarter-microsecond steps); never let the duration go negative. */
    double tsd = (double)((long double)t / 1000.0L);
    double dd = (double)((long double)d / 1000.0L);
    double s = ceil(tsd), e = floor(tsd + dd);
    /* Rounding (and a double's half-us steps at this size) may step past the times the model holds
     * (|t| < 2^62 ns, trace.h) by up to a us, and two such times would then be more than INT64_MAX
     * apart: the whole us nearest the edge is taken instead (only a time within 1 us of the limit moves). */
    const double lim = (double)(HTA_TIME_MAX_NS / 1000);
    s = s > lim ? lim : s < -lim ? -lim : s;
    e = e > lim ? lim : e < -lim ? -lim : e;
    /* HTA gives an event inside one microsecond dur = -1 (Q6); 0 unless that is asked for. */
    if (e < s && !q6) e = s;
    *ts = (int64_t)s * 1000;
    *end = (int64_t)e * 1000;
}

void hta_round_row(const hta_rank *r, size_t i, int64_t *ts, int64_t *end) { round_row(r, i, ts, end, 0); }
void hta_round_row_q6(const hta_rank *r, size_t i, int64_t *ts, int64_t *end) { round_row(r, i, ts, end, 1); }

/* TF§7.1: GPU for correlation purposes = a stream >= 0 and a correlation id, or a sync record by name
 * (Event Sync, Context Sync), whatever its stream. */
int hta_row_is_gpu_corr(const hta_trace *t, const hta_rank *r, size_t i) {
    int64_t s = hta_row_stream(r, i);
    if (s >= 0 && r->correlation[i] >= 0) return 1;
    return (int64_t)r->name[i] == t->sym_event_sync || (int64_t)r->name[i] == t->sym_context_sync;
}

/* ---- correlation ---- */

/* Last CPU and last GPU row of each correlation id (HTA's join: the last
 * match wins).  Kineto's ids are dense, so a direct table is the common
 * case; sparse ids fall back to open addressing. */
typedef struct corr_tab {
    int64_t lo;            /* direct: ids lo .. lo + n - 1 */
    size_t n;
    int32_t *cpu, *gpu;    /* direct tables, or hash values */
    int64_t *key;          /* hash keys (-1 = empty), NULL when direct */
} corr_tab;

static int32_t *corr_slot(corr_tab *c, int64_t id, int gpu_side, int insert) {
    size_t j;
    if (!c->key) {
        j = (size_t)(id - c->lo);
    } else {
        j = hta_hash_u64((uint64_t)id) & (c->n - 1);
        while (c->key[j] != -1 && c->key[j] != id) j = (j + 1) & (c->n - 1);
        if (c->key[j] == -1) {
            if (!insert) return NULL;
            c->key[j] = id;
        }
    }
    return gpu_side ? &c->gpu[j] : &c->cpu[j];
}

/* TF§7.2: each CPU row with a correlation id gets the GPU row with that id as partner, and back.  No
 * partner is HTA_NO_ROW, never confused with event 0 as HTA's index_correlation 0 is (Q7). */
static hta_status link_partners(const hta_trace *t, hta_rank *r, hta_error *err) {
    size_t n = r->n, m = 0;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        r->partner[i] = HTA_NO_ROW;
        int64_t c = r->correlation[i];
        if (c == -1) continue;
        m++;
        if (c < lo) lo = c;
        if (c > hi) hi = c;
    }
    if (!m) return HTA_OK;
    corr_tab c = {0};
    /* dense enough (ids spread over less than 4 slots per row that has one): index by id - lo */
    if (lo >= 0 && (uint64_t)(hi - lo) < 4 * (uint64_t)m) {
        c.lo = lo;
        c.n = (size_t)(hi - lo) + 1;
    } else {
        c.n = 64;
        while (c.n < 2 * m) c.n <<= 1;
        c.key = malloc(c.n * sizeof *c.key);
        if (!c.key) return hta_oom(err);
        for (size_t j = 0; j < c.n; j++) c.key[j] = -1;
    }
    c.cpu = malloc(c.n * sizeof *c.cpu);
    c.gpu = malloc(c.n * sizeof *c.gpu);
    if (!c.cpu || !c.gpu) {
        free(c.cpu);
        free(c.gpu);
        free(c.key);
        return hta_oom(err);
    }
    for (size_t j = 0; j < c.n; j++) c.cpu[j] = c.gpu[j] = HTA_NO_ROW;
    for (size_t i = 0; i < n; i++) {
        if (r->correlation[i] == -1) continue;
        int g = hta_row_is_gpu_corr(t, r, i);
        /* file order, so the last row of each side wins */
        *corr_slot(&c, r->correlation[i], g, 1) = (int32_t)i;
    }
    for (size_t i = 0; i < n; i++) {
        if (r->correlation[i] == -1) continue;
        int g = hta_row_is_gpu_corr(t, r, i);
        r->partner[i] = *corr_slot(&c, r->correlation[i], !g, 0);
    }
    free(c.cpu);
    free(c.gpu);
    free(c.key);
    return HTA_OK;
}

/* ---- call stacks ---- */

/* Nesting order on one thread: earlier start first; at one start the longer
 * event encloses; then file order. */
static int row_before(const hta_rank *r, uint32_t x, uint32_t y) {
    int64_t dx = r->dur[x] > 0 ? r->dur[x] : 0, dy = r->dur[y] > 0 ? r->dur[y] : 0;
    if (r->ts[x] != r->ts[y]) return r->ts[x] < r->ts[y];
    if (dx != dy) return dx > dy;
    return x < y;
}

/* Natural merge sort: Kineto writes a thread's operators and its runtime
 * calls as separate sorted runs, so merging runs is linear in practice. */
static void sort_rows(const hta_rank *r, uint32_t *g, size_t n, uint32_t *tmp) {
    while (n > 1) {
        size_t runs = 0, out = 0;
        for (size_t a = 0; a < n;) {
            size_t m = a + 1;
            while (m < n && !row_before(r, g[m], g[m - 1])) m++;
            size_t e = m;
            if (m < n) {
                e = m + 1;
                while (e < n && !row_before(r, g[e], g[e - 1])) e++;
            }
            size_t i = a, j = m;
            while (i < m && j < e) tmp[out++] = row_before(r, g[j], g[i]) ? g[j++] : g[i++];
            while (i < m) tmp[out++] = g[i++];
            while (j < e) tmp[out++] = g[j++];
            runs++;
            a = e;
        }
        memcpy(g, tmp, n * sizeof *g);
        if (runs == 1) break;
    }
}

/* Call stacks by time containment on each thread, the parent and depth columns (TF§14).  Only CPU rows
 * nest: stream index 0 is the stream value -1, the rows without a stream. */
static hta_status build_stacks(hta_rank *r, hta_error *err) {
    size_t n = r->n, nt = r->nthreads;
    size_t *start = calloc(nt + 2, sizeof *start);
    uint32_t *o = malloc((n ? n : 1) * sizeof *o);
    uint32_t *stack = malloc((n ? n : 1) * sizeof *stack); /* also the merge buffer */
    if (!start || !o || !stack) {
        free(start);
        free(o);
        free(stack);
        return hta_oom(err);
    }
    /* CPU rows grouped by thread, in file order: a counting sort.  Counts go to start[t + 2]; after the
     * prefix sums start[t + 1] is thread t's fill cursor, and once filled it has moved on to thread t's
     * end, so start[k] .. start[k + 1] is thread k. */
    for (size_t i = 0; i < n; i++) {
        r->parent[i] = HTA_NO_ROW;
        r->depth[i] = -1;
        if (r->stream[i] == 0) start[r->thread[i] + 2]++;
    }
    for (size_t k = 0; k < nt; k++) start[k + 2] += start[k + 1];
    for (size_t i = 0; i < n; i++)
        if (r->stream[i] == 0) o[start[r->thread[i] + 1]++] = (uint32_t)i;
    for (size_t k = 0; k < nt; k++) {
        uint32_t *g = o + start[k];
        size_t gn = start[k + 1] - start[k];
        sort_rows(r, g, gn, stack);
        /* The stack holds the open calls; a row pops every call that ended at or before its start, and its
         * parent is what is left on top. */
        size_t sp = 0;
        for (size_t j = 0; j < gn; j++) {
            uint32_t row = g[j];
            int64_t ts = r->ts[row], d = r->dur[row] > 0 ? r->dur[row] : 0;
            while (sp) {
                uint32_t top = stack[sp - 1];
                int64_t tts = r->ts[top], td = r->dur[top] > 0 ? r->dur[top] : 0;
                /* at equal times a closing end precedes an opening one, but two
                 * zero-length events at one instant nest (HTA's rule) */
                if (tts + td <= ts && !(td == 0 && d == 0 && tts == ts)) sp--;
                else break;
            }
            r->parent[row] = sp ? (int32_t)stack[sp - 1] : HTA_NO_ROW;
            /* the depth column is int16: saturate rather than wrap on absurd nesting */
            r->depth[row] = (int16_t)(sp < INT16_MAX ? sp : INT16_MAX);
            stack[sp++] = row;
        }
    }
    /* device rows hang under the call that launched them, one level deeper (TF§14.1: a kernel's depth is
     * its launch's + 1) */
    for (size_t i = 0; i < n; i++) {
        if (r->stream[i] == 0 || r->partner[i] < 0) continue;
        int32_t c = r->partner[i];
        if (r->stream[c] != 0) continue;
        r->parent[i] = c;
        r->depth[i] = (int16_t)(r->depth[c] + 1);
    }
    free(start);
    free(o);
    free(stack);
    return HTA_OK;
}

/* ---- iterations ---- */

typedef struct step {
    int64_t ts, end;
    int32_t num;
    uint32_t order; /* table order: the last containing step wins */
} step;

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* N of a ProfilerStep#N name as hta_step_iteration reads it (spaces allowed around '#'), exactly: -1
 * when it is no step, -3 when N is beyond INT32_MAX (the rank's iteration column is 32-bit; a number
 * cut there would differ between commands). */
static int32_t step_num_exact(const char *n) {
    if (hta_step_iteration(n) < 0) return -1;
    n = strchr(n, '#') + 1;
    while (*n == ' ' || *n == '\t' || *n == '\n' || *n == '\r' || *n == '\f' || *n == '\v') n++;
    int64_t v = 0;
    for (; *n >= '0' && *n <= '9'; n++)
        if ((v = v * 10 + (*n - '0')) > INT32_MAX) return -3;
    return (int32_t)v;
}

/* TF§8: CPU rows (and Triton's stream-0 cpu_ops) get the ProfilerStep whose span contains their start;
 * device rows on a stream > 0 get their launch's; other stream-0 device rows (AMD) get HTA's NaN. Times
 * are rounded first, as HTA assigns iterations after its rounding (TF§1). */
static hta_status assign_iterations(const hta_trace *t, hta_rank *r, hta_error *err) {
    size_t n = r->n, ns = 0, cap = 0;
    step *st = NULL;
    uint32_t cpu_op = UINT32_MAX;
    int64_t f = hta_symtab_find(t->sym, "cpu_op", 6);
    for (size_t c = 0; f >= 0 && c < t->ncats; c++)
        if (t->cats[c] == (uint32_t)f) cpu_op = (uint32_t)c;
    /* step number per symbol, so rows are tested by id */
    uint32_t nsym = hta_symtab_count(t->sym);
    int32_t *stepnum = malloc((nsym ? nsym : 1) * sizeof *stepnum);
    if (!stepnum) return hta_oom(err);
    for (uint32_t k = 0; k < nsym; k++) stepnum[k] = step_num_exact(hta_sym(t->sym, k));
    for (size_t i = 0; i < n; i++) {
        int32_t num = stepnum[r->name[i]];
        if (num == -3) { /* one step number everywhere: none that a command would show cut */
            free(st);
            free(stepnum);
            return hta_fail(err, HTA_EFORMAT, "%s: event '%.80s': a step number beyond %d, the largest hta keeps",
                            r->path, hta_sym(t->sym, r->name[i]), INT32_MAX);
        }
        if (num < 0) continue;
        if (ns == cap) {
            cap = cap ? cap * 2 : 16;
            step *q = realloc(st, cap * sizeof *q);
            if (!q) {
                free(st);
                free(stepnum);
                return hta_oom(err);
            }
            st = q;
        }
        int64_t a, e;
        hta_round_row(r, i, &a, &e);
        st[ns] = (step){a, e, num, (uint32_t)ns};
        ns++;
    }
    /* Elementary segments between step boundaries, each with its winner: the step last in table order that
     * covers it (TF§8: where steps overlap, the last one wins).  A row then finds its segment by binary
     * search instead of testing every step. */
    size_t nb = 2 * ns;
    free(stepnum);
    int64_t *bd = malloc((nb ? nb : 1) * sizeof *bd);
    int32_t *win = malloc((nb ? nb : 1) * sizeof *win);
    if (!bd || !win) {
        free(st);
        free(bd);
        free(win);
        return hta_oom(err);
    }
    for (size_t k = 0; k < ns; k++) bd[2 * k] = st[k].ts, bd[2 * k + 1] = st[k].end;
    qsort(bd, nb, sizeof *bd, cmp_i64);
    size_t u = 0;
    for (size_t k = 0; k < nb; k++)
        if (!u || bd[k] != bd[u - 1]) bd[u++] = bd[k];
    for (size_t k = 0; k < u; k++) win[k] = -1;
    for (size_t k = 0; k < ns; k++) { /* steps in table order: later overwrite */
        size_t lo = 0, hi = u;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (bd[mid] < st[k].ts) lo = mid + 1;
            else hi = mid;
        }
        for (size_t s = lo; s < u && bd[s] < st[k].end; s++) win[s] = (int32_t)k;
    }
    for (size_t i = 0; i < n; i++) {
        int64_t s = hta_row_stream(r, i);
        if (s < 0 || (s == 0 && r->cat[i] == cpu_op)) {
            int32_t it = HTA_ITER_NONE;
            if (u) {
                int64_t a, e;
                hta_round_row(r, i, &a, &e);
                /* segment k covers [bd[k], bd[k+1]) */
                size_t lo = 0, hi = u;
                while (lo < hi) {
                    size_t mid = (lo + hi) / 2;
                    if (bd[mid] <= a) lo = mid + 1;
                    else hi = mid;
                }
                if (lo > 0 && lo < u + 1 && win[lo - 1] >= 0 && a < st[win[lo - 1]].end)
                    it = st[win[lo - 1]].num;
            }
            r->iteration[i] = it;
        } else if (s == 0) {
            r->iteration[i] = HTA_ITER_NAN;
        }
    }
    /* Second pass: a device row reads its launch's iteration, which the pass above has set.  Any partner
     * counts, event 0 included, where HTA's index_correlation > 0 test loses it (Q7). */
    for (size_t i = 0; i < n; i++) {
        int64_t s = hta_row_stream(r, i);
        if (s > 0) {
            int32_t c = r->partner[i];
            r->iteration[i] = c >= 0 ? r->iteration[c] : HTA_ITER_NONE;
        }
    }
    free(bd);
    free(win);
    free(st);
    return HTA_OK;
}

/* A host call's args.stream names the queue it feeds, not where it runs: ROCm writes it on
 * hipLaunchKernel, hipMemcpyWithStream...  Left in place, HTA's stream != -1 rule makes those calls GPU
 * work, and their correlation ids pair them with nothing (both sides look like GPU rows). */
static hta_status drop_host_streams(const hta_trace *t, hta_rank *r, hta_error *err) {
    unsigned char *host = malloc(t->ncats + 1); /* per category: a host call category */
    if (!host) return hta_oom(err);
    for (size_t c = 0; c < t->ncats; c++) host[c] = hta_cat_classify(hta_sym(t->sym, t->cats[c])) == HTA_CC_RUNTIME;
    for (size_t i = 0; i < r->n; i++)
        if (host[r->cat[i]]) r->stream[i] = 0;
    free(host);
    return HTA_OK;
}

/* The call stacks and the iterations read the rows, streams and partners and write columns of their own
 * (parent and depth, iteration): two items for hta_parallel. */
typedef struct derive_two {
    const hta_trace *t;
    hta_rank *r;
    atomic_int next;
    hta_status st[2];
    hta_error err[2];
} derive_two;

static void *derive_worker(void *arg) {
    derive_two *d = arg;
    for (int k; (k = atomic_fetch_add(&d->next, 1)) < 2;)
        d->st[k] = k == 0 ? build_stacks(d->r, &d->err[0]) : assign_iterations(d->t, d->r, &d->err[1]);
    return NULL;
}

hta_status hta_derive_rank(const hta_trace *t, hta_rank *r, int hta_streams, int threads, hta_error *err) {
    if (!hta_streams) HTA_TRY(drop_host_streams(t, r, err));
    HTA_TRY(link_partners(t, r, err));
    derive_two d = {.t = t, .r = r};
    atomic_init(&d.next, 0);
    hta_parallel(threads, 2, derive_worker, &d);
    /* the first failure in the order one thread meets them */
    for (int k = 0; k < 2; k++)
        if (d.st[k]) {
            if (err) *err = d.err[k];
            return d.st[k];
        }
    return HTA_OK;
}
