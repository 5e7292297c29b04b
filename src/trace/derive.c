#include "trace/derive.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"

void hta_round_row(const hta_rank *r, size_t i, int64_t *ts, int64_t *end) {
    int64_t t = r->ts[i], d = r->dur[i];
    if (!r->ts_fractional) {
        *ts = t;
        *end = t + (d > 0 ? d : 0);
        return;
    }
    /* HTA holds microseconds in doubles: ts = ceil(ts), end = floor(ts + dur).
     * Reproduce the double arithmetic (it matters at 1e15 us, where a double
     * has quarter-microsecond steps); never let the duration go negative. */
    double tsd = (double)((long double)t / 1000.0L);
    double dd = (double)((long double)d / 1000.0L);
    double s = ceil(tsd), e = floor(tsd + dd);
    if (e < s) e = s;
    *ts = (int64_t)s * 1000;
    *end = (int64_t)e * 1000;
}

int hta_row_is_gpu_corr(const hta_trace *t, const hta_rank *r, size_t i) {
    int64_t s = hta_row_stream(r, i);
    if (s >= 0 && r->correlation[i] >= 0) return 1;
    return (int64_t)r->name[i] == t->sym_event_sync || (int64_t)r->name[i] == t->sym_context_sync;
}

/* ---- correlation ---- */

typedef struct corr_slot {
    int64_t corr;
    int32_t cpu, gpu; /* last row of each side, -1 */
    int used;
} corr_slot;

static int link_partners(const hta_trace *t, hta_rank *r) {
    size_t n = r->n, ns = 64;
    while (ns < n * 2) ns <<= 1;
    corr_slot *h = calloc(ns, sizeof *h);
    if (!h) return -1;
    unsigned char *gpu = malloc(n ? n : 1);
    if (!gpu) {
        free(h);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        r->partner[i] = HTA_NO_ROW;
        if (r->correlation[i] == -1) continue;
        gpu[i] = (unsigned char)hta_row_is_gpu_corr(t, r, i);
        size_t j = hta_hash_u64((uint64_t)r->correlation[i]) & (ns - 1);
        while (h[j].used && h[j].corr != r->correlation[i]) j = (j + 1) & (ns - 1);
        if (!h[j].used) h[j] = (corr_slot){r->correlation[i], -1, -1, 1};
        if (gpu[i]) h[j].gpu = (int32_t)i;
        else h[j].cpu = (int32_t)i;
    }
    for (size_t i = 0; i < n; i++) {
        if (r->correlation[i] == -1) continue;
        size_t j = hta_hash_u64((uint64_t)r->correlation[i]) & (ns - 1);
        while (h[j].corr != r->correlation[i]) j = (j + 1) & (ns - 1);
        int32_t other = gpu[i] ? h[j].cpu : h[j].gpu;
        r->partner[i] = other;
    }
    free(gpu);
    free(h);
    return 0;
}

/* ---- call stacks ---- */

typedef struct ord {
    int64_t ts, dur;
    uint32_t row;
} ord;

static int ord_cmp(const void *a, const void *b) {
    const ord *x = a, *y = b;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    if (x->dur != y->dur) return x->dur > y->dur ? -1 : 1; /* longer encloses */
    return x->row < y->row ? -1 : x->row > y->row;
}

static int build_stacks(hta_rank *r) {
    size_t n = r->n, nt = r->nthreads;
    size_t *start = calloc(nt + 1, sizeof *start);
    ord *o = malloc((n ? n : 1) * sizeof *o);
    int32_t *stack = malloc((n ? n : 1) * sizeof *stack);
    if (!start || !o || !stack) {
        free(start);
        free(o);
        free(stack);
        return -1;
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        r->parent[i] = HTA_NO_ROW;
        r->depth[i] = -1;
        if (r->stream[i] == 0) start[r->thread[i] + 1]++, m++;
    }
    for (size_t k = 0; k < nt; k++) start[k + 1] += start[k];
    size_t *fill = malloc((nt + 1) * sizeof *fill);
    if (!fill) {
        free(start);
        free(o);
        free(stack);
        return -1;
    }
    memcpy(fill, start, (nt + 1) * sizeof *fill);
    for (size_t i = 0; i < n; i++)
        if (r->stream[i] == 0) {
            int64_t d = r->dur[i] > 0 ? r->dur[i] : 0;
            o[fill[r->thread[i]]++] = (ord){r->ts[i], d, (uint32_t)i};
        }
    for (size_t k = 0; k < nt; k++) {
        ord *g = o + start[k];
        size_t gn = start[k + 1] - start[k];
        int sorted = 1;
        for (size_t j = 1; j < gn && sorted; j++) sorted = ord_cmp(&g[j - 1], &g[j]) <= 0;
        if (!sorted) qsort(g, gn, sizeof *g, ord_cmp);
        size_t sp = 0;
        for (size_t j = 0; j < gn; j++) {
            while (sp) {
                const ord *top = &o[stack[sp - 1]];
                /* at equal times a closing end precedes an opening one, but two
                 * zero-length events at one instant nest (HTA's rule) */
                if (top->ts + top->dur <= g[j].ts && !(top->dur == 0 && g[j].dur == 0 && top->ts == g[j].ts))
                    sp--;
                else
                    break;
            }
            uint32_t row = g[j].row;
            r->parent[row] = sp ? (int32_t)o[stack[sp - 1]].row : HTA_NO_ROW;
            r->depth[row] = (int16_t)(sp < INT16_MAX ? sp : INT16_MAX);
            stack[sp++] = (int32_t)(start[k] + j);
        }
    }
    /* device rows hang under the call that launched them */
    for (size_t i = 0; i < n; i++) {
        if (r->stream[i] == 0 || r->partner[i] < 0) continue;
        int32_t c = r->partner[i];
        if (r->stream[c] != 0) continue;
        r->parent[i] = c;
        r->depth[i] = (int16_t)(r->depth[c] + 1);
    }
    free(fill);
    free(start);
    free(o);
    free(stack);
    return 0;
}

