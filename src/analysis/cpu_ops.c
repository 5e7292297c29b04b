/* CPU operator time (hta/cpuops.h): per rank, the time of each CPU operator
 * and user annotation (inclusive and self), the ProfilerSteps and what
 * dominates each, and the numeric args of libhtatrace scopes.  HTA has no
 * such analysis; it is what `hta report` says about CPU-only traces and
 * tracer files. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hta/cpuops.h"
#include "hta/rawjson.h"
#include "hta/util.h"
#include "hta/vocab.h"

HTA_TABLE_DEFINE(HTA_CPU_RANKS);
HTA_TABLE_DEFINE(HTA_CPU_OP_TIME);
HTA_TABLE_DEFINE(HTA_CPU_STEPS);
HTA_TABLE_DEFINE(HTA_CPU_STEP_OPS);
HTA_TABLE_DEFINE(HTA_SCOPE_ARGS);

void hta_cpu_ops_opts_default(hta_cpu_ops_opts *o) { *o = (hta_cpu_ops_opts){.step_top = 5, .args = -1}; }

/* The htaTracer member is the tracer's own; distributedInfo.backend "htatrace" is checked too, so that a
 * file that keeps only the rank's identity (a copy, or a rank loaded back from a merged trace) still
 * counts.  Meta values are kept as written, so distributedInfo is taken apart by the raw reader. */
int hta_rank_is_tracer(const hta_rank *r) {
    for (size_t i = 0; i < r->nmeta; i++) {
        if (!strcmp(r->meta[i].key, "htaTracer")) return 1;
        if (strcmp(r->meta[i].key, "distributedInfo")) continue;
        hta_raw_obj o = {0};
        const hta_raw_member *b = NULL;
        int yes = !hta_raw_obj_parse(&o, r->meta[i].json, strlen(r->meta[i].json)) &&
                  (b = hta_raw_obj_get(&o, "backend")) && hta_raw_str_is(b, "htatrace");
        hta_raw_obj_free(&o);
        if (yes) return 1;
    }
    return 0;
}

/* One operator or annotation call.  Times in ns. */
typedef struct item {
    uint32_t name;
    uint16_t cat;
    int32_t iter; /* ProfilerStep holding its start (hta_rank.iteration) */
    int64_t ts, dur, self;
} item;

/* Calls of one name (and category), within one step for the step tables. */
typedef struct group {
    const char *name, *cat;
    int32_t iter;
    size_t n;
    int64_t total, self, max;
} group;

typedef struct step {
    int32_t num;
    uint32_t row;
    int64_t ts, dur, self;
} step;

static int cmp_item(const void *a, const void *b) {
    const item *x = a, *y = b;
    if (x->iter != y->iter) return x->iter < y->iter ? -1 : 1;
    if (x->name != y->name) return x->name < y->name ? -1 : 1;
    return (x->cat > y->cat) - (x->cat < y->cat);
}

/* Output order: most self time first; ties by total time, then by name and category text, so that the
 * order never depends on symbol ids. */
static int cmp_group(const void *a, const void *b) {
    const group *x = a, *y = b;
    if (x->self != y->self) return x->self > y->self ? -1 : 1;
    if (x->total != y->total) return x->total > y->total ? -1 : 1;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->cat, y->cat);
}

static int cmp_step(const void *a, const void *b) {
    const step *x = a, *y = b;
    if (x->num != y->num) return x->num < y->num ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

/* Groups of items[0..n) (sorted by cmp_item; iter ignored when by_step is 0, so the items must then be
 * sorted with every iter equal, see one_rank) into g; returns the count. */
static size_t make_groups(const hta_trace *t, const item *it, size_t n, int by_step, group *g) {
    size_t ng = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        group x = {hta_sym(t->sym, it[i].name), hta_sym(t->sym, t->cats[it[i].cat]), it[i].iter, 0, 0, 0, 0};
        while (j < n && it[j].name == it[i].name && it[j].cat == it[i].cat && (!by_step || it[j].iter == it[i].iter)) {
            x.n++;
            x.total += it[j].dur;
            x.self += it[j].self;
            if (it[j].dur > x.max) x.max = it[j].dur;
            j++;
        }
        g[ng++] = x;
        i = j;
    }
    return ng;
}

