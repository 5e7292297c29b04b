/* Windows (--window, hta/view.h): which rows of each rank an analysis sees, as a time range from the
 * rank's first event or as the spans of an annotation's instances.  The run context marks the rows once
 * (hta_window_rows) and every view it builds keeps only those, so no analysis has code of its own for
 * it. */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "hta/view.h"

/* One end of a time range: a decimal number and a unit (ns, us, ms, s; us when none), into *ns.  The
 * integer and fraction parts are read as integers, so "0.001ms" is exactly 1000 ns; 18 digits bound
 * them, far beyond any trace's length. */
static int parse_time(const char *s, size_t n, int64_t *ns) {
    size_t i = 0;
    int64_t ip = 0, fp = 0, fscale = 1;
    size_t nd = 0, nf = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9') {
        if (++nd > 18) return -1;
        ip = ip * 10 + (s[i++] - '0');
    }
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (++nf > 9) return -1; /* finer than a nanosecond of a second */
            fp = fp * 10 + (s[i++] - '0');
            fscale *= 10;
        }
    }
    if (!nd && !nf) return -1;
    const char *u = s + i;
    size_t ul = n - i;
    int64_t mult;
    if (!ul || (ul == 2 && !memcmp(u, "us", 2))) mult = 1000;
    else if (ul == 2 && !memcmp(u, "ns", 2)) mult = 1;
    else if (ul == 2 && !memcmp(u, "ms", 2)) mult = 1000000;
    else if (ul == 1 && *u == 's') mult = 1000000000;
    else return -1;
    if (ip > INT64_MAX / mult / 2) return -1;
    /* the fraction rounded to the nearest ns */
    *ns = ip * mult + (fp * mult + fscale / 2) / fscale;
    return 0;
}

hta_status hta_window_parse(const char *spec, hta_window *w, hta_error *err) {
    memset(w, 0, sizeof *w);
    w->spec = spec;
    w->instance = -1;
    if (!strncmp(spec, "annot:", 6)) {
        const char *nm = spec + 6;
        size_t l = strlen(nm);
        if (!l) return hta_fail(err, HTA_EINVAL, "window '%s': no name after annot:", spec);
        w->kind = HTA_WINDOW_ANNOT;
        w->name = nm;
        w->name_len = w->base_len = l;
        /* a trailing #K (digits only) may pick an instance; hta_window_rows decides, since ProfilerStep#3
         * is also a name */
        const char *h = strrchr(nm, '#');
        if (h && h > nm && h[1] && strspn(h + 1, "0123456789") == strlen(h + 1) && strlen(h + 1) <= 9) {
            w->base_len = (size_t)(h - nm);
            w->instance = strtol(h + 1, NULL, 10);
        }
        return HTA_OK;
    }
    const char *colon = strchr(spec, ':');
    if (!colon || strchr(colon + 1, ':'))
        return hta_fail(err, HTA_EINVAL,
                        "window '%s': expected START:END (us, or with a unit: 10ms:25ms) or annot:NAME[#K]", spec);
    w->kind = HTA_WINDOW_TIME;
    w->start_ns = INT64_MIN;
    w->end_ns = INT64_MAX;
    size_t la = (size_t)(colon - spec), lb = strlen(colon + 1);
    if (la && parse_time(spec, la, &w->start_ns))
        return hta_fail(err, HTA_EINVAL, "window '%s': bad start '%.*s' (a number, unit ns, us, ms or s)", spec,
                        (int)la, spec);
    if (lb && parse_time(colon + 1, lb, &w->end_ns))
        return hta_fail(err, HTA_EINVAL, "window '%s': bad end '%s' (a number, unit ns, us, ms or s)", spec,
                        colon + 1);
    if (w->start_ns != INT64_MIN && w->end_ns != INT64_MAX && w->end_ns <= w->start_ns)
        return hta_fail(err, HTA_EINVAL, "window '%s': the end must come after the start", spec);
    return HTA_OK;
}

