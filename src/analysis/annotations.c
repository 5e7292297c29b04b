/* GPU user-annotation breakdown (analyses.md §5.1): time per annotation name,
 * per rank, with the long tail folded into "others" as HTA's
 * _aggr_gpu_kernel_time does (§4.2) -- but with true statistics for every row
 * (HTA's Quirk A1 collapses them once names are folded). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hta/launch.h"
#include "hta/util.h"


HTA_TABLE_DEFINE(HTA_ANNOTATIONS);

/* The part's own table (hta/table.h, "reducing parts"): one row per context. */
#define HTA_ANNOTATIONS_PART(T, C, D)                                                                     \
    T("annotations_part", "per context: whether its trace has the category, and the names folded")      \
    C(HTA_AP_HAS_CAT, "has_category", INT, "", "1 when the trace has the annotation category")          \
    C(HTA_AP_FOLDED, "folded", INT, "", "annotation names folded into others, over its ranks")
HTA_TABLE_LOCAL(HTA_ANNOTATIONS_PART);

void hta_annotation_opts_default(hta_annotation_opts *o) {
    *o = (hta_annotation_opts){.num_kernels = 1000, .duration_ratio = 0.8};
}

typedef struct item {
    uint32_t name;
    int64_t dur; /* ns */
} item;

typedef struct group {
    const char *name; /* NULL = "others" */
    size_t first, n;  /* items[first .. first+n) (for "others": unused) */
    int64_t sum;
    int others;       /* folded into "others" */
} group;

/* By symbol id only to bring each name's rows together; the output order comes from the names' text. */
static int cmp_item(const void *a, const void *b) {
    const item *x = a, *y = b;
    if (x->name != y->name) return x->name < y->name ? -1 : 1;
    return 0;
}
/* pandas' groupby order: names ascending by code point (§0.2) */
static int cmp_group_name(const void *a, const void *b) {
    const group *x = a, *y = b;
    return strcmp(x->name, y->name);
}
/* sum descending; ties keep name order (the groups arrive sorted by name), where HTA's unstable sort has
 * an order of its own (docs/differences-from-hta.md) */
static int cmp_group_sum(const void *a, const void *b) {
    const group *x = a, *y = b;
    if (x->sum != y->sum) return x->sum > y->sum ? -1 : 1;
    return strcmp(x->name, y->name);
}

typedef struct acc {
    size_t n;
    double sum, max, min, mean, m2; /* us; Welford for the variance */
} acc;

/* Welford's update: one pass over a name's durations (in us, HTA's unit) with a numerically steady
 * variance, also for "others", which gathers the durations of many names. */
static void acc_add(acc *a, double x) {
    if (!a->n || x > a->max) a->max = x;
    if (!a->n || x < a->min) a->min = x;
    a->n++;
    a->sum += x;
    double d = x - a->mean;
    a->mean += d / (double)a->n;
    a->m2 += d * (x - a->mean);
}

static hta_status emit(hta_table *tb, int32_t rank, const char *name, const acc *a, hta_error *err) {
    long row = hta_table_add_row(tb);
    if (row < 0) return hta_oom(err);
    hta_table_set_int(tb, row, HTA_ANNOTATIONS_RANK, rank);
    if (hta_table_set_str(tb, row, HTA_ANNOTATIONS_NAME, name)) return hta_oom(err);
    hta_table_set_int(tb, row, HTA_ANNOTATIONS_COUNT, (int64_t)a->n);
    hta_table_set_float(tb, row, HTA_ANNOTATIONS_SUM, a->sum);
    hta_table_set_float(tb, row, HTA_ANNOTATIONS_MAX, a->max);
    hta_table_set_float(tb, row, HTA_ANNOTATIONS_MIN, a->min);
    /* HTA fills the NaN of a single value with 0 */
    hta_table_set_float(tb, row, HTA_ANNOTATIONS_STDDEV, a->n > 1 ? sqrt(a->m2 / (double)(a->n - 1)) : 0.0);
    hta_table_set_float(tb, row, HTA_ANNOTATIONS_MEAN, a->sum / (double)a->n);
    return HTA_OK;
}

/* HTA's allowlist patterns are literal substrings despite its docs (it escapes them, TF§9); an allowed
 * name is never folded. */
static int allowed(const hta_annotation_opts *o, const char *name) {
    for (size_t k = 0; k < o->nallow; k++)
        if (o->allowlist[k] && strstr(name, o->allowlist[k])) return 1;
    return 0;
}

