/* What the diagnosis and the HTML page read of one rank, in one pass over its view: the steps, GPU and
 * CPU busy time (as interval unions and as RP_BINS bins), the GPU's idle gaps told apart by length, per
 * step the data loading, the syncs, copies, communication and computation, the launch-queue length and
 * memory bandwidth over time, and the communication kernels that collective lateness matches across
 * ranks (rp_lateness). */
#include <fnmatch.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/bigbuf.h"
#include "hta/counters.h"
#include "hta/util.h"
#include "hta/vocab.h"
#include "report/internal.h"

const char *const rp_bound_names[RP_NBOUND] = {"cpu_bound",
                                               "data_loading",
                                               "gpu_compute_bound",
                                               "gpu_communication_bound",
                                               "gpu_kernel_kernel_overhead",
                                               "gpu_kernel_launch_overhead",
                                               "rank_wait"};

/* The data loader's annotation as PyTorch writes it: enumerate(DataLoader)#_SingleProcessDataLoaderIter... */
#define RP_DATALOADER_GLOB "enumerate(DataLoader)*"

/* Sums of durations saturate: many streams' or threads' times near 2^62 ns must not wrap. */
static void sat_add(int64_t *a, int64_t b) {
    if (__builtin_add_overflow(*a, b, a)) *a = INT64_MAX;
}

long rp_step_of(const rp_rank *p, int64_t ts) {
    if (!p->nsteps || ts < p->step_ts[0]) return -1;
    /* the last step whose start is <= ts (binary search: steps are sorted by start) */
    size_t lo = 0, hi = p->nsteps;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (p->step_ts[mid] <= ts) lo = mid;
        else hi = mid;
    }
    return ts < p->step_end[lo] || (lo + 1 < p->nsteps) ? (long)lo : -1;
}

/* Adds the part of [s, e) inside each bin to bins (ns), for a series over [t0, t1]. */
static void bin_add(double *bins, int64_t t0, int64_t t1, int64_t s, int64_t e) {
    if (t1 <= t0 || e <= s) return;
    double w = (double)(t1 - t0) / RP_BINS;
    long b0 = (long)((double)(s - t0) / w), b1 = (long)((double)(e - t0) / w);
    if (b0 < 0) b0 = 0;
    if (b1 >= RP_BINS) b1 = RP_BINS - 1;
    for (long b = b0; b <= b1; b++) {
        double bs = (double)t0 + b * w, be = bs + w;
        double x = fmin(be, (double)e) - fmax(bs, (double)s);
        if (x > 0) bins[b] += x;
    }
}

/* Adds the part of the busy interval [s, e) inside each step from step st on to the steps' GPU busy time. */
static void step_busy_add(rp_rank *p, long st, int64_t s, int64_t e) {
    for (size_t j = (size_t)st; j < p->nsteps && p->step_ts[j] < e; j++) {
        int64_t a = s > p->step_ts[j] ? s : p->step_ts[j], b = e < p->step_end[j] ? e : p->step_end[j];
        if (b > a) sat_add(&p->gpu_busy_ns[j], b - a);
    }
}

