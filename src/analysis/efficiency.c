/* Hardware efficiency per operator (hta/efficiency.h, docs/efficiency.md): each GPU activity is given
 * to the operator that launched it, each operator and shape class gets the FLOPs and bytes of one call
 * from its recorded shapes, and the reduce puts the GPU time against the device's roof.
 *
 * Which operator: on the launch's call stack (the parent chain), the outermost cpu_op with a formula
 * (aten::linear over its aten::addmm, scaled_dot_product_attention over its flash kernels, the
 * convolution_backward under an autograd node), else the innermost cpu_op, which is listed with its time
 * and a note.  The outermost is memoised per row, so a rank costs one pass over its rows.
 *
 * Exact: FLOPs and bytes of a call are int64 (overflow refuses the figure with a note), the reduce sums
 * int64 calls and ns; figures are doubles only when a cell is written. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/breakdown_rows.h"
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
    C(HTA_EPO_CALLS, "calls", INT, "", "calls with GPU work")                                              \
    C(HTA_EPO_NS, "gpu_ns", INT, "ns", "their GPU activities' time")                                       \
    C(HTA_EPO_FLOPS, "flops", INT, "", "FLOPs of one call, -1 none")                                       \
    C(HTA_EPO_BYTES, "bytes", INT, "", "bytes of one call, -1 none")                                       \
    C(HTA_EPO_NOTE, "note", STR, "", "why figures are missing")
HTA_TABLE_DECLARE(HTA_EFF_PART_OPS)
HTA_TABLE_DEFINE(HTA_EFF_PART_OPS);

#define HTA_EFF_PART_DEV(T, C, D)                                                                         \
    T("efficiency_part_device", "per rank: its GPU as deviceProperties gives it")                         \
    C(HTA_EPD_RANK, "rank", INT, "", "rank")                                                              \
    C(HTA_EPD_NAME, "name", STR, "", "device name, null without deviceProperties")                        \
    C(HTA_EPD_CCMAJ, "cc_major", INT, "", "computeMajor, -1")                                             \
    C(HTA_EPD_CCMIN, "cc_minor", INT, "", "computeMinor, -1")                                             \
    C(HTA_EPD_SMS, "sms", INT, "", "numSms, -1")                                                          \
    C(HTA_EPD_MEM, "mem_bytes", INT, "", "totalGlobalMem, -1")
HTA_TABLE_DECLARE(HTA_EFF_PART_DEV)
HTA_TABLE_DEFINE(HTA_EFF_PART_DEV);

void hta_efficiency_opts_default(hta_efficiency_opts *o) { memset(o, 0, sizeof *o); }

/* ---- the recorded arguments of one call ---- */

#define MAXARGS 40
#define MAXD 8

typedef struct targ {
    int nd;            /* dims; -1: not a plain dim list (a TensorList's nested lists, or absent) */
    int64_t d[MAXD];
    int nst;           /* strides recorded, -1 none */
    int64_t st[MAXD];
    const char *type;  /* Input type, "" when absent */
    size_t type_len;
    const char *conc;  /* Concrete Inputs text, NULL when absent */
    size_t conc_len;
} targ;

typedef struct call {
    int n;        /* args */
    int have_conc;
    targ a[MAXARGS];
} call;

static const char *skip_ws(const char *p) {
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') p++;
    return p;
}

/* Parses a JSON array of dim lists ("[[1, 5185, 1024], [], [[2], [3]]]") into dims (which = 0) or
 * strides (which = 1).  A nested list or a number list longer than MAXD is nd = -1. */
static int parse_dims(const char *p, call *c, int which) {
    p = skip_ws(p);
    if (*p != '[') return -1;
    p++;
    int k = 0;
    for (;;) {
        p = skip_ws(p);
        if (*p == ']') break;
        if (k >= MAXARGS) return -1;
        targ *t = &c->a[k];
        int *nd = which ? &t->nst : &t->nd;
        int64_t *v = which ? t->st : t->d;
        if (*p != '[') { /* a bare value where a list belongs: not ours */
            *nd = -1;
            while (*p && *p != ',' && *p != ']') p++;
        } else {
            p++;
            int n = 0, ok = 1, depth = 1;
            while (*p && depth) {
                p = skip_ws(p);
                if (*p == '[') depth++, ok = 0, p++;
                else if (*p == ']') depth--, p++;
                else if (*p == ',') p++;
                else if (*p == '-' || (*p >= '0' && *p <= '9')) {
                    char *e;
                    long long x = strtoll(p, &e, 10);
                    if (e == p) return -1;
                    if (depth == 1 && n < MAXD) v[n] = x;
                    if (depth == 1) n++;
                    p = e;
                    while (*p && *p != ',' && *p != ']' && *p != '[') p++; /* a fraction or exponent */
                } else return -1;
            }
            *nd = ok && n <= MAXD ? n : -1;
        }
        k++;
        if (k > c->n) c->n = k;
        p = skip_ws(p);
        if (*p == ',') p++;
        else if (*p != ']') return -1;
    }
    return 0;
}

/* Parses a JSON array of strings into the args' type (which = 0) or concrete text (which = 1), as
 * spans of the interned text (no escapes in what Kineto writes there; one with escapes keeps them). */
static int parse_strs(const char *p, call *c, int which) {
    p = skip_ws(p);
    if (*p != '[') return -1;
    p++;
    int k = 0;
    for (;;) {
        p = skip_ws(p);
        if (*p == ']') break;
        if (k >= MAXARGS || *p != '"') return -1;
        const char *s = ++p;
        while (*p && *p != '"') p += *p == '\\' && p[1] ? 2 : 1;
        if (!*p) return -1;
        if (which) c->a[k].conc = s, c->a[k].conc_len = (size_t)(p - s);
        else c->a[k].type = s, c->a[k].type_len = (size_t)(p - s);
        p++;
        k++;
        if (k > c->n) c->n = k;
        p = skip_ws(p);
        if (*p == ',') p++;
        else if (*p != ']') return -1;
    }
    return 0;
}

