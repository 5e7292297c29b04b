/* Results of the Python C API: an hta_result read table by table and column by column.  Numbers are
 * handed out as the table holds them; a text column is dictionary-encoded once (its distinct texts in one
 * buffer, a code per row), which numpy turns into a column without a loop over rows in Python. */
#include <stdlib.h>
#include <string.h>

#include "hta/symtab.h"
#include "pyapi/internal.h"

static hta_py_result *wrap(hta_result *res) {
    hta_py_result *r = calloc(1, sizeof *r);
    if (r && !(r->cols = calloc(res->n ? res->n : 1, sizeof *r->cols))) free(r), r = NULL;
    if (!r) {
        hta_result_free(res);
        return NULL;
    }
    r->res = *res;
    hta_result_init(res);
    return r;
}

hta_status py_result_out(hta_status st, hta_result *res, hta_py_result **out, hta_error *err) {
    *out = NULL;
    if (st) {
        hta_result_free(res);
        return st;
    }
    if (!(*out = wrap(res))) return hta_oom(err);
    return HTA_OK;
}

void hta_py_result_free(hta_py_result *r) {
    if (!r) return;
    for (size_t t = 0; t < r->res.n; t++) {
        for (size_t c = 0; r->cols[t] && c < r->res.tables[t]->ncols; c++)
            free(r->cols[t][c].codes), free(r->cols[t][c].texts);
        free(r->cols[t]);
    }
    free(r->cols);
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

/* Encodes STR column c of table t (once): per row the code of its text among the column's distinct
 * texts (-1 for null), and the distinct texts packed in code order.  Python then builds the column by
 * indexing the few distinct strings with the codes: no string object per row. */
static int encode(hta_py_result *r, size_t t, size_t c) {
    const hta_table *tb = r->res.tables[t];
    if (!r->cols[t]) {
        r->cols[t] = calloc(tb->ncols, sizeof **r->cols);
        if (!r->cols[t]) return -1;
    }
    py_strcol *e = &r->cols[t][c];
    if (e->done) return 0;
    const hta_column *k = &tb->cols[c];
    hta_symtab *st = hta_symtab_new();
    int32_t *codes = malloc((tb->nrows ? tb->nrows : 1) * sizeof *codes);
    int rc = !st || !codes ? -1 : 0;
    for (size_t i = 0; !rc && i < tb->nrows; i++) {
        if (!k->v.s[i]) {
            codes[i] = -1;
            continue;
        }
        uint32_t id = hta_symtab_intern(st, k->v.s[i], strlen(k->v.s[i]));
        if (id == UINT32_MAX || id > INT32_MAX) rc = -1;
        codes[i] = (int32_t)id;
    }
    size_t n = st ? hta_symtab_count(st) : 0, total = 0;
    for (size_t i = 0; !rc && i < n; i++) total += strlen(hta_sym(st, (uint32_t)i)) + 1;
    char *b = rc ? NULL : malloc(total ? total : 1);
    if (!b) rc = -1;
    for (size_t i = 0, at = 0; !rc && i < n; i++) {
        size_t l = strlen(hta_sym(st, (uint32_t)i));
        memcpy(b + at, hta_sym(st, (uint32_t)i), l + 1);
        at += l + 1;
    }
    hta_symtab_free(st);
    if (rc) {
        free(codes);
        free(b);
        return -1;
    }
    *e = (py_strcol){1, codes, b, n, total};
    return 0;
}

hta_status hta_py_col_strs(hta_py_result *r, size_t t, size_t c, const int32_t **codes, const char **texts,
                           size_t *ntexts, size_t *len, hta_error *err) {
    const hta_column *k = col_of(r, t, c);
    if (!k || k->type != HTA_COL_STR) return hta_fail(err, HTA_EINVAL, "table %zu column %zu is not text", t, c);
    if (encode(r, t, c)) return hta_oom(err);
    const py_strcol *e = &r->cols[t][c];
    *codes = e->codes;
    *texts = e->texts;
    *ntexts = e->ntexts;
    *len = e->len;
    return HTA_OK;
}

size_t hta_py_nnotes(const hta_py_result *r) { return r ? r->res.nnotes : 0; }
const char *hta_py_note(const hta_py_result *r, size_t i) { return r && i < r->res.nnotes ? r->res.notes[i] : NULL; }

const unsigned char *hta_py_col_nulls(const hta_py_result *r, size_t t, size_t c) {
    const hta_column *k = col_of(r, t, c);
    return k && k->type == HTA_COL_INT ? k->null : NULL;
}
