/* The report's CPU part: what `hta report` says about ranks HTA's GPU analyses
 * say nothing about -- CPU-only traces (no GPU span) and files written by
 * libhtatrace.  It runs hta_cpu_ops once, reads its tables back by declared
 * column, and says what dominates the steps (or the span) on the CPU and what
 * the critical path over the CPU threads is made of (docs/report.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hta/cpuops.h"
#include "hta/vocab.h"
#include "report/internal.h"

static double num(const hta_table *t, size_t row, int col) { return hta_table_get_float(t, row, col); }
static const char *txt(const hta_table *t, size_t row, int col) { return hta_table_get_str(t, row, col); }

/* A duration for prose: us below a millisecond, ms below a second, s above; CPU traces range from a
 * tracer's microsecond scopes to collectives of seconds. */
static const char *dur_text(double us, char *buf, size_t n) {
    if (isnan(us)) snprintf(buf, n, "-");
    else if (us < 1000) snprintf(buf, n, "%.0f us", us);
    else if (us < 1e6) snprintf(buf, n, "%.2f ms", us / 1e3);
    else snprintf(buf, n, "%.2f s", us / 1e6);
    return buf;
}

static long index_of(const rp_cpu *c, int64_t rank) {
    for (size_t k = 0; k < c->n; k++)
        if (c->rank[k] == rank) return (long)k;
    return -1;
}

/* Whether row i of t (rank column col) is about a rank the CPU part covers. */
static int covered(const rp_cpu *c, const hta_table *t, size_t i, int col) {
    double r = num(t, i, col);
    long k = isnan(r) ? -1 : index_of(c, (int64_t)r);
    return k >= 0 && c->on[k];
}

int rp_covered(int tracer, double span) { return tracer || isnan(span) || span <= 0; }

void rp_cpu_opts(hta_cpu_ops_opts *o) {
    hta_cpu_ops_opts_default(o);
    /* every row: the findings aggregate over all of them, and rp_cpu_tables keeps the top ones */
    o->top = 0;
    o->step_top = 0;
}

hta_status rp_cpu_run(const rp_rank *pr, size_t ns, const hta_table *rk, hta_result *parts, rp_cpu *c,
                      hta_error *err) {
    memset(c, 0, sizeof *c);
    hta_result_init(&c->res);
    c->n = ns;
    c->rank = malloc((ns ? ns : 1) * sizeof *c->rank);
    c->on = calloc(ns ? ns : 1, 1);
    c->tracer = calloc(ns ? ns : 1, 1);
    if (!c->rank || !c->on || !c->tracer) return hta_oom(err);
    for (size_t k = 0; k < ns; k++) {
        c->rank[k] = pr[k].rank;
        c->tracer[k] = (unsigned char)pr[k].tracer;
        /* the GPU span of the report's ranks table: a rank without one has nothing on a GPU stream */
        double span = NAN;
        for (size_t i = 0; i < rk->nrows; i++)
            if (num(rk, i, HTA_REPORT_RANKS_RANK) == pr[k].rank) span = num(rk, i, HTA_REPORT_RANKS_SPAN);
        c->on[k] = (unsigned char)rp_covered(c->tracer[k], span);
        c->n_on += c->on[k];
    }
    if (!c->n_on) return HTA_OK;
    /* the parts of the ranks with some covered rank (hta_report_part runs hta_cpu_ops there) */
    hta_cpu_ops_opts o;
    rp_cpu_opts(&o);
    HTA_TRY(hta_cpu_ops_reduce(&o, parts, &c->res, err));
    HTA_TRY(hta_result_table(&c->res, &HTA_CPU_RANKS_TABLE, &c->ranks, err));
    HTA_TRY(hta_result_table(&c->res, &HTA_CPU_OP_TIME_TABLE, &c->ops, err));
    HTA_TRY(hta_result_table(&c->res, &HTA_CPU_STEPS_TABLE, &c->steps, err));
    HTA_TRY(hta_result_table(&c->res, &HTA_CPU_STEP_OPS_TABLE, &c->step_ops, err));
    HTA_TRY(hta_result_table(&c->res, &HTA_SCOPE_ARGS_TABLE, &c->args, err));
    return HTA_OK;
}

void rp_cpu_free(rp_cpu *c) {
    hta_result_free(&c->res);
    free(c->rank);
    free(c->on);
    free(c->tracer);
}

/* ---- aggregating self time by name ---- */

