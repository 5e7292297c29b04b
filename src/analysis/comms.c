/* Collectives' bandwidth (hta/comms.h, docs/comms.md).  The part reads, per rank, each call: its
 * communication kernels (their first start, their summed ns) and the record that says what they moved;
 * the reduce matches each call across the ranks for the wait, then sums the classes.
 *
 * Exact: times are int64 ns on each trace's own clock (a wait across ranks is a difference of two ranks'
 * clocks: docs/comms.md says when that is sound), bytes int64; doubles only when a cell is written. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analysis/breakdown_rows.h"
#include "analysis/comms_part.h"
#include "analysis/op_flops.h"
#include "core/vec.h"
#include "hta/comms.h"
#include "hta/efficiency.h"

HTA_TABLE_DEFINE(HTA_COLLECTIVES);
HTA_TABLE_DEFINE(HTA_ALLTOALLV);
HTA_TABLE_DEFINE(HTA_COMM_LINK);

HTA_TABLE_DEFINE(HTA_COMMS_PART_CALLS);
HTA_TABLE_DEFINE(HTA_COMMS_PART_DEV);
HTA_TABLE_DEFINE(HTA_COMMS_FOLD_CLASSES);
HTA_TABLE_DEFINE(HTA_COMMS_FOLD_INSTS);
HTA_TABLE_DEFINE(HTA_COMMS_FOLD_CALLS);

void hta_comms_opts_default(hta_comms_opts *o) {
    memset(o, 0, sizeof *o);
    o->scale_up = 8;
}

/* ---- names ---- */

/* The operation a name says, as collectives shows it: `Collective name` (allreduce, _allgather_base,
 * reduce_scatter_tensor_coalesced, all_to_allv, isend...), ProcessGroupNCCL's range (nccl:all_reduce),
 * c10d's operator (c10d::alltoall_base_) or a kernel (ncclDevKernel_AllGather_RING_LL, SendRecv); NULL
 * where it names none. */
static const char *op_of_text(const char *s) {
    char w[64];
    size_t n = 0;
    if (!strncmp(s, "c10d::", 6)) s += 6;
    else if (!strncmp(s, "nccl:", 5)) s += 5;
    else if (!strncmp(s, "rccl:", 5)) s += 5;
    while (*s == '_') s++;
    for (; *s && *s != '(' && n + 1 < sizeof w; s++)
        if (*s != '_') w[n++] = (char)(*s >= 'A' && *s <= 'Z' ? *s - 'A' + 'a' : *s);
    w[n] = 0;
    static const struct { const char *prefix, *op; } M[] = {
        {"allreduce", "allreduce"},   {"allgather", "allgather"}, {"reducescatter", "reduce_scatter"},
        {"alltoall", "alltoall"},     {"broadcast", "broadcast"}, {"reduce", "reduce"},
        {"sendrecv", "sendrecv"},     {"isend", "send"},          {"irecv", "recv"},
        {"send", "send"},             {"recv", "recv"},           {"barrier", "barrier"},
        {"gather", "gather"},         {"scatter", "scatter"},
    };
    for (size_t i = 0; i < sizeof M / sizeof *M; i++)
        if (!strncmp(w, M[i].prefix, strlen(M[i].prefix))) return M[i].op;
    return NULL;
}

/* A kernel's operation: the word after NCCL's/RCCL's "Kernel_" (ncclKernel_AllReduce_RING_LL_Sum_float,
 * ncclDevKernel_Broadcast_RING_LL); in another library's kernel (multimem_all_reduce_kernel, vLLM's
 * cross_device_reduce), the collective its name spells; NULL for any other kernel. */
static const char *op_of_kernel(const char *k) {
    const char *p = strstr(k, "Kernel_");
    if (p && (!strncmp(k, "nccl", 4) || !strncmp(k, "rccl", 4))) return op_of_text(p + 7);
    static const struct { const char *word, *op; } W[] = {
        {"all_reduce", "allreduce"},         {"allreduce", "allreduce"},   {"cross_device_reduce", "allreduce"},
        {"all_gather", "allgather"},         {"allgather", "allgather"},   {"reduce_scatter", "reduce_scatter"},
        {"all_to_all", "alltoall"},          {"alltoall", "alltoall"},
    };
    for (size_t i = 0; i < sizeof W / sizeof *W; i++)
        if (strcasestr(k, W[i].word)) return W[i].op;
    return NULL;
}

