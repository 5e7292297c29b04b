/* Typed result tables: building them from their declarations, setting and
 * reading cells by declared column number, and results (sets of tables). */
#include "hta/table.h"
#include "hta/util.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/vec.h"

static void free_col(hta_column *c, size_t nrows) {
    if (c->type == HTA_COL_STR && c->v.s)
        for (size_t r = 0; r < nrows; r++) free(c->v.s[r]);
    free(c->v.i);
    free(c->null);
    free(c->name);
}

void hta_table_free(hta_table *t) {
    if (!t) return;
    for (size_t c = 0; c < t->ncols; c++) free_col(&t->cols[c], t->nrows);
    free(t->cols);
    free(t->name);
    free(t);
}

static size_t cell_size(hta_col_type ty) {
    return ty == HTA_COL_INT ? sizeof(int64_t) : ty == HTA_COL_FLOAT ? sizeof(double) : sizeof(char *);
}

/* A new cell is "empty" by its type: 0 for ints, NaN (null) for floats, NULL for text.  An analysis that
 * sets nothing in a float cell therefore prints null, not a made-up 0. */
static void init_cells(hta_column *c, size_t from, size_t to) {
    for (size_t r = from; r < to; r++) {
        if (c->type == HTA_COL_INT) c->v.i[r] = 0;
        else if (c->type == HTA_COL_FLOAT) c->v.f[r] = NAN;
        else c->v.s[r] = NULL;
    }
    if (c->null) memset(c->null + from, 0, to - from);
}

/* Appends a column; returns its position, or -1 when out of memory. */
static int add_col(hta_table *t, const char *name, hta_col_type type) {
    hta_column *nc = realloc(t->cols, (t->ncols + 1) * sizeof *nc);
    if (!nc) return -1;
    t->cols = nc;
    hta_column *c = &t->cols[t->ncols];
    memset(c, 0, sizeof *c);
    c->type = type;
    c->name = strdup(name);
    c->v.i = malloc((t->cap ? t->cap : 1) * cell_size(type));
    if (!c->name || !c->v.i) {
        free(c->name);
        free(c->v.i);
        return -1;
    }
    init_cells(c, 0, t->nrows);
    return (int)t->ncols++;
}

/* Tables are built only from declarations, so that every table's columns are
 * known (and documented) before any data arrives. */
hta_table *hta_table_from_def(const hta_table_def *d) {
    hta_table *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->def = d;
    if (!(t->name = strdup(d->name))) {
        free(t);
        return NULL;
    }
    for (size_t c = 0; c < d->ncols; c++)
        if (add_col(t, d->cols[c].name, d->cols[c].type) < 0) {
            hta_table_free(t);
            return NULL;
        }
    return t;
}

size_t hta_table_def_ncols(const hta_table_def *d) { return d->ncols + (d->dyn != NULL); }

const hta_col_def *hta_table_def_col(const hta_table_def *d, size_t i) {
    if (!d->dyn || i < d->dyn_at) return &d->cols[i];
    return i == d->dyn_at ? d->dyn : &d->cols[i - 1];
}

/* Where declared column number c is printed: dynamic columns sit before
 * declared column dyn_at and are numbered after the declared ones, so that
 * the declared enum stays valid whatever the data adds. */
static size_t col_at(const hta_table *t, int c) {
    size_t k = (size_t)c;
    if (!t->def->dyn || k < t->def->dyn_at) return k;
    if (k < t->def->ncols) return k + t->ndyn;
    return t->def->dyn_at + (k - t->def->ncols);
}

int hta_table_add_dyn_col(hta_table *t, const char *name, hta_col_type type) {
    if (!t->def->dyn || add_col(t, name, type) < 0) return -1;
    /* move it from the end to its place: after the dynamic columns added before */
    size_t at = t->def->dyn_at + t->ndyn;
    hta_column c = t->cols[t->ncols - 1];
    memmove(t->cols + at + 1, t->cols + at, (t->ncols - 1 - at) * sizeof *t->cols);
    t->cols[at] = c;
    return (int)(t->def->ncols + t->ndyn++);
}

int hta_table_rename_col(hta_table *t, int col, const char *name) {
    char *s = strdup(name);
    if (!s) return -1;
    hta_column *c = &t->cols[col_at(t, col)];
    free(c->name);
    c->name = s;
    return 0;
}