typedef struct named {
    const char *name;
    double v;
} named;

static int cmp_named_name(const void *a, const void *b) {
    const named *x = a, *y = b;
    return strcmp(x->name, y->name);
}
static int cmp_named_v(const void *a, const void *b) {
    const named *x = a, *y = b;
    if (x->v != y->v) return x->v > y->v ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Sums v[0..n) by name, largest sum first; returns the number of names.  The same name under two
 * categories (rare) is one entry: the finding speaks of names. */
static size_t sum_by_name(named *v, size_t n) {
    qsort(v, n, sizeof *v, cmp_named_name);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m && !strcmp(v[m - 1].name, v[i].name)) v[m - 1].v += v[i].v;
        else v[m++] = v[i];
    }
    qsort(v, m, sizeof *v, cmp_named_v);
    return m;
}

/* "A 36.1%, B 16.7%, C 8.3%": the first three of v (sorted), as shares of whole; names whose share
 * rounds to 0.0% say nothing and are left out.  Returns how many were written. */
static size_t shares_text(const named *v, size_t m, double whole, char *out, size_t cap) {
    size_t len = 0, i;
    out[0] = 0;
    for (i = 0; i < m && i < 3; i++) {
        if (whole <= 0 || 100 * v[i].v / whole < 0.05) break;
        char nb[64];
        if (!rp_append(out, cap, &len, "%s%s %.1f%%", i ? ", " : "", rp_name(v[i].name, nb),
                       100 * v[i].v / whole))
            break;
    }
    return i;
}

/* ---- findings ---- */

static const char *const STEP_TODO =
    "the operators with the most self time are where a CPU speed-up pays (fewer or cheaper calls, "
    "torch.compile, intra-op threads); time outside operators is Python, data loading or waits that no "
    "operator records: wrap them in record_function; see `hta cpu-ops`";

/* The steps of one rank: their time, and what takes it (self time in the steps, all threads). */
static void step_finding(findings *f, const rp_cpu *c, int32_t rank) {
    const hta_table *st = c->steps, *so = c->step_ops;
    size_t n = 0;
    double sum = 0, outside = 0;
    long lo = -1, hi = -1;
    for (size_t i = 0; i < st->nrows; i++) {
        if (num(st, i, HTA_CPU_STEPS_RANK) != rank) continue;
        double d = num(st, i, HTA_CPU_STEPS_DURATION);
        n++;
        sum += d;
        outside += num(st, i, HTA_CPU_STEPS_OUTSIDE);
        if (lo < 0 || d < num(st, (size_t)lo, HTA_CPU_STEPS_DURATION)) lo = (long)i;
        if (hi < 0 || d > num(st, (size_t)hi, HTA_CPU_STEPS_DURATION)) hi = (long)i;
    }
    named *v = malloc((so->nrows ? so->nrows : 1) * sizeof *v);
    if (!v) {
        f->ok = 0;
        return;
    }
    size_t nv = 0;
    for (size_t i = 0; i < so->nrows; i++)
        if (num(so, i, HTA_CPU_STEP_OPS_RANK) == rank && txt(so, i, HTA_CPU_STEP_OPS_NAME))
            v[nv++] = (named){txt(so, i, HTA_CPU_STEP_OPS_NAME), num(so, i, HTA_CPU_STEP_OPS_SELF)};
    size_t m = sum_by_name(v, nv);
    char shares[320], a[32], b[32], d[32];
    const char *goes = shares_text(v, m, sum, shares, sizeof shares) ? shares : "none";
    free(v);
    /* Shares are of the steps' duration and summed over threads (a data-loader or collective thread runs
     * beside the step's own), so together they can pass 100%; the time outside operators is the step's own
     * thread's. */
    if (n == 1)
        rp_add_finding(f, rank, "cpu", STEP_TODO,
                       "step %.0f takes %s; operators by self time in it (summed over threads, of the step's "
                       "duration): %s; on the step's own thread %.1f%% is outside any operator",
                       num(st, (size_t)lo, HTA_CPU_STEPS_STEP), dur_text(sum, a, sizeof a), goes,
                       sum > 0 ? 100 * outside / sum : 0.0);
    else
        rp_add_finding(f, rank, "cpu", STEP_TODO,
                       "%zu steps, mean %s (shortest %s: step %.0f; longest %s: step %.0f); operators by self time "
                       "in them (summed over threads, of the steps' duration): %s; on the step's own thread %.1f%% "
                       "is outside any operator",
                       n, dur_text(sum / (double)n, a, sizeof a), dur_text(num(st, (size_t)lo, HTA_CPU_STEPS_DURATION), b, sizeof b),
                       num(st, (size_t)lo, HTA_CPU_STEPS_STEP), dur_text(num(st, (size_t)hi, HTA_CPU_STEPS_DURATION), d, sizeof d),
                       num(st, (size_t)hi, HTA_CPU_STEPS_STEP), goes, sum > 0 ? 100 * outside / sum : 0.0);
}

