/* `hta merge` alignment: for every rank, how its timestamps map onto one
 * timeline (include/hta/merge.h, docs/merge.md).
 *
 * All time arithmetic stays in int64 ns; doubles only hold differences
 * (offsets, residuals, times relative to one epoch), never absolute unix ns,
 * which a double cannot hold to the ns. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hta/merge.h"
#include "hta/rawjson.h"
#include "hta/symtab.h"
#include "hta/util.h"
#include "hta/vocab.h"

/* Merged pid = rank * PID_STRIDE + n: rank 3's processes read 3000, 3001, ... in a viewer (docs/merge.md);
 * the writer refuses a rank with more distinct pids than that. */
#define PID_STRIDE 1000
/* Residuals within this are never called outliers: MAD is 0 on exact data, and a threshold of 0 would drop
 * every anchor that is off by a rounding. */
#define OUTLIER_FLOOR_NS 1000.0

typedef struct anchor {
    uint32_t cid; /* collective / marker instance, same across ranks */
    int64_t u;    /* its time on this rank (ts + base) */
} anchor;

typedef struct rank_anchors {
    anchor *a;
    size_t n, cap;
} rank_anchors;

static int note(hta_merge_plan *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int note(hta_merge_plan *p, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int rc = hta_strlist_vadd(&p->notes, &p->nnotes, fmt, ap);
    va_end(ap);
    return rc;
}

void hta_merge_plan_free(hta_merge_plan *plan) {
    if (!plan) return;
    for (size_t i = 0; i < plan->n; i++) free(plan->r[i].path);
    free(plan->r);
    for (size_t i = 0; i < plan->nnotes; i++) free(plan->notes[i]);
    free(plan->notes);
    memset(plan, 0, sizeof *plan);
}

/* The correction (offset, plus drift over the distance from t0) is a difference, which a double holds to
 * the ns; u itself stays int64, and the correction is rounded to the nearest ns. */
int64_t hta_merge_map(const hta_merge_plan *plan, size_t i, int64_t u) {
    const hta_merge_rank *r = &plan->r[i];
    double corr = r->offset_ns;
    if (r->drift != 0.0) corr += r->drift * (double)(u - r->t0_ns);
    return u + (int64_t)llround(corr) - plan->origin_ns;
}

/* ---- the rank's own clock ---- */

static const char *meta_json(const hta_rank *r, const char *key) {
    for (size_t i = 0; i < r->nmeta; i++)
        if (!strcmp(r->meta[i].key, key)) return r->meta[i].json;
    return NULL;
}

/* A rank's unix clock, best source first: libhtatrace's anchor (monotonic -> unix: monotonic clocks of two
 * hosts have unrelated origins, so this is what makes tracer files comparable at all), then Kineto's
 * baseTimeNanoseconds, else the times as written. */
static int clock_of(const hta_rank *r, hta_merge_rank *m, int *unix_known) {
    const char *anc = meta_json(r, "htaClockAnchor");
    if (anc) {
        hta_raw_obj o = {0};
        int64_t unix_ns, mono_ns;
        const hta_raw_member *a = NULL, *b = NULL;
        if (!hta_raw_obj_parse(&o, anc, strlen(anc))) {
            a = hta_raw_obj_get(&o, "unix_ns");
            b = hta_raw_obj_get(&o, "monotonic_ns");
        }
        int ok = a && b && !hta_raw_int(a, &unix_ns) && !hta_raw_int(b, &mono_ns);
        hta_raw_obj_free(&o);
        if (ok) {
            m->clock = HTA_CLOCK_TRACER_ANCHOR;
            /* the anchor is one reading of both clocks at one instant: u = ts - monotonic_ns + unix_ns
             * (docs/tracer.md); a base beyond the times the model holds is refused (-1) */
            if (__builtin_sub_overflow(unix_ns, mono_ns, &m->base_ns) || m->base_ns > HTA_TIME_MAX_NS ||
                m->base_ns < -HTA_TIME_MAX_NS)
                return -1;
            return 0;
        }
    }
    if (r->base_time_ns != INT64_MIN) {
        m->clock = HTA_CLOCK_KINETO_BASE;
        m->base_ns = r->base_time_ns;
        return 0;
    }
    m->clock = HTA_CLOCK_AS_WRITTEN;
    m->base_ns = 0;
    /* Kineto without a base writes absolute unix us; our tracer without an
     * anchor writes CLOCK_MONOTONIC, which is no unix time. */
    if (meta_json(r, "htaTracer")) *unix_known = 0;
    return 0;
}

/* The margin kept below HTA_TIME_MAX_NS for the merged times: the correction is a double rounded per
 * event, so its value between the two ends checked may differ from theirs by a few ulps. */
#define MAP_MARGIN_NS ((int64_t)1 << 20)

/* Whether every time of rank i's file (t_min .. t_max, on its unix clock) maps onto the merged timeline
 * within the times the model holds, the correction within half of that: the map is affine in u, so its
 * two ends bound it, and hta_merge_map's int64 steps cannot overflow in between. */
static int map_in_range(const hta_merge_plan *p, size_t i, int64_t u_lo, int64_t u_hi, int with_origin) {
    const hta_merge_rank *m = &p->r[i];
    const long double lim = (long double)(HTA_TIME_MAX_NS - MAP_MARGIN_NS);
    const int64_t ends[2] = {u_lo, u_hi};
    for (int k = 0; k < 2; k++) {
        long double corr = (long double)m->offset_ns;
        if (m->drift != 0.0) corr += (long double)m->drift * ((long double)ends[k] - (long double)m->t0_ns);
        long double t = (long double)ends[k] + corr - (long double)p->origin_ns;
        if (!(fabsl(corr) <= lim / 2) || (with_origin && !(fabsl(t) <= lim))) return 0;
    }
    return 1;
}

/* ---- anchors ---- */

static int push(rank_anchors *ra, uint32_t cid, int64_t u) {
    if (ra->n == ra->cap) {
        size_t c = ra->cap ? ra->cap * 2 : 64;
        anchor *a = realloc(ra->a, c * sizeof *a);
        if (!a) return -1;
        ra->a = a;
        ra->cap = c;
    }
    ra->a[ra->n++] = (anchor){cid, u};
    return 0;
}

/* One rank's summary being written (hta/merge.h).  An anchor's key is "tag|...|rest": its group (up to
 * the last '|') gets a dense id in order of first use, its row number among the rank's rows of
 * merge_summary_groups, so that a process group's text (every member rank listed) is kept once per rank,
 * not once per collective; the instance is numbered by occurrence when the plan is built. */
typedef struct rsum {
    int32_t rank;
    hta_symtab *groups;
    hta_table *gt, *at;
} rsum;

/* An anchor of key (kl bytes) at time u on the rank's unix clock; -1 when out of memory. */
static int add_anchor(rsum *s, const char *key, size_t kl, int64_t u) {
    size_t cut = kl;
    while (cut && key[cut - 1] != '|') cut--;
    /* every key starts with its tag and '|': cut >= 1; the group leaves that '|' out */
    size_t gl = cut ? cut - 1 : 0;
    uint32_t n0 = hta_symtab_count(s->groups);
    uint32_t g = hta_symtab_intern(s->groups, key, gl);
    if (g == UINT32_MAX) return -1;
    long row;
    if (g == n0) {
        if ((row = hta_table_add_row(s->gt)) < 0) return -1;
        hta_table_set_int(s->gt, (size_t)row, HTA_MSUM_GROUP_RANK, s->rank);
        if (hta_table_set_str(s->gt, (size_t)row, HTA_MSUM_GROUP, hta_sym(s->groups, g))) return -1;
    }
    char *rest = strndup(key + cut, kl - cut);
    if (!rest || (row = hta_table_add_row(s->at)) < 0) {
        free(rest);
        return -1;
    }
    hta_table_set_int(s->at, (size_t)row, HTA_MSUM_ANCHOR_RANK, s->rank);
    hta_table_set_int(s->at, (size_t)row, HTA_MSUM_ANCHOR_GROUP, g);
    int rc = hta_table_set_str(s->at, (size_t)row, HTA_MSUM_ANCHOR_KEY, rest);
    free(rest);
    hta_table_set_int(s->at, (size_t)row, HTA_MSUM_ANCHOR_U, u);
    return rc;
}

/* Growable text for a base key. */
typedef struct sbuf {
    char *s;
    size_t n, cap;
} sbuf;

static int sb_addn(sbuf *b, const char *s, size_t l) {
    if (b->n + l + 1 > b->cap) {
        size_t c = (b->n + l + 1) * 2;
        char *ns = realloc(b->s, c);
        if (!ns) return -1;
        b->s = ns;
        b->cap = c;
    }
    memcpy(b->s + b->n, s, l);
    b->n += l;
    b->s[b->n] = 0;
    return 0;
}

static int sb_add(sbuf *b, const char *s) {
    return sb_addn(b, s, strlen(s));
}

/* Rows that pass pred, in time order (stable): the k-th instance is the
 * k-th in time even when the file is not sorted (sampled traces). */
typedef int (*row_pred)(const hta_trace *t, const hta_rank *r, size_t i, const hta_merge_opts *o);

static uint32_t *rows_by_time(const hta_trace *t, const hta_rank *r, row_pred pred, const hta_merge_opts *o,
                              size_t *n) {
    size_t cap = 64, m = 0;
    uint32_t *v = malloc(cap * sizeof *v);
    if (!v) return NULL;
    for (size_t i = 0; i < r->n; i++) {
        if (!pred(t, r, i, o)) continue;
        if (m == cap) {
            uint32_t *nv = realloc(v, (cap *= 2) * sizeof *nv);
            if (!nv) {
                free(v);
                return NULL;
            }
            v = nv;
        }
        v[m++] = (uint32_t)i;
    }
    if (hta_stable_sort_idx_i64(v, m, r->ts, NULL)) {
        free(v);
        return NULL;
    }
    *n = m;
    return v;
}

/* Collective kernels under every NCCL/RCCL naming (the corrected rule, not HTA's ncclKernel* only). */
static int is_nccl_row(const hta_trace *t, const hta_rank *r, size_t i, const hta_merge_opts *o) {
    (void)o;
    return hta_cat_classify(hta_sym(t->sym, hta_row_cat_sym(t, r, i))) == HTA_CC_KERNEL &&
           hta_is_nccl_kernel_name(hta_sym(t->sym, r->name[i]));
}

/* Barrier markers: every event named exactly --barrier, any category; by default the CPU ProfilerStep#N
 * annotations (not their gpu_user_annotation copies, which follow the GPU). */
static int is_marker_row(const hta_trace *t, const hta_rank *r, size_t i, const hta_merge_opts *o) {
    const char *name = hta_sym(t->sym, r->name[i]);
    if (o->barrier) {
        size_t bl = strlen(o->barrier);
        return hta_sym_len(t->sym, r->name[i]) == bl && !memcmp(name, o->barrier, bl);
    }
    return hta_step_number(name) >= 0 &&
           hta_cat_classify(hta_sym(t->sym, hta_row_cat_sym(t, r, i))) == HTA_CC_USER_ANNOTATION;
}

/* The key of anchor row i, written into b (empty), and its time on the rank's clock (*at); non-zero when out
 * of memory. */
typedef int (*anchor_key)(const hta_trace *t, const hta_rank *r, size_t i, const hta_merge_opts *o, sbuf *b,
                          int64_t *at);

/* An anchor for every row that pred selects, in time order, named and timed by key (base: the rank's clock to
 * the unix clock).  Returns 0 or -1 when out of memory. */
static int row_anchors(const hta_trace *t, const hta_rank *r, int64_t base, const hta_merge_opts *o, row_pred pred,
                       anchor_key key, rsum *k) {
    sbuf b = {0};
    int rc = 0;
    size_t nc;
    uint32_t *cand = rows_by_time(t, r, pred, o, &nc);
    if (!cand) return -1;
    for (size_t c = 0; c < nc && !rc; c++) {
        size_t i = cand[c];
        int64_t at;
        b.n = 0;
        if ((rc = key(t, r, i, o, &b, &at))) break;
        rc = add_anchor(k, b.s, b.n, at + base);
    }
    free(b.s);
    free(cand);
    return rc;
}

/* A collective kernel's anchor. */
static int collective_key(const hta_trace *t, const hta_rank *r, size_t i, const hta_merge_opts *o, sbuf *b,
                          int64_t *at) {
    const char *name = hta_sym(t->sym, r->name[i]);
    int rc = 0;
    int64_t seq = hta_row_arg_int(t, r, i, HTA_ARG_SEQ, -1);
    const char *pg = hta_row_arg_text(t, r, i, HTA_ARG_PG_NAME, NULL);
    const char *pgr = hta_row_arg_text(t, r, i, HTA_ARG_PG_RANKS, NULL);
    if (seq >= 0 && (pg || pgr)) {
        /* Kineto's collective record: (group, sequence number) names
         * the same collective on every member rank, whatever the
         * profiling window. */
        char num[32];
        snprintf(num, sizeof num, "|%lld", (long long)seq);
        rc |= sb_add(b, "pg|") | sb_add(b, pg ? pg : "") | sb_add(b, "|") |
              sb_add(b, pgr ? pgr : "") | sb_add(b, num);
    } else {
        /* without them: the kernel name on its stream, numbered by occurrence below; right when
         * the ranks' profiling windows start at the same collective (docs/merge.md, Caveats) */
        char s[32];
        snprintf(s, sizeof s, "|s%lld", (long long)hta_row_stream(r, i));
        rc |= sb_add(b, "k|") | sb_add(b, name) | sb_add(b, s);
    }
    /* the anchor is the kernel's end: a collective ends when the last rank's data has arrived, on every rank
     * alike; early ranks wait inside the kernel, so starts differ */
    *at = r->ts[i] + r->dur[i];
    return rc;
}

static int collective_anchors(const hta_trace *t, const hta_rank *r, int64_t base, rsum *k) {
    return row_anchors(t, r, base, NULL, is_nccl_row, collective_key, k);
}

/* Scopes our tracer marks as collectives (args "collective": 1): the loader
 * keeps no such arg, so the tracer's file is read again for them. */
typedef struct tscan {
    rsum *k;
    int64_t base;
    int failed;
    sbuf b;
    hta_raw_obj ev, args;
} tscan;

/* "collective": 1, any non-zero number, or true */
static int truthy(const hta_raw_member *v) {
    if (!v->vlen) return 0;
    if (v->val[0] == '-' || (v->val[0] >= '0' && v->val[0] <= '9')) {
        for (size_t i = 0; i < v->vlen; i++)
            if (v->val[i] >= '1' && v->val[i] <= '9') return 1;
        return 0;
    }
    return v->vlen == 4 && !memcmp(v->val, "true", 4);
}

/* Reads one event of a libhtatrace file: a complete event ("X") whose args say collective counts; its end,
 * like a collective kernel's, is the anchor.  A failed parse of one event only loses that anchor, except
 * out of memory (-2), which stops the scan. */
static int tracer_event(void *ctx, uint32_t index, const char *json, size_t len) {
    (void)index;
    tscan *s = ctx;
    int rc = hta_raw_obj_parse(&s->ev, json, len);
    if (rc) {
        s->failed = rc == -2;
        return rc == -2;
    }
    const hta_raw_member *args = hta_raw_obj_get(&s->ev, "args"), *ph = hta_raw_obj_get(&s->ev, "ph");
    if (!args || !ph || !hta_raw_str_is(ph, "X")) return 0;
    if ((rc = hta_raw_obj_parse(&s->args, args->val, args->vlen))) {
        s->failed = rc == -2;
        return rc == -2;
    }
    const hta_raw_member *c = hta_raw_obj_get(&s->args, "collective");
    if (!c || !truthy(c)) return 0;
    const hta_raw_member *ts = hta_raw_obj_get(&s->ev, "ts"), *dur = hta_raw_obj_get(&s->ev, "dur");
    const hta_raw_member *name = hta_raw_obj_get(&s->ev, "name"), *cat = hta_raw_obj_get(&s->ev, "cat");
    int64_t t, d;
    if (!ts || !dur || hta_raw_time_ns(ts, &t) || hta_raw_time_ns(dur, &d)) return 0;
    s->b.n = 0;
    /* raw JSON of cat and name: the same text on every rank */
    rc = sb_add(&s->b, "u|");
    if (cat) rc |= sb_addn(&s->b, cat->val, cat->vlen);
    if (name) rc |= sb_addn(&s->b, name->val, name->vlen);
    if (rc || add_anchor(s->k, s->b.s, s->b.n, t + d + s->base)) {
        s->failed = 1;
        return 1;
    }
    return 0;
}

static int tracer_anchors(const hta_rank *r, int64_t base, rsum *k) {
    tscan *s = calloc(1, sizeof *s);
    if (!s) return -1;
    s->k = k;
    s->base = base;
    hta_raw_callbacks cb = {NULL, tracer_event, s};
    hta_error e;
    hta_status st = hta_raw_scan(r->path, &cb, &e);
    int rc = s->failed ? -1 : 0;
    (void)st; /* the file loaded once already; a read error now only loses anchors */
    free(s->b.s);
    hta_raw_obj_free(&s->ev);
    hta_raw_obj_free(&s->args);
    free(s);
    return rc;
}

/* A barrier marker's anchor. */
static int barrier_key(const hta_trace *t, const hta_rank *r, size_t i, const hta_merge_opts *o, sbuf *b,
                       int64_t *at) {
    const char *name = hta_sym(t->sym, r->name[i]);
    const char *cat = hta_sym(t->sym, hta_row_cat_sym(t, r, i));
    /* begin by default; ranks leave a real barrier together but enter it at different times, hence
     * --barrier-edge end for a scope around one */
    *at = r->ts[i] + (o->barrier_end ? r->dur[i] : 0);
    return sb_add(b, cat) | sb_add(b, "|") | sb_add(b, name);
}

static int barrier_anchors(const hta_trace *t, const hta_rank *r, int64_t base, const hta_merge_opts *o,
                           rsum *k) {
    return row_anchors(t, r, base, o, is_marker_row, barrier_key, k);
}

/* ---- fitting ---- */

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* sorts v in place; the callers pass copies */
static double median(double *v, size_t n) {
    qsort(v, n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct fit {
    double off, drift;
    int64_t t0;
    size_t used, outliers;
    double rms, max;
} fit;

/* y = off + drift * (x - t0), x in ns relative to xe (int64 u = xe + x).
 * Robust: residuals farther than 3 scaled MADs (at least OUTLIER_FLOOR_NS)
 * from their median are dropped, and the fit repeated until the kept set
 * stops changing.  scratch: 2n doubles, keep: n bytes. */
static void robust_fit(const double *x, const double *y, size_t n, int64_t xe, hta_drift_mode dm,
                       double *scratch, unsigned char *keep, fit *f) {
    /* x is ns from the rank's first matched anchor, and the fit centres it on the mean of the kept x (xm):
     * small, well-conditioned numbers for the double arithmetic. */
    memset(keep, 1, n);
    double off = 0, slope = 0, xm = 0;
    /* start from the median offset, which one wild anchor cannot move */
    memcpy(scratch, y, n * sizeof *y);
    off = median(scratch, n);
    /* 20 rounds only bound a kept set that would keep flipping */
    for (int iter = 0; iter < 20; iter++) {
        double *res = scratch, *tmp = scratch + n;
        for (size_t j = 0; j < n; j++) res[j] = y[j] - off - slope * (x[j] - xm);
        memcpy(tmp, res, n * sizeof *res);
        double med = median(tmp, n);
        for (size_t j = 0; j < n; j++) tmp[j] = fabs(res[j] - med);
        /* 1.4826 * MAD estimates the standard deviation of normal noise; 3 of them is the outlier line */
        double thr = 3.0 * 1.4826 * median(tmp, n);
        if (thr < OUTLIER_FLOOR_NS) thr = OUTLIER_FLOOR_NS;
        int changed = iter == 0;
        for (size_t j = 0; j < n; j++) {
            unsigned char k = fabs(res[j] - med) <= thr;
            if (k != keep[j]) changed = 1;
            keep[j] = k;
        }
        if (!changed) break;
        /* least squares on the kept anchors */
        size_t m = 0;
        double sx = 0, sy = 0;
        for (size_t j = 0; j < n; j++)
            if (keep[j]) sx += x[j], sy += y[j], m++;
        if (!m) break;
        xm = sx / (double)m;
        off = sy / (double)m;
        slope = 0;
        if (dm != HTA_DRIFT_OFF && m >= 3) {
            double sxx = 0, sxy = 0;
            for (size_t j = 0; j < n; j++)
                if (keep[j]) {
                    double dx = x[j] - xm;
                    sxx += dx * dx;
                    sxy += dx * (y[j] - off);
                }
            if (sxx > 0) {
                double b = sxy / sxx;
                if (dm == HTA_DRIFT_ON) {
                    slope = b;
                } else {
                    /* auto: only a drift that stands out of the noise (t > 3) */
                    double rss = 0;
                    for (size_t j = 0; j < n; j++)
                        if (keep[j]) {
                            double r = y[j] - off - b * (x[j] - xm);
                            rss += r * r;
                        }
                    double se = m > 2 ? sqrt(rss / (double)(m - 2) / sxx) : INFINITY;
                    if (m >= 8 && fabs(b) > 3.0 * se) slope = b;
                }
            }
        }
    }
    f->off = off;
    f->drift = slope;
    /* t0 is kept as whole ns, so the offset is moved to the rounded t0: the line itself does not change */
    f->t0 = xe + (int64_t)llround(xm);
    /* offset at the rounded t0 */
    f->off = off + slope * ((double)(f->t0 - xe) - xm);
    f->used = f->outliers = 0;
    double ss = 0, mx = 0;
    for (size_t j = 0; j < n; j++) {
        if (!keep[j]) {
            f->outliers++;
            continue;
        }
        double r = fabs(y[j] - off - slope * (x[j] - xm));
        ss += r * r;
        if (r > mx) mx = r;
        f->used++;
    }
    f->rms = f->used ? sqrt(ss / (double)f->used) : NAN;
    f->max = f->used ? mx : NAN;
}

/* Aligned time of anchor u on rank m, relative to epoch e (a difference, so a double holds it to the ns). */
static double aligned_rel(const hta_merge_rank *m, int64_t u, int64_t e) {
    return (double)(u - e) + m->offset_ns + m->drift * (double)(u - m->t0_ns);
}

/* The instance ids index sum/cnt; contribute() adds (+1) or takes out (-1) a rank's aligned anchor times,
 * so that a rank is always fitted against the others' mean without its own times in it. */
typedef struct solver {
    hta_merge_plan *p;
    rank_anchors *ra;
    size_t ncid;
    double *sum;     /* per cid: sum of aligned times (relative to epoch) of aligned ranks */
    uint32_t *cnt;
    unsigned char *aligned;
    int64_t epoch;
    double *x, *y, *scratch;
    unsigned char *keep;
    hta_drift_mode dm;
} solver;

static void contribute(solver *s, size_t i, int sign) {
    const hta_merge_rank *m = &s->p->r[i];
    for (size_t j = 0; j < s->ra[i].n; j++) {
        const anchor *a = &s->ra[i].a[j];
        s->sum[a->cid] += sign * aligned_rel(m, a->u, s->epoch);
        s->cnt[a->cid] = (uint32_t)((int)s->cnt[a->cid] + sign);
    }
}

/* Fits rank i against the mean of the other aligned ranks' times (rank i's
 * own times must not be in sum/cnt).  Returns the anchors matched. */
static size_t fit_rank(solver *s, size_t i, int solve) {
    hta_merge_rank *m = &s->p->r[i];
    const rank_anchors *ra = &s->ra[i];
    size_t n = 0;
    int64_t xe = 0;
    for (size_t j = 0; j < ra->n; j++) {
        const anchor *a = &ra->a[j];
        /* only instances some other aligned rank has: y = T - u, with T their mean aligned time
         * (docs/merge.md, "The fit") */
        if (!s->cnt[a->cid]) continue;
        if (!n) xe = a->u;
        double target = s->sum[a->cid] / s->cnt[a->cid];
        s->x[n] = (double)(a->u - xe);
        s->y[n] = target - (double)(a->u - s->epoch);
        n++;
    }
    if (!n) return 0;
    if (!solve) {
        /* the reference keeps offset 0: report how far its anchors sit from
         * the others' */
        double ss = 0, mx = 0;
        for (size_t j = 0; j < n; j++) {
            ss += s->y[j] * s->y[j];
            if (fabs(s->y[j]) > mx) mx = fabs(s->y[j]);
        }
        m->anchors = n;
        m->outliers = 0;
        m->rms_ns = sqrt(ss / (double)n);
        m->max_ns = mx;
        return n;
    }
    fit f;
    robust_fit(s->x, s->y, n, xe, s->dm, s->scratch, s->keep, &f);
    m->offset_ns = f.off;
    m->drift = f.drift;
    m->t0_ns = f.t0;
    m->fitted = 1;
    m->anchors = f.used;
    m->outliers = f.outliers;
    m->rms_ns = f.rms;
    m->max_ns = f.max;
    return n;
}

static int solve_collective(hta_merge_plan *p, rank_anchors *ra, size_t ncid, hta_drift_mode dm) {
    solver s = {.p = p, .ra = ra, .ncid = ncid, .dm = dm};
    size_t maxn = 0;
    for (size_t i = 0; i < p->n; i++)
        if (ra[i].n > maxn) maxn = ra[i].n;
    s.sum = calloc(ncid + 1, sizeof *s.sum);
    s.cnt = calloc(ncid + 1, sizeof *s.cnt);
    s.aligned = calloc(p->n, 1);
    s.x = malloc((maxn + 1) * sizeof *s.x);
    s.y = malloc((maxn + 1) * sizeof *s.y);
    s.scratch = malloc((2 * maxn + 2) * sizeof *s.scratch);
    s.keep = malloc(maxn + 1);
    int rc = -1;
    if (!s.sum || !s.cnt || !s.aligned || !s.x || !s.y || !s.scratch || !s.keep) goto out;
    rc = 0;
    /* The reference is the lowest rank (offset 0): the table then reads as offsets from it. epoch: an
     * anchor time of the trace, so that relative times are small. */
    size_t ref = 0;
    for (size_t i = 0; i < p->n; i++)
        if (ra[i].n) {
            s.epoch = ra[i].a[0].u;
            break;
        }
    p->r[ref].reference = 1;
    s.aligned[ref] = 1;
    contribute(&s, ref, 1);
    /* grow the aligned set: a rank joins once it shares collectives with it */
    for (int progress = 1; progress;) {
        progress = 0;
        for (size_t i = 0; i < p->n; i++) {
            if (s.aligned[i] || !fit_rank(&s, i, 1)) continue;
            s.aligned[i] = 1;
            contribute(&s, i, 1);
            progress = 1;
        }
    }
    /* refine: each rank against all the others (Gauss-Seidel sweeps), so
     * the result does not hinge on the order ranks joined in */
    for (int sweep = 0; sweep < 4; sweep++)
        for (size_t i = 0; i < p->n; i++) {
            if (!s.aligned[i] || i == ref) continue;
            contribute(&s, i, -1);
            fit_rank(&s, i, 1);
            contribute(&s, i, 1);
        }
    contribute(&s, ref, -1);
    fit_rank(&s, ref, 0);
    for (size_t i = 0; i < p->n && !rc; i++) {
        const hta_merge_rank *m = &p->r[i];
        if (i != ref && !m->fitted) continue;
        /* genuine collective ends agree to a few us: far more means the
         * instances were matched wrongly (sampled traces, different windows
         * without Seq args) or are not collectives that end together */
        if ((m->rms_ns > 50000.0 || m->outliers * 4 > m->anchors + m->outliers) &&
            note(p, "rank %d: collective anchors disagree (rms %.1f us, %zu of %zu dropped): "
                 "its offset is not trustworthy", m->rank, m->rms_ns / 1000.0, m->outliers,
                 m->anchors + m->outliers))
            rc = -1;
    }
    for (size_t i = 0; i < p->n; i++) {
        if (s.aligned[i]) continue;
        if (note(p, "rank %d: %s; its clock is left as written", p->r[i].rank,
                 ra[i].n ? "shares no collective with the aligned ranks" : "no collectives found"))
            rc = -1;
    }
out:
    free(s.sum);
    free(s.cnt);
    free(s.aligned);
    free(s.x);
    free(s.y);
    free(s.scratch);
    free(s.keep);
    return rc;
}

/* Barrier: one offset per rank, the median over markers of (reference's
 * marker time - this rank's); the spread around it is the residual. */
static int solve_barrier(hta_merge_plan *p, rank_anchors *ra, size_t ncid) {
    size_t maxn = 1;
    for (size_t i = 0; i < p->n; i++)
        if (ra[i].n > maxn) maxn = ra[i].n;
    int64_t *reft = malloc((ncid + 1) * sizeof *reft);
    unsigned char *has = calloc(ncid + 1, 1);
    double *y = malloc(maxn * sizeof *y), *tmp = malloc(maxn * sizeof *tmp);
    int rc = -1;
    if (!reft || !has || !y || !tmp) goto out;
    rc = 0;
    /* the lowest rank is the reference; every other rank's offset is the median of its markers' offsets
     * from it, one rigid offset per rank (docs/merge.md explains why not one per iteration) */
    p->r[0].reference = 1;
    for (size_t j = 0; j < ra[0].n; j++) {
        reft[ra[0].a[j].cid] = ra[0].a[j].u;
        has[ra[0].a[j].cid] = 1;
    }
    if (!ra[0].n && note(p, "rank %d (reference) has no barrier markers; nothing is aligned", p->r[0].rank))
        rc = -1;
    for (size_t i = 1; i < p->n; i++) {
        size_t n = 0;
        /* the difference is taken in int64 first: a double holds it to the ns, where it would not hold the
         * unix times */
        for (size_t j = 0; j < ra[i].n; j++)
            if (has[ra[i].a[j].cid]) y[n++] = (double)(reft[ra[i].a[j].cid] - ra[i].a[j].u);
        hta_merge_rank *m = &p->r[i];
        if (!n) {
            if (note(p, "rank %d: no barrier marker in common with rank %d; its clock is left as written",
                     m->rank, p->r[0].rank))
                rc = -1;
            continue;
        }
        memcpy(tmp, y, n * sizeof *y);
        double off = median(tmp, n), ss = 0, mx = 0;
        for (size_t j = 0; j < n; j++) {
            double r = fabs(y[j] - off);
            ss += r * r;
            if (r > mx) mx = r;
        }
        m->fitted = 1;
        m->offset_ns = off;
        m->anchors = n;
        m->rms_ns = sqrt(ss / (double)n);
        m->max_ns = mx;
    }
    p->r[0].anchors = ra[0].n;
    /* the reference is its own baseline: residual 0 by definition */
    p->r[0].rms_ns = p->r[0].max_ns = 0;
out:
    free(reft);
    free(has);
    free(y);
    free(tmp);
    return rc;
}

/* ---- the summaries ---- */

HTA_TABLE_DEFINE(HTA_MERGE_SUM_RANKS);
HTA_TABLE_DEFINE(HTA_MERGE_SUM_GROUPS);
HTA_TABLE_DEFINE(HTA_MERGE_SUM_ANCHORS);

/* Rank r's row of merge_summary_ranks and its anchors. */
static hta_status summarise_rank(const hta_trace *t, const hta_rank *r, const hta_merge_opts *o, hta_table *rt,
                                 hta_table *gt, hta_table *at, hta_error *err) {
    long row = hta_table_add_row(rt);
    if (row < 0) return hta_oom(err);
    size_t rw = (size_t)row;
    hta_table_set_int(rt, rw, HTA_MSUM_RANK, r->rank);
    hta_table_set_int(rt, rw, HTA_MSUM_MERGED, r->merged != 0);
    hta_table_set_int(rt, rw, HTA_MSUM_TMIN, r->t_min);
    hta_table_set_int(rt, rw, HTA_MSUM_TMAX, r->t_max);
    hta_table_set_int(rt, rw, HTA_MSUM_MIN_U, INT64_MAX);
    hta_table_set_int(rt, rw, HTA_MSUM_UNIX, 1);
    if (hta_table_set_str(rt, rw, HTA_MSUM_FILE, r->path)) return hta_oom(err);
    /* a merged trace is refused when the plan is built */
    if (r->merged) return HTA_OK;
    hta_merge_rank m = {0};
    int unix_known = 1;
    hta_error bad = {0};
    if (clock_of(r, &m, &unix_known)) {
        hta_fail(&bad, HTA_EFORMAT, "%s: htaClockAnchor gives a clock beyond the times hta holds (|t| < 2^62 ns)",
                 r->path);
    } else {
        /* every time of the file on the unix clock must be a time the model holds, so that differences of
         * them (offsets, residuals) and the writer's ts + base stay exact */
        int64_t lo, hi;
        if (r->t_min <= r->t_max &&
            (__builtin_add_overflow(r->t_min, m.base_ns, &lo) || __builtin_add_overflow(r->t_max, m.base_ns, &hi) ||
             lo < -HTA_TIME_MAX_NS || hi > HTA_TIME_MAX_NS))
            hta_fail(&bad, HTA_EFORMAT, "%s: ts + %s beyond the times hta holds (|t| < 2^62 ns)", r->path,
                     m.clock == HTA_CLOCK_TRACER_ANCHOR ? "the htaClockAnchor base" : "baseTimeNanoseconds");
    }
    hta_table_set_int(rt, rw, HTA_MSUM_CLOCK, m.clock);
    hta_table_set_int(rt, rw, HTA_MSUM_BASE, m.base_ns);
    hta_table_set_int(rt, rw, HTA_MSUM_UNIX, unix_known);
    if (bad.msg[0]) return hta_table_set_str(rt, rw, HTA_MSUM_ERROR, bad.msg) ? hta_oom(err) : HTA_OK;
    int64_t mn = INT64_MAX;
    /* the earliest row on the rank's unix clock: the merged origin is placed from it */
    for (size_t j = 0; j < r->n; j++)
        if (r->ts[j] < mn) mn = r->ts[j];
    hta_table_set_int(rt, rw, HTA_MSUM_MIN_U, mn == INT64_MAX ? mn : mn + m.base_ns);
    if (o->method == HTA_ALIGN_NONE) return HTA_OK;
    /* occurrences are counted per rank, instance ids over all ranks, when the plan is built */
    rsum k = {r->rank, hta_symtab_new(), gt, at};
    int rc = !k.groups;
    if (!rc && o->method == HTA_ALIGN_BARRIER) rc = barrier_anchors(t, r, m.base_ns, o, &k);
    else if (!rc && !(rc = collective_anchors(t, r, m.base_ns, &k)) && meta_json(r, "htaTracer"))
        rc = tracer_anchors(r, m.base_ns, &k);
    hta_symtab_free(k.groups);
    return rc ? hta_oom(err) : HTA_OK;
}

hta_status hta_merge_summary(hta_ctx *ctx, const hta_merge_opts *o, hta_result *out, hta_error *err) {
    const hta_trace *t = ctx->trace;
    hta_table *rt = hta_table_from_def(&HTA_MERGE_SUM_RANKS_TABLE);
    hta_table *bt = hta_table_from_def(&HTA_MERGE_SUM_GROUPS_TABLE);
    hta_table *at = hta_table_from_def(&HTA_MERGE_SUM_ANCHORS_TABLE);
    hta_status st = !rt || !bt || !at ? hta_oom(err) : HTA_OK;
    for (size_t i = 0; i < t->nranks && !st; i++) st = summarise_rank(t, t->ranks[i], o, rt, bt, at, err);
    return HTA_RESULT_FINISH(st, out, err, &rt, &bt, &at);
}

/* The summary table of declaration d, checked column by column: summaries may come from another process
 * (hta-mpi), where the table arrives without its declaration. */
static hta_status sum_table(const hta_result *sum, const hta_table_def *d, const hta_table **out, hta_error *err) {
    return hta_result_find_as(sum, d, "merge summaries", out, err);
}

#define I64(t, c, r) ((t)->cols[c].v.i[r])

/* Instance ids of one key over all ranks: the k-th occurrence of the key on any rank is one instance,
 * which is how instances pair up across ranks. */
typedef struct occ_ids {
    uint32_t *v;
    size_t n, cap;
    uint32_t occ;  /* occurrences on the rank being read */
    size_t seen;   /* that rank's index + 1 */
} occ_ids;

/* Every rank's anchors with instance ids (ra[0..p->n)); *ncid: the instances.  -1 when out of memory, 1
 * when the summaries' rows are not those of their ranks, in rank order. */
static int anchors_of(const hta_merge_plan *p, const hta_table *gt, const hta_table *at, rank_anchors *ra,
                      size_t *ncid) {
    hta_symtab *groups = hta_symtab_new(), *keys = hta_symtab_new();
    occ_ids *ids = NULL;
    size_t nids = 0, gc = 0, ac = 0, kcap = 0;
    uint32_t *loc = NULL;
    char *kb = NULL;
    int rc = groups && keys ? 0 : -1;
    *ncid = 0;
    for (size_t i = 0; i < p->n && !rc; i++) {
        size_t g0 = gc;
        while (gc < gt->nrows && I64(gt, HTA_MSUM_GROUP_RANK, gc) == p->r[i].rank) gc++;
        size_t ng = gc - g0;
        free(loc);
        if (!(loc = malloc((ng ? ng : 1) * sizeof *loc))) {
            rc = -1;
            break;
        }
        /* the rank's groups in the id space of all ranks */
        for (size_t j = 0; j < ng && !rc; j++) {
            const char *g = gt->cols[HTA_MSUM_GROUP].v.s[g0 + j];
            loc[j] = hta_symtab_intern(groups, g ? g : "", g ? strlen(g) : 0);
            if (loc[j] == UINT32_MAX) rc = -1;
        }
        for (; ac < at->nrows && !rc && I64(at, HTA_MSUM_ANCHOR_RANK, ac) == p->r[i].rank; ac++) {
            int64_t lg = I64(at, HTA_MSUM_ANCHOR_GROUP, ac);
            const char *rest = at->cols[HTA_MSUM_ANCHOR_KEY].v.s[ac];
            if (lg < 0 || (size_t)lg >= ng) {
                rc = 1;
                break;
            }
            /* the key in the id space of all ranks: "group id|rest" */
            size_t need = (rest ? strlen(rest) : 0) + 16;
            if (need > kcap) {
                char *q = realloc(kb, need * 2);
                if (!q) {
                    rc = -1;
                    break;
                }
                kb = q, kcap = need * 2;
            }
            int kl = snprintf(kb, kcap, "%u|%s", loc[lg], rest ? rest : "");
            uint32_t id = hta_symtab_intern(keys, kb, (size_t)kl);
            if (id == UINT32_MAX) {
                rc = -1;
                break;
            }
            if (id >= nids) {
                occ_ids *q = realloc(ids, (id + 1) * sizeof *q);
                if (!q) {
                    rc = -1;
                    break;
                }
                memset(q + nids, 0, (id + 1 - nids) * sizeof *q);
                ids = q, nids = id + 1;
            }
            occ_ids *e = &ids[id];
            if (e->seen != i + 1) e->seen = i + 1, e->occ = 0;
            uint32_t k = e->occ++;
            if (k == e->n) {
                /* the first rank with a k-th instance of this key: a new instance */
                if (e->n == e->cap) {
                    size_t c = e->cap ? e->cap * 2 : 8;
                    uint32_t *q = realloc(e->v, c * sizeof *q);
                    if (!q) {
                        rc = -1;
                        break;
                    }
                    e->v = q, e->cap = c;
                }
                e->v[e->n++] = (uint32_t)(*ncid)++;
            }
            if (push(&ra[i], e->v[k], I64(at, HTA_MSUM_ANCHOR_U, ac))) rc = -1;
        }
    }
    if (!rc && (gc != gt->nrows || ac != at->nrows)) rc = 1;
    for (size_t i = 0; i < nids; i++) free(ids[i].v);
    free(ids), free(loc), free(kb);
    hta_symtab_free(groups);
    hta_symtab_free(keys);
    return rc;
}

/* ---- the plan ---- */

hta_status hta_merge_plan_build(hta_ctx *ctx, const hta_merge_opts *o, hta_merge_plan *p,
                                hta_error *err) {
    hta_result sum;
    hta_result_init(&sum);
    memset(p, 0, sizeof *p);
    hta_status st = hta_merge_summary(ctx, o, &sum, err);
    if (!st) st = hta_merge_plan_from_summary(&sum, o, p, err);
    hta_result_free(&sum);
    return st;
}

hta_status hta_merge_plan_from_summary(const hta_result *sum, const hta_merge_opts *o, hta_merge_plan *p,
                                       hta_error *err) {
    memset(p, 0, sizeof *p);
    p->opts = *o;
    const hta_table *rt, *bt, *at;
    HTA_TRY(sum_table(sum, &HTA_MERGE_SUM_RANKS_TABLE, &rt, err));
    HTA_TRY(sum_table(sum, &HTA_MERGE_SUM_GROUPS_TABLE, &bt, err));
    HTA_TRY(sum_table(sum, &HTA_MERGE_SUM_ANCHORS_TABLE, &at, err));
    size_t n = rt->nrows;
    if (!n) return hta_fail(err, HTA_ENODATA, "no ranks to merge");
    /* a merged trace's ranks share one file, which the writer would copy whole once per rank */
    for (size_t i = 0; i < n; i++)
        if (I64(rt, HTA_MSUM_MERGED, i))
            return hta_fail(err, HTA_EINVAL,
                            "%s: already a merged trace (hta merge): merge the per-rank files it was made from",
                            rt->cols[HTA_MSUM_FILE].v.s[i]);
    p->r = calloc(n, sizeof *p->r);
    if (!p->r) return hta_oom(err);
    p->n = n;
    p->unix_known = 1;
    p->pid_stride = PID_STRIDE;
    int32_t maxrank = 0;
    for (size_t i = 0; i < n; i++) {
        hta_merge_rank *m = &p->r[i];
        m->rank = (int32_t)I64(rt, HTA_MSUM_RANK, i);
        if (m->rank > maxrank) maxrank = m->rank;
        const char *path = rt->cols[HTA_MSUM_FILE].v.s[i], *bad = rt->cols[HTA_MSUM_ERROR].v.s[i];
        if (bad) {
            hta_status st = hta_fail(err, HTA_EFORMAT, "%s", bad);
            hta_merge_plan_free(p);
            return st;
        }
        if (!(m->path = strdup(path ? path : ""))) goto oom;
        m->clock = (hta_clock_source)I64(rt, HTA_MSUM_CLOCK, i);
        m->base_ns = I64(rt, HTA_MSUM_BASE, i);
        if (!I64(rt, HTA_MSUM_UNIX, i)) p->unix_known = 0;
        m->pid_base = (int64_t)m->rank * PID_STRIDE;
        m->rms_ns = m->max_ns = NAN;
        m->min_u = I64(rt, HTA_MSUM_MIN_U, i);
    }
    /* merged flow id = id * S + rank with S the smallest power of ten above the largest rank: ids of
     * different ranks never collide, and the rank can be read off the last digits */
    p->id_stride = 10;
    while (p->id_stride <= maxrank) p->id_stride *= 10;

    /* one rank has nothing to align to: it is its own reference */
    if (o->method != HTA_ALIGN_NONE && n == 1) p->r[0].reference = 1;
    if (o->method != HTA_ALIGN_NONE && n > 1) {
        rank_anchors *ra = calloc(n, sizeof *ra);
        size_t ncid = 0;
        int rc = ra ? anchors_of(p, bt, at, ra, &ncid) : -1;
        if (!rc)
            rc = o->method == HTA_ALIGN_COLLECTIVE ? solve_collective(p, ra, ncid, o->drift)
                                                   : solve_barrier(p, ra, ncid);
        for (size_t i = 0; ra && i < n; i++) free(ra[i].a);
        free(ra);
        if (rc > 0) {
            hta_merge_plan_free(p);
            return hta_fail(err, HTA_EINVAL, "merge summaries: anchors not in the order of their ranks");
        }
        if (rc) goto oom;
    }

    /* the corrections first (the origin is placed with them), then the merged times (below) */
    for (size_t i = 0; i < p->n; i++) {
        int64_t tmin = I64(rt, HTA_MSUM_TMIN, i), tmax = I64(rt, HTA_MSUM_TMAX, i);
        if (tmin > tmax || map_in_range(p, i, tmin + p->r[i].base_ns, tmax + p->r[i].base_ns, 0)) continue;
        hta_status st = hta_fail(err, HTA_EFORMAT,
                                 "%s: the alignment (offset %.0f ns, drift %g) moves times beyond the times hta "
                                 "holds (|t| < 2^62 ns)", p->r[i].path, p->r[i].offset_ns, p->r[i].drift);
        hta_merge_plan_free(p);
        return st;
    }

    /* Origin: 1 s before the earliest row or flow on the merged timeline,
     * down to a whole ms: ts stay small enough for viewers that read them as
     * doubles, and the few events Kineto puts before the first row (profiler
     * span, metadata) stay positive. */
    int64_t mn = INT64_MAX;
    for (size_t i = 0; i < p->n; i++) {
        if (p->r[i].min_u == INT64_MAX) continue;
        int64_t v = hta_merge_map(p, i, p->r[i].min_u);
        if (v < mn) mn = v;
    }
    if (mn == INT64_MAX) mn = 0;
    int64_t o0 = mn - 1000000000;
    /* floor division: C's / truncates toward zero, and o0 can be negative when clocks are not unix time */
    int64_t ms = o0 / 1000000 - (o0 % 1000000 < 0);
    p->origin_ns = ms * 1000000;
    for (size_t i = 0; i < p->n; i++) {
        int64_t tmin = I64(rt, HTA_MSUM_TMIN, i), tmax = I64(rt, HTA_MSUM_TMAX, i);
        if (tmin > tmax || map_in_range(p, i, tmin + p->r[i].base_ns, tmax + p->r[i].base_ns, 1)) continue;
        hta_status st = hta_fail(err, HTA_EFORMAT,
                                 "%s: the aligned times (offset %.0f ns) fall beyond the times hta holds "
                                 "(|t| < 2^62 ns)", p->r[i].path, p->r[i].offset_ns);
        hta_merge_plan_free(p);
        return st;
    }
    return HTA_OK;
oom:
    hta_merge_plan_free(p);
    return hta_oom(err);
}

/* ---- the table ---- */

static const char *clock_name(hta_clock_source c) {
    switch (c) {
    case HTA_CLOCK_KINETO_BASE: return "baseTimeNanoseconds";
    case HTA_CLOCK_TRACER_ANCHOR: return "htaClockAnchor";
    default: return "as written";
    }
}

static const char *method_name(hta_align_method m) {
    switch (m) {
    case HTA_ALIGN_BARRIER: return "barrier";
    case HTA_ALIGN_COLLECTIVE: return "collective";
    default: return "none";
    }
}

HTA_TABLE_DEFINE(HTA_MERGE_ALIGNMENT);

hta_status hta_merge_result(const hta_merge_plan *p, hta_result *out, hta_error *err) {
    hta_table *t = hta_table_from_def(&HTA_MERGE_ALIGNMENT_TABLE);
    if (!t) return hta_oom(err);
    for (size_t i = 0; i < p->n; i++) {
        const hta_merge_rank *m = &p->r[i];
        long row = hta_table_add_row(t);
        if (row < 0) goto oom;
        size_t rw = (size_t)row;
        const char *method = p->opts.method == HTA_ALIGN_NONE ? "none"
                             : m->reference                  ? "reference"
                             : m->fitted                     ? method_name(p->opts.method)
                                                             : "none (no anchors)";
        hta_table_set_int(t, rw, HTA_MERGE_RANK, m->rank);
        if (hta_table_set_str(t, rw, HTA_MERGE_FILE, m->path) ||
            hta_table_set_str(t, rw, HTA_MERGE_CLOCK, clock_name(m->clock)) ||
            hta_table_set_str(t, rw, HTA_MERGE_METHOD, method))
            goto oom;
        hta_table_set_int(t, rw, HTA_MERGE_PID_BASE, m->pid_base);
        hta_table_set_int(t, rw, HTA_MERGE_ANCHORS, (int64_t)m->anchors);
        hta_table_set_int(t, rw, HTA_MERGE_OUTLIERS, (int64_t)m->outliers);
        /* offsets in us to the ns (3 decimals), drift in ppm: the units docs/merge.md reads them in */
        hta_table_set_float(t, rw, HTA_MERGE_OFFSET, hta_round(m->offset_ns / 1000.0, 3));
        hta_table_set_float(t, rw, HTA_MERGE_DRIFT, hta_round(m->drift * 1e6, 3));
        hta_table_set_float(t, rw, HTA_MERGE_RMS, isnan(m->rms_ns) ? NAN : hta_round(m->rms_ns / 1000.0, 3));
        hta_table_set_float(t, rw, HTA_MERGE_MAX, isnan(m->max_ns) ? NAN : hta_round(m->max_ns / 1000.0, 3));
    }
    if (hta_result_add(out, t)) return hta_oom(err);
    for (size_t i = 0; i < p->nnotes; i++)
        if (hta_result_note(out, "%s", p->notes[i])) return hta_oom(err);
    return HTA_OK;
oom:
    hta_table_free(t);
    return hta_oom(err);
}
