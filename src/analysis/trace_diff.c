/* Trace diff (analyses.md §15): operator counts and durations of one
 * iteration of one rank in two traces, side by side.  Beyond HTA: a trace
 * without ProfilerStep (inference) is compared whole, and a window
 * (--window) replaces the default iteration on both sides. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hta/counters.h"
#include "hta/util.h"
#include "hta/vocab.h"

HTA_TABLE_DEFINE(HTA_DIFF);
HTA_TABLE_DEFINE(HTA_OPS_DIFF);

void hta_diff_opts_default(hta_diff_opts *o) {
    memset(o, 0, sizeof *o);
    o->device = HTA_DIFF_ALL;
    o->control_rank = o->test_rank = -1;
    o->control_iteration = o->test_iteration = -1;
}


static int hexd(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

/* Length of an integer literal template argument at s ("128", "-1", "(int)4", "(unsigned long)2ul"), ending
 * just before ',' or '>' (spaces allowed around it); 0 when the argument is anything else. */
static size_t int_arg(const char *s) {
    const char *q = s;
    while (*q == ' ') q++;
    if (*q == '(') { /* a cast, as demangled non-type arguments carry: "(int)4" */
        const char *c = strchr(q, ')');
        if (!c) return 0;
        for (const char *x = q + 1; x < c; x++)
            if (!(*x == ' ' || (*x >= 'a' && *x <= 'z') || (*x >= '0' && *x <= '9') || *x == '_')) return 0;
        q = c + 1;
    }
    if (*q == '-') q++;
    if (*q < '0' || *q > '9') return 0;
    while (*q >= '0' && *q <= '9') q++;
    while (*q == 'u' || *q == 'U' || *q == 'l' || *q == 'L') q++;
    while (*q == ' ') q++;
    return *q == ',' || *q == '>' ? (size_t)(q - s) : 0;
}

void hta_diff_fold_name(const char *s, char *out) {
    size_t o = 0;
    int depth = 0;
    char prev = 0;
    for (size_t i = 0; s[i];) {
        char c = s[i];
        /* an address: 0x and hex digits, not inside a longer word (a kernel named ..._0x1 keeps it) */
        if (c == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X') && hexd(s[i + 2]) &&
            !((prev >= 'a' && prev <= 'z') || (prev >= 'A' && prev <= 'Z') || (prev >= '0' && prev <= '9') || prev == '_')) {
            size_t j = i + 2;
            while (hexd(s[j])) j++;
            out[o++] = '0', out[o++] = 'x', out[o++] = '*';
            prev = '*';
            i = j;
            continue;
        }
        if (c == '<') depth++;
        else if (c == '>' && depth > 0) depth--;
        out[o++] = c;
        prev = c;
        i++;
        /* after a template's '<' or a ',' inside one: an integer literal argument becomes N */
        size_t l = depth > 0 && (c == '<' || c == ',') ? int_arg(s + i) : 0;
        if (l) {
            if (s[i] == ' ') out[o++] = ' ';
            out[o++] = 'N';
            prev = 'N';
            i += l;
            while (i > 0 && s[i - 1] == ' ') i--; /* the spaces before ',' or '>' are copied as they are */
        }
    }
    out[o] = 0;
}

/* Per-call scratch: ops, their names and the joined rows live in the
 * control context's arena, released when hta_trace_diff returns. */
typedef struct op {
    char *name; /* in the arena */
    double counts, dur;
} op;

typedef struct ops {
    op *v;
    size_t n;
} ops;

/* names by code point, pandas' order (§0.2); also what find() searches by */
static int op_cmp(const void *a, const void *b) { return strcmp(((const op *)a)->name, ((const op *)b)->name); }

/* HTA's iterations(): the numbers of the ProfilerStep symbols, the smallest here.  Symbols, not rows, as
 * HTA reads them: every step name any loaded rank has. */
static int first_iteration(const hta_trace *t, int64_t *it) {
    int found = 0;
    uint32_t n = hta_symtab_count(t->sym);
    for (uint32_t s = 0; s < n; s++) {
        int64_t v;
        if (hta_step_int(hta_sym(t->sym, s), &v) && (!found || v < *it)) *it = v, found = 1;
    }
    return found;
}

/* iter: every row, whatever its iteration (a trace without steps, or a window in place of one) */
#define ALL_ITERATIONS INT64_MIN

/* Rows of the rank in the iteration (and in the run's window), by device, summed per (short) name, sorted
 * by name; short_names 2: the GPU rows summed per kernel category.  The rank's own rows, not the view: HTA's LabeledTrace re-parses the trace without alignment
 * or filter (§15), so the last profiler step is there too. rank < 0: the first loaded rank, HTA's
 * default. */
