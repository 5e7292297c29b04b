/* The three output formats of a result (hta_result_write, table.h): json and csv for programs, the aligned
 * table for people.  Every command prints through here (cli_emit in src/cli/common.c), so all commands
 * format numbers and nulls the same way. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

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

/* ---- the table format, for people ----
 *
 * A line fits LINE_W columns, in this order of means: prose columns (hta_table_col_wrap: findings, advice)
 * wrap at spaces and never cut a word that fits MAXW; long text (kernel names: a kilobyte of C++
 * templates) is cut in the middle, keeping its start and the part that tells it from the other cells of
 * its column; a table still too wide is printed as column blocks, each repeating the first column.
 * Numbers are never cut. */
#define LINE_W 100 /* the line when the output is no terminal; a terminal's own width otherwise */
#define LINE_MIN 60
#define LINE_MAX 240
#define MAXW 60  /* widest cut text and widest wrapped column */
#define WRAP_MIN 30 /* a prose column narrower than this makes its text move to lines of their own */
#define STACK_INDENT 4
#define MINW 40  /* narrowest a cut text column gets to make a line fit */
#define SOFT "_:,/.-" /* a word longer than its column breaks after one of these */

/* Whole numbers without decimals, others with 3; never in exponent notation (3393189.6, not 3.39319e+06),
 * which a person misreads and a spreadsheet may not parse: a million or more keeps one decimal, less than
 * 0.001 keeps 3 significant digits in fixed notation (0.0000795), and below 1e-12 it reads 0.000000000000. */
static void num_cell(const hta_column *c, size_t r, char *buf, size_t n) {
    if (is_null(c, r)) {
        /* null reads "-" for a person; csv leaves the field empty and json writes null */
        snprintf(buf, n, "-");
        return;
    }
    if (c->type == HTA_COL_INT) {
        snprintf(buf, n, "%" PRId64, c->v.i[r]);
        return;
    }
    hta_table_float_text(c->v.f[r], buf, n);
}

void hta_table_float_text(double v, char *buf, size_t n) {
    double a = fabs(v);
    /* (beyond 1e50, which no time or count here reaches, the digits would not fit a cell: %g there) */
    if (a >= 1e50) snprintf(buf, n, "%.6g", v);
    else if (v == floor(v) || a >= 1e15) snprintf(buf, n, "%.0f", v);
    else if (a >= 1e6) snprintf(buf, n, "%.1f", v);
    else if (a >= 1e-3) snprintf(buf, n, "%.3f", v);
    else {
        /* 3 significant digits: 2 more decimals than the first non-zero one's */
        int d = a >= 1e-12 ? 2 - (int)floor(log10(a)) : 12;
        snprintf(buf, n, "%.*f", d > 12 ? 12 : d, v);
    }
}

/* Cut points on UTF-8 character boundaries: a head ends before a continuation byte, a tail starts after. */
static size_t head_end(const char *s, size_t i) {
    while (i > 0 && ((unsigned char)s[i] & 0xC0) == 0x80) i--;
    return i;
}
static size_t tail_start(const char *s, size_t i) {
    while (s[i] && ((unsigned char)s[i] & 0xC0) == 0x80) i++;
    return i;
}

/* Text s (length l > w) in w bytes: its start, "...", and its end, or, where s differs from the most
 * similar other cell of its column only after p bytes that the start cannot show, the start, "...", the
 * bytes around p, "...".  Two kernels named alike up to their template arguments thus stay apart. */
