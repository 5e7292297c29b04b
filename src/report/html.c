/* `hta report --html OUT`: the report as one self-contained HTML page, inline CSS and SVG, no script and
 * nothing fetched, so that it opens offline in any browser and can be mailed.  It draws the tables the
 * report made (findings, headline, ranks, kernels, critical path) and each rank's profile (profile.c):
 * CPU and GPU busy over time with the steps marked, the launch-queue length and memory bandwidth over
 * time, collective lateness per rank and step, the critical path per rank and step.  Sections and
 * charts: docs/report.md, "The HTML page".  Size: a few hundred bytes per rank and bin, about 1 MB for
 * 64 ranks. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hta/breakdown.h"
#include "hta/launch.h"
#include "hta/outfile.h"
#include "hta/vocab.h"
#include "hta/util.h"
#include "report/internal.h"
#include "report/svg.h"

static double num(const hta_table *t, size_t r, int c) { return hta_table_get_float(t, r, c); }
static const char *txt(const hta_table *t, size_t r, int c) {
    const char *s = hta_table_get_str(t, r, c);
    return s ? s : "";
}

static const hta_table *table(const hta_result *res, const hta_table_def *d) {
    const hta_table *t = NULL;
    hta_error e = {0};
    return hta_result_table(res, d, &t, &e) ? NULL : t;
}

static const char *CSS =
    "body{font:14px/1.4 system-ui,sans-serif;margin:24px auto;padding:0 16px;max-width:1000px;color:#111;"
    "background:#fff}"
    "h1{font-size:22px;overflow-wrap:anywhere}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #999}"
    "p.note{color:#444;font-size:13px}"
    "table{border-collapse:collapse;width:100%;font-size:13px}th,td{border:1px solid #bbb;padding:3px 6px;"
    "vertical-align:top;text-align:left;overflow-wrap:break-word}th{background:#eee}"
    "td.n{text-align:right;white-space:nowrap;overflow-wrap:normal}"
    ".scroll{overflow-x:auto;max-width:100%}p.empty{color:#444;font-style:italic;border:1px dashed #bbb;"
    "padding:8px 12px}"
    ".cards{display:flex;gap:12px;flex-wrap:wrap}.card{border:1px solid #888;padding:8px 12px;min-width:150px}"
    ".card b{display:block;font-size:22px}"
    "svg.chart{display:block;margin:8px 0;max-width:100%;height:auto}p{overflow-wrap:break-word}"
    ".ax{stroke:#333;stroke-width:1}.tk{font-size:10px;fill:#222}.un{font-size:11px;fill:#222}"
    ".lb{font-size:11px;fill:#111}.lg{font-size:11px;fill:#111}.st{stroke:#000;stroke-width:0.8;"
    "stroke-dasharray:2 2}";

/* A step as the page names it: "#N", or the whole trace where there are no ProfilerSteps (step -1). */
static const char *step_label(int64_t num, char *buf, size_t cap) {
    if (num < 0) return "whole trace";
    snprintf(buf, cap, "#%lld", (long long)num);
    return buf;
}

/* ---- time series per rank: one row per rank, over the rank's own span ---- */

typedef enum { TS_BUSY, TS_QUEUE, TS_MEMBW } ts_kind;

