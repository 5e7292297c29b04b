/* FLOPs and bytes of one operator call from its recorded arguments (docs/efficiency.md, "Formulas"):
 * Kineto's `Input Dims`, `Input type`, `Input Strides` and `Concrete Inputs` parsed, one formula per
 * hta_op_formula (vocab.h), in exact int64 (an overflow refuses the figure), and the shape and dtype text
 * op_roofline shows.  Used by efficiency.c, once per operator and shape class. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/op_flops.h"

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

const char *op_skip_ws(const char *p) {
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') p++;
    return p;
}

/* Walks a JSON array with one element per arg ("[e0, e1, ...]"): elem parses the k-th into c->a[k] and
 * returns the text after it (NULL: not ours); c->n grows to the args seen. */
typedef const char *(*elem_fn)(const char *p, targ *t, int which);
static int parse_args(const char *p, call *c, int which, elem_fn elem) {
    p = op_skip_ws(p);
    if (*p != '[') return -1;
    p++;
    int k = 0;
    for (;;) {
        p = op_skip_ws(p);
        if (*p == ']') break;
        if (k >= MAXARGS || !(p = elem(p, &c->a[k], which))) return -1;
        k++;
        if (k > c->n) c->n = k;
        p = op_skip_ws(p);
        if (*p == ',') p++;
        else if (*p != ']') return -1;
    }
    return 0;
}

/* One dim list of an array of them ("[[1, 5185, 1024], [], [[2], [3]]]") into dims (which = 0) or strides
 * (which = 1).  A nested list or a number list longer than MAXD is nd = -1. */
static const char *dims_elem(const char *p, targ *t, int which) {
    int *nd = which ? &t->nst : &t->nd;
    int64_t *v = which ? t->st : t->d;
    if (*p != '[') { /* a bare value where a list belongs: not ours */
        *nd = -1;
        while (*p && *p != ',' && *p != ']') p++;
        return p;
    }
    p++;
    int n = 0, ok = 1, depth = 1;
    while (*p && depth) {
        p = op_skip_ws(p);
        if (*p == '[') depth++, ok = 0, p++;
        else if (*p == ']') depth--, p++;
        else if (*p == ',') p++;
        else if (*p == '-' || (*p >= '0' && *p <= '9')) {
            char *e;
            long long x = strtoll(p, &e, 10);
            if (e == p) return NULL;
            if (depth == 1 && n < MAXD) v[n] = x;
            if (depth == 1) n++;
            p = e;
            while (*p && *p != ',' && *p != ']' && *p != '[') p++; /* a fraction or exponent */
        } else return NULL;
    }
    *nd = ok && n <= MAXD ? n : -1;
    return p;
}

/* One string of an array of them into the arg's type (which = 0) or concrete text (which = 1), as a span
 * of the interned text (no escapes in what Kineto writes there; one with escapes keeps them). */