/* ---- dtypes ---- */

typedef struct dtinfo {
    const char *name; /* as Input type writes it */
    int size;         /* bytes per element */
    hta_peak_dtype pdt;
    const char *shrt; /* as op_roofline shows it */
} dtinfo;

static const dtinfo DTYPES[] = {
    {"float", 4, HTA_PDT_FP32, "fp32"},
    {"double", 8, HTA_PDT_FP64, "fp64"},
    {"c10::Half", 2, HTA_PDT_FP16, "fp16"},
    {"c10::BFloat16", 2, HTA_PDT_BF16, "bf16"},
    {"c10::Float8_e4m3fn", 1, HTA_PDT_FP8, "fp8e4m3"},
    {"c10::Float8_e4m3fnuz", 1, HTA_PDT_FP8, "fp8e4m3"},
    {"c10::Float8_e5m2", 1, HTA_PDT_FP8, "fp8e5m2"},
    {"c10::Float8_e5m2fnuz", 1, HTA_PDT_FP8, "fp8e5m2"},
    {"c10::Float8_e8m0fnu", 1, HTA_PDT_FP8, "fp8e8m0"},
    {"c10::Float4_e2m1fn_x2", 1, HTA_PDT_FP4, "fp4x2"},
    {"signed char", 1, HTA_PDT_INT8, "i8"},
    {"unsigned char", 1, HTA_PDT_INT8, "u8"},
    {"short int", 2, HTA_PDT_NONE, "i16"},
    {"int", 4, HTA_PDT_NONE, "i32"},
    {"long int", 8, HTA_PDT_NONE, "i64"},
    {"bool", 1, HTA_PDT_NONE, "bool"},
    {"c10::complex<float>", 8, HTA_PDT_NONE, "c64"},
    {"c10::complex<double>", 16, HTA_PDT_NONE, "c128"},
    {"c10::complex<c10::Half>", 4, HTA_PDT_NONE, "c32"},
};

static const dtinfo *dtype_of(const targ *t) {
    if (!t->type) return NULL;
    for (size_t i = 0; i < sizeof DTYPES / sizeof *DTYPES; i++)
        if (strlen(DTYPES[i].name) == t->type_len && !memcmp(DTYPES[i].name, t->type, t->type_len)) return &DTYPES[i];
    return NULL;
}

/* c10::ScalarType codes, as Concrete Inputs writes an out_dtype or dtype argument. */
static const dtinfo *dtype_of_code(const targ *t) {
    if (!t->conc || !t->conc_len) return NULL;
    static const struct { int code; const char *name; } codes[] = {
        {5, "c10::Half"}, {6, "float"}, {7, "double"}, {15, "c10::BFloat16"},
        {23, "c10::Float8_e5m2"}, {24, "c10::Float8_e4m3fn"}, {25, "c10::Float8_e5m2fnuz"},
        {26, "c10::Float8_e4m3fnuz"}};
    int v = atoi(t->conc);
    for (size_t i = 0; i < sizeof codes / sizeof *codes; i++)
        if (codes[i].code == v)
            for (size_t j = 0; j < sizeof DTYPES / sizeof *DTYPES; j++)
                if (!strcmp(DTYPES[j].name, codes[i].name)) return &DTYPES[j];
    return NULL;
}

/* ---- exact integer arithmetic: any overflow makes the figure unknown ---- */

typedef struct acc {
    int over;
} acc;

static int64_t mul(acc *a, int64_t x, int64_t y) {
    int64_t r;
    if (x < 0 || y < 0 || __builtin_mul_overflow(x, y, &r)) return a->over = 1, 0;
    return r;
}
static int64_t add(acc *a, int64_t x, int64_t y) {
    int64_t r;
    if (__builtin_add_overflow(x, y, &r)) return a->over = 1, 0;
    return r;
}

static int is_tensor(const call *c, int i) { return i < c->n && c->a[i].nd >= 0 && dtype_of(&c->a[i]); }

static int64_t numel(acc *a, const targ *t) {
    int64_t n = 1;
    for (int i = 0; i < t->nd; i++) n = mul(a, n, t->d[i]);
    return n;
}

/* Bytes a kernel moves for tensor t: its elements, a dimension of stride 0 (an expanded, broadcast
 * tensor) counted once, times the element size. */
static int64_t tbytes(acc *a, const targ *t) {
    const dtinfo *d = dtype_of(t);
    if (!d || t->nd < 0) return 0;
    int64_t n = 1;
    for (int i = 0; i < t->nd; i++)
        if (!(t->nst == t->nd && t->st[i] == 0)) n = mul(a, n, t->d[i]);
    return mul(a, n, d->size);
}

/* All tensor inputs' bytes. */
static int64_t in_bytes(acc *a, const call *c) {
    int64_t s = 0;
    for (int i = 0; i < c->n; i++)
        if (is_tensor(c, i)) s = add(a, s, tbytes(a, &c->a[i]));
    return s;
}

/* Concrete value of arg i as text (NUL-terminated copy into buf), or NULL when not recorded. */
static const char *conc(const call *c, int i, char *buf, size_t cap) {
    if (!c->have_conc || i >= c->n || !c->a[i].conc) return NULL;
    size_t l = c->a[i].conc_len < cap - 1 ? c->a[i].conc_len : cap - 1;
    memcpy(buf, c->a[i].conc, l);
    buf[l] = 0;
    return buf;
}