/* No steps (a tracer file, a CPU trace profiled without a schedule): the operators or scopes with the most
 * self time over the rank's span. */
static void span_finding(findings *f, const rp_cpu *c, int32_t rank, int tracer, double span, double threads) {
    const hta_table *op = c->ops;
    char text[360], a[32], nb[64];
    size_t len = 0, k = 0;
    text[0] = 0;
    for (size_t i = 0; i < op->nrows && k < 3; i++) { /* sorted by self time in a rank */
        if (num(op, i, HTA_CPU_OP_TIME_RANK) != rank) continue;
        if (!rp_append(text, sizeof text, &len, "%s%s %.1f%% (%.0f calls, mean %s)", k ? ", " : "",
                       rp_name(txt(op, i, HTA_CPU_OP_TIME_NAME) ? txt(op, i, HTA_CPU_OP_TIME_NAME) : "?", nb),
                       num(op, i, HTA_CPU_OP_TIME_SELF_PCTG), num(op, i, HTA_CPU_OP_TIME_COUNT),
                       dur_text(num(op, i, HTA_CPU_OP_TIME_MEAN), a, sizeof a)))
            break;
        k++;
    }
    if (!k) {
        rp_add_finding(f, rank, "cpu", "see `hta info` for what the file holds",
                       "no CPU operators, annotations or scopes in the analysed window");
        return;
    }
    char sp[32];
    if (tracer)
        rp_add_finding(f, rank, "cpu",
                       "the scopes with the most self time hold the time: nest finer scopes in them to see further; "
                       "`hta cpu-ops` lists every scope, its scope_args table their numeric args",
                       "libhtatrace scopes by self time, of the %s span on %.0f thread%s: %s", dur_text(span, sp, sizeof sp),
                       threads, threads == 1 ? "" : "s", text);
    else
        rp_add_finding(f, rank, "cpu",
                       "the operators with the most self time are where a CPU speed-up pays; no ProfilerStep: "
                       "profile with a schedule to see steps; see `hta cpu-ops`",
                       "CPU operators and annotations by self time, of the %s span on %.0f thread%s: %s",
                       dur_text(span, sp, sizeof sp), threads, threads == 1 ? "" : "s", text);
}

