/* Building blocks every layer uses: pandas statistics, interval unions,
 * numpy-compatible sorts, JSON quoting (analyses.md §0-§2, Appendix A). */
#ifndef HTA_UTIL_H
#define HTA_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "hta/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ns -> us as a double, exact to the double's precision even for absolute
 * times past 2^53 ns (~104 days since the epoch would already be past it):
 * the whole microseconds and the fraction are converted apart, instead of
 * rounding the ns to a multiple of 256 first. */
static inline double hta_ns_to_us(int64_t ns) {
    int64_t whole = ns / 1000, frac = ns % 1000;
    return (double)whole + (double)frac / 1000.0;
}

/* Runs worker(arg) on up to `threads` threads (0: the CPUs), no more than `items` nor 64, the calling
 * thread being one of them, and returns when all are done (how many ran).  The workers take the items from a
 * counter they share: a thread that cannot be started leaves its share to the others. */
size_t hta_parallel(int threads, size_t items, void *(*worker)(void *), void *arg);
/* hta_parallel with the counter kept here: item(arg, k) for every k in [0, items), each item taken by the
 * first thread free (items of unequal cost: files, parts of a file). */
size_t hta_parallel_items(int threads, size_t items, void (*item)(void *arg, size_t k), void *arg);
/* The threads a run takes for `threads` asked (0: the CPUs). */
size_t hta_threads(int threads);

/* pandas round(x, d): half to even on x * 10^d. */
double hta_round(double x, int decimals);

/* pandas describe() over v[0..n) (v is sorted in place). std is the sample
 * standard deviation (NaN when n <= 1); quantiles interpolate linearly. */
typedef struct hta_describe {
    double count, mean, std, min, p25, p50, p75, max;
} hta_describe;
void hta_describe_values(double *v, size_t n, hta_describe *out);
double hta_quantile_sorted(const double *v, size_t n, double q);

/* Union of intervals [ts, ts + dur) (analyses.md §2): sorts by start, merges
 * overlapping and touching ones.  Writes merged starts/ends (capacity n) and
 * their count *nu.  Inputs are int64 ns. */
hta_status hta_interval_union(const int64_t *ts, const int64_t *dur, size_t n, int64_t *ustart, int64_t *uend,
                              size_t *nu, hta_error *err);
/* The same union in place: iv holds n intervals as (start, end) pairs (iv[2i], iv[2i + 1]); they are sorted
 * by start and the first *nu pairs become the union.  tmp: room for n pairs for the sort (NULL: taken and
 * given back here).  For a caller whose intervals are its own scratch: no second copy of them. */
hta_status hta_interval_union_pairs(int64_t *iv, size_t n, int64_t *tmp, size_t *nu, hta_error *err);
/* Total length of the union of intervals already merged and sorted. */
int64_t hta_union_length(const int64_t *ustart, const int64_t *uend, size_t n);
/* Length of the intersection of two merged, sorted interval lists. */
int64_t hta_union_overlap(const int64_t *as, const int64_t *ae, size_t na, const int64_t *bs,
                          const int64_t *be, size_t nb);


/* numpy's argsort(kind="quicksort") (an unstable introsort; analyses.md
 * Appendix A) of v[0..n) into perm (ascending; NaN not supported).  Only for
 * reproducing the tie order of HTA's single-key pandas sorts. */
void hta_argsort_numpy(const double *v, size_t n, uint32_t *perm);
/* pandas sort_values(ascending=False) on one key: the order HTA gets. */
hta_status hta_argsort_numpy_desc(const double *v, size_t n, uint32_t *perm, hta_error *err);

/* Stable sort of idx[0..n) by key[idx[i]] ascending (ties keep input order);
 * a merge sort, thread safe. */
hta_status hta_stable_sort_idx_i64(uint32_t *idx, size_t n, const int64_t *key, hta_error *err);

/* qsort's answer (-1, 0, 1) for integer x against y, and for keys compared in turn, the first that differs
 * deciding (HTA_CMP2 .. 4: x1, y1, x2, y2, ...; a key in descending order is given as y, x): a comparator
 * is one line, its order read off it.  Integers only (a NaN would compare equal). */
#define HTA_CMP(x, y) (((x) > (y)) - ((x) < (y)))
#define HTA_CMP2(x1, y1, x2, y2) (HTA_CMP(x1, y1) ? HTA_CMP(x1, y1) : HTA_CMP(x2, y2))
#define HTA_CMP3(x1, y1, x2, y2, x3, y3) (HTA_CMP(x1, y1) ? HTA_CMP(x1, y1) : HTA_CMP2(x2, y2, x3, y3))
#define HTA_CMP4(x1, y1, x2, y2, x3, y3, x4, y4) \
    (HTA_CMP(x1, y1) ? HTA_CMP(x1, y1) : HTA_CMP3(x2, y2, x3, y3, x4, y4))