/* "[1, 1]" or "2" -> n values (one value repeated to n); 0 on success. */
static int int_list(const char *s, int64_t *v, int n) {
    if (!s || !*s) return -1;
    const char *p = skip_ws(s);
    int k = 0;
    if (*p == '[') p++;
    while (*p && *p != ']') {
        p = skip_ws(p);
        char *e;
        long long x = strtoll(p, &e, 10);
        if (e == p) return -1;
        if (k < MAXD) v[k] = x;
        k++;
        p = skip_ws(e);
        if (*p == ',') p++;
    }
    if (k == 1)
        for (int i = 1; i < n; i++) v[i] = v[0];
    else if (k != n) return -1;
    return 0;
}

/* ---- the formulas ---- */

/* Appends to the text in buf (cap bytes), cut where it does not fit. */
static void append(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t cap, const char *fmt, ...) {
    size_t l = strlen(buf);
    if (l + 1 >= cap) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + l, cap - l, fmt, ap);
    va_end(ap);
}

typedef struct fig {
    int64_t flops, bytes; /* -1: none */
    hta_peak_dtype pdt;
    char extra[96];       /* arguments the formula read, appended to the shape */
    const char *note;     /* why no figure (static text) */
} fig;

static void fail(fig *f, const char *why) {
    f->flops = f->bytes = -1;
    f->note = why;
}

static hta_peak_dtype pdt_of(const call *c, int i) {
    const dtinfo *d = i < c->n ? dtype_of(&c->a[i]) : NULL;
    return d ? d->pdt : HTA_PDT_NONE;
}

static int esz(const call *c, int i) {
    const dtinfo *d = i < c->n ? dtype_of(&c->a[i]) : NULL;
    return d ? d->size : 0;
}

/* GEMM-like: batch x (M x K) @ (K x N), plus M x N bias adds when there is a bias. */
static void gemm(fig *f, const call *c, int ia, int ib, int ibias, int batched) {
    acc A = {0};
    const targ *a = &c->a[ia], *b = &c->a[ib];
    if (!is_tensor(c, ia) || !is_tensor(c, ib)) return fail(f, "operands not recorded as tensors");
    int64_t B = 1, M, K, N;
    if (batched == 2) { /* matmul: 1-D operands promoted, batch dims broadcast */
        int na = a->nd, nb = b->nd;
        if (na < 1 || nb < 1) return fail(f, "matmul of a 0-dim tensor");
        M = na >= 2 ? a->d[na - 2] : 1;
        K = a->d[na - 1];
        N = nb >= 2 ? b->d[nb - 1] : 1;
        int64_t kb = nb >= 2 ? b->d[nb - 2] : b->d[0];
        if (kb != K) return fail(f, "operand shapes do not match");
        int ba = na > 2 ? na - 2 : 0, bb = nb > 2 ? nb - 2 : 0, nbat = ba > bb ? ba : bb;
        for (int i = 0; i < nbat; i++) {
            int64_t x = i < nbat - ba ? 1 : a->d[i - (nbat - ba)], y = i < nbat - bb ? 1 : b->d[i - (nbat - bb)];
            if (x != y && x != 1 && y != 1) return fail(f, "batch dims do not broadcast");
            B = mul(&A, B, x > y ? x : y);
        }
    } else if (batched == 1) {
        if (a->nd != 3 || b->nd != 3) return fail(f, "bmm operands are not 3-D");
        B = a->d[0], M = a->d[1], K = a->d[2], N = b->d[2];
        if (b->d[1] != K || b->d[0] != B) return fail(f, "operand shapes do not match");
    } else if (batched == 3) { /* linear: x[..., K] @ w[N, K]^T */
        if (a->nd < 1 || b->nd != 2) return fail(f, "linear weight is not 2-D");
        M = 1;
        for (int i = 0; i + 1 < a->nd; i++) M = mul(&A, M, a->d[i]);
        K = a->d[a->nd - 1], N = b->d[0];
        if (b->d[1] != K) return fail(f, "operand shapes do not match");
    } else {
        if (a->nd != 2 || b->nd != 2) return fail(f, "mm operands are not 2-D");
        M = a->d[0], K = a->d[1], N = b->d[1];
        if (b->d[0] != K) return fail(f, "operand shapes do not match");
    }
    /* fp4 packs two values into each recorded element, along K */
    const dtinfo *da = dtype_of(a);
    if (da && da->pdt == HTA_PDT_FP4) K = mul(&A, K, 2);
    int64_t out = mul(&A, B, mul(&A, M, N));
    int64_t flops = mul(&A, 2, mul(&A, out, K));
    if (ibias >= 0 && is_tensor(c, ibias)) flops = add(&A, flops, out);
    f->flops = flops;
    f->bytes = add(&A, in_bytes(&A, c), mul(&A, out, esz(c, ia)));
    f->pdt = pdt_of(c, ia);
    if (A.over) fail(f, "figures overflow int64");
}

/* aten::_scaled_mm: as mm, with the output in out_dtype (Concrete Inputs, position 6) when given. */
static void scaled_mm(fig *f, const call *c) {
    gemm(f, c, 0, 1, 4, 0);
    if (f->flops < 0) return;
    acc A = {0};
    const dtinfo *o = c->n > 6 ? dtype_of_code(&c->a[6]) : NULL;
    if (o) {
        int64_t out = mul(&A, c->a[0].d[0], c->a[1].d[1]);
        f->bytes = add(&A, in_bytes(&A, c), mul(&A, out, o->size));
        snprintf(f->extra, sizeof f->extra, "out %s", o->shrt);
    }
    if (A.over) fail(f, "figures overflow int64");
}