/* A half-open span [a, e) of the window on one rank's clock (absolute ns, the run's time mode). */
typedef struct span {
    int64_t a, e;
} span;

static int span_cmp(const void *x, const void *y) {
    const span *p = x, *q = y;
    return p->a < q->a ? -1 : p->a > q->a ? 1 : (p->e > q->e) - (p->e < q->e);
}

/* 1 when t lies in one of the n sorted, disjoint spans */
static int in_spans(const span *s, size_t n, int64_t t) {
    size_t lo = 0, hi = n;
    while (lo < hi) { /* first span starting after t */
        size_t m = lo + (hi - lo) / 2;
        if (s[m].a <= t) lo = m + 1;
        else hi = m;
    }
    return lo > 0 && t < s[lo - 1].e;
}

/* Per symbol: 1 when the name matches pattern pat (exactly, or as a glob when it has glob characters). */
static void match_names(const hta_trace *t, const char *pat, unsigned char *m) {
    uint32_t ns = hta_symtab_count(t->sym);
    int glob = strpbrk(pat, "*?[") != NULL;
    for (uint32_t s = 0; s < ns; s++) {
        const char *nm = hta_sym(t->sym, s);
        m[s] = (unsigned char)(!strcmp(nm, pat) || (glob && !fnmatch(pat, nm, 0)));
    }
}

/* The instances on rank r: CPU rows (no stream) whose name matches, as spans in start order (file order
 * at equal starts). */
typedef struct inst {
    int64_t a, e;
    size_t row;
} inst;

static int inst_cmp(const void *x, const void *y) {
    const inst *p = x, *q = y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    return (p->row > q->row) - (p->row < q->row);
}

static size_t count_instances(const hta_rank *r, const unsigned char *m) {
    size_t n = 0;
    for (size_t i = 0; i < r->n; i++) n += r->stream[i] == 0 && m[r->name[i]];
    return n;
}

/* Marks rank r's rows whose anchor (own start, or a GPU row's launch start) is in the spans; *last: the
 * latest anchor. */
static size_t mark_rows(const hta_rank *r, hta_time_mode mode, const span *sp, size_t nsp, unsigned char *keep,
                        int64_t *last) {
    size_t in = 0;
    *last = INT64_MIN;
    for (size_t i = 0; i < r->n; i++) {
        size_t j = i;
        if (r->stream[i] != 0 && r->partner[i] >= 0) j = (size_t)r->partner[i];
        int64_t a, e;
        hta_row_times(r, j, mode, &a, &e);
        if (a > *last) *last = a;
        keep[i] = (unsigned char)in_spans(sp, nsp, a);
        in += keep[i];
    }
    return in;
}

/* The rank's first start in the mode (0 without rows): time 0 of a time range. */
static int64_t first_start(const hta_rank *r, hta_time_mode mode) {
    int64_t lo = INT64_MAX;
    for (size_t i = 0; i < r->n; i++) {
        int64_t a, e;
        hta_row_times(r, i, mode, &a, &e);
        if (a < lo) lo = a;
    }
    return r->n ? lo : 0;
}

static hta_status time_rows(const hta_trace *t, const hta_window *w, hta_time_mode mode, unsigned char **keep,
                            hta_error *err) {
    size_t total = 0;
    int64_t latest = 0;
    for (size_t k = 0; k < t->nranks; k++) {
        const hta_rank *r = t->ranks[k];
        int64_t lo = first_start(r, mode), last;
        span s = {w->start_ns == INT64_MIN ? INT64_MIN : lo + w->start_ns,
                  w->end_ns == INT64_MAX ? INT64_MAX : lo + w->end_ns};
        total += mark_rows(r, mode, &s, 1, keep[k], &last);
        if (r->n && last - lo > latest) latest = last - lo;
    }
    /* the GPU rule surprises most where the GPU runs long after the CPU launched its work (CUDA graphs) */
    if (!total)
        return hta_fail(err, HTA_ENODATA,
                        "window '%s' holds no event: events start (a GPU row where its launch starts) at most "
                        "%.3f ms after their rank's first event",
                        w->spec, (double)latest / 1e6);
    return HTA_OK;
}