int hta_table_reserve(hta_table *t, size_t rows) {
    if (rows <= t->cap) return 0;
    for (size_t c = 0; c < t->ncols; c++) {
        hta_column *col = &t->cols[c];
        void *q = realloc(col->v.i, rows * cell_size(col->type));
        if (!q) return -1;
        col->v.i = q;
        if (col->null) {
            unsigned char *z = realloc(col->null, rows);
            if (!z) return -1;
            col->null = z;
        }
    }
    t->cap = rows;
    return 0;
}

void hta_table_fit(hta_table *t) {
    size_t rows = t->nrows ? t->nrows : 1;
    if (t->cap <= rows) return;
    for (size_t c = 0; c < t->ncols; c++) {
        hta_column *col = &t->cols[c];
        void *q = realloc(col->v.i, rows * cell_size(col->type));
        if (q) col->v.i = q; /* a shrink that fails leaves the larger block: still valid */
        if (col->null) {
            unsigned char *z = realloc(col->null, rows);
            if (z) col->null = z;
        }
    }
    /* every block holds at least rows cells, whichever realloc failed */
    t->cap = rows;
}

/* Columns grow together by doubling, so appending rows is amortised O(1) per cell. */
long hta_table_add_row(hta_table *t) {
    if (t->nrows == t->cap && hta_table_reserve(t, t->cap ? t->cap * 2 : 16)) return -1;
    for (size_t c = 0; c < t->ncols; c++) init_cells(&t->cols[c], t->nrows, t->nrows + 1);
    return (long)t->nrows++;
}

long hta_table_copy_row(hta_table *t, const hta_table *src, size_t row) {
    long r = hta_table_add_row(t);
    for (size_t c = 0; r >= 0 && c < src->ncols; c++) {
        const hta_column *s = &src->cols[c];
        if (s->type == HTA_COL_STR) {
            if (hta_table_set_str(t, (size_t)r, (int)c, s->v.s[row])) return -1;
        } else if (s->type == HTA_COL_FLOAT) {
            hta_table_set_float(t, (size_t)r, (int)c, s->v.f[row]);
        } else if (s->null && s->null[row]) {
            hta_table_set_null(t, (size_t)r, (int)c);
        } else {
            hta_table_set_int(t, (size_t)r, (int)c, s->v.i[row]);
        }
    }
    return r;
}

/* The setters accept the other numeric type and convert, so that a caller need not know whether a declared
 * column is INT or FLOAT. */
void hta_table_set_int(hta_table *t, size_t row, int col, int64_t v) {
    hta_column *c = &t->cols[col_at(t, col)];
    if (c->type == HTA_COL_FLOAT) c->v.f[row] = (double)v;
    else c->v.i[row] = v;
    if (c->null) c->null[row] = 0;
}

void hta_table_set_null(hta_table *t, size_t row, int col) {
    hta_column *c = &t->cols[col_at(t, col)];
    if (c->type == HTA_COL_FLOAT) {
        c->v.f[row] = NAN;
    } else if (c->type == HTA_COL_STR) {
        free(c->v.s[row]);
        c->v.s[row] = NULL;
    } else {
        /* int null flags are made on the first null: most int columns never hold one */
        if (!c->null) {
            c->null = calloc(t->cap ? t->cap : 1, 1);
            if (!c->null) return;
        }
        c->null[row] = 1;
    }
}

void hta_table_set_float(hta_table *t, size_t row, int col, double v) {
    hta_column *c = &t->cols[col_at(t, col)];
    if (c->type == HTA_COL_INT) c->v.i[row] = (int64_t)v;
    else c->v.f[row] = v;
}

int hta_table_set_str(hta_table *t, size_t row, int col, const char *s) {
    hta_column *c = &t->cols[col_at(t, col)];
    free(c->v.s[row]);
    c->v.s[row] = NULL;
    if (!s) return 0;
    c->v.s[row] = strdup(s);
    return c->v.s[row] ? 0 : -1;
}

void hta_table_col_wrap(hta_table *t, int col) {
    if (col >= 0 && col_at(t, col) < t->ncols) t->cols[col_at(t, col)].wrap = 1;
}