/* Convolutions.  in/wt/bias: positions; par: positions of stride, padding, dilation, groups,
 * transposed (-1: not transposed), output_padding; gout >= 0: a backward, whose grad_output gives the
 * output dims and mask (output_mask's position) which gradients it computes. */
static void conv(fig *f, const call *c, int in, int wt, int bias, int ps, int pp, int pd, int pg, int ptr, int pop,
                 int gout, int pmask) {
    acc A = {0};
    char buf[128];
    if (!is_tensor(c, in) || !is_tensor(c, wt)) return fail(f, "input or weight not recorded as tensors");
    const targ *x = &c->a[in], *w = &c->a[wt];
    int ns = w->nd - 2;
    if (ns < 1 || ns > 3) return fail(f, "weight is not 3-D to 5-D");
    int batched = x->nd == w->nd;
    if (!batched && x->nd != w->nd - 1) return fail(f, "input and weight ranks do not match");
    int64_t N = batched ? x->d[0] : 1, Cin = x->d[batched], s[MAXD], p[MAXD], d[MAXD], op[MAXD] = {0}, g = 1;
    const int64_t *isp = x->d + batched + 1, *ksp = w->d + 2;
    int tr = 0;
    if (ptr >= 0) {
        const char *t = conc(c, ptr, buf, sizeof buf);
        if (!t) return fail(f, "convolution arguments not recorded (Concrete Inputs)");
        tr = !strcmp(t, "True") || !strcmp(t, "1");
    }
    const char *gs = conc(c, pg, buf, sizeof buf);
    if (!gs || !*gs) return fail(f, "convolution arguments not recorded (Concrete Inputs)");
    g = atoll(gs);
    if (g < 1) return fail(f, "groups < 1");
    if (int_list(conc(c, ps, buf, sizeof buf), s, ns) || int_list(conc(c, pd, buf, sizeof buf), d, ns))
        return fail(f, "convolution arguments not recorded (Concrete Inputs)");
    const char *pt = conc(c, pp, buf, sizeof buf);
    int same = pt && strstr(pt, "same"), valid = pt && strstr(pt, "valid");
    if (valid || same) memset(p, 0, sizeof p);
    else if (int_list(pt, p, ns)) return fail(f, "convolution arguments not recorded (Concrete Inputs)");
    if (tr && pop >= 0 && int_list(conc(c, pop, buf, sizeof buf), op, ns)) memset(op, 0, sizeof op);
    int64_t osp[MAXD], Cout;
    if (gout >= 0) {
        if (!is_tensor(c, gout) || c->a[gout].nd != x->nd) return fail(f, "grad_output not recorded");
        for (int i = 0; i < ns; i++) osp[i] = c->a[gout].d[batched + 1 + i];
        Cout = c->a[gout].d[batched];
    } else {
        Cout = tr ? mul(&A, w->d[1], g) : w->d[0];
        for (int i = 0; i < ns; i++) {
            if (same) osp[i] = isp[i];
            else if (tr) osp[i] = (isp[i] - 1) * s[i] - 2 * p[i] + d[i] * (ksp[i] - 1) + op[i] + 1;
            else osp[i] = s[i] > 0 ? (isp[i] + 2 * p[i] - d[i] * (ksp[i] - 1) - 1) / s[i] + 1 : -1;
            if (osp[i] < 1) return fail(f, "convolution output would be empty");
        }
    }
    /* multiply-adds: each output (non-transposed) or each input (transposed) element meets a kernel window
     * of its group's channels, weight dim 1 */
    int64_t win = w->d[1], outn = mul(&A, N, Cout), inn = mul(&A, N, Cin);
    for (int i = 0; i < ns; i++) win = mul(&A, win, ksp[i]), outn = mul(&A, outn, osp[i]), inn = mul(&A, inn, isp[i]);
    int64_t macs = mul(&A, tr ? inn : outn, win);
    int64_t flops, bytes = in_bytes(&A, c);
    if (gout >= 0) {
        const char *m = conc(c, pmask, buf, sizeof buf);
        if (!m || !*m) return fail(f, "output_mask not recorded (Concrete Inputs)");
        int k0 = 0, k1 = 0, k2 = 0, k = 0;
        for (const char *q = m; *q; q++)
            if (*q == 'T' || *q == 'F') {
                int v = *q == 'T';
                if (k == 0) k0 = v;
                else if (k == 1) k1 = v;
                else if (k == 2) k2 = v;
                k++;
                while (*q && *q != ',' && *q != ']') q++;
                if (!*q) break;
            }
        flops = mul(&A, 2, mul(&A, macs, k0 + k1));
        if (k2) flops = add(&A, flops, outn);
        if (k0) bytes = add(&A, bytes, tbytes(&A, x));
        if (k1) bytes = add(&A, bytes, tbytes(&A, w));
        if (k2) bytes = add(&A, bytes, mul(&A, Cout, esz(c, in)));
        snprintf(f->extra, sizeof f->extra, "grads %s%s%s", k0 ? "i" : "", k1 ? "w" : "", k2 ? "b" : "");
    } else {
        flops = mul(&A, 2, macs);
        if (bias >= 0 && is_tensor(c, bias)) flops = add(&A, flops, outn);
        bytes = add(&A, bytes, mul(&A, outn, esz(c, in)));
        snprintf(f->extra, sizeof f->extra, "stride %" PRId64 " pad %" PRId64 "%s", s[0], p[0], same ? "(same)" : "");
        if (d[0] != 1) append(f->extra, sizeof f->extra, " dil %" PRId64, d[0]);
        if (tr) append(f->extra, sizeof f->extra, " transposed");
    }
    if (g != 1) append(f->extra, sizeof f->extra, " groups %" PRId64, g);
    f->flops = flops, f->bytes = bytes, f->pdt = pdt_of(c, in);
    if (A.over) fail(f, "figures overflow int64");
}

