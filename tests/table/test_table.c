/* Declared tables: columns come from the declaration, cells are addressed by
 * the declaration's enum (dynamic columns after it), and a reader gets a
 * table only when it was built from the declaration it reads it with -- the
 * check that keeps `hta report` from reading another table's cells. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hta/breakdown.h"
#include "hta/table.h"
#include "../check.h"

/* a table with dynamic columns between b and c */
#define TEST_DYN(T, C, D)                                    \
    T("test_dyn", "a table with dynamic columns")            \
    C(TEST_DYN_A, "a", INT, "", "first")                     \
    D(TEST_DYN_C, "<x>", INT, "", "one per x")               \
    C(TEST_DYN_C, "c", FLOAT, "us", "after the dynamic ones") \
    C(TEST_DYN_D, "d", STR, "", "last")
HTA_TABLE_LOCAL(TEST_DYN);

/* the name of temporal_breakdown with other columns: what a reader must refuse */
#define TEST_IMPOSTOR(T, C, D)                          \
    T("temporal_breakdown", "same name, other columns") \
    C(TEST_IMPOSTOR_NAME, "name", STR, "", "a name")    \
    C(TEST_IMPOSTOR_VALUE, "value", FLOAT, "", "a value")
HTA_TABLE_LOCAL(TEST_IMPOSTOR);

/* test_dyn's name with other columns: what hta_result_take must refuse */
#define TEST_DYN_IMPOSTOR(T, C, D)                    \
    T("test_dyn", "same name, other columns")         \
    C(TEST_DYN_IMPOSTOR_A, "a", FLOAT, "", "a float") \
    C(TEST_DYN_IMPOSTOR_C, "c", FLOAT, "us", "c")     \
    C(TEST_DYN_IMPOSTOR_D, "d", STR, "", "d")
HTA_TABLE_LOCAL(TEST_DYN_IMPOSTOR);

static int dynamic_columns(void) {
    hta_table *t = hta_table_from_def(&TEST_DYN_TABLE);
    REQUIRE(t && t->def == &TEST_DYN_TABLE && t->ncols == 3 && !strcmp(t->name, "test_dyn"));
    REQUIRE(hta_table_add_dyn_col(t, "x1", HTA_COL_INT) == TEST_DYN_NCOLS);
    REQUIRE(hta_table_add_dyn_col(t, "x2", HTA_COL_INT) == TEST_DYN_NCOLS + 1);
    static const char *const printed[] = {"a", "x1", "x2", "c", "d"};
    REQUIRE(t->ncols == 5);
    for (size_t c = 0; c < 5; c++) REQUIRE(!strcmp(t->cols[c].name, printed[c]));
    long r = hta_table_add_row(t);
    REQUIRE(r == 0);
    hta_table_set_int(t, 0, TEST_DYN_A, 7);
    hta_table_set_int(t, 0, TEST_DYN_NCOLS + 1, 9); /* x2 */
    hta_table_set_float(t, 0, TEST_DYN_C, 1.5);
    REQUIRE(!hta_table_set_str(t, 0, TEST_DYN_D, "z"));
    REQUIRE(t->cols[0].v.i[0] == 7 && t->cols[2].v.i[0] == 9 && t->cols[3].v.f[0] == 1.5);
    REQUIRE(!strcmp(t->cols[4].v.s[0], "z"));
    REQUIRE(hta_table_get_float(t, 0, TEST_DYN_NCOLS + 1) == 9 && hta_table_get_float(t, 0, TEST_DYN_C) == 1.5);
    REQUIRE(!strcmp(hta_table_get_str(t, 0, TEST_DYN_D), "z") && !hta_table_get_str(t, 0, TEST_DYN_C));
    REQUIRE(isnan(hta_table_get_float(t, 1, TEST_DYN_C))); /* no such row */
    /* the declaration in printed order: the placeholder where the dynamic columns go */
    REQUIRE(hta_table_def_ncols(&TEST_DYN_TABLE) == 4);
    REQUIRE(!strcmp(hta_table_def_col(&TEST_DYN_TABLE, 1)->name, "<x>"));
    REQUIRE(!strcmp(hta_table_def_col(&TEST_DYN_TABLE, 2)->name, "c"));
    hta_table_free(t);
    /* a declaration without dynamic columns takes none */
    t = hta_table_from_def(&TEST_IMPOSTOR_TABLE);
    REQUIRE(t && hta_table_add_dyn_col(t, "x", HTA_COL_INT) == -1 && t->ncols == 2);
    hta_table_free(t);
    return 0;
}

