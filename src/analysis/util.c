#include "hta/util.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static int starts(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

hta_kernel_type hta_kernel_type_of(const char *n) {
    if (starts(n, "nccl") || starts(n, "hip") || starts(n, "hccl") || strstr(n, "ncclKernel"))
        return HTA_KT_COMMUNICATION;
    if (starts(n, "Memcpy") || starts(n, "Memset") || starts(n, "dma")) return HTA_KT_MEMORY;
    static const char *const pre[] = {"nccl", "Stream Wait Event", "runFunction", "hip", "job_exe", "packet",
                                      "pe_exe", "cpum_exe_subgraph", "hccl", "collective_subgraph_execution"};
    static const char *const sub[] = {"Memcpy", "Memset", "dma", "Sync"};
    for (size_t i = 0; i < sizeof pre / sizeof *pre; i++)
        if (starts(n, pre[i])) return HTA_KT_OTHER;
    for (size_t i = 0; i < sizeof sub / sizeof *sub; i++)
        if (strstr(n, sub[i])) return HTA_KT_OTHER;
    if (starts(n, "cuda") && strstr(n + 4, "LaunchKernel")) return HTA_KT_OTHER;
    return HTA_KT_COMPUTATION;
}

const char *hta_kernel_type_name(hta_kernel_type k) {
    switch (k) {
    case HTA_KT_COMMUNICATION: return "COMMUNICATION";
    case HTA_KT_MEMORY: return "MEMORY";
    case HTA_KT_COMPUTATION: return "COMPUTATION";
    case HTA_KT_OTHER: return "OTHER";
    }
    return "OTHER";
}

const char *hta_memory_kernel_type(const char *name, char *buf) {
    if (starts(name, "Memset")) return "Memset";
    if (!starts(name, "Memcpy")) return "Memcpy Unknown";
    memcpy(buf, name, 11);
    buf[11] = 0;
    return buf;
}

int hta_is_nccl_kernel_name(const char *n) {
    return starts(n, "nccl") || strstr(n, "ncclKernel") || strstr(n, "ncclDevKernel") || starts(n, "rccl") ||
           strstr(n, "rcclKernel") || starts(n, "hccl");
}

char *hta_shorten_name(const char *name) {
    if (starts(name, "Memcpy") || starts(name, "Memset") || starts(name, "hipMemcpy") ||
        starts(name, "hipMemset") || starts(name, "dma") || (!strchr(name, '<') && !strchr(name, '(')))
        return strdup(name);
    size_t n = strlen(name);
    char *st = malloc(n + 1);
    if (!st) return NULL;
    size_t sp = 0;
    for (size_t i = 0; i < n; i++) {
        if (name[i] == '-' && name[i + 1] == '>') {
            i++;
            continue;
        }
        char c = name[i];
        if (c == '>' || c == ')') {
            char open = c == '>' ? '<' : '(';
            while (sp && st[sp - 1] != open) sp--;
            if (sp) sp--;
            continue;
        }
        st[sp++] = c;
    }
    st[sp] = 0;
    char *last = strrchr(st, ' ');
    char *res = strdup(last ? last + 1 : st);
    free(st);
    return res;
}

