/* The three output formats of a result (hta_result_write, table.h): json and csv for programs, the aligned
 * table for people.  Every command prints through here (cli_emit in src/cli/common.c), so all commands
 * format numbers and nulls the same way. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hta/table.h"

/* Each type has its own null: NaN for floats (pandas' missing value), NULL for text, and a separate flag
 * for ints, where every value is a valid number. */
static int is_null(const hta_column *c, size_t r) {
    if (c->type == HTA_COL_FLOAT) return isnan(c->v.f[r]);
    if (c->type == HTA_COL_STR) return c->v.s[r] == NULL;
    return c->null && c->null[r];
}

/* Shortest text that reads back as the same double: 17 significant digits always round-trip, 15 print
 * decimal values as they were meant (0.1, not 0.10000000000000001), so the output is exact and still
 * readable. */
static void fmt_double(char *buf, size_t n, double v) {
    if (isinf(v)) {
        snprintf(buf, n, v > 0 ? "inf" : "-inf");
        return;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
}

/* Only what JSON requires is escaped (quote, backslash, control characters): a JSON string may hold any
 * other UTF-8 as it is. */
static void json_str(FILE *f, const char *s) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (*p < 0x20) fprintf(f, "\\u%04x", *p);
            else fputc(*p, f);
        }
    }
    fputc('"', f);
}

static void json_cell(FILE *f, const hta_column *c, size_t r) {
    if (is_null(c, r)) {
        fputs("null", f);
        return;
    }
    char buf[64];
    switch (c->type) {
    case HTA_COL_INT: fprintf(f, "%" PRId64, c->v.i[r]); break;
    case HTA_COL_FLOAT:
        if (isinf(c->v.f[r])) {
            /* JSON has no literal for infinity; 1e999 overflows to it in readers such as Python's json. */
            fputs(c->v.f[r] > 0 ? "1e999" : "-1e999", f);
        } else {
            fmt_double(buf, sizeof buf, c->v.f[r]);
            /* keep floats recognisable as floats: a reader sees 3.0, not 3, so a FLOAT column does not
             * come back as ints */
            fputs(buf, f);
            if (!strpbrk(buf, ".eEn")) fputs(".0", f);
        }
        break;
    case HTA_COL_STR: json_str(f, c->v.s[r]); break;
    }
}

static void write_json(FILE *f, const hta_result *res) {
    fputc('{', f);
    for (size_t i = 0; i < res->n; i++) {
        const hta_table *t = res->tables[i];
        if (i) fputs(",\n", f);
        json_str(f, t->name);
        fputs(": {\"columns\": [", f);
        for (size_t c = 0; c < t->ncols; c++) {
            if (c) fputs(", ", f);
            json_str(f, t->cols[c].name);
        }
        fputs("], \"data\": [", f);
        for (size_t r = 0; r < t->nrows; r++) {
            /* one row per line, for people and line-based tools; still one JSON document */
            fputs(r ? ",\n  [" : "\n  [", f);
            for (size_t c = 0; c < t->ncols; c++) {
                if (c) fputs(", ", f);
                json_cell(f, &t->cols[c], r);
            }
            fputc(']', f);
        }
        fputs("]}", f);
    }
    fputs("}\n", f);
}

/* A csv cell: exact numbers as in json, null as an empty field (what pandas' to_csv writes for NaN). */
static void cell_text(const hta_column *c, size_t r, char *buf, size_t n, const char **out) {
    *out = buf;
    if (is_null(c, r)) {
        *out = "";
        return;
    }
    switch (c->type) {
    case HTA_COL_INT: snprintf(buf, n, "%" PRId64, c->v.i[r]); break;
    case HTA_COL_FLOAT: fmt_double(buf, n, c->v.f[r]); break;
    case HTA_COL_STR: *out = c->v.s[r]; break;
    }
}

/* RFC 4180 quoting, only where needed: kernel names are full of commas (template arguments), most cells
 * are not. */