double comms_bus_factor(const char *op, int64_t n) {
    if (!strcmp(op, "allreduce")) return n > 0 ? 2.0 * (double)(n - 1) / (double)n : NAN;
    if (!strcmp(op, "allgather") || !strcmp(op, "reduce_scatter") || !strcmp(op, "alltoall"))
        return n > 0 ? (double)(n - 1) / (double)n : NAN;
    if (!strcmp(op, "broadcast") || !strcmp(op, "reduce") || !strcmp(op, "send") || !strcmp(op, "recv") ||
        !strcmp(op, "sendrecv"))
        return 1.0;
    return NAN;
}

int comms_is_p2p(const char *op) { return !strcmp(op, "send") || !strcmp(op, "recv") || !strcmp(op, "sendrecv"); }

/* Bytes per element of a `dtype` arg (c10::ScalarType's names, as record_param_comms writes them); 0
 * unknown. */
static int scalar_size(const char *d) {
    static const struct { const char *name; int size; } S[] = {
        {"Float", 4},          {"BFloat16", 2},      {"Half", 2},           {"Double", 8},
        {"Int", 4},            {"Long", 8},          {"Short", 2},          {"Char", 1},
        {"Byte", 1},           {"Bool", 1},          {"Float8_e4m3fn", 1},  {"Float8_e5m2", 1},
        {"Float8_e4m3fnuz", 1}, {"Float8_e5m2fnuz", 1}, {"ComplexFloat", 8}, {"ComplexDouble", 16},
        {"ComplexHalf", 4},    {"UInt16", 2},        {"UInt32", 4},         {"UInt64", 8},
        {"Float8_e8m0fnu", 1},
    };
    for (size_t i = 0; i < sizeof S / sizeof *S; i++)
        if (!strcmp(S[i].name, d)) return S[i].size;
    return 0;
}

/* ---- one rank ---- */

enum { K_UNSEEN, K_RECORD, K_RANGE, K_C10D, K_OTHER }; /* what a name is, per symbol */

typedef struct scan {
    const hta_trace *t;
    const hta_rank *r;
    uint8_t *kind; /* per symbol: K_* */
} scan;

static int kind_of(scan *s, int32_t row) {
    uint32_t nm = s->r->name[row];
    if (s->kind[nm] == K_UNSEEN) {
        const char *n = hta_sym(s->t->sym, nm);
        s->kind[nm] = !strcmp(n, "record_param_comms")                       ? K_RECORD
                      : !strncmp(n, "nccl:", 5) || !strncmp(n, "rccl:", 5) ? K_RANGE
                      : !strncmp(n, "c10d::", 6)                             ? K_C10D
                                                                              : K_OTHER;
    }
    return s->kind[nm];
}

typedef struct call {
    int32_t rec;     /* record_param_comms row, -1 none */
    int32_t kernel;  /* its first kernel's row */
    int32_t launch;  /* that kernel's launch, -1 none */
    int64_t start, ns;
} call;

static const char *text(const hta_trace *t, const hta_rank *r, int32_t row, hta_arg_key k) {
    return row >= 0 ? hta_row_arg_text(t, r, (size_t)row, k, NULL) : NULL;
}

/* An int arg that may be written as text ("Process Group Name": "0"); -1 none. */
static int64_t int_arg(const hta_trace *t, const hta_rank *r, int32_t row, hta_arg_key k) {
    if (row < 0 || t->arg_sym[k] < 0) return -1;
    const hta_arg *a = hta_row_arg(r, (size_t)row, t->arg_sym[k]);
    if (!a) return -1;
    if (a->type == HTA_V_INT) return a->v.i;
    if (a->type == HTA_V_FLOAT) return (int64_t)a->v.f;
    if (a->type == HTA_V_STR) {
        char *e;
        long long v = strtoll(hta_sym(t->sym, a->v.sym), &e, 10);
        return *e ? -1 : v;
    }
    return -1;
}