static long bin_of(int64_t t0, int64_t t1, int64_t t) {
    if (t1 <= t0) return 0;
    long b = (long)((double)(t - t0) * RP_BINS / (double)(t1 - t0));
    return b < 0 ? 0 : b >= RP_BINS ? RP_BINS - 1 : b;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Runs of intervals ascending by start that union_of merges as they are, where a radix sort of the whole
 * would move every interval several times: a rank's host rows come thread by thread, each in time order
 * (5 runs of 440,000 intervals on a 250 MB rank). */
#define RP_UNION_RUNS 16

/* The union of the intervals iv[0 .. n) (start, end pairs) that come in the k runs [rb[j], rb[j + 1]),
 * each ascending by start, into out (room for n pairs); returns how many.  Each step takes the least start
 * of the runs' heads (k is small), and merges as hta_interval_union_pairs does: the union does not depend on
 * the order of intervals that start together. */
static size_t union_runs(const int64_t *iv, const size_t *rb, size_t k, int64_t *out) {
    size_t head[RP_UNION_RUNS], m = 0;
    int64_t maxend = 0;
    memcpy(head, rb, k * sizeof *head);
    for (;;) {
        /* the run with the least head, and the least head of the others: its intervals up to that one are
         * next, taken at once (runs are long) */
        size_t best = k;
        int64_t next = INT64_MAX;
        for (size_t j = 0; j < k; j++) {
            if (head[j] == rb[j + 1]) continue;
            int64_t x = iv[2 * head[j]];
            if (best == k || x < iv[2 * head[best]]) {
                if (best != k && iv[2 * head[best]] < next) next = iv[2 * head[best]];
                best = j;
            } else if (x < next) {
                next = x;
            }
        }
        if (best == k) return m;
        size_t h = head[best], end = rb[best + 1];
        do {
            int64_t s = iv[2 * h], e = iv[2 * h + 1];
            if (m == 0 || s > maxend) {
                out[2 * m] = s, out[2 * m + 1] = maxend = e;
                m++;
            } else if (e > maxend) {
                out[2 * m - 1] = maxend = e;
            }
        } while (++h < end && iv[2 * h] <= next);
        head[best] = h;
    }
}

/* The union of the n intervals iv (start, end pairs: the caller's scratch, merged in place) into a, at its
 * size (sc: the sort's room, given back). */
static hta_status union_of(hta_arena *a, hta_arena *sc, int64_t *iv, size_t n, int64_t **os, int64_t **oe, size_t *on,
                           hta_error *err) {
    hta_arena_mark m = hta_arena_save(sc);
    int64_t *tmp = HTA_ANEW(sc, int64_t, 2 * n);
    if (!tmp) return hta_oom(err);
    /* few runs: merged into tmp; many: sorted (a radix sort) and merged in place */
    size_t rb[RP_UNION_RUNS + 1], k = 0;
    rb[0] = 0;
    for (size_t i = 1; i < n && k < RP_UNION_RUNS; i++)
        if (iv[2 * i] < iv[2 * i - 2]) rb[++k] = i;
    const int64_t *u = tmp;
    if (n && k < RP_UNION_RUNS) {
        rb[++k] = n;
        *on = union_runs(iv, rb, k, tmp);
    } else {
        HTA_TRY(hta_interval_union_pairs(iv, n, tmp, on, err));
        u = iv;
    }
    *os = HTA_ANEW(a, int64_t, *on);
    *oe = HTA_ANEW(a, int64_t, *on);
    if (!*os || !*oe) return hta_oom(err);
    for (size_t i = 0; i < *on; i++) (*os)[i] = u[2 * i], (*oe)[i] = u[2 * i + 1];
    hta_arena_reset(sc, m);
    return HTA_OK;
}

static int is_gpu_op(int cl) { return cl == HTA_CC_KERNEL || cl == HTA_CC_MEMCPY || cl == HTA_CC_MEMSET; }

/* What the profile asks of a row's name, asked once a name (memo: a byte a symbol, zeroed by the caller):
 * rows are many and names few, and each question reads the name's text (a cache miss, then a compare or
 * a glob).  RP_NM_* bits; RP_NM_ASKED once asked. */
enum { RP_NM_ASKED = 1, RP_NM_STEP = 2, RP_NM_DL = 4, RP_NM_CAPTURE = 8 };
static unsigned name_ask(const hta_trace *t, uint8_t *memo, uint32_t sym) {
    const char *nm = hta_sym(t->sym, sym);
    unsigned f = RP_NM_ASKED;
    if (hta_step_number(nm) >= 0) f |= RP_NM_STEP; /* ProfilerStep#N */
    if (!fnmatch(RP_DATALOADER_GLOB, nm, 0)) f |= RP_NM_DL;
    /* torch.compile's CUDA-graph trees recording a graph (mode="reduce-overhead") */
    if (strstr(nm, "cudagraph_trees.py") && (strstr(nm, "_record") || strstr(nm, "record_function")))
        f |= RP_NM_CAPTURE;
    memo[sym] = (uint8_t)f;
    return f;
}
/* the answer, asked where not yet (the call only then) */
static inline unsigned name_flags(const hta_trace *t, uint8_t *memo, uint32_t sym) {
    return memo[sym] ? memo[sym] : name_ask(t, memo, sym);
}

/* When a GPU operation was put on its queue: the end of its launch call (NULL: not known).  View times. */
static int launched_at(const hta_view *v, const hta_rank *r, size_t row, int64_t *at) {
    int32_t l = r->partner ? r->partner[row] : HTA_NO_ROW;
    if (l == HTA_NO_ROW) return 0;
    *at = r->ts[l] + r->dur[l] - v->origin_ns;
    return 1;
}

/* The median of x[0 .. n) (reordered): the middle value, or the mean of the two middle ones, rounded down. */
static int64_t median_of(int64_t *x, size_t n) {
    if (!n) return 0;
    int64_t hi = hta_select_i64(x, n, n / 2);
    if (n % 2) return hi;
    int64_t lo = x[0]; /* the largest of the values below x[n / 2] */
    for (size_t i = 1; i < n / 2; i++) lo = x[i] > lo ? x[i] : lo;
    return (lo + hi) / 2;
}

/* With two steps or more: measures how far the GPU runs behind the CPU (each step's first GPU operation,
 * of those launched inside it, against its launch) and, past RP_LAG_SHARE of the median step, moves the
 * steps onto the GPU timeline: a step is from its first GPU operation to the next step's first (the last
 * to its work's end).  Otherwise the CPU steps stay.  (A step that starts with data loading launches its
 * first kernel late, but that kernel starts at once: no lag.) */
static hta_status choose_window(const hta_view *v, const hta_rank *r, const unsigned char *cc, hta_arena *a,
                                rp_rank *p, size_t nst, hta_error *err) {
    if (nst < 2) return HTA_OK;
    size_t ns = p->nsteps;
    int64_t *gmin = HTA_ANEW(a, int64_t, ns), *gmax = HTA_ANEW(a, int64_t, ns), *x = HTA_ANEW(a, int64_t, ns),
            *lag = HTA_ANEW(a, int64_t, ns);
    if (!gmin || !gmax || !x || !lag) return hta_oom(err);
    for (size_t s = 0; s < ns; s++) gmin[s] = INT64_MAX, gmax[s] = INT64_MIN, x[s] = p->step_end[s] - p->step_ts[s];
    p->cpu_step_ns = median_of(x, ns);
    for (size_t i = 0; i < v->n; i++) {
        size_t row = v->row[i];
        int64_t at;
        if (hta_row_stream(r, row) == -1 || !is_gpu_op(cc[r->cat[row]]) || !launched_at(v, r, row, &at)) continue;
        long s = rp_step_of(p, at);
        if (s < 0) continue;
        if (v->ts[i] < gmin[s]) gmin[s] = v->ts[i], lag[s] = v->ts[i] - at;
        if (v->ts[i] + v->dur[i] > gmax[s]) gmax[s] = v->ts[i] + v->dur[i];
    }
    size_t m = 0;
    for (size_t s = 0; s < ns; s++) {
        if (gmin[s] == INT64_MAX) return HTA_OK; /* a step without GPU work: the CPU steps stay */
        x[m++] = lag[s] > 0 ? lag[s] : 0;
    }
    p->lag_ns = median_of(x, m);
    if ((double)p->lag_ns <= RP_LAG_SHARE * (double)p->cpu_step_ns) return HTA_OK;
    for (size_t s = 0; s < ns; s++) {
        int64_t e = s + 1 < ns ? gmin[s + 1] : gmax[s];
        if (e <= gmin[s]) return HTA_OK; /* GPU work of the steps interleaved: no GPU step to draw */
    }
    for (size_t s = 0; s < ns; s++) {
        p->step_ts[s] = gmin[s];
        p->step_end[s] = s + 1 < ns ? gmin[s + 1] : gmax[s];
    }
    p->window = RP_WIN_GPU;
    return HTA_OK;
}

/* The operator behind a host call: the outermost of the aten:: operators that enclose it one inside the
 * other (aten::to > aten::_to_copy > aten::copy_ for a .to(), aten::item for .item()); NULL: none. */
static const char *op_behind(const hta_trace *t, const hta_rank *r, size_t row) {
    const char *op = NULL;
    for (int32_t q = r->parent ? r->parent[row] : HTA_NO_ROW; q != HTA_NO_ROW; q = r->parent[q]) {
        const char *nm = hta_sym(t->sym, r->name[q]);
        if (!strncmp(nm, "aten::", 6)) op = nm;
        else if (op) break;
    }
    return op;
}

/* GPU busy time before t, from the busy union's prefix sums (pre[i]: the first i intervals). */
static int64_t busy_before(const rp_rank *p, const int64_t *pre, int64_t t) {
    size_t lo = 0, hi = p->ngpu; /* intervals starting before t: [0, lo) */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (p->gpu_s[mid] < t) lo = mid + 1;
        else hi = mid;
    }
    int64_t b = pre[lo];
    if (lo && p->gpu_e[lo - 1] > t) b -= p->gpu_e[lo - 1] - t;
    return b;
}

/* A stretch of input preparation: a host frame or operator (sweep). */
typedef struct prep_iv {
    int64_t s, e;
    const char *name;
} prep_iv;

/* by start, the longer first (the outer before what it holds) */
static int by_start(const void *a, const void *b) {
    const prep_iv *x = a, *y = b;
    if (x->s != y->s) return x->s < y->s ? -1 : 1;
    return (x->e < y->e) - (x->e > y->e);
}