static hta_status summarize(const hta_ctx *ctx, int32_t rank, int64_t iter, hta_diff_device dev, int short_names,
                            int fold, const char *side, hta_arena *A, ops *out, hta_error *err) {
    const hta_trace *t = ctx->trace;
    const hta_rank *r = NULL;
    const unsigned char *win = NULL;
    for (size_t k = 0; k < t->nranks; k++)
        if (rank < 0 || t->ranks[k]->rank == rank) {
            r = t->ranks[k];
            win = hta_ctx_window_rows(ctx, k);
            break;
        }
    if (!r) return hta_fail(err, HTA_EINVAL, "%s trace has no rank %d", side, rank);
    uint32_t nsym = hta_symtab_count(t->sym);
    double *cnt = hta_arena_calloc(A, nsym ? nsym : 1, sizeof *cnt);
    double *dur = hta_arena_calloc(A, nsym ? nsym : 1, sizeof *dur);
    if (!cnt || !dur) return hta_oom(err);
    /* Per symbol id (dense arrays over the symbol table).  HTA first groups by (cat, name) and then sums
     * per name; summing per name at once gives the same totals.  Counts are doubles because HTA's outer
     * join turns them into floats. */
    for (size_t i = 0; i < r->n; i++) {
        /* A device row on stream 0 (ROCm writes its kernels there) has HTA's NaN iteration (TF§8), so that
         * HTA's iteration holds none of an AMD trace's kernels; by default it is its launch's, as on any
         * other stream (docs/differences-from-hta.md). */
        int32_t it = r->iteration[i];
        if (it == HTA_ITER_NAN && !ctx->hta_compat && r->partner[i] >= 0) it = r->iteration[r->partner[i]];
        if ((iter != ALL_ITERATIONS && it != iter) || (win && !win[i])) continue;
        /* §15: CPU = no stream, GPU = any stream */
        int gpu = hta_row_stream(r, i) != -1;
        if ((dev == HTA_DIFF_CPU && gpu) || (dev == HTA_DIFF_GPU && !gpu) || (short_names == 2 && !gpu)) continue;
        int64_t a, e;
        /* durations as the run's time mode gives them (HTA's rounding by default, never negative) */
        hta_row_times(r, i, ctx->view.time_mode, &a, &e);
        cnt[r->name[i]] += 1;
        dur[r->name[i]] += (double)(e - a) / 1000.0;
    }
    size_t m = 0;
    for (uint32_t s = 0; s < nsym; s++) m += cnt[s] > 0;
    out->v = HTA_ANEW(A, op, m);
    out->n = 0;
    if (!out->v) return hta_oom(err);
    for (uint32_t s = 0; s < nsym; s++) {
        if (!(cnt[s] > 0)) continue;
        char *nm;
        if (short_names == 2) {
            /* --by category: the GPU rows by what their kernels do, the same for CUDA and ROCm */
            nm = hta_arena_strdup(A, hta_kernel_category_name(hta_kernel_category_of(hta_sym(t->sym, s))));
        } else if (short_names) {
            /* HTA's table: HTA's shortened names, (anonymous namespace) quirk included */
            char *sn = hta_shorten_name_hta(hta_sym(t->sym, s));
            nm = sn ? hta_arena_strdup(A, sn) : NULL;
            free(sn);
        } else {
            nm = hta_arena_strdup(A, hta_sym(t->sym, s));
        }
        if (!nm) return hta_oom(err);
        if (fold && short_names != 2) hta_diff_fold_name(nm, nm); /* in place: never longer */
        out->v[out->n++] = (op){nm, cnt[s], dur[s]};
    }
    qsort(out->v, out->n, sizeof *out->v, op_cmp);
    /* short or folded names can coincide: sum them */
    size_t u = 0;
    for (size_t i = 0; i < out->n; i++) {
        if (u && !strcmp(out->v[u - 1].name, out->v[i].name)) {
            out->v[u - 1].counts += out->v[i].counts;
            out->v[u - 1].dur += out->v[i].dur;
        } else {
            out->v[u++] = out->v[i];
        }
    }
    out->n = u;
    return HTA_OK;
}

static const op *find(const ops *s, const char *name) {
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t m = (lo + hi) / 2;
        int c = strcmp(s->v[m].name, name);
        if (!c) return &s->v[m];
        if (c < 0) lo = m + 1;
        else hi = m;
    }
    return NULL;
}

typedef struct joined {
    const char *name;
    double cc, cd, tc, td;
} joined;

