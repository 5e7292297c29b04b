/* The reduce of `hta comms` (hta/comms.h, docs/comms.md): the ranks' calls matched across ranks for the
 * wait, summed per collective class into `collectives`, the all-to-allv splits into `alltoallv_bytes`, the
 * link peak from the ranks' GPUs into `comm_link`.
 *
 * Matching a call across ranks: by (process group, Seq, op) where the record has a Seq; in older traces
 * (no Seq) by (op, process group, group size) and the call's position among this rank's calls of that
 * kind, in start order.  Point-to-point calls are not matched (their partner is the peer's opposite call).
 * The wait of a call matched on two or more ranks: the last rank's kernel start minus this rank's, at most
 * this call's kernel time.  Sorting only: O(n log n) in the calls. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/comms_part.h"
#include "core/vec.h"
#include "hta/efficiency.h"

static int scmp(const char *a, const char *b) { return strcmp(a ? a : "", b ? b : ""); }
static int icmp(int64_t a, int64_t b) { return (a > b) - (a < b); }

#define S(t, r, c) hta_table_get_str(t, r, c)
#define I(t, r, c) hta_table_get_int(t, r, c)

/* rank, op, pg, group size, start: each rank's calls of one kind in start order (for ord). */
static int cmp_rank_kind(const hta_table *t, size_t a, size_t b, void *u) {
    (void)u;
    int c;
    if ((c = icmp(I(t, a, HTA_CPC_RANK), I(t, b, HTA_CPC_RANK))) || (c = scmp(S(t, a, HTA_CPC_OP), S(t, b, HTA_CPC_OP))) ||
        (c = scmp(S(t, a, HTA_CPC_PG), S(t, b, HTA_CPC_PG))) ||
        (c = icmp(I(t, a, HTA_CPC_GROUP), I(t, b, HTA_CPC_GROUP))))
        return c;
    return icmp(I(t, a, HTA_CPC_START), I(t, b, HTA_CPC_START));
}

typedef struct mctx {
    const hta_table *t;
    const int64_t *ord;
} mctx;

/* The match key (a call's instance across ranks), then rank. */
static int cmp_match(const void *pa, const void *pb, void *u) {
    const mctx *m = u;
    const hta_table *t = m->t;
    size_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    int64_t sa = I(t, a, HTA_CPC_SEQ), sb = I(t, b, HTA_CPC_SEQ);
    int c;
    if ((c = icmp(sa < 0, sb < 0)) || (c = scmp(S(t, a, HTA_CPC_PG), S(t, b, HTA_CPC_PG))) ||
        (c = scmp(S(t, a, HTA_CPC_OP), S(t, b, HTA_CPC_OP))))
        return c;
    if (sa >= 0) {
        if ((c = icmp(sa, sb))) return c;
    } else if ((c = icmp(I(t, a, HTA_CPC_GROUP), I(t, b, HTA_CPC_GROUP))) || (c = icmp(m->ord[a], m->ord[b]))) {
        return c;
    }
    return icmp(I(t, a, HTA_CPC_RANK), I(t, b, HTA_CPC_RANK));
}

static int same_instance(const mctx *m, uint32_t a, uint32_t b) {
    const hta_table *t = m->t;
    int64_t sa = I(t, a, HTA_CPC_SEQ), sb = I(t, b, HTA_CPC_SEQ);
    if ((sa < 0) != (sb < 0) || scmp(S(t, a, HTA_CPC_PG), S(t, b, HTA_CPC_PG)) ||
        scmp(S(t, a, HTA_CPC_OP), S(t, b, HTA_CPC_OP)))
        return 0;
    if (sa >= 0) return sa == sb;
    return I(t, a, HTA_CPC_GROUP) == I(t, b, HTA_CPC_GROUP) && m->ord[a] == m->ord[b];
}