/* Appends [s, e) named name to the growable array *v (n, cap); -1 when out of memory. */
static int push_iv(prep_iv **v, size_t *n, size_t *cap, int64_t s, int64_t e, const char *name) {
    if (*n == *cap) {
        size_t nc = *cap ? 2 * *cap : 16;
        prep_iv *x = realloc(*v, nc * sizeof *x);
        if (!x) return -1;
        *v = x, *cap = nc;
    }
    (*v)[(*n)++] = (prep_iv){s, e, name};
    return 0;
}

/* How many of the n sorted times x fall in [s, e). */
static size_t count_in(const int64_t *x, size_t n, int64_t s, int64_t e) {
    size_t lo = 0, hi = n, a;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (x[mid] < s) lo = mid + 1;
        else hi = mid;
    }
    a = lo, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (x[mid] < e) lo = mid + 1;
        else hi = mid;
    }
    return lo - a;
}

/* A point of the sweep that tells the GPU's idle and busy time apart: kind k's count changes by d at t. */
typedef struct sw_ev {
    int64_t t;
    int32_t k, d;
} sw_ev;
enum { SW_BUSY, SW_COMM, SW_COMP, SW_MEM, SW_BLOCK, SW_QUEUED, SW_DL, SW_STEP, SW_N };

/* The points by time, stably (the order of points at one time is the order they were put in): a radix sort,
 * where qsort's comparator calls were a tenth of the report's time on a large rank. */
_Static_assert(sizeof(sw_ev) == 16 && offsetof(sw_ev, t) == 0, "a sweep point is a 16-byte record keyed by t");
static int sort_by_t(hta_arena *sc, sw_ev *ev, size_t n) {
    if (n < 2) return 0;
    hta_arena_mark m = hta_arena_save(sc); /* the room the unions' inputs left */
    sw_ev *tmp = n <= UINT32_MAX ? HTA_ANEW(sc, sw_ev, n) : NULL;
    if (!tmp) return -1;
    hta_rsort_rec16(ev, n, tmp);
    hta_arena_reset(sc, m);
    return 0;
}

/* x[0 .. n) ascending (a radix sort). */
static int sort_i64(int64_t *x, size_t n) {
    if (n < 2) return 0;
    uint64_t *k = n <= UINT32_MAX ? malloc(2 * n * sizeof *k) : NULL;
    if (!k) return -1;
    for (size_t i = 0; i < n; i++) k[i] = hta_rsort_key(x[i]);
    hta_rsort(k, NULL, n, k + n, NULL);
    for (size_t i = 0; i < n; i++) x[i] = hta_rsort_unkey(k[i]);
    free(k);
    return 0;
}

/* Whether a host call can block the host while the GPU idles: the calls hta_api_may_block names, and any
 * runtime call of RP_LONG_GAP_NS or more (a launch that loads its kernel's code on first use). */
static int blocking_call(unsigned api, int cl, int64_t dur) {
    return cl == HTA_CC_RUNTIME && (hta_api_may_block(api) || (dur >= RP_LONG_GAP_NS && !(api & HTA_API_EVENT_QUERY)));
}

/* The sweep's points, grown as they come: a GPU operation gives up to six, a host call up to four (only the
 * few that load data or block give any), so a bound by the rows would hold several times what is used. */
typedef struct sw_vec {
    sw_ev *v;
    size_t n, cap;
    int64_t base; /* subtracted from every time: the sweep reads only differences, and times from the span's
                   * start differ in fewer bits than times from the clock's zero, which saves the radix sort a
                   * pass where the span crosses a multiple of 2^33 ns (one rank of 250 MB: 4 passes -> 3) */
} sw_vec;

static int sw_push(sw_vec *w, int64_t t, int32_t k, int32_t d) {
    if (w->n == w->cap) {
        size_t nc = w->cap ? 2 * w->cap : 4096;
        sw_ev *x = hta_big_realloc(w->v, nc * sizeof *x);
        if (!x) return -1;
        w->v = x, w->cap = nc;
    }
    w->v[w->n++] = (sw_ev){t - w->base, k, d};
    return 0;
}