/* HTA's index order: the control names ascending, then the test-only names ascending (§15: not a sorted
 * union).  Names missing on one side count 0. */
static joined *join(const ops *c, const ops *t, hta_arena *A, size_t *n) {
    joined *j = HTA_ANEW(A, joined, c->n + t->n);
    if (!j) return NULL;
    size_t m = 0;
    for (size_t i = 0; i < c->n; i++) {
        const op *x = find(t, c->v[i].name);
        j[m++] = (joined){c->v[i].name, c->v[i].counts, c->v[i].dur, x ? x->counts : 0, x ? x->dur : 0};
    }
    for (size_t i = 0; i < t->n; i++)
        if (!find(c, t->v[i].name)) j[m++] = (joined){t->v[i].name, 0, 0, t->v[i].counts, t->v[i].dur};
    *n = m;
    return j;
}

/* By the size of the change: the names whose duration moved most first, then count changes, then the
 * name, so equal changes keep one order (docs/differences-from-hta.md, "diff"). */
static int by_change(const void *a, const void *b) {
    const joined *x = a, *y = b;
    double dx = fabs(x->td - x->cd), dy = fabs(y->td - y->cd);
    if (dx != dy) return dx < dy ? 1 : -1;
    double cx = fabs(x->tc - x->cc), cy = fabs(y->tc - y->cc);
    if (cx != cy) return cx < cy ? 1 : -1;
    return strcmp(x->name, y->name);
}

/* What one side compared, for the note: an iteration, the window or the whole trace. */
static void what(const hta_ctx *c, int64_t it, char *buf, size_t n) {
    int w = c->window.kind != HTA_WINDOW_NONE;
    if (it != ALL_ITERATIONS)
        snprintf(buf, n, "iteration %lld%s%s%s", (long long)it, w ? " in window '" : "", w ? c->window.spec : "",
                 w ? "'" : "");
    else if (w) snprintf(buf, n, "window '%s'", c->window.spec);
    else snprintf(buf, n, "the whole trace (no ProfilerStep)");
}