static void csv_field(FILE *f, const char *s) {
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void write_csv(FILE *f, const hta_result *res) {
    for (size_t i = 0; i < res->n; i++) {
        const hta_table *t = res->tables[i];
        /* A single table is plain CSV any reader takes; several get a "# name" line each and a blank line
         * between. */
        if (res->n > 1) fprintf(f, "%s# %s\n", i ? "\n" : "", t->name);
        for (size_t c = 0; c < t->ncols; c++) {
            if (c) fputc(',', f);
            csv_field(f, t->cols[c].name);
        }
        fputc('\n', f);
        char buf[64];
        for (size_t r = 0; r < t->nrows; r++) {
            for (size_t c = 0; c < t->ncols; c++) {
                const char *s;
                cell_text(&t->cols[c], r, buf, sizeof buf, &s);
                if (c) fputc(',', f);
                csv_field(f, s);
            }
            fputc('\n', f);
        }
    }
}

/* Human table: whole numbers without decimals, others with 3 (6 significant digits when very large or very
 * small), long text cut at MAXW so that one kernel name of a kilobyte of C++ templates does not push every
 * other column off the screen. */
#define MAXW 60

static void table_cell(const hta_column *c, size_t r, char *buf, size_t n) {
    if (is_null(c, r)) {
        /* null reads "-" for a person; csv leaves the field empty and json writes null */
        snprintf(buf, n, "-");
        return;
    }
    switch (c->type) {
    case HTA_COL_INT: snprintf(buf, n, "%" PRId64, c->v.i[r]); break;
    case HTA_COL_FLOAT: {
        double v = c->v.f[r];
        /* whole numbers as integers up to 1e15; beyond that %g is shorter */
        if (v == floor(v) && fabs(v) < 1e15) snprintf(buf, n, "%.0f", v);
        else if (fabs(v) >= 1e6 || fabs(v) < 1e-3) snprintf(buf, n, "%.6g", v);
        else snprintf(buf, n, "%.3f", v);
        break;
    }
    case HTA_COL_STR: {
        const char *s = c->v.s[r];
        size_t l = strlen(s);
        if (l > MAXW) snprintf(buf, n, "%.*s...", MAXW - 3, s);
        else snprintf(buf, n, "%s", s);
        break;
    }
    }
}

/* The piece of a wrapped cell on line `line` (0-based), cut at spaces to at most w bytes; a word longer
 * than w is cut inside.  It walks from the cell's start each time: the table is printed a whole line
 * across all columns at a time, and wrapped cells are a few lines of prose. */
static const char *wrap_piece(const char *s, size_t w, int line, size_t *len) {
    for (int l = 0;; l++) {
        size_t n = strlen(s);
        size_t cut = n;
        if (n > w) {
            cut = w;
            while (cut > 0 && s[cut] != ' ') cut--;
            if (cut == 0) cut = w;
        }
        if (l == line) {
            *len = cut;
            return s;
        }
        if (cut >= n) {
            *len = 0;
            return NULL;
        }
        s += cut;
        while (*s == ' ') s++;
    }
}

static void write_table(FILE *f, const hta_result *res) {
    char buf[MAXW + 8];
    for (size_t i = 0; i < res->n; i++) {
        const hta_table *t = res->tables[i];
        size_t *w = calloc(t->ncols ? t->ncols : 1, sizeof *w);
        if (!w) return;
        for (size_t c = 0; c < t->ncols; c++) {
            /* Column width = its widest cell or header; table_cell has already cut text at MAXW, so
             * wrapped (prose) columns are MAXW wide at most and wrap inside that. */
            w[c] = strlen(t->cols[c].name);
            if (w[c] > MAXW) w[c] = MAXW;
            for (size_t r = 0; r < t->nrows; r++) {
                table_cell(&t->cols[c], r, buf, sizeof buf);
                size_t l = strlen(buf);
                if (l > w[c]) w[c] = l;
            }
        }
        fprintf(f, "%s%s (%zu row%s)\n", i ? "\n" : "", t->name, t->nrows, t->nrows == 1 ? "" : "s");
        for (size_t c = 0; c < t->ncols; c++) {
            /* numbers right-aligned so that their digits line up; text left-aligned */
            int right = t->cols[c].type != HTA_COL_STR;
            fprintf(f, c ? "  %*.*s" : "%*.*s", right ? (int)w[c] : -(int)w[c], MAXW, t->cols[c].name);
        }
        fputc('\n', f);
        for (size_t r = 0; r < t->nrows; r++) {
            /* A row takes as many lines as its longest wrapped cell; the other cells print on its first
             * line. */
            for (int line = 0;; line++) {
                int more = 0;
                for (size_t c = 0; c < t->ncols; c++) {
                    const hta_column *col = &t->cols[c];
                    int right = col->type != HTA_COL_STR;
                    const char *txt = "";
                    size_t tl = 0;
                    if (col->wrap && col->type == HTA_COL_STR && col->v.s[r]) {
                        txt = wrap_piece(col->v.s[r], w[c], line, &tl);
                        if (!txt) txt = "", tl = 0;
                        size_t nl;
                        if (wrap_piece(col->v.s[r], w[c], line + 1, &nl)) more = 1;
                    } else if (line == 0) {
                        table_cell(col, r, buf, sizeof buf);
                        txt = buf;
                        tl = strlen(buf);
                    }
                    int pad = (int)w[c] - (int)tl;
                    if (c) fputs("  ", f);
                    /* the last text column is not padded: no trailing spaces */
                    if (right) fprintf(f, "%*s%.*s", pad > 0 ? pad : 0, "", (int)tl, txt);
                    else if (c + 1 < t->ncols) fprintf(f, "%.*s%*s", (int)tl, txt, pad > 0 ? pad : 0, "");
                    else fprintf(f, "%.*s", (int)tl, txt);
                }
                fputc('\n', f);
                if (!more) break;
            }
        }
        free(w);
    }
}

int hta_result_write(FILE *f, const hta_result *r, hta_format fmt) {
    switch (fmt) {
    case HTA_FMT_JSON: write_json(f, r); break;
    case HTA_FMT_CSV: write_csv(f, r); break;
    case HTA_FMT_TABLE: write_table(f, r); break;
    }
    fflush(f);
    /* stdio's error flag is sticky: one check after the flush catches a failed write anywhere above (a
     * full disk, a closed pipe) */
    return ferror(f) ? -1 : 0;
}