/* The class key (a row of collectives), then rank. */
static int cmp_class(const void *pa, const void *pb, void *u) {
    const hta_table *t = u;
    size_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    static const int sc[] = {HTA_CPC_OP, HTA_CPC_PG, HTA_CPC_PGDESC, HTA_CPC_DTYPE, HTA_CPC_NOTE};
    int c;
    for (size_t i = 0; i < sizeof sc / sizeof *sc; i++)
        if ((c = scmp(S(t, a, sc[i]), S(t, b, sc[i])))) return c;
    if ((c = icmp(I(t, a, HTA_CPC_GROUP), I(t, b, HTA_CPC_GROUP))) || (c = icmp(I(t, a, HTA_CPC_MSG), I(t, b, HTA_CPC_MSG))))
        return c;
    return icmp(I(t, a, HTA_CPC_RANK), I(t, b, HTA_CPC_RANK));
}

static int same_class(const hta_table *t, uint32_t a, uint32_t b) {
    uint32_t x[2] = {a, b};
    /* equal but for the rank */
    static const int sc[] = {HTA_CPC_OP, HTA_CPC_PG, HTA_CPC_PGDESC, HTA_CPC_DTYPE, HTA_CPC_NOTE};
    for (size_t i = 0; i < sizeof sc / sizeof *sc; i++)
        if (scmp(S(t, x[0], sc[i]), S(t, x[1], sc[i]))) return 0;
    return I(t, a, HTA_CPC_GROUP) == I(t, b, HTA_CPC_GROUP) && I(t, a, HTA_CPC_MSG) == I(t, b, HTA_CPC_MSG);
}

/* time descending, then op, process group, message size */
static int cmp_out(const hta_table *t, size_t a, size_t b, void *u) {
    (void)u;
    double x = hta_table_get_float(t, a, HTA_COLL_TIME), y = hta_table_get_float(t, b, HTA_COLL_TIME);
    if (x != y) return x > y ? -1 : 1;
    int c;
    if ((c = scmp(S(t, a, HTA_COLL_OP), S(t, b, HTA_COLL_OP))) || (c = scmp(S(t, a, HTA_COLL_PG), S(t, b, HTA_COLL_PG))))
        return c;
    return icmp(I(t, a, HTA_COLL_MSG), I(t, b, HTA_COLL_MSG));
}

/* ---- the link ---- */

typedef struct link {
    double gbps; /* 0: none */
    int scale_up;
    const char *why; /* no link_peak_pct: why (static text) */
} link;

static hta_status link_table(const hta_comms_opts *o, const hta_table *dv, link *lk, hta_result *out, hta_error *err) {
    const hta_device_peak *m = NULL;
    int mixed = 0, nranks = 0;
    char devname[256] = "";
    for (size_t r = 0; r < dv->nrows; r++) {
        const char *nm = S(dv, r, HTA_CPD_NAME);
        hta_device_props p = {nm, I(dv, r, HTA_CPD_CCMAJ), I(dv, r, HTA_CPD_CCMIN), I(dv, r, HTA_CPD_SMS),
                              I(dv, r, HTA_CPD_MEM)};
        const hta_device_peak *x = hta_device_peak_find(&p);
        if (nranks && x != m) mixed = 1;
        if (!devname[0] && nm && *nm) snprintf(devname, sizeof devname, "%s", nm);
        if (!nranks) m = x;
        nranks++;
    }
    if (mixed) m = NULL;
    lk->scale_up = o->scale_up > 0 ? o->scale_up : 8;
    lk->gbps = o->peak_link_gbps > 0 ? o->peak_link_gbps : m && m->link ? m->link_gbps : 0;
    lk->why = lk->gbps > 0 ? NULL
              : mixed      ? "the ranks run on different GPUs: no link_peak_pct (give --peak-link-gbps)"
                           : "the GPU's link is not in the peak table: no link_peak_pct (give --peak-link-gbps)";
    hta_table *tb = hta_table_from_def(&HTA_COMM_LINK_TABLE);
    long row = tb ? hta_table_add_row(tb) : -1;
    const char *model = mixed ? "mixed" : m ? m->model : o->peak_link_gbps > 0 ? "user" : "unknown";
    const char *src = o->peak_link_gbps > 0 ? "--peak-link-gbps" : m && m->link ? m->source : NULL;
    const char *lname = o->peak_link_gbps > 0 ? "user" : m && m->link ? m->link : NULL;
    if (row < 0 || hta_table_set_str(tb, row, HTA_LINK_DEVICE, devname[0] ? devname : "(no deviceProperties)") ||
        hta_table_set_str(tb, row, HTA_LINK_MODEL, model) || (lname && hta_table_set_str(tb, row, HTA_LINK_NAME, lname)) ||
        (src && hta_table_set_str(tb, row, HTA_LINK_SOURCE, src))) {
        hta_table_free(tb);
        return hta_oom(err);
    }
    hta_table_set_int(tb, row, HTA_LINK_RANKS, nranks);
    hta_table_set_float(tb, row, HTA_LINK_GBPS, lk->gbps > 0 ? lk->gbps : NAN);
    hta_table_set_int(tb, row, HTA_LINK_SCALE, lk->scale_up);
    if (hta_result_add(out, tb)) return hta_oom(err);
    return HTA_OK;
}