/* Attention.  q/k/v: positions; bshd: the [B, S, H, D] layout of the flash kernels (else [B, H, S, D]);
 * cpos: the causal flag's position (negative: -p-1, a mask type, causal when not 0); bwd: a backward,
 * whose five GEMMs (S = QK^T recomputed, dV, dP, dQ, dK) are 2.5 times the forward's two. */
static void attention(fig *f, const call *c, int iq, int ik, int iv, int bshd, int cpos, int bwd) {
    acc A = {0};
    char buf[64];
    if (!is_tensor(c, iq) || !is_tensor(c, ik) || !is_tensor(c, iv)) return fail(f, "q, k, v not recorded as tensors");
    const targ *q = &c->a[iq], *k = &c->a[ik], *v = &c->a[iv];
    if (q->nd < 3 || k->nd != q->nd || v->nd != q->nd)
        return fail(f, bshd && q->nd == 3 ? "variable-length batch: sequence lengths not recorded"
                                          : "q, k, v are not 3-D or 4-D");
    int n = q->nd;
    int64_t BH = 1, Sq, Sk, D = q->d[n - 1], Dv = v->d[n - 1];
    if (bshd) { /* [B, S, H, D] */
        if (n != 4) return fail(f, "q, k, v are not 4-D");
        BH = mul(&A, q->d[0], q->d[2]), Sq = q->d[1], Sk = k->d[1];
    } else {
        for (int i = 0; i + 2 < n; i++) BH = mul(&A, BH, q->d[i]);
        Sq = q->d[n - 2], Sk = k->d[n - 2];
    }
    const char *cs = conc(c, cpos >= 0 ? cpos : -cpos - 1, buf, sizeof buf);
    if (!cs || !*cs) return fail(f, "is_causal not recorded (Concrete Inputs)");
    int causal = cpos >= 0 ? !strcmp(cs, "True") : atoi(cs) != 0;
    int64_t sqk = mul(&A, BH, mul(&A, Sq, Sk));
    /* forward: QK^T (D) and PV (Dv); backward: QK^T again, dV and dP (Dv), dQ and dK (D) */
    int64_t flops = mul(&A, 2, mul(&A, sqk, bwd ? add(&A, mul(&A, 3, D), mul(&A, 2, Dv)) : add(&A, D, Dv)));
    if (causal) flops /= 2; /* half the score matrix is masked: the usual halving */
    int64_t bytes = in_bytes(&A, c);
    if (bwd) bytes = add(&A, bytes, add(&A, tbytes(&A, q), add(&A, tbytes(&A, k), tbytes(&A, v))));
    else bytes = add(&A, bytes, mul(&A, mul(&A, BH, mul(&A, Sq, Dv)), esz(c, iq)));
    f->flops = flops, f->bytes = bytes, f->pdt = pdt_of(c, iq);
    if (causal) snprintf(f->extra, sizeof f->extra, "causal");
    if (A.over) fail(f, "figures overflow int64");
}

/* Normalisations and softmax: per element `per` FLOPs (fvcore's count for norms: 5 with an affine
 * weight, 4 without; RMS: 4 and 3; softmax: max, subtract, exp, sum, divide), the input read with the
 * other tensors, an output like the input written. */
static void norm(fig *f, const call *c, int wpos, int per_affine, int per_plain, int out_size) {
    acc A = {0};
    if (!is_tensor(c, 0)) return fail(f, "input not recorded as a tensor");
    int affine = wpos > 0 && is_tensor(c, wpos) && c->a[wpos].nd > 0;
    int64_t n = numel(&A, &c->a[0]);
    f->flops = mul(&A, n, affine ? per_affine : per_plain);
    f->bytes = add(&A, in_bytes(&A, c), mul(&A, n, out_size ? out_size : esz(c, 0)));
    f->pdt = pdt_of(c, 0);
    if (A.over) fail(f, "figures overflow int64");
}

/* Pointwise: bytes only.  Out of place: the broadcast output, in the widest input dtype, written;
 * in place: the first tensor written. */
static void eltwise(fig *f, const call *c, int inplace) {
    acc A = {0};
    int64_t od[MAXD] = {0};
    int ond = 0, osz = 0, first = -1;
    for (int i = 0; i < c->n; i++) {
        if (!is_tensor(c, i)) continue;
        if (first < 0) first = i;
        const targ *t = &c->a[i];
        /* a 0-dim tensor (a wrapped Python number) does not promote the output's dtype */
        if (t->nd > 0 && esz(c, i) > osz) osz = esz(c, i);
        /* right-aligned broadcast */
        if (t->nd > ond) {
            memmove(od + (t->nd - ond), od, (size_t)ond * sizeof *od);
            for (int j = 0; j < t->nd - ond; j++) od[j] = 1;
            ond = t->nd;
        }
        for (int j = 0; j < t->nd; j++) {
            int64_t *o = &od[ond - t->nd + j];
            if (t->d[j] != 1) *o = t->d[j];
        }
    }
    if (first < 0) return fail(f, "no tensor input recorded");
    if (!osz) osz = esz(c, first);
    int64_t out = 1;
    for (int j = 0; j < ond; j++) out = mul(&A, out, od[j]);
    f->flops = -1;
    f->bytes = add(&A, in_bytes(&A, c), inplace ? tbytes(&A, &c->a[first]) : mul(&A, out, osz));
    f->pdt = pdt_of(c, first);
    if (A.over) fail(f, "figures overflow int64");
}