static void time_rows(sb *b, const char *id, const char *title, const rp_rank *pr, size_t n, ts_kind kind,
                      const char *empty) {
    int rowh = n <= 8 ? 56 : n <= 16 ? 36 : 18, gap = n <= 16 ? 8 : 3, left = 70, w = 900, top = 30;
    int plotw = w - left - 20, h = top + (int)n * (rowh + gap) + 45;
    double tmax = 0, vmax = 0;
    static const rp_series none; /* a rank whose series were not kept: 0 in every bin */
    for (size_t k = 0; k < n; k++) {
        const rp_series *se = pr[k].ser ? pr[k].ser : &none;
        tmax = fmax(tmax, (double)(pr[k].t1 - pr[k].t0) / 1e6);
        for (int i = 0; i < RP_BINS; i++)
            vmax = fmax(vmax, kind == TS_QUEUE  ? se->queue[i]
                              : kind == TS_MEMBW ? se->membw[i]
                                                 : fmax(se->gpu_busy[i], se->cpu_busy[i]));
    }
    if (!(vmax > 0)) { /* nothing above 0 in any bin of any rank */
        svg_empty(b, id, empty);
        return;
    }
    if (!(tmax > 0)) tmax = 1;
    char nb[SVG_NUM], sl[32];
    svg_open(b, id, title, w, h);
    if (kind == TS_BUSY) {
        static const char *const names[] = {"GPU busy (kernels, copies)", "CPU busy (operators, runtime calls)", "step start"};
        static const int fills[] = {0, 1, 5};
        svg_legend(b, left, 16, w - 10, names, 3, fills);
        vmax = 1;
    } else {
        sb_printf(b, "<g class=\"legend\"><text x=\"%d\" y=\"16\" class=\"lg\">per rank, the largest value in each "
                     "of %d bins; scale 0 to %s %s</text></g>\n",
                  left, RP_BINS, svg_num(vmax, SVG_SIG, nb), kind == TS_QUEUE ? "kernels queued" : "GB/s");
    }
    for (size_t k = 0; k < n; k++) {
        const rp_rank *p = &pr[k];
        double y0 = top + (double)k * (rowh + gap), y1 = y0 + rowh;
        double span = (double)(p->t1 - p->t0) / 1e6, pw = plotw * (span > 0 ? span / tmax : 0);
        sb_printf(b, "<text x=\"%d\" y=\"%.1f\" class=\"lb\" text-anchor=\"end\">rank %d</text>", left - 6,
                  (y0 + y1) / 2 + 4, p->rank);
        sb_printf(b, "<rect x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"none\" stroke=\"#ccc\" "
                     "class=\"fr\"/>",
                  left, y0, pw, rowh);
        for (int s = 0; s < 2; s++) {
            if (kind != TS_BUSY && s) break;
            /* GPU busy as a filled area, CPU busy as a line above it */
            const rp_series *se = p->ser ? p->ser : &none;
            const float *v = kind == TS_QUEUE   ? se->queue
                             : kind == TS_MEMBW ? se->membw
                             : s                ? se->cpu_busy
                                                : se->gpu_busy;
            double sc = kind == TS_BUSY ? 1 : vmax;
            if (!s) sb_printf(b, "<path fill=\"%s\" d=\"M%d %.1f", svg_fill(0), left, y1);
            else sb_printf(b, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.4\" d=\"", svg_fill(1));
            for (int i = 0; i < RP_BINS; i++) {
                double x = left + pw * (i + 0.5) / RP_BINS, y = y1 - (rowh - 2) * v[i] / sc;
                sb_printf(b, "%s%.1f %.1f", s && !i ? "M" : "L", x, y);
            }
            if (!s) sb_printf(b, "L%.1f %.1fZ", left + pw, y1);
            sb_printf(b, "\"/>");
        }
        if (kind == TS_BUSY && p->step_num[0] >= 0)
            for (size_t st = 0; st < p->nsteps; st++) {
                double x = left + pw * (double)(p->step_ts[st] - p->t0) / (double)(p->t1 > p->t0 ? p->t1 - p->t0 : 1);
                sb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"st\"/>", x, y0, x, y1);
                if (rowh >= 36) /* right of its line, or left of it near the plot's right end */
                    sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"tk\"%s>%s</text>",
                              x + (x < left + plotw - 40 ? 2 : -2), y0 + 10,
                              x < left + plotw - 40 ? "" : " text-anchor=\"end\"",
                              step_label(p->step_num[st], sl, sizeof sl));
            }
        sb_printf(b, "\n");
    }
    svg_xaxis(b, left, left + plotw, top + (double)n * (rowh + gap), tmax, "time since the rank's first event (ms)");
    svg_close(b);
}

/* ---- collective lateness: rank x step, darker = the others waited longer for this rank ---- */