/* ---- one row of collectives ---- */

typedef struct sums {
    int64_t calls, ns, wait, matched, ranks;
} sums;

static hta_status class_row(const hta_table *p, size_t r, const sums *s, const link *lk, int multi, hta_table *tb,
                            hta_error *err) {
    const char *op = S(p, r, HTA_CPC_OP), *note = S(p, r, HTA_CPC_NOTE), *desc = S(p, r, HTA_CPC_PGDESC);
    const char *pg = S(p, r, HTA_CPC_PG);
    int64_t n = I(p, r, HTA_CPC_GROUP), msg = I(p, r, HTA_CPC_MSG);
    long row = hta_table_add_row(tb);
    if (row < 0) return hta_oom(err);
    char pgbuf[512];
    if (pg && desc) snprintf(pgbuf, sizeof pgbuf, "%s (%s)", pg, desc);
    if (hta_table_set_str(tb, row, HTA_COLL_OP, op) || (pg && hta_table_set_str(tb, row, HTA_COLL_PG, desc ? pgbuf : pg)) ||
        hta_table_set_str(tb, row, HTA_COLL_DTYPE, S(p, r, HTA_CPC_DTYPE)))
        return hta_oom(err);
    if (n > 0) hta_table_set_int(tb, row, HTA_COLL_GROUP, n);
    else hta_table_set_null(tb, row, HTA_COLL_GROUP);
    if (msg >= 0) hta_table_set_int(tb, row, HTA_COLL_MSG, msg);
    else hta_table_set_null(tb, row, HTA_COLL_MSG);
    hta_table_set_int(tb, row, HTA_COLL_CALLS, s->calls);
    hta_table_set_int(tb, row, HTA_COLL_RANKS, s->ranks);
    hta_table_set_float(tb, row, HTA_COLL_TIME, hta_ns_to_us(s->ns));
    /* bytes per ns is 10^9 bytes per second: GB/s as nccl-tests prints it */
    double alg = msg >= 0 && s->ns > 0 ? (double)msg * (double)s->calls / (double)s->ns : NAN;
    double f = comms_bus_factor(op, n), bus = alg * f;
    hta_table_set_float(tb, row, HTA_COLL_ALGBW, alg);
    hta_table_set_float(tb, row, HTA_COLL_BUSBW, bus);
    hta_table_set_float(tb, row, HTA_COLL_WAIT, s->matched ? hta_ns_to_us(s->wait) : NAN);
    double xfer = s->matched == s->calls && s->ns > s->wait ? bus * (double)s->ns / (double)(s->ns - s->wait) : NAN;
    hta_table_set_float(tb, row, HTA_COLL_XFER_BUSBW, xfer);
    int in_domain = n > 0 && n <= lk->scale_up;
    hta_table_set_float(tb, row, HTA_COLL_LINK_PCT, lk->gbps > 0 && in_domain ? 100.0 * bus / lk->gbps : NAN);
    char nb[512] = "";
    size_t k = 0;
#define ADD(...) (k += (size_t)snprintf(nb + k, k < sizeof nb ? sizeof nb - k : 0, __VA_ARGS__))
    if (note) ADD("%s", note);
    if (comms_is_p2p(op)) {
        ADD("%spoint-to-point: no wait (its partner is the peer's opposite call)", k ? "; " : "");
    } else if (!s->matched) {
        ADD("%s%s", k ? "; " : "", multi ? "no call matched on another rank: no wait" : "one rank: no wait");
    } else if (s->matched < s->calls) {
        ADD("%swait from %" PRId64 " of %" PRId64 " calls (the others matched on no other rank loaded)", k ? "; " : "",
            s->matched, s->calls);
    }
    if (!isnan(bus) && lk->gbps > 0 && !in_domain && n > 0)
        ADD("%sgroup of %" PRId64 " beyond one node's %d: no link_peak_pct", k ? "; " : "", n, lk->scale_up);
#undef ADD
    if (k && hta_table_set_str(tb, row, HTA_COLL_NOTE, nb)) return hta_oom(err);
    return HTA_OK;
}