static int cmp_dbl(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Many ranks: one finding for all covered ranks, the median of their mean step (or span) and the names
 * with the most self time over all of them, as shares of the summed span. */
static void summary_finding(findings *f, const rp_cpu *c) {
    const hta_table *rk = c->ranks, *op = c->ops;
    int steps = 0;
    for (size_t i = 0; i < rk->nrows; i++)
        if (covered(c, rk, i, HTA_CPU_RANKS_RANK) && num(rk, i, HTA_CPU_RANKS_STEPS) > 0) steps = 1;
    int col = steps ? HTA_CPU_RANKS_MEAN_STEP : HTA_CPU_RANKS_SPAN;
    double *x = malloc((rk->nrows ? rk->nrows : 1) * sizeof *x);
    named *v = malloc((op->nrows ? op->nrows : 1) * sizeof *v);
    if (!x || !v) {
        free(x);
        free(v);
        f->ok = 0;
        return;
    }
    size_t n = 0, nv = 0;
    long lo = -1, hi = -1;
    double spans = 0;
    for (size_t i = 0; i < rk->nrows; i++) {
        if (!covered(c, rk, i, HTA_CPU_RANKS_RANK)) continue;
        double s = num(rk, i, HTA_CPU_RANKS_SPAN);
        if (!isnan(s)) spans += s;
        double y = num(rk, i, col);
        if (isnan(y)) continue;
        x[n++] = y;
        if (lo < 0 || y < num(rk, (size_t)lo, col)) lo = (long)i;
        if (hi < 0 || y > num(rk, (size_t)hi, col)) hi = (long)i;
    }
    for (size_t i = 0; i < op->nrows; i++)
        if (covered(c, op, i, HTA_CPU_OP_TIME_RANK) && txt(op, i, HTA_CPU_OP_TIME_NAME))
            v[nv++] = (named){txt(op, i, HTA_CPU_OP_TIME_NAME), num(op, i, HTA_CPU_OP_TIME_SELF)};
    size_t m = sum_by_name(v, nv);
    char shares[320], a[32], b[32], d[32];
    size_t nsh = shares_text(v, m, spans, shares, sizeof shares);
    free(v);
    if (!n) {
        free(x);
        rp_add_finding(f, -1, "cpu", "see `hta info` for what the files hold",
                       "no CPU operators, annotations or scopes on the %zu ranks without GPU work", c->n_on);
        return;
    }
    qsort(x, n, sizeof *x, cmp_dbl);
    double med = n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
    free(x);
    rp_add_finding(f, -1, "cpu", STEP_TODO,
                   "%s: median %s over %zu ranks (least %s on rank %.0f, most %s on rank %.0f); most self time over "
                   "all of them: %s of the summed span",
                   steps ? "mean step time" : "CPU span", dur_text(med, a, sizeof a), n,
                   dur_text(num(rk, (size_t)lo, col), b, sizeof b), num(rk, (size_t)lo, HTA_CPU_RANKS_RANK),
                   dur_text(num(rk, (size_t)hi, col), d, sizeof d), num(rk, (size_t)hi, HTA_CPU_RANKS_RANK),
                   nsh ? shares : "nothing");
}

void rp_cpu_findings(findings *f, const rp_cpu *c) {
    if (!c->n_on) return;
    if (c->n > RANKS_IN_FULL) {
        summary_finding(f, c);
        return;
    }
    const hta_table *rk = c->ranks;
    for (size_t i = 0; i < rk->nrows; i++) {
        if (!covered(c, rk, i, HTA_CPU_RANKS_RANK)) continue;
        int32_t rank = (int32_t)num(rk, i, HTA_CPU_RANKS_RANK);
        if (num(rk, i, HTA_CPU_RANKS_STEPS) > 0) step_finding(f, c, rank);
        else span_finding(f, c, rank, (int)num(rk, i, HTA_CPU_RANKS_TRACER) == 1, num(rk, i, HTA_CPU_RANKS_SPAN),
                          num(rk, i, HTA_CPU_RANKS_THREADS));
    }
}

/* ---- the critical path of a covered rank ---- */

void rp_cpu_path_finding(findings *f, const hta_cp_graph *g, const hta_cp_path *p, int64_t len_ns, size_t nsteps,
                         int32_t rank) {
    size_t nsym = hta_symtab_count(g->sym);
    /* per graph name: operator time on the path; the ProfilerSteps' own time goes to one entry */
    named *v = malloc((nsym + 1) * sizeof *v);
    if (!v) {
        f->ok = 0;
        return;
    }
    static const char step_name[] = "ProfilerStep (outside operators)";
    for (size_t s = 0; s < nsym; s++)
        v[s] = (named){hta_step_number(hta_sym(g->sym, (uint32_t)s)) >= 0 ? step_name : hta_sym(g->sym, (uint32_t)s), 0};
    int64_t tid = INT64_MIN, pid = INT64_MIN;
    int threads = 0;
    double cpu = 0;
    for (size_t i = 0; i + 1 < p->n; i++) {
        const hta_cp_edge *e = &g->edge[p->edge[i]];
        int64_t ew = hta_cp_edge_w(g, p->edge[i]);
        if (e->type != HTA_CP_OPERATOR || e->attr < 0 || ew <= 0) continue;
        const hta_cp_event *ev = &g->ev[e->attr];
        v[ev->name].v += (double)ew / 1000.0;
        cpu += (double)ew / 1000.0;
        const hta_cp_thread *th = &g->thr[ev->thr];
        if (th->tid != tid || th->pid != pid) threads++, tid = th->tid, pid = th->pid;
    }
    size_t m = sum_by_name(v, nsym);
    double len = (double)len_ns / 1000.0;
    char shares[320], a[32], todo[256], per[96] = "";
    if (nsteps) /* beside the steps' figures: the same stretch of time */
        snprintf(per, sizeof per, " of the window's %zu step%s", nsteps, nsteps == 1 ? "" : "s");
    size_t nsh = shares_text(v, m, len, shares, sizeof shares);
    /* the what-if example names the first operator that is not a step's own time */
    const char *op = NULL;
    for (size_t i = 0; i < m && i < 3 && !op; i++)
        if (v[i].v > 0 && v[i].name != step_name) op = v[i].name;
    if (op && !strpbrk(op, "*?'") && strlen(op) < 120)
        snprintf(todo, sizeof todo,
                 "the calls on the path bound the run: `hta critical-path --ranks %d --what-if 'op:%s=x0.5'` "
                 "estimates what halving the first would save", (int)rank, op);
    else
        snprintf(todo, sizeof todo,
                 "the calls on the path bound the run: `hta critical-path --ranks %d --what-if cpu=x0.7` estimates "
                 "what a faster CPU side would save", (int)rank);
    /* a pid written as text ("CPU functions", PyTorch's legacy profiler) has no number: the thread alone */
    char where[64] = "";
    if (threads == 1 && pid >= 0) snprintf(where, sizeof where, " on thread %lld (pid %lld)", (long long)tid, (long long)pid);
    else if (threads == 1) snprintf(where, sizeof where, " on thread %lld", (long long)tid);
    if (threads == 1)
        rp_add_finding(f, rank, "critical path", todo, "critical path%s %s, CPU-bound (%.1f%% operator time)%s: %s",
                       per, dur_text(len, a, sizeof a), len > 0 ? 100 * cpu / len : 0.0, where,
                       nsh ? shares : "no operator time");
    else
        rp_add_finding(f, rank, "critical path", todo, "critical path%s %s, CPU-bound (%.1f%% operator time): %s",
                       per, dur_text(len, a, sizeof a), len > 0 ? 100 * cpu / len : 0.0, nsh ? shares : "no operator time");
    free(v);
}

/* ---- tables ---- */

/* The rows of src that keep[] marks, into a table of the same declaration. */
static hta_table *copy_rows(const hta_table *src, const unsigned char *keep) {
    hta_table *d = hta_table_from_def(src->def);
    if (!d) return NULL;
    for (size_t i = 0; i < src->nrows; i++) {
        if (!keep[i]) continue;
        if (hta_table_copy_row(d, src, i) < 0) goto oom;
    }
    return d;
oom:
    hta_table_free(d);
    return NULL;
}

/* keep[] for the rows of t about covered ranks, at most `top` (> 0) in a row per value of the group
 * columns g1 (rank) and g2 (step; -1 for none): the analysis writes each group's rows together, most self
 * time first. */
static hta_status add_filtered(const rp_cpu *c, const hta_table *t, int g1, int g2, int top, hta_result *out,
                               hta_error *err) {
    unsigned char *keep = calloc(t->nrows ? t->nrows : 1, 1);
    if (!keep) return hta_oom(err);
    size_t run = 0;
    for (size_t i = 0; i < t->nrows; i++) {
        int same = i && num(t, i, g1) == num(t, i - 1, g1) && (g2 < 0 || num(t, i, g2) == num(t, i - 1, g2));
        run = same ? run + 1 : 0;
        keep[i] = (unsigned char)(covered(c, t, i, g1) && (top <= 0 || run < (size_t)top));
    }
    hta_table *d = copy_rows(t, keep);
    free(keep);
    if (!d || hta_result_add(out, d)) return hta_oom(err);
    return HTA_OK;
}

hta_status rp_cpu_tables(const rp_cpu *c, int top, int step_top, hta_result *out, hta_error *err) {
    if (!c->n_on) return HTA_OK;
    HTA_TRY(add_filtered(c, c->ranks, HTA_CPU_RANKS_RANK, -1, 0, out, err));
    HTA_TRY(add_filtered(c, c->ops, HTA_CPU_OP_TIME_RANK, -1, top, out, err));
    HTA_TRY(add_filtered(c, c->steps, HTA_CPU_STEPS_RANK, -1, 0, out, err));
    HTA_TRY(add_filtered(c, c->step_ops, HTA_CPU_STEP_OPS_RANK, HTA_CPU_STEP_OPS_STEP, step_top, out, err));
    /* the args table only where there are args: libhtatrace files (the default of hta_cpu_ops) */
    int any = 0;
    for (size_t i = 0; i < c->args->nrows && !any; i++) any = covered(c, c->args, i, HTA_SCOPE_ARGS_RANK);
    if (any) HTA_TRY(add_filtered(c, c->args, HTA_SCOPE_ARGS_RANK, -1, 0, out, err));
    return HTA_OK;
}