/* Text of an arg whatever its JSON type (a number as its digits) into buf; NULL none. */
static const char *any_text(const hta_trace *t, const hta_rank *r, int32_t row, hta_arg_key k, char *buf,
                            size_t cap) {
    if (row < 0 || t->arg_sym[k] < 0) return NULL;
    const hta_arg *a = hta_row_arg(r, (size_t)row, t->arg_sym[k]);
    if (!a) return NULL;
    if (a->type == HTA_V_INT) snprintf(buf, cap, "%" PRId64, a->v.i);
    else if (a->type == HTA_V_FLOAT) snprintf(buf, cap, "%.17g", a->v.f);
    else snprintf(buf, cap, "%s", hta_sym(t->sym, a->v.sym));
    return buf;
}

/* An older trace's size (no `In msg nelems`): the largest tensor the record, the ProcessGroupNCCL range
 * under it and the c10d operator above it recorded (c10d::alltoall_base_ records output and input).
 * all-gather and reduce-scatter whose larger buffer is not recorded (only the rank's chunk): that times the
 * group size.  1 with *msg, *in and dtype; 0: nothing recorded. */
static int old_size(scan *s, const call *c, const char *op, int64_t n, int64_t *msg, int64_t *in, char *dtype,
                    size_t cap, const char **note) {
    const hta_trace *t = s->t;
    const hta_rank *r = s->r;
    int64_t best = -1, chunk = -1;
    int bsize = 0;
    int32_t c10d = -1;
    for (int32_t x = c->launch; x != HTA_NO_ROW && x >= 0; x = r->parent[x]) {
        int k = kind_of(s, x);
        if (k == K_C10D && x != c->rec) {
            c10d = x;
            break;
        }
        if (k != K_RECORD && k != K_RANGE) continue;
        int64_t e;
        int sz;
        char dt[64];
        if (op_largest_tensor(text(t, r, x, HTA_ARG_INPUT_DIMS), text(t, r, x, HTA_ARG_INPUT_TYPE), &e, &sz, dt,
                              sizeof dt) &&
            e * sz > best * bsize) {
            best = e, bsize = sz, chunk = e * sz;
            snprintf(dtype, cap, "%s", dt);
        }
    }
    if (c10d < 0 && c->rec >= 0) /* the record sits under the operator */
        for (int32_t x = r->parent[c->rec]; x != HTA_NO_ROW; x = r->parent[x])
            if (kind_of(s, x) == K_C10D) {
                c10d = x;
                break;
            }
    if (c10d >= 0) {
        int64_t e;
        int sz;
        char dt[64];
        if (op_largest_tensor(text(t, r, c10d, HTA_ARG_INPUT_DIMS), text(t, r, c10d, HTA_ARG_INPUT_TYPE), &e, &sz,
                              dt, sizeof dt) &&
            e * sz > best * bsize) {
            best = e, bsize = sz;
            snprintf(dtype, cap, "%s", dt);
        }
    }
    if (best < 0) return 0;
    *msg = best * bsize;
    *in = chunk;
    *note = "older trace: the size of the largest tensor recorded";
    if ((!strcmp(op, "allgather") || !strcmp(op, "reduce_scatter")) && chunk >= 0 && *msg <= chunk) {
        if (n <= 0) return 0;
        *msg = chunk * n;
        *note = "older trace: the chunk recorded times the group size";
    }
    return 1;
}