static void cut_text(const char *s, size_t l, size_t p, size_t w, char *buf) {
    size_t tl = w >= MINW ? 16 : w / 3, hl = w - 3 - tl;
    if (p + 8 <= hl || p >= l - tl) {
        size_t h = head_end(s, hl), t = tail_start(s, l - tl);
        sprintf(buf, "%.*s...%s", (int)h, s, s + t);
        return;
    }
    /* the middle part starts where s differs, or at the start of the word (identifier) it differs in */
    size_t h2 = w * 2 / 5, m = w - h2 - 6, q = p;
    while (q > h2 && q + 6 > p && !strchr(" <,:(", s[q - 1])) q--;
    if (!strchr(" <,:(", s[q - 1])) q = p;
    size_t h = head_end(s, h2);
    if (q + m >= l) {
        sprintf(buf, "%.*s...%s", (int)h, s, s + tail_start(s, l - (w - h2 - 3)));
        return;
    }
    q = tail_start(s, q);
    size_t e = head_end(s, q + m);
    sprintf(buf, "%.*s...%.*s...", (int)h, s, (int)(e - q), s + q);
}

/* How a column prints. */
typedef struct tcol {
    size_t w;      /* printed width */
    size_t minw;   /* narrowest it may get */
    size_t cutw;   /* text: cells longer than this are cut (cut_text) */
    int right;     /* numbers: right-aligned */
    int wrap;      /* prose, wrapped over lines */
    uint32_t *lcp; /* text with long cells: per row, the common prefix with the most similar other cell */
} tcol;

static int str_cmp(const void *a, const void *b, void *ctx) {
    const hta_column *c = ctx;
    return strcmp(c->v.s[*(const uint32_t *)a], c->v.s[*(const uint32_t *)b]);
}

static size_t prefix(const char *a, const char *b) {
    size_t i = 0;
    while (a[i] && a[i] == b[i]) i++;
    return i;
}

/* Per row of a text column, the longest common prefix with another, different cell: the cells sorted, it is
 * the larger of the prefixes shared with the nearest different cell before and after.  NULL on failure
 * (the cut then keeps start and end only). */
static uint32_t *column_lcp(const hta_column *c, size_t nrows) {
    uint32_t *idx = malloc((nrows ? nrows : 1) * sizeof *idx), *lcp = calloc(nrows ? nrows : 1, sizeof *lcp);
    if (!idx || !lcp) {
        free(idx);
        free(lcp);
        return NULL;
    }
    size_t n = 0;
    for (size_t r = 0; r < nrows; r++)
        if (c->v.s[r]) idx[n++] = (uint32_t)r;
    qsort_r(idx, n, sizeof *idx, str_cmp, (void *)c);
    for (size_t i = 0; i < n;) {
        size_t j = i; /* [i, j): equal cells */
        while (j < n && !strcmp(c->v.s[idx[i]], c->v.s[idx[j]])) j++;
        size_t a = i ? prefix(c->v.s[idx[i]], c->v.s[idx[i - 1]]) : 0;
        size_t b = j < n ? prefix(c->v.s[idx[i]], c->v.s[idx[j]]) : 0;
        for (size_t k = i; k < j; k++) lcp[idx[k]] = (uint32_t)(a > b ? a : b);
        i = j;
    }
    free(idx);
    return lcp;
}

/* The text of cell r of a non-wrapped column into buf (MAXW + 8 bytes at least). */
static const char *cell_display(const hta_column *c, const tcol *tc, size_t r, char *buf, size_t n) {
    if (c->type != HTA_COL_STR || is_null(c, r)) {
        num_cell(c, r, buf, n);
        return buf;
    }
    const char *s = c->v.s[r];
    size_t l = strlen(s);
    if (l <= tc->cutw) return s;
    cut_text(s, l, tc->lcp ? tc->lcp[r] : 0, tc->cutw, buf);
    return buf;
}

/* The piece of a wrapped cell on line `line` (0-based), at most w bytes: cut at the last space that fits,
 * else (a word longer than w) after the last SOFT character of its first w bytes, else at w.  It walks
 * from the cell's start each time: the table is printed a whole line across all columns at a time, and
 * wrapped cells are a few lines of prose. */
