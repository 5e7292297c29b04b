/* Unit tests of include/hta/util.h: numpy's argsort tie order, the stable index
 * sort, interval unions, pandas rounding and describe(). */
#include <stdlib.h>

#include "hta/util.h"
#include "unit.h"

/* ---- numpy's quicksort argsort: expected permutations from the real numpy 1.24
 * (tests/unit/numpy_vectors.py prints these tables).  Keys are digit strings. */
typedef struct perm_case {
    const char *keys;
    const uint32_t *perm;
} perm_case;

static const perm_case ASC[] = {
    /* asc n=10 k=3 */
    {"2101120000",
     (const uint32_t[]){
         2, 6, 7, 8, 9, 1, 3, 4, 0, 5}},
    /* asc n=16 k=2 */
    {"0110110101110110",
     (const uint32_t[]){
         0, 3, 6, 8, 12, 15, 1, 2, 4, 5, 7, 9, 10, 11, 13, 14}},
    /* asc n=17 k=2 */
    {"11100011011011100",
     (const uint32_t[]){
         8, 11, 15, 5, 16, 3, 4, 6, 7, 2, 9, 10, 1, 12, 13, 14, 0}},
    /* asc n=18 k=3 */
    {"210022220002111012",
     (const uint32_t[]){
         8, 2, 3, 15, 9, 10, 1, 14, 13, 12, 16, 0, 7, 6, 5, 4, 11, 17}},
    /* asc n=40 k=4 */
    {"3101100300101111210231210121312122003020",
     (const uint32_t[]){
         39, 34, 11, 24, 9, 18, 37, 8, 5, 2, 6, 35, 25, 31, 23, 21, 27, 14, 15, 13, 12, 10, 4, 3, 1, 17, 29,
         30, 33, 32, 19, 26, 22, 38, 16, 20, 36, 7, 28, 0}},
    /* asc n=40 k=1 */
    {"0000000000000000000000000000000000000000",
     (const uint32_t[]){
         0, 22, 23, 24, 25, 26, 27, 28, 21, 29, 31, 32, 33, 34, 35, 36, 37, 30, 20, 19, 18, 1, 2, 3, 4, 5,
         6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 38, 39}},
    /* asc n=100 k=10 */
    {"4684154053330492540027981493403080875248588566640379393465087414476683470245004735756476294131973746",
     (const uint32_t[]){
         77, 33, 58, 31, 29, 72, 7, 48, 76, 19, 18, 12, 24, 62, 93, 4, 91, 15, 37, 20, 88, 73, 80, 96, 92,
         30, 69, 49, 52, 9, 10, 11, 54, 27, 55, 98, 74, 63, 64, 70, 78, 85, 90, 61, 47, 0, 25, 17, 38, 13,
         6, 28, 3, 8, 40, 57, 43, 83, 81, 36, 16, 75, 5, 87, 45, 1, 84, 46, 99, 66, 56, 67, 44, 82, 60, 50,
         79, 35, 86, 21, 95, 65, 71, 97, 2, 41, 42, 68, 39, 34, 32, 23, 59, 89, 51, 14, 94, 22, 26, 53}},
    /* asc n=257 k=5 */
    {"4443131304132124100023430410124241003110404240121440111143024034204403310312024003110400021404334222"
     "1200133200414444411024024122430311421032213130211433211014242224243202431102410320320031043004001113"
     "003323021321013004343043344423301214000412321030213334403",
     (const uint32_t[]){
         41, 188, 58, 102, 103, 212, 51, 108, 109, 231, 185, 45, 184, 245, 84, 39, 61, 119, 215, 92, 191,
         80, 79, 236, 86, 76, 87, 88, 192, 72, 194, 68, 237, 238, 65, 195, 122, 168, 35, 216, 17, 18, 19,
         200, 137, 174, 206, 201, 8, 178, 24, 27, 34, 221, 181, 247, 155, 145, 130, 255, 172, 156, 154, 153,
         173, 234, 148, 90, 177, 143, 141, 232, 100, 136, 104, 187, 133, 132, 111, 125, 117, 118, 147, 213,
         83, 28, 13, 46, 38, 16, 48, 10, 198, 26, 52, 53, 54, 55, 6, 244, 197, 4, 37, 211, 240, 196, 33, 82,
         71, 74, 249, 208, 140, 139, 20, 135, 204, 31, 175, 146, 12, 152, 210, 158, 160, 161, 162, 169, 164,
         14, 207, 167, 29, 77, 75, 89, 64, 233, 59, 97, 98, 99, 101, 241, 107, 47, 243, 228, 180, 248, 127,
         126, 120, 123, 43, 183, 182, 209, 186, 203, 171, 202, 214, 179, 205, 199, 190, 256, 218, 81, 73,
         70, 69, 62, 57, 242, 246, 166, 36, 250, 21, 251, 11, 252, 7, 5, 3, 23, 94, 106, 105, 220, 151, 150,
         144, 142, 95, 223, 131, 138, 224, 229, 230, 129, 225, 239, 226, 222, 227, 217, 219, 253, 254, 235,
         0, 189, 66, 63, 60, 56, 50, 49, 44, 42, 40, 32, 30, 25, 22, 15, 9, 2, 1, 67, 78, 85, 91, 176, 170,
         165, 163, 159, 157, 149, 134, 193, 124, 116, 115, 114, 113, 112, 110, 96, 93, 121, 128}},
};
static const perm_case DESC[] = {
    /* desc n=17 k=2 */
    {"01110010111110111",
     (const uint32_t[]){
         8, 1, 15, 14, 12, 11, 10, 9, 16, 6, 3, 2, 7, 5, 4, 13, 0}},
    /* desc n=40 k=5 */
    {"3400242200011301212432424413132113322410",
     (const uint32_t[]){
         37, 5, 25, 24, 22, 1, 19, 0, 13, 34, 33, 29, 27, 20, 7, 21, 30, 6, 36, 35, 23, 4, 18, 16, 38, 11,
         12, 26, 15, 28, 17, 31, 32, 2, 14, 3, 8, 9, 10, 39}},
    /* desc n=100 k=10 */
    {"1418227056310533861134979200429824314930865054974751207861748746498709245078741060858293853103314545",
     (const uint32_t[]){
         37, 24, 46, 30, 86, 65, 69, 22, 31, 16, 75, 66, 82, 84, 60, 88, 3, 40, 55, 61, 23, 74, 67, 54, 76,
         49, 47, 6, 58, 56, 41, 63, 17, 80, 9, 42, 72, 83, 89, 44, 97, 50, 99, 8, 13, 71, 96, 77, 21, 64,
         28, 59, 33, 62, 48, 45, 36, 1, 98, 34, 38, 14, 15, 87, 90, 20, 93, 94, 10, 25, 52, 70, 4, 5, 29,
         85, 32, 91, 11, 2, 95, 0, 35, 78, 51, 18, 57, 19, 81, 26, 53, 27, 68, 92, 12, 39, 73, 7, 79, 43}},
};
static const perm_case I64[] = {
    /* i64 n=60 k=6 (1.7e15 + 1000 * digit) */
    {"311511521055531355425142345051040214234022532041503514535220",
     (const uint32_t[]){
         59, 49, 45, 39, 32, 30, 9, 27, 52, 47, 34, 21, 14, 29, 8, 1, 5, 2, 4, 36, 58, 40, 41, 23, 44, 19,
         57, 7, 33, 43, 50, 37, 55, 13, 0, 15, 24, 35, 31, 38, 25, 22, 53, 46, 18, 56, 16, 54, 17, 51, 3,
         48, 6, 11, 42, 26, 10, 28, 20, 12}},
    /* i64 n=130 k=4 (1.7e15 + 1000 * digit) */
    {"2121332213121312113123300102212222230230302011002313230223333233233200232311132020113133013213011203"
     "203230011203110131310131211132",
     (const uint32_t[]){
         69, 26, 110, 106, 105, 68, 101, 36, 98, 39, 41, 43, 46, 47, 94, 54, 88, 81, 24, 23, 79, 114, 120,
         123, 44, 45, 125, 95, 126, 50, 113, 76, 89, 3, 127, 85, 83, 82, 1, 96, 92, 8, 121, 112, 19, 115,
         25, 17, 16, 29, 75, 108, 117, 14, 119, 12, 74, 10, 107, 72, 70, 78, 0, 91, 97, 100, 109, 124, 80,
         103, 64, 37, 42, 67, 34, 33, 32, 31, 30, 28, 27, 20, 15, 11, 7, 6, 2, 48, 52, 129, 61, 55, 56, 21,
         77, 18, 116, 63, 118, 13, 128, 9, 122, 65, 73, 5, 4, 66, 22, 111, 90, 53, 51, 93, 49, 87, 86, 40,
         38, 62, 99, 102, 84, 104, 57, 58, 59, 60, 35, 71}},
};