static hta_status call_row(scan *s, const call *c, hta_table *tb, hta_error *err) {
    const hta_trace *t = s->t;
    const hta_rank *r = s->r;
    const char *op = NULL, *note = NULL;
    int32_t range = -1, c10d = -1;
    for (int32_t x = c->launch; x >= 0; x = r->parent[x]) {
        int k = kind_of(s, x);
        if (k == K_RANGE && range < 0) range = x;
        if (k == K_C10D && c10d < 0) c10d = x;
    }
    const char *cn = text(t, r, c->rec, HTA_ARG_COLLECTIVE_NAME);
    if (cn) op = op_of_text(cn);
    if (!op && range >= 0) op = op_of_text(hta_sym(t->sym, r->name[range]));
    if (!op && c10d >= 0) op = op_of_text(hta_sym(t->sym, r->name[c10d]));
    if (!op) op = op_of_kernel(hta_sym(t->sym, r->name[c->kernel]));
    char opbuf[64];
    if (!op) { /* a record or kernel whose name says no operation: its own name */
        snprintf(opbuf, sizeof opbuf, "%s", cn ? cn : hta_sym(t->sym, r->name[c->kernel]));
        op = opbuf;
    }
    int64_t n = int_arg(t, r, c->rec, HTA_ARG_GROUP_SIZE);
    const char *n_note = NULL;
    if (n <= 0 && c->rec >= 0 && r->world_size > 0)
        n = r->world_size, n_note = "group size not recorded: the world size";
    char pgbuf[256], dtbuf[64] = "";
    const char *pg = any_text(t, r, c->rec, HTA_ARG_PG_NAME, pgbuf, sizeof pgbuf);
    const char *pgdesc = text(t, r, c->rec, HTA_ARG_PG_DESC);
    const char *dtype = text(t, r, c->rec, HTA_ARG_DTYPE);
    int64_t in_n = int_arg(t, r, c->rec, HTA_ARG_IN_MSG_NELEMS), out_n = int_arg(t, r, c->rec, HTA_ARG_OUT_MSG_NELEMS);
    int64_t msg = -1, in = -1;
    const char *split = NULL, *pgranks = NULL;
    if (c->rec < 0) {
        note = "no record_param_comms: no size";
    } else if (in_n >= 0 || out_n >= 0) {
        int sz = dtype ? scalar_size(dtype) : 0;
        int64_t m = in_n > out_n ? in_n : out_n;
        if (!sz) note = "dtype not known: no size";
        else if (__builtin_mul_overflow(m, (int64_t)sz, &msg) || (in_n >= 0 && __builtin_mul_overflow(in_n, (int64_t)sz, &in)))
            msg = in = -1, note = "message size beyond int64";
        split = text(t, r, c->rec, HTA_ARG_IN_SPLIT_SIZE);
        if (split && !strcmp(split, "[]")) split = NULL;
        if (split) pgranks = text(t, r, c->rec, HTA_ARG_PG_RANKS);
    } else if (old_size(s, c, op, n, &msg, &in, dtbuf, sizeof dtbuf, &note)) {
        dtype = dtbuf;
    } else {
        note = "no message size recorded";
    }
    char nb[160];
    if (n_note) {
        snprintf(nb, sizeof nb, "%s%s%s", note ? note : "", note ? "; " : "", n_note);
        note = nb;
    }
    long row = hta_table_add_row(tb);
    if (row < 0 || hta_table_set_str(tb, row, HTA_CPC_OP, op) || (pg && hta_table_set_str(tb, row, HTA_CPC_PG, pg)) ||
        (pgdesc && hta_table_set_str(tb, row, HTA_CPC_PGDESC, pgdesc)) ||
        (dtype && hta_table_set_str(tb, row, HTA_CPC_DTYPE, dtype)) ||
        (note && hta_table_set_str(tb, row, HTA_CPC_NOTE, note)) ||
        (split && hta_table_set_str(tb, row, HTA_CPC_SPLIT, split)) ||
        (pgranks && hta_table_set_str(tb, row, HTA_CPC_PGRANKS, pgranks)))
        return hta_oom(err);
    hta_table_set_int(tb, row, HTA_CPC_RANK, r->rank);
    hta_table_set_int(tb, row, HTA_CPC_GROUP, n > 0 ? n : -1);
    hta_table_set_int(tb, row, HTA_CPC_MSG, msg);
    hta_table_set_int(tb, row, HTA_CPC_SEQ, int_arg(t, r, c->rec, HTA_ARG_SEQ));
    hta_table_set_int(tb, row, HTA_CPC_START, c->start);
    hta_table_set_int(tb, row, HTA_CPC_NS, c->ns);
    hta_table_set_int(tb, row, HTA_CPC_IN_BYTES, in);
    return HTA_OK;
}

