/* Hardware efficiency per operator (hta/efficiency.h, docs/efficiency.md): each GPU activity is given
 * to the operator that launched it, each operator and shape class gets the FLOPs and bytes of one call
 * from its recorded shapes, and the reduce puts the GPU time against the device's roof.
 *
 * Which operator: on the launch's call stack (the parent chain), the outermost cpu_op with a formula
 * (aten::linear over its aten::addmm, scaled_dot_product_attention over its flash kernels, the
 * convolution_backward under an autograd node), else the innermost cpu_op, which is listed with its time
 * and a note.  The outermost is memoised per row, so a rank costs one pass over its rows.
 *
 * Exact: FLOPs and bytes of a call are int64 (op_flops.c: an overflow refuses the figure with a note), the
 * reduce sums int64 calls and ns; figures are doubles only when a cell is written. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/breakdown_rows.h"
#include "analysis/op_flops.h"
#include "core/vec.h"
#include "hta/efficiency.h"

HTA_TABLE_DEFINE(HTA_OP_ROOFLINE);
HTA_TABLE_DEFINE(HTA_DEVICE_PEAK);

/* The part's own tables (hta/table.h, "reducing parts"). */
#define HTA_EFF_PART_OPS(T, C, D)                                                                         \
    T("efficiency_part_ops", "per rank, operator and shape class: calls, kernel ns, one call's figures")  \
    C(HTA_EPO_OP, "op", STR, "", "operator")                                                              \
    C(HTA_EPO_SHAPE, "shape", STR, "", "shape class as op_roofline shows it")                              \
    C(HTA_EPO_DTYPE, "dtype", STR, "", "dtypes as op_roofline shows them")                                 \
    C(HTA_EPO_PDT, "peak_dtype", INT, "", "hta_peak_dtype whose peak applies, -1 none")                    \
    C(HTA_EPO_VEC, "vector", INT, "", "1: its FLOPs run on the vector units, 0: the tensor cores")         \
    C(HTA_EPO_CALLS, "calls", INT, "", "calls with GPU work")                                              \
    C(HTA_EPO_NS, "gpu_ns", INT, "ns", "their GPU activities' time")                                       \
    C(HTA_EPO_FLOPS, "flops", INT, "", "FLOPs of one call, -1 none")                                       \
    C(HTA_EPO_BYTES, "bytes", INT, "", "bytes of one call, -1 none")                                       \
    C(HTA_EPO_NOTE, "note", STR, "", "why figures are missing")                                           \
    C(HTA_EPO_CALL_NS, "call_ns", STR, "", "each call's kernel ns, space-separated (the per-call statistics)") \
    C(HTA_EPO_CAT_NS, "cat_ns", STR, "", "kernel ns per hta_kernel_category, space-separated")
HTA_TABLE_LOCAL(HTA_EFF_PART_OPS);

#define HTA_EFF_PART_DEV(T, C, D)                                                                         \
    T("efficiency_part_device", "per rank: its GPU as deviceProperties gives it")                         \
    HTA_DEVICE_PROPS_COLS(C, HTA_EPD)
HTA_TABLE_LOCAL(HTA_EFF_PART_DEV);

void hta_efficiency_opts_default(hta_efficiency_opts *o) { memset(o, 0, sizeof *o); }

/* ---- one rank ---- */

/* A group: one operator name and its recorded args (symbol ids; NONE where absent). */
#define NONE UINT32_MAX
typedef struct gkey {
    uint32_t name, dims, types, conc, strides;
} gkey;

typedef struct group {
    gkey k;
    int64_t calls, ns;
    int64_t cat_ns[HTA_KC_OTHER + 1]; /* kernel ns per hta_kernel_category */
    int64_t math_ns[HTA_PDT_COUNT];   /* kernel ns per math dtype the kernels' names give (hta_kernel_math_dtype) */
    char *call_ns;                    /* each call's ns, as HTA_EPO_CALL_NS writes them */
    uint32_t id;                      /* the order it was made in: its calls' bucket */
} group;

/* One call (an operator row, or a kernel outside any): its group's id and its kernels' ns. */
typedef struct callrec {
    uint32_t gid;
    int64_t ns;
} callrec;

typedef struct gtab {
    group *g;
    size_t n, cap; /* cap: a power of 2, at most half full */
} gtab;

static uint64_t gkey_hash(const gkey *k) {
    uint64_t h = 1469598103934665603ull;
    const uint32_t *w = &k->name;
    for (int i = 0; i < 5; i++) h = (h ^ w[i]) * 1099511628211ull, h ^= h >> 29;
    return h;
}

static group *gtab_get(gtab *t, const gkey *k, hta_error *err) {
    if (2 * (t->n + 1) > t->cap) {
        size_t nc = t->cap ? 2 * t->cap : 256;
        group *ng = malloc(nc * sizeof *ng);
        if (!ng) return hta_oom(err), NULL;
        for (size_t i = 0; i < nc; i++) ng[i].k.name = NONE, ng[i].calls = -1;
        for (size_t i = 0; i < t->cap; i++) {
            if (t->g[i].calls < 0) continue;
            size_t j = gkey_hash(&t->g[i].k) & (nc - 1);
            while (ng[j].calls >= 0) j = (j + 1) & (nc - 1);
            ng[j] = t->g[i];
        }
        free(t->g);
        t->g = ng, t->cap = nc;
    }
    size_t j = gkey_hash(k) & (t->cap - 1);
    while (t->g[j].calls >= 0) {
        if (!memcmp(&t->g[j].k, k, sizeof *k)) return &t->g[j];
        j = (j + 1) & (t->cap - 1);
    }
    memset(&t->g[j], 0, sizeof t->g[j]);
    t->g[j].k = *k;
    t->g[j].id = (uint32_t)t->n++;
    return &t->g[j];
}