/* Reductions: the input read, the reduced output written (dims from Concrete Inputs; none = all). */
static void reduce(fig *f, const call *c, int dpos) {
    acc A = {0};
    char buf[128];
    if (!is_tensor(c, 0)) return fail(f, "input not recorded as a tensor");
    if (!c->have_conc) return fail(f, "reduced dims not recorded (Concrete Inputs)");
    const targ *x = &c->a[0];
    int64_t n = numel(&A, x), out = n;
    const char *ds = conc(c, dpos, buf, sizeof buf);
    int64_t dims[MAXD];
    int nd = 0;
    if (ds && *ds && strcmp(ds, "[]")) {
        const char *p = ds + (*ds == '[');
        while (*p && *p != ']' && nd < MAXD) {
            char *e;
            long long v = strtoll(p, &e, 10);
            if (e == p) return fail(f, "reduced dims not understood");
            dims[nd++] = v;
            p = skip_ws(e);
            if (*p == ',') p = skip_ws(p + 1);
        }
        for (int i = 0; i < nd; i++) {
            int64_t k = dims[i] < 0 ? dims[i] + x->nd : dims[i];
            if (k < 0 || k >= x->nd) return fail(f, "reduced dims out of range");
            if (x->d[k]) out /= x->d[k];
        }
        snprintf(f->extra, sizeof f->extra, "dim %.80s", ds);
    } else {
        out = 1;
    }
    f->flops = -1;
    f->bytes = add(&A, tbytes(&A, x), mul(&A, out, esz(c, 0)));
    f->pdt = pdt_of(c, 0);
    if (A.over) fail(f, "figures overflow int64");
}

static void figures(hta_op_formula k, int arg, const call *c, fig *f) {
    char buf[32];
    switch (k) {
    case HTA_OPF_MM: return gemm(f, c, 0, 1, -1, 0);
    case HTA_OPF_ADDMM: return gemm(f, c, 1, 2, 0, 0);
    case HTA_OPF_BMM: return gemm(f, c, 0, 1, -1, 1);
    case HTA_OPF_BADDBMM: return gemm(f, c, 1, 2, 0, 1);
    case HTA_OPF_MATMUL: return gemm(f, c, 0, 1, -1, 2);
    case HTA_OPF_LINEAR: return gemm(f, c, 0, 1, 2, 3);
    case HTA_OPF_SCALED_MM: return scaled_mm(f, c);
    case HTA_OPF_CONV: return conv(f, c, 0, 1, 2, 3, 4, 5, 8, 6, 7, -1, -1);
    case HTA_OPF_CONV_ND: return conv(f, c, 0, 1, 2, 3, 4, 5, 6, -1, -1, -1, -1);
    case HTA_OPF_CONV_BWD: return conv(f, c, 1, 2, -1, 4, 5, 6, 9, 7, 8, 0, 10);
    case HTA_OPF_SDPA: return attention(f, c, 0, 1, 2, 0, arg, 0);
    case HTA_OPF_FLASH_FWD: return attention(f, c, 0, 1, 2, 1, arg, 0);
    case HTA_OPF_SDPA_BWD: return attention(f, c, 1, 2, 3, 0, arg, 1);
    case HTA_OPF_FLASH_BWD: return attention(f, c, 1, 2, 3, 1, arg, 1);
    case HTA_OPF_LAYER_NORM:
    case HTA_OPF_GROUP_NORM:
    case HTA_OPF_BATCH_NORM: return norm(f, c, arg, 5, 4, 0);
    case HTA_OPF_RMS_NORM: return norm(f, c, arg, 4, 3, 0);
    case HTA_OPF_SOFTMAX: {
        /* _softmax(self, dim, half_to_float): a float output when half_to_float */
        const char *h = conc(c, 2, buf, sizeof buf);
        return norm(f, c, -1, 5, 5, h && !strcmp(h, "True") ? 4 : 0);
    }
    case HTA_OPF_ELTWISE: return eltwise(f, c, 0);
    case HTA_OPF_ELTWISE_INPLACE: return eltwise(f, c, 1);
    case HTA_OPF_COPY: {
        acc A = {0};
        if (!is_tensor(c, 0) || !is_tensor(c, 1)) return fail(f, "copy operands not recorded as tensors");
        f->flops = -1, f->bytes = add(&A, tbytes(&A, &c->a[0]), tbytes(&A, &c->a[1])), f->pdt = pdt_of(c, 1);
        if (A.over) fail(f, "figures overflow int64");
        return;
    }
    case HTA_OPF_FILL: {
        acc A = {0};
        if (!is_tensor(c, 0)) return fail(f, "tensor not recorded");
        f->flops = -1, f->bytes = tbytes(&A, &c->a[0]), f->pdt = pdt_of(c, 0);
        if (A.over) fail(f, "figures overflow int64");
        return;
    }
    case HTA_OPF_REDUCE: return reduce(f, c, arg);
    case HTA_OPF_NONE: break;
    }
    fail(f, "no FLOP formula for this operator");
}

/* ---- shape and dtype text ---- */

static void shape_text(const call *c, const fig *f, char *buf, size_t cap) {
    size_t o = 0;
    buf[0] = 0;
    for (int i = 0; i < c->n && o + 24 < cap; i++) {
        if (!is_tensor(c, i)) continue;
        if (o) o += (size_t)snprintf(buf + o, cap - o, ", ");
        if (!c->a[i].nd) o += (size_t)snprintf(buf + o, cap - o, "scalar");
        for (int j = 0; j < c->a[i].nd && o + 24 < cap; j++)
            o += (size_t)snprintf(buf + o, cap - o, "%s%" PRId64, j ? "x" : "", c->a[i].d[j]);
    }
    if (f->extra[0] && o + 4 < cap) snprintf(buf + o, cap - o, "; %s", f->extra);
}