static double pctg(int64_t part, int64_t whole) {
    return whole > 0 ? hta_round(100.0 * (double)part / (double)whole, 2) : NAN;
}

/* ---- numeric args (scope_args) ---- */

typedef struct argval {
    uint32_t name, key; /* trace symbol of the row's name; key id in keys */
    double v;
} argval;

typedef struct argscan {
    const hta_rank *r;
    hta_arena *A;
    hta_symtab *keys;
    argval *v;
    size_t n, cap;
    hta_raw_obj ev, args;
    int oom;
} argscan;

/* A JSON number as a double: integers exactly through the raw reader, others with strtod on a copy
 * (the value is not NUL-terminated in the file's text).  0, or -1 when it is no finite number. */
static int raw_number(const hta_raw_member *m, double *out) {
    if (!m->vlen || !(m->val[0] == '-' || (m->val[0] >= '0' && m->val[0] <= '9'))) return -1;
    int64_t i;
    if (!hta_raw_int(m, &i)) {
        *out = (double)i;
        return 0;
    }
    char buf[64];
    if (m->vlen >= sizeof buf) return -1;
    memcpy(buf, m->val, m->vlen);
    buf[m->vlen] = 0;
    char *end;
    double d = strtod(buf, &end);
    if (*end || !isfinite(d)) return -1;
    *out = d;
    return 0;
}

static int on_args(void *ctx, size_t row, const char *json, size_t len) {
    argscan *s = ctx;
    int rc = hta_raw_obj_parse(&s->ev, json, len);
    if (rc == -2) return s->oom = 1;
    if (rc) return 0; /* the loader read it, so this does not happen; nothing to count if it did */
    const hta_raw_member *a = hta_raw_obj_get(&s->ev, "args");
    if (!a || !a->vlen || a->val[0] != '{') return 0;
    rc = hta_raw_obj_parse(&s->args, a->val, a->vlen);
    if (rc == -2) return s->oom = 1;
    if (rc) return 0;
    for (size_t i = 0; i < s->args.n; i++) {
        double d;
        if (raw_number(&s->args.m[i], &d)) continue; /* strings, objects, booleans: no statistics */
        uint32_t key = hta_symtab_intern(s->keys, s->args.m[i].key, s->args.m[i].klen);
        argval *nv = key == UINT32_MAX ? NULL : hta_arena_grow(s->A, s->v, &s->cap, s->n + 1, sizeof *s->v);
        if (!nv) return s->oom = 1;
        s->v = nv;
        s->v[s->n++] = (argval){s->r->name[row], key, d};
    }
    return 0;
}

typedef struct argsort_ctx {
    const hta_trace *t;
    const hta_symtab *keys;
} argsort_ctx;

/* by name text, then key text: the table's order */
static int cmp_argval(const void *a, const void *b, void *ctx) {
    const argsort_ctx *c = ctx;
    const argval *x = a, *y = b;
    if (x->name != y->name) {
        int k = strcmp(hta_sym(c->t->sym, x->name), hta_sym(c->t->sym, y->name));
        if (k) return k;
    }
    if (x->key != y->key) return strcmp(hta_sym(c->keys, x->key), hta_sym(c->keys, y->key));
    return 0;
}

