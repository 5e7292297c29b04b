/* The report's part of hardware efficiency (docs/efficiency.md, "In the report"): op_roofline reduced from
 * the ranks' parts (hta_efficiency_part, run in part.c), its rows with the most GPU time as a report
 * table with the device's peaks, the operators with the most time below half their roof named in the
 * gpu_compute finding's evidence and as an observation, each with what it would save at 70% of its roof,
 * and the roofline chart of the page (html.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hta/efficiency.h"
#include "hta/report.h"
#include "report/internal.h"
#include "report/svg.h"

#define ROOF_ROWS 15   /* op_roofline rows the report keeps */
#define BELOW_PCT 50.0 /* "well below the roof" */
#define TARGET_PCT 70.0 /* what a good kernel reaches: the saving is measured to it */
#define NAMED 3        /* operators a finding names */

static double num(const hta_table *t, size_t r, int c) { return hta_table_get_float(t, r, c); }
static const char *txt(const hta_table *t, size_t r, int c) { return hta_table_get_str(t, r, c); }

/* The text naming the operators with the most GPU time below BELOW_PCT of their roof, and the time they
 * would save at TARGET_PCT; NULL when none (malloc'd). */
static char *below_text(const hta_table *t) {
    char buf[1024];
    size_t len = 0;
    int k = 0;
    double save = 0;
    for (size_t r = 0; r < t->nrows && k < NAMED; r++) {
        double pct = num(t, r, HTA_ROOF_PEAK_PCT), us = num(t, r, HTA_ROOF_GPU_US);
        if (isnan(pct) || pct >= BELOW_PCT || !(us > 0)) continue;
        double tf = num(t, r, HTA_ROOF_TFLOPS), tb = num(t, r, HTA_ROOF_TBPS);
        char rate[48], nb[RP_NAME_MAX + 1];
        if (!isnan(tf)) snprintf(rate, sizeof rate, "%.1f TFLOP/s", tf);
        else snprintf(rate, sizeof rate, "%.2f TB/s", tb);
        double s = us * (1 - pct / TARGET_PCT);
        save += s;
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s [%s] at %.0f%% of its %s roof (%s, %.0f us)",
                                k ? "; " : "", txt(t, r, HTA_ROOF_OP), rp_name(txt(t, r, HTA_ROOF_SHAPE), nb), pct,
                                txt(t, r, HTA_ROOF_BOUND), rate, us);
        if (len >= sizeof buf) len = sizeof buf - 1;
        k++;
    }
    if (!k) return NULL;
    char *out = NULL;
    if (asprintf(&out, "operators with the most GPU time below %.0f%% of the roof: %s; at %.0f%% of the roof they "
                       "would save %.0f us (`hta efficiency`)",
                 BELOW_PCT, buf, TARGET_PCT, save) < 0)
        return NULL;
    return out;
}

/* The first ROOF_ROWS rows of t (already by GPU time), as a new table of the same declaration. */
static hta_table *head(const hta_table *t, size_t n) {
    hta_table *h = hta_table_from_def(&HTA_OP_ROOFLINE_TABLE);
    for (size_t r = 0; h && r < t->nrows && r < n; r++) {
        long row = hta_table_add_row(h);
        if (row < 0) goto oom;
        for (int c = 0; c < HTA_OP_ROOFLINE_NCOLS; c++) {
            const hta_col_def *d = hta_table_def_col(&HTA_OP_ROOFLINE_TABLE, (size_t)c);
            if (d->type == HTA_COL_STR) {
                if (txt(t, r, c) && hta_table_set_str(h, row, c, txt(t, r, c))) goto oom;
            } else if (d->type == HTA_COL_INT) hta_table_set_int(h, row, c, hta_table_get_int(t, r, c));
            else hta_table_set_float(h, row, c, num(t, r, c));
        }
    }
    return h;
oom:
    hta_table_free(h);
    return NULL;
}

hta_status rp_efficiency(hta_result *all, findings *f, hta_table *ft, hta_result *out, hta_error *err) {
    hta_result eff;
    hta_result_init(&eff);
    /* the parts' notes are the report's already: eff's copies are dropped with it */
    hta_status st = hta_efficiency_reduce(NULL, all, &eff, err);
    const hta_table *t = NULL, *dev = NULL;
    if (!st) st = hta_result_table(&eff, &HTA_OP_ROOFLINE_TABLE, &t, err);
    if (!st) st = hta_result_table(&eff, &HTA_DEVICE_PEAK_TABLE, &dev, err);
    if (st) goto done;
    /* only where shapes were recorded: some row has a figure */
    int any = 0;
    for (size_t r = 0; r < t->nrows && !any; r++) any = !isnan(num(t, r, HTA_ROOF_GBYTES));
    if (!any) goto done;
    char *below = below_text(t);
    if (below) {
        rp_add_finding(f, -1, "efficiency", "faster kernels for these shapes (fusion, better tile sizes, "
                                            "torch.compile, a different precision); see `hta efficiency`",
                       "%s", below);
        /* the gpu_compute finding says where its time goes */
        for (size_t r = 0; ft && r < ft->nrows; r++) {
            const char *cause = txt(ft, r, HTA_FINDINGS_CAUSE), *ev = txt(ft, r, HTA_FINDINGS_EVIDENCE);
            if (!cause || strcmp(cause, "gpu_compute") || !ev) continue;
            char *nev = NULL;
            if (asprintf(&nev, "%s; %s", ev, below) < 0 || hta_table_set_str(ft, r, HTA_FINDINGS_EVIDENCE, nev))
                st = hta_oom(err);
            free(nev);
        }
        free(below);
    }
    hta_table *h = st ? NULL : head(t, ROOF_ROWS);
    if (!st && (!h || hta_result_add(out, h))) st = hta_oom(err);
    hta_table *d = NULL;
    if (!st && hta_result_take(&eff, &HTA_DEVICE_PEAK_TABLE, &d, err) == HTA_OK && hta_result_add(out, d))
        st = hta_oom(err);
done:
    hta_result_free(&eff);
    return st;
}