static uint32_t arg_sym(const hta_trace *t, const hta_rank *r, size_t row, hta_arg_key k) {
    if (t->arg_sym[k] < 0) return NONE;
    const hta_arg *a = hta_row_arg(r, row, t->arg_sym[k]);
    return a && (a->type == HTA_V_JSON || a->type == HTA_V_STR) ? a->v.sym : NONE;
}

/* The rank's GPU: the deviceProperties entry whose id is the device of its first GPU activity. */
static hta_status device_row(const hta_trace *t, const hta_rank *r, const bd_rows *b, hta_table *tb, hta_error *err) {
    long row = hta_table_add_row(tb);
    if (row < 0) return hta_oom(err);
    hta_table_set_int(tb, row, HTA_EPD_RANK, r->rank);
    int64_t want = b->n ? hta_row_arg_int(t, r, b->v->row[b->pos[0]], HTA_ARG_DEVICE, -1) : -1;
    hta_device_props p;
    char name[256];
    if (hta_rank_device_props(r, want, &p, name, sizeof name) && hta_table_set_str(tb, row, HTA_EPD_NAME, name))
        return hta_oom(err);
    int64_t vals[5] = {-1, p.cc_major, p.cc_minor, p.sms, p.mem_bytes};
    hta_table_set_int(tb, row, HTA_EPD_CCMAJ, vals[1]);
    hta_table_set_int(tb, row, HTA_EPD_CCMIN, vals[2]);
    hta_table_set_int(tb, row, HTA_EPD_SMS, vals[3]);
    hta_table_set_int(tb, row, HTA_EPD_MEM, vals[4]);
    return HTA_OK;
}

typedef struct rank_scan {
    const hta_trace *t;
    const hta_rank *r;
    int32_t *top;     /* per row: the outermost cpu_op with a formula at or above it, -1 none, -2 not yet */
    uint8_t *formula; /* per symbol: hta_op_formula + 1, 0 not yet */
    int8_t *farg;     /* per symbol: its argument position */
    const uint8_t *cpu_op; /* per category: HTA_CC_CPU_OP */
} rank_scan;

static int known(rank_scan *s, size_t row) {
    if (!s->cpu_op[s->r->cat[row]]) return 0;
    uint32_t nm = s->r->name[row];
    if (!s->formula[nm]) {
        int arg;
        hta_op_formula k = hta_op_formula_of(hta_sym(s->t->sym, nm), &arg);
        /* a pointwise operator's argument is its functional arity (the out= overload has one more) */
        if (k == HTA_OPF_ELTWISE) arg = op_eltwise_nargs(hta_sym(s->t->sym, nm));
        s->formula[nm] = (uint8_t)(k + 1);
        s->farg[nm] = (int8_t)arg;
    }
    return s->formula[nm] > 1;
}

/* The outermost cpu_op with a formula on row's parent chain (row included), memoised along the way. */
static int32_t top_known(rank_scan *s, int32_t row) {
    int32_t chain[256];
    int n = 0;
    int32_t x = row, above = -1;
    while (x != HTA_NO_ROW) {
        if (s->top[x] != -2) {
            above = s->top[x];
            break;
        }
        if (n == 256) { /* deeper than any real stack: resolve this part first */
            above = top_known(s, x);
            break;
        }
        chain[n++] = x;
        x = s->r->parent[x];
    }
    while (n--) {
        int32_t y = chain[n];
        if (above < 0 && known(s, (size_t)y)) above = y;
        s->top[y] = above;
    }
    return above;
}

static int32_t innermost_op(const rank_scan *s, int32_t row) {
    for (int32_t x = row; x != HTA_NO_ROW; x = s->r->parent[x])
        if (s->cpu_op[s->r->cat[x]]) return x;
    return -1;
}