static int cmp_size(const void *a, const void *b) {
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

/* Reads the args of rows[0..n) back from the rank's file (the model keeps only the args analyses use) and
 * adds a scope_args row per (name, numeric key). */
static hta_status rank_args(hta_ctx *ctx, const hta_rank *r, size_t *rows, size_t n, hta_table *tb,
                            hta_error *err) {
    const hta_trace *t = ctx->trace;
    argscan s = {.r = r, .A = &ctx->scratch, .keys = hta_symtab_new()};
    if (!s.keys) return hta_oom(err);
    /* hta_trace_raw_events wants the rows in file order */
    qsort(rows, n, sizeof *rows, cmp_size);
    hta_status st = hta_trace_raw_events(r, rows, n, on_args, &s, err);
    if (s.oom) st = hta_oom(err);
    hta_raw_obj_free(&s.ev);
    hta_raw_obj_free(&s.args);
    if (!st) {
        argsort_ctx c = {t, s.keys};
        if (s.n) qsort_r(s.v, s.n, sizeof *s.v, cmp_argval, &c); /* s.v is NULL when no row has args */
        for (size_t i = 0; i < s.n && !st;) {
            size_t j = i;
            double sum = 0, mn = s.v[i].v, mx = s.v[i].v;
            for (; j < s.n && s.v[j].name == s.v[i].name && s.v[j].key == s.v[i].key; j++) {
                sum += s.v[j].v;
                if (s.v[j].v < mn) mn = s.v[j].v;
                if (s.v[j].v > mx) mx = s.v[j].v;
            }
            long row = hta_table_add_row(tb);
            if (row < 0 || hta_table_set_str(tb, row, HTA_SCOPE_ARGS_NAME, hta_sym(t->sym, s.v[i].name)) ||
                hta_table_set_str(tb, row, HTA_SCOPE_ARGS_ARG, hta_sym(s.keys, s.v[i].key))) {
                st = hta_oom(err);
                break;
            }
            hta_table_set_int(tb, row, HTA_SCOPE_ARGS_RANK, r->rank);
            hta_table_set_int(tb, row, HTA_SCOPE_ARGS_COUNT, (int64_t)(j - i));
            hta_table_set_float(tb, row, HTA_SCOPE_ARGS_SUM, sum);
            hta_table_set_float(tb, row, HTA_SCOPE_ARGS_MEAN, sum / (double)(j - i));
            hta_table_set_float(tb, row, HTA_SCOPE_ARGS_MIN, mn);
            hta_table_set_float(tb, row, HTA_SCOPE_ARGS_MAX, mx);
            i = j;
        }
    }
    hta_symtab_free(s.keys);
    return st;
}

/* ---- one rank ---- */

typedef struct tables {
    hta_table *ranks, *ops, *steps, *step_ops, *args;
} tables;

static hta_status emit_op(hta_table *tb, int32_t rank, const group *g, int64_t span, hta_error *err) {
    long row = hta_table_add_row(tb);
    if (row < 0 || hta_table_set_str(tb, row, HTA_CPU_OP_TIME_NAME, g->name) ||
        hta_table_set_str(tb, row, HTA_CPU_OP_TIME_CAT, g->cat))
        return hta_oom(err);
    hta_table_set_int(tb, row, HTA_CPU_OP_TIME_RANK, rank);
    hta_table_set_int(tb, row, HTA_CPU_OP_TIME_COUNT, (int64_t)g->n);
    hta_table_set_float(tb, row, HTA_CPU_OP_TIME_TOTAL, hta_ns_to_us(g->total));
    hta_table_set_float(tb, row, HTA_CPU_OP_TIME_SELF, hta_ns_to_us(g->self));
    hta_table_set_float(tb, row, HTA_CPU_OP_TIME_MEAN, hta_ns_to_us(g->total) / (double)g->n);
    hta_table_set_float(tb, row, HTA_CPU_OP_TIME_MAX, hta_ns_to_us(g->max));
    hta_table_set_float(tb, row, HTA_CPU_OP_TIME_SELF_PCTG, pctg(g->self, span));
    hta_table_set_float(tb, row, HTA_CPU_OP_TIME_TOTAL_PCTG, pctg(g->total, span));
    return HTA_OK;
}

static hta_status emit_step(tables *tb, int32_t rank, const step *s, const group *g, size_t ng, size_t nops,
                            int top, hta_error *err) {
    long row = hta_table_add_row(tb->steps);
    if (row < 0) return hta_oom(err);
    hta_table_set_int(tb->steps, row, HTA_CPU_STEPS_RANK, rank);
    hta_table_set_int(tb->steps, row, HTA_CPU_STEPS_STEP, s->num);
    hta_table_set_float(tb->steps, row, HTA_CPU_STEPS_DURATION, hta_ns_to_us(s->dur));
    hta_table_set_int(tb->steps, row, HTA_CPU_STEPS_OPS, (int64_t)nops);
    hta_table_set_float(tb->steps, row, HTA_CPU_STEPS_OUTSIDE, hta_ns_to_us(s->self));
    if (ng) {
        if (hta_table_set_str(tb->steps, row, HTA_CPU_STEPS_TOP, g[0].name)) return hta_oom(err);
        hta_table_set_float(tb->steps, row, HTA_CPU_STEPS_TOP_SELF, hta_ns_to_us(g[0].self));
        hta_table_set_float(tb->steps, row, HTA_CPU_STEPS_TOP_PCTG, pctg(g[0].self, s->dur));
    }
    for (size_t i = 0; i < ng && (top <= 0 || i < (size_t)top); i++) {
        hta_table *t = tb->step_ops;
        long r2 = hta_table_add_row(t);
        if (r2 < 0 || hta_table_set_str(t, r2, HTA_CPU_STEP_OPS_NAME, g[i].name) ||
            hta_table_set_str(t, r2, HTA_CPU_STEP_OPS_CAT, g[i].cat))
            return hta_oom(err);
        hta_table_set_int(t, r2, HTA_CPU_STEP_OPS_RANK, rank);
        hta_table_set_int(t, r2, HTA_CPU_STEP_OPS_STEP, s->num);
        hta_table_set_int(t, r2, HTA_CPU_STEP_OPS_COUNT, (int64_t)g[i].n);
        hta_table_set_float(t, r2, HTA_CPU_STEP_OPS_SELF, hta_ns_to_us(g[i].self));
        hta_table_set_float(t, r2, HTA_CPU_STEP_OPS_TOTAL, hta_ns_to_us(g[i].total));
        hta_table_set_float(t, r2, HTA_CPU_STEP_OPS_PCTG, pctg(g[i].self, s->dur));
    }
    return HTA_OK;
}

/* kind[c] of each category index: 1 for the rows the tables count (cpu_op, user_annotation). */
static hta_status one_rank(hta_ctx *ctx, size_t k, const hta_cpu_ops_opts *o, const unsigned char *kind,
                           tables *tb, hta_error *err) {
    const hta_trace *t = ctx->trace;
    const hta_rank *r = t->ranks[k];
    const hta_view *v;
    HTA_TRY(hta_ctx_view(ctx, k, &v, err));
    hta_arena *A = &ctx->scratch;
    hta_arena_mark mark = hta_arena_save(A);
    hta_status st = HTA_OK;
    uint32_t nsym = hta_symtab_count(t->sym);
    int64_t *child = hta_arena_calloc(A, r->n ? r->n : 1, sizeof *child);
    int32_t *stepnum = HTA_ANEW(A, int32_t, nsym);       /* per name symbol: N of ProfilerStep#N, -1, or -2 */
    item *it = HTA_ANEW(A, item, v->n);
    group *g = HTA_ANEW(A, group, v->n);
    step *sp = HTA_ANEW(A, step, v->n);
    size_t *argrows = HTA_ANEW(A, size_t, v->n);
    unsigned char *thr = hta_arena_calloc(A, r->nthreads ? r->nthreads : 1, 1); /* threads with CPU rows */
    if (!child || !stepnum || !it || !g || !sp || !argrows || !thr) {
        st = hta_oom(err);
        goto done;
    }
    for (uint32_t s = 0; s < nsym; s++) stepnum[s] = -2; /* not looked at yet */
    /* Time covered by each row's direct children, clipped to the row: over every CPU row of the rank, not
     * only the view's, since a call's self time is the trace's, whatever rows the filter keeps.  Stream
     * index 0 is "no stream"; device rows hang under their launch in the parent column and are not its
     * children on the thread. */
    for (size_t i = 0; i < r->n; i++) {
        int32_t p = r->parent[i];
        if (r->stream[i] != 0 || p < 0) continue;
        int64_t a = r->ts[i], e = a + (r->dur[i] > 0 ? r->dur[i] : 0);
        int64_t pa = r->ts[p], pe = pa + (r->dur[p] > 0 ? r->dur[p] : 0);
        if (a < pa) a = pa;
        if (e > pe) e = pe;
        if (e > a) child[p] += e - a;
    }
    size_t ni = 0, ns = 0, nargs = 0, nthr = 0;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t j = 0; j < v->n; j++) {
        uint32_t row = v->row[j];
        if (r->stream[row] != 0) continue;
        int64_t d = r->dur[row] > 0 ? r->dur[row] : 0;
        if (r->ts[row] < lo) lo = r->ts[row];
        if (r->ts[row] + d > hi) hi = r->ts[row] + d;
        if (!thr[r->thread[row]]) thr[r->thread[row]] = 1, nthr++;
        if (!kind[r->cat[row]]) continue;
        int64_t self = d - child[row];
        if (self < 0) self = 0;
        uint32_t nm = r->name[row];
        if (stepnum[nm] == -2) {
            int64_t num = hta_step_number(hta_sym(t->sym, nm));
            stepnum[nm] = (int32_t)(num < INT32_MAX ? num : INT32_MAX);
        }
        if (stepnum[nm] >= 0) { /* the steps have a table of their own */
            sp[ns++] = (step){stepnum[nm], row, r->ts[row], d, self};
            continue;
        }
        it[ni++] = (item){nm, r->cat[row], r->iteration[row], r->ts[row], d, self};
        argrows[nargs++] = row;
    }
    int64_t span = hi > lo ? hi - lo : 0;
    int want_args = o->args > 0 || (o->args < 0 && hta_rank_is_tracer(r));

    /* cpu_ranks: the steps counted once per number, as in cpu_steps below */
    qsort(sp, ns, sizeof *sp, cmp_step);
    size_t nsteps = 0;
    int64_t stepsum = 0;
    for (size_t s = 0; s < ns; s++)
        if (!s || sp[s].num != sp[s - 1].num) nsteps++, stepsum += sp[s].dur;
    long rrow = hta_table_add_row(tb->ranks);
    if (rrow < 0) {
        st = hta_oom(err);
        goto done;
    }
    hta_table_set_int(tb->ranks, rrow, HTA_CPU_RANKS_RANK, r->rank);
    hta_table_set_float(tb->ranks, rrow, HTA_CPU_RANKS_SPAN, hi >= lo ? hta_ns_to_us(span) : NAN);
    hta_table_set_int(tb->ranks, rrow, HTA_CPU_RANKS_THREADS, (int64_t)nthr);
    hta_table_set_int(tb->ranks, rrow, HTA_CPU_RANKS_CALLS, (int64_t)ni);
    hta_table_set_int(tb->ranks, rrow, HTA_CPU_RANKS_STEPS, (int64_t)nsteps);
    hta_table_set_float(tb->ranks, rrow, HTA_CPU_RANKS_MEAN_STEP,
                        nsteps ? hta_ns_to_us(stepsum) / (double)nsteps : NAN);
    hta_table_set_int(tb->ranks, rrow, HTA_CPU_RANKS_TRACER, hta_rank_is_tracer(r));

    /* cpu_op_time: every call of the rank, steps apart (iter set equal so that cmp_item groups by name) */
    item *all = HTA_ANEW(A, item, ni);
    if (!all) {
        st = hta_oom(err);
        goto done;
    }
    for (size_t i = 0; i < ni; i++) all[i] = it[i], all[i].iter = 0;
    qsort(all, ni, sizeof *all, cmp_item);
    size_t ng = make_groups(t, all, ni, 0, g);
    qsort(g, ng, sizeof *g, cmp_group);
    for (size_t i = 0; i < ng && (o->top <= 0 || i < (size_t)o->top); i++)
        HTA_TRY_GOTO(st, emit_op(tb->ops, r->rank, &g[i], span, err), done);

    /* cpu_steps and cpu_step_ops: the calls by the step holding their start.  A step number written
     * twice (two ProfilerStep#N rows) is counted once, with its first row. */
    qsort(it, ni, sizeof *it, cmp_item);
    size_t i0 = 0;
    for (size_t s = 0; s < ns; s++) {
        if (s && sp[s].num == sp[s - 1].num) continue;
        while (i0 < ni && it[i0].iter < sp[s].num) i0++;
        size_t i1 = i0;
        while (i1 < ni && it[i1].iter == sp[s].num) i1++;
        /* A call that starts in the step and runs past its end (another thread's long call) counts for its
         * part inside the step, its self time in the same proportion, so that no call takes more than the
         * step's duration. */
        int64_t end = sp[s].ts + sp[s].dur;
        for (size_t i = i0; i < i1; i++) {
            if (it[i].ts + it[i].dur <= end) continue;
            /* the step is assigned on HTA's rounded times, the part inside on exact ones: a call can start
             * just past the end (in = 0, and a zero duration has nothing to share out) */
            int64_t in = end > it[i].ts ? end - it[i].ts : 0;
            it[i].self = it[i].dur > 0 ? (int64_t)((double)it[i].self * (double)in / (double)it[i].dur) : 0;
            it[i].dur = in;
        }
        size_t gn = make_groups(t, it + i0, i1 - i0, 1, g);
        qsort(g, gn, sizeof *g, cmp_group);
        HTA_TRY_GOTO(st, emit_step(tb, r->rank, &sp[s], g, gn, i1 - i0, o->step_top, err), done);
        i0 = i1;
    }

    if (want_args && nargs) st = rank_args(ctx, r, argrows, nargs, tb->args, err);
done:
    hta_arena_reset(A, mark);
    hta_ctx_view_done(ctx, k);
    return st;
}

