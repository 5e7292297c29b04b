/* The page's building blocks: a growing text buffer, HTML escaping, and the few SVG charts the report
 * draws (axes with ticks and units, horizontal bars, stacked bars, lines over time, a heat map), each
 * with its legend.  No script, nothing fetched: the page is one file that opens offline anywhere.
 * Colours differ in lightness as well as hue, and the series that could be confused carry a pattern,
 * so that a grey print keeps them apart. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/svg.h"

void sb_printf(sb *b, const char *fmt, ...) {
    if (b->oom) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->len;
        int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->oom = 1;
            return;
        }
        if (b->s && (size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap : 65536;
        while (cap < b->len + (size_t)n + 1) cap *= 2;
        char *s = realloc(b->s, cap);
        if (!s) {
            b->oom = 1;
            return;
        }
        b->s = s, b->cap = cap;
    }
}

void sb_text(sb *b, const char *s) {
    for (; s && *s; s++) {
        switch (*s) {
        case '&': sb_printf(b, "&amp;"); break;
        case '<': sb_printf(b, "&lt;"); break;
        case '>': sb_printf(b, "&gt;"); break;
        case '"': sb_printf(b, "&quot;"); break;
        default: sb_printf(b, "%c", *s);
        }
    }
}

void sb_free(sb *b) {
    free(b->s);
    memset(b, 0, sizeof *b);
}

/* Fill of series i: six lightness steps; the last three also striped or dotted. */
const char *svg_fill(int i) {
    static const char *const f[] = {"#08306b", "#6baed6", "#deebf7", "url(#p-stripe)", "url(#p-dots)", "#636363"};
    return f[((i % 6) + 6) % 6];
}

void svg_defs(sb *b) {
    sb_printf(b, "<svg width=\"0\" height=\"0\" style=\"position:absolute\" aria-hidden=\"true\"><defs>"
                 "<pattern id=\"p-stripe\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
                 "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#fdd0a2\"/>"
                 "<rect width=\"3\" height=\"6\" fill=\"#d94801\"/></pattern>"
                 "<pattern id=\"p-dots\" width=\"5\" height=\"5\" patternUnits=\"userSpaceOnUse\">"
                 "<rect width=\"5\" height=\"5\" fill=\"#e5f5e0\"/><circle cx=\"2.5\" cy=\"2.5\" r=\"1.5\" "
                 "fill=\"#238b45\"/></pattern></defs></svg>\n");
}

/* A "nice" step for about n ticks over [0, hi]. */
static double nice_step(double hi, int n) {
    if (!(hi > 0)) return 1;
    double raw = hi / n, p = pow(10, floor(log10(raw))), m = raw / p;
    return (m < 1.5 ? 1 : m < 3 ? 2 : m < 7 ? 5 : 10) * p;
}

void svg_open(sb *b, const char *id, const char *title, int w, int h) {
    sb_printf(b, "<svg class=\"chart\" id=\"chart-%s\" role=\"img\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">"
                 "<title>",
              id, w, h, w, h);
    sb_text(b, title);
    sb_printf(b, "</title>\n");
}

void svg_close(sb *b) { sb_printf(b, "</svg>\n"); }

void svg_legend(sb *b, int x, int y, const char *const *names, int n, const int *fills) {
    for (int i = 0; i < n; i++) {
        sb_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\" stroke=\"#333\" stroke-width=\"0.5\"/>"
                     "<text x=\"%d\" y=\"%d\" class=\"lg\">",
                  x, y - 10, svg_fill(fills ? fills[i] : i), x + 16, y);
        sb_text(b, names[i]);
        sb_printf(b, "</text>");
        x += 24 + 7 * (int)strlen(names[i]);
    }
    sb_printf(b, "\n");
}

/* A value axis along x from px0 to px1 (data 0 .. hi) at height y, with ticks and the unit. */
void svg_xaxis(sb *b, double px0, double px1, double y, double hi, const char *unit) {
    double st = nice_step(hi, 5);
    sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"ax\"/>", px0, y, px1, y);
    for (double v = 0; hi > 0 && v <= hi * 1.0001; v += st) {
        double x = px0 + (px1 - px0) * v / hi;
        sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"ax\"/>"
                     "<text x=\"%.1f\" y=\"%.1f\" class=\"tk\" text-anchor=\"middle\">%g</text>",
                  x, y, x, y + 4, x, y + 15, v);
    }
    sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"un\" text-anchor=\"middle\">", (px0 + px1) / 2, y + 30);
    sb_text(b, unit);
    sb_printf(b, "</text>\n");
}