/* ---- all-to-allv ---- */

/* The numbers of a list "[1, 2, 3]" into *v (malloc'ed), *n of them; 0 when it is no such list. */
static int i64_list(const char *s, int64_t **v, size_t *n) {
    *v = NULL, *n = 0;
    if (!s) return 0;
    while (*s == ' ') s++;
    if (*s++ != '[') return 0;
    size_t cap = 0;
    for (;;) {
        while (*s == ' ') s++;
        if (*s == ']') return 1;
        char *e;
        long long x = strtoll(s, &e, 10);
        if (e == s || x < 0) break;
        if (HTA_GROW(*v, cap, *n + 1)) break;
        (*v)[(*n)++] = x;
        for (s = e; *s == ' '; s++) {}
        if (*s == ',') s++;
        else if (*s != ']') break;
    }
    free(*v);
    *v = NULL, *n = 0;
    return 0;
}

static int cmp_a2a(const hta_table *t, size_t a, size_t b, void *u) {
    (void)u;
    int c;
    if ((c = scmp(S(t, a, HTA_A2A_PG), S(t, b, HTA_A2A_PG))) || (c = icmp(I(t, a, HTA_A2A_SRC), I(t, b, HTA_A2A_SRC))))
        return c;
    return icmp(I(t, a, HTA_A2A_DST_INDEX), I(t, b, HTA_A2A_DST_INDEX));
}

