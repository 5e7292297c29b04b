/* The page's roofline section (docs/report.md, "The HTML page"): one point per operator and shape class
 * of the report's op_roofline table at its arithmetic intensity and TFLOP/s, under the roof of the
 * device table's peaks.  A device whose peaks hta does not know gets its points and a sentence saying
 * why no roof is drawn, never a roof made up. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hta/efficiency.h"
#include "hta/report.h"
#include "report/internal.h"
#include "report/svg.h"

static double num(const hta_table *t, size_t r, int c) { return hta_table_get_float(t, r, c); }
static const char *txt(const hta_table *t, size_t r, int c) { return hta_table_get_str(t, r, c); }
static double lg(double x) { return log10(x); }

int rp_roofline_chart(sb *b, const hta_result *res) {
    const hta_table *t = hta_result_find(res, "op_roofline"), *dev = hta_result_find(res, "device");
    if (!t || !dev) return 0;
    /* the roof of the dtype with the most GPU time among the points */
    double tot = 0, xmin = INFINITY, xmax = 0, ymin = INFINITY, ymax = 0;
    size_t np = 0;
    const char *dt = NULL;
    double dt_us = 0;
    for (size_t r = 0; r < t->nrows; r++) {
        double x = num(t, r, HTA_ROOF_INTENSITY), y = num(t, r, HTA_ROOF_TFLOPS), us = num(t, r, HTA_ROOF_GPU_US);
        if (!(x > 0) || !(y > 0) || !(us > 0)) continue;
        np++, tot += us;
        xmin = fmin(xmin, x), xmax = fmax(xmax, x), ymin = fmin(ymin, y), ymax = fmax(ymax, y);
        if (us > dt_us) dt_us = us, dt = txt(t, r, HTA_ROOF_DTYPE);
    }
    if (!np) return 0;
    double peak = NAN, bw = NAN;
    const char *dname = NULL;
    for (size_t r = 0; r < dev->nrows; r++) {
        const char *d = txt(dev, r, HTA_DEV_DTYPE);
        if (!dname) dname = txt(dev, r, HTA_DEV_NAME);
        /* the op_roofline dtype text starts with the dtype's short name (bf16, fp8e4m3, fp32...) */
        if (d && dt && !strncmp(dt, d, strlen(d))) {
            peak = num(dev, r, HTA_DEV_TFLOPS), bw = num(dev, r, HTA_DEV_TBPS), dname = txt(dev, r, HTA_DEV_NAME);
        }
    }
    int roof = peak > 0 && bw > 0;
    if (roof) ymax = fmax(ymax, peak), xmax = fmax(xmax, 4 * peak / bw), xmin = fmin(xmin, peak / bw / 100);
    double x0 = pow(10, floor(lg(xmin))), x1 = pow(10, ceil(lg(xmax))), y0 = pow(10, floor(lg(ymin))),
           y1 = pow(10, ceil(lg(ymax)));
    if (x1 <= x0) x1 = x0 * 10;
    if (y1 <= y0) y1 = y0 * 10;
    int w = 900, h = 420, left = 70, top = 30, pw = w - left - 30, ph = h - top - 50;