static void dtype_text(const call *c, char *buf, size_t cap) {
    const char *seen[4];
    int ns = 0;
    size_t o = 0;
    buf[0] = 0;
    for (int i = 0; i < c->n; i++) {
        const dtinfo *d = is_tensor(c, i) ? dtype_of(&c->a[i]) : NULL;
        if (!d) continue;
        int dup = 0;
        for (int j = 0; j < ns; j++) dup |= !strcmp(seen[j], d->shrt);
        if (dup || ns == 4) continue;
        seen[ns++] = d->shrt;
        o += (size_t)snprintf(buf + o, cap - o, "%s%s", o ? "/" : "", d->shrt);
    }
}

/* ---- one rank ---- */

/* A group: one operator name and its recorded args (symbol ids; NONE where absent). */
#define NONE UINT32_MAX
typedef struct gkey {
    uint32_t name, dims, types, conc, strides;
} gkey;

typedef struct group {
    gkey k;
    int64_t calls, ns;
} group;

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
    t->g[j] = (group){*k, 0, 0};
    t->n++;
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
    int64_t vals[5] = {-1, -1, -1, -1, -1};
    const char *js = hta_rank_meta(r, "deviceProperties");
    /* a flat scan of the array of flat objects Kineto writes: the keys we need, per object */
    char name[256] = "";
    int found = 0;
    for (const char *p = js ? strchr(js, '{') : NULL; p && !found;) {
        const char *e = strchr(p, '}');
        if (!e) break;
        int64_t v[5] = {-1, -1, -1, -1, -1};
        char nm[256] = "";
        static const char *const keys[5] = {"\"id\":", "\"computeMajor\":", "\"computeMinor\":", "\"numSms\":",
                                            "\"totalGlobalMem\":"};
        for (int k = 0; k < 5; k++) {
            const char *q = strstr(p, keys[k]);
            if (q && q < e) v[k] = strtoll(skip_ws(q + strlen(keys[k])), NULL, 10);
        }
        const char *q = strstr(p, "\"name\":");
        if (q && q < e) {
            q = skip_ws(q + 7);
            if (*q == '"') {
                const char *z = strchr(q + 1, '"');
                size_t l = z && z < e ? (size_t)(z - q - 1) : 0;
                if (l >= sizeof nm) l = sizeof nm - 1;
                memcpy(nm, q + 1, l);
                nm[l] = 0;
            }
        }
        /* the first object unless a later one is the device's */
        if (vals[0] == -1 && !name[0] && vals[1] == -1) memcpy(vals, v, sizeof v), strcpy(name, nm);
        if (want >= 0 && v[0] == want) memcpy(vals, v, sizeof v), strcpy(name, nm), found = 1;
        p = strchr(e, '{');
    }
    if (js && hta_table_set_str(tb, row, HTA_EPD_NAME, name)) return hta_oom(err);
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
        s->formula[nm] = (uint8_t)(hta_op_formula_of(hta_sym(s->t->sym, nm), &arg) + 1);
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
    call c;
    fig f = {-1, -1, HTA_PDT_NONE, "", NULL};
    char shape[512] = "", dtype[64] = "";
    const char *op = g->k.name == NONE ? "(no operator)" : hta_sym(t->sym, g->k.name);
    if (g->k.name == NONE) {
        f.note = "kernels launched outside any operator";
    } else if (s->formula[g->k.name] <= 1) {
        f.note = "no FLOP formula for this operator";
    } else if (g->k.dims == NONE) {
        f.note = "no shapes recorded (record_shapes)";
    } else {
        memset(&c, 0, sizeof c);
        for (int i = 0; i < MAXARGS; i++) c.a[i].nd = -1, c.a[i].nst = -1;
        if (parse_dims(hta_sym(t->sym, g->k.dims), &c, 0) ||
            (g->k.types != NONE && parse_strs(hta_sym(t->sym, g->k.types), &c, 0)) ||
            (g->k.strides != NONE && parse_dims(hta_sym(t->sym, g->k.strides), &c, 1)) ||
            (g->k.conc != NONE && parse_strs(hta_sym(t->sym, g->k.conc), &c, 1))) {
            f.note = "shapes not understood";
        } else {
            c.have_conc = g->k.conc != NONE;
            figures((hta_op_formula)(s->formula[g->k.name] - 1), s->farg[g->k.name], &c, &f);
            shape_text(&c, &f, shape, sizeof shape);
            dtype_text(&c, dtype, sizeof dtype);
        }
    }
    long row = hta_table_add_row(tb);
    if (row < 0 || hta_table_set_str(tb, row, HTA_EPO_OP, op) || hta_table_set_str(tb, row, HTA_EPO_SHAPE, shape) ||
        hta_table_set_str(tb, row, HTA_EPO_DTYPE, dtype) ||
        (f.note && hta_table_set_str(tb, row, HTA_EPO_NOTE, f.note)))
        return hta_oom(err);
    hta_table_set_int(tb, row, HTA_EPO_PDT, f.pdt);
    hta_table_set_int(tb, row, HTA_EPO_CALLS, g->calls);
    hta_table_set_int(tb, row, HTA_EPO_NS, g->ns);
    hta_table_set_int(tb, row, HTA_EPO_FLOPS, f.flops);
    hta_table_set_int(tb, row, HTA_EPO_BYTES, f.bytes);
    return HTA_OK;
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
    uint8_t *counted = calloc(r->n ? r->n : 1, 1); /* per row: an operator call already counted */
    if (!s.top || !s.formula || !s.farg || !counted) {
        st = hta_oom(err);
        goto out;
    }
    for (size_t i = 0; i < r->n; i++) s.top[i] = -2;
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
        if (op < 0 || !counted[op]) g->calls++;
        if (op >= 0) counted[op] = 1;
        g->ns += b.dur[j];
    }
    for (size_t i = 0; i < gt.cap && !st; i++)
        if (gt.g[i].calls >= 0) st = group_row(&s, &gt.g[i], ops, err);
