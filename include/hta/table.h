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

struct hta_table_def;

typedef struct hta_table {
    char *name;
    size_t ncols, nrows, cap;
    hta_column *cols;                /* as printed: dynamic columns in their place */
    const struct hta_table_def *def; /* the declaration the table was built from */
    size_t ndyn;                     /* dynamic columns added (hta_table_add_dyn_col) */
} hta_table;

/* ---- Declared tables ----
 *
 * Every output table is declared once, in the public header of its analysis,
 * as a list of its columns; the list gives the column enum the code writes
 * and reads with, the column names, types, units and meanings that --help,
 * `hta tables` and docs/tables.md print, and the table's name:
 *
 *     #define HTA_TEMPORAL(T, C, D)                                          \
 *         T("temporal_breakdown", "per rank: GPU time idle, computing, ...") \
 *         C(HTA_TEMPORAL_RANK, "rank", INT, "", "rank of the trace")         \
 *         C(HTA_TEMPORAL_IDLE_US, "idle_time(us)", FLOAT, "us", "...")       \
 *         ...
 *     HTA_TABLE_DECLARE(HTA_TEMPORAL)
 *
 * declares `enum { HTA_TEMPORAL_RANK, HTA_TEMPORAL_IDLE_US, ...,
 * HTA_TEMPORAL_NCOLS }` and `extern const hta_table_def HTA_TEMPORAL_TABLE`;
 * one .c file of the layer says HTA_TABLE_DEFINE(HTA_TEMPORAL).
 *   T(name, meaning)                        the table
 *   C(id, name, TYPE, unit, meaning)        a column; TYPE is INT, FLOAT or STR;
 *                                           unit "us", "ns", "%", "GB/s", "" ...
 *   D(before_id, name, TYPE, unit, meaning) at most one: columns that only the
 *                                           data decides (hta_table_add_dyn_col),
 *                                           printed before column before_id
 * A header that depends on the options (a label) is declared with its default
 * and renamed with hta_table_rename_col; its meaning says so. */
typedef struct hta_col_def {
    const char *name; /* the header, HTA's name where HTA has the column */
    hta_col_type type;
    const char *unit;    /* "" when the value has none (a count, an id, text) */
    const char *meaning; /* one line */
} hta_col_def;

typedef struct hta_table_def {
    const char *name;
    const char *meaning;
    const hta_col_def *cols;
    size_t ncols;
    const hta_col_def *dyn; /* what the dynamic columns are (name: a placeholder); NULL: none */
    size_t dyn_at;          /* declared column they are printed before */
} hta_table_def;

/* What a list's entries expand to: nothing, an enum constant, a column
 * definition, the table's name and meaning, its dynamic columns.  One list
 * gives both the enum and the definition, so the two cannot disagree. */
