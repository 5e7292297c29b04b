/* The HTML page's building blocks (svg.c): a growing text buffer, HTML escaping and SVG charts with
 * axes, units and legends.  Not public: only the report's page uses them. */
#ifndef HTA_REPORT_SVG_H
#define HTA_REPORT_SVG_H

#include <stddef.h>

/* oom is sticky, as stdio's error flag: the many writes need no check each. */
typedef struct sb {
    char *s;
    size_t len, cap;
    int oom;
} sb;
void sb_printf(sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s with & < > " escaped for HTML text and attributes. */
void sb_text(sb *b, const char *s);
void sb_free(sb *b);

/* The page's one way of writing a number, in every chart, tooltip and table: never an exponent, thousands
 * apart with commas (1,520), dec decimals, or with SVG_SIG about 4 significant digits and no trailing
 * zeros (0.00002, 12.5, 1,520), or with SVG_TABLE as the table, CSV and JSON formats write a table's cell
 * (hta_table_float_text: 13328071.7), so a table reads the same in a terminal and on the page; NaN and
 * infinities as "-".  buf: SVG_NUM bytes. */
#define SVG_NUM 480
#define SVG_SIG (-1)
#define SVG_TABLE (-2)
const char *svg_num(double v, int dec, char *buf);
/* s cut to at most maxc characters for a label: its start, "..." and its end (the whole name goes in a
 * tooltip).  buf: maxc + 1 bytes at least; returns s itself when it fits. */
const char *svg_fit(const char *s, int maxc, char *buf);
/* The characters of a label (class lb, 11px) that fit in w pixels, with room to spare for wide fonts. */
int svg_label_chars(double w);
/* In place of a chart with nothing to draw: a sentence saying why (<p class="empty" id="chart-ID-empty">). */
void svg_empty(sb *b, const char *id, const char *why);

/* Fill of series i (colour or pattern; distinct in grey too), and the patterns' definitions. */
const char *svg_fill(int i);
void svg_defs(sb *b);
/* <svg class="chart" id="chart-ID"> with a <title>; svg_close ends it. */
void svg_open(sb *b, const char *id, const char *title, int w, int h);
void svg_close(sb *b);
/* Legend entries from x, first row's baseline at y, as many rows of SVG_LEGEND_ROW pixels as it takes
 * to keep each row before xmax; the fills of series fills[i] (NULL: 0 .. n-1).  svg_legend_rows: the
 * rows it will take (a chart's plot starts below them). */
#define SVG_LEGEND_ROW 18
int svg_legend_rows(int x, int xmax, const char *const *names, int n);
void svg_legend(sb *b, int x, int y, int xmax, const char *const *names, int n, const int *fills);
void svg_xaxis(sb *b, double px0, double px1, double y, double hi, const char *unit);
void svg_yaxis(sb *b, double x, double py0, double py1, double hi, const char *unit, int ticks);
/* One bar per label, value v[i] in unit; tips[i] (NULL: the label) in each bar's tooltip.  No value
 * above 0: the sentence empty instead of the chart. */
void svg_hbars(sb *b, const char *id, const char *title, const char *const *labels, const char *const *tips,
               const double *v, int n, const char *unit, int label_w, const char *empty);
/* One stacked bar per label: v[i * ns + j] of series j; hi: the axis' end (<= 0: the largest sum).  No
 * value above 0: the sentence empty instead of the chart. */
void svg_stacked(sb *b, const char *id, const char *title, const char *const *labels, int n,
                 const char *const *series, int ns, const double *v, const char *unit, double hi, int label_w,
                 const char *empty);

#endif