out:
    bd_rows_free(&b);
    free(s.top), free(s.formula), free(s.farg), free(gt.g), free(counted);
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
    for (size_t c = 0; c < t->ncats; c++) cpu_op[c] = hta_cat_classify(hta_sym(t->sym, t->cats[c])) == HTA_CC_CPU_OP;
    for (size_t i = 0; i < hta_ctx_nranks(ctx) && !st; i++) st = rank_part(ctx, i, cpu_op, ops, dev, err);
    if (!st) {
        hta_table *a = ops, *b = dev;
        ops = dev = NULL;
        if (hta_result_add(out, a)) hta_table_free(b), st = hta_oom(err);
        else if (hta_result_add(out, b)) st = hta_oom(err);
    }
out:
    free(cpu_op);
    hta_table_free(ops);
    hta_table_free(dev);
    return st;
}

/* ---- the reduce ---- */

/* The ranks' GPUs: the peak of each dtype and the bandwidth the figures use (0: none), the device table. */
typedef struct peaks {
    double tflops[HTA_PDT_COUNT], tbps;
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
    for (int d = 0; d < HTA_PDT_COUNT; d++) pk->tflops[d] = o->peak_tflops > 0 ? o->peak_tflops : m ? m->tflops[d] : 0;
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
        hta_table_set_float(tb, row, HTA_DEV_TBPS, pk->tbps > 0 ? pk->tbps : NAN);
        hta_table_set_float(tb, row, HTA_DEV_RIDGE, pk->tflops[d] > 0 && pk->tbps > 0 ? pk->tflops[d] / pk->tbps : NAN);
    }
    if (hta_result_add(out, tb)) return hta_oom(err);
    return HTA_OK;
oom:
    hta_table_free(tb);
    return hta_oom(err);
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
    static const int icols[] = {HTA_EPO_FLOPS, HTA_EPO_BYTES, HTA_EPO_PDT};
    for (size_t i = 0; i < 3; i++) {
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

static hta_status roofline_row(const hta_table *p, size_t r, int64_t calls, int64_t ns, const peaks *pk,
                               hta_table *tb, hta_error *err) {
    int64_t fl = hta_table_get_int(p, r, HTA_EPO_FLOPS), by = hta_table_get_int(p, r, HTA_EPO_BYTES);
    int pdt = (int)hta_table_get_int(p, r, HTA_EPO_PDT);
    const char *note = hta_table_get_str(p, r, HTA_EPO_NOTE);
    long row = hta_table_add_row(tb);
    if (row < 0) return hta_oom(err);
    static const int sc[] = {HTA_EPO_OP, HTA_EPO_SHAPE, HTA_EPO_DTYPE};
    static const int dc[] = {HTA_ROOF_OP, HTA_ROOF_SHAPE, HTA_ROOF_DTYPE};
    for (int i = 0; i < 3; i++)
        if (hta_table_set_str(tb, row, dc[i], hta_table_get_str(p, r, sc[i]))) return hta_oom(err);
    hta_table_set_int(tb, row, HTA_ROOF_CALLS, calls);
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
    double pct = NAN, peak = pdt >= 0 && pdt < HTA_PDT_COUNT ? pk->tflops[pdt] : 0;
    char why[160] = "";
    if (!note && !pk->why) {
        if (fl < 0 && by >= 0) { /* bytes only: memory-bound by definition */
            bound = "memory";
            if (pk->tbps > 0) pct = 100.0 * tbs / pk->tbps;
        } else if (fl >= 0 && by > 0 && peak > 0 && pk->tbps > 0) {
            double ridge = peak / pk->tbps, roof = in >= ridge ? peak : in * pk->tbps;
            bound = in >= ridge ? "compute" : "memory";
            pct = 100.0 * tf / roof;
        } else if (fl >= 0) {
            snprintf(why, sizeof why, "no %s peak for this GPU", hta_peak_dtype_name((hta_peak_dtype)pdt));
        }
    }
    if (isnan(tf) && isnan(tbs) && !note && ns == 0) note = "no GPU time";
    hta_table_set_float(tb, row, HTA_ROOF_PEAK_PCT, ns > 0 ? pct : NAN);
    if ((bound && hta_table_set_str(tb, row, HTA_ROOF_BOUND, bound)) ||
        ((note || why[0]) && hta_table_set_str(tb, row, HTA_ROOF_NOTE, note ? note : why)))
        return hta_oom(err);
    return HTA_OK;
}

hta_status hta_efficiency_reduce(const hta_efficiency_opts *o, hta_result *parts, hta_result *out, hta_error *err) {
    hta_efficiency_opts dflt_;
    if (!o) hta_efficiency_opts_default(&dflt_), o = &dflt_;
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
    for (size_t i = 0; i < ops->nrows && !st;) {
        size_t j = i;
        int64_t calls = 0, ns = 0;
        for (; j < ops->nrows && !cmp_key(ops, i, j, NULL); j++)
            calls += hta_table_get_int(ops, j, HTA_EPO_CALLS), ns += hta_table_get_int(ops, j, HTA_EPO_NS);
        st = roofline_row(ops, i, calls, ns, &pk, tb, err);
        i = j;
    }
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

hta_status hta_efficiency(hta_ctx *ctx, const hta_efficiency_opts *o, hta_result *out, hta_error *err) {
    hta_result parts;
    hta_result_init(&parts);
    hta_status st = hta_efficiency_part(ctx, o, &parts, err);
    if (!st) st = hta_efficiency_reduce(o, &parts, out, err);
    hta_result_free(&parts);
    return st;
}