double hta_round(double x, int d) {
    double p = pow(10.0, d);
    return rint(x * p) / p;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double hta_quantile_sorted(const double *v, size_t n, double q) {
    if (!n) return NAN;
    double h = (double)(n - 1) * q;
    size_t lo = (size_t)floor(h);
    if (lo + 1 >= n) return v[n - 1];
    return v[lo] + (h - (double)lo) * (v[lo + 1] - v[lo]);
}

void hta_describe_values(double *v, size_t n, hta_describe *o) {
    o->count = (double)n;
    if (!n) {
        o->mean = o->std = o->min = o->p25 = o->p50 = o->p75 = o->max = NAN;
        return;
    }
    qsort(v, n, sizeof *v, cmp_d);
    double s = 0;
    for (size_t i = 0; i < n; i++) s += v[i];
    o->mean = s / (double)n;
    if (n > 1) {
        double ss = 0;
        for (size_t i = 0; i < n; i++) ss += (v[i] - o->mean) * (v[i] - o->mean);
        o->std = sqrt(ss / (double)(n - 1));
    } else {
        o->std = NAN;
    }
    o->min = v[0];
    o->max = v[n - 1];
    o->p25 = hta_quantile_sorted(v, n, 0.25);
    o->p50 = hta_quantile_sorted(v, n, 0.5);
    o->p75 = hta_quantile_sorted(v, n, 0.75);
}

typedef struct se {
    int64_t s, e;
} se;

static int cmp_se(const void *a, const void *b) {
    const se *x = a, *y = b;
    return (x->s > y->s) - (x->s < y->s);
}

size_t hta_interval_union(const int64_t *ts, const int64_t *dur, size_t n, int64_t *us, int64_t *ue) {
    if (!n) return 0;
    se *v = malloc(n * sizeof *v);
    if (!v) return 0;
    int sorted = 1;
    for (size_t i = 0; i < n; i++) {
        v[i] = (se){ts[i], ts[i] + dur[i]};
        if (i && ts[i] < ts[i - 1]) sorted = 0;
    }
    if (!sorted) qsort(v, n, sizeof *v, cmp_se);
    size_t m = 0;
    int64_t maxend = 0;
    for (size_t i = 0; i < n; i++) {
        if (m == 0 || v[i].s > maxend) {
            us[m] = v[i].s;
            ue[m] = v[i].e;
            m++;
            maxend = v[i].e;
        } else {
            if (v[i].e > ue[m - 1]) ue[m - 1] = v[i].e;
            if (v[i].e > maxend) maxend = v[i].e;
        }
    }
    free(v);
    return m;
}

int64_t hta_union_length(const int64_t *us, const int64_t *ue, size_t n) {
    int64_t s = 0;
    for (size_t i = 0; i < n; i++) s += ue[i] - us[i];
    return s;
}

int64_t hta_union_overlap(const int64_t *as, const int64_t *ae, size_t na, const int64_t *bs,
                          const int64_t *be, size_t nb) {
    size_t i = 0, j = 0;
    int64_t tot = 0;
    while (i < na && j < nb) {
        int64_t lo = as[i] > bs[j] ? as[i] : bs[j];
        int64_t hi = ae[i] < be[j] ? ae[i] : be[j];
        if (hi > lo) tot += hi - lo;
        if (ae[i] < be[j]) i++;
        else j++;
    }
    return tot;
}

/* ---- numpy's introsort argsort (analyses.md Appendix A) ---- */

/* Sift tmp down from position i of the 1-based heap a[1..N]. */
static void np_sift(const double *v, uint32_t *a, size_t i, size_t N, uint32_t tmp) {
    for (size_t j = i << 1; j <= N;) {
        if (j < N && v[a[j]] < v[a[j + 1]]) j++;
        if (!(v[tmp] < v[a[j]])) break;
        a[i] = a[j];
        i = j;
        j += j;
    }
    a[i] = tmp;
}

static void np_heap_argsort(const double *v, uint32_t *a0, size_t N) {
    uint32_t *a = a0 - 1; /* 1-based */
    for (size_t l = N >> 1; l > 0; --l) np_sift(v, a, l, N, a[l]);
    for (; N > 1;) {
        uint32_t tmp = a[N];
        a[N] = a[1];
        N -= 1;
        np_sift(v, a, 1, N, tmp);
    }
}

void hta_argsort_numpy(const double *v, size_t n, uint32_t *t) {
    for (size_t i = 0; i < n; i++) t[i] = (uint32_t)i;
    if (n < 2) return;
    int budget = 0;
    for (size_t m = n; m > 1; m >>= 1) budget++;
    budget *= 2;
    struct {
        long lo, hi;
        int budget;
    } stack[128];
    size_t sp = 0;
    long lo = 0, hi = (long)n - 1;
    for (;;) {
        if (budget < 0) {
            np_heap_argsort(v, t + lo, (size_t)(hi - lo + 1));
        } else {
            while (hi - lo > 15) {
                long mid = lo + (hi - lo) / 2;
                uint32_t x;
#define NP_SWAP(a, b) (x = t[a], t[a] = t[b], t[b] = x)
                if (v[t[mid]] < v[t[lo]]) NP_SWAP(mid, lo);
                if (v[t[hi]] < v[t[mid]]) NP_SWAP(hi, mid);
                if (v[t[mid]] < v[t[lo]]) NP_SWAP(mid, lo);
                double pivot = v[t[mid]];
                long i = lo, j = hi - 1;
                NP_SWAP(mid, j);
                for (;;) {
                    do i++;
                    while (v[t[i]] < pivot);
                    do j--;
                    while (pivot < v[t[j]]);
                    if (i >= j) break;
                    NP_SWAP(i, j);
                }
                NP_SWAP(i, hi - 1);
#undef NP_SWAP
                budget--;
                if (i - lo < hi - i) {
                    stack[sp].lo = i + 1, stack[sp].hi = hi, stack[sp].budget = budget, sp++;
                    hi = i - 1;
                } else {
                    stack[sp].lo = lo, stack[sp].hi = i - 1, stack[sp].budget = budget, sp++;
                    lo = i + 1;
                }
            }
            for (long k = lo + 1; k <= hi; k++) {
                uint32_t xv = t[k];
                long m = k;
                while (m > lo && v[xv] < v[t[m - 1]]) {
                    t[m] = t[m - 1];
                    m--;
                }
                t[m] = xv;
            }
        }
        if (!sp) return;
        sp--;
        lo = stack[sp].lo, hi = stack[sp].hi, budget = stack[sp].budget;
    }
}

void hta_argsort_numpy_desc(const double *v, size_t n, uint32_t *perm) {
    /* pandas nargsort(ascending=False): reverse, argsort ascending, map back, reverse */
    if (n < 2) {
        for (size_t i = 0; i < n; i++) perm[i] = (uint32_t)i;
        return;
    }
    double *rv = malloc(n * sizeof *rv);
    uint32_t *p = malloc(n * sizeof *p);
    if (!rv || !p) {
        free(rv);
        free(p);
        for (size_t i = 0; i < n; i++) perm[i] = (uint32_t)i;
        return;
    }
    for (size_t i = 0; i < n; i++) rv[i] = v[n - 1 - i];
    hta_argsort_numpy(rv, n, p);
    for (size_t i = 0; i < n; i++) perm[n - 1 - i] = (uint32_t)(n - 1 - p[i]);
    free(rv);
    free(p);
}

/* ---- thread-safe stable index sort ---- */

int hta_stable_sort_idx_i64(uint32_t *idx, size_t n, const int64_t *key) {
    if (n < 2) return 0;
    uint32_t *tmp = malloc(n * sizeof *tmp);
    if (!tmp) return -1;
    /* bottom-up merge sort; runs of 16 by insertion sort first */
    const size_t RUN = 16;
    for (size_t lo = 0; lo < n; lo += RUN) {
        size_t hi = lo + RUN < n ? lo + RUN : n;
        for (size_t k = lo + 1; k < hi; k++) {
            uint32_t x = idx[k];
            size_t m = k;
            while (m > lo && key[x] < key[idx[m - 1]]) {
                idx[m] = idx[m - 1];
                m--;
            }
            idx[m] = x;
        }
    }
    uint32_t *a = idx, *b = tmp;
    for (size_t w = RUN; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi) b[o++] = key[a[j]] < key[a[i]] ? a[j++] : a[i++];
            while (i < mid) b[o++] = a[i++];
            while (j < hi) b[o++] = a[j++];
        }
        uint32_t *s = a;
        a = b;
        b = s;
    }
    if (a != idx) memcpy(idx, a, n * sizeof *idx);
    free(tmp);
    return 0;
}

int hta_argsort_numpy_i64(const int64_t *v, size_t n, uint32_t *perm) {
    double *d = malloc((n ? n : 1) * sizeof *d);
    if (!d) return -1;
    for (size_t k = 0; k < n; k++) d[k] = (double)v[k];
    hta_argsort_numpy(d, n, perm);
    free(d);
    return 0;
}

int hta_json_quote(const char *s, hta_put_fn put, void *ctx) {
    int rc = put(ctx, "\"", 1);
    const char *run = s; /* bytes that need no escape go out in one call */
    for (const char *p = s; !rc && *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c != '"' && c != '\\' && c >= 0x20) continue;
        char e[8];
        size_t en = 2;
        if (c < 0x20) en = (size_t)snprintf(e, sizeof e, "\\u%04x", c);
        else e[0] = '\\', e[1] = (char)c;
        if (p > run) rc = put(ctx, run, (size_t)(p - run));
        if (!rc) rc = put(ctx, e, en);
        run = p + 1;
    }
    if (!rc && *run) rc = put(ctx, run, strlen(run));
    return rc ? rc : put(ctx, "\"", 1);
}