static hta_status annot_rows(const hta_trace *t, const hta_window *w, hta_time_mode mode, unsigned char **keep,
                             hta_error *err) {
    uint32_t nsym = hta_symtab_count(t->sym);
    unsigned char *m = malloc(nsym ? nsym : 1);
    char *pat = malloc(w->name_len + 1);
    if (!m || !pat) {
        free(m);
        free(pat);
        return hta_oom(err);
    }
    /* NAME#K as a whole first: ProfilerStep#3 is a name, and the K-th instance only what no name is */
    memcpy(pat, w->name, w->name_len);
    pat[w->name_len] = 0;
    match_names(t, pat, m);
    size_t nall = 0;
    for (size_t k = 0; k < t->nranks; k++) nall += count_instances(t->ranks[k], m);
    int64_t want = -1;
    if (!nall && w->base_len < w->name_len) {
        pat[w->base_len] = 0;
        match_names(t, pat, m);
        want = w->instance;
        for (size_t k = 0; k < t->nranks; k++) nall += count_instances(t->ranks[k], m);
    }
    hta_status st = HTA_OK;
    size_t total = 0, most = 0;
    for (size_t k = 0; k < t->nranks && nall && !st; k++) {
        const hta_rank *r = t->ranks[k];
        size_t ni = count_instances(r, m), n = 0;
        if (ni > most) most = ni;
        inst *v = malloc((ni ? ni : 1) * sizeof *v);
        span *sp = malloc((ni ? ni : 1) * sizeof *sp);
        if (!v || !sp) {
            free(v);
            free(sp);
            st = hta_oom(err);
            break;
        }
        for (size_t i = 0; i < r->n; i++) {
            if (r->stream[i] != 0 || !m[r->name[i]]) continue;
            int64_t a, e;
            hta_row_times(r, i, mode, &a, &e);
            v[n++] = (inst){a, e, i};
        }
        qsort(v, n, sizeof *v, inst_cmp);
        size_t ns = 0;
        for (size_t i = 0; i < n; i++) {
            if (want >= 0 && (int64_t)i != want) continue;
            /* an instance of zero duration still holds its own start */
            sp[ns++] = (span){v[i].a, v[i].e > v[i].a ? v[i].e : v[i].a + 1};
        }
        /* nested or overlapping instances: one disjoint, sorted list for the binary search */
        qsort(sp, ns, sizeof *sp, span_cmp);
        size_t u = 0;
        for (size_t i = 0; i < ns; i++) {
            if (u && sp[i].a <= sp[u - 1].e) {
                if (sp[i].e > sp[u - 1].e) sp[u - 1].e = sp[i].e;
            } else {
                sp[u++] = sp[i];
            }
        }
        int64_t last;
        total += mark_rows(r, mode, sp, u, keep[k], &last);
        free(v);
        free(sp);
    }
    if (!st && !nall)
        st = hta_fail(err, HTA_ENODATA, "window '%s': no CPU event %s '%s'", w->spec,
                      strpbrk(w->name, "*?[") ? "matches" : "is named", pat);
    else if (!st && !total)
        st = hta_fail(err, HTA_ENODATA, "window '%s': no rank has that instance ('%s' has at most %zu: #0 to #%zu)",
                      w->spec, pat, most, most ? most - 1 : 0);
    free(m);
    free(pat);
    return st;
}

hta_status hta_window_rows(const hta_trace *t, const hta_window *w, hta_time_mode mode, unsigned char **keep,
                           hta_error *err) {
    if (w->kind == HTA_WINDOW_TIME) return time_rows(t, w, mode, keep, err);
    if (w->kind == HTA_WINDOW_ANNOT) return annot_rows(t, w, mode, keep, err);
    for (size_t k = 0; k < t->nranks; k++) memset(keep[k], 1, t->ranks[k]->n);
    return HTA_OK;
}
