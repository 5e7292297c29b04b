/* GPU kernel breakdown (analyses.md §4): time by kernel type, with overlaps
 * between types split out (`kernel_type`), and statistics per kernel name
 * (`all_kernels`), the smallest names of each type and rank folded into
 * "others".  Unlike HTA (quirk A1) every row's max/min/mean/stddev are
 * statistics of kernel durations, "others" included. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/breakdown_rows.h"
#include "core/vec.h"

HTA_TABLE_DEFINE(HTA_KERNEL_TYPE);
HTA_TABLE_DEFINE(HTA_ALL_KERNELS);

/* The part's own table (hta/table.h, "reducing parts"): per rank, its time under each label it has, in
 * exact ns, so that the sum over the ranks does not depend on how they were put together. */
#define HTA_KERNEL_TYPE_PART(T, C, D)                                                                     \
    T("kernel_type_part", "per rank and kernel-type label: the time under it (kernel_type's parts)")    \
    C(HTA_KTP_LABEL, "label", INT, "", "bits of the active types: 1 COMPUTATION, 2 COMMUNICATION, 4 MEMORY") \
    C(HTA_KTP_NS, "time_ns", INT, "ns", "time under the label, zero-length segments included")
HTA_TABLE_LOCAL(HTA_KERNEL_TYPE_PART);

void hta_kernel_opts_default(hta_kernel_opts *o) {
    *o = (hta_kernel_opts){.gpu_rows = HTA_GPU_ROWS_ACTIVITY, .top = 10, .duration_ratio = 0.8, .include_memory = 1};
}

#define NT 3 /* analysed types: COMPUTATION, COMMUNICATION, MEMORY (bits 1, 2, 4) */
static const hta_kernel_type g_types[NT] = {HTA_KT_COMPUTATION, HTA_KT_COMMUNICATION, HTA_KT_MEMORY};

/* Adds this rank's time per overlap label (running bit sum 1..7) to sum[]/seen[] (zeroed by the caller). */
static hta_status type_sweep(const bd_rows *b, int ntypes, int64_t sum[8], int seen[8], hta_error *err) {
    int64_t *us[NT] = {0}, *ue[NT] = {0};
    size_t nu[NT] = {0};
    size_t nb = 0;
    hta_status st = HTA_OK;
    for (int j = 0; j < ntypes; j++) {
        HTA_TRY_GOTO(st, bd_union(b, (int)g_types[j], &us[j], &ue[j], &nu[j], err), out);
        nb += 2 * nu[j];
    }
    /* The boundaries in HTA's concatenation: per type in T order, its starts (+bit) then its ends (-bit),
     * sequences 2j and 2j + 1, each sorted (a union's).  Taken by time, then by place in the concatenation:
     * HTA sorts the boundaries with an unstable sort, and which zero-length labels appear depends on the tie
     * order (§4.1); the concatenation order is the deterministic choice.  A merge of the 2 * ntypes sorted
     * sequences gives that order (on a tie, the first sequence's boundary), where a sort of the whole took
     * most of the part's time. */
    const int64_t *seq[2 * NT];
    size_t len[2 * NT], at[2 * NT] = {0};
    for (int j = 0; j < ntypes; j++) seq[2 * j] = us[j], seq[2 * j + 1] = ue[j], len[2 * j] = len[2 * j + 1] = nu[j];
    int run = 0;
    int64_t last = 0;
    for (size_t i = 0; i < nb; i++) {
        int q = -1;
        for (int c = 0; c < 2 * ntypes; c++)
            if (at[c] < len[c] && (q < 0 || seq[c][at[c]] < seq[q][at[q]])) q = c;
        int64_t time = seq[q][at[q]++];
        /* The running sum is the set of active types.  Durations are clamped at 0 in the view, so no
         * merged interval is negative and the sum is always a proper set: HTA's phantom labels (Quirk A17)
         * cannot arise.  Sums <= 0 are dropped as in HTA.  Zero-length segments between coincident
         * boundaries still name their label, as in HTA: the segment from the previous boundary to this one
         * counts under the sum the previous one left. */
        if (i && run > 0 && run <= 7) {
            sum[run] += time - last;
            seen[run] = 1;
        }
        run += q % 2 ? -(1 << (q / 2)) : 1 << (q / 2);
        last = time;
    }
out:
    for (int j = 0; j < NT; j++) free(us[j]), free(ue[j]);
    return st;
}

