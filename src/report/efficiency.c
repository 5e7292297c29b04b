/* The report's part of hardware efficiency (docs/efficiency.md, "In the report"): op_roofline reduced from
 * the ranks' parts (hta_efficiency_part, run in part.c), its rows with the most GPU time as a report
 * table with the device's peaks, the operators with the most time below half their roof named in the
 * gpu_compute finding's evidence and as an observation, each with what it would save at 70% of its roof
 * (the page draws them: html_roofline.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hta/efficiency.h"
#include "hta/report.h"
#include "report/internal.h"

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

hta_status rp_efficiency_reduce(hta_result *all, hta_result *eff, hta_error *err) {
    /* the parts' notes are the report's already: eff's copies are dropped with it */
    return hta_efficiency_reduce(NULL, all, eff, err);
}

hta_status rp_efficiency(hta_result *eff_, findings *f, hta_table *ft, int top, hta_result *out, hta_error *err) {
    hta_result eff = *eff_;
    hta_result_init(eff_);
    const hta_table *t = NULL, *dev = NULL;
    hta_status st = hta_result_table(&eff, &HTA_OP_ROOFLINE_TABLE, &t, err);
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
    hta_table *h = st ? NULL : rp_table_head(t, (size_t)top); /* the rows with the most GPU time */
    if (!st && (!h || hta_result_add(out, h))) st = hta_oom(err);
    hta_table *d = NULL;
    if (!st && hta_result_take(&eff, &HTA_DEVICE_PEAK_TABLE, &d, err) == HTA_OK && hta_result_add(out, d))
        st = hta_oom(err);
done:
    hta_result_free(&eff);
    return st;
}