#define NCASES(a) (sizeof(a) / sizeof((a)[0]))

static void argsort_numpy_ties(void) {
    for (size_t c = 0; c < NCASES(ASC); c++) {
        size_t n = strlen(ASC[c].keys);
        double v[300];
        uint32_t p[300];
        for (size_t i = 0; i < n; i++) v[i] = ASC[c].keys[i] - '0';
        hta_argsort_numpy(v, n, p);
        CHECK_EQ_U32S(p, ASC[c].perm, n);
    }
}

static void argsort_numpy_desc_ties(void) {
    for (size_t c = 0; c < NCASES(DESC); c++) {
        size_t n = strlen(DESC[c].keys);
        double v[300];
        uint32_t p[300];
        for (size_t i = 0; i < n; i++) v[i] = DESC[c].keys[i] - '0';
        CHECK_EQ_I64(hta_argsort_numpy_desc(v, n, p, NULL), HTA_OK);
        CHECK_EQ_U32S(p, DESC[c].perm, n);
    }
}

static void argsort_numpy_i64_ties(void) {
    for (size_t c = 0; c < NCASES(I64); c++) {
        size_t n = strlen(I64[c].keys);
        int64_t v[300];
        uint32_t p[300];
        for (size_t i = 0; i < n; i++) v[i] = 1700000000000000 + 1000 * (I64[c].keys[i] - '0');
        CHECK_EQ_I64(hta_argsort_numpy_i64(v, n, p, NULL), HTA_OK);
        CHECK_EQ_U32S(p, I64[c].perm, n);
    }
}