/* Names of the active types in T order joined by " overlapping ", HTA's label (§4.1). */
static void label_of(int bits, int ntypes, char *buf, size_t cap) {
    buf[0] = 0;
    for (int j = 0; j < ntypes; j++) {
        if (!(bits & (1 << j))) continue;
        size_t l = strlen(buf);
        snprintf(buf + l, cap - l, "%s%s", l ? " overlapping " : "", hta_kernel_type_name(g_types[j]));
    }
}

static hta_status kernel_type_table(const int64_t sum[8], const int seen[8], int ntypes, hta_result *out,
                                    hta_error *err) {
    hta_table *tb = hta_table_from_def(&HTA_KERNEL_TYPE_TABLE);
    if (!tb) goto oom;
    char lab[8][96];
    int ord[8], n = 0;
    int64_t total = 0;
    for (int bits = 1; bits < 8; bits++) {
        /* Labels seen with zero time are kept, as HTA records the zero-length segments between coincident
         * boundaries (§4.1); the total excludes idle time and OTHER kernels. */
        if (!seen[bits]) continue;
        label_of(bits, ntypes, lab[bits], sizeof lab[bits]);
        ord[n++] = bits;
        total += sum[bits];
    }
    /* HTA groups by label (ascending) then sorts by sum descending; ties stay in label order.  Two
     * insertion sorts of at most seven labels; the second is stable, so it keeps the first one's order. */
    for (int a = 1; a < n; a++)
        for (int c = a; c > 0 && strcmp(lab[ord[c - 1]], lab[ord[c]]) > 0; c--) {
            int x = ord[c]; ord[c] = ord[c - 1]; ord[c - 1] = x;
        }
    for (int a = 1; a < n; a++)
        for (int c = a; c > 0 && sum[ord[c - 1]] < sum[ord[c]]; c--) {
            int x = ord[c]; ord[c] = ord[c - 1]; ord[c - 1] = x;
        }
    for (int i = 0; i < n; i++) {
        long row = hta_table_add_row(tb);
        if (row < 0 || hta_table_set_str(tb, row, HTA_KERNEL_TYPE_TYPE, lab[ord[i]])) goto oom;
        int64_t s = sum[ord[i]];
        hta_table_set_float(tb, row, HTA_KERNEL_TYPE_SUM, s / 1000.0);
        hta_table_set_float(tb, row, HTA_KERNEL_TYPE_PCTG,
                            total ? hta_round(100.0 * ((s / 1000.0) / (total / 1000.0)), 1) : NAN);
    }
    if (hta_result_add(out, tb)) return hta_oom(err);
    return HTA_OK;
oom:
    hta_table_free(tb);
    return hta_oom(err);
}

/* ---- per-name statistics ---- */

/* One kernel name's statistics, in exact int64 ns except the squared deviations. */
typedef struct group {
    uint32_t name;
    int64_t count, sum, min, max; /* ns */
    double m2;                    /* sum of squared deviations from the mean, us^2 */
    double cumsum;
} group;

typedef struct krow {
    const char *type, *name; /* name points into the symbol table or is "others" */
    int32_t rank;
    int64_t count, sum, min, max;
    double m2;
} krow;

typedef struct krows {
    krow *v;
    size_t n, cap;
} krows;

/* Sum descending, ties by name: HTA groups by name (ascending) and then sorts by sum with an unstable
 * sort; name order is the order that sort starts from, and it does not depend on the machine.
 * qsort_r with the symbol table as context: no global state. */
static int cmp_group(const void *a, const void *b, void *sym) {
    const group *x = a, *y = b;
    if (x->sum != y->sum) return x->sum > y->sum ? -1 : 1;
    return strcmp(hta_sym(sym, x->name), hta_sym(sym, y->name));
}

