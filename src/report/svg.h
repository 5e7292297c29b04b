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

/* Fill of series i (colour or pattern; distinct in grey too), and the patterns' definitions. */
const char *svg_fill(int i);
void svg_defs(sb *b);
/* <svg class="chart" id="chart-ID"> with a <title>; svg_close ends it. */
void svg_open(sb *b, const char *id, const char *title, int w, int h);
void svg_close(sb *b);
/* A row of legend entries at (x, y): the fills of series fills[i] (NULL: 0 .. n-1). */
void svg_legend(sb *b, int x, int y, const char *const *names, int n, const int *fills);
void svg_xaxis(sb *b, double px0, double px1, double y, double hi, const char *unit);
void svg_yaxis(sb *b, double x, double py0, double py1, double hi, const char *unit, int ticks);
/* One bar per label, value v[i] in unit. */
void svg_hbars(sb *b, const char *id, const char *title, const char *const *labels, const double *v, int n,
               const char *unit, int label_w);
/* One stacked bar per label: v[i * ns + j] of series j; hi: the axis' end (<= 0: the largest sum). */
void svg_stacked(sb *b, const char *id, const char *title, const char *const *labels, int n,
                 const char *const *series, int ns, const double *v, const char *unit, double hi, int label_w);

#endif