static void argsort_numpy_tiny(void) {
    uint32_t p[2] = {7, 7};
    double one = 5;
    hta_argsort_numpy(&one, 0, p);
    hta_argsort_numpy(&one, 1, p);
    CHECK_EQ_I64(p[0], 0);
    CHECK_EQ_I64(hta_argsort_numpy_desc(&one, 1, p, NULL), HTA_OK);
    CHECK_EQ_I64(p[0], 0);
    double two[2] = {2, 1};
    CHECK_EQ_I64(hta_argsort_numpy_desc(two, 2, p, NULL), HTA_OK);
    CHECK_EQ_U32S(p, ((uint32_t[]){0, 1}), 2);
    hta_argsort_numpy(two, 2, p);
    CHECK_EQ_U32S(p, ((uint32_t[]){1, 0}), 2);
}

/* ---- the stable index sort, against an obviously stable insertion sort ---- */

static uint64_t lcg(uint64_t *s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

static void stable_sort_idx_i64(void) {
    static const size_t sizes[] = {0, 1, 2, 15, 16, 17, 31, 32, 33, 100, 1000};
    uint64_t seed = 1;
    for (size_t c = 0; c < NCASES(sizes); c++) {
        size_t n = sizes[c];
        int64_t key[1000];
        uint32_t idx[1000], ref[1000];
        for (size_t i = 0; i < n; i++) {
            uint64_t r = lcg(&seed) % 7; /* many ties, and the extremes */
            key[i] = r == 0 ? INT64_MIN : r == 6 ? INT64_MAX : (int64_t)r - 3;
        }
        /* the input order is a shuffled permutation, not 0..n-1: ties keep *it* */
        for (size_t i = 0; i < n; i++) idx[i] = (uint32_t)i;
        for (size_t i = n; i > 1; i--) {
            size_t j = lcg(&seed) % i;
            uint32_t t = idx[i - 1];
            idx[i - 1] = idx[j];
            idx[j] = t;
        }
        memcpy(ref, idx, n * sizeof *idx);
        for (size_t i = 1; i < n; i++)
            for (size_t j = i; j > 0 && key[ref[j]] < key[ref[j - 1]]; j--) {
                uint32_t t = ref[j];
                ref[j] = ref[j - 1];
                ref[j - 1] = t;
            }
        CHECK_EQ_I64(hta_stable_sort_idx_i64(idx, n, key, NULL), HTA_OK);
        CHECK_EQ_U32S(idx, ref, n);
    }
}

/* ---- interval unions ---- */

/* union of n intervals (ts, dur) -> "[s,e) [s,e)" */
static const char *union_text(const int64_t *ts, const int64_t *dur, size_t n, int64_t *len) {
    static char out[256];
    int64_t us[16], ue[16];
    size_t m = 0;
    if (hta_interval_union(ts, dur, n, us, ue, &m, NULL) != HTA_OK) return "error";
    size_t o = 0;
    out[0] = 0;
    for (size_t i = 0; i < m; i++)
        o += (size_t)snprintf(out + o, sizeof out - o, "%s[%" PRId64 ",%" PRId64 ")", i ? " " : "", us[i], ue[i]);
    *len = hta_union_length(us, ue, m);
    return out;
}

/* The radix sorts against a plain stable insertion sort: keys that span one digit, many digits, negative
 * times and INT64_MIN/MAX, with ties, so that a lost tie order or a wrong sign shows. */
static void radix_sorts(void) {
    enum { N = 3000 };
    static int64_t key[N];
    static struct { int64_t t; uint64_t id; } rec[N], ref[N], tmp[N];
    static uint64_t k[2 * N];
    static uint32_t v[2 * N], ids[2 * N];
    /* hta_rsort_ids reads its keys in place: an int64 at an odd offset of 13-byte records */
    static struct __attribute__((packed)) { char pad[5]; int64_t t; } far[N];
    uint64_t x = 88172645463325252ull;
    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < N; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            int64_t t = round == 0 ? (int64_t)(x % 7)                    /* one digit, many ties */
                        : round == 1 ? (int64_t)(x % 100000) - 50000     /* negative and positive */
                        : round == 2 ? (int64_t)x                         /* every digit */
                                     : (i % 3 ? INT64_MIN + (int64_t)(x % 3) : INT64_MAX - (int64_t)(x % 3));
            key[i] = t;
            rec[i].t = t, rec[i].id = (uint64_t)i;
            k[i] = hta_rsort_key(t), v[i] = (uint32_t)i;
            far[i].t = t, ids[i] = (uint32_t)i;
        }
        memcpy(ref, rec, sizeof rec);
        for (int i = 1; i < N; i++) /* stable insertion sort: the reference */
            for (int j = i; j > 0 && ref[j].t < ref[j - 1].t; j--) tmp[0] = ref[j], ref[j] = ref[j - 1], ref[j - 1] = tmp[0];
        hta_rsort_rec16(rec, N, tmp);
        hta_rsort(k, v, N, k + N, v + N);
        hta_rsort_ids(ids, N, ids + N, (const char *)far + offsetof(__typeof__(far[0]), t), sizeof far[0]);
        int same = 1;
        for (int i = 0; i < N; i++)
            same &= rec[i].t == ref[i].t && rec[i].id == ref[i].id && hta_rsort_unkey(k[i]) == ref[i].t &&
                    v[i] == ref[i].id && key[v[i]] == ref[i].t && ids[i] == ref[i].id;
        CHECK_EQ_I64(same, 1);
    }
}