hta_status hta_trace_diff(hta_ctx *control, hta_ctx *test, const hta_diff_opts *o,
                          hta_result *out, hta_error *err) {
    HTA_OPTS_OR_DEFAULT(hta_diff_opts, o);
    int64_t ci = o->control_iteration, ti = o->test_iteration;
    /* No iteration asked for: HTA's first one, unless a window says what to compare or the trace has no
     * steps (inference), where the whole trace is the one window.  An iteration asked for is searched in
     * the window. */
    if (ci < 0 && (control->window.kind != HTA_WINDOW_NONE || !first_iteration(control->trace, &ci)))
        ci = ALL_ITERATIONS;
    if (ti < 0 && (test->window.kind != HTA_WINDOW_NONE || !first_iteration(test->trace, &ti)))
        ti = ALL_ITERATIONS;
    const char *cl = o->control_label ? o->control_label : "Control";
    const char *tl0 = o->test_label ? o->test_label : "Test";
    char tl[256];
    /* equal labels: HTA renames the test side (A9) */
    snprintf(tl, sizeof tl, strcmp(cl, tl0) ? "%s" : "%s_control_test", tl0);
    ops c = {0}, t = {0};
    hta_status st;
    /* Both sides' scratch comes from the control context's arena: one mark, one reset on every return. */
    hta_arena *A = &control->scratch;
    hta_arena_mark mark = hta_arena_save(A); /* released on every return below */
    hta_table *ct = NULL, *od = NULL;
    joined *j = NULL;
    size_t n = 0;
    int key = o->by_category ? 2 : o->short_names ? 1 : 0; /* what rows are summed by */
    if ((st = summarize(control, o->control_rank, ci, o->device, key, o->fold_names, "control", A, &c, err)) ||
        (st = summarize(test, o->test_rank, ti, o->device, key, o->fold_names, "test", A, &t, err)))
        goto fail;
    j = join(&c, &t, A, &n);
    ct = hta_table_from_def(&HTA_DIFF_TABLE), od = hta_table_from_def(&HTA_OPS_DIFF_TABLE);
    if (!j || !ct || !od) goto oom;
    int by_size = !control->hta_compat;
    if (by_size) qsort(j, n, sizeof *j, by_change);
    size_t top = o->top ? o->top : SIZE_MAX;
    /* the headers the declaration says depend on the options */
    static const struct {
        int col, test;
        const char *suffix;
    } label_cols[] = {{HTA_DIFF_CONTROL_COUNTS, 0, "_counts"},
                      {HTA_DIFF_CONTROL_DURATION, 0, "_total_duration"},
                      {HTA_DIFF_TEST_COUNTS, 1, "_counts"},
                      {HTA_DIFF_TEST_DURATION, 1, "_total_duration"}};
    for (size_t k = 0; k < sizeof label_cols / sizeof *label_cols; k++) {
        char h[300];
        snprintf(h, sizeof h, "%s%s", label_cols[k].test ? tl : cl, label_cols[k].suffix);
        if (hta_table_rename_col(ct, label_cols[k].col, h)) goto oom;
    }
    if (key && hta_table_rename_col(ct, HTA_DIFF_NAME, key == 2 ? "category" : "short_name")) goto oom;
    for (size_t i = 0; i < n && i < top; i++) {
        long row = hta_table_add_row(ct);
        if (row < 0 || hta_table_set_str(ct, (size_t)row, HTA_DIFF_NAME, j[i].name)) goto oom;
        double dc = j[i].tc - j[i].cc, dd = j[i].td - j[i].cd;
        hta_table_set_float(ct, (size_t)row, HTA_DIFF_CONTROL_COUNTS, j[i].cc);
        hta_table_set_float(ct, (size_t)row, HTA_DIFF_CONTROL_DURATION, j[i].cd);
        hta_table_set_float(ct, (size_t)row, HTA_DIFF_TEST_COUNTS, j[i].tc);
        hta_table_set_float(ct, (size_t)row, HTA_DIFF_TEST_DURATION, j[i].td);
        hta_table_set_float(ct, (size_t)row, HTA_DIFF_DIFF_COUNTS, dc);
        hta_table_set_float(ct, (size_t)row, HTA_DIFF_DIFF_DURATION, dd);
        if (hta_table_set_str(ct, (size_t)row, HTA_DIFF_CHANGE, dc > 0 ? "+" : dc < 0 ? "-" : "=")) goto oom;
    }
    /* ops_diff compares full names (HTA's ops_diff has no short-name option), or categories */
    if (key == 1) {
        if ((st = summarize(control, o->control_rank, ci, o->device, 0, o->fold_names, "control", A, &c, err)) ||
            (st = summarize(test, o->test_rank, ti, o->device, 0, o->fold_names, "test", A, &t, err)))
            goto fail;
        if (!(j = join(&c, &t, A, &n))) goto oom;
        if (by_size) qsort(j, n, sizeof *j, by_change);
    }
    /* HTA's five lists (§15), each in index order.  A name that disappears is "deleted", not also
     * "decreased": decreased needs test > 0. */
    static const char *const cats[] = {"added", "deleted", "increased", "decreased", "unchanged"};
    for (int k = 0; k < 5; k++)
        for (size_t i = 0, listed = 0; i < n && listed < top; i++) {
            double dc = j[i].tc - j[i].cc;
            int in = k == 0   ? j[i].cc == 0 && j[i].tc > 0
                     : k == 1 ? j[i].cc > 0 && j[i].tc == 0
                     : k == 2 ? j[i].cc > 0 && dc > 0
                     : k == 3 ? j[i].tc > 0 && dc < 0
                              : j[i].tc > 0 && dc == 0;
            if (!in) continue;
            listed++;
            long row = hta_table_add_row(od);
            if (row < 0 || hta_table_set_str(od, (size_t)row, HTA_OPS_DIFF_CATEGORY, cats[k]) ||
                hta_table_set_str(od, (size_t)row, HTA_OPS_DIFF_NAME, j[i].name))
                goto oom;
        }
    hta_arena_reset(A, mark);
    if (HTA_RESULT_ADD(out, &ct, &od)) return hta_oom(err);
    /* the note says which rank and iteration each side used, since both default to "the first" */
    int32_t cr = o->control_rank < 0 && control->trace->nranks ? control->trace->ranks[0]->rank : o->control_rank;
    int32_t tr = o->test_rank < 0 && test->trace->nranks ? test->trace->ranks[0]->rank : o->test_rank;
    char cw[300], tw[300];
    what(control, ci, cw, sizeof cw);
    what(test, ti, tw, sizeof tw);
    if (hta_result_note(out, "control: rank %d, %s; test: rank %d, %s", cr, cw, tr, tw)) return hta_oom(err);
    if (top < n && hta_result_note(out, "compare_traces: the %zu largest changes of %zu names (--top N for more, "
                                        "--top 0 for all)", top, n))
        return hta_oom(err);
    return HTA_OK;
oom:
    st = hta_oom(err);
fail:
    hta_arena_reset(A, mark);
    hta_table_free(ct);
    hta_table_free(od);
    return st;
}