static hta_status group_row(const rank_scan *s, const group *g, hta_table *tb, hta_error *err) {
    const hta_trace *t = s->t;
    op_fig f = {-1, -1, HTA_PDT_NONE, 0, "", NULL, "", ""};
    int math = HTA_PDT_NONE; /* the math dtype of the kernels with the most time, where their names say it */
    for (int d = 0; d < HTA_PDT_COUNT; d++)
        if (g->math_ns[d] > 0 && (math < 0 || g->math_ns[d] > g->math_ns[math])) math = d;
    const char *op = g->k.name == NONE ? "(no operator)" : hta_sym(t->sym, g->k.name);
    if (g->k.name == NONE) {
        f.note = "kernels launched outside any operator";
    } else if (s->formula[g->k.name] <= 1) {
        f.note = "no FLOP formula for this operator";
    } else if (g->k.dims == NONE) {
        f.note = "no shapes recorded (record_shapes)";
    } else {
#define TEXT(x) ((x) == NONE ? NULL : hta_sym(t->sym, (x)))
        op_flops((hta_op_formula)(s->formula[g->k.name] - 1), s->farg[g->k.name], TEXT(g->k.dims), TEXT(g->k.types),
                 TEXT(g->k.strides), TEXT(g->k.conc), &f);
#undef TEXT
        /* the roof is the units the kernel runs on: the tensors' dtype (fp32) says nothing of TF32 math, nor of
         * autocast's bf16 GEMM under an fp32 aten::linear */
        if (f.flops >= 0 && !f.vector && math != HTA_PDT_NONE) f.pdt = (hta_peak_dtype)math;
    }
    long row = hta_table_add_row(tb);
    if (row < 0 || hta_table_set_str(tb, row, HTA_EPO_OP, op) || hta_table_set_str(tb, row, HTA_EPO_SHAPE, f.shape) ||
        hta_table_set_str(tb, row, HTA_EPO_DTYPE, f.dtype) ||
        (f.note && hta_table_set_str(tb, row, HTA_EPO_NOTE, f.note)))
        return hta_oom(err);
    hta_table_set_int(tb, row, HTA_EPO_PDT, f.pdt);
    hta_table_set_int(tb, row, HTA_EPO_VEC, f.vector);
    hta_table_set_int(tb, row, HTA_EPO_CALLS, g->calls);
    hta_table_set_int(tb, row, HTA_EPO_NS, g->ns);
    hta_table_set_int(tb, row, HTA_EPO_FLOPS, f.flops);
    hta_table_set_int(tb, row, HTA_EPO_BYTES, f.bytes);
    char cb[(HTA_KC_OTHER + 1) * 21 + 1];
    size_t k = 0;
    for (int c = 0; c <= HTA_KC_OTHER; c++) k += (size_t)snprintf(cb + k, sizeof cb - k, "%s%" PRId64, c ? " " : "", g->cat_ns[c]);
    if (hta_table_set_str(tb, row, HTA_EPO_CAT_NS, cb) || hta_table_set_str(tb, row, HTA_EPO_CALL_NS, g->call_ns ? g->call_ns : ""))
        return hta_oom(err);
    return HTA_OK;
}

/* Each group's call_ns: its calls' ns ascending, as text (see rank_part). */
static hta_status calls_text(gtab *gt, const callrec *cv, size_t nc, hta_error *err) {
    size_t ng = gt->n;
    uint64_t *key = malloc((nc ? 2 * nc : 1) * sizeof *key);
    uint32_t *gid = malloc((nc ? 2 * nc : 1) * sizeof *gid);
    size_t *at = calloc(ng + 1, sizeof *at);
    group **gp = malloc((ng ? ng : 1) * sizeof *gp);
    int64_t *ns = malloc((nc ? nc : 1) * sizeof *ns);
    hta_status st = HTA_OK;
    if (!key || !gid || !at || !gp || !ns || nc > UINT32_MAX) {
        st = hta_oom(err);
        goto out;
    }
    for (size_t i = 0; i < gt->cap; i++)
        if (gt->g[i].calls >= 0) gp[gt->g[i].id] = &gt->g[i];
    for (size_t i = 0; i < nc; i++) key[i] = hta_rsort_key(cv[i].ns), gid[i] = cv[i].gid, at[cv[i].gid + 1]++;
    hta_rsort(key, gid, nc, key + nc, gid + nc);
    for (size_t g = 0; g < ng; g++) at[g + 1] += at[g];
    for (size_t i = 0; i < nc; i++) ns[at[gid[i]]++] = hta_rsort_unkey(key[i]); /* at[g]: group g's end */
    for (size_t g = 0, i = 0; g < ng; i = at[g++]) {
        size_t len = 21 * (at[g] - i), k = 0;
        char *txt = malloc(len + 1);
        if (!txt) {
            st = hta_oom(err);
            break;
        }
        txt[0] = 0;
        for (size_t x = i; x < at[g]; x++)
            k += (size_t)snprintf(txt + k, len + 1 - k, "%s%" PRId64, x > i ? " " : "", ns[x]);
        gp[g]->call_ns = txt;
    }
out:
    free(key), free(gid), free(at), free(gp), free(ns);
    return st;
}