#define HTA_TDEF_NONE_(...)
#define HTA_TDEF_ENUM_(id, n, ty, u, m) id,
#define HTA_TDEF_COL_(id, n, ty, u, m) {n, HTA_COL_##ty, u, m},
#define HTA_TDEF_HEAD_(n, m) .name = n, .meaning = m,
#define HTA_TDEF_DYN_(at, n, ty, u, m) .dyn = &(const hta_col_def){n, HTA_COL_##ty, u, m}, .dyn_at = at,
#define HTA_TABLE_DECLARE(L)                                                                    \
    enum { L(HTA_TDEF_NONE_, HTA_TDEF_ENUM_, HTA_TDEF_NONE_) L##_NCOLS };                      \
    extern const hta_table_def L##_TABLE;
#define HTA_TABLE_DEFINE(L)                                                                     \
    static const hta_col_def L##_cols_[] = {L(HTA_TDEF_NONE_, HTA_TDEF_COL_, HTA_TDEF_NONE_)}; \
    const hta_table_def L##_TABLE = {L(HTA_TDEF_HEAD_, HTA_TDEF_NONE_, HTA_TDEF_DYN_).cols = L##_cols_, \
                                     .ncols = L##_NCOLS}

/* A table that one .c file alone uses (a part's own table: "reducing parts"), declared and defined
 * there at once. */
#define HTA_TABLE_LOCAL(L) HTA_TABLE_DECLARE(L) HTA_TABLE_DEFINE(L)

/* A second table with the columns of table L (its enum too), declared and
 * defined beside L: list A has only its T(name, meaning). */
#define HTA_TABLE_DECLARE_LIKE(A, L) extern const hta_table_def A##_TABLE;
#define HTA_TABLE_DEFINE_LIKE(A, L)                                                             \
    const hta_table_def A##_TABLE = {A(HTA_TDEF_HEAD_, HTA_TDEF_NONE_, HTA_TDEF_NONE_).cols = L##_cols_, \
                                     .ncols = L##_NCOLS}

/* The eight columns of pandas' describe() that HTA's summaries print, for a
 * column list: ids P_COUNT, P_MEAN, P_STD, P_MIN, P_P25, P_P50, P_P75, P_MAX
 * of FLOAT cells in unit U, over WHAT (plural noun). */
#define HTA_DESCRIBE_COLS(C, P, U, WHAT)                                                        \
    C(P##_COUNT, "count", FLOAT, "", "number of " WHAT)                                         \
    C(P##_MEAN, "mean", FLOAT, U, "mean of the " WHAT)                                          \
    C(P##_STD, "std", FLOAT, U, "sample standard deviation of the " WHAT)                       \
    C(P##_MIN, "min", FLOAT, U, "smallest of the " WHAT)                                        \
    C(P##_P25, "25%", FLOAT, U, "first quartile of the " WHAT " (linear interpolation)")        \
    C(P##_P50, "50%", FLOAT, U, "median of the " WHAT)                                          \
    C(P##_P75, "75%", FLOAT, U, "third quartile of the " WHAT " (linear interpolation)")        \
    C(P##_MAX, "max", FLOAT, U, "largest of the " WHAT)

/* Columns that many tables have with one meaning, for a column list: id P_RANK etc. */
#define HTA_RANK_COL(C, P) C(P##_RANK, "rank", INT, "", "rank of the trace")

/* The columns of d as printed, the dynamic ones as one placeholder in their
 * place: hta_table_def_col(d, i) for i < hta_table_def_ncols(d). */
size_t hta_table_def_ncols(const hta_table_def *d);
const hta_col_def *hta_table_def_col(const hta_table_def *d, size_t i);

/* An empty table with the declared columns (and none of the dynamic ones
 * yet), named d->name.  NULL when out of memory. */
hta_table *hta_table_from_def(const hta_table_def *d);
void hta_table_free(hta_table *t);
/* Adds a dynamic column (the declaration's D), after those added before;
 * the setters address the k-th one added as d->ncols + k, which this returns.
 * -1 when out of memory or when the declaration has no dynamic columns. */
int hta_table_add_dyn_col(hta_table *t, const char *name, hta_col_type type);
/* Renames a declared column whose header depends on the options. 0, or -1 when out of memory. */
int hta_table_rename_col(hta_table *t, int col, const char *name);

/* Column numbers below are the declaration's: its enum, or what
 * hta_table_add_dyn_col returned. */

/* Room for rows rows in every column (null flags too), the cells past the last row uninitialised;
 * 0, or -1 when out of memory. */
int hta_table_reserve(hta_table *t, size_t rows);
/* Gives back the room reserved beyond the rows (a table kept long, one per rank, holds no slack); rows may be
 * added after, the room growing again. */
void hta_table_fit(hta_table *t);
/* Appends an empty row (ints 0, floats NaN, strings NULL); returns its number or -1. */
long hta_table_add_row(hta_table *t);
/* Appends a copy of src's row (src of t's columns: the same declaration), cell by cell, nulls kept; returns
 * its number or -1 when out of memory. */
long hta_table_copy_row(hta_table *t, const hta_table *src, size_t row);
void hta_table_set_int(hta_table *t, size_t row, int col, int64_t v);
void hta_table_set_null(hta_table *t, size_t row, int col);
void hta_table_set_float(hta_table *t, size_t row, int col, double v);
/* Copies s (NULL allowed). Returns 0, or -1 when out of memory. */
int hta_table_set_str(hta_table *t, size_t row, int col, const char *s);
/* Marks a text column as prose: the table format wraps it instead of cutting it. */
void hta_table_col_wrap(hta_table *t, int col);

/* A cell as a number: ints converted, null and text cells NaN. */
double hta_table_get_float(const hta_table *t, size_t row, int col);
/* An INT cell (0 when null, not an int, or out of range). */
int64_t hta_table_get_int(const hta_table *t, size_t row, int col);
/* A text cell; NULL when null or not text. */
const char *hta_table_get_str(const hta_table *t, size_t row, int col);

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
/* Takes ownership of the n tables *t[0..n) and adds them in that order, each *t[i] set to NULL (so the
 * caller's cleanup frees none of them twice). Returns 0 or -1 when out of memory: the tables not added
 * are freed.  HTA_RESULT_ADD(r, &a, &b, ...) counts them. */
int hta_result_add_each(hta_result *r, hta_table **const *t, size_t n);
#define HTA_RESULT_ADD(r, ...)                                                                              \
    hta_result_add_each((r), (hta_table **const[]){__VA_ARGS__},                                              \
                        sizeof((hta_table **const[]){__VA_ARGS__}) / sizeof(hta_table **))
/* The end of a function that made the n tables *t[0..n) for r: when st is a failure, the tables freed (each
 * *t[i] set to NULL) and st returned; else them added (hta_result_add_each), HTA_ENOMEM through err when that
 * fails.  HTA_RESULT_FINISH(st, r, err, &a, &b, ...) counts them. */
hta_status hta_result_finish(hta_status st, hta_result *r, hta_table **const *t, size_t n, hta_error *err);
#define HTA_RESULT_FINISH(st, r, err, ...)                                                                  \
    hta_result_finish((st), (r), (hta_table **const[]){__VA_ARGS__},                                         \
                      sizeof((hta_table **const[]){__VA_ARGS__}) / sizeof(hta_table **), (err))
int hta_result_note(hta_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
hta_table *hta_result_find(const hta_result *r, const char *name);
/* The table of r named d->name, checked to be built from declaration d, so
 * that its cells can be read with d's enum: HTA_EINVAL when r has no such
 * table or it was built from another declaration. */
hta_status hta_result_table(const hta_result *r, const hta_table_def *d, const hta_table **out,
                            hta_error *err);
/* 1 when t has the columns d declares (names and types, in order): the check for a table that arrives
 * without its declaration (another process's, under hta-mpi, or a part's). */
int hta_table_is(const hta_table *t, const hta_table_def *d);
/* The table of r named d->name with d's columns (hta_table_is), left in r: HTA_EINVAL "<what>: table `NAME`
 * missing or not as declared" otherwise. */
hta_status hta_result_find_as(const hta_result *r, const hta_table_def *d, const char *what, const hta_table **out,
                              hta_error *err);

/* Appends src to dst: the rows of each of src's tables after those of dst's table of that name (same
 * columns, else HTA_EINVAL), a table dst lacks added at the end, each note once.  What src's tables gave
 * is moved: free src afterwards.  (The per-rank iteration's results, put together in rank order.) */
hta_status hta_result_append(hta_result *dst, hta_result *src, hta_error *err);
/* r as bytes (malloc'd, *out) and back: cells bit for bit.  unpack finds each table's declaration by
 * name in defs (NULL-terminated; may be NULL). */
hta_status hta_result_pack(const hta_result *r, char **out, size_t *len, hta_error *err);
hta_status hta_result_unpack(const char *bytes, size_t len, const hta_table_def *const *defs, hta_result *out,
                             hta_error *err);

/* ---- reducing parts (src/table/reduce.c; docs/scaling.md, "Reduce") ----
 * An analysis whose result is not rank by rank row for row is split in two: its part gives, for the
 * ranks of one context, the per-rank rows and partial tables of its own (counts, sums in int64 ns, the
 * keys a rank saw); its reduce turns the parts, appended in rank order with hta_result_append, into the
 * result.  The parts of one-rank contexts reduce to exactly what a context of all the ranks gives, since
 * the whole load is reduced the same way.  These are the tools the reduce functions share. */

/* Takes the table named d->name out of r into *out (the caller's from then on), its def set to d:
 * HTA_EINVAL when r has none or its columns are not d's declared ones (names and types, in order). */
hta_status hta_result_take(hta_result *r, const hta_table_def *d, hta_table **out, hta_error *err);
/* The table of declaration d in r, added empty where r has none (a fold's running table); NULL: out of
 * memory. */
hta_table *hta_result_table_in(hta_result *r, const hta_table_def *d);
/* Copies every note of src to the end of dst, in order (hta_result_append has made them unique). */
hta_status hta_result_copy_notes(hta_result *dst, const hta_result *src, hta_error *err);
/* The sum of INT column col (declared number) over t's rows. */
int64_t hta_table_sum_int(const hta_table *t, int col);
/* Orders t's rows by cmp (rows a and b of t): a stable merge sort, so rows cmp finds equal keep their
 * order; cells move bit for bit. */
typedef int (*hta_row_cmp)(const hta_table *t, size_t a, size_t b, void *ctx);
hta_status hta_table_sort_rows(hta_table *t, hta_row_cmp cmp, void *ctx, hta_error *err);
/* Folds part's rows into acc as they come (tables of one declaration, no dynamic columns), so that a table
 * summed per key holds one row per key, not one per key and rank: a row whose key columns (keys, STR or
 * INT) equal an acc row's is merged into it, its INT columns sums added (int64: the same sums in any
 * order) and then merge called where given (other columns' own rule); any other row is copied to the end,
 * so acc keeps the keys' first-seen order.  at (NULL or part->nrows): the acc row each part row went to. */
typedef hta_status (*hta_row_merge)(hta_table *acc, size_t ra, const hta_table *part, size_t rp, void *ctx,
                                    hta_error *err);
hta_status hta_table_fold_rows(hta_table *acc, const hta_table *part, const int *keys, size_t nkeys, const int *sums,
                               size_t nsums, hta_row_merge merge, void *ctx, size_t *at, hta_error *err);

typedef enum hta_format { HTA_FMT_TABLE, HTA_FMT_CSV, HTA_FMT_JSON } hta_format;
int hta_format_parse(const char *s, hta_format *out);

/* A float cell as the table format prints it, for any page that shows tables to a person (the HTML
 * report): whole numbers without decimals, others with 3, one decimal from a million on, 3 significant
 * digits below 0.001; never exponent notation.  buf: 64 bytes or more. */
void hta_table_float_text(double v, char *buf, size_t n);

/* Writes every table of r to f.  JSON: one object, a key per table, each
 * {"columns": [...], "data": [[...], ...]}. Returns 0, or -1 on write error. */
int hta_result_write(FILE *f, const hta_result *r, hta_format fmt);

#ifdef __cplusplus
}
#endif
#endif