static int cmp_i64_asc(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* hta_select_i64 / _dbl against a full sort, at every k of small arrays and at chosen k of large ones, on
 * shapes that trouble a quickselect's pivots (sorted, reversed, organ pipe, all equal, few values), and the
 * order they leave around x[k]. */
static void select_kth(void) {
    enum { N = 2000 };
    static int64_t v[N], w[N], sorted[N];
    static double d[N];
    uint64_t r = 0x2545f4914f6cdd1dull;
    int ok = 1;
    for (int shape = 0; shape < 6; shape++) {
        for (size_t n = 1; n <= N; n = n < 40 ? n + 1 : n * 3) {
            for (size_t i = 0; i < n; i++) {
                r ^= r << 13, r ^= r >> 7, r ^= r << 17;
                v[i] = shape == 0   ? (int64_t)(r % 1000003) - 500000
                       : shape == 1 ? (int64_t)i
                       : shape == 2 ? (int64_t)(n - i)
                       : shape == 3 ? (int64_t)(i < n / 2 ? i : n - i)
                       : shape == 4 ? 7
                                    : (int64_t)(r % 3);
            }
            memcpy(sorted, v, n * sizeof *v);
            qsort(sorted, n, sizeof *sorted, cmp_i64_asc);
            size_t ks[] = {0, n / 2, n - 1, n / 3, (n - 1) / 2};
            size_t nk = n <= 40 ? n : sizeof ks / sizeof *ks;
            for (size_t q = 0; q < nk; q++) {
                size_t k = n <= 40 ? q : ks[q];
                memcpy(w, v, n * sizeof *v);
                int64_t got = hta_select_i64(w, n, k);
                ok &= got == sorted[k] && w[k] == got;
                for (size_t i = 0; i < n; i++) ok &= i < k ? w[i] <= got : w[i] >= got;
                for (size_t i = 0; i < n; i++) d[i] = (double)v[i] / 4;
                ok &= hta_select_dbl(d, n, k) == (double)sorted[k] / 4;
            }
        }
    }
    CHECK_EQ_I64(ok, 1);
}

static void interval_union(void) {
    int64_t len;
    CHECK_EQ_STR(union_text(NULL, NULL, 0, &len), "");
    CHECK_EQ_I64(len, 0);
    CHECK_EQ_STR(union_text((int64_t[]){5}, (int64_t[]){10}, 1, &len), "[5,15)");
    CHECK_EQ_I64(len, 10);
    /* touching intervals merge */
    CHECK_EQ_STR(union_text((int64_t[]){0, 10}, (int64_t[]){10, 10}, 2, &len), "[0,20)");
    CHECK_EQ_I64(len, 20);
    /* a gap of 1 does not */
    CHECK_EQ_STR(union_text((int64_t[]){0, 11}, (int64_t[]){10, 9}, 2, &len), "[0,10) [11,20)");
    CHECK_EQ_I64(len, 19);
    /* nested, and a short one after a long one that covers it */
    CHECK_EQ_STR(union_text((int64_t[]){0, 10, 30, 99}, (int64_t[]){100, 10, 10, 1}, 4, &len), "[0,100)");
    CHECK_EQ_I64(len, 100);
    /* unsorted input, equal starts, negative times */
    CHECK_EQ_STR(union_text((int64_t[]){50, 0, 0, 5, -20}, (int64_t[]){10, 5, 2, 10, 10}, 5, &len),
                 "[-20,-10) [0,15) [50,60)");
    CHECK_EQ_I64(len, 35);
    /* zero-length intervals: alone they stay (length 0), inside another they vanish */
    CHECK_EQ_STR(union_text((int64_t[]){3, 7}, (int64_t[]){0, 2}, 2, &len), "[3,3) [7,9)");
    CHECK_EQ_I64(len, 2);
    CHECK_EQ_STR(union_text((int64_t[]){0, 4, 10}, (int64_t[]){10, 0, 0}, 3, &len), "[0,10)");
    CHECK_EQ_I64(len, 10);
}

static int64_t overlap(const int64_t *a, size_t na, const int64_t *b, size_t nb) {
    int64_t as[8] = {0}, ae[8] = {0}, bs[8] = {0}, be[8] = {0};
    for (size_t i = 0; i < na; i++) as[i] = a[2 * i], ae[i] = a[2 * i + 1];
    for (size_t i = 0; i < nb; i++) bs[i] = b[2 * i], be[i] = b[2 * i + 1];
    return hta_union_overlap(as, ae, na, bs, be, nb);
}

static void union_overlap(void) {
    const int64_t a[] = {0, 10, 20, 30};
    CHECK_EQ_I64(overlap(a, 0, a, 0), 0);
    CHECK_EQ_I64(overlap(a, 2, a, 0), 0);
    CHECK_EQ_I64(overlap(a, 0, a, 2), 0);
    CHECK_EQ_I64(overlap(a, 2, a, 2), 20);                                   /* identical */
    CHECK_EQ_I64(overlap(a, 1, (int64_t[]){10, 20}, 1), 0);                  /* touching */
    CHECK_EQ_I64(overlap((int64_t[]){0, 100}, 1, (int64_t[]){10, 20, 30, 40}, 2), 20); /* nested */
    CHECK_EQ_I64(overlap((int64_t[]){10, 20, 30, 40}, 2, (int64_t[]){0, 100}, 1), 20);
    CHECK_EQ_I64(overlap(a, 2, (int64_t[]){5, 25}, 1), 10);                  /* one spans a gap */
    CHECK_EQ_I64(overlap(a, 2, (int64_t[]){10, 20}, 1), 0);                  /* exactly the gap */
    CHECK_EQ_I64(overlap((int64_t[]){0, 5, 6, 7, 8, 9}, 3, (int64_t[]){4, 8, 8, 100}, 2), 1 + 1 + 1);
    CHECK_EQ_I64(overlap((int64_t[]){0, 10}, 1, (int64_t[]){0, 0, 3, 3}, 2), 0); /* zero length */
}

/* ---- pandas round (numpy's: rint(x * 10^d) / 10^d, half to even); values from numpy 1.24 ---- */

static void round_half_to_even(void) {
    static const struct { double x; int d; double want; } c[] = {
        {2.5, 0, 2.0}, {3.5, 0, 4.0}, {-2.5, 0, -2.0}, {0.5, 0, 0.0}, {1.5, 0, 2.0},
        {0.125, 2, 0.12}, {0.375, 2, 0.38}, {-0.125, 2, -0.12},
        {1.005, 2, 1.0},   /* 100.49999999999999 after the multiply */
        {2.675, 2, 2.68},  /* 267.5 after the multiply */
        {53.555, 2, 53.56}, {47.00000000000001, 2, 47.0}, {0.045, 2, 0.04},
        {1092.5455, 3, 1092.546}, {12345.6785, 3, 12345.678}, {99.95, 1, 100.0},
    };
    for (size_t i = 0; i < NCASES(c); i++) CHECK_EQ_DBL(hta_round(c[i].x, c[i].d), c[i].want);
    CHECK(isnan(hta_round(NAN, 2)));
}

/* ---- pandas describe(): values from numpy 1.24 (mean, std ddof=1, linear percentiles) ---- */

static void check_describe(double *v, size_t n, const double want[8]) {
    hta_describe d;
    hta_describe_values(v, n, &d);
    CHECK_EQ_DBL(d.count, want[0]);
    CHECK_NEAR(d.mean, want[1], 1e-15);
    CHECK_NEAR(d.std, want[2], 1e-15);
    CHECK_EQ_DBL(d.min, want[3]);
    CHECK_NEAR(d.p25, want[4], 1e-15);
    CHECK_NEAR(d.p50, want[5], 1e-15);
    CHECK_NEAR(d.p75, want[6], 1e-15);
    CHECK_EQ_DBL(d.max, want[7]);
}

static void describe_values(void) {
    check_describe((double[]){55, 30}, 2, (const double[]){2, 42.5, 17.67766952966369, 30, 36.25, 42.5, 48.75, 55});
    check_describe((double[]){34}, 1, (const double[]){1, 34, NAN, 34, 34, 34, 34, 34});
    check_describe(NULL, 0, (const double[]){0, NAN, NAN, NAN, NAN, NAN, NAN, NAN});
    check_describe((double[]){3.5, 0.1, 7.25, 0.2, 100.0, 0.3, 2.0, 7.25, 41.0, 0.7}, 10,
                   (const double[]){10, 16.229999999999997, 31.918082649181798, 0.1, 0.39999999999999997, 2.75,
                                    7.25, 100});
}

static void quantile_sorted(void) {
    const double v[] = {0.1, 0.2, 0.3, 0.7, 2.0, 3.5, 7.25, 7.25, 41.0, 100.0};
    CHECK(isnan(hta_quantile_sorted(v, 0, 0.5)));
    CHECK_EQ_DBL(hta_quantile_sorted(v, 1, 0.75), 0.1);
    CHECK_EQ_DBL(hta_quantile_sorted(v, 10, 0), 0.1);
    CHECK_EQ_DBL(hta_quantile_sorted(v, 10, 1), 100.0);
    CHECK_NEAR(hta_quantile_sorted(v, 10, 0.1), 0.19, 1e-15);
    CHECK_NEAR(hta_quantile_sorted(v, 10, 0.9), 46.89999999999998, 1e-15);
    CHECK_NEAR(hta_quantile_sorted(v, 10, 0.95), 73.44999999999993, 1e-15);
    CHECK_NEAR(hta_quantile_sorted(v, 10, 0.333), 0.6988000000000001, 1e-15);
}

UNIT_MAIN(T(argsort_numpy_ties), T(argsort_numpy_desc_ties), T(argsort_numpy_i64_ties), T(argsort_numpy_tiny),
          T(stable_sort_idx_i64), T(radix_sorts), T(select_kth), T(interval_union), T(union_overlap), T(round_half_to_even),
          T(describe_values), T(quantile_sorted))