/* ---- the roofline chart ---- */

static double lg(double x) { return log10(x); }

void rp_roofline_chart(sb *b, const hta_result *res) {
    const hta_table *t = hta_result_find(res, "op_roofline"), *dev = hta_result_find(res, "device");
    if (!t || !dev) return;
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
    if (!np) return;
    double peak = NAN, bw = NAN;
    for (size_t r = 0; r < dev->nrows; r++) {
        const char *d = txt(dev, r, HTA_DEV_DTYPE);
        /* the op_roofline dtype text starts with the dtype's short name (bf16, fp8e4m3, fp32...) */
        if (d && dt && !strncmp(dt, d, strlen(d))) peak = num(dev, r, HTA_DEV_TFLOPS), bw = num(dev, r, HTA_DEV_TBPS);
    }
    if (peak > 0) ymax = fmax(ymax, peak);
    if (bw > 0 && peak > 0) xmax = fmax(xmax, 4 * peak / bw), xmin = fmin(xmin, peak / bw / 100);
    double x0 = pow(10, floor(lg(xmin))), x1 = pow(10, ceil(lg(xmax))), y0 = pow(10, floor(lg(ymin))),
           y1 = pow(10, ceil(lg(ymax)));
    if (x1 <= x0) x1 = x0 * 10;
    if (y1 <= y0) y1 = y0 * 10;
    int w = 900, h = 420, left = 70, top = 30, pw = w - left - 30, ph = h - top - 50;
#define PX(x) (left + pw * (lg(x) - lg(x0)) / (lg(x1) - lg(x0)))
#define PY(y) (top + ph - ph * (lg(y) - lg(y0)) / (lg(y1) - lg(y0)))
    sb_printf(b, "<h2 id=\"roofline\">Roofline: operators against the GPU's peak</h2><p class=\"note\">One point "
                 "per operator and shape class with a FLOP count (area: its GPU time), at its arithmetic "
                 "intensity and the TFLOP/s its kernels reached; the line is the roof of %s (memory TB/s times "
                 "intensity, then the peak). Log axes. Bytes-only operators are in `hta efficiency`.</p>\n",
              dt ? dt : "the GPU");
    svg_open(b, "roofline", "roofline: TFLOP/s against FLOP per byte", w, h);
    /* decades on both axes */
    for (double x = x0; x <= x1 * 1.0001; x *= 10)
        sb_printf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/><text x=\"%.1f\" y=\"%d\" "
                     "class=\"tk\" text-anchor=\"middle\">%g</text>\n",
                  PX(x), top, PX(x), top + ph, PX(x), top + ph + 14, x);
    for (double y = y0; y <= y1 * 1.0001; y *= 10)
        sb_printf(b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/><text x=\"%d\" y=\"%.1f\" "
                     "class=\"tk\" text-anchor=\"end\">%g</text>\n",
                  left, PY(y), left + pw, PY(y), left - 4, PY(y) + 4, y);
    sb_printf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"ax\"/><line x1=\"%d\" y1=\"%d\" "
                 "x2=\"%d\" y2=\"%d\" class=\"ax\"/>",
              left, top + ph, left + pw, top + ph, left, top, left, top + ph);
    sb_printf(b, "<text x=\"%d\" y=\"%d\" class=\"un\" text-anchor=\"middle\">arithmetic intensity "
                 "(FLOP/byte)</text><text x=\"14\" y=\"%d\" class=\"un\" transform=\"rotate(-90 14 %d)\" "
                 "text-anchor=\"middle\">TFLOP/s</text>\n",
              left + pw / 2, h - 8, top + ph / 2, top + ph / 2);
    if (peak > 0 && bw > 0) {
        double ridge = peak / bw, xs = fmax(x0, y0 / bw);
        sb_printf(b, "<path fill=\"none\" stroke=\"#b22\" stroke-width=\"2\" d=\"M%.1f %.1f L%.1f %.1f L%.1f %.1f\"/>"
                     "<text x=\"%.1f\" y=\"%.1f\" class=\"lb\" fill=\"#b22\">%g TFLOP/s, %g TB/s</text>\n",
                  PX(xs), PY(xs * bw), PX(ridge), PY(peak), PX(x1), PY(peak), PX(ridge) + 4, PY(peak) - 6, peak, bw);
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
        sb_printf(b, "]: %.1f TFLOP/s, %.3g FLOP/B, %.0f us", y, x, us);
        double pct = num(t, r, HTA_ROOF_PEAK_PCT);
        if (!isnan(pct)) sb_printf(b, ", %.0f%% of the roof", pct);
        sb_printf(b, "</title></circle>\n");
    }
#undef PX
#undef PY
    svg_close(b);
}
