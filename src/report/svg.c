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

#include "hta/table.h"
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

/* The number t ("-1234.5") into buf with its thousands apart: "-1,234.5"; "-0" as "0". */
static const char *commas(const char *t, char *buf) {
    const char *p = t;
    size_t o = 0;
    if (*p == '-') {
        p++;
        if (strspn(p, "0.") != strlen(p)) buf[o++] = '-'; /* -0.00 is 0.00 */
    }
    size_t nd = strcspn(p, ".");
    for (size_t i = 0; i < nd; i++) {
        buf[o++] = p[i];
        if ((nd - 1 - i) % 3 == 0 && i + 1 < nd) buf[o++] = ',';
    }
    strcpy(buf + o, p + nd);
    return buf;
}

const char *svg_num(double v, int dec, char *buf) {
    if (isnan(v) || isinf(v)) return strcpy(buf, "-");
    if (dec == SVG_TABLE) { /* the table formats' digits, which have no exponent either */
        hta_table_float_text(v, buf, SVG_NUM);
        return buf;
    }
    double a = fabs(v);
    int d = dec;
    if (dec < 0) /* 4 significant digits: 3 decimals more than the first digit's place; none from 1,000 */
        d = a < 5e-13 ? 0 : 3 - (int)floor(log10(a));
    d = d < 0 ? 0 : d > 12 ? 12 : d;
    char t[SVG_NUM - 160]; /* the largest double has 309 digits; commas take a third more */
    snprintf(t, sizeof t, "%.*f", d, v);
    char *dot = strchr(t, '.');
    if (dec < 0 && dot) { /* 12.50 -> 12.5, 3.000 -> 3 */
        char *e = t + strlen(t) - 1;
        while (e > dot && *e == '0') *e-- = 0;
        if (e == dot) *e = 0;
    }
    return commas(t, buf);
}

const char *svg_fit(const char *s, int maxc, char *buf) {
    size_t l = strlen(s);
    if (maxc < 8 || l <= (size_t)maxc) return s;
    /* the end tells variants apart (template arguments, tile sizes) as often as the start names them */
    size_t tl = (size_t)maxc / 3, hl = (size_t)maxc - 3 - tl, t = l - tl;
    while (hl > 0 && ((unsigned char)s[hl] & 0xC0) == 0x80) hl--; /* whole UTF-8 characters */
    while (s[t] && ((unsigned char)s[t] & 0xC0) == 0x80) t++;
    snprintf(buf, (size_t)maxc + 1, "%.*s...%s", (int)hl, s, s + t);
    return buf;
}

/* 7 pixels a character at 11px: wider than most sans-serif fonts' average, DejaVu Sans' included */
#define CHAR_W 7.0

int svg_label_chars(double w) { return (int)(w / CHAR_W); }

void svg_empty(sb *b, const char *id, const char *why) {
    sb_printf(b, "<p class=\"empty\" id=\"chart-%s-empty\">", id);
    sb_text(b, why);
    sb_printf(b, "</p>\n");
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

static int legend_w(const char *name) { return 16 + (int)(CHAR_W * (double)strlen(name)) + 12; }

int svg_legend_rows(int x, int xmax, const char *const *names, int n) {
    int rows = 1, cx = x;
    for (int i = 0; i < n; i++) {
        int w = legend_w(names[i]);
        if (cx > x && cx + w > xmax) rows++, cx = x;
        cx += w;
    }
    return rows;
}

void svg_legend(sb *b, int x, int y, int xmax, const char *const *names, int n, const int *fills) {
    int cx = x;
    sb_printf(b, "<g class=\"legend\">");
    for (int i = 0; i < n; i++) {
        int w = legend_w(names[i]);
        if (cx > x && cx + w > xmax) y += SVG_LEGEND_ROW, cx = x; /* the same break as svg_legend_rows */
        sb_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\" stroke=\"#333\" stroke-width=\"0.5\"/>"
                     "<text x=\"%d\" y=\"%d\" class=\"lg\">",
                  cx, y - 10, svg_fill(fills ? fills[i] : i), cx + 16, y);
        sb_text(b, names[i]);
        sb_printf(b, "</text>");
        cx += w;
    }
    sb_printf(b, "</g>\n");
}

/* A value axis along x from px0 to px1 (data 0 .. hi) at height y, with ticks and the unit. */
void svg_xaxis(sb *b, double px0, double px1, double y, double hi, const char *unit) {
    double st = nice_step(hi, 5);
    sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"ax\"/>", px0, y, px1, y);
    char nb[SVG_NUM];
    for (int i = 0; hi > 0 && i * st <= hi * 1.0001; i++) { /* i * st: no sum of rounding errors */
        double v = i * st, x = px0 + (px1 - px0) * v / hi;
        sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"ax\"/>"
                     "<text x=\"%.1f\" y=\"%.1f\" class=\"tk\" text-anchor=\"middle\">%s</text>",
                  x, y, x, y + 4, x, y + 15, svg_num(v, SVG_SIG, nb));
    }
    sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"un\" text-anchor=\"middle\">", (px0 + px1) / 2, y + 30);
    sb_text(b, unit);
    sb_printf(b, "</text>\n");
}

