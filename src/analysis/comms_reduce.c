/* The reduce of `hta comms` (hta/comms.h, docs/comms.md): the ranks' calls matched across ranks for the
 * wait, summed per collective class into `collectives`, the all-to-allv splits into `alltoallv_bytes`, the
 * link peak from the ranks' GPUs into `comm_link`.
 *
 * Matching a call across ranks: by (process group, Seq, op) where the record has a Seq; in older traces
 * (no Seq) by (op, process group, group size) and the call's position among this rank's calls of that
 * kind, in start order.  Point-to-point calls are not matched (their partner is the peer's opposite call).
 * The wait of a call matched on two or more ranks: the last rank's kernel start minus this rank's, at most
 * this call's kernel time.  The calls are folded as they come (hta_comms_fold: each class and instance once,
 * 24 bytes a call), then reduced: O(n) in the calls, with a hash index per part. */
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

/* The class key of folded classes (a row of collectives): null strings are "" there, as scmp compares. */
static int cmp_class(const void *pa, const void *pb, void *u) {
    const hta_table *t = u;
    size_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    int c;
    for (int col = HTA_CFC_OP; col <= HTA_CFC_NOTE; col++)
        if ((c = strcmp(S(t, a, col), S(t, b, col)))) return c;
    if ((c = icmp(I(t, a, HTA_CFC_GROUP), I(t, b, HTA_CFC_GROUP)))) return c;
    return icmp(I(t, a, HTA_CFC_MSG), I(t, b, HTA_CFC_MSG));
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

/* string column col of folded class r, null where its first call's was */
static const char *class_str(const hta_table *p, size_t r, int col) {
    return I(p, r, HTA_CFC_NULLS) >> (col - HTA_CFC_OP) & 1 ? NULL : S(p, r, col);
}

static hta_status class_row(const hta_table *p, size_t r, const sums *s, const link *lk, int multi, hta_table *tb,
                            hta_error *err) {
    const char *op = class_str(p, r, HTA_CFC_OP), *note = class_str(p, r, HTA_CFC_NOTE);
    const char *desc = class_str(p, r, HTA_CFC_PGDESC), *pg = class_str(p, r, HTA_CFC_PG);
    int64_t n = I(p, r, HTA_CFC_GROUP), msg = I(p, r, HTA_CFC_MSG);
    long row = hta_table_add_row(tb);
    if (row < 0) return hta_oom(err);
    char pgbuf[512];
    if (pg && desc) snprintf(pgbuf, sizeof pgbuf, "%s (%s)", pg, desc);
    if (hta_table_set_str(tb, row, HTA_COLL_OP, op) || (pg && hta_table_set_str(tb, row, HTA_COLL_PG, desc ? pgbuf : pg)) ||
        hta_table_set_str(tb, row, HTA_COLL_DTYPE, class_str(p, r, HTA_CFC_DTYPE)))
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

/* The all-to-alls of p's calls summed per (process group, sending rank, receiver) into *out: a part's rows
 * (their keys name its ranks, so the parts' rows never meet). */
static hta_status alltoallv(const hta_table *p, hta_table **out, hta_error *err) {
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
    *out = tb;
    tb = NULL;
    goto out;
oom:
    st = hta_oom(err);
out:
    hta_table_free(raw);
    hta_table_free(tb);
    return st;
}

/* ---- the calls folded as they come ---- */

/* an instance's latest start (hta_table_fold_rows' merge) */
static hta_status latest(hta_table *acc, size_t ra, const hta_table *part, size_t rp, void *u, hta_error *err) {
    (void)u, (void)err;
    int64_t t = I(part, rp, HTA_CFI_LAST);
    if (t > I(acc, ra, HTA_CFI_LAST)) hta_table_set_int(acc, ra, HTA_CFI_LAST, t);
    return HTA_OK;
}

/* rank counted once in row r of t (columns ranks, last_rank): a rank's calls come together */
static void count_rank(hta_table *t, size_t r, int ranks, int last, int64_t rank) {
    if (I(t, r, last) == rank) return;
    hta_table_set_int(t, r, ranks, I(t, r, ranks) + 1);
    hta_table_set_int(t, r, last, rank);
}

static int set_key(hta_table *t, size_t row, int col, const char *s) {
    return hta_table_set_str(t, row, col, s ? s : "");
}

hta_status hta_comms_fold(hta_result *acc, hta_result *part, hta_error *err) {
    if (!hta_result_find(part, HTA_COMMS_PART_CALLS_TABLE.name)) return HTA_OK;
    hta_table *p, *mc = NULL, *mi = NULL, *a2 = NULL;
    HTA_TRY(hta_result_take(part, &HTA_COMMS_PART_CALLS_TABLE, &p, err));
    hta_table *cls = hta_result_table_in(acc, &HTA_COMMS_FOLD_CLASSES_TABLE);
    hta_table *ins = hta_result_table_in(acc, &HTA_COMMS_FOLD_INSTS_TABLE);
    hta_table *cal = hta_result_table_in(acc, &HTA_COMMS_FOLD_CALLS_TABLE);
    hta_table *a2s = hta_result_table_in(acc, &HTA_ALLTOALLV_TABLE);
    size_t n = p->nrows, *at = malloc((n ? n : 1) * sizeof *at), *ati = malloc((n ? n : 1) * sizeof *ati);
    int64_t *ord = malloc((n ? n : 1) * sizeof *ord);
    mc = hta_table_from_def(&HTA_COMMS_FOLD_CLASSES_TABLE), mi = hta_table_from_def(&HTA_COMMS_FOLD_INSTS_TABLE);
    hta_status st = HTA_OK;
    if (!cls || !ins || !cal || !a2s || !at || !ati || !ord || !mc || !mi) goto oom;
    if ((st = hta_table_sort_rows(p, cmp_rank_kind, NULL, err))) goto out;
    /* each call's position among its rank's calls of its kind */
    for (size_t i = 0; i < n; i++) {
        int same = i && I(p, i, HTA_CPC_RANK) == I(p, i - 1, HTA_CPC_RANK) &&
                   !scmp(S(p, i, HTA_CPC_OP), S(p, i - 1, HTA_CPC_OP)) && !scmp(S(p, i, HTA_CPC_PG), S(p, i - 1, HTA_CPC_PG)) &&
                   I(p, i, HTA_CPC_GROUP) == I(p, i - 1, HTA_CPC_GROUP);
        ord[i] = same ? ord[i - 1] + 1 : 0;
    }
    /* the part's classes and instances, a row per call (the instances: not point-to-point) */
    static const int sc[] = {HTA_CPC_OP, HTA_CPC_PG, HTA_CPC_PGDESC, HTA_CPC_DTYPE, HTA_CPC_NOTE};
    for (size_t i = 0; i < n; i++) {
        long r = hta_table_add_row(mc);
        if (r < 0) goto oom;
        int64_t nulls = 0;
        for (int c = 0; c < 5; c++) {
            if (set_key(mc, (size_t)r, HTA_CFC_OP + c, S(p, i, sc[c]))) goto oom;
            nulls |= (int64_t)!S(p, i, sc[c]) << c;
        }
        const int64_t v[] = {I(p, i, HTA_CPC_GROUP), I(p, i, HTA_CPC_MSG), nulls, 1, I(p, i, HTA_CPC_NS), 0, INT64_MIN};
        for (int c = 0; c < 7; c++) hta_table_set_int(mc, (size_t)r, HTA_CFC_GROUP + c, v[c]);
        if (comms_is_p2p(S(p, i, HTA_CPC_OP))) continue;
        if ((r = hta_table_add_row(mi)) < 0 || set_key(mi, (size_t)r, HTA_CFI_PG, S(p, i, HTA_CPC_PG)) ||
            set_key(mi, (size_t)r, HTA_CFI_OP, S(p, i, HTA_CPC_OP)))
            goto oom;
        int64_t seq = I(p, i, HTA_CPC_SEQ);
        const int64_t w[] = {seq < 0 ? -1 : seq, seq < 0 ? I(p, i, HTA_CPC_GROUP) : 0, seq < 0 ? ord[i] : 0,
                             I(p, i, HTA_CPC_START), 0, INT64_MIN};
        for (int c = 0; c < 6; c++) hta_table_set_int(mi, (size_t)r, HTA_CFI_SEQ + c, w[c]);
    }
    static const int ck[] = {HTA_CFC_OP, HTA_CFC_PG, HTA_CFC_PGDESC, HTA_CFC_DTYPE, HTA_CFC_NOTE, HTA_CFC_GROUP,
                             HTA_CFC_MSG};
    static const int cs[] = {HTA_CFC_CALLS, HTA_CFC_NS};
    static const int ik[] = {HTA_CFI_PG, HTA_CFI_OP, HTA_CFI_SEQ, HTA_CFI_GROUP, HTA_CFI_ORD};
    if ((st = hta_table_fold_rows(cls, mc, ck, 7, cs, 2, NULL, NULL, at, err)) ||
        (st = hta_table_fold_rows(ins, mi, ik, 5, NULL, 0, latest, NULL, ati, err)))
        goto out;
    /* a call names both rows in one cell */
    if (cls->nrows > INT32_MAX || ins->nrows >= UINT32_MAX) {
        st = hta_fail(err, HTA_EINVAL, "comms: more than 2^31 classes of collective calls");
        goto out;
    }
    if (hta_table_reserve(cal, cal->nrows + n)) goto oom;
    for (size_t i = 0, j = 0; i < n; i++) {
        int64_t rank = I(p, i, HTA_CPC_RANK), q = -1;
        count_rank(cls, at[i], HTA_CFC_RANKS, HTA_CFC_LAST_RANK, rank);
        if (!comms_is_p2p(S(p, i, HTA_CPC_OP))) {
            q = (int64_t)ati[j++];
            count_rank(ins, (size_t)q, HTA_CFI_RANKS, HTA_CFI_LAST_RANK, rank);
        }
        long r = hta_table_add_row(cal);
        const int64_t v[] = {(int64_t)((uint64_t)at[i] << 32 | (uint64_t)(q + 1)), I(p, i, HTA_CPC_START),
                             I(p, i, HTA_CPC_NS)};
        for (int c = 0; c < 3; c++) hta_table_set_int(cal, (size_t)r, HTA_CFK_REF + c, v[c]);
    }
    if ((st = alltoallv(p, &a2, err))) goto out;
    for (size_t r = 0; r < a2->nrows; r++)
        if (hta_table_copy_row(a2s, a2, r) < 0) goto oom;
    goto out;
oom:
    st = hta_oom(err);
out:
    hta_table_free(p), hta_table_free(mc), hta_table_free(mi), hta_table_free(a2);
    free(at), free(ati), free(ord);
    return st;
}

/* ---- the reduce ---- */

hta_status hta_comms_reduce(const hta_comms_opts *o, hta_result *parts, hta_result *out, hta_error *err) {
    HTA_OPTS_OR_DEFAULT(hta_comms_opts, o);
    hta_table *cls = NULL, *ins = NULL, *cal = NULL, *a2 = NULL, *dv = NULL, *tb = NULL;
    int64_t *wait = NULL, *matched = NULL;
    uint32_t *idx = NULL;
    hta_result lres;
    hta_result_init(&lres);
    link lk;
    hta_status st;
    /* parts appended rather than folded: folded here; neither: the parts' error */
    if (!hta_result_find(parts, HTA_COMMS_FOLD_CALLS_TABLE.name) &&
        !hta_result_find(parts, HTA_COMMS_PART_CALLS_TABLE.name))
        return hta_result_take(parts, &HTA_COMMS_PART_CALLS_TABLE, &cal, err);
    if ((st = hta_comms_fold(parts, parts, err)) ||
        (st = hta_result_take(parts, &HTA_COMMS_FOLD_CLASSES_TABLE, &cls, err)) ||
        (st = hta_result_take(parts, &HTA_COMMS_FOLD_INSTS_TABLE, &ins, err)) ||
        (st = hta_result_take(parts, &HTA_COMMS_FOLD_CALLS_TABLE, &cal, err)) ||
        (st = hta_result_take(parts, &HTA_ALLTOALLV_TABLE, &a2, err)) ||
        (st = hta_result_take(parts, &HTA_COMMS_PART_DEV_TABLE, &dv, err)) || (st = hta_result_copy_notes(out, parts, err)))
        goto out;
    if ((st = link_table(o, dv, &lk, &lres, err))) goto out;
    size_t n = cal->nrows, nc = cls->nrows;
    wait = calloc(nc ? nc : 1, sizeof *wait), matched = calloc(nc ? nc : 1, sizeof *matched);
    idx = malloc((nc ? nc : 1) * sizeof *idx);
    tb = hta_table_from_def(&HTA_COLLECTIVES_TABLE);
    if (!wait || !matched || !idx || !tb) {
        st = hta_oom(err);
        goto out;
    }
    /* the wait: each call of an instance on two or more ranks waits from its start to the latest, at most its
     * kernels' time */
    for (size_t i = 0; i < n; i++) {
        uint64_t ref = (uint64_t)I(cal, i, HTA_CFK_REF);
        int64_t q = (int64_t)(ref & UINT32_MAX) - 1, c = (int64_t)(ref >> 32);
        if (q < 0 || I(ins, (size_t)q, HTA_CFI_RANKS) < 2) continue;
        int64_t w = I(ins, (size_t)q, HTA_CFI_LAST) - I(cal, i, HTA_CFK_START), d = I(cal, i, HTA_CFK_NS);
        wait[c] += w < d ? w : d;
        matched[c]++;
    }
    /* the classes, in their keys' order */
    for (size_t i = 0; i < nc; i++) idx[i] = (uint32_t)i;
    qsort_r(idx, nc, sizeof *idx, cmp_class, cls);
    int multi = dv->nrows > 1;
    for (size_t i = 0; i < nc && !st; i++) {
        uint32_t c = idx[i];
        sums s = {I(cls, c, HTA_CFC_CALLS), I(cls, c, HTA_CFC_NS), wait[c], matched[c], I(cls, c, HTA_CFC_RANKS)};
        st = class_row(cls, c, &s, &lk, multi, tb, err);
    }
    if (!st) st = hta_table_sort_rows(tb, cmp_out, NULL, err);
    if (!st && lk.why && n && hta_result_note(out, "%s", lk.why)) st = hta_oom(err);
    if (!st && !n && hta_result_note(out, "no communication kernels in the window")) st = hta_oom(err);
    if (!st) {
        hta_table *x = tb;
        tb = NULL;
        if (hta_result_add(out, x)) st = hta_oom(err);
    }
    if (!st) st = hta_table_sort_rows(a2, cmp_a2a, NULL, err);
    if (!st) {
        hta_table *x = a2;
        a2 = NULL;
        if (hta_result_add(out, x)) st = hta_oom(err);
    }
    if (!st) st = hta_result_append(out, &lres, err);
out:
    hta_result_free(&lres);
    hta_table_free(cls), hta_table_free(ins), hta_table_free(cal), hta_table_free(a2);
    hta_table_free(dv);
    hta_table_free(tb);
    free(wait), free(matched), free(idx);
    return st;
}

HTA_ANALYSIS_WHOLE(comms, hta_comms_opts)