static hta_status rank_part(hta_ctx *ctx, size_t ri, const uint8_t *cpu_op, hta_table *ops, hta_table *dev,
                            hta_error *err) {
    const hta_trace *t = ctx->trace;
    const hta_rank *r = t->ranks[ri];
    size_t nsym = hta_symtab_count(t->sym);
    rank_scan s = {t, r, malloc((r->n ? r->n : 1) * sizeof(int32_t)), calloc(nsym ? nsym : 1, 1),
                   calloc(nsym ? nsym : 1, 1), cpu_op};
    gtab gt = {0};
    bd_rows b = {0};
    hta_status st = HTA_OK;
    int32_t *call_of = malloc((r->n ? r->n : 1) * sizeof *call_of); /* per operator row: its call, -1 none */
    callrec *cv = NULL;
    size_t nc = 0, ccap = 0;
    uint8_t *kcat = calloc(nsym ? nsym : 1, 1); /* per kernel name: hta_kernel_category + 1, 0 not yet */
    int8_t *kmath = calloc(nsym ? nsym : 1, 1); /* per kernel name: hta_kernel_math_dtype + 2, 0 not yet */
    if (!s.top || !s.formula || !s.farg || !call_of || !kcat || !kmath) {
        st = hta_oom(err);
        goto out;
    }
    for (size_t i = 0; i < r->n; i++) s.top[i] = -2, call_of[i] = -1;
    if ((st = bd_rows_build(ctx, ri, HTA_GPU_ROWS_ACTIVITY, &b, err))) goto out;
    if ((st = device_row(t, r, &b, dev, err))) goto out;
    for (size_t j = 0; j < b.n; j++) {
        if (b.type[j] == HTA_KT_OTHER) continue;
        int32_t row = (int32_t)b.v->row[b.pos[j]], launch = r->partner[row];
        int32_t op = launch == HTA_NO_ROW ? -1 : top_known(&s, launch);
        if (op < 0 && launch != HTA_NO_ROW) op = innermost_op(&s, launch);
        gkey k = {NONE, NONE, NONE, NONE, NONE};
        if (op >= 0) {
            k.name = r->name[op];
            /* an operator without a formula is one row whatever its shapes */
            if (known(&s, (size_t)op)) {
                k.dims = arg_sym(t, r, (size_t)op, HTA_ARG_INPUT_DIMS);
                k.types = arg_sym(t, r, (size_t)op, HTA_ARG_INPUT_TYPE);
                k.strides = arg_sym(t, r, (size_t)op, HTA_ARG_INPUT_STRIDES);
                k.conc = arg_sym(t, r, (size_t)op, HTA_ARG_CONCRETE_INPUTS);
            }
        }
        group *g = gtab_get(&gt, &k, err);
        if (!g) {
            st = HTA_ENOMEM;
            goto out;
        }
        /* one call per operator row, however many kernels it launched and in whatever order they ran
         * (kernels outside any operator: each its own call) */
        if (op < 0 || call_of[op] < 0) {
            g->calls++;
            if (HTA_GROW(cv, ccap, nc + 1)) {
                st = hta_oom(err);
                goto out;
            }
            if (op >= 0) call_of[op] = (int32_t)nc;
            cv[nc++] = (callrec){g->id, 0};
        }
        cv[op >= 0 ? (size_t)call_of[op] : nc - 1].ns += b.dur[j];
        g->ns += b.dur[j];
        uint32_t kn = r->name[row];
        if (!kcat[kn]) kcat[kn] = (uint8_t)(hta_kernel_category_of(hta_sym(t->sym, kn)) + 1);
        g->cat_ns[kcat[kn] - 1] += b.dur[j];
        if (!kmath[kn]) kmath[kn] = (int8_t)(hta_kernel_math_dtype(hta_sym(t->sym, kn)) + 2);
        if (kmath[kn] >= 2) g->math_ns[kmath[kn] - 2] += b.dur[j];
    }
    /* each group's calls' ns as text, ascending: the reduce's per-call statistics.  The calls by ns (a stable
     * radix sort), then bucketed by group (a counting sort, stable): where a qsort by (group's key, ns) took
     * twice the rest of the rank's part. */
    if ((st = calls_text(&gt, cv, nc, err))) goto out;
    for (size_t i = 0; i < gt.cap && !st; i++)
        if (gt.g[i].calls >= 0) st = group_row(&s, &gt.g[i], ops, err);
out:
    bd_rows_free(&b);
    for (size_t i = 0; i < gt.cap; i++)
        if (gt.g[i].calls >= 0) free(gt.g[i].call_ns);
    free(s.top), free(s.formula), free(s.farg), free(gt.g), free(call_of), free(cv), free(kcat), free(kmath);
    return st;
}

hta_status hta_efficiency_part(hta_ctx *ctx, const hta_efficiency_opts *o, hta_result *out, hta_error *err) {
    const hta_trace *t = ctx->trace;
    hta_table *ops = hta_table_from_def(&HTA_EFF_PART_OPS_TABLE), *dev = hta_table_from_def(&HTA_EFF_PART_DEV_TABLE);
    uint8_t *cpu_op = calloc(t->ncats ? t->ncats : 1, 1);
    hta_status st = HTA_OK;
    if (!ops || !dev || !cpu_op) {
        st = hta_oom(err);
        goto out;
    }
    /* operators: cpu_op, and "Operator" of PyTorch <= 1.9's Kineto (legacy_schema traces record shapes too) */
    for (size_t c = 0; c < t->ncats; c++) {
        const char *cn = hta_sym(t->sym, t->cats[c]);
        cpu_op[c] = hta_cat_classify(cn) == HTA_CC_CPU_OP || !strcmp(cn, "Operator");
    }
    for (size_t i = 0; i < hta_ctx_nranks(ctx) && !st; i++) st = rank_part(ctx, i, cpu_op, ops, dev, err);
    if (!st && HTA_RESULT_ADD(out, &ops, &dev)) st = hta_oom(err);
out:
    free(cpu_op);
    hta_table_free(ops);
    hta_table_free(dev);
    return st;
}

/* ---- the parts folded as they come ---- */

/* The rest of a merge: the kernel ns per category summed (int64), the calls' ns put after acc's (the reduce
 * sorts them). */