static hta_status alltoallv(const hta_table *p, hta_result *out, hta_error *err) {
    hta_table *raw = hta_table_from_def(&HTA_ALLTOALLV_TABLE), *tb = hta_table_from_def(&HTA_ALLTOALLV_TABLE);
    hta_status st = HTA_OK;
    if (!raw || !tb) goto oom;
    for (size_t r = 0; r < p->nrows; r++) {
        const char *sp = S(p, r, HTA_CPC_SPLIT);
        int64_t in = I(p, r, HTA_CPC_IN_BYTES);
        if (!sp || in < 0 || strcmp(S(p, r, HTA_CPC_OP), "alltoall")) continue;
        int64_t *v, *g;
        size_t n, ng;
        if (!i64_list(sp, &v, &n)) continue;
        int64_t sum = 0;
        for (size_t j = 0; j < n; j++) sum += v[j];
        /* splits count rows of dim 0: one row's bytes is the input over their sum */
        if (sum <= 0 || in % sum) {
            free(v);
            continue;
        }
        int64_t per = in / sum;
        int okg = i64_list(S(p, r, HTA_CPC_PGRANKS), &g, &ng) && ng == n;
        for (size_t j = 0; j < n && !st; j++) {
            long row = hta_table_add_row(raw);
            if (row < 0 || (S(p, r, HTA_CPC_PG) && hta_table_set_str(raw, row, HTA_A2A_PG, S(p, r, HTA_CPC_PG)))) {
                st = hta_oom(err);
                break;
            }
            hta_table_set_int(raw, row, HTA_A2A_SRC, I(p, r, HTA_CPC_RANK));
            hta_table_set_int(raw, row, HTA_A2A_DST_INDEX, (int64_t)j);
            if (okg) hta_table_set_int(raw, row, HTA_A2A_DST, g[j]);
            else hta_table_set_null(raw, row, HTA_A2A_DST);
            hta_table_set_int(raw, row, HTA_A2A_CALLS, 1);
            hta_table_set_int(raw, row, HTA_A2A_BYTES, v[j] * per);
        }
        free(v), free(g);
        if (st) goto out;
    }
    if ((st = hta_table_sort_rows(raw, cmp_a2a, NULL, err))) goto out;
    for (size_t i = 0; i < raw->nrows;) {
        size_t j = i;
        int64_t calls = 0, bytes = 0;
        for (; j < raw->nrows && !cmp_a2a(raw, i, j, NULL); j++)
            calls += I(raw, j, HTA_A2A_CALLS), bytes += I(raw, j, HTA_A2A_BYTES);
        long row = hta_table_add_row(tb);
        if (row < 0 || (S(raw, i, HTA_A2A_PG) && hta_table_set_str(tb, row, HTA_A2A_PG, S(raw, i, HTA_A2A_PG)))) goto oom;
        hta_table_set_int(tb, row, HTA_A2A_SRC, I(raw, i, HTA_A2A_SRC));
        hta_table_set_int(tb, row, HTA_A2A_DST_INDEX, I(raw, i, HTA_A2A_DST_INDEX));
        int64_t d = I(raw, i, HTA_A2A_DST);
        if (raw->cols[HTA_A2A_DST].null && raw->cols[HTA_A2A_DST].null[i]) hta_table_set_null(tb, row, HTA_A2A_DST);
        else hta_table_set_int(tb, row, HTA_A2A_DST, d);
        hta_table_set_int(tb, row, HTA_A2A_CALLS, calls);
        hta_table_set_int(tb, row, HTA_A2A_BYTES, bytes);
        i = j;
    }
    if (hta_result_add(out, tb)) goto oom;
    tb = NULL;
    goto out;
oom:
    st = hta_oom(err);
out:
    hta_table_free(raw);
    hta_table_free(tb);
    return st;
}

/* ---- the reduce ---- */