/* ---- iterations ---- */

typedef struct step {
    int64_t ts, end;
    int32_t num;
    uint32_t order; /* table order: the last containing step wins */
} step;

static int parse_step(const char *s, int32_t *num) {
    if (strncmp(s, "ProfilerStep", 12)) return 0;
    s += 12;
    while (*s == ' ' || *s == '\t') s++;
    if (*s != '#') return -1;
    s++;
    while (*s == ' ' || *s == '\t') s++;
    if (*s < '0' || *s > '9') return -1;
    long long v = 0;
    while (*s >= '0' && *s <= '9' && v < INT32_MAX) v = v * 10 + (*s++ - '0');
    *num = (int32_t)(v < INT32_MAX ? v : INT32_MAX);
    return 1;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int assign_iterations(const hta_trace *t, hta_rank *r) {
    size_t n = r->n, ns = 0, cap = 0;
    step *st = NULL;
    uint32_t cpu_op = UINT32_MAX;
    int64_t f = hta_symtab_find(t->sym, "cpu_op", 6);
    for (size_t c = 0; f >= 0 && c < t->ncats; c++)
        if (t->cats[c] == (uint32_t)f) cpu_op = (uint32_t)c;
    /* step number per symbol, so rows are tested by id */
    uint32_t nsym = hta_symtab_count(t->sym);
    int32_t *stepnum = malloc((nsym ? nsym : 1) * sizeof *stepnum);
    if (!stepnum) return -1;
    for (uint32_t k = 0; k < nsym; k++) {
        int32_t num;
        stepnum[k] = parse_step(hta_sym(t->sym, k), &num) == 1 ? num : -1;
    }
    for (size_t i = 0; i < n; i++) {
        int32_t num = stepnum[r->name[i]];
        if (num < 0) continue;
        if (ns == cap) {
            cap = cap ? cap * 2 : 16;
            step *q = realloc(st, cap * sizeof *q);
            if (!q) {
                free(st);
                free(stepnum);
                return -1;
            }
            st = q;
        }
        int64_t a, e;
        hta_round_row(r, i, &a, &e);
        st[ns] = (step){a, e, num, (uint32_t)ns};
        ns++;
    }
    /* elementary segments between step boundaries, each with its winner */
    size_t nb = 2 * ns;
    free(stepnum);
    int64_t *bd = malloc((nb ? nb : 1) * sizeof *bd);
    int32_t *win = malloc((nb ? nb : 1) * sizeof *win);
    if (!bd || !win) {
        free(st);
        free(bd);
        free(win);
        return -1;
    }
    for (size_t k = 0; k < ns; k++) bd[2 * k] = st[k].ts, bd[2 * k + 1] = st[k].end;
    qsort(bd, nb, sizeof *bd, cmp_i64);
    size_t u = 0;
    for (size_t k = 0; k < nb; k++)
        if (!u || bd[k] != bd[u - 1]) bd[u++] = bd[k];
    for (size_t k = 0; k < u; k++) win[k] = -1;
    for (size_t k = 0; k < ns; k++) { /* steps in table order: later overwrite */
        size_t lo = 0, hi = u;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (bd[mid] < st[k].ts) lo = mid + 1;
            else hi = mid;
        }
        for (size_t s = lo; s < u && bd[s] < st[k].end; s++) win[s] = (int32_t)k;
    }
    for (size_t i = 0; i < n; i++) {
        int64_t s = hta_row_stream(r, i);
        if (s < 0 || (s == 0 && r->cat[i] == cpu_op)) {
            int32_t it = HTA_ITER_NONE;
            if (u) {
                int64_t a, e;
                hta_round_row(r, i, &a, &e);
                /* segment k covers [bd[k], bd[k+1]) */
                size_t lo = 0, hi = u;
                while (lo < hi) {
                    size_t mid = (lo + hi) / 2;
                    if (bd[mid] <= a) lo = mid + 1;
                    else hi = mid;
                }
                if (lo > 0 && lo < u + 1 && win[lo - 1] >= 0 && a < st[win[lo - 1]].end)
                    it = st[win[lo - 1]].num;
            }
            r->iteration[i] = it;
        } else if (s == 0) {
            r->iteration[i] = HTA_ITER_NAN;
        }
    }
    for (size_t i = 0; i < n; i++) {
        int64_t s = hta_row_stream(r, i);
        if (s > 0) {
            int32_t c = r->partner[i];
            r->iteration[i] = c >= 0 ? r->iteration[c] : HTA_ITER_NONE;
        }
    }
    free(bd);
    free(win);
    free(st);
    return 0;
}

int hta_derive_rank(const hta_trace *t, hta_rank *r) {
    if (link_partners(t, r)) return -1;
    if (build_stacks(r)) return -1;
    if (assign_iterations(t, r)) return -1;
    return 0;
}
