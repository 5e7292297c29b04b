/* What the reduce functions of the analyses share (hta/table.h, "reducing parts"; docs/scaling.md): taking
 * a partial table out of the appended parts, checked against its declaration (parts that travelled between
 * processes come back without one), summing a count, ordering rows as the whole run orders them, and
 * carrying the parts' notes over.  Cells move bit for bit, so a reduced result prints exactly as one
 * computed whole. */
#include <stdlib.h>
#include <string.h>

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
