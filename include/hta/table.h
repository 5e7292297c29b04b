/* Typed result tables: what every analysis returns and every output format
 * prints.  A table owns its cells (strings are copied in). */
#ifndef HTA_TABLE_H
#define HTA_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hta/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum hta_col_type { HTA_COL_INT, HTA_COL_FLOAT, HTA_COL_STR } hta_col_type;

typedef struct hta_column {
    char *name;
    hta_col_type type;
    union {
        int64_t *i;
        double *f; /* NaN prints as null */
        char **s;  /* NULL prints as null */
    } v;
    unsigned char *null; /* per-row null flags for INT columns (NULL = none null) */
    int wrap;            /* table format: wrap long text over lines instead of cutting it */
} hta_column;

typedef struct hta_table {
    char *name;
    size_t ncols, nrows, cap;
    hta_column *cols;
} hta_table;

hta_table *hta_table_new(const char *name);
/* A table with its columns: cols[i].name of type cols[i].type. NULL when out of memory. */
typedef struct hta_col_spec {
    const char *name;
    hta_col_type type;
} hta_col_spec;
hta_table *hta_table_new_with(const char *name, const hta_col_spec *cols, size_t ncols);
void hta_table_free(hta_table *t);
/* Returns the column number, or -1 when out of memory. */
int hta_table_add_col(hta_table *t, const char *name, hta_col_type type);
/* Appends an empty row (ints 0, floats NaN, strings NULL); returns its number or -1. */
long hta_table_add_row(hta_table *t);
void hta_table_set_int(hta_table *t, size_t row, int col, int64_t v);
void hta_table_set_null(hta_table *t, size_t row, int col);
void hta_table_set_float(hta_table *t, size_t row, int col, double v);
/* Copies s (NULL allowed). Returns 0, or -1 when out of memory. */
int hta_table_set_str(hta_table *t, size_t row, int col, const char *s);
int hta_table_col(const hta_table *t, const char *name); /* -1 if absent */
/* Marks a text column as prose: the table format wraps it instead of cutting it. */
void hta_table_col_wrap(hta_table *t, int col);

/* An ordered set of named tables: one command's result. */
typedef struct hta_result {
    hta_table **tables;
    size_t n;
    char **notes; /* human remarks ("rank 1 has no GPU kernels"), shown on stderr */
    size_t nnotes;
} hta_result;

void hta_result_init(hta_result *r);
void hta_result_free(hta_result *r);
/* Takes ownership of t. Returns 0 or -1 (t freed) when out of memory. */
int hta_result_add(hta_result *r, hta_table *t);
int hta_result_note(hta_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
hta_table *hta_result_find(const hta_result *r, const char *name);

typedef enum hta_format { HTA_FMT_TABLE, HTA_FMT_CSV, HTA_FMT_JSON } hta_format;
int hta_format_parse(const char *s, hta_format *out);

/* Writes every table of r to f.  JSON: one object, a key per table, each
 * {"columns": [...], "data": [[...], ...]}. Returns 0, or -1 on write error. */
int hta_result_write(FILE *f, const hta_result *r, hta_format fmt);

#ifdef __cplusplus
}
#endif
#endif