static hta_status one_rank(hta_ctx *ctx, size_t ri, uint16_t cat, const hta_annotation_opts *o,
                           hta_table *tb, size_t *nfolded, hta_error *err) {
    const hta_trace *t = ctx->trace;
    const hta_rank *r = t->ranks[ri];
    const hta_view *v;
    hta_status st = hta_ctx_view(ctx, ri, &v, err);
    if (st) return st;
    /* scratch of this rank: released at `done`, whatever happened */
    hta_arena *A = &ctx->scratch;
    hta_arena_mark mark = hta_arena_save(A);
    item *it = HTA_ANEW(A, item, v->n);
    group *g = HTA_ANEW(A, group, v->n);
    double *cum = HTA_ANEW(A, double, v->n);
    if (!it || !g || !cum) {
        st = hta_oom(err);
        goto done;
    }
    size_t ni = 0, ng = 0;
    /* by category index: one integer compare per row, the name resolved once in hta_annotation_breakdown */
    for (size_t k = 0; k < v->n; k++)
        if (r->cat[v->row[k]] == cat) it[ni++] = (item){r->name[v->row[k]], v->dur[k]};
    qsort(it, ni, sizeof *it, cmp_item);
    for (size_t i = 0; i < ni;) {
        size_t j = i;
        int64_t s = 0;
        while (j < ni && it[j].name == it[i].name) s += it[j++].dur;
        g[ng++] = (group){hta_sym(t->sym, it[i].name), i, j - i, s, 0};
        i = j;
    }
    qsort(g, ng, sizeof *g, cmp_group_name);
    if (o->num_kernels >= 0 && ng > (size_t)o->num_kernels) {
        /* HTA's fold: by sum descending, names past the duration_ratio quantile
         * of the running sum or past position num_kernels become "others". */
        qsort(g, ng, sizeof *g, cmp_group_sum);
        double run = 0;
        /* running sum in us doubles, as pandas' cumsum; its quantile at duration_ratio interpolates
         * linearly (§0.2) */
        for (size_t k = 0; k < ng; k++) cum[k] = run += (double)g[k].sum / 1000.0;
        double q = hta_quantile_sorted(cum, ng, o->duration_ratio);
        for (size_t k = 0; k < ng; k++)
            if ((cum[k] > q || k >= (size_t)o->num_kernels) && !allowed(o, g[k].name)) {
                g[k].others = 1;
                (*nfolded)++;
            }
        qsort(g, ng, sizeof *g, cmp_group_name);
    }
    acc others = {0};
    int others_done = 0;
    for (size_t k = 0; k <= ng; k++) {
        /* "others" takes its place in name order (after upper-case names, before "void ..."), as pandas
         * sorts it */
        if (!others_done && others.n && (k == ng || strcmp(g[k].name, "others") > 0)) {
            HTA_TRY_GOTO(st, emit(tb, r->rank, "others", &others, err), done);
            others_done = 1;
        }
        if (k == ng) break;
        acc a = {0};
        for (size_t i = g[k].first; i < g[k].first + g[k].n; i++) acc_add(g[k].others ? &others : &a, (double)it[i].dur / 1000.0);
        if (!g[k].others) HTA_TRY_GOTO(st, emit(tb, r->rank, g[k].name, &a, err), done);
    }
done:
    hta_arena_reset(A, mark);
    return st;
}

hta_status hta_annotation_breakdown_part(hta_ctx *ctx, const hta_annotation_opts *o, hta_result *out,
                                         hta_error *err) {
    HTA_OPTS_OR_DEFAULT(hta_annotation_opts, o);
    const hta_trace *t = ctx->trace;
    const char *catname = o->use_cpu_annotation ? "user_annotation" : "gpu_user_annotation";
    hta_table *tb = hta_table_from_def(&HTA_ANNOTATIONS_TABLE), *part = hta_table_from_def(&HTA_ANNOTATIONS_PART_TABLE);
    long prow;
    if (!tb || !part || (prow = hta_table_add_row(part)) < 0) {
        hta_table_free(tb);
        hta_table_free(part);
        return hta_oom(err);
    }
    int64_t cat = -1;
    for (size_t k = 0; k < t->ncats; k++)
        if (!strcmp(hta_sym(t->sym, t->cats[k]), catname)) cat = (int64_t)k;
    size_t folded = 0;
    /* without the category there is nothing to break down: the reduce notes it when no rank has it */
    for (size_t k = 0; cat >= 0 && k < hta_ctx_nranks(ctx); k++) {
        hta_status st = one_rank(ctx, k, (uint16_t)cat, o, tb, &folded, err);
        hta_ctx_view_done(ctx, k);
        if (st) {
            hta_table_free(tb);
            hta_table_free(part);
            return st;
        }
    }
    hta_table_set_int(part, (size_t)prow, HTA_AP_HAS_CAT, cat >= 0);
    hta_table_set_int(part, (size_t)prow, HTA_AP_FOLDED, (int64_t)folded);
    return HTA_RESULT_ADD(out, &tb, &part) ? hta_oom(err) : HTA_OK;
}

hta_status hta_annotation_breakdown_reduce(const hta_annotation_opts *o, hta_result *parts, hta_result *out,
                                           hta_error *err) {
    HTA_OPTS_OR_DEFAULT(hta_annotation_opts, o);
    hta_table *part, *tb;
    HTA_TRY(hta_result_take(parts, &HTA_ANNOTATIONS_PART_TABLE, &part, err));
    int64_t has = hta_table_sum_int(part, HTA_AP_HAS_CAT), folded = hta_table_sum_int(part, HTA_AP_FOLDED);
    hta_table_free(part);
    HTA_TRY(hta_result_copy_notes(out, parts, err));
    const char *catname = o->use_cpu_annotation ? "user_annotation" : "gpu_user_annotation";
    /* HTA returns None when the category is not in its symbol table (§5.1), that is in no rank's: an empty
     * table and a note here. */
    if (!has)
        hta_result_note(out, "no '%s' events in the trace: nothing to break down%s", catname,
                        o->use_cpu_annotation ? "" : " (try --cpu for CPU-side user annotations)");
    else if (folded)
        hta_result_note(out,
                        "%lld annotation names folded into \"others\" (--top %d, --duration-ratio %g); every row "
                        "shows the statistics of its own annotation instances (HTA shows max = min = mean = "
                        "sum for them)",
                        (long long)folded, o->num_kernels, o->duration_ratio);
    HTA_TRY(hta_result_take(parts, &HTA_ANNOTATIONS_TABLE, &tb, err));
    return hta_result_add(out, tb) ? hta_oom(err) : HTA_OK;
}

HTA_ANALYSIS_WHOLE(annotation_breakdown, hta_annotation_opts)