/* attribute's sweep, into w (pre: the GPU busy union's prefix sums). */
static hta_status sweep(const hta_view *v, const hta_trace *t, const hta_rank *r, const unsigned char *cc,
                        uint8_t *nf, hta_arena *a, hta_arena *sc, const int64_t *pre, sw_vec *w, rp_rank *p, hta_error *err) {
    size_t n = v->n;
#define EV(T, K, D)                                                                                                \
    do {                                                                                                           \
        if (sw_push(w, (T), (K), (D))) return hta_oom(err);                                                        \
    } while (0)
    for (size_t s = 0; s < p->nsteps; s++) {
        EV(p->step_ts[s], SW_STEP, (int32_t)(s + 1));
        EV(p->step_end[s], SW_STEP, 0);
    }
    int64_t dl_end = INT64_MIN;
    size_t cap = 0, nprep = 0, cprep = 0, ndl = 0, cdl = 0;
    prep_iv *prep = NULL, *dlr = NULL; /* input preparation's candidates, the DataLoader's ranges */
    /* the host's launches (every call that puts work on a device queue), by time: input preparation is a long
     * host stretch that launches nothing while the GPU idles */
    size_t nl = 0;
    for (size_t i = 0; i < n; i++) {
        size_t row = v->row[i];
        unsigned api = t->api ? t->api[r->name[row]] : hta_api_of(hta_sym(t->sym, r->name[row]));
        nl += hta_row_stream(r, row) == -1 && cc[r->cat[row]] == HTA_CC_RUNTIME && hta_api_enqueues(api);
    }
    int64_t *lt = HTA_ANEW(sc, int64_t, nl ? nl : 1); /* scratch: gone with the profile's build */
    size_t nsym = hta_symtab_count(t->sym);
    uint8_t *ktm = HTA_ANEW(sc, uint8_t, nsym + 1); /* per name: its kernel type, 0xff: not yet (once a name) */
    if (!lt || !ktm) return hta_oom(err);
    memset(ktm, 0xff, nsym + 1);
    nl = 0;
    for (size_t i = 0; i < n; i++) {
        size_t row = v->row[i];
        unsigned api = t->api ? t->api[r->name[row]] : hta_api_of(hta_sym(t->sym, r->name[row]));
        if (hta_row_stream(r, row) == -1 && cc[r->cat[row]] == HTA_CC_RUNTIME && hta_api_enqueues(api)) lt[nl++] = v->ts[i];
    }
    if (sort_i64(lt, nl)) return hta_oom(err);
    for (size_t i = 0; i < n; i++) {
        size_t row = v->row[i];
        int64_t s = v->ts[i], e = s + v->dur[i], at;
        int cl = cc[r->cat[row]];
        const char *nm = hta_sym(t->sym, r->name[row]);
        if (hta_row_stream(r, row) != -1) {
            if (!is_gpu_op(cl)) continue;
            if (cl == HTA_CC_KERNEL) p->nkernels++;
            if (e > s) {
                EV(s, SW_BUSY, 1);
                EV(e, SW_BUSY, -1);
                int k = SW_MEM;
                if (cl == HTA_CC_KERNEL) {
                    uint32_t ni = r->name[row];
                    if (ktm[ni] == 0xff) ktm[ni] = (uint8_t)hta_kernel_type_of(nm);
                    hta_kernel_type kt = (hta_kernel_type)ktm[ni];
                    k = kt == HTA_KT_COMMUNICATION ? SW_COMM : kt == HTA_KT_MEMORY ? SW_MEM : SW_COMP;
                }
                EV(s, k, 1);
                EV(e, k, -1);
            }
            if (launched_at(v, r, row, &at) && at < s) {
                EV(at, SW_QUEUED, 1);
                EV(s, SW_QUEUED, -1);
            }
            continue;
        }
        unsigned api = t->api ? t->api[r->name[row]] : hta_api_of(nm);
        if (cl == HTA_CC_RUNTIME) {
            p->ncapture += (api & HTA_API_CAPTURE) != 0;
            p->nklaunch += (api & HTA_API_KERNEL_LAUNCH) != 0;
            /* a launch recorded into a graph runs nothing: no GPU activity carries its correlation */
            p->nklaunch_none += (api & HTA_API_KERNEL_LAUNCH) && r->partner[row] < 0;
        } else if (name_flags(t, nf, r->name[row]) & RP_NM_CAPTURE) {
            p->ncapture++; /* torch.compile's CUDA-graph trees recording a graph (mode="reduce-overhead") */
        }
        if ((cl == HTA_CC_USER_ANNOTATION || cl == HTA_CC_CPU_OP) && (name_flags(t, nf, r->name[row]) & RP_NM_DL) &&
            s >= dl_end && e > s) {
            EV(s, SW_DL, 1);
            EV(e, SW_DL, -1);
            dl_end = e;
            if (push_iv(&dlr, &ndl, &cdl, s, e, nm)) {
                free(prep), free(dlr);
                return hta_oom(err);
            }
        } else if ((cl == HTA_CC_PYTHON_FUNCTION || cl == HTA_CC_CPU_OP || cl == HTA_CC_USER_ANNOTATION) &&
                   e - s >= RP_LONG_GAP_NS && !(name_flags(t, nf, r->name[row]) & RP_NM_STEP) && rp_step_of(p, s) >= 0 &&
                   busy_before(p, pre, e) == busy_before(p, pre, p->step_ts[rp_step_of(p, s)]) &&
                   count_in(lt, nl, s, e) == 0) {
            /* input preparation: before its step's first GPU work, the host works 1 ms or more in one frame or
             * operator that launches nothing (a Hugging Face processor decoding and resizing before the first
             * kernel, a batch assembled in Python at a step's start): data loading without the DataLoader's
             * range.  The outermost of nested ones count, below */
            if (push_iv(&prep, &nprep, &cprep, s, e, nm)) {
                free(prep), free(dlr);
                return hta_oom(err);
            }
        }
        if (!blocking_call(api, cl, v->dur[i]) || e <= s) continue;
        EV(s, SW_BLOCK, 1);
        EV(e, SW_BLOCK, -1);
        if (rp_step_of(p, s) < 0) continue;
        /* by name: its calls, their time and the GPU idle time during them */
        size_t b = 0;
        while (b < p->nblock && strcmp(p->block[b].name, nm)) b++;
        if (b == p->nblock) {
            if (b == cap) {
                size_t nc = cap ? 2 * cap : 8;
                rp_block *nb = HTA_ANEW(a, rp_block, nc);
                if (!nb) return hta_oom(err);
                if (b) memcpy(nb, p->block, b * sizeof *nb);
                p->block = nb, cap = nc;
            }
            p->block[p->nblock++] = (rp_block){nm, NULL, 0, 0, 0};
        }
        rp_block *bk = &p->block[b];
        int64_t idle = (e - s) - (busy_before(p, pre, e) - busy_before(p, pre, s));
        if (!bk->op || v->dur[i] * bk->count > bk->dur_ns) bk->op = op_behind(t, r, row); /* the longest call's */
        bk->count++;
        sat_add(&bk->dur_ns, v->dur[i]);
        sat_add(&bk->idle_ns, idle);
    }
    /* the outermost input-preparation stretches, by start, outside the DataLoader's ranges (those are data
     * loading already) */
    if (nprep > 1) qsort(prep, nprep, sizeof *prep, by_start);
    if (ndl > 1) qsort(dlr, ndl, sizeof *dlr, by_start);
    for (size_t q = 1; q < ndl; q++) /* each range's end: the latest so far, for the search below */
        if (dlr[q].e < dlr[q - 1].e) dlr[q].e = dlr[q - 1].e;
    int64_t prep_end = INT64_MIN, prep_long = 0;
    for (size_t q = 0; q < nprep; q++) {
        if (prep[q].s < prep_end) continue;
        size_t lo = 0, hi = ndl; /* ranges that start before this stretch ends: [0, lo) */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (dlr[mid].s < prep[q].e) lo = mid + 1;
            else hi = mid;
        }
        if (lo && dlr[lo - 1].e > prep[q].s) continue;
        prep_end = prep[q].e;
        sat_add(&p->prep_ns, prep[q].e - prep[q].s);
        if (prep[q].e - prep[q].s > prep_long) {
            prep_long = prep[q].e - prep[q].s;
            if (!(p->prep_op = hta_arena_strdup(a, prep[q].name))) {
                free(prep), free(dlr);
                return hta_oom(err);
            }
        }
        if (sw_push(w, prep[q].s, SW_DL, 1) || sw_push(w, prep[q].e, SW_DL, -1)) {
            free(prep), free(dlr);
            return hta_oom(err);
        }
    }
    free(prep), free(dlr);
#undef EV
    sw_ev *ev = w->v;
    size_t ne = w->n;
    if (sort_by_t(sc, ev, ne)) return hta_oom(err);
    int64_t cnt[SW_N] = {0};
    long step = -1;
    for (size_t i = 0; i < ne;) {
        int64_t x = ev[i].t;
        for (; i < ne && ev[i].t == x; i++) {
            if (ev[i].k == SW_STEP) {
                if (ev[i].d) cnt[SW_STEP]++, step = ev[i].d - 1;
                else cnt[SW_STEP]--;
            } else cnt[ev[i].k] += ev[i].d;
        }
        if (i == ne || cnt[SW_STEP] <= 0 || step < 0) continue;
        int64_t len = ev[i].t - x;
        size_t s = (size_t)step;
        if (cnt[SW_BUSY] <= 0) {
            if (cnt[SW_BLOCK] > 0) {
                sat_add(&p->idle_block_ns[s], len);
                if (cnt[SW_QUEUED] > 0) sat_add(&p->idle_bwait_ns[s], len);
            } else if (cnt[SW_QUEUED] > 0) sat_add(&p->idle_wait_ns[s], len);
            else if (cnt[SW_DL] > 0) sat_add(&p->idle_dl_ns[s], len);
            else sat_add(&p->idle_host_ns[s], len);
        } else {
            if (cnt[SW_COMM] > 0 && cnt[SW_COMP] <= 0) sat_add(&p->comm_excl_ns[s], len);
            if (cnt[SW_COMP] > 0) sat_add(&p->comp_busy_ns[s], len);
            if (cnt[SW_MEM] > 0 && cnt[SW_COMM] <= 0 && cnt[SW_COMP] <= 0) sat_add(&p->mem_excl_ns[s], len);
        }
    }
    return HTA_OK;
}