static const char *wrap_piece(const char *s, size_t w, int line, size_t *len) {
    for (int l = 0;; l++) {
        size_t n = strlen(s);
        size_t cut = n;
        if (n > w) {
            cut = w;
            while (cut > 0 && s[cut] != ' ') cut--;
            if (cut == 0) {
                cut = w;
                while (cut > w / 2 && !strchr(SOFT, s[cut - 1])) cut--;
                if (cut <= w / 2) cut = head_end(s, w);
                if (!cut) cut = w;
            }
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

/* Widest word of s (runs between spaces). */
static size_t longest_word(const char *s) {
    size_t m = 0;
    while (*s) {
        size_t k = strcspn(s, " ");
        if (k > m) m = k;
        s += k;
        while (*s == ' ') s++;
    }
    return m;
}

/* Widths: every column its widest cell, then narrower until a line fits: wrapped columns down to their
 * longest word, cut text down to MINW. */
static void layout(const hta_table *t, tcol *tc, size_t line_w) {
    char buf[MAXW + 8];
    /* on a narrower terminal cut text narrows with it: two cut columns still share a line */
    size_t cutmin = line_w >= LINE_W ? MINW : MINW * line_w / LINE_W;
    for (size_t c = 0; c < t->ncols; c++) {
        const hta_column *col = &t->cols[c];
        tcol *x = &tc[c];
        size_t hw = strlen(col->name);
        if (hw > MAXW) hw = MAXW; /* a header is cut like the cells */
        x->right = col->type != HTA_COL_STR;
        x->wrap = col->wrap && col->type == HTA_COL_STR;
        x->cutw = MAXW;
        x->w = hw;
        x->minw = hw;
        int longcells = 0;
        for (size_t r = 0; r < t->nrows; r++) {
            if (col->type == HTA_COL_STR && col->v.s[r]) {
                size_t l = strlen(col->v.s[r]);
                if (x->wrap) {
                    size_t lw = longest_word(col->v.s[r]);
                    if (lw > MAXW) lw = MAXW;
                    if (lw > x->minw) x->minw = lw;
                    if (l > MAXW) l = MAXW;
                } else if (l > cutmin) {
                    longcells = 1; /* may be cut to cutmin to make the line fit */
                    if (l > MAXW) l = MAXW;
                }
                if (l > x->w) x->w = l;
            } else {
                num_cell(col, r, buf, sizeof buf);
                if (strlen(buf) > x->w) x->w = strlen(buf);
            }
        }
        if (!x->wrap) x->minw = longcells ? (hw > cutmin ? hw : cutmin) : x->w;
        if (x->minw > x->w) x->minw = x->w;
        if (longcells) x->lcp = column_lcp(col, t->nrows);
    }
    size_t total = 0, least = 0;
    for (size_t c = 0; c < t->ncols; c++) total += tc[c].w + (c ? 2 : 0), least += tc[c].minw + (c ? 2 : 0);
    /* A table that cannot fit even at its narrowest goes out in blocks of columns (write_table): cutting its
     * names further would gain nothing, so only prose narrows. */
    if (least > line_w && line_w >= LINE_W) /* (a narrower terminal: cut text narrows too, to share a block) */
        for (size_t c = 0; c < t->ncols; c++)
            if (!tc[c].wrap) tc[c].minw = tc[c].w;
    /* one column at a time, the widest that can give, so that the room left is shared */
    while (total > line_w) {
        size_t best = SIZE_MAX;
        for (size_t c = 0; c < t->ncols; c++)
            if (tc[c].w > tc[c].minw && (best == SIZE_MAX || tc[c].w > tc[best].w)) best = c;
        if (best == SIZE_MAX) break;
        tc[best].w--, total--;
    }
    for (size_t c = 0; c < t->ncols; c++)
        if (!tc[c].wrap && !tc[c].right && tc[c].lcp) tc[c].cutw = tc[c].w;
}

/* Columns first .. last-1, and the first column of the table when first > 0, as a table of their own. */
static void print_block(FILE *f, const hta_table *t, const tcol *tc, size_t first, size_t last) {
    char buf[MAXW + 8];
    size_t cols[LINE_MAX], nc = 0; /* a block has at most LINE_MAX / 3 + 1 columns */
    if (first) cols[nc++] = 0;
    for (size_t c = first; c < last && nc < sizeof cols / sizeof *cols; c++) cols[nc++] = c;
    for (size_t k = 0; k < nc; k++) {
        const tcol *x = &tc[cols[k]];
        const char *nm = t->cols[cols[k]].name;
        if (k) fputs("  ", f);
        if (x->right) fprintf(f, "%*.*s", (int)x->w, (int)x->w, nm);
        else if (k + 1 < nc) fprintf(f, "%-*.*s", (int)x->w, (int)x->w, nm);
        else fprintf(f, "%.*s", (int)x->w, nm);
    }
    fputc('\n', f);
    for (size_t r = 0; r < t->nrows; r++) {
        /* A row takes as many lines as its longest wrapped cell; the other cells print on its first line. */
        for (int line = 0;; line++) {
            int more = 0;
            for (size_t k = 0; k < nc; k++) {
                const hta_column *col = &t->cols[cols[k]];
                const tcol *x = &tc[cols[k]];
                const char *txt = "";
                size_t tl = 0;
                if (x->wrap && col->v.s[r]) {
                    txt = wrap_piece(col->v.s[r], x->w, line, &tl);
                    if (!txt) txt = "", tl = 0;
                    size_t nl;
                    if (wrap_piece(col->v.s[r], x->w, line + 1, &nl)) more = 1;
                } else if (line == 0) {
                    txt = cell_display(col, x, r, buf, sizeof buf);
                    tl = strlen(txt);
                }
                int pad = (int)x->w - (int)tl;
                if (k) fputs("  ", f);
                /* the last text column is not padded: no trailing spaces */
                if (x->right) fprintf(f, "%*s%.*s", pad > 0 ? pad : 0, "", (int)tl, txt);
                else if (k + 1 < nc) fprintf(f, "%.*s%*s", (int)tl, txt, pad > 0 ? pad : 0, "");
                else fprintf(f, "%.*s", (int)tl, txt);
            }
            fputc('\n', f);
            if (!more) break;
        }
    }
}

/* Whether the prose of table t moves to lines of its own (print_stacked): where a wrapped column would be
 * narrower than WRAP_MIN, or the table would go out in blocks of columns (a finding of 35 lines of 7
 * characters on the MI300 ResNet-18 trace). */
static int stacked(const hta_table *t, const tcol *tc, size_t line_w) {
    size_t total = 0, nwrap = 0, narrow = 0;
    for (size_t c = 0; c < t->ncols; c++) {
        total += tc[c].w + (c ? 2 : 0);
        if (!tc[c].wrap) continue;
        nwrap++;
        narrow += tc[c].w < WRAP_MIN && tc[c].w < tc[c].minw + WRAP_MIN; /* short prose stays in its column */
    }
    return nwrap && nwrap < t->ncols && (narrow || total > line_w);
}

/* The table's other columns as a table, and under each row its prose, each cell a paragraph of its own
 * ("evidence: ..."), indented and wrapped to the line; a blank line between rows. */
static void print_stacked(FILE *f, const hta_table *t, tcol *tc, size_t line_w) {
    char buf[MAXW + 8];
    size_t fixed = 0, last = 0;
    for (size_t c = 0; c < t->ncols; c++)
        if (!tc[c].wrap) fixed++, last = c;
    for (size_t c = 0, k = 0; c < t->ncols; c++) {
        if (tc[c].wrap) continue;
        const char *nm = t->cols[c].name;
        if (k++) fputs("  ", f);
        if (tc[c].right) fprintf(f, "%*.*s", (int)tc[c].w, (int)tc[c].w, nm);
        else if (c != last) fprintf(f, "%-*.*s", (int)tc[c].w, (int)tc[c].w, nm);
        else fprintf(f, "%.*s", (int)tc[c].w, nm);
    }
    fputc('\n', f);
    size_t w = line_w - STACK_INDENT;
    for (size_t r = 0; r < t->nrows; r++) {
        if (r) fputc('\n', f);
        for (size_t c = 0, k = 0; c < t->ncols; c++) {
            if (tc[c].wrap) continue;
            const char *txt = cell_display(&t->cols[c], &tc[c], r, buf, sizeof buf);
            int pad = (int)tc[c].w - (int)strlen(txt);
            if (k++) fputs("  ", f);
            if (tc[c].right) fprintf(f, "%*s%s", pad > 0 ? pad : 0, "", txt);
            else if (c != last) fprintf(f, "%s%*s", txt, pad > 0 ? pad : 0, "");
            else fputs(txt, f);
        }
        if (fixed) fputc('\n', f);
        for (size_t c = 0; c < t->ncols; c++) {
            const char *v = tc[c].wrap ? t->cols[c].v.s[r] : NULL;
            if (!v || !*v) continue;
            size_t nl = strlen(t->cols[c].name) + strlen(v) + 3;
            char *para = malloc(nl);
            if (!para) return;
            snprintf(para, nl, "%s: %s", t->cols[c].name, v);
            size_t len;
            const char *piece;
            for (int line = 0; (piece = wrap_piece(para, w, line, &len)); line++)
                fprintf(f, "%*s%.*s\n", STACK_INDENT, "", (int)len, piece);
            free(para);
        }
    }
}

/* The line the table format fills: the terminal's width where f is one (within LINE_MIN..LINE_MAX), else
 * LINE_W. */
static size_t line_width(FILE *f) {
    struct winsize ws;
    int fd = fileno(f);
    if (fd < 0 || !isatty(fd) || ioctl(fd, TIOCGWINSZ, &ws) != 0 || !ws.ws_col) return LINE_W;
    return ws.ws_col < LINE_MIN ? LINE_MIN : ws.ws_col > LINE_MAX ? LINE_MAX : ws.ws_col;
}

static void write_table(FILE *f, const hta_result *res) {
    size_t line_w = line_width(f);
    for (size_t i = 0; i < res->n; i++) {
        const hta_table *t = res->tables[i];
        tcol *tc = calloc(t->ncols ? t->ncols : 1, sizeof *tc);
        if (!tc) return;
        layout(t, tc, line_w);
        fprintf(f, "%s%s (%zu row%s)\n", i ? "\n" : "", t->name, t->nrows, t->nrows == 1 ? "" : "s");
        if (stacked(t, tc, line_w)) {
            /* the other columns at their full width (only prose had narrowed), the prose under them */
            for (size_t k = 0; k < t->ncols; k++) free(tc[k].lcp);
            memset(tc, 0, t->ncols * sizeof *tc);
            tcol *fx = tc;
            layout(t, fx, line_w);
            for (size_t k = 0; k < t->ncols; k++) {
                if (!fx[k].wrap) continue;
                /* short prose (a list of ranks) stays in the row; the rest goes out of the row's line */
                size_t m = strlen(t->cols[k].name);
                for (size_t r = 0; r < t->nrows && m <= WRAP_MIN; r++)
                    if (t->cols[k].v.s[r] && strlen(t->cols[k].v.s[r]) > m) m = strlen(t->cols[k].v.s[r]);
                if (m <= WRAP_MIN) fx[k].wrap = 0, fx[k].w = fx[k].cutw = m;
                else fx[k].w = 0;
            }
            print_stacked(f, t, fx, line_w);
            for (size_t k = 0; k < t->ncols; k++) free(tc[k].lcp);
            free(tc);
            continue;
        }
        /* blocks of columns that fit a line, each after the first repeating column 0 (the rank, the name) */
        size_t c = 0;
        while (c < t->ncols || (c == 0 && !t->ncols)) {
            size_t used = c ? tc[0].w : 0, e = c;
            while (e < t->ncols && (e == c || used + 2 + tc[e].w <= line_w)) used += (used ? 2 : 0) + tc[e].w, e++;
            if (c) fputc('\n', f);
            print_block(f, t, tc, c, e);
            if (e == c) break;
            c = e;
        }
        for (size_t k = 0; k < t->ncols; k++) free(tc[k].lcp);
        free(tc);
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