double hta_table_get_float(const hta_table *t, size_t row, int col) {
    size_t k = col_at(t, col);
    if (col < 0 || k >= t->ncols || row >= t->nrows) return NAN;
    const hta_column *c = &t->cols[k];
    if (c->type == HTA_COL_FLOAT) return c->v.f[row];
    if (c->type == HTA_COL_INT) return c->null && c->null[row] ? NAN : (double)c->v.i[row];
    return NAN;
}

int64_t hta_table_get_int(const hta_table *t, size_t row, int col) {
    size_t k = col_at(t, col);
    if (col < 0 || k >= t->ncols || row >= t->nrows || t->cols[k].type != HTA_COL_INT) return 0;
    const hta_column *c = &t->cols[k];
    return c->null && c->null[row] ? 0 : c->v.i[row];
}

const char *hta_table_get_str(const hta_table *t, size_t row, int col) {
    size_t k = col_at(t, col);
    if (col < 0 || k >= t->ncols || row >= t->nrows || t->cols[k].type != HTA_COL_STR) return NULL;
    return t->cols[k].v.s[row];
}

void hta_result_init(hta_result *r) { memset(r, 0, sizeof *r); }

void hta_result_free(hta_result *r) {
    for (size_t i = 0; i < r->n; i++) hta_table_free(r->tables[i]);
    for (size_t i = 0; i < r->nnotes; i++) free(r->notes[i]);
    free(r->tables);
    free(r->notes);
    memset(r, 0, sizeof *r);
}

int hta_result_add(hta_result *r, hta_table *t) {
    hta_table **q = realloc(r->tables, (r->n + 1) * sizeof *q);
    if (!q) {
        hta_table_free(t);
        return -1;
    }
    r->tables = q;
    r->tables[r->n++] = t;
    return 0;
}

int hta_result_add_each(hta_result *r, hta_table **const *t, size_t n) {
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        hta_table *x = *t[i];
        *t[i] = NULL;
        if (rc) hta_table_free(x);
        else rc = hta_result_add(r, x);
    }
    return rc;
}

hta_status hta_result_finish(hta_status st, hta_result *r, hta_table **const *t, size_t n, hta_error *err) {
    if (!st) return hta_result_add_each(r, t, n) ? hta_oom(err) : HTA_OK;
    for (size_t i = 0; i < n; i++) {
        hta_table_free(*t[i]);
        *t[i] = NULL;
    }
    return st;
}

int hta_result_note(hta_result *r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int rc = hta_strlist_vadd(&r->notes, &r->nnotes, fmt, ap);
    va_end(ap);
    return rc;
}

hta_table *hta_result_find(const hta_result *r, const char *name) {
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->tables[i]->name, name)) return r->tables[i];
    return NULL;
}

int hta_table_is(const hta_table *t, const hta_table_def *d) {
    int same = t->ncols == d->ncols;
    for (size_t c = 0; same && c < d->ncols; c++)
        same = t->cols[c].type == d->cols[c].type && !strcmp(t->cols[c].name, d->cols[c].name);
    return same;
}

hta_status hta_result_find_as(const hta_result *r, const hta_table_def *d, const char *what, const hta_table **out,
                              hta_error *err) {
    const hta_table *t = hta_result_find(r, d->name);
    if (!t || !hta_table_is(t, d))
        return hta_fail(err, HTA_EINVAL, "%s: table `%s` missing or not as declared", what, d->name);
    *out = t;
    return HTA_OK;
}

hta_status hta_result_table(const hta_result *r, const hta_table_def *d, const hta_table **out,
                            hta_error *err) {
    const hta_table *t = hta_result_find(r, d->name);
    *out = NULL;
    if (!t) return hta_fail(err, HTA_EINVAL, "no table `%s` in the result", d->name);
    /* same name, other columns: reading it with d's enum would read the wrong cells */
    if (t->def != d)
        return hta_fail(err, HTA_EINVAL, "table `%s` is not built from the declaration it is read with",
                        d->name);
    *out = t;
    return HTA_OK;
}

int hta_format_parse(const char *s, hta_format *out) {
    if (!strcmp(s, "table")) *out = HTA_FMT_TABLE;
    else if (!strcmp(s, "csv")) *out = HTA_FMT_CSV;
    else if (!strcmp(s, "json")) *out = HTA_FMT_JSON;
    else return -1;
    return 0;
}