#define PX(x) (left + pw * (lg(x) - lg(x0)) / (lg(x1) - lg(x0)))
#define PY(y) (top + ph - ph * (lg(y) - lg(y0)) / (lg(y1) - lg(y0)))
    sb_printf(b, "<h2 id=\"roofline\">Roofline: operators against the GPU's peak</h2><p class=\"note\">One point "
                 "per operator and shape class with a FLOP count (area: its GPU time), at its arithmetic "
                 "intensity and the TFLOP/s its kernels reached");
    if (roof)
        sb_printf(b, "; the line is the roof of %s (memory TB/s times intensity, then the peak)", dt ? dt : "the GPU");
    sb_printf(b, ". Log axes. Bytes-only operators are in `hta efficiency`.</p>\n");
    if (!roof) {
        sb_printf(b, "<p class=\"note\" id=\"roofline-no-roof\">No roof is drawn: ");
        if (dname && *dname && *dname != '(') { /* "(no deviceProperties)" says there is no name */
            sb_printf(b, "the peaks of this device (");
            sb_text(b, dname);
            sb_printf(b, ") are unknown to hta");
        } else {
            sb_printf(b, "the trace does not say which GPU it ran on, so its peaks are unknown");
        }
        sb_printf(b, " (%s). `hta efficiency --peak-tflops T --peak-tbps B` measures the operators against peaks "
                     "you give.</p>\n",
                  dt ? dt : "no dtype");
    }
    svg_open(b, "roofline", "roofline: TFLOP/s against FLOP per byte", w, h);
    char n1[SVG_NUM], n2[SVG_NUM], n3[SVG_NUM];
    /* decades on both axes */
    for (double x = x0; x <= x1 * 1.0001; x *= 10)
        sb_printf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/><text x=\"%.1f\" y=\"%d\" "
                     "class=\"tk\" text-anchor=\"middle\">%s</text>\n",
                  PX(x), top, PX(x), top + ph, PX(x), top + ph + 14, svg_num(x, SVG_SIG, n1));
    for (double y = y0; y <= y1 * 1.0001; y *= 10)
        sb_printf(b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/><text x=\"%d\" y=\"%.1f\" "
                     "class=\"tk\" text-anchor=\"end\">%s</text>\n",
                  left, PY(y), left + pw, PY(y), left - 4, PY(y) + 4, svg_num(y, SVG_SIG, n1));
    sb_printf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"ax\"/><line x1=\"%d\" y1=\"%d\" "
                 "x2=\"%d\" y2=\"%d\" class=\"ax\"/>",
              left, top + ph, left + pw, top + ph, left, top, left, top + ph);
    sb_printf(b, "<text x=\"%d\" y=\"%d\" class=\"un\" text-anchor=\"middle\">arithmetic intensity "
                 "(FLOP/byte)</text><text x=\"14\" y=\"%d\" class=\"un\" transform=\"rotate(-90 14 %d)\" "
                 "text-anchor=\"middle\">TFLOP/s</text>\n",
              left + pw / 2, h - 8, top + ph / 2, top + ph / 2);
    if (roof) {
        double ridge = peak / bw, xs = fmax(x0, y0 / bw);
        /* the label right of the ridge, or left of it where the ridge is near the right edge */
        int right = PX(ridge) < left + pw - 200;
        sb_printf(b, "<path fill=\"none\" stroke=\"#b22\" stroke-width=\"2\" d=\"M%.1f %.1f L%.1f %.1f L%.1f %.1f\"/>"
                     "<text x=\"%.1f\" y=\"%.1f\" class=\"lb\" fill=\"#b22\" text-anchor=\"%s\">%s TFLOP/s, %s "
                     "TB/s</text>\n",
                  PX(xs), PY(xs * bw), PX(ridge), PY(peak), PX(x1), PY(peak), PX(ridge) + (right ? 4 : -4),
                  PY(peak) - 6, right ? "start" : "end", svg_num(peak, SVG_SIG, n1), svg_num(bw, SVG_SIG, n2));
    }
    for (size_t r = 0; r < t->nrows; r++) {
        double x = num(t, r, HTA_ROOF_INTENSITY), y = num(t, r, HTA_ROOF_TFLOPS), us = num(t, r, HTA_ROOF_GPU_US);
        if (!(x > 0) || !(y > 0) || !(us > 0)) continue;
        double rad = 3 + 22 * sqrt(us / tot);
        sb_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\" fill-opacity=\"0.55\" stroke=\"#333\">"
                     "<title>",
                  PX(x), PY(y), rad, svg_fill(0));
        sb_text(b, txt(t, r, HTA_ROOF_OP));
        sb_printf(b, " [");
        sb_text(b, txt(t, r, HTA_ROOF_SHAPE) ? txt(t, r, HTA_ROOF_SHAPE) : "");
        sb_printf(b, "]: %s TFLOP/s, %s FLOP/B, %s us", svg_num(y, 1, n1), svg_num(x, SVG_SIG, n2),
                  svg_num(us, 0, n3));
        double pct = num(t, r, HTA_ROOF_PEAK_PCT);
        if (!isnan(pct)) sb_printf(b, ", %.0f%% of the roof", pct);
        sb_printf(b, "</title></circle>\n");
    }
#undef PX
#undef PY
    svg_close(b);
    return 1;
}