hta_status hta_comms_reduce(const hta_comms_opts *o, hta_result *parts, hta_result *out, hta_error *err) {
    HTA_OPTS_OR_DEFAULT(hta_comms_opts, o);
    hta_table *p = NULL, *dv = NULL, *tb = NULL;
    int64_t *ord = NULL, *wait = NULL;
    uint32_t *idx = NULL;
    uint8_t *matched = NULL;
    hta_result lres;
    hta_result_init(&lres);
    link lk;
    hta_status st;
    if ((st = hta_result_take(parts, &HTA_COMMS_PART_CALLS_TABLE, &p, err)) ||
        (st = hta_result_take(parts, &HTA_COMMS_PART_DEV_TABLE, &dv, err)) || (st = hta_result_copy_notes(out, parts, err)))
        goto out;
    if ((st = link_table(o, dv, &lk, &lres, err))) goto out;
    if ((st = hta_table_sort_rows(p, cmp_rank_kind, NULL, err))) goto out;
    size_t n = p->nrows;
    ord = malloc((n ? n : 1) * sizeof *ord), wait = calloc(n ? n : 1, sizeof *wait);
    idx = malloc((n ? n : 1) * sizeof *idx), matched = calloc(n ? n : 1, 1);
    tb = hta_table_from_def(&HTA_COLLECTIVES_TABLE);
    if (!ord || !wait || !idx || !matched || !tb) {
        st = hta_oom(err);
        goto out;
    }
    /* each call's position among its rank's calls of its kind */
    for (size_t i = 0; i < n; i++) {
        int same = i && I(p, i, HTA_CPC_RANK) == I(p, i - 1, HTA_CPC_RANK) &&
                   !scmp(S(p, i, HTA_CPC_OP), S(p, i - 1, HTA_CPC_OP)) && !scmp(S(p, i, HTA_CPC_PG), S(p, i - 1, HTA_CPC_PG)) &&
                   I(p, i, HTA_CPC_GROUP) == I(p, i - 1, HTA_CPC_GROUP);
        ord[i] = same ? ord[i - 1] + 1 : 0;
    }
    /* the wait: each instance matched on two or more ranks */
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!comms_is_p2p(S(p, i, HTA_CPC_OP))) idx[m++] = (uint32_t)i;
    mctx mc = {p, ord};
    qsort_r(idx, m, sizeof *idx, cmp_match, &mc);
    for (size_t i = 0; i < m;) {
        size_t j = i + 1, ranks = 1;
        int64_t last = I(p, idx[i], HTA_CPC_START);
        for (; j < m && same_instance(&mc, idx[i], idx[j]); j++) {
            ranks += I(p, idx[j], HTA_CPC_RANK) != I(p, idx[j - 1], HTA_CPC_RANK);
            if (I(p, idx[j], HTA_CPC_START) > last) last = I(p, idx[j], HTA_CPC_START);
        }
        if (ranks >= 2)
            for (size_t k = i; k < j; k++) {
                int64_t w = last - I(p, idx[k], HTA_CPC_START), d = I(p, idx[k], HTA_CPC_NS);
                wait[idx[k]] = w < d ? w : d;
                matched[idx[k]] = 1;
            }
        i = j;
    }
    /* the classes */
    for (size_t i = 0; i < n; i++) idx[i] = (uint32_t)i;
    qsort_r(idx, n, sizeof *idx, cmp_class, p);
    int multi = dv->nrows > 1;
    for (size_t i = 0; i < n && !st;) {
        sums s = {0, 0, 0, 0, 0};
        size_t j = i;
        for (; j < n && same_class(p, idx[i], idx[j]); j++) {
            uint32_t x = idx[j];
            s.calls++, s.ns += I(p, x, HTA_CPC_NS);
            s.ranks += j == i || I(p, x, HTA_CPC_RANK) != I(p, idx[j - 1], HTA_CPC_RANK);
            if (matched[x]) s.matched++, s.wait += wait[x];
        }
        st = class_row(p, idx[i], &s, &lk, multi, tb, err);
        i = j;
    }
    if (!st) st = hta_table_sort_rows(tb, cmp_out, NULL, err);
    if (!st && lk.why && n && hta_result_note(out, "%s", lk.why)) st = hta_oom(err);
    if (!st && !n && hta_result_note(out, "no communication kernels in the window")) st = hta_oom(err);
    if (!st) {
        hta_table *x = tb;
        tb = NULL;
        if (hta_result_add(out, x)) st = hta_oom(err);
    }
    if (!st) st = alltoallv(p, out, err);
    if (!st) st = hta_result_append(out, &lres, err);
out:
    hta_result_free(&lres);
    hta_table_free(p);
    hta_table_free(dv);
    hta_table_free(tb);
    free(ord), free(wait), free(idx), free(matched);
    return st;
}

HTA_ANALYSIS_WHOLE(comms, hta_comms_opts)