static hta_status rank_part(hta_ctx *ctx, size_t ri, hta_table *calls, hta_table *dev, hta_error *err) {
    const hta_trace *t = ctx->trace;
    const hta_rank *r = t->ranks[ri];
    size_t nsym = hta_symtab_count(t->sym);
    scan s = {t, r, calloc(nsym ? nsym : 1, 1)};
    int32_t *call_of = malloc((r->n ? r->n : 1) * sizeof *call_of); /* per record row: its call, -1 none */
    call *cv = NULL;
    size_t nc = 0, cap = 0;
    bd_rows b = {0};
    hta_status st = HTA_OK;
    if (!s.kind || !call_of) {
        st = hta_oom(err);
        goto out;
    }
    for (size_t i = 0; i < r->n; i++) call_of[i] = -1;
    if ((st = bd_rows_build(ctx, ri, HTA_GPU_ROWS_ACTIVITY, &b, err))) goto out;
    {
        long drow = hta_table_add_row(dev);
        if (drow < 0) {
            st = hta_oom(err);
            goto out;
        }
        hta_device_props p;
        char name[256];
        int64_t want = b.n ? hta_row_arg_int(t, r, b.v->row[b.pos[0]], HTA_ARG_DEVICE, -1) : -1;
        if (hta_rank_device_props(r, want, &p, name, sizeof name) && hta_table_set_str(dev, drow, HTA_CPD_NAME, name)) {
            st = hta_oom(err);
            goto out;
        }
        hta_table_set_int(dev, drow, HTA_CPD_RANK, r->rank);
        hta_table_set_int(dev, drow, HTA_CPD_CCMAJ, p.cc_major);
        hta_table_set_int(dev, drow, HTA_CPD_CCMIN, p.cc_minor);
        hta_table_set_int(dev, drow, HTA_CPD_SMS, p.sms);
        hta_table_set_int(dev, drow, HTA_CPD_MEM, p.mem_bytes);
    }
    for (size_t j = 0; j < b.n; j++) {
        if (b.type[j] != HTA_KT_COMMUNICATION) continue;
        int32_t row = (int32_t)b.v->row[b.pos[j]], launch = r->partner[row], rec = -1;
        for (int32_t x = launch; x != HTA_NO_ROW && rec < 0; x = r->parent[x])
            if (kind_of(&s, x) == K_RECORD) rec = x;
        int64_t ts = r->ts[row];
        if (rec >= 0 && call_of[rec] >= 0) { /* another kernel of the same call (coalesced, or split) */
            call *c = &cv[call_of[rec]];
            if (ts < c->start) c->start = ts;
            c->ns += b.dur[j];
            continue;
        }
        if (HTA_GROW(cv, cap, nc + 1)) {
            st = hta_oom(err);
            goto out;
        }
        if (rec >= 0) call_of[rec] = (int32_t)nc;
        cv[nc++] = (call){rec, row, launch == HTA_NO_ROW ? -1 : launch, ts, b.dur[j]};
    }
    for (size_t i = 0; i < nc && !st; i++) st = call_row(&s, &cv[i], calls, err);
out:
    bd_rows_free(&b);
    free(s.kind), free(call_of), free(cv);
    return st;
}

hta_status hta_comms_part(hta_ctx *ctx, const hta_comms_opts *o, hta_result *out, hta_error *err) {
    (void)o;
    hta_table *calls = hta_table_from_def(&HTA_COMMS_PART_CALLS_TABLE), *dev = hta_table_from_def(&HTA_COMMS_PART_DEV_TABLE);
    hta_status st = HTA_OK;
    if (!calls || !dev) {
        st = hta_oom(err);
        goto out;
    }
    for (size_t i = 0; i < hta_ctx_nranks(ctx) && !st; i++) st = rank_part(ctx, i, calls, dev, err);
    if (!st && HTA_RESULT_ADD(out, &calls, &dev)) st = hta_oom(err);
out:
    hta_table_free(calls);
    hta_table_free(dev);
    return st;
}