/* The GPU's idle and busy time of each step told apart (rp_rank's idle_* and *_excl), the blocking calls
 * by name, and the capture counts, in one sweep over the points where something starts or ends. */
static hta_status attribute(const hta_view *v, const hta_trace *t, const hta_rank *r, const unsigned char *cc,
                            uint8_t *nf, hta_arena *a, hta_arena *sc, size_t ngpu_ops, rp_rank *p, hta_error *err) {
    int64_t *pre = HTA_ANEW(sc, int64_t, p->ngpu + 1);
    if (!pre) return hta_oom(err);
    pre[0] = 0;
    for (size_t q = 0; q < p->ngpu; q++) pre[q + 1] = pre[q] + (p->gpu_e[q] - p->gpu_s[q]);
    /* room for the GPU's points and the steps' at once; the host's grow it */
    size_t cap = 6 * ngpu_ops + 2 * p->nsteps + 4096;
    sw_vec w = {hta_big_realloc(NULL, cap * sizeof(sw_ev)), 0, cap, p->t0};
    if (!w.v) return hta_oom(err);
    hta_status st = sweep(v, t, r, cc, nf, a, sc, pre, &w, p, err);
    hta_big_free(w.v);
    return st;
}

/* rp_profile_build with sc for what lives only while it runs (per-row scratch: rows of every rank add up). */
static hta_status profile_build(hta_ctx *ctx, size_t k, hta_arena *a, hta_arena *sc, rp_rank *p, hta_error *err) {
    memset(p, 0, sizeof *p);
    const hta_trace *t = ctx->trace;
    const hta_rank *r = t->ranks[k];
    p->rank = r->rank;
    p->queue_median = -1;
    const hta_view *v;
    HTA_TRY(hta_ctx_view(ctx, k, &v, err));
    /* the run's kernel types: the same communication as kernels, temporal and overlap */
    const uint8_t *kty;
    HTA_TRY(hta_ctx_kernel_types(ctx, k, &kty, err));
    size_t n = v->n;
    /* categories classified once */
    unsigned char *cc = HTA_ANEW(a, unsigned char, t->ncats);
    if (!cc) return hta_oom(err);
    for (size_t c = 0; c < t->ncats; c++) cc[c] = (unsigned char)hta_cat_classify(hta_sym(t->sym, t->cats[c]));
    /* the names' answers (name_flags), for the whole build */
    size_t nsym = hta_symtab_count(t->sym);
    uint8_t *nf = hta_arena_calloc(sc, nsym ? nsym : 1, 1);
    if (!nf) return hta_oom(err);
    /* the unions' inputs at their size (GPU operations; the host's rows that may be busy time), not the view's:
     * the scratch is written at once, so room beyond what is used would cost memory too */
    size_t mg = 0, mc = 0;
    for (size_t i = 0; i < n; i++) {
        size_t row = v->row[i];
        if (hta_row_stream(r, row) != -1) mg += is_gpu_op(cc[r->cat[row]]);
        else mc++;
    }
    /* the unions' inputs and their room go once the unions are made: the blocks are the next scratch's */
    hta_arena_mark m0 = hta_arena_save(sc);
    int64_t *gi = HTA_ANEW(sc, int64_t, 2 * mg), *ci = HTA_ANEW(sc, int64_t, 2 * mc); /* (start, end) pairs */
    if (!gi || !ci) return hta_oom(err);
    size_t ng = 0, nc = 0, nst = 0, ncoll = 0, na = 0;
    int64_t t0 = INT64_MAX, t1 = INT64_MIN;
    /* first pass: span, steps, unions' inputs */
    for (size_t i = 0; i < n; i++) {
        size_t row = v->row[i];
        int64_t s = v->ts[i], e = s + v->dur[i];
        if (s < t0) t0 = s;
        if (e > t1) t1 = e;
        int cl = cc[r->cat[row]];
        int gpu = hta_row_stream(r, row) != -1;
        if (gpu && is_gpu_op(cl)) {
            gi[2 * ng] = s, gi[2 * ng++ + 1] = e;
            if (cl == HTA_CC_KERNEL && kty[row] == HTA_KT_COMMUNICATION) ncoll++;
        } else if (!gpu && (cl == HTA_CC_CPU_OP || cl == HTA_CC_USER_ANNOTATION || cl == HTA_CC_PYTHON_FUNCTION ||
                            cl == HTA_CC_RUNTIME)) {
            /* CPU busy: operators and runtime calls; Python frames and annotations wrap whole phases and
             * would make every thread look busy all the time */
            if (name_flags(t, nf, r->name[row]) & RP_NM_STEP) nst++;
            else if (cl == HTA_CC_CPU_OP || cl == HTA_CC_RUNTIME) ci[2 * nc] = s, ci[2 * nc++ + 1] = e;
            else if (cl == HTA_CC_USER_ANNOTATION) na++;
        }
    }
    /* a rank without GPU work (a CPU-only trace, gloo collectives as annotations): its annotations are its
     * work, as on its critical path (docs/critical-path.md, "CPU-only ranks") */
    for (size_t i = 0; !ng && na && i < n; i++) {
        size_t row = v->row[i];
        if (hta_row_stream(r, row) == -1 && cc[r->cat[row]] == HTA_CC_USER_ANNOTATION &&
            !(name_flags(t, nf, r->name[row]) & RP_NM_STEP))
            ci[2 * nc] = v->ts[i], ci[2 * nc++ + 1] = v->ts[i] + v->dur[i];
    }
    if (!n) t0 = 0, t1 = -1; /* no rows: an empty span, which the headline reports as "no events" */
    p->t0 = t0, p->t1 = t1;
    p->has_gpu = ng > 0;
    HTA_TRY(union_of(a, sc, gi, ng, &p->gpu_s, &p->gpu_e, &p->ngpu, err));
    HTA_TRY(union_of(a, sc, ci, nc, &p->cpu_s, &p->cpu_e, &p->ncpu, err));
    hta_arena_reset(sc, m0);
    /* steps, by start; no step: one step over the whole view, so that every figure has a step */
    size_t ms = nst ? nst : 1;
    p->step_num = HTA_ANEW(a, int64_t, ms), p->step_ts = HTA_ANEW(a, int64_t, ms);
    p->step_end = HTA_ANEW(a, int64_t, ms);
    uint32_t *sidx = HTA_ANEW(sc, uint32_t, ms), *vix = HTA_ANEW(sc, uint32_t, ms);
    int64_t *skey = HTA_ANEW(sc, int64_t, ms);
    if (!p->step_num || !p->step_ts || !p->step_end || !sidx || !vix || !skey) return hta_oom(err);
    size_t j = 0;
    for (size_t i = 0; i < n && nst; i++) {
        size_t row = v->row[i];
        int cl = cc[r->cat[row]];
        if (hta_row_stream(r, row) != -1 || !(cl == HTA_CC_CPU_OP || cl == HTA_CC_USER_ANNOTATION ||
                                              cl == HTA_CC_PYTHON_FUNCTION || cl == HTA_CC_RUNTIME))
            continue;
        if (!(name_flags(t, nf, r->name[row]) & RP_NM_STEP)) continue;
        sidx[j] = (uint32_t)j, vix[j] = (uint32_t)i, skey[j++] = v->ts[i];
        if (j == 1) p->step_pid = hta_row_thread(r, row)->pid, p->step_tid = hta_row_thread(r, row)->tid;
    }
    /* the trace's own steps: HTA's view leaves the last one out, so a trace of two steps shows one, which is
     * still a step (not a lone step whose trace span is the window) */
    size_t nst_trace = 0;
    for (size_t i = 0; nst == 1 && i < r->n && nst_trace < 2; i++) {
        int cl = cc[r->cat[i]];
        if (hta_row_stream(r, i) == -1 && (cl == HTA_CC_CPU_OP || cl == HTA_CC_USER_ANNOTATION) &&
            hta_step_number(hta_sym(t->sym, r->name[i])) >= 0)
            nst_trace++;
    }
    if (nst >= 2 || nst_trace >= 2) {
        HTA_TRY(hta_stable_sort_idx_i64(sidx, nst, skey, err));
        for (size_t q = 0; q < nst; q++) {
            size_t i = vix[sidx[q]];
            p->step_num[q] = hta_step_number(hta_sym(t->sym, r->name[v->row[i]]));
            p->step_ts[q] = v->ts[i], p->step_end[q] = v->ts[i] + v->dur[i];
        }
        p->nsteps = nst;
    } else {
        /* one step or none: the window is the whole span, CPU and GPU (a lone ProfilerStep leaves out
         * what ran before and after it, often most of the GPU's work); it keeps the step's number */
        p->step_num[0] = nst ? hta_step_number(hta_sym(t->sym, r->name[v->row[vix[0]]])) : -1;
        p->step_ts[0] = t0, p->step_end[0] = t1 > t0 ? t1 : t0 + 1;
        p->nsteps = 1;
        p->window = RP_WIN_SPAN;
        if (!nst) p->step_pid = p->step_tid = -1;
        /* the "step" thread of a trace without steps: the one that runs the most operators (the main one) */
        size_t *cnt = HTA_ANEW(a, size_t, r->nthreads);
        if (!cnt) return hta_oom(err);
        memset(cnt, 0, (r->nthreads ? r->nthreads : 1) * sizeof *cnt);
        size_t best = SIZE_MAX;
        for (size_t i = 0; i < n; i++) {
            size_t row = v->row[i];
            if (hta_row_stream(r, row) != -1 || cc[r->cat[row]] != HTA_CC_CPU_OP) continue;
            size_t th = r->thread[row];
            if (++cnt[th] > (best == SIZE_MAX ? 0 : cnt[best])) best = th;
        }
        if (!nst && best != SIZE_MAX) p->step_pid = r->threads[best].pid, p->step_tid = r->threads[best].tid;
    }
    HTA_TRY(choose_window(v, r, cc, a, p, nst, err));
    ms = p->nsteps;
    p->dl_ns = HTA_ANEW(a, int64_t, ms), p->sync_ns = HTA_ANEW(a, int64_t, ms), p->mem_ns = HTA_ANEW(a, int64_t, ms);
    p->comm_ns = HTA_ANEW(a, int64_t, ms), p->comp_ns = HTA_ANEW(a, int64_t, ms);
    p->gpu_busy_ns = HTA_ANEW(a, int64_t, ms), p->late_ns = HTA_ANEW(a, int64_t, ms);
    p->nsync = HTA_ANEW(a, size_t, ms), p->nlaunch = HTA_ANEW(a, size_t, ms);
    p->cp_ns = HTA_ANEW(a, int64_t, ms * RP_NBOUND);
    int64_t **zs[] = {&p->idle_block_ns, &p->idle_wait_ns, &p->idle_dl_ns,  &p->idle_host_ns,
                      &p->idle_bwait_ns, &p->comm_excl_ns, &p->comp_busy_ns, &p->mem_excl_ns};
    for (size_t z = 0; z < sizeof zs / sizeof *zs; z++) {
        if (!(*zs[z] = HTA_ANEW(a, int64_t, ms))) return hta_oom(err);
        memset(*zs[z], 0, ms * sizeof(int64_t));
    }
    p->coll_step = HTA_ANEW(a, int32_t, ncoll), p->coll_dur = HTA_ANEW(a, int64_t, ncoll);
    int64_t *coll_ts = HTA_ANEW(sc, int64_t, ncoll);
    uint32_t *coll_ix = HTA_ANEW(sc, uint32_t, ncoll);
    if (!p->dl_ns || !p->sync_ns || !p->mem_ns || !p->comm_ns || !p->comp_ns || !p->gpu_busy_ns || !p->late_ns ||
        !p->nsync || !p->nlaunch || !p->cp_ns || !p->coll_step || !p->coll_dur || !coll_ts || !coll_ix)
        return hta_oom(err);
    memset(p->dl_ns, 0, ms * sizeof(int64_t)), memset(p->sync_ns, 0, ms * sizeof(int64_t));
    memset(p->mem_ns, 0, ms * sizeof(int64_t)), memset(p->comm_ns, 0, ms * sizeof(int64_t));
    memset(p->comp_ns, 0, ms * sizeof(int64_t)), memset(p->gpu_busy_ns, 0, ms * sizeof(int64_t));
    memset(p->late_ns, 0, ms * sizeof(int64_t)), memset(p->cp_ns, 0, ms * RP_NBOUND * sizeof(int64_t));
    memset(p->nsync, 0, ms * sizeof(size_t)), memset(p->nlaunch, 0, ms * sizeof(size_t));
    /* second pass: per step figures.  A data-loader annotation counts once: nested ones (the iterator's
     * own) are inside the outer one, and only depth-0 matches on their thread are summed. */
    int64_t dl_end = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        size_t row = v->row[i];
        int64_t s = v->ts[i], d = v->dur[i];
        int cl = cc[r->cat[row]];
        int gpu = hta_row_stream(r, row) != -1;
        long st = rp_step_of(p, s);
        if (st < 0) continue;
        const char *nm = hta_sym(t->sym, r->name[row]);
        if (gpu) {
            if (cl == HTA_CC_MEMCPY || cl == HTA_CC_MEMSET) sat_add(&p->mem_ns[st], d);
            else if (cl == HTA_CC_KERNEL) {
                hta_kernel_type kt = (hta_kernel_type)kty[row];
                if (kt == HTA_KT_COMMUNICATION) {
                    sat_add(&p->comm_ns[st], d);
                    coll_ts[p->ncoll] = s, p->coll_dur[p->ncoll] = d, p->coll_step[p->ncoll++] = (int32_t)st;
                } else if (kt == HTA_KT_MEMORY) sat_add(&p->mem_ns[st], d);
                else sat_add(&p->comp_ns[st], d);
            }
            continue;
        }
        unsigned api = t->api ? t->api[r->name[row]] : hta_api_of(nm);
        if (api & HTA_API_SYNC) sat_add(&p->sync_ns[st], d), p->nsync[st]++;
        if (api & HTA_API_LAUNCH) p->nlaunch[st]++;
        if ((cl == HTA_CC_USER_ANNOTATION || cl == HTA_CC_CPU_OP) && (name_flags(t, nf, r->name[row]) & RP_NM_DL) &&
            s >= dl_end) {
            sat_add(&p->dl_ns[st], d);
            dl_end = s + d;
        }
    }
    /* the communication kernels in start order (the view is not sorted by time) */
    for (size_t q = 0; q < p->ncoll; q++) coll_ix[q] = (uint32_t)q;
    HTA_TRY(hta_stable_sort_idx_i64(coll_ix, p->ncoll, coll_ts, err));
    int32_t *cs2 = HTA_ANEW(a, int32_t, p->ncoll);
    int64_t *cd2 = HTA_ANEW(a, int64_t, p->ncoll);
    if (!cs2 || !cd2) return hta_oom(err);
    for (size_t q = 0; q < p->ncoll; q++) cs2[q] = p->coll_step[coll_ix[q]], cd2[q] = p->coll_dur[coll_ix[q]];
    p->coll_step = cs2, p->coll_dur = cd2;
    /* CPU busy inside the steps (the headline's) */
    for (size_t q = 0; q < p->ncpu; q++) {
        int64_t lo = p->step_ts[0], hi = p->step_end[p->nsteps - 1];
        int64_t x = p->cpu_s[q] > lo ? p->cpu_s[q] : lo, y = p->cpu_e[q] < hi ? p->cpu_e[q] : hi;
        if (y > x) sat_add(&p->cpu_steps_ns, y - x);
    }
    /* GPU busy per step and the idle gaps between busy intervals inside the steps */
    hta_arena_mark m1 = hta_arena_save(sc);
    int64_t *gap = HTA_ANEW(sc, int64_t, p->ngpu);
    size_t ngap = 0;
    if (!gap) return hta_oom(err);
    for (size_t q = 0; q < p->ngpu; q++) {
        long st = rp_step_of(p, p->gpu_s[q]);
        /* a busy interval counts in each step it overlaps, for the part inside it: one that starts in a
         * step and runs past its end (a long communication kernel on its own stream, the GPU behind the
         * CPU) would otherwise make a step more than 100% busy */
        if (st >= 0 || (p->nsteps && p->gpu_s[q] < p->step_ts[0]))
            step_busy_add(p, st >= 0 ? st : 0, p->gpu_s[q], p->gpu_e[q]);
        if (q + 1 < p->ngpu && st >= 0 && rp_step_of(p, p->gpu_s[q + 1]) >= 0) {
            int64_t g = p->gpu_s[q + 1] - p->gpu_e[q];
            gap[ngap++] = g;
            if (g >= RP_LONG_GAP_NS) p->gaps_long++, sat_add(&p->gaps_long_ns, g);
            else p->gaps_short++, sat_add(&p->gaps_short_ns, g);
        }
    }
    if (ngap) {
        p->gap_median_ns = hta_select_i64(gap, ngap, ngap / 2), p->gap_max_ns = gap[ngap / 2];
        for (size_t i = ngap / 2; i < ngap; i++) p->gap_max_ns = gap[i] > p->gap_max_ns ? gap[i] : p->gap_max_ns;
    }
    hta_arena_reset(sc, m1);
    HTA_TRY(attribute(v, t, r, cc, nf, a, sc, ng, p, err));
    /* series */
    rp_series *ser = p->ser = HTA_ANEW(a, rp_series, 1);
    if (!ser) return hta_oom(err);
    memset(ser, 0, sizeof *ser);
    double b[RP_BINS];
    memset(b, 0, sizeof b);
    double bw = t1 > t0 ? (double)(t1 - t0) / RP_BINS : 1;
    for (size_t q = 0; q < p->ngpu; q++) bin_add(b, t0, t1, p->gpu_s[q], p->gpu_e[q]);
    for (int q = 0; q < RP_BINS; q++) ser->gpu_busy[q] = (float)fmin(1, b[q] / bw);
    memset(b, 0, sizeof b);
    for (size_t q = 0; q < p->ncpu; q++) bin_add(b, t0, t1, p->cpu_s[q], p->cpu_e[q]);
    for (int q = 0; q < RP_BINS; q++) ser->cpu_busy[q] = (float)fmin(1, b[q] / bw);
    if (p->has_gpu) {
        hta_series_rules rules = ctx->hta_compat ? HTA_SERIES_HTA : HTA_SERIES_EXACT;
        hta_queue_series qs = {0};
        HTA_TRY(hta_queue_series_build(v, rules, sc, &qs, err)); /* scratch: the room the unions and the sweep left */
        /* the queue of all streams together: the samples are stream-major, so the running length of each
         * stream is kept and their sum binned at each sample */
        double *lens = HTA_ANEW(sc, double, qs.n);
        size_t nl = 0;
        if (!lens) {
            hta_queue_series_free(&qs);
            return hta_oom(err);
        }
        for (size_t q = 0; q < qs.n; q++) {
            long bi = bin_of(t0, t1, qs.ts[q]);
            if (qs.queue[q] > ser->queue[bi]) ser->queue[bi] = (float)qs.queue[q];
            if (rp_step_of(p, qs.ts[q]) >= 0) lens[nl++] = (double)qs.queue[q]; /* the window's launches */
        }
        if (nl) {
            p->queue_median = hta_select_dbl(lens, nl, nl / 2);
        }
        hta_queue_series_free(&qs);
        hta_membw_series mb = {0};
        HTA_TRY(hta_membw_series_build(v, rules, sc, &mb, err));
        for (size_t q = 0; q < mb.n; q++) {
            long bi = bin_of(t0, t1, mb.ts[q]);
            if (mb.bw[q] > ser->membw[bi]) ser->membw[bi] = (float)mb.bw[q];
        }
        hta_membw_series_free(&mb);
    }
    return HTA_OK;
}