/* The report's way of reading: hta_result_table, then cells by the enum. */
static int reader_checks_declaration(void) {
    hta_result res;
    hta_result_init(&res);
    hta_table *t = hta_table_from_def(&HTA_TEMPORAL_TABLE);
    REQUIRE(t && hta_table_add_row(t) == 0);
    hta_table_set_int(t, 0, HTA_TEMPORAL_RANK, 3);
    hta_table_set_float(t, 0, HTA_TEMPORAL_IDLE_US, 12.5);
    /* a renamed header (as a label option does) changes the output, not what the enum reads */
    REQUIRE(!hta_table_rename_col(t, HTA_TEMPORAL_IDLE_US, "idle (renamed)"));
    REQUIRE(!hta_result_add(&res, t));
    const hta_table *got = NULL;
    hta_error err = {0};
    REQUIRE(hta_result_table(&res, &HTA_TEMPORAL_TABLE, &got, &err) == HTA_OK && got == t);
    REQUIRE(hta_table_get_float(got, 0, HTA_TEMPORAL_IDLE_US) == 12.5);
    REQUIRE(hta_table_get_float(got, 0, HTA_TEMPORAL_RANK) == 3);
    FILE *f = tmpfile();
    char line[512] = "";
    REQUIRE(f && !hta_result_write(f, &res, HTA_FMT_CSV));
    rewind(f);
    REQUIRE(fgets(line, sizeof line, f) && !strncmp(line, "rank,idle (renamed),compute_time(us)", 36));
    fclose(f);
    /* same name, another declaration: refused, not read as NaN */
    REQUIRE(hta_result_table(&res, &TEST_IMPOSTOR_TABLE, &got, &err) == HTA_EINVAL && !got);
    REQUIRE(strstr(err.msg, "temporal_breakdown") && strstr(err.msg, "declaration"));
    /* a table the result does not have */
    REQUIRE(hta_result_table(&res, &HTA_IDLE_TABLE, &got, &err) == HTA_EINVAL && !got);
    hta_result_free(&res);
    return 0;
}

/* The reduce steps' tools (src/table/reduce.c): a partial table taken out by its declaration (its def set,
 * as after unpacking, where it has none), counts summed, rows ordered stably with their cells, notes
 * carried over. */
static int cmp_a_then_d(const hta_table *t, size_t a, size_t b, void *ctx) {
    (void)ctx;
    int64_t x = hta_table_get_int(t, a, TEST_DYN_A), y = hta_table_get_int(t, b, TEST_DYN_A);
    return (x > y) - (x < y);
}

static int reduce_tools(void) {
    hta_result parts, out;
    hta_result_init(&parts);
    hta_result_init(&out);
    hta_error err = {0};
    hta_table *t = hta_table_from_def(&TEST_DYN_TABLE), *got = NULL;
    static const int64_t a[] = {3, 1, 3, 2, 1};
    static const char *const d[] = {"p", "q", "r", NULL, "s"};
    for (size_t r = 0; r < 5; r++) {
        REQUIRE(hta_table_add_row(t) == (long)r);
        hta_table_set_int(t, r, TEST_DYN_A, a[r]);
        hta_table_set_float(t, r, TEST_DYN_C, 0.1 * (double)r);
        REQUIRE(!hta_table_set_str(t, r, TEST_DYN_D, d[r]));
    }
    t->def = NULL; /* as hta_result_unpack leaves a table no command prints */
    REQUIRE(!hta_result_add(&parts, t));
    REQUIRE(!hta_result_note(&parts, "one") && !hta_result_note(&parts, "two"));
    /* another declaration of the name: refused; one the result lacks: refused */
    REQUIRE(hta_result_take(&parts, &TEST_DYN_IMPOSTOR_TABLE, &got, &err) == HTA_EINVAL && !got && parts.n == 1);
    REQUIRE(strstr(err.msg, "table `test_dyn` of the parts is not the one declared"));
    REQUIRE(hta_result_take(&parts, &HTA_TEMPORAL_TABLE, &got, &err) == HTA_EINVAL && !got);
    REQUIRE(strstr(err.msg, "the parts have no table `temporal_breakdown`"));
    REQUIRE(hta_result_take(&parts, &TEST_DYN_TABLE, &got, &err) == HTA_OK && got == t && !parts.n);
    REQUIRE(got->def == &TEST_DYN_TABLE && hta_table_sum_int(got, TEST_DYN_A) == 10);
    REQUIRE(hta_table_get_int(got, 4, TEST_DYN_A) == 1 && hta_table_get_int(got, 5, TEST_DYN_A) == 0);
    /* stable: the two 1s and the two 3s keep their order, every cell moves with its row */
    REQUIRE(hta_table_sort_rows(got, cmp_a_then_d, NULL, &err) == HTA_OK);
    static const int64_t sa[] = {1, 1, 2, 3, 3};
    static const char *const sd[] = {"q", "s", NULL, "p", "r"};
    static const int from[] = {1, 4, 3, 0, 2}; /* the row each came from */
    for (size_t r = 0; r < 5; r++) {
        REQUIRE(hta_table_get_int(got, r, TEST_DYN_A) == sa[r]);
        REQUIRE(hta_table_get_float(got, r, TEST_DYN_C) == 0.1 * (double)from[r]);
        const char *s = hta_table_get_str(got, r, TEST_DYN_D);
        REQUIRE(sd[r] ? s && !strcmp(s, sd[r]) : !s);
    }
    REQUIRE(hta_result_copy_notes(&out, &parts, &err) == HTA_OK && out.nnotes == 2);
    REQUIRE(!strcmp(out.notes[0], "one") && !strcmp(out.notes[1], "two"));
    hta_table_free(got);
    hta_result_free(&parts);
    hta_result_free(&out);
    return 0;
}

int main(void) {
    if (dynamic_columns() || reader_checks_declaration() || reduce_tools()) return 1;
    printf("test_table: ok\n");
    return 0;
}