/* A value axis along y from py1 (data 0, bottom) to py0 (hi) at x, with ticks and the unit. */
void svg_yaxis(sb *b, double x, double py0, double py1, double hi, const char *unit, int ticks) {
    double st = nice_step(hi, ticks);
    sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"ax\"/>", x, py0, x, py1);
    char nb[SVG_NUM];
    for (int i = 0; hi > 0 && i * st <= hi * 1.0001; i++) {
        double v = i * st, y = py1 - (py1 - py0) * v / hi;
        sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"ax\"/>"
                     "<text x=\"%.1f\" y=\"%.1f\" class=\"tk\" text-anchor=\"end\">%s</text>",
                  x - 4, y, x, y, x - 6, y + 3, svg_num(v, SVG_SIG, nb));
    }
    if (unit && *unit) {
        sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"un\" transform=\"rotate(-90 %.1f %.1f)\" text-anchor=\"middle\">",
                  x - 36, (py0 + py1) / 2, x - 36, (py0 + py1) / 2);
        sb_text(b, unit);
        sb_printf(b, "</text>\n");
    }
}

/* The start of a chart of bars with labels left of x0: the buffer for a label cut to fit (*maxc characters,
 * the caller's to give to bars_close), then the chart opened; NULL (b->oom set) when out of memory. */
static char *bars_open(sb *b, const char *id, const char *title, int w, int h, double x0, int *maxc) {
    *maxc = svg_label_chars(x0 - 8);
    char *lb = malloc((size_t)*maxc + 1);
    if (!lb) {
        b->oom = 1;
        return NULL;
    }
    svg_open(b, id, title, w, h);
    return lb;
}

/* Its end: the label buffer freed, the value axis from x0 to x1 at y (0 to hi), the chart closed. */
static void bars_close(sb *b, char *lb, double x0, double x1, double y, double hi, const char *unit) {
    free(lb);
    svg_xaxis(b, x0, x1, y, hi, unit);
    svg_close(b);
}

void svg_hbars(sb *b, const char *id, const char *title, const char *const *labels, const char *const *tips,
               const double *v, int n, const char *unit, int label_w, const char *empty) {
    int rowh = 18, w = 900, top = 10, h = top + n * rowh + 45;
    double hi = 0;
    for (int i = 0; i < n; i++) hi = fmax(hi, v[i]);
    if (!(hi > 0)) {
        svg_empty(b, id, empty);
        return;
    }
    double x0 = label_w, x1 = w - 60;
    int maxc;
    char nb[SVG_NUM], *lb = bars_open(b, id, title, w, h, x0, &maxc);
    if (!lb) return;
    for (int i = 0; i < n; i++) {
        double y = top + i * rowh, bw = (x1 - x0) * (isnan(v[i]) ? 0 : v[i]) / hi;
        /* the bar's tooltip names it whole, with its value */
        sb_printf(b, "<g><title>");
        sb_text(b, tips && tips[i] ? tips[i] : labels[i]);
        sb_printf(b, ": %s ", svg_num(v[i], SVG_SIG, nb));
        sb_text(b, unit);
        sb_printf(b, "</title><text x=\"%.1f\" y=\"%.1f\" class=\"lb\" text-anchor=\"end\">", x0 - 6, y + 12);
        sb_text(b, svg_fit(labels[i], maxc, lb));
        sb_printf(b, "</text><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>",
                  x0, y + 2, bw, rowh - 4, svg_fill(0));
        /* a value that does not exist (NaN) is no bar, and "-" */
        sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"tk\">%s</text></g>\n", x0 + bw + 4, y + 12,
                  svg_num(v[i], SVG_SIG, nb));
    }
    bars_close(b, lb, x0, x1, top + n * rowh + 2, hi, unit);
}

void svg_stacked(sb *b, const char *id, const char *title, const char *const *labels, int n,
                 const char *const *series, int ns, const double *v, const char *unit, double hi, int label_w,
                 const char *empty) {
    double most = 0;
    for (int i = 0; i < n * ns; i++) most = fmax(most, v[i]);
    if (!(most > 0)) {
        svg_empty(b, id, empty);
        return;
    }
    int w = 900, rowh = n > 40 ? 14 : 18, rows = svg_legend_rows(label_w, w - 10, series, ns);
    int top = 30 + (rows - 1) * SVG_LEGEND_ROW, h = top + n * rowh + 45;
    if (!(hi > 0)) {
        for (int i = 0; i < n; i++) {
            double s = 0;
            for (int j = 0; j < ns; j++) s += isnan(v[i * ns + j]) ? 0 : v[i * ns + j];
            hi = fmax(hi, s);
        }
    }
    double x0 = label_w, x1 = w - 30;
    int maxc;
    char nb[SVG_NUM], *lb = bars_open(b, id, title, w, h, x0, &maxc);
    if (!lb) return;
    svg_legend(b, (int)x0, 16, w - 10, series, ns, NULL);
    for (int i = 0; i < n; i++) {
        double y = top + i * rowh, x = x0;
        sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"lb\" text-anchor=\"end\">", x0 - 6, y + rowh - 5);
        sb_text(b, svg_fit(labels[i], maxc, lb));
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
            sb_printf(b, ": %s ", svg_num(d, SVG_SIG, nb));
            sb_text(b, unit);
            sb_printf(b, "</title></rect>");
            x += bw;
        }
        sb_printf(b, "\n");
    }
    bars_close(b, lb, x0, x1, top + n * rowh + 2, hi, unit);
}