hta_status rp_profile_build(hta_ctx *ctx, size_t k, hta_arena *a, rp_rank *p, hta_error *err) {
    hta_arena sc = HTA_ARENA_INIT;
    hta_status st = profile_build(ctx, k, a, &sc, p, err);
    hta_arena_free(&sc);
    return st;
}

void rp_split_of(const rp_rank *p, rp_split *o) {
    memset(o, 0, sizeof *o);
    for (size_t s = 0; s < p->nsteps; s++) {
        sat_add(&o->window, p->step_end[s] - p->step_ts[s]), sat_add(&o->busy, p->gpu_busy_ns[s]);
        sat_add(&o->comp, p->comp_busy_ns[s]), sat_add(&o->block, p->idle_block_ns[s]);
        sat_add(&o->wait, p->idle_wait_ns[s]), sat_add(&o->dl, p->idle_dl_ns[s]), sat_add(&o->host, p->idle_host_ns[s]);
    }
}

size_t rp_block_calls(const rp_rank *pr, size_t n, const unsigned char *on, rp_block *out, size_t cap) {
    size_t m = 0;
    double window = 0;
    for (size_t k = 0; k < n; k++) {
        if (on && !on[k]) continue;
        const rp_rank *p = &pr[k];
        for (size_t s = 0; s < p->nsteps; s++) window += (double)(p->step_end[s] - p->step_ts[s]);
        for (size_t b = 0; b < p->nblock; b++) {
            const rp_block *x = &p->block[b];
            if (x->idle_ns <= 0) continue;
            size_t j = 0;
            while (j < m && strcmp(out[j].name, x->name)) j++;
            if (j == m && m == cap) continue;
            if (j == m) out[m++] = (rp_block){x->name, x->op, 0, 0, 0};
            sat_add(&out[j].count, x->count), sat_add(&out[j].dur_ns, x->dur_ns), sat_add(&out[j].idle_ns, x->idle_ns);
        }
    }
    for (size_t i = 1; i < m; i++) /* by idle time, most first; ties by name (few names) */
        for (size_t j = i; j > 0 && (out[j].idle_ns > out[j - 1].idle_ns ||
                                     (out[j].idle_ns == out[j - 1].idle_ns && strcmp(out[j].name, out[j - 1].name) < 0));
             j--) {
            rp_block t = out[j];
            out[j] = out[j - 1], out[j - 1] = t;
        }
    size_t keep = m ? 1 : 0;
    while (keep < m && (double)out[keep].idle_ns >= 0.01 * window) keep++;
    return keep;
}