hta_status hta_cpu_ops_part(hta_ctx *ctx, const hta_cpu_ops_opts *o, hta_result *out, hta_error *err) {
    HTA_OPTS_OR_DEFAULT(hta_cpu_ops_opts, o);
    const hta_trace *t = ctx->trace;
    tables tb = {hta_table_from_def(&HTA_CPU_RANKS_TABLE), hta_table_from_def(&HTA_CPU_OP_TIME_TABLE), hta_table_from_def(&HTA_CPU_STEPS_TABLE),
                 hta_table_from_def(&HTA_CPU_STEP_OPS_TABLE), hta_table_from_def(&HTA_SCOPE_ARGS_TABLE)};
    unsigned char *kind = calloc(t->ncats ? t->ncats : 1, 1);
    hta_status st = HTA_OK;
    if (!tb.ranks || !tb.ops || !tb.steps || !tb.step_ops || !tb.args || !kind) {
        st = hta_oom(err);
        goto fail;
    }
    /* categories by HTA's classes (hta_cat_classify), decided once per category instead of per row */
    for (size_t c = 0; c < t->ncats; c++) {
        hta_cat_class cc = hta_cat_classify(hta_sym(t->sym, t->cats[c]));
        kind[c] = cc == HTA_CC_CPU_OP || cc == HTA_CC_USER_ANNOTATION;
    }
    for (size_t k = 0; k < hta_ctx_nranks(ctx) && !st; k++) st = one_rank(ctx, k, o, kind, &tb, err);
    if (st) goto fail;
    free(kind);
    kind = NULL;
    return HTA_RESULT_ADD(out, &tb.ranks, &tb.ops, &tb.steps, &tb.step_ops, &tb.args) ? hta_oom(err) : HTA_OK;
fail:
    free(kind);
    hta_table_free(tb.ranks);
    hta_table_free(tb.ops);
    hta_table_free(tb.steps);
    hta_table_free(tb.step_ops);
    hta_table_free(tb.args);
    return st;
}

/* The tables of the declaration, in its order. */
static const hta_table_def *const g_tables[] = {&HTA_CPU_RANKS_TABLE, &HTA_CPU_OP_TIME_TABLE, &HTA_CPU_STEPS_TABLE,
                                                &HTA_CPU_STEP_OPS_TABLE, &HTA_SCOPE_ARGS_TABLE};

hta_status hta_cpu_ops_reduce(const hta_cpu_ops_opts *o, hta_result *parts, hta_result *out, hta_error *err) {
    (void)o;
    HTA_TRY(hta_result_copy_notes(out, parts, err));
    int none = 0;
    for (size_t i = 0; i < 5; i++) {
        hta_table *t;
        HTA_TRY(hta_result_take(parts, g_tables[i], &t, err));
        if (g_tables[i] == &HTA_CPU_OP_TIME_TABLE) none = !t->nrows;
        if (hta_result_add(out, t)) return hta_oom(err);
    }
    if (none) hta_result_note(out, "no cpu_op or user_annotation rows in the analysed window");
    return HTA_OK;
}

HTA_ANALYSIS_WHOLE(cpu_ops, hta_cpu_ops_opts)