static void lateness_map(sb *b, const rp_rank *pr, size_t n, int64_t job) {
    size_t ns = 0, ncoll = 0;
    for (size_t k = 0; k < n; k++) ns = pr[k].nsteps > ns ? pr[k].nsteps : ns, ncoll += pr[k].ncoll;
    if (n < 2) {
        svg_empty(b, "lateness", "No chart: lateness compares ranks (how long the others waited for each), and "
                                 "this report has one rank.");
        return;
    }
    if (!ncoll) {
        svg_empty(b, "lateness", "No chart: no rank ran a collective (communication kernel), so no rank waited "
                                 "for another.");
        return;
    }
    char sl[32];
    int cw = ns > 20 ? 20 : 60, ch = n > 16 ? 14 : 22, left = 70, top = 40, w = left + (int)ns * cw + 200;
    int h = top + (int)n * ch + 40;
    svg_open(b, "lateness", "collective lateness per rank and step", w < 900 ? 900 : w, h);
    sb_printf(b, "<g class=\"legend\"><text x=\"%d\" y=\"14\" class=\"lg\">the time the other ranks waited for this "
                 "rank in the step's collectives, %% of the job's step time; darker = longer</text>",
              left);
    for (int i = 0; i <= 4; i++) { /* legend: 0, 5, 10, 15, 20+ % */
        double f = i / 4.0;
        sb_printf(b, "<rect x=\"%d\" y=\"20\" width=\"30\" height=\"10\" fill=\"rgb(%d,%d,%d)\" stroke=\"#333\" "
                     "stroke-width=\"0.5\"/><text x=\"%d\" y=\"29\" class=\"tk\">%d%%%s</text>",
                  left + 300 + i * 60, (int)(255 - 230 * f), (int)(255 - 230 * f), (int)(255 - 180 * f),
                  left + 334 + i * 60, i * 5, i == 4 ? "+" : "");
    }
    sb_printf(b, "</g>");
    for (size_t k = 0; k < n; k++) {
        double y = top + (double)k * ch;
        sb_printf(b, "<text x=\"%d\" y=\"%.1f\" class=\"lb\" text-anchor=\"end\">rank %d</text>", left - 6, y + ch - 4,
                  pr[k].rank);
        for (size_t s = 0; s < pr[k].nsteps; s++) {
            double pc = job > 0 ? 100.0 * (double)pr[k].late_ns[s] / (double)job : 0;
            double f = fmin(1, pc / 20);
            sb_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%d\" fill=\"rgb(%d,%d,%d)\" stroke=\"#999\" "
                         "stroke-width=\"0.3\"><title>rank %d, step %s: %.1f%%</title></rect>",
                      left + (double)s * cw, y, cw, ch, (int)(255 - 230 * f), (int)(255 - 230 * f), (int)(255 - 180 * f),
                      pr[k].rank, step_label(pr[k].step_num[s], sl, sizeof sl), pc);
        }
    }
    for (size_t s = 0; n && s < pr[0].nsteps; s++)
        if (ns <= 20 || s % 5 == 0)
            sb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" class=\"tk\" text-anchor=\"middle\">%s</text>",
                      left + ((double)s + 0.5) * cw, top + (double)n * ch + 14,
                      step_label(pr[0].step_num[s], sl, sizeof sl));
    sb_printf(b, "<text x=\"%d\" y=\"%.1f\" class=\"un\">ProfilerStep</text>\n", left, top + (double)n * ch + 30);
    svg_close(b);
}

/* ---- launch delays: how many launches wait how long before their kernel starts ---- */

static void launch_hist(sb *b, const rp_rank *pr, size_t n) {
    static const char *const bins[RP_DELAY_BINS] = {"< 10 us", "10-100 us", "0.1-1 ms", "1-10 ms", "10-100 ms", ">= 100 ms"};
    double c[RP_DELAY_BINS] = {0};
    for (size_t k = 0; k < n; k++)
        for (int i = 0; i < RP_DELAY_BINS; i++) c[i] += (double)pr[k].delays[i];
    int w = 900, h = 260, left = 80, top = 20, bw = 110;
    double hi = 0;
    for (int i = 0; i < 6; i++) hi = fmax(hi, c[i]);
    if (!(hi > 0)) {
        svg_empty(b, "launch-delay", "No chart: no kernel launch was matched to the GPU work it started on any rank "
                                     "(no GPU work, or no CPU side recorded), so there are no launch delays.");
        return;
    }
    char nb[SVG_NUM];
    svg_open(b, "launch-delay", "launch delay distribution", w, h);
    double y1 = top + 180;
    for (int i = 0; i < 6; i++) {
        double bh = 180 * c[i] / hi, x = left + 10 + i * (bw + 10);
        sb_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"%s\"/>"
                     "<text x=\"%.1f\" y=\"%.1f\" class=\"tk\" text-anchor=\"middle\">%s</text>"
                     "<text x=\"%.1f\" y=\"%.1f\" class=\"lb\" text-anchor=\"middle\">%s</text>",
                  x, y1 - bh, bw, bh, svg_fill(1), x + bw / 2.0, y1 - bh - 3, svg_num(c[i], 0, nb), x + bw / 2.0,
                  y1 + 14, bins[i]);
    }
    svg_yaxis(b, left, top, y1, hi, "launches", 5);
    sb_printf(b, "<text x=\"%d\" y=\"%.1f\" class=\"un\">delay from the end of the launch call to the start of its "
                 "GPU work, all ranks</text>\n",
              left + 10, y1 + 34);
    svg_close(b);
}