typedef struct numdur {
    int64_t num, dur;
} numdur;

static int by_num(const void *a, const void *b) {
    const numdur *x = a, *y = b;
    return (x->num > y->num) - (x->num < y->num);
}

int64_t rp_job_median(const int64_t *num, const int64_t *dur, size_t n) {
    numdur *v = malloc((n ? n : 1) * sizeof *v);
    int64_t *m = malloc((n ? n : 1) * sizeof *m);
    int64_t out = 0;
    if (v && m && n) {
        for (size_t i = 0; i < n; i++) v[i] = (numdur){num[i], dur[i]};
        qsort(v, n, sizeof *v, by_num);
        size_t nm = 0;
        for (size_t i = 0; i < n;) {
            int64_t mx = v[i].dur;
            size_t j = i;
            while (j < n && v[j].num == v[i].num) mx = v[j].dur > mx ? v[j].dur : mx, j++;
            m[nm++] = mx;
            i = j;
        }
        qsort(m, nm, sizeof *m, cmp_i64);
        out = nm % 2 ? m[nm / 2] : (m[nm / 2 - 1] + m[nm / 2]) / 2;
    }
    free(v);
    free(m);
    return out;
}

int64_t rp_job_step(const rp_rank *pr, size_t n) {
    size_t tot = 0;
    for (size_t k = 0; k < n; k++) tot += pr[k].nsteps;
    int64_t *num = malloc((tot ? tot : 1) * sizeof *num), *dur = malloc((tot ? tot : 1) * sizeof *dur);
    int64_t out = 0;
    if (num && dur) {
        size_t j = 0;
        for (size_t k = 0; k < n; k++)
            for (size_t s = 0; s < pr[k].nsteps; s++)
                num[j] = pr[k].step_num[s], dur[j++] = pr[k].step_end[s] - pr[k].step_ts[s];
        out = rp_job_median(num, dur, tot);
    }
    free(num);
    free(dur);
    return out;
}