/* A qsort comparator, static int NAME(const void *, const void *), over elements of type T, from their
 * order: an expression of x and y, pointers to the two elements (HTA_CMP2 .. 4 of their keys). */
#define HTA_QSORT_CMP(NAME, T, ORDER)                    \
    static int NAME(const void *a_, const void *b_) {   \
        const T *x = a_, *y = b_;                       \
        return ORDER;                                   \
    }

/* Stable radix sort of keys k[0..n) ascending, each value v[i] (v may be NULL) moving with its key; tk
 * and tv (NULL with v) are room for n more of each.  Keys of int64 times: hta_rsort_key. */
void hta_rsort(uint64_t *k, uint32_t *v, size_t n, uint64_t *tk, uint32_t *tv);
static inline uint64_t hta_rsort_key(int64_t x) { return (uint64_t)x ^ (UINT64_C(1) << 63); }
static inline int64_t hta_rsort_unkey(uint64_t k) { return (int64_t)(k ^ (UINT64_C(1) << 63)); }
/* The same, stably, over n records of 16 bytes that start with an int64 key (a time, or a pair of times),
 * in place; tmp: room for n records (no keys beside them). */
void hta_rsort_rec16(void *recs, size_t n, void *tmp);
/* The same, stably, over n ids whose keys are not beside them: id x's key is the int64 at base + x * stride
 * (a field of an array of records, read in place, any alignment); tmp: room for n ids.  For sorting
 * indices into a large array with no room for a copy of their keys. */
void hta_rsort_ids(uint32_t *id, size_t n, uint32_t *tmp, const void *base, size_t stride);

/* The k-th smallest (0-based, k < n) of x[0 .. n), the sorted array's x[k], found in place in linear time
 * (expected): x is reordered so that x[0 .. k) <= x[k] <= x[k + 1 .. n).  Doubles: no NaN. */
int64_t hta_select_i64(int64_t *x, size_t n, size_t k);
double hta_select_dbl(double *x, size_t n, size_t k);

/* numpy's quicksort order of int64 keys (HTA's tie order; exact below 2^53). */
hta_status hta_argsort_numpy_i64(const int64_t *v, size_t n, uint32_t *perm, hta_error *err);

/* Binary search: the first i in [0, n) for which the condition BELOW (an
 * expression in i) is false, given that it holds for a prefix and fails for
 * the rest -- C++'s lower_bound.  Every sorted lookup of the library uses it:
 *     size_t k = HTA_LOWER_BOUND(n, i, v[i] < x);   (first v[i] >= x) */
#define HTA_LOWER_BOUND(n, i, BELOW)                                           \
    __extension__({                                                            \
        size_t lo_ = 0, hi_ = (n);                                             \
        while (lo_ < hi_) {                                                    \
            size_t i = lo_ + (hi_ - lo_) / 2;                                  \
            if (BELOW) lo_ = i + 1;                                            \
            else hi_ = i;                                                      \
        }                                                                      \
        lo_;                                                                   \
    })

/* Appends a printf-formatted line to a growable list of strings (the notes
 * a result, a plan or a graph carries; the library never prints them itself).
 * Returns 0, or -1 when out of memory (the list stays as it was). */
int hta_strlist_vadd(char ***list, size_t *n, const char *fmt, va_list ap);
int hta_strlist_add(char ***list, size_t *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A growable byte buffer for packed data (results sent between MPI processes): appends that run out of
 * memory set oom and stop; the caller checks oom once at the end and frees p. */
typedef struct hta_bytes {
    char *p;
    size_t n, cap;
    int oom;
} hta_bytes;
void hta_bytes_put(hta_bytes *b, const void *x, size_t n);
static inline void hta_bytes_put_u64(hta_bytes *b, uint64_t v) { hta_bytes_put(b, &v, sizeof v); }

/* Writes s as a JSON string literal (quotes and escapes) through put, which
 * returns non-zero to stop.  Returns the first non-zero put result, or 0. */
typedef int (*hta_put_fn)(void *ctx, const char *s, size_t n);
int hta_json_quote(const char *s, hta_put_fn put, void *ctx);

#ifdef __cplusplus
}
#endif
#endif