/* ---- sections from the report's tables ---- */

static void findings_section(sb *b, const hta_table *f) {
    char nb[SVG_NUM];
    sb_printf(b, "<h2 id=\"findings\">Findings, ranked by what fixing them would save</h2>\n");
    if (!f || !f->nrows) {
        sb_printf(b, "<p>No cause of lost time stands out.</p>\n");
        return;
    }
    sb_printf(b, "<table id=\"findings-table\"><tr><th>#</th><th>cause</th><th>ranks</th><th>saving</th>"
                 "<th>evidence</th><th>what to do</th></tr>\n");
    for (size_t r = 0; r < f->nrows; r++) {
        sb_printf(b, "<tr><td class=\"n\">%zu</td><td><b>", r + 1);
        sb_text(b, txt(f, r, HTA_FINDINGS_CAUSE));
        sb_printf(b, "</b></td><td>");
        sb_text(b, txt(f, r, HTA_FINDINGS_RANKS));
        /* no saving: a capture trace, or the engine measured another window (the report's notes say) */
        if (isnan(num(f, r, HTA_FINDINGS_SAVING_PCT))) sb_printf(b, "</td><td class=\"n\">-</td><td>");
        else
            sb_printf(b, "</td><td class=\"n\">%.1f%%<br>%s us</td><td>", num(f, r, HTA_FINDINGS_SAVING_PCT),
                      svg_num(num(f, r, HTA_FINDINGS_SAVING_US), 0, nb));
        sb_text(b, txt(f, r, HTA_FINDINGS_EVIDENCE));
        sb_printf(b, "</td><td>");
        sb_text(b, txt(f, r, HTA_FINDINGS_TODO));
        sb_printf(b, "</td></tr>\n");
    }
    sb_printf(b, "</table>\n");
}

/* Any table as HTML, in a box that scrolls sideways where its columns do not fit the page; the column
 * names may break after an underscore; every cell as the table, CSV and JSON formats write it (the same
 * digits in a terminal and on the page, no exponent: svg_num's SVG_TABLE). */
static void html_table(sb *b, const hta_table *t, const char *id) {
    if (!t) return;
    char nb[SVG_NUM];
    sb_printf(b, "<div class=\"scroll\"><table id=\"%s\"><tr>", id);
    for (size_t c = 0; c < t->ncols; c++) {
        sb_printf(b, "<th>");
        for (const char *p = t->cols[c].name; *p; p++) {
            sb_text(b, (char[]){*p, 0});
            if (*p == '_' && p[1]) sb_printf(b, "<wbr>");
        }
        sb_printf(b, "</th>");
    }
    sb_printf(b, "</tr>\n");
    for (size_t r = 0; r < t->nrows; r++) {
        sb_printf(b, "<tr>");
        for (size_t c = 0; c < t->ncols; c++) {
            const hta_column *col = &t->cols[c];
            if (col->type == HTA_COL_STR) {
                sb_printf(b, "<td>");
                sb_text(b, col->v.s[r] ? col->v.s[r] : "");
            } else if (col->type == HTA_COL_INT && !(col->null && col->null[r])) {
                sb_printf(b, "<td class=\"n\">%lld", (long long)col->v.i[r]);
            } else if (col->type == HTA_COL_FLOAT && !isnan(col->v.f[r])) {
                sb_printf(b, "<td class=\"n\">%s", svg_num(col->v.f[r], SVG_TABLE, nb));
            } else {
                sb_printf(b, "<td>");
            }
            sb_printf(b, "</td>");
        }
        sb_printf(b, "</tr>\n");
    }
    sb_printf(b, "</table></div>\n");
}