static hta_status push(krows *k, krow r, hta_error *err) {
    if (HTA_GROW(k->v, k->cap, k->n + 1)) return hta_oom(err);
    k->v[k->n++] = r;
    return HTA_OK;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Merges group g into the running "others" row o (Chan's parallel variance): the statistics of all folded
 * kernels, from each name's summary without revisiting its kernels.  HTA instead gives "others" the
 * statistics of the per-name sums (Quirk A1). */
static void fold(krow *o, const group *g) {
    if (!o->count) {
        o->count = g->count, o->sum = g->sum, o->min = g->min, o->max = g->max, o->m2 = g->m2;
        return;
    }
    double na = (double)o->count, nb = (double)g->count;
    double d = (g->sum / 1000.0) / nb - (o->sum / 1000.0) / na;
    o->m2 += g->m2 + d * d * na * nb / (na + nb);
    o->count += g->count;
    o->sum += g->sum;
    if (g->min < o->min) o->min = g->min;
    if (g->max > o->max) o->max = g->max;
}

/* HTA's second group-by runs over the per-name sums (Quirk A1): each folded name counts as one value, its
 * sum. */
static void fold_sum_a1(krow *o, const group *g) {
    group one = {g->name, 1, g->sum, g->sum, g->sum, 0, 0};
    fold(o, &one);
}

static hta_status name_stats(const hta_trace *t, const bd_rows *b, int32_t rank, int type,
                             const hta_kernel_opts *o, int compat, int32_t *gid, krows *outk, hta_error *err) {
    const hta_rank *r = b->v->r;
    hta_status st = HTA_OK;
    size_t ng = 0;
    group *g = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < b->n; i++) {
        if (b->type[i] != type) continue;
        uint32_t nm = r->name[b->v->row[b->pos[i]]];
        /* gid maps a name's symbol id to its group, first seen first */
        if (gid[nm] < 0) {
            if (HTA_GROW(g, cap, ng + 1)) goto oom;
            g[ng] = (group){nm, 0, 0, INT64_MAX, INT64_MIN, 0, 0};
            gid[nm] = (int32_t)ng++;
        }
        group *x = &g[gid[nm]];
        int64_t d = b->dur[i];
        x->count++;
        x->sum += d;
        if (d < x->min) x->min = d;
        if (d > x->max) x->max = d;
    }
    for (size_t i = 0; i < b->n; i++) {
        if (b->type[i] != type) continue;
        group *x = &g[gid[r->name[b->v->row[b->pos[i]]]]];
        /* Second pass for the squared deviations from the exact mean (more accurate than a sum of
         * squares); in us, so that the stddev comes out in us. */
        double dv = b->dur[i] / 1000.0 - (x->sum / 1000.0) / (double)x->count;
        x->m2 += dv * dv;
    }
    /* reset only the entries used: gid is as large as the symbol table and is reused for every type and
     * rank */
    for (size_t j = 0; j < ng; j++) gid[g[j].name] = -1;
    if (ng) qsort_r(g, ng, sizeof *g, cmp_group, t->sym);
    const char *tname = hta_kernel_type_name((hta_kernel_type)type);
    /* §4.2 step 2: folding starts only when there are more names than --top (strictly). */
    int fold_rest = o->top >= 0 && ng > (size_t)o->top;
    double q = 0;
    if (fold_rest) {
        double *cs = malloc(ng * sizeof *cs), acc = 0;
        if (!cs) goto oom;
        /* HTA's running sum of the per-name sums, in us doubles as pandas computes it, and the quantile of
         * that column at duration_ratio (linear interpolation, §0.2). */
        for (size_t j = 0; j < ng; j++) cs[j] = g[j].cumsum = (acc += g[j].sum / 1000.0);
        qsort(cs, ng, sizeof *cs, cmp_d);
        q = hta_quantile_sorted(cs, ng, o->duration_ratio);
        free(cs);
    }
    krow others = {tname, "others", rank, 0, 0, 0, 0, 0};
    for (size_t j = 0; j < ng; j++) {
        /* Into "others": names past the quantile of the running sum, and every name at position >= top. */
        if (fold_rest && (g[j].cumsum > q || j >= (size_t)o->top)) {
            (compat ? fold_sum_a1 : fold)(&others, &g[j]);
            continue;
        }
        krow k = {tname, hta_sym(t->sym, g[j].name), rank, g[j].count, g[j].sum, g[j].min, g[j].max, g[j].m2};
        /* with --hta-compat, HTA's collapsed statistics of a kept name once some were folded (Quirk A1):
         * one value, its sum */
        if (compat && fold_rest) k.count = 1, k.min = k.max = k.sum, k.m2 = 0;
        HTA_TRY_GOTO(st, push(outk, k, err), out);
    }
    if (others.count) st = push(outk, others, err);
    goto out;
oom:
    st = hta_oom(err);
out:
    free(g);
    return st;
}

/* all_kernels' rows of the ranks in k, in rank order (the reduce gives them HTA's order). */
static hta_status all_kernels_rows(const krows *k, hta_table *tb, hta_error *err) {
    for (size_t i = 0; i < k->n; i++) {
        const krow *x = &k->v[i];
        long row = hta_table_add_row(tb);
        if (row < 0 || hta_table_set_str(tb, row, HTA_ALL_KERNELS_NAME, x->name) ||
            hta_table_set_str(tb, row, HTA_ALL_KERNELS_TYPE, x->type))
            goto oom;
        hta_table_set_float(tb, row, HTA_ALL_KERNELS_SUM, x->sum / 1000.0);
        hta_table_set_float(tb, row, HTA_ALL_KERNELS_MAX, x->max / 1000.0);
        hta_table_set_float(tb, row, HTA_ALL_KERNELS_MIN, x->min / 1000.0);
        hta_table_set_float(tb, row, HTA_ALL_KERNELS_STDDEV,
                            x->count > 1 ? sqrt(x->m2 / (double)(x->count - 1)) : 0.0);
        hta_table_set_float(tb, row, HTA_ALL_KERNELS_MEAN, (x->sum / 1000.0) / (double)x->count);
        hta_table_set_int(tb, row, HTA_ALL_KERNELS_RANK, x->rank);
        hta_table_set_int(tb, row, HTA_ALL_KERNELS_COUNT, x->count);
    }
    return HTA_OK;
oom:
    return hta_oom(err);
}

/* HTA's final order of all_kernels: (kernel_type, name, rank) ascending, strings by code point (§0.2), so
 * "others" sorts where pandas puts it. */
static int cmp_all_kernels(const hta_table *t, size_t a, size_t b, void *ctx) {
    (void)ctx;
    int c = strcmp(hta_table_get_str(t, a, HTA_ALL_KERNELS_TYPE), hta_table_get_str(t, b, HTA_ALL_KERNELS_TYPE));
    if (!c) c = strcmp(hta_table_get_str(t, a, HTA_ALL_KERNELS_NAME), hta_table_get_str(t, b, HTA_ALL_KERNELS_NAME));
    if (c) return c;
    int64_t x = hta_table_get_int(t, a, HTA_ALL_KERNELS_RANK), y = hta_table_get_int(t, b, HTA_ALL_KERNELS_RANK);
    return (x > y) - (x < y);
}

hta_status hta_kernel_breakdown_part(hta_ctx *ctx, const hta_kernel_opts *o, hta_result *out, hta_error *err) {
    HTA_OPTS_OR_DEFAULT(hta_kernel_opts, o);
    const hta_trace *t = ctx->trace;
    /* a quantile outside [0, 1] is undefined; refused here rather than extrapolated */
    if (o->duration_ratio < 0 || o->duration_ratio > 1)
        return hta_fail(err, HTA_EINVAL, "duration ratio %g is not between 0 and 1", o->duration_ratio);
    int ntypes = o->include_memory ? 3 : 2;
    krows k = {0};
    size_t nsym = hta_symtab_count(t->sym);
    /* symbol id -> group of name_stats (-1: none); one array for every rank and type */
    int32_t *gid = malloc((nsym ? nsym : 1) * sizeof *gid);
    hta_table *kt = hta_table_from_def(&HTA_KERNEL_TYPE_PART_TABLE), *ak = hta_table_from_def(&HTA_ALL_KERNELS_TABLE);
    size_t ns = hta_ctx_nranks(ctx);
    hta_status st = HTA_OK;
    if (!gid || !kt || !ak) {
        st = hta_oom(err);
        goto out;
    }
    memset(gid, 0xff, (nsym ? nsym : 1) * sizeof *gid);
    for (size_t i = 0; i < ns && !st; i++) {
        bd_rows b;
        if ((st = bd_rows_build(ctx, i, bd_gpu_rows(ctx, o->gpu_rows), &b, err))) break;
        int32_t rank = t->ranks[i]->rank;
        size_t nk = 0;
        /* OTHER rows (sync records with --hta-compat) belong to no analysed type (§4) */
        for (size_t j = 0; j < b.n; j++) nk += b.type[j] != HTA_KT_OTHER && (o->include_memory || b.type[j] != HTA_KT_MEMORY);
        if (!nk) bd_note_empty(t, t->ranks[i], bd_gpu_rows(ctx, o->gpu_rows), "GPU kernels to break down", out);
        /* kernel_type is one table for all ranks (§4.1), summed by the reduce; all_kernels has rows per rank */
        int64_t sum[8] = {0};
        int seen[8] = {0};
        st = type_sweep(&b, ntypes, sum, seen, err);
        for (int bits = 1; !st && bits < 8; bits++) {
            if (!seen[bits]) continue;
            long row = hta_table_add_row(kt);
            if (row < 0) {
                st = hta_oom(err);
                break;
            }
            hta_table_set_int(kt, row, HTA_KTP_LABEL, bits);
            hta_table_set_int(kt, row, HTA_KTP_NS, sum[bits]);
        }
        size_t from = k.n;
        for (int j = 0; !st && j < ntypes; j++) st = name_stats(t, &b, rank, (int)g_types[j], o, ctx->hta_compat, gid, &k, err);
        if (!st) {
            krows mine = {k.v ? k.v + from : NULL, k.n - from, 0};
            st = all_kernels_rows(&mine, ak, err);
        }
        bd_rows_free(&b);
    }
    if (!st && HTA_RESULT_ADD(out, &ak, &kt)) st = hta_oom(err);
out:
    free(gid), free(k.v);
    hta_table_free(kt);
    hta_table_free(ak);
    return st;
}

/* The vendor-neutral category of each row's kernel name (hta/vocab.h), "others" none. */
static hta_status add_categories(hta_table *ak, hta_error *err) {
    int col = hta_table_add_dyn_col(ak, "category", HTA_COL_STR);
    if (col < 0) return hta_oom(err);
    for (size_t r = 0; r < ak->nrows; r++) {
        const char *n = hta_table_get_str(ak, r, HTA_ALL_KERNELS_NAME);
        if (n && strcmp(n, "others") &&
            hta_table_set_str(ak, r, col, hta_kernel_category_name(hta_kernel_category_of(n))))
            return hta_oom(err);
    }
    return HTA_OK;
}

hta_status hta_kernel_breakdown_reduce(const hta_kernel_opts *o, hta_result *parts, hta_result *out,
                                       hta_error *err) {
    HTA_OPTS_OR_DEFAULT(hta_kernel_opts, o);
    hta_table *kt, *ak;
    HTA_TRY(hta_result_take(parts, &HTA_KERNEL_TYPE_PART_TABLE, &kt, err));
    int64_t sum[8] = {0};
    int seen[8] = {0};
    /* int64 ns: the same sums in whatever order the ranks come */
    for (size_t r = 0; r < kt->nrows; r++) {
        int64_t bits = hta_table_get_int(kt, r, HTA_KTP_LABEL);
        if (bits < 1 || bits > 7) continue;
        sum[bits] += hta_table_get_int(kt, r, HTA_KTP_NS);
        seen[bits] = 1;
    }
    hta_table_free(kt);
    HTA_TRY(hta_result_copy_notes(out, parts, err));
    HTA_TRY(kernel_type_table(sum, seen, o->include_memory ? 3 : 2, out, err));
    HTA_TRY(hta_result_take(parts, &HTA_ALL_KERNELS_TABLE, &ak, err));
    hta_status st = hta_table_sort_rows(ak, cmp_all_kernels, NULL, err);
    if (!st && o->categories) st = add_categories(ak, err);
    if (st) {
        hta_table_free(ak);
        return st;
    }
    return hta_result_add(out, ak) ? hta_oom(err) : HTA_OK;
}

HTA_ANALYSIS_WHOLE(kernel_breakdown, hta_kernel_opts)