static hta_status merge_ops(hta_table *acc, size_t ra, const hta_table *part, size_t rp, void *ctx, hta_error *err) {
    (void)ctx;
    const char *a = hta_table_get_str(acc, ra, HTA_EPO_CAT_NS), *b = hta_table_get_str(part, rp, HTA_EPO_CAT_NS);
    char cb[(HTA_KC_OTHER + 1) * 21 + 1];
    size_t k = 0;
    for (int c = 0; c <= HTA_KC_OTHER; c++) {
        char *e;
        int64_t x = a && *a ? strtoll(a, &e, 10) : 0;
        if (a && *a) a = e;
        int64_t y = b && *b ? strtoll(b, &e, 10) : 0;
        if (b && *b) b = e;
        k += (size_t)snprintf(cb + k, sizeof cb - k, "%s%" PRId64, c ? " " : "", x + y);
    }
    if (hta_table_set_str(acc, ra, HTA_EPO_CAT_NS, cb)) return hta_oom(err);
    const char *x = hta_table_get_str(acc, ra, HTA_EPO_CALL_NS), *y = hta_table_get_str(part, rp, HTA_EPO_CALL_NS);
    if (!y || !*y) return HTA_OK;
    if (!x || !*x) return hta_table_set_str(acc, ra, HTA_EPO_CALL_NS, y) ? hta_oom(err) : HTA_OK;
    size_t nx = strlen(x), ny = strlen(y);
    char *j = malloc(nx + ny + 2);
    if (!j) return hta_oom(err);
    memcpy(j, x, nx), j[nx] = ' ', memcpy(j + nx + 1, y, ny + 1);
    int rc = hta_table_set_str(acc, ra, HTA_EPO_CALL_NS, j);
    free(j);
    return rc ? hta_oom(err) : HTA_OK;
}

hta_status hta_efficiency_fold(hta_result *acc, hta_result *part, hta_error *err) {
    if (hta_result_find(part, HTA_EFF_PART_OPS_TABLE.name)) {
        /* taken out, checked against its declaration (parts that travelled come back without one) */
        hta_table *ops, *into = hta_result_find(acc, HTA_EFF_PART_OPS_TABLE.name);
        HTA_TRY(hta_result_take(part, &HTA_EFF_PART_OPS_TABLE, &ops, err));
        if (!into && (!(into = hta_table_from_def(&HTA_EFF_PART_OPS_TABLE)) || hta_result_add(acc, into))) {
            hta_table_free(into), hta_table_free(ops);
            return hta_oom(err);
        }
        /* cmp_key's columns: one row per key holds what the reduce would sum over the key's rows */
        static const int keys[] = {HTA_EPO_OP, HTA_EPO_SHAPE, HTA_EPO_DTYPE, HTA_EPO_NOTE,
                                   HTA_EPO_FLOPS, HTA_EPO_BYTES, HTA_EPO_PDT, HTA_EPO_VEC};
        static const int sums[] = {HTA_EPO_CALLS, HTA_EPO_NS};
        hta_status st = hta_table_fold_rows(into, ops, keys, 8, sums, 2, merge_ops, NULL, NULL, err);
        hta_table_free(ops);
        HTA_TRY(st);
    }
    return hta_result_append(acc, part, err);
}

/* ---- the reduce ---- */

/* The ranks' GPUs: the peak of each dtype and the bandwidth the figures use (0: none), the device table. */
typedef struct peaks {
    double tflops[HTA_PDT_COUNT], vflops[HTA_PDT_COUNT], tbps;
    const char *why; /* no percentages at all: why (static text), else NULL */
    char devname[256];
} peaks;