static const char *strs_elem(const char *p, targ *t, int which) {
    if (*p != '"') return NULL;
    const char *s = ++p;
    while (*p && *p != '"') p += *p == '\\' && p[1] ? 2 : 1;
    if (!*p) return NULL;
    if (which) t->conc = s, t->conc_len = (size_t)(p - s);
    else t->type = s, t->type_len = (size_t)(p - s);
    return p + 1;
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
    const char *p = op_skip_ws(s);
    int k = 0;
    if (*p == '[') p++;
    while (*p && *p != ']') {
        p = op_skip_ws(p);
        char *e;
        long long x = strtoll(p, &e, 10);
        if (e == p) return -1;
        if (k < MAXD) v[k] = x;
        k++;
        p = op_skip_ws(e);
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


static void fail(op_fig *f, const char *why) {
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
static void gemm(op_fig *f, const call *c, int ia, int ib, int ibias, int batched) {
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
static void scaled_mm(op_fig *f, const call *c) {
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
static void conv(op_fig *f, const call *c, int in, int wt, int bias, int ps, int pp, int pd, int pg, int ptr, int pop,
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
static void attention(op_fig *f, const call *c, int iq, int ik, int iv, int bshd, int cpos, int bwd) {
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
        if (n == 3) return fail(f, "variable-length batch: sequence lengths not recorded (cu_seqlens' values)");
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
static void norm(op_fig *f, const call *c, int wpos, int per_affine, int per_plain, int out_size) {
    acc A = {0};
    if (!is_tensor(c, 0)) return fail(f, "input not recorded as a tensor");
    int affine = wpos > 0 && is_tensor(c, wpos) && c->a[wpos].nd > 0;
    int64_t n = numel(&A, &c->a[0]);
    f->flops = mul(&A, n, affine ? per_affine : per_plain);
    f->bytes = add(&A, in_bytes(&A, c), mul(&A, n, out_size ? out_size : esz(c, 0)));
    f->pdt = pdt_of(c, 0);
    f->vector = 1; /* reductions and exponentials on the vector units: no tensor core runs a norm */
    if (A.over) fail(f, "figures overflow int64");
}

/* The arguments of a pointwise operator's functional schema (aten::add.Tensor: self, other, alpha); a call
 * with more, the last a tensor, is the out= overload (mul.out: self, other, out), whose last argument is the
 * output: written, not read (div.Tensor_mode's extra rounding_mode is no tensor).  0: not known. */
static const struct { const char *name; int nargs; } ELT_NARGS[] = {
    {"add", 3}, {"sub", 3}, {"rsub", 3}, {"mul", 2}, {"div", 2}, {"neg", 1}, {"abs", 1}, {"exp", 1},
    {"log", 1}, {"sqrt", 1}, {"rsqrt", 1}, {"pow", 2}, {"reciprocal", 1}, {"relu", 1}, {"gelu", 2},
    {"silu", 1}, {"sigmoid", 1}, {"tanh", 1}, {"clamp", 3}, {"clamp_min", 2}, {"clamp_max", 2},
    {"maximum", 2}, {"minimum", 2}, {"where", 3}, {"masked_fill", 3}, {"threshold", 3}, {"hardtanh", 3},
    {"leaky_relu", 2}, {"sin", 1}, {"cos", 1}, {"erf", 1}, {"square", 1}, {"addcmul", 4}, {"addcdiv", 4},
    {"lerp", 3}, {"threshold_backward", 3}, {"gelu_backward", 3}, {"silu_backward", 2},
    {"sigmoid_backward", 2}, {"tanh_backward", 2},
};

int op_eltwise_nargs(const char *name) {
    if (strncmp(name, "aten::", 6)) return 0;
    name += 6;
    for (size_t i = 0; i < sizeof ELT_NARGS / sizeof *ELT_NARGS; i++)
        if (!strcmp(ELT_NARGS[i].name, name)) return ELT_NARGS[i].nargs;
    return 0;
}

/* Pointwise: bytes only.  Out of place: the broadcast output, in the widest input dtype, written;
 * in place: the first tensor written; out= (nargs: op_eltwise_nargs): the out tensor written, never read. */
static void eltwise(op_fig *f, const call *c, int inplace, int nargs) {
    acc A = {0};
    int64_t od[MAXD] = {0};
    int ond = 0, osz = 0, first = -1;
    int outarg = !inplace && nargs > 0 && c->n > nargs && is_tensor(c, c->n - 1) ? c->n - 1 : -1;
    int64_t read = 0;
    for (int i = 0; i < c->n; i++) {
        if (!is_tensor(c, i) || i == outarg) continue;
        read = add(&A, read, tbytes(&A, &c->a[i]));
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
    int64_t written = outarg >= 0 ? tbytes(&A, &c->a[outarg]) : inplace ? tbytes(&A, &c->a[first]) : mul(&A, out, osz);
    f->bytes = add(&A, read, written);
    f->pdt = pdt_of(c, first);
    if (outarg >= 0) snprintf(f->extra, sizeof f->extra, "out=");
    if (A.over) fail(f, "figures overflow int64");
}

/* Reductions: the input read, the reduced output written (dims from Concrete Inputs; none = all). */
static void reduce(op_fig *f, const call *c, int dpos) {
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
            p = op_skip_ws(e);
            if (*p == ',') p = op_skip_ws(p + 1);
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

/* Grouped GEMM (aten::_grouped_mm, MoE's experts): a[M_total, K] x b[G, K, N] (offs split a's rows among
 * the groups), a[G, M, K] x b[G, K, N], or a[M, K_total] x b[K_total, N] (offs split K): 2 x M x N x K
 * summed over the groups, whatever the split; the output M x N (x G) in out_dtype or a's. */
static void grouped_mm(op_fig *f, const call *c) {
    acc A = {0};
    const targ *a = &c->a[0], *b = &c->a[1];
    if (!is_tensor(c, 0) || !is_tensor(c, 1)) return fail(f, "operands not recorded as tensors");
    int64_t G = 1, M, K, N;
    if (a->nd == 2 && b->nd == 3) M = a->d[0], K = a->d[1], N = b->d[2], G = 1;
    else if (a->nd == 3 && b->nd == 3) G = a->d[0], M = a->d[1], K = a->d[2], N = b->d[2];
    else if (a->nd == 2 && b->nd == 2) M = a->d[0], K = a->d[1], N = b->d[1];
    else return fail(f, "grouped mm operands are neither 2-D nor 3-D");
    if ((b->nd == 3 && b->d[1] != K) || (b->nd == 2 && b->d[0] != K)) return fail(f, "operand shapes do not match");
    int64_t out = mul(&A, G, mul(&A, M, N));
    /* a 2-D a against a 3-D b: each of a's rows meets one group's [K, N]; the 2-D x 2-D form: each group
     * a slice of K; either way M x N x K multiply-adds in all */
    f->flops = mul(&A, 2, mul(&A, out, K));
    const char *od = conc(c, 4, (char[32]){0}, 32);
    int osz = esz(c, 0);
    if (od && *od) { /* out_dtype as a ScalarType code */
        targ t = {0};
        t.conc = od, t.conc_len = strlen(od);
        const dtinfo *d = dtype_of_code(&t);
        if (d) osz = d->size;
    }
    f->bytes = add(&A, in_bytes(&A, c), mul(&A, out, osz));
    f->pdt = pdt_of(c, 0);
    if (A.over) fail(f, "figures overflow int64");
}

/* Norm backward: bytes only (memory-bound, as the forward): every tensor input read (grad_out, input, the
 * saved statistics, weight), grad_input written like the input and grad_weight, grad_bias like the
 * weight where there is one. */
static void norm_bwd(op_fig *f, const call *c, int wpos) {
    acc A = {0};
    if (!is_tensor(c, 1)) return fail(f, "input not recorded as a tensor");
    int64_t w = wpos < c->n && is_tensor(c, wpos) ? tbytes(&A, &c->a[wpos]) : 0;
    f->flops = -1;
    f->bytes = add(&A, in_bytes(&A, c), add(&A, tbytes(&A, &c->a[1]), mul(&A, 2, w)));
    f->pdt = pdt_of(c, 1);
    if (A.over) fail(f, "figures overflow int64");
}

/* Concrete Input i as an int list of 2 ("[3, 3]", or "3" repeated) into v; 0 when absent or not 2 long. */
static int conc_pair(const call *c, int i, int64_t v[2]) {
    char buf[96];
    int64_t w[MAXD];
    if (int_list(conc(c, i, buf, sizeof buf), w, 2)) return 0;
    v[0] = w[0], v[1] = w[1];
    return 1;
}

/* Pooling over the last two dims: max_pool2d (self, kernel_size, stride, padding, dilation, ceil_mode),
 * avg_pool2d (self, kernel_size, stride, padding, ceil_mode, ...).  One compare or add per window element:
 * N x C x Hout x Wout x kh x kw FLOPs (vector units); the input read, the output written (and the int64
 * indices of max_pool2d_with_indices). */
static void pool(op_fig *f, const call *c, int kind) {
    acc A = {0};
    const targ *x = &c->a[0];
    if (!is_tensor(c, 0) || x->nd < 3) return fail(f, "input not recorded as a 3-D or 4-D tensor");
    if (!c->have_conc) return fail(f, "pooling arguments not recorded (Concrete Inputs)");
    int64_t k[2], s[2], p[2] = {0, 0}, d[2] = {1, 1};
    if (!conc_pair(c, 1, k)) return fail(f, "kernel_size not recorded");
    if (!conc_pair(c, 2, s)) s[0] = k[0], s[1] = k[1]; /* stride [] defaults to the kernel */
    conc_pair(c, 3, p);
    if (kind != 2) conc_pair(c, 4, d);
    char buf[16];
    const char *cm = conc(c, kind == 2 ? 4 : 5, buf, sizeof buf);
    int ceil = cm && !strcmp(cm, "True");
    int64_t lead = 1, o[2];
    for (int i = 0; i + 2 < x->nd; i++) lead = mul(&A, lead, x->d[i]);
    for (int i = 0; i < 2; i++) {
        int64_t in = x->d[x->nd - 2 + i], span = d[i] * (k[i] - 1) + 1, num = in + 2 * p[i] - span;
        if (s[i] <= 0 || num < 0) return fail(f, "pooling arguments do not fit the input");
        o[i] = (ceil ? (num + s[i] - 1) / s[i] : num / s[i]) + 1;
        /* PyTorch: the last window must start inside the input or left padding */
        if (ceil && (o[i] - 1) * s[i] >= in + p[i]) o[i]--;
    }
    int64_t out = mul(&A, lead, mul(&A, o[0], o[1]));
    f->flops = mul(&A, out, mul(&A, k[0], k[1]));
    f->bytes = add(&A, tbytes(&A, x), mul(&A, out, esz(c, 0) + (kind == 1 ? 8 : 0)));
    f->pdt = pdt_of(c, 0);
    f->vector = 1;
    snprintf(f->extra, sizeof f->extra, "k %" PRId64 "x%" PRId64 " s %" PRId64 " p %" PRId64, k[0], k[1], s[0], p[0]);
    if (A.over) fail(f, "figures overflow int64");
}

/* To output_size (the last two dims), the input read and the output written: adaptive average pooling
 * (pool) adds each input element once (N x C x H x W FLOPs); upsampling counts bytes only. */
static void resize_to(op_fig *f, const call *c, int pool) {
    acc A = {0};
    const targ *x = &c->a[0];
    if (!is_tensor(c, 0) || x->nd < 3) return fail(f, "input not recorded as a 3-D or 4-D tensor");
    int64_t o[2];
    if (!conc_pair(c, 1, o))
        return fail(f, pool ? "output_size not recorded (Concrete Inputs)"
                            : "output_size not recorded (Concrete Inputs; scale factors alone are not read)");
    int64_t lead = 1;
    for (int i = 0; i + 2 < x->nd; i++) lead = mul(&A, lead, x->d[i]);
    f->flops = pool ? numel(&A, x) : -1;
    f->bytes = add(&A, tbytes(&A, x), mul(&A, mul(&A, lead, mul(&A, o[0], o[1])), esz(c, 0)));
    f->pdt = pdt_of(c, 0);
    if (pool) f->vector = 1;
    snprintf(f->extra, sizeof f->extra, "out %" PRId64 "x%" PRId64, o[0], o[1]);
    if (A.over) fail(f, "figures overflow int64");
}

/* gather (self, dim, index): the index read, as many of self's elements read and written to the output;
 * index_select (self, dim, index): the output is self with dim's size replaced by the index's length. */
static void gather(op_fig *f, const call *c, int select) {
    acc A = {0};
    const targ *x = &c->a[0], *ix = &c->a[2];
    if (!is_tensor(c, 0) || !is_tensor(c, 2)) return fail(f, "self or index not recorded as a tensor");
    int64_t out = numel(&A, ix);
    if (select) {
        char buf[16];
        const char *ds = conc(c, 1, buf, sizeof buf);
        if (!ds || !*ds) return fail(f, "dim not recorded (Concrete Inputs)");
        int64_t dim = strtoll(ds, NULL, 10);
        if (dim < 0) dim += x->nd;
        if (dim < 0 || dim >= x->nd || !x->d[dim]) return fail(f, "dim out of range");
        out = mul(&A, numel(&A, x) / x->d[dim], out);
    }
    f->flops = -1;
    f->bytes = add(&A, tbytes(&A, ix), mul(&A, mul(&A, 2, out), esz(c, 0)));
    f->pdt = pdt_of(c, 0);
    if (A.over) fail(f, "figures overflow int64");
}

/* scatter (self, dim, index, src), scatter_add and index_add (self, dim, index, source): the index and
 * the source's elements used read; the elements of self they reach written (scatter: one per index element;
 * index_add: one per source element), read too where they add; out of place, self is copied first (read
 * and written).  flags: bit 0 in place, bit 1 adds, bit 2 index_add. */
static void scatter(op_fig *f, const call *c, int flags) {
    acc A = {0};
    if (!is_tensor(c, 0) || !is_tensor(c, 2)) return fail(f, "self or index not recorded as a tensor");
    const targ *x = &c->a[0], *ix = &c->a[2];
    int src = is_tensor(c, 3); /* scatter's value overload takes a scalar: nothing read but the index */
    if ((flags & 4) && !src) return fail(f, "source not recorded as a tensor");
    int64_t reach = flags & 4 ? numel(&A, &c->a[3]) : numel(&A, ix);
    int64_t b = add(&A, tbytes(&A, ix), src ? mul(&A, reach, esz(c, 3)) : 0);
    b = add(&A, b, mul(&A, mul(&A, reach, flags & 2 ? 2 : 1), esz(c, 0)));
    if (!(flags & 1)) b = add(&A, b, mul(&A, 2, tbytes(&A, x)));
    f->flops = -1, f->bytes = b, f->pdt = pdt_of(c, 0);
    if (A.over) fail(f, "figures overflow int64");
}

/* MoE dispatch / combine: tokens[T, hidden] sent to (or gathered from) the experts' ranks; no FLOPs, the
 * payload's bytes (T x hidden x element size), as TraceLens counts them.  They cross the links, so the
 * memory roof they are held to is a bound, not their limit. */
static void moe_comm(op_fig *f, const call *c) {
    acc A = {0};
    if (!is_tensor(c, 0) || c->a[0].nd != 2) return fail(f, "tokens [T, hidden] not recorded as a 2-D tensor");
    f->flops = -1, f->bytes = tbytes(&A, &c->a[0]), f->pdt = pdt_of(c, 0);
    if (A.over) fail(f, "figures overflow int64");
}

/* A backward whose grad_input has self's shape (pooling, losses): the gradient and the other tensors it
 * needs read (a max pool's indices, a loss's target), grad_input written.  self itself is recorded for its
 * shape and not read by a max pool's backward: reading it is counted once as the write it stands for. */
static void grad_like(op_fig *f, const call *c, int spos) {
    acc A = {0};
    if (!is_tensor(c, 0) || !is_tensor(c, spos)) return fail(f, "grad_output and self not recorded as tensors");
    f->flops = -1, f->bytes = in_bytes(&A, c), f->pdt = pdt_of(c, spos);
    if (A.over) fail(f, "figures overflow int64");
}

/* A pointwise loss (self, target, reduction): both read; the output like self with reduction 0 (none),
 * else one element. */
static void loss(op_fig *f, const call *c) {
    acc A = {0};
    char buf[16];
    if (!is_tensor(c, 0) || !is_tensor(c, 1)) return fail(f, "self and target not recorded as tensors");
    const char *r = conc(c, 2, buf, sizeof buf);
    if (!r || !*r) return fail(f, "reduction not recorded (Concrete Inputs)");
    int64_t out = atoi(r) == 0 ? tbytes(&A, &c->a[0]) : esz(c, 0);
    f->flops = -1, f->bytes = add(&A, in_bytes(&A, c), out), f->pdt = pdt_of(c, 0);
    if (A.over) fail(f, "figures overflow int64");
}

static void figures(hta_op_formula k, int arg, const call *c, op_fig *f) {
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
    case HTA_OPF_FLASH_FWD_Q1: return attention(f, c, 1, 2, 3, 1, arg, 0);
    case HTA_OPF_FLASH_BWD_Q0: return attention(f, c, 0, 1, 2, 1, arg, 1);
    case HTA_OPF_PAGED_ATTN:
        return fail(f, "paged attention: the KV cache's lengths per request are not arguments (attention metadata)");
    case HTA_OPF_MOE_COMM: return moe_comm(f, c);
    case HTA_OPF_GRAD_LIKE: return grad_like(f, c, arg);
    case HTA_OPF_LOSS: return loss(f, c);
    case HTA_OPF_SCATTER: return scatter(f, c, arg);
    case HTA_OPF_LAYER_NORM:
    case HTA_OPF_GROUP_NORM:
    case HTA_OPF_BATCH_NORM: return norm(f, c, arg, 5, 4, 0);
    case HTA_OPF_RMS_NORM: return norm(f, c, arg, 4, 3, 0);
    case HTA_OPF_SOFTMAX: {
        /* _softmax(self, dim, half_to_float): a float output when half_to_float */
        const char *h = conc(c, 2, buf, sizeof buf);
        return norm(f, c, -1, 5, 5, h && !strcmp(h, "True") ? 4 : 0);
    }
    case HTA_OPF_GROUPED_MM: return grouped_mm(f, c);
    case HTA_OPF_NORM_BWD: return norm_bwd(f, c, arg);
    case HTA_OPF_POOL: return pool(f, c, arg);
    case HTA_OPF_ADAPTIVE_POOL: return resize_to(f, c, 1);
    case HTA_OPF_UPSAMPLE: return resize_to(f, c, 0);
    case HTA_OPF_GATHER: return gather(f, c, arg);
    case HTA_OPF_TENSOR_LIST: return fail(f, "tensor lists: no dtype recorded"); /* Kineto records their shapes only */
    case HTA_OPF_ELTWISE: return eltwise(f, c, 0, arg);
    case HTA_OPF_ELTWISE_INPLACE: return eltwise(f, c, 1, 0);
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

static void shape_text(const call *c, const op_fig *f, char *buf, size_t cap) {
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

void op_flops(hta_op_formula k, int arg, const char *dims, const char *types, const char *strides,
              const char *concrete, op_fig *f) {
    call c;
    memset(f, 0, sizeof *f);
    f->flops = f->bytes = -1;
    f->pdt = HTA_PDT_NONE;
    memset(&c, 0, sizeof c);
    for (int i = 0; i < MAXARGS; i++) c.a[i].nd = -1, c.a[i].nst = -1;
    if (parse_args(dims, &c, 0, dims_elem) || (types && parse_args(types, &c, 0, strs_elem)) ||
        (strides && parse_args(strides, &c, 1, dims_elem)) || (concrete && parse_args(concrete, &c, 1, strs_elem))) {
        fail(f, "shapes not understood");
        return;
    }
    c.have_conc = concrete != NULL;
    figures(k, arg, &c, f);
    shape_text(&c, f, f->shape, sizeof f->shape);
    dtype_text(&c, f->dtype, sizeof f->dtype);
}

/* The largest plain tensor of a call's recorded arguments (comms.c: an older trace's message size, where
 * record_param_comms and its neighbours record the tensors, not the counts). */
int op_largest_tensor(const char *dims, const char *types, int64_t *elems, int *elsize, char *dtype, size_t cap) {
    call c;
    memset(&c, 0, sizeof c);
    for (int i = 0; i < MAXARGS; i++) c.a[i].nd = -1, c.a[i].nst = -1;
    if (!dims || !types || parse_args(dims, &c, 0, dims_elem) || parse_args(types, &c, 0, strs_elem)) return 0;
    int best = -1;
    int64_t bestn = -1;
    for (int i = 0; i < c.n; i++) {
        if (!is_tensor(&c, i)) continue;
        acc a = {0};
        int64_t n = numel(&a, &c.a[i]);
        if (a.over) return 0;
        if (n > bestn) best = i, bestn = n;
    }
    if (best < 0) return 0;
    const dtinfo *d = dtype_of(&c.a[best]);
    *elems = bestn, *elsize = d->size;
    snprintf(dtype, cap, "%.*s", (int)c.a[best].type_len, c.a[best].type);
    return 1;
}
