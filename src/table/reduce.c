/* What the reduce functions of the analyses share (hta/table.h, "reducing parts"; docs/scaling.md): taking
 * a partial table out of the appended parts, checked against its declaration (parts that travelled between
 * processes come back without one), summing a count, ordering rows as the whole run orders them, and
 * carrying the parts' notes over, folding a part into a table summed per key as it comes.  Cells move bit
 * for bit, so a reduced result prints exactly as one computed whole. */
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "hta/table.h"

hta_status hta_result_take(hta_result *r, const hta_table_def *d, hta_table **out, hta_error *err) {
    *out = NULL;
    size_t i = 0;
    while (i < r->n && strcmp(r->tables[i]->name, d->name)) i++;
    if (i == r->n) return hta_fail(err, HTA_EINVAL, "the parts have no table `%s`", d->name);
    hta_table *t = r->tables[i];
    if (!hta_table_is(t, d)) return hta_fail(err, HTA_EINVAL, "table `%s` of the parts is not the one declared", d->name);
    memmove(r->tables + i, r->tables + i + 1, (r->n - i - 1) * sizeof *r->tables);
    r->n--;
    t->def = d;
    t->ndyn = 0;
    *out = t;
    return HTA_OK;
}

hta_table *hta_result_table_in(hta_result *r, const hta_table_def *d) {
    hta_table *t = hta_result_find(r, d->name);
    if (t) return t;
    if (!(t = hta_table_from_def(d)) || hta_result_add(r, t)) return hta_table_free(t), NULL;
    return t;
}

hta_status hta_result_copy_notes(hta_result *dst, const hta_result *src, hta_error *err) {
    for (size_t i = 0; i < src->nnotes; i++)
        if (hta_result_note(dst, "%s", src->notes[i])) return hta_oom(err);
    return HTA_OK;
}

int64_t hta_table_sum_int(const hta_table *t, int col) {
    int64_t s = 0;
    for (size_t r = 0; r < t->nrows; r++) s += hta_table_get_int(t, r, col);
    return s;
}

/* ---- stable row order ---- */

typedef struct sorter {
    const hta_table *t;
    hta_row_cmp cmp;
    void *ctx;
} sorter;

/* Bottom-up merge sort of the row numbers a[0..n) through b: equal rows keep their order. */
static void merge_sort(const sorter *s, size_t *a, size_t *b, size_t n) {
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t x = lo, y = mid, k = lo;
            while (x < mid || y < hi) {
                int takex = y >= hi || (x < mid && s->cmp(s->t, a[x], a[y], s->ctx) <= 0);
                b[k++] = takex ? a[x++] : a[y++];
            }
        }
        memcpy(a, b, n * sizeof *a);
    }
}

static size_t cell_size(hta_col_type ty) {
    return ty == HTA_COL_INT ? sizeof(int64_t) : ty == HTA_COL_FLOAT ? sizeof(double) : sizeof(char *);
}

hta_status hta_table_sort_rows(hta_table *t, hta_row_cmp cmp, void *ctx, hta_error *err) {
    size_t n = t->nrows;
    if (n < 2) return HTA_OK;
    size_t *perm = malloc(n * sizeof *perm), *tmp = malloc(n * sizeof *tmp);
    size_t maxcell = sizeof(int64_t) > sizeof(char *) ? sizeof(int64_t) : sizeof(char *);
    char *cells = malloc(n * maxcell);
    unsigned char *nulls = malloc(n);
    hta_status st = HTA_OK;
    if (!perm || !tmp || !cells || !nulls) {
        st = hta_oom(err);
        goto out;
    }
    for (size_t i = 0; i < n; i++) perm[i] = i;
    sorter s = {t, cmp, ctx};
    merge_sort(&s, perm, tmp, n);
    /* each column through one buffer: the cells (pointers for text) permuted, then copied back */
    for (size_t c = 0; c < t->ncols; c++) {
        hta_column *col = &t->cols[c];
        size_t cs = cell_size(col->type);
        for (size_t i = 0; i < n; i++) memcpy(cells + i * cs, (char *)col->v.i + perm[i] * cs, cs);
        memcpy(col->v.i, cells, n * cs);
        if (col->null) {
            for (size_t i = 0; i < n; i++) nulls[i] = col->null[perm[i]];
            memcpy(col->null, nulls, n);
        }
    }
out:
    free(perm), free(tmp), free(cells), free(nulls);
    return st;
}

/* ---- folding rows per key ---- */

static uint64_t key_hash(const hta_table *t, size_t r, const int *keys, size_t nkeys) {
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (size_t k = 0; k < nkeys; k++) {
        const char *s = hta_table_get_str(t, r, keys[k]);
        uint64_t x = s ? hta_hash_key(s, strlen(s)) : hta_hash_u64((uint64_t)hta_table_get_int(t, r, keys[k]) + 1);
        h = hta_hash_u64(h ^ x);
    }
    return h;
}

static int key_eq(const hta_table *a, size_t ra, const hta_table *b, size_t rb, const int *keys, size_t nkeys) {
    for (size_t k = 0; k < nkeys; k++) {
        const char *x = hta_table_get_str(a, ra, keys[k]), *y = hta_table_get_str(b, rb, keys[k]);
        int same = (x || y) ? x && y && !strcmp(x, y)
                            : hta_table_get_int(a, ra, keys[k]) == hta_table_get_int(b, rb, keys[k]);
        if (!same) return 0;
    }
    return 1;
}

/* part's row rp copied to a new row of acc, cell for cell (the tables' columns are their declared ones) */
hta_status hta_table_fold_rows(hta_table *acc, const hta_table *part, const int *keys, size_t nkeys, const int *sums,
                               size_t nsums, hta_row_merge merge, void *ctx, size_t *at, hta_error *err) {
    if (acc->ncols != part->ncols)
        return hta_fail(err, HTA_EINVAL, "table `%s`: the parts have different columns", part->name);
    /* an index of acc's rows by key (open addressing, at most half full), made again for each part: a part
     * is one rank's, acc one row per key */
    size_t cap = 16;
    while (cap < 2 * (acc->nrows + part->nrows)) cap *= 2;
    size_t *slot = malloc(cap * sizeof *slot);
    if (!slot) return hta_oom(err);
    memset(slot, 0xff, cap * sizeof *slot);
    hta_status st = HTA_OK;
    for (size_t r = 0; r < acc->nrows; r++) {
        size_t i = key_hash(acc, r, keys, nkeys) & (cap - 1);
        while (slot[i] != SIZE_MAX) i = (i + 1) & (cap - 1);
        slot[i] = r;
    }
    for (size_t rp = 0; rp < part->nrows && !st; rp++) {
        size_t i = key_hash(part, rp, keys, nkeys) & (cap - 1);
        while (slot[i] != SIZE_MAX && !key_eq(acc, slot[i], part, rp, keys, nkeys)) i = (i + 1) & (cap - 1);
        size_t ra = slot[i];
        if (ra == SIZE_MAX) {
            long row = hta_table_copy_row(acc, part, rp);
            if (row < 0) {
                st = hta_oom(err);
                break;
            }
            slot[i] = ra = (size_t)row;
        } else {
            for (size_t k = 0; k < nsums; k++)
                hta_table_set_int(acc, ra, sums[k],
                                  hta_table_get_int(acc, ra, sums[k]) + hta_table_get_int(part, rp, sums[k]));
            if (merge) st = merge(acc, ra, part, rp, ctx, err);
        }
        if (at) at[rp] = ra;
    }
    free(slot);
    return st;
}