/* Index of the step numbered num in p, or -1. */
static long step_index(const rp_rank *p, int64_t num) {
    for (size_t s = 0; s < p->nsteps; s++)
        if (p->step_num[s] == num) return (long)s;
    return -1;
}

size_t rp_lateness(rp_rank *pr, size_t n) {
    size_t matched = 0, nr = 0;
    for (size_t k = 0; k < n; k++) nr += pr[k].ncoll > 0;
    if (nr < 2) return 0;
    size_t *lo = malloc(n * sizeof *lo), *hi = malloc(n * sizeof *hi);
    long *si = malloc(n * sizeof *si);
    if (!lo || !hi || !si) goto done;
    /* steps by number, as the first rank with collectives has them; each rank's collectives of a step are
     * contiguous (both sorted by start) */
    size_t k0 = 0;
    while (!pr[k0].ncoll) k0++;
    for (size_t s0 = 0; s0 < pr[k0].nsteps; s0++) {
        int64_t num = pr[k0].step_num[s0];
        size_t cnt = SIZE_MAX;
        int ok = 1;
        for (size_t k = 0; k < n && ok; k++) {
            if (!pr[k].ncoll) continue;
            si[k] = step_index(&pr[k], num);
            if (si[k] < 0) {
                ok = 0;
                break;
            }
            size_t a = 0;
            while (a < pr[k].ncoll && pr[k].coll_step[a] < si[k]) a++;
            size_t b = a;
            while (b < pr[k].ncoll && pr[k].coll_step[b] == si[k]) b++;
            lo[k] = a, hi[k] = b;
            if (cnt == SIZE_MAX) cnt = b - a;
            else if (cnt != b - a) ok = 0; /* not the same collectives: nothing to match */
        }
        if (!ok || cnt == SIZE_MAX) continue;
        for (size_t c = 0; c < cnt; c++) {
            /* the last to arrive waits least: the shortest kernel; the others waited at least the
             * second shortest minus it */
            long last = -1;
            int64_t d1 = INT64_MAX, d2 = INT64_MAX;
            for (size_t k = 0; k < n; k++) {
                if (!pr[k].ncoll) continue;
                int64_t d = pr[k].coll_dur[lo[k] + c];
                if (d < d1) d2 = d1, d1 = d, last = (long)k;
                else if (d < d2) d2 = d;
            }
            if (last >= 0 && d2 != INT64_MAX) sat_add(&pr[last].late_ns[si[last]], d2 - d1);
            for (size_t k = 0; k < n; k++)
                if (pr[k].ncoll) sat_add(&pr[k].coll_own_ns, pr[k].coll_dur[lo[k] + c]), sat_add(&pr[k].coll_xfer_ns, d1);
            matched++;
        }
    }
done:
    free(lo);
    free(hi);
    free(si);
    return matched;
}