static void page(sb *b, const rp_rank *pr, size_t n, const hta_result *res, const hta_table *idle) {
    const hta_table *f = table(res, &HTA_FINDINGS_TABLE), *hl = table(res, &HTA_REPORT_HEADLINE_TABLE);
    const hta_table *rk = table(res, &HTA_REPORT_RANKS_TABLE), *kt = table(res, &HTA_REPORT_KERNEL_TYPES_TABLE);
    const hta_table *tk = table(res, &HTA_TOP_KERNELS_TABLE), *obs = table(res, &HTA_OBS_TABLE);
    int64_t job = rp_job_step(pr, n);
    char d1[32], nb[SVG_NUM];
    sb_printf(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                 "<meta name=\"viewport\" content=\"width=device-width\"><title>hta report</title>"
                 "<style>%s</style></head><body>\n",
              CSS);
    svg_defs(b);
    /* a long path breaks anywhere (CSS) rather than run off the page; the title attribute has it whole */
    sb_printf(b, "<h1 title=\"");
    sb_text(b, n && pr[0].path ? pr[0].path : "");
    sb_printf(b, "\">hta report: ");
    sb_text(b, n && pr[0].path ? pr[0].path : "");
    sb_printf(b, "%s</h1>\n", n > 1 ? " and the other ranks' files" : "");
    /* headline */
    sb_printf(b, "<div class=\"cards\" id=\"headline\">");
    sb_printf(b, "<div class=\"card\">step time<b>%s</b>%s</div>", rp_dur(job, d1, sizeof d1),
              n && pr[0].window == RP_WIN_SPAN ? "the whole trace span (one ProfilerStep or none)"
              : n && pr[0].window == RP_WIN_GPU ? "median GPU-timeline step of the slowest rank"
                                                : "median step of the slowest rank");
    if (hl && hl->nrows) {
        sb_printf(b, "<div class=\"card\">GPU busy<b>%.1f%%</b>of the window</div>",
                  num(hl, 0, HTA_REPORT_HEADLINE_GPU_BUSY));
        sb_printf(b, "<div class=\"card\">ranks, steps<b>%.0f, %.0f</b>analysed</div>",
                  num(hl, 0, HTA_REPORT_HEADLINE_RANKS), num(hl, 0, HTA_REPORT_HEADLINE_STEPS));
    }
    sb_printf(b, "</div>\n<p>Top causes: ");
    for (size_t r = 0; f && r < f->nrows && r < 3; r++) {
        sb_printf(b, "%s<b>", r ? "; " : "");
        sb_text(b, txt(f, r, HTA_FINDINGS_CAUSE));
        sb_printf(b, "</b> (ranks ");
        sb_text(b, txt(f, r, HTA_FINDINGS_RANKS));
        if (isnan(num(f, r, HTA_FINDINGS_SAVING_PCT))) sb_printf(b, ")");
        else
            sb_printf(b, "): removing it would save about %.1f%% of the step (%s us)",
                      num(f, r, HTA_FINDINGS_SAVING_PCT), svg_num(num(f, r, HTA_FINDINGS_SAVING_US), 0, nb));
    }
    if (!f || !f->nrows) sb_printf(b, "none stands out");
    sb_printf(b, ".</p>\n");
    findings_section(b, f);
    /* what-if savings */
    sb_printf(b, "<h2 id=\"whatif\">What-if savings</h2><p class=\"note\">Each cause's saving, estimated by "
                 "simulating the trace with the cause fixed (the rule is in the findings' last column), in %% "
                 "of the job's step time.</p>\n");
    {
        size_t m = f ? f->nrows : 0;
        const char **lab = calloc(m ? m : 1, sizeof *lab);
        double *v = calloc(m ? m : 1, sizeof *v);
        if (lab && v) {
            for (size_t r = 0; r < m; r++) lab[r] = txt(f, r, HTA_FINDINGS_CAUSE), v[r] = num(f, r, HTA_FINDINGS_SAVING_PCT);
            svg_hbars(b, "whatif", "what-if savings per cause", lab, NULL, v, (int)m, "saving, % of the step time", 170,
                      !m ? "No chart: no finding, so there is no saving to estimate."
                         : "No chart: no finding has an estimated saving above 0 (a capture trace is not a timing "
                           "profile, and a cause measured over another window has none: the findings say which).");
        } else b->oom = 1;
        free(lab);
        free(v);
    }
    /* over time */
    sb_printf(b, "<h2 id=\"timeline\">CPU and GPU busy over time</h2><p class=\"note\">Per rank, the share of each "
                 "of %d time bins in which the GPU runs a kernel, copy or memset (filled) and some CPU thread runs an "
                 "operator or runtime call (line); dashed lines mark the starts of ProfilerSteps.</p>\n",
              RP_BINS);
    time_rows(b, "busy", "CPU and GPU busy over time per rank", pr, n, TS_BUSY,
              "No chart: no CPU or GPU event was busy in any bin of any rank.");
    /* time breakdown */
    sb_printf(b, "<h2 id=\"breakdown\">Time breakdown</h2>\n");
    {
        static const char *const ser[] = {"compute", "non-compute (comm, memory)", "idle"};
        size_t m = rk ? rk->nrows : 0;
        char (*lab)[24] = calloc(m ? m : 1, sizeof *lab);
        const char **lp = calloc(m ? m : 1, sizeof *lp);
        double *v = calloc(3 * (m ? m : 1), sizeof *v);
        if (lab && lp && v) {
            for (size_t r = 0; r < m; r++) {
                snprintf(lab[r], sizeof lab[r], "rank %.0f", num(rk, r, HTA_REPORT_RANKS_RANK));
                lp[r] = lab[r];
                /* over the report's window, as the headline and the findings count it */
                rp_split sp;
                rp_split_of(&pr[r], &sp);
                double w = sp.window > 0 ? 100.0 / (double)sp.window : 0;
                v[3 * r] = (double)sp.comp * w, v[3 * r + 1] = (double)(sp.busy - sp.comp) * w;
                v[3 * r + 2] = (double)(sp.window - sp.busy) * w;
            }
            svg_stacked(b, "breakdown", "GPU time breakdown per rank", lp, (int)m, ser, 3, v, "% of the window", 100, 80,
                        "No chart: no rank has a window with GPU time to break down (no GPU work in the trace).");
            /* idle by what the host did meanwhile: the split the findings use, in % of the same window, so
             * that the bars add up to the idle share above */
            static const char *const causes[] = {"host blocked", "GPU-side wait", "data loading", "host (launch, Python)"};
            double *iv = calloc(4 * (m ? m : 1), sizeof *iv);
            for (size_t r = 0; iv && r < m; r++) {
                rp_split sp;
                rp_split_of(&pr[r], &sp);
                double w = sp.window > 0 ? 100.0 / (double)sp.window : 0;
                iv[4 * r] = (double)sp.block * w, iv[4 * r + 1] = (double)sp.wait * w;
                iv[4 * r + 2] = (double)sp.dl * w, iv[4 * r + 3] = (double)sp.host * w;
            }
            (void)idle;
            sb_printf(b, "<h2 id=\"idle\">Idle time by cause</h2><p class=\"note\">The GPU's idle time in the window, "
                         "by what the host did meanwhile: blocked in a runtime call (syncs, allocator, synchronous "
                         "copies), nothing to wait for but GPU work queued (stream waits), data loading, or anything "
                         "else (launch and Python overhead).</p>\n");
            if (iv)
                svg_stacked(b, "idle", "GPU idle time by cause per rank", lp, (int)m, causes, 4, iv, "% of the window", 0,
                            80, "No chart: the GPU did not idle in the window of any rank, or no rank has GPU work.");
            else b->oom = 1;
            free(iv);
            /* communication overlap */
            int comm = 0;
            for (size_t r = 0; r < m; r++) v[r] = num(rk, r, HTA_REPORT_RANKS_OVERLAP), comm |= !isnan(v[r]);
            sb_printf(b, "<h2 id=\"overlap\">Communication overlap</h2>\n");
            svg_hbars(b, "overlap", "communication overlapped with compute per rank", lp, NULL, v, (int)m,
                      "% of communication time overlapped with compute", 80,
                      comm ? "No chart: no rank overlapped any of its communication with computation (0% on every "
                             "rank with communication)."
                           : "No chart: no rank ran communication kernels, so there is nothing to overlap.");
        } else b->oom = 1;
        free(lab);
        free(lp);
        free(v);
    }
    /* collectives: bandwidth and the wait for the last rank (comms.c) */
    const hta_table *co = hta_result_find(res, "collectives");
    if (co && co->nrows) {
        sb_printf(b, "<h2 id=\"comms\">Collectives: bandwidth and waiting</h2><p class=\"note\">Per collective "
                     "class, all ranks: algorithm and bus bandwidth as nccl-tests counts them, the time waiting for "
                     "the last rank, the transfer's own bus bandwidth, and its share of the link's peak "
                     "(docs/comms.md).</p>\n");
        html_table(b, co, "comms");
    }
    /* kernels */
    sb_printf(b, "<h2 id=\"kernels\">Kernel types and top kernels</h2>\n");
    {
        size_t m = kt ? kt->nrows : 0, mt = tk ? tk->nrows : 0;
        const char **lab = calloc(m + mt + 1, sizeof *lab), **full = calloc(mt + 1, sizeof *full);
        double *v = calloc(m + mt + 1, sizeof *v);
        static const char no_kernel[] = "No chart: no GPU kernel ran on any rank.";
        if (lab && v && full) {
            for (size_t r = 0; r < m; r++) lab[r] = txt(kt, r, HTA_REPORT_KERNEL_TYPES_TYPE), v[r] = num(kt, r, HTA_REPORT_KERNEL_TYPES_SUM) / 1e3;
            svg_hbars(b, "kernel-types", "time per kernel type, all ranks", lab, NULL, v, (int)m, "time (ms), all ranks",
                      280, no_kernel);
            /* short labels, one per kernel, the whole name in the bar's tooltip */
            for (size_t r = 0; r < mt; r++)
                full[r] = txt(tk, r, HTA_TOP_KERNELS_NAME), v[r] = num(tk, r, HTA_TOP_KERNELS_SUM) / 1e3;
            char **kl = rp_kernel_labels(full, mt, svg_label_chars(330 - 8));
            if (kl || !mt)
                svg_hbars(b, "top-kernels", "kernels with the most GPU time, all ranks", (const char *const *)kl, full, v,
                          (int)mt, "time (ms), all ranks", 330, no_kernel);
            else b->oom = 1;
            rp_labels_free(kl, mt);
        } else b->oom = 1;
        free(lab);
        free(full);
        free(v);
    }
    if (!rp_roofline_chart(b, res)) {
        sb_printf(b, "<h2 id=\"roofline\">Roofline</h2>\n");
        svg_empty(b, "roofline", "No chart: no operator with a FLOP count ran on the GPU (the trace was recorded "
                                 "without input shapes, record_shapes=True, or its operators have no FLOP formula "
                                 "in hta: docs/efficiency.md).");
    }
    sb_printf(b, "<h2 id=\"launch\">Launch delays</h2>\n");
    launch_hist(b, pr, n);
    sb_printf(b, "<h2 id=\"queue\">Launch-queue length over time</h2><p class=\"note\">Kernels launched and not yet "
                 "started, all streams of the rank: near 0 the GPU waits for the CPU; high, the CPU runs ahead.</p>\n");
    time_rows(b, "queue", "launch-queue length over time per rank", pr, n, TS_QUEUE,
              "No chart: no kernel waited in a launch queue on any rank (no kernel launch was matched to its kernel: "
              "no GPU work, or no CPU side recorded).");
    sb_printf(b, "<h2 id=\"membw\">Memory bandwidth over time</h2><p class=\"note\">Copies and memsets in flight.</p>\n");
    time_rows(b, "membw", "memory bandwidth over time per rank", pr, n, TS_MEMBW,
              "No chart: no memory copy or memset moved bytes on any rank.");
    /* critical path per rank and step */
    sb_printf(b, "<h2 id=\"cpath\">What bounds the critical path, per rank and step</h2><p class=\"note\">The "
                 "critical path of each rank, as `hta critical-path` gives it, its time per ProfilerStep by bound_by "
                 "class.</p>\n");
    {
        size_t m = 0;
        for (size_t k = 0; k < n; k++) m += pr[k].nsteps;
        char (*lab)[48] = calloc(m ? m : 1, sizeof *lab), sl[32];
        const char **lp = calloc(m ? m : 1, sizeof *lp);
        double *v = calloc(RP_NBOUND * (m ? m : 1), sizeof *v);
        if (lab && lp && v) {
            size_t j = 0;
            for (size_t k = 0; k < n; k++)
                for (size_t s = 0; s < pr[k].nsteps; s++, j++) {
                    snprintf(lab[j], sizeof lab[j], "rank %d %s", pr[k].rank,
                             step_label(pr[k].step_num[s], sl, sizeof sl));
                    lp[j] = lab[j];
                    for (int c = 0; c < RP_NBOUND; c++) v[j * RP_NBOUND + c] = (double)pr[k].cp_ns[s * RP_NBOUND + c] / 1e6;
                }
            svg_stacked(b, "critical-path", "critical path per rank and step by bound_by", lp, (int)m, rp_bound_names,
                        RP_NBOUND, v, "time on the critical path (ms)", 0, 140,
                        "No chart: no critical path was built (--no-critical-path, or no rank has events to build "
                        "one from).");
        } else b->oom = 1;
        free(lab);
        free(lp);
        free(v);
    }
    sb_printf(b, "<h2 id=\"stragglers\">Across ranks: collective lateness (stragglers)</h2>\n");
    lateness_map(b, pr, n, job);
    sb_printf(b, "<h2 id=\"ranks\">Per-rank figures side by side</h2>\n");
    html_table(b, rk, "ranks-table");
    /* host metrics, when a capture (hta capture, htad) left them beside the traces */
    const hta_table *gm = table(res, &HTA_GPU_METRICS_TABLE);
    if (gm && gm->nrows) {
        sb_printf(b, "<h2 id=\"metrics\">Host metrics (htad)</h2><p class=\"note\">Sampled by htad while the "
                     "traces were taken: SM and tensor-core activity (DCGM; NVML utilisation without it), GPU memory "
                     "in use, the host's CPU.</p>\n");
        int m = (int)gm->nrows;
        const char **lab = calloc((size_t)m, sizeof *lab);
        char **own = calloc((size_t)m, sizeof *own);
        double *v = calloc((size_t)m * 3, sizeof *v);
        if (lab && own && v) {
            for (int i = 0; i < m; i++) {
                const char *h = txt(gm, (size_t)i, HTA_GPU_METRICS_HOST);
                if (asprintf(&own[i], "%s gpu %lld", h, (long long)num(gm, (size_t)i, HTA_GPU_METRICS_GPU)) < 0)
                    own[i] = NULL;
                lab[i] = own[i] ? own[i] : h;
                double sm = num(gm, (size_t)i, HTA_GPU_METRICS_SM);
                v[i] = sm == sm ? sm : num(gm, (size_t)i, HTA_GPU_METRICS_UTIL);
                double tot = num(gm, (size_t)i, HTA_GPU_METRICS_MEM_TOTAL), used = num(gm, (size_t)i, HTA_GPU_METRICS_MEM_USED);
                v[m + i] = tot > 0 ? 100.0 * used / tot : 0;
                v[2 * m + i] = num(gm, (size_t)i, HTA_GPU_METRICS_CPU);
            }
            svg_hbars(b, "metrics-sm", "SM activity per GPU", lab, NULL, v, m, "% of the time", 170,
                      "No chart: no GPU was active in any sample.");
            svg_hbars(b, "metrics-mem", "GPU memory in use (most of any sample)", lab, NULL, v + m, m,
                      "% of the GPU's memory", 170, "No chart: no sample found GPU memory in use.");
            svg_hbars(b, "metrics-cpu", "host CPU busy", lab, NULL, v + 2 * m, m, "% of the host's cores", 170,
                      "No chart: no sample found the host's CPU busy.");
            html_table(b, gm, "metrics-table");
        }
        for (int i = 0; own && i < m; i++) free(own[i]);
        free(own);
        free(lab);
        free(v);
    }
    sb_printf(b, "<h2 id=\"observations\">What each analysis says</h2>\n");
    html_table(b, obs, "observations-table");
    sb_printf(b, "<p class=\"note\">Written by hta report. Savings are estimates of the what-if engine; "
                 "docs/report.md says how each is made.</p>\n</body></html>\n");
}

hta_status rp_html_write(const char *path, const rp_rank *pr, size_t n, const hta_result *res,
                         const hta_table *idle, hta_error *err) {
    sb b = {0};
    page(&b, pr, n, res, idle);
    if (b.oom) {
        sb_free(&b);
        return hta_oom(err);
    }
    hta_outfile *o = NULL;
    hta_status st = hta_outfile_open(path, &o, err);
    if (!st) {
        st = hta_outfile_write(o, b.s, b.len, err);
        hta_status st2 = hta_outfile_close(o, !st, st ? NULL : err);
        if (!st) st = st2;
    }
    sb_free(&b);
    return st;
}
