/* Results of the Python C API: an hta_result read table by table and column by column.  Numbers are
 * handed out as the table holds them; a text column is packed once into one buffer of NUL-terminated
 * cells, which Python splits in one call (no loop over rows in Python). */
#include <stdlib.h>
#include <string.h>

#include "pyapi/internal.h"

hta_py_result *py_result_wrap(hta_result *res) {
    hta_py_result *r = calloc(1, sizeof *r);
    size_t n = res->n ? res->n : 1;
    if (r) {
        r->strs = calloc(n, sizeof *r->strs);
        r->strs_len = calloc(n, sizeof *r->strs_len);
        r->str_null = calloc(n, sizeof *r->str_null);
    }
    if (!r || !r->strs || !r->strs_len || !r->str_null) {
        if (r) free(r->strs), free(r->strs_len), free(r->str_null);
        free(r);
        hta_result_free(res);
        return NULL;
    }
    r->res = *res;
    hta_result_init(res);
    return r;
}

void hta_py_result_free(hta_py_result *r) {
    if (!r) return;
    for (size_t t = 0; t < r->res.n; t++) {
        size_t nc = r->res.tables[t]->ncols;
        for (size_t c = 0; r->strs[t] && c < nc; c++) free(r->strs[t][c]);
        for (size_t c = 0; r->str_null[t] && c < nc; c++) free(r->str_null[t][c]);
        free(r->strs[t]);
        free(r->strs_len[t]);
        free(r->str_null[t]);
    }
    free(r->strs);
    free(r->strs_len);
    free(r->str_null);
    hta_result_free(&r->res);
    free(r);
}

static const hta_column *col_of(const hta_py_result *r, size_t t, size_t c) {
    if (!r || t >= r->res.n || c >= r->res.tables[t]->ncols) return NULL;
    return &r->res.tables[t]->cols[c];
}

size_t hta_py_ntables(const hta_py_result *r) { return r ? r->res.n : 0; }
const char *hta_py_table_name(const hta_py_result *r, size_t t) {
    return r && t < r->res.n ? r->res.tables[t]->name : NULL;
}
size_t hta_py_table_nrows(const hta_py_result *r, size_t t) { return r && t < r->res.n ? r->res.tables[t]->nrows : 0; }
size_t hta_py_table_ncols(const hta_py_result *r, size_t t) { return r && t < r->res.n ? r->res.tables[t]->ncols : 0; }

const char *hta_py_col_name(const hta_py_result *r, size_t t, size_t c) {
    const hta_column *k = col_of(r, t, c);
    return k ? k->name : NULL;
}

int hta_py_col_type(const hta_py_result *r, size_t t, size_t c) {
    const hta_column *k = col_of(r, t, c);
    if (!k) return -1;
    return k->type == HTA_COL_INT ? HTA_PY_INT : k->type == HTA_COL_FLOAT ? HTA_PY_FLOAT : HTA_PY_STR;
}

const int64_t *hta_py_col_ints(const hta_py_result *r, size_t t, size_t c) {
    const hta_column *k = col_of(r, t, c);
    return k && k->type == HTA_COL_INT ? k->v.i : NULL;
}

const double *hta_py_col_floats(const hta_py_result *r, size_t t, size_t c) {
    const hta_column *k = col_of(r, t, c);
    return k && k->type == HTA_COL_FLOAT ? k->v.f : NULL;
}

/* Packs STR column c of table t (once): cells and their null flags. */
static int pack(hta_py_result *r, size_t t, size_t c) {
    const hta_table *tb = r->res.tables[t];
    if (!r->strs[t]) {
        r->strs[t] = calloc(tb->ncols, sizeof **r->strs);
        r->strs_len[t] = calloc(tb->ncols, sizeof **r->strs_len);
        r->str_null[t] = calloc(tb->ncols, sizeof **r->str_null);
        if (!r->strs[t] || !r->strs_len[t] || !r->str_null[t]) return -1;
    }
    if (r->strs[t][c]) return 0;
    const hta_column *k = &tb->cols[c];
    size_t total = 0, nulls = 0;
    for (size_t i = 0; i < tb->nrows; i++) {
        total += (k->v.s[i] ? strlen(k->v.s[i]) : 0) + 1;
        nulls += !k->v.s[i];
    }
    char *b = malloc(total ? total : 1);
    unsigned char *nl = nulls ? calloc(tb->nrows, 1) : NULL;
    if (!b || (nulls && !nl)) {
        free(b);
        free(nl);
        return -1;
    }
    size_t at = 0;
    for (size_t i = 0; i < tb->nrows; i++) {
        size_t l = k->v.s[i] ? strlen(k->v.s[i]) : 0;
        if (l) memcpy(b + at, k->v.s[i], l);
        b[at + l] = 0;
        at += l + 1;
        if (!k->v.s[i]) nl[i] = 1;
    }
    r->strs[t][c] = b;
    r->strs_len[t][c] = total;
    r->str_null[t][c] = nl;
    return 0;
}

const unsigned char *hta_py_col_nulls(hta_py_result *r, size_t t, size_t c) {
    const hta_column *k = col_of(r, t, c);
    if (!k) return NULL;
    if (k->type == HTA_COL_INT) return k->null;
    if (k->type != HTA_COL_STR || pack(r, t, c)) return NULL;
    return r->str_null[t][c];
}

const char *hta_py_col_strs(hta_py_result *r, size_t t, size_t c, size_t *len) {
    const hta_column *k = col_of(r, t, c);
    *len = 0;
    if (!k || k->type != HTA_COL_STR || pack(r, t, c)) return NULL;
    *len = r->strs_len[t][c];
    return r->strs[t][c];
}

size_t hta_py_nnotes(const hta_py_result *r) { return r ? r->res.nnotes : 0; }
const char *hta_py_note(const hta_py_result *r, size_t i) { return r && i < r->res.nnotes ? r->res.notes[i] : NULL; }