static hta_status device_table(const hta_efficiency_opts *o, const hta_table *dv, peaks *pk, hta_result *out,
                               hta_error *err) {
    hta_table *tb = hta_table_from_def(&HTA_DEVICE_PEAK_TABLE);
    if (!tb) return hta_oom(err);
    memset(pk, 0, sizeof *pk);
    const hta_device_peak *m = NULL;
    int mixed = 0, nranks = 0, noname = 1;
    for (size_t r = 0; r < dv->nrows; r++) {
        const char *nm = hta_table_get_str(dv, r, HTA_EPD_NAME);
        hta_device_props p = {nm, hta_table_get_int(dv, r, HTA_EPD_CCMAJ), hta_table_get_int(dv, r, HTA_EPD_CCMIN),
                              hta_table_get_int(dv, r, HTA_EPD_SMS), hta_table_get_int(dv, r, HTA_EPD_MEM)};
        const hta_device_peak *x = hta_device_peak_find(&p);
        if (nranks && x != m) mixed = 1;
        if (!nranks || (nm && *nm && !pk->devname[0])) snprintf(pk->devname, sizeof pk->devname, "%s", nm && *nm ? nm : "");
        if (nm) noname = 0;
        m = nranks ? m : x;
        nranks++;
    }
    if (!pk->devname[0]) snprintf(pk->devname, sizeof pk->devname, "%s", noname ? "(no deviceProperties)" : "(unnamed)");
    if (mixed) m = NULL;
    for (int d = 0; d < HTA_PDT_COUNT; d++) {
        pk->tflops[d] = o->peak_tflops > 0 ? o->peak_tflops : m ? m->tflops[d] : 0;
        pk->vflops[d] = o->peak_vector_tflops > 0 ? o->peak_vector_tflops : hta_device_vector_peak(m, (hta_peak_dtype)d);
    }
    pk->tbps = o->peak_tbps > 0 ? o->peak_tbps : m ? m->tbps : 0;
    if (mixed && !(o->peak_tflops > 0 && o->peak_tbps > 0))
        pk->why = "the ranks run on different GPUs: no percentages (give --peak-tflops and --peak-tbps)";
    else if (!m && !(o->peak_tflops > 0 && o->peak_tbps > 0))
        pk->why = "GPU not in the peak table: no percentages (give --peak-tflops and --peak-tbps)";
    const char *model = o->peak_tflops > 0 || o->peak_tbps > 0 ? (m ? m->model : "user") : m ? m->model : "unknown";
    char src[160];
    snprintf(src, sizeof src, "%s%s%s", m ? m->source : "",
             o->peak_tflops > 0 ? (m ? "; TFLOP/s from --peak-tflops" : "--peak-tflops") : "",
             o->peak_tbps > 0 ? (m || o->peak_tflops > 0 ? "; TB/s from --peak-tbps" : "--peak-tbps") : "");
    for (int d = 0; d < HTA_PDT_COUNT; d++) {
        if (m && !(pk->tflops[d] > 0) && !(o->peak_tflops > 0)) continue;
        if (!m && d != HTA_PDT_FP32 && !(o->peak_tflops > 0)) continue; /* unknown: one row says so */
        long row = hta_table_add_row(tb);
        if (row < 0 || hta_table_set_str(tb, row, HTA_DEV_NAME, pk->devname) ||
            hta_table_set_str(tb, row, HTA_DEV_MODEL, mixed ? "mixed" : model) ||
            hta_table_set_str(tb, row, HTA_DEV_DTYPE, hta_peak_dtype_name((hta_peak_dtype)d)) ||
            (src[0] && hta_table_set_str(tb, row, HTA_DEV_SOURCE, src)))
            goto oom;
        hta_table_set_int(tb, row, HTA_DEV_RANKS, nranks);
        hta_table_set_float(tb, row, HTA_DEV_TFLOPS, pk->tflops[d] > 0 ? pk->tflops[d] : NAN);
        hta_table_set_float(tb, row, HTA_DEV_VTFLOPS, pk->vflops[d] > 0 ? pk->vflops[d] : NAN);
        hta_table_set_float(tb, row, HTA_DEV_TBPS, pk->tbps > 0 ? pk->tbps : NAN);
        hta_table_set_float(tb, row, HTA_DEV_RIDGE, pk->tflops[d] > 0 && pk->tbps > 0 ? pk->tflops[d] / pk->tbps : NAN);
    }
    if (hta_result_add(out, tb)) return hta_oom(err);
    return HTA_OK;
oom:
    hta_table_free(tb);
    return hta_oom(err);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int str_eq_cmp(const char *a, const char *b) { return strcmp(a ? a : "", b ? b : ""); }

/* The merge key: op, shape, dtype, note, then the figures (equal text, equal figures, by construction). */
static int cmp_key(const hta_table *t, size_t a, size_t b, void *ctx) {
    (void)ctx;
    static const int cols[] = {HTA_EPO_OP, HTA_EPO_SHAPE, HTA_EPO_DTYPE, HTA_EPO_NOTE};
    for (size_t i = 0; i < 4; i++) {
        int c = str_eq_cmp(hta_table_get_str(t, a, cols[i]), hta_table_get_str(t, b, cols[i]));
        if (c) return c;
    }
    static const int icols[] = {HTA_EPO_FLOPS, HTA_EPO_BYTES, HTA_EPO_PDT, HTA_EPO_VEC};
    for (size_t i = 0; i < 4; i++) {
        int64_t x = hta_table_get_int(t, a, icols[i]), y = hta_table_get_int(t, b, icols[i]);
        if (x != y) return x < y ? -1 : 1;
    }
    return 0;
}

/* GPU time descending, then the key. */
static int cmp_time(const hta_table *t, size_t a, size_t b, void *ctx) {
    double x = hta_table_get_float(t, a, HTA_ROOF_GPU_US), y = hta_table_get_float(t, b, HTA_ROOF_GPU_US);
    if (x != y) return x > y ? -1 : 1;
    static const int cols[] = {HTA_ROOF_OP, HTA_ROOF_SHAPE, HTA_ROOF_DTYPE, HTA_ROOF_NOTE};
    for (size_t i = 0; i < 4; i++) {
        int c = str_eq_cmp(hta_table_get_str(t, a, cols[i]), hta_table_get_str(t, b, cols[i]));
        if (c) return c;
    }
    return 0;
}

/* Per-call statistics of one row: its calls' ns (all parts), their category. */
typedef struct callstats {
    double *ns; /* sorted ascending */
    size_t n;
    const char *category; /* NULL: no kernel */
} callstats;

/* The calls of part rows i .. j-1 (one op_roofline row) and their category. */
static hta_status call_stats(const hta_table *p, size_t i, size_t j, callstats *cs, hta_error *err) {
    size_t n = 0;
    int64_t cat[HTA_KC_OTHER + 1] = {0};
    for (size_t r = i; r < j; r++) {
        const char *s = hta_table_get_str(p, r, HTA_EPO_CALL_NS);
        for (; s && *s; s++) n += *s == ' ';
        n += hta_table_get_str(p, r, HTA_EPO_CALL_NS) && *hta_table_get_str(p, r, HTA_EPO_CALL_NS);
        const char *c = hta_table_get_str(p, r, HTA_EPO_CAT_NS);
        for (int k = 0; c && *c && k <= HTA_KC_OTHER; k++) {
            char *e;
            cat[k] += strtoll(c, &e, 10);
            c = e;
        }
    }
    free(cs->ns);
    cs->ns = malloc((n ? n : 1) * sizeof *cs->ns);
    cs->n = 0;
    if (!cs->ns) return hta_oom(err);
    for (size_t r = i; r < j; r++) {
        const char *s = hta_table_get_str(p, r, HTA_EPO_CALL_NS);
        while (s && *s && cs->n < n) {
            char *e;
            long long v = strtoll(s, &e, 10);
            if (e == s) break;
            cs->ns[cs->n++] = (double)v;
            s = e;
        }
    }
    qsort(cs->ns, cs->n, sizeof *cs->ns, cmp_double);
    int best = -1;
    for (int k = 0; k <= HTA_KC_OTHER; k++)
        if (cat[k] > 0 && (best < 0 || cat[k] > cat[best])) best = k;
    cs->category = best >= 0 ? hta_kernel_category_name((hta_kernel_category)best) : NULL;
    return HTA_OK;
}

/* median, min, max and sample std of v[0..n) (sorted); NAN where undefined */
static void four(const double *v, size_t n, double out[4]) {
    out[0] = n ? (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) : NAN;
    out[1] = n ? v[0] : NAN;
    out[2] = n ? v[n - 1] : NAN;
    double m = 0, ss = 0;
    for (size_t i = 0; i < n; i++) m += v[i];
    m = n ? m / (double)n : 0;
    for (size_t i = 0; i < n; i++) ss += (v[i] - m) * (v[i] - m);
    out[3] = n > 1 ? sqrt(ss / (double)(n - 1)) : NAN;
}

static hta_status roofline_row(const hta_table *p, size_t r, int64_t calls, int64_t ns, const peaks *pk,
                               const callstats *cs, hta_table *tb, hta_error *err) {
    int64_t fl = hta_table_get_int(p, r, HTA_EPO_FLOPS), by = hta_table_get_int(p, r, HTA_EPO_BYTES);
    int pdt = (int)hta_table_get_int(p, r, HTA_EPO_PDT), vec = (int)hta_table_get_int(p, r, HTA_EPO_VEC);
    const char *note = hta_table_get_str(p, r, HTA_EPO_NOTE);
    long row = hta_table_add_row(tb);
    if (row < 0) return hta_oom(err);
    static const int sc[] = {HTA_EPO_OP, HTA_EPO_SHAPE, HTA_EPO_DTYPE};
    static const int dc[] = {HTA_ROOF_OP, HTA_ROOF_SHAPE, HTA_ROOF_DTYPE};
    for (int i = 0; i < 3; i++)
        if (hta_table_set_str(tb, row, dc[i], hta_table_get_str(p, r, sc[i]))) return hta_oom(err);
    hta_table_set_int(tb, row, HTA_ROOF_CALLS, calls);
    if (cs->category && hta_table_set_str(tb, row, HTA_ROOF_CATEGORY, cs->category)) return hta_oom(err);
    /* per call: its time in us; its TFLOP/s, one call's FLOPs over that time (a call of 0 ns has none) */
    double st[4];
    for (size_t i = 0; i < cs->n; i++) cs->ns[i] /= 1e3;
    four(cs->ns, cs->n, st);
    static const int uc[4] = {HTA_ROOF_US_MEDIAN, HTA_ROOF_US_MIN, HTA_ROOF_US_MAX, HTA_ROOF_US_STD};
    static const int tc[4] = {HTA_ROOF_TF_MEDIAN, HTA_ROOF_TF_MIN, HTA_ROOF_TF_MAX, HTA_ROOF_TF_STD};
    for (int k = 0; k < 4; k++) hta_table_set_float(tb, row, uc[k], st[k]);
    size_t m = 0;
    double *tfs = fl >= 0 ? malloc((cs->n ? cs->n : 1) * sizeof *tfs) : NULL;
    if (fl >= 0 && !tfs) return hta_oom(err);
    if (tfs) /* ascending TFLOP/s: the calls from the longest to the shortest */
        for (size_t i = cs->n; i-- > 0;)
            if (cs->ns[i] > 0) tfs[m++] = (double)fl / (cs->ns[i] * 1e6);
    four(tfs, m, st);
    free(tfs);
    for (int k = 0; k < 4; k++) hta_table_set_float(tb, row, tc[k], st[k]);
    hta_table_set_float(tb, row, HTA_ROOF_GPU_US, hta_ns_to_us(ns));
    /* totals as doubles only here: one call's exact int64 figure times the exact count */
    double gf = fl >= 0 ? (double)fl * (double)calls / 1e9 : NAN, gb = by >= 0 ? (double)by * (double)calls / 1e9 : NAN;
    hta_table_set_float(tb, row, HTA_ROOF_GFLOPS, gf);
    hta_table_set_float(tb, row, HTA_ROOF_GBYTES, gb);
    double tf = ns > 0 && fl >= 0 ? gf * 1e9 / ((double)ns * 1e3) : NAN;
    double tbs = ns > 0 && by >= 0 ? gb * 1e9 / ((double)ns * 1e3) : NAN;
    hta_table_set_float(tb, row, HTA_ROOF_TFLOPS, tf);
    hta_table_set_float(tb, row, HTA_ROOF_TBPS, tbs);
    double in = fl >= 0 && by > 0 ? (double)fl / (double)by : NAN;
    hta_table_set_float(tb, row, HTA_ROOF_INTENSITY, in);
    const char *bound = NULL;
    /* the roof of the units the operator runs on: tensor cores for GEMMs, convolutions and attention,
     * the vector units for norms and softmax */
    const double *roofs = vec ? pk->vflops : pk->tflops;
    double pct = NAN, peak = pdt >= 0 && pdt < HTA_PDT_COUNT ? roofs[pdt] : 0;
    char why[160] = "", rf[32] = "";
    if (!note && !pk->why) {
        if (fl < 0 && by >= 0) { /* bytes only: memory-bound by definition */
            bound = "memory";
            snprintf(rf, sizeof rf, "memory");
            if (pk->tbps > 0) pct = 100.0 * tbs / pk->tbps;
        } else if (fl >= 0 && by > 0 && peak > 0 && pk->tbps > 0) {
            double ridge = peak / pk->tbps, roof = in >= ridge ? peak : in * pk->tbps;
            bound = in >= ridge ? "compute" : "memory";
            pct = 100.0 * tf / roof;
            snprintf(rf, sizeof rf, "%s %s", vec ? "vector" : "tensor", hta_peak_dtype_name((hta_peak_dtype)pdt));
        } else if (fl >= 0) {
            snprintf(why, sizeof why, "no %s%s peak for this GPU", vec ? "vector " : "",
                     hta_peak_dtype_name((hta_peak_dtype)pdt));
        }
    }
    /* over 100% of a roof is a wrong roof unless something explains it: said where it happens */
    if (!note && !why[0] && ns > 0 && pct > 100) {
        if (bound && !strcmp(bound, "memory"))
            snprintf(why, sizeof why, "above the memory roof: its bytes come from the cache (L2), not all from DRAM");
        else
            snprintf(why, sizeof why, "above the %s roof: its kernels run on faster units than their names and dtypes "
                                      "say (give --peak-tflops)", rf);
    }
    if (rf[0] && ns > 0 && hta_table_set_str(tb, row, HTA_ROOF_ROOF, rf)) return hta_oom(err);
    if (isnan(tf) && isnan(tbs) && !note && ns == 0) note = "no GPU time";
    hta_table_set_float(tb, row, HTA_ROOF_PEAK_PCT, ns > 0 ? pct : NAN);
    if ((bound && hta_table_set_str(tb, row, HTA_ROOF_BOUND, bound)) ||
        ((note || why[0]) && hta_table_set_str(tb, row, HTA_ROOF_NOTE, note ? note : why)))
        return hta_oom(err);
    return HTA_OK;
}

hta_status hta_efficiency_reduce(const hta_efficiency_opts *o, hta_result *parts, hta_result *out, hta_error *err) {
    HTA_OPTS_OR_DEFAULT(hta_efficiency_opts, o);
    hta_table *ops = NULL, *dv = NULL, *tb = NULL;
    peaks pk;
    hta_status st;
    if ((st = hta_result_take(parts, &HTA_EFF_PART_OPS_TABLE, &ops, err)) ||
        (st = hta_result_take(parts, &HTA_EFF_PART_DEV_TABLE, &dv, err)))
        goto out;
    if ((st = hta_result_copy_notes(out, parts, err))) goto out;
    tb = hta_table_from_def(&HTA_OP_ROOFLINE_TABLE);
    if (!tb) {
        st = hta_oom(err);
        goto out;
    }
    /* the device table is built first (the peaks), added after op_roofline */
    hta_result dres;
    hta_result_init(&dres);
    if ((st = device_table(o, dv, &pk, &dres, err))) {
        hta_result_free(&dres);
        goto out;
    }
    if ((st = hta_table_sort_rows(ops, cmp_key, NULL, err))) {
        hta_result_free(&dres);
        goto out;
    }
    callstats cs = {NULL, 0, NULL};
    for (size_t i = 0; i < ops->nrows && !st;) {
        size_t j = i;
        int64_t calls = 0, ns = 0;
        for (; j < ops->nrows && !cmp_key(ops, i, j, NULL); j++)
            calls += hta_table_get_int(ops, j, HTA_EPO_CALLS), ns += hta_table_get_int(ops, j, HTA_EPO_NS);
        st = call_stats(ops, i, j, &cs, err);
        if (!st) st = roofline_row(ops, i, calls, ns, &pk, &cs, tb, err);
        i = j;
    }
    free(cs.ns);
    if (!st) st = hta_table_sort_rows(tb, cmp_time, NULL, err);
    if (!st && pk.why && hta_result_note(out, "%s: %s", pk.devname, pk.why)) st = hta_oom(err);
    if (!st) {
        hta_table *x = tb;
        tb = NULL;
        if (hta_result_add(out, x)) st = hta_oom(err);
    }
    if (!st) st = hta_result_append(out, &dres, err);
    hta_result_free(&dres);
out:
    hta_table_free(ops);
    hta_table_free(dv);
    hta_table_free(tb);
    return st;
}

HTA_ANALYSIS_WHOLE(efficiency, hta_efficiency_opts)