/* A value axis along y from py1 (data 0, bottom) to py0 (hi) at x, with ticks and the unit. */
void svg_yaxis(sb *b, double x, double py0, double py1, double hi, const char *unit, int ticks) {
    double st = nice_step(hi, ticks);
    sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"ax\"/>", x, py0, x, py1);
    for (double v = 0; hi > 0 && v <= hi * 1.0001; v += st) {
        double y = py1 - (py1 - py0) * v / hi;
        sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"ax\"/>"
                     "<text x=\"%.1f\" y=\"%.1f\" class=\"tk\" text-anchor=\"end\">%g</text>",
                  x - 4, y, x, y, x - 6, y + 3, v);
    }
    if (unit && *unit) {
        sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"un\" transform=\"rotate(-90 %.1f %.1f)\" text-anchor=\"middle\">",
                  x - 36, (py0 + py1) / 2, x - 36, (py0 + py1) / 2);
        sb_text(b, unit);
        sb_printf(b, "</text>\n");
    }
}

void svg_hbars(sb *b, const char *id, const char *title, const char *const *labels, const double *v, int n,
               const char *unit, int label_w) {
    int rowh = 18, w = 900, top = 10, h = top + n * rowh + 45;
    double hi = 0;
    for (int i = 0; i < n; i++) hi = fmax(hi, v[i]);
    if (!(hi > 0)) hi = 1;
    double x0 = label_w, x1 = w - 60;
    svg_open(b, id, title, w, h);
    for (int i = 0; i < n; i++) {
        double y = top + i * rowh, bw = (x1 - x0) * (isnan(v[i]) ? 0 : v[i]) / hi;
        sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"lb\" text-anchor=\"end\">", x0 - 6, y + 12);
        sb_text(b, labels[i]);
        sb_printf(b, "</text><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>",
                  x0, y + 2, bw, rowh - 4, svg_fill(0));
        /* a value that does not exist (NaN) is no bar and no number */
        if (isnan(v[i])) sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"tk\">-</text>\n", x0 + 4, y + 12);
        else sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"tk\">%.4g</text>\n", x0 + bw + 4, y + 12, v[i]);
    }
    svg_xaxis(b, x0, x1, top + n * rowh + 2, hi, unit);
    svg_close(b);
}

void svg_stacked(sb *b, const char *id, const char *title, const char *const *labels, int n,
                 const char *const *series, int ns, const double *v, const char *unit, double hi, int label_w) {
    int rowh = n > 40 ? 10 : 18, w = 900, top = 30, h = top + n * rowh + 45;
    if (!(hi > 0)) {
        for (int i = 0; i < n; i++) {
            double s = 0;
            for (int j = 0; j < ns; j++) s += isnan(v[i * ns + j]) ? 0 : v[i * ns + j];
            hi = fmax(hi, s);
        }
        if (!(hi > 0)) hi = 1;
    }
    double x0 = label_w, x1 = w - 30;
    svg_open(b, id, title, w, h);
    svg_legend(b, (int)x0, 16, series, ns, NULL);
    for (int i = 0; i < n; i++) {
        double y = top + i * rowh, x = x0;
        sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"lb\" text-anchor=\"end\">", x0 - 6, y + rowh - 5);
        sb_text(b, labels[i]);
        sb_printf(b, "</text>");
        for (int j = 0; j < ns; j++) {
            double d = v[i * ns + j];
            if (isnan(d) || d <= 0) continue;
            double bw = (x1 - x0) * d / hi;
            sb_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"%s\" stroke=\"#fff\" "
                         "stroke-width=\"0.3\"><title>",
                      x, y + 1, bw, rowh - 2, svg_fill(j));
            sb_text(b, labels[i]);
            sb_printf(b, " ");
            sb_text(b, series[j]);
            sb_printf(b, ": %.4g ", d);
            sb_text(b, unit);
            sb_printf(b, "</title></rect>");
            x += bw;
        }
        sb_printf(b, "\n");
    }
    svg_xaxis(b, x0, x1, top + n * rowh + 2, hi, unit);
    svg_close(b);
}
