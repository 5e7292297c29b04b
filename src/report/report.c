/* The holistic report: runs the analyses, reads their tables back and says
 * what they mean, with the figures. */
#include "hta/vocab.h"
#include "hta/report.h"
#include "report/internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hta/breakdown.h"
#include "hta/cpath.h"
#include "hta/launch.h"
#include "core/bigbuf.h"


/* ---- reading result tables ----
 * Every cell is read by its declared column (the enum of the analysis'
 * declaration) from a table hta_result_table checked to be built from that
 * declaration: a renamed or moved column is still found, and a table of
 * another shape is an error instead of NaN figures. */

static double num(const hta_table *t, size_t row, int col) { return hta_table_get_float(t, row, col); }
static const char *txt(const hta_table *t, size_t row, int col) { return hta_table_get_str(t, row, col); }

/* Row of table t whose rank column rank_col is rank (first one), or -1.  By value, not position: an
 * analysis may have no row for a rank. */
static long rank_row(const hta_table *t, int rank_col, int32_t rank) {
    for (size_t r = 0; r < t->nrows; r++)
        if (num(t, r, rank_col) == rank) return (long)r;
    return -1;
}

/* ---- the findings table, sorted ---- */

/* Findings for all ranks first, then rank by rank; insertion order within. */
static int sort_findings(findings *f) {
    hta_table *t = f->t;
    size_t n = t->nrows;
    uint32_t *ord = malloc((n ? n : 1) * sizeof *ord);
    int64_t *key = malloc((n ? n : 1) * sizeof *key);
    if (!ord || !key) {
        free(ord);
        free(key);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        ord[i] = (uint32_t)i;
        key[i] = isnan(num(t, i, HTA_OBS_RANK)) ? -1 : (int64_t)num(t, i, HTA_OBS_RANK);
    }
    int rc = hta_stable_sort_idx_i64(ord, n, key, NULL);
    /* The table is columnar and has no row swap: each column is permuted through a copy, 8-byte cells
     * (int, double or string pointer) moved as they are. */
    for (size_t c = 0; !rc && c < t->ncols; c++) {
        hta_column *col = &t->cols[c];
        size_t sz = col->type == HTA_COL_STR ? sizeof(char *) : sizeof(int64_t);
        char *tmp = malloc((n ? n : 1) * sz);
        unsigned char *nl = col->null ? malloc(n ? n : 1) : NULL;
        if (!tmp || (col->null && !nl)) {
            free(tmp);
            free(nl);
            rc = -1;
            break;
        }
        for (size_t i = 0; i < n; i++) {
            memcpy(tmp + i * sz, (char *)col->v.i + ord[i] * sz, sz);
            if (nl) nl[i] = col->null[ord[i]];
        }
        memcpy(col->v.i, tmp, n * sz);
        if (nl) memcpy(col->null, nl, n);
        free(tmp);
        free(nl);
    }
    free(ord);
    free(key);
    return rc;
}

/* ---- the analyses, reduced from the parts ---- */

typedef struct parts {
    hta_result kernels, stragglers;
    /* taken from the parts (owned), checked to be their declarations' */
    hta_table *temporal_t, *idle_t, *overlap_t, *launch_t, *cpath_t, *notes_t, *findings_t;
    /* read in kernels and stragglers (stragglers: NULL when not run) */
    const hta_table *kernel_type_t, *all_kernels_t, *stragglers_t;
    /* all_kernels folded (hta_report_fold): the kernels by name, and each rank's time in them (owned) */
    hta_table *knames_t, *ksums_t;
} parts;

static void parts_free(parts *p) {
    hta_result_free(&p->kernels);
    hta_result_free(&p->stragglers);
    hta_table *t[] = {p->temporal_t, p->idle_t, p->overlap_t, p->launch_t, p->cpath_t, p->notes_t, p->findings_t,
                      p->knames_t, p->ksums_t};
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) hta_table_free(t[i]);
}

/* The analyses' tables out of the parts, the cross-rank ones reduced: the kernel breakdown's sums over
 * the ranks, and the stragglers from every rank's summary (with three ranks or more: with two both are
 * "candidates", nothing to say). */
static hta_status reduce_parts(hta_result *all, size_t ns, int hta_compat, int cpath, parts *p, hta_error *err) {
    memset(p, 0, sizeof *p);
    HTA_TRY(hta_result_take(all, &HTA_TEMPORAL_TABLE, &p->temporal_t, err));
    HTA_TRY(hta_result_take(all, &HTA_IDLE_TABLE, &p->idle_t, err));
    HTA_TRY(hta_result_take(all, &HTA_OVERLAP_TABLE, &p->overlap_t, err));
    HTA_TRY(hta_result_take(all, &HTA_LAUNCH_SUMMARY_TABLE, &p->launch_t, err));
    if (cpath) {
        HTA_TRY(hta_result_take(all, &HTA_REPORT_CPATH_TABLE, &p->cpath_t, err));
        HTA_TRY(hta_result_take(all, &RP_PART_NOTES_TABLE, &p->notes_t, err));
        HTA_TRY(hta_result_take(all, &RP_PART_FINDINGS_TABLE, &p->findings_t, err));
    }
    /* parts appended rather than folded: their kernels folded here (none left where they were) */
    HTA_TRY(rp_kernels_fold(all, all, err));
    HTA_TRY(hta_result_take(all, &RP_PART_KNAMES_TABLE, &p->knames_t, err));
    HTA_TRY(hta_result_take(all, &RP_PART_KSUMS_TABLE, &p->ksums_t, err));
    hta_kernel_opts ko;
    rp_kernel_opts(&ko);
    HTA_TRY(hta_kernel_breakdown_reduce(&ko, all, &p->kernels, err));
    HTA_TRY(hta_result_table(&p->kernels, &HTA_KERNEL_TYPE_TABLE, &p->kernel_type_t, err));
    HTA_TRY(hta_result_table(&p->kernels, &HTA_ALL_KERNELS_TABLE, &p->all_kernels_t, err));
    if (ns > 2) {
        hta_straggler_opts so;
        hta_straggler_opts_default(&so);
        so.num_candidates = (int)ns; /* every rank's figure, to judge the margin */
        HTA_TRY(hta_straggler_fold(all, all, err)); /* parts appended rather than folded */
        HTA_TRY(hta_stragglers_from_summary(all, &so, hta_compat, &p->stragglers, err));
        HTA_TRY(hta_result_table(&p->stragglers, &HTA_STRAGGLERS_TABLE, &p->stragglers_t, err));
    }
    return HTA_OK;
}

/* ---- report tables ---- */

/* One row per selected rank with the figures the findings are drawn from, each read from its analysis'
 * table by declared column; where an analysis has no row for the rank, the new row's empty cells stay. */
static hta_table *ranks_table(const rp_rank *pr, size_t ns, const parts *p) {
    hta_table *tb = hta_table_from_def(&HTA_REPORT_RANKS_TABLE);
    if (!tb) return NULL;
    const hta_table *tt = p->temporal_t, *it = p->idle_t, *ot = p->overlap_t, *ls = p->launch_t;
    for (size_t k = 0; k < ns; k++) {
        int32_t rank = pr[k].rank;
        long row = hta_table_add_row(tb);
        if (row < 0) goto oom;
        hta_table_set_int(tb, row, HTA_REPORT_RANKS_RANK, rank);
        long r = rank_row(tt, HTA_TEMPORAL_RANK, rank);
        if (r >= 0) {
            double idle = num(tt, r, HTA_TEMPORAL_IDLE_US), comp = num(tt, r, HTA_TEMPORAL_COMPUTE_US),
                   nonc = num(tt, r, HTA_TEMPORAL_NON_COMPUTE_US);
            hta_table_set_float(tb, row, HTA_REPORT_RANKS_SPAN, idle + comp + nonc);
            hta_table_set_float(tb, row, HTA_REPORT_RANKS_KERNEL, num(tt, r, HTA_TEMPORAL_KERNEL_US));
            hta_table_set_float(tb, row, HTA_REPORT_RANKS_IDLE, num(tt, r, HTA_TEMPORAL_IDLE_PCTG));
            hta_table_set_float(tb, row, HTA_REPORT_RANKS_COMPUTE, num(tt, r, HTA_TEMPORAL_COMPUTE_PCTG));
            hta_table_set_float(tb, row, HTA_REPORT_RANKS_NON_COMPUTE, num(tt, r, HTA_TEMPORAL_NON_COMPUTE_PCTG));
        }
        /* idle by cause, summed over the rank's streams */
        static const char *const causes[] = {"host_wait", "kernel_wait", "other"};
        double by[3] = {0, 0, 0}, tot = 0;
        for (size_t i = 0; i < it->nrows; i++) {
            if (num(it, i, HTA_IDLE_RANK) != rank) continue;
            const char *c = txt(it, i, HTA_IDLE_CATEGORY);
            for (int j = 0; c && j < 3; j++)
                if (!strcmp(c, causes[j])) by[j] += num(it, i, HTA_IDLE_TIME), tot += num(it, i, HTA_IDLE_TIME);
        }
        /* the cause with the most idle time; ties go to the first in host_wait, kernel_wait, other order */
        int best = by[1] > by[0] ? 1 : 0;
        if (by[2] > by[best]) best = 2;
        if (tot > 0) {
            if (hta_table_set_str(tb, row, HTA_REPORT_RANKS_CAUSE, causes[best])) goto oom;
            hta_table_set_float(tb, row, HTA_REPORT_RANKS_CAUSE_PCTG, hta_round(100.0 * by[best] / tot, 2));
        }
        r = rank_row(ot, HTA_OVERLAP_RANK, rank);
        if (r >= 0) {
            hta_table_set_float(tb, row, HTA_REPORT_RANKS_COMM, num(ot, r, HTA_OVERLAP_COMM_US));
            hta_table_set_float(tb, row, HTA_REPORT_RANKS_OVERLAP, num(ot, r, HTA_OVERLAP_PCTG));
        }
        r = rank_row(ls, HTA_LAUNCH_SUMMARY_RANK, rank);
        if (r >= 0) {
            hta_table_set_int(tb, row, HTA_REPORT_RANKS_LAUNCHES, (int64_t)num(ls, r, HTA_LAUNCH_SUMMARY_LAUNCHES));
            hta_table_set_int(tb, row, HTA_REPORT_RANKS_DELAY_OUTLIERS,
                              (int64_t)num(ls, r, HTA_LAUNCH_SUMMARY_DELAY_OUTLIERS));
            hta_table_set_float(tb, row, HTA_REPORT_RANKS_MEAN_DELAY, num(ls, r, HTA_LAUNCH_SUMMARY_MEAN_DELAY));
            hta_table_set_int(tb, row, HTA_REPORT_RANKS_SHORT, (int64_t)num(ls, r, HTA_LAUNCH_SUMMARY_SHORT));
        }
    }
    return tb;
oom:
    hta_table_free(tb);
    return NULL;
}

typedef struct kagg {
    const char *name, *type;
    double sum, count;
} kagg;

/* ties by name, so that the order is the same on every run */
static int by_sum_desc(const void *a, const void *b) {
    const kagg *x = a, *y = b;
    if (x->sum != y->sum) return x->sum < y->sum ? 1 : -1;
    return strcmp(x->name, y->name);
}

/* (type, name) order of report_part_kernels' rows, as all_kernels' rows are ordered */
static int cmp_kname(const hta_table *t, size_t a, size_t b, void *ctx) {
    (void)ctx;
    int c = strcmp(txt(t, a, RP_PART_KNAMES_TYPE), txt(t, b, RP_PART_KNAMES_TYPE));
    return c ? c : strcmp(txt(t, a, RP_PART_KNAMES_NAME), txt(t, b, RP_PART_KNAMES_NAME));
}

/* each rank's time in kernel k, by rank: kernel (in its (type, name) place, ctx), then rank */
static int cmp_ksum(const hta_table *t, size_t a, size_t b, void *ctx) {
    const size_t *place = ctx;
    size_t x = place[hta_table_get_int(t, a, RP_PART_KSUMS_KEY)], y = place[hta_table_get_int(t, b, RP_PART_KSUMS_KEY)];
    if (x != y) return x < y ? -1 : 1;
    int64_t r = hta_table_get_int(t, a, RP_PART_KSUMS_RANK), q = hta_table_get_int(t, b, RP_PART_KSUMS_RANK);
    return (r > q) - (r < q);
}

/* Kernels over all selected ranks, by total time: the same name on several ranks is one kernel to
 * optimise.  The ranks' times are added in all_kernels' order (type, name, rank), as over its rows. */
static hta_status kernel_tables(const parts *p, int top, hta_result *out, double *total_out, kagg **top_out,
                                size_t *ntop_out, hta_error *err) {
    hta_table *kn = p->knames_t, *ks = p->ksums_t;
    size_t m = kn->nrows;
    kagg *v = calloc(m ? m : 1, sizeof *v);
    size_t *ord = malloc((m ? m : 1) * sizeof *ord), *place = malloc((m ? m : 1) * sizeof *place);
    if (!v || !ord || !place) {
        free(v), free(ord), free(place);
        return hta_oom(err);
    }
    /* the kernels' (type, name) order without moving their rows (the sums point at them by row) */
    for (size_t j = 0; j < m; j++) ord[j] = j;
    for (size_t w = 1; w < m; w *= 2) /* a stable merge sort of ord, place its buffer */
        for (size_t lo = 0; lo < m; lo += 2 * w) {
            size_t mid = lo + w < m ? lo + w : m, hi = lo + 2 * w < m ? lo + 2 * w : m, x = lo, y = mid, k = lo;
            while (x < mid || y < hi)
                place[k++] = y >= hi || (x < mid && cmp_kname(kn, ord[x], ord[y], NULL) <= 0) ? ord[x++] : ord[y++];
            memcpy(ord + lo, place + lo, (hi - lo) * sizeof *ord);
        }
    for (size_t j = 0; j < m; j++) place[ord[j]] = j;
    hta_status st0 = hta_table_sort_rows(ks, cmp_ksum, place, err);
    if (st0) {
        free(v), free(ord), free(place);
        return st0;
    }
    for (size_t j = 0; j < m; j++) {
        size_t r = ord[j];
        v[j] = (kagg){txt(kn, r, RP_PART_KNAMES_NAME), txt(kn, r, RP_PART_KNAMES_TYPE), 0,
                      (double)hta_table_get_int(kn, r, RP_PART_KNAMES_COUNT)};
    }
    double total = 0;
    for (size_t i = 0; i < ks->nrows; i++) {
        double s = num(ks, i, RP_PART_KSUMS_SUM);
        v[place[hta_table_get_int(ks, i, RP_PART_KSUMS_KEY)]].sum += s;
        total += s;
    }
    free(ord), free(place);
    qsort(v, m, sizeof *v, by_sum_desc);
    hta_table *tb = hta_table_from_def(&HTA_TOP_KERNELS_TABLE);
    if (!tb) goto oom;
    for (size_t j = 0; j < m && (int)j < top; j++) {
        long row = hta_table_add_row(tb);
        /* the full name: shortened ones coincide (four at::native::vectorized_elementwise_kernel rows); the
         * table format cuts it in the middle, keeping what tells the rows apart */
        if (row < 0 || hta_table_set_str(tb, row, HTA_TOP_KERNELS_NAME, v[j].name) ||
            hta_table_set_str(tb, row, HTA_TOP_KERNELS_TYPE, v[j].type))
            goto oom;
        hta_table_set_int(tb, row, HTA_TOP_KERNELS_COUNT, (int64_t)v[j].count);
        hta_table_set_float(tb, row, HTA_TOP_KERNELS_SUM, v[j].sum);
        hta_table_set_float(tb, row, HTA_TOP_KERNELS_MEAN, v[j].count > 0 ? v[j].sum / v[j].count : NAN);
        hta_table_set_float(tb, row, HTA_TOP_KERNELS_PCTG,
                            total > 0 ? hta_round(100.0 * v[j].sum / total, 2) : NAN);
    }
    if (hta_result_add(out, tb)) {
        free(v);
        return hta_oom(err);
    }
    *total_out = total;
    *top_out = v;
    *ntop_out = m;
    return HTA_OK;
oom:
    hta_table_free(tb);
    free(v);
    return hta_oom(err);
}

static hta_status kernel_types_table(const parts *p, hta_result *out, hta_error *err) {
    const hta_table *kt = p->kernel_type_t;
    hta_table *tb = hta_table_from_def(&HTA_REPORT_KERNEL_TYPES_TABLE);
    if (!tb) goto oom;
    for (size_t i = 0; i < kt->nrows; i++) {
        long row = hta_table_add_row(tb);
        if (row < 0 || hta_table_set_str(tb, row, HTA_REPORT_KERNEL_TYPES_TYPE, txt(kt, i, HTA_KERNEL_TYPE_TYPE)))
            goto oom;
        hta_table_set_float(tb, row, HTA_REPORT_KERNEL_TYPES_SUM, num(kt, i, HTA_KERNEL_TYPE_SUM));
        hta_table_set_float(tb, row, HTA_REPORT_KERNEL_TYPES_PCTG, num(kt, i, HTA_KERNEL_TYPE_PCTG));
    }
    if (hta_result_add(out, tb)) return hta_oom(err);
    return HTA_OK;
oom:
    hta_table_free(tb);
    return hta_oom(err);
}

/* The thresholds are docs/report.md's: communication is exposed below 50% overlap when it takes over 10%
 * of kernel time; launches are worth a finding when 5% start over 100 us late or 20% run shorter than
 * their launch call. */
static void rank_findings(findings *f, const hta_table *rk, size_t r, const rp_rank *p, const rp_cpu *cpu) {
    int64_t rank = (int64_t)num(rk, r, HTA_REPORT_RANKS_RANK);
    double idle = num(rk, r, HTA_REPORT_RANKS_IDLE), span = num(rk, r, HTA_REPORT_RANKS_SPAN);
    const char *cause = txt(rk, r, HTA_REPORT_RANKS_CAUSE);
    if (isnan(span) || span <= 0) {
        /* a libhtatrace file has no kernels by nature: saying so is noise; its cpu findings speak for it */
        if (!cpu->tracer[r])
            rp_add_finding(f, rank, "gpu",
                           "nothing ran on a GPU stream in the analysed window: a CPU-only trace, or the profiler did "
                           "not record CUDA activity; the cpu findings say where the CPU time goes",
                           "no GPU kernels");
        return;
    }
    /* the GPU's idle time over the report's window (the headline's and the findings'), told apart by what
     * the host did meanwhile; temporal's figures over HTA's GPU span are in the ranks table */
    rp_split sp;
    rp_split_of(p, &sp);
    (void)idle, (void)cause;
    if (sp.window > 0) {
        double w = (double)sp.window, id = 100.0 * (double)(sp.window - sp.busy) / w;
        char b1[32], b2[32], gw[96] = "";
        if (p->window == RP_WIN_GPU) /* which window, where it is not the CPU's steps */
            snprintf(gw, sizeof gw, " (steps on the GPU timeline: the GPU runs %s behind the CPU)",
                     rp_dur(p->lag_ns, b2, sizeof b2));
        else if (p->window == RP_WIN_SPAN)
            snprintf(gw, sizeof gw, " (the whole trace span)");
        if (id >= 10)
            rp_add_finding(f, rank, "idle", "see the findings for what removing each part would save; `hta idle`",
                           "GPU idle %.1f%% of the %s window%s: the host blocked in runtime calls %.1f%%, GPU work "
                           "queued but waiting %.1f%%, data loading %.1f%%, the host otherwise (launch, Python) %.1f%%",
                           id, rp_dur(sp.window, b1, sizeof b1), gw, 100.0 * (double)sp.block / w,
                           100.0 * (double)sp.wait / w, 100.0 * (double)sp.dl / w, 100.0 * (double)sp.host / w);
        else
            rp_add_finding(f, rank, "idle", "the GPU is kept busy; look at the kernels themselves",
                           "GPU idle only %.1f%% of the %s window%s", id, rp_dur(sp.window, b1, sizeof b1), gw);
    }
    double comm = num(rk, r, HTA_REPORT_RANKS_COMM), ov = num(rk, r, HTA_REPORT_RANKS_OVERLAP),
           kt = num(rk, r, HTA_REPORT_RANKS_KERNEL);
    if (comm > 0 && !isnan(ov)) {
        /* communication time not hidden behind compute: what overlapping it could win at most */
        double exposed = comm * (1 - ov / 100.0);
        if (ov < 50 && kt > 0 && comm > 0.1 * kt)
            rp_add_finding(f, rank, "communication",
                        "collectives run mostly exposed: overlap them with compute (DDP bucketing, FSDP "
                        "prefetch, async collectives); see `hta overlap`",
                        "communication %.0f us (%.0f%% of kernel time), only %.1f%% overlapped with compute: "
                        "about %.0f us exposed",
                        comm, 100 * comm / kt, ov, exposed);
        else
            rp_add_finding(f, rank, "communication", "see `hta overlap`",
                        "communication %.0f us, %.1f%% overlapped with compute", comm, ov);
    }
    double launches = num(rk, r, HTA_REPORT_RANKS_LAUNCHES), lo = num(rk, r, HTA_REPORT_RANKS_DELAY_OUTLIERS),
           sk = num(rk, r, HTA_REPORT_RANKS_SHORT), md = num(rk, r, HTA_REPORT_RANKS_MEAN_DELAY);
    if (launches > 0 && lo / launches >= 0.05)
        rp_add_finding(f, rank, "launch",
                    "kernels wait in a long launch queue or behind a sync: the CPU runs far ahead "
                    "(fine) or a stream is blocked; see `hta launch`, `hta counters`",
                    "%.0f of %.0f launches (%.0f%%) start more than 100 us after their launch call; "
                    "mean launch delay %.0f us",
                    lo, launches, 100 * lo / launches, md);
    if (launches > 0 && sk / launches >= 0.2)
        rp_add_finding(f, rank, "launch",
                    "the GPU finishes these faster than the CPU launches them: fuse them or capture "
                    "them in a CUDA graph; see `hta launch`",
                    "%.0f of %.0f kernels (%.0f%%) run shorter than their launch call", sk, launches,
                    100 * sk / launches);
}

static int cmp_dbl(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of column col over the rows where it is a number; lo and hi get the
 * rows of the smallest and largest value.  NaN when there is none. */
static double col_median(const hta_table *rk, int col, long *lo, long *hi) {
    double *v = malloc((rk->nrows ? rk->nrows : 1) * sizeof *v);
    size_t n = 0;
    *lo = *hi = -1;
    for (size_t r = 0; v && r < rk->nrows; r++) {
        double x = num(rk, r, col);
        if (isnan(x)) continue;
        v[n++] = x;
        if (*lo < 0 || x < num(rk, (size_t)*lo, col)) *lo = (long)r;
        if (*hi < 0 || x > num(rk, (size_t)*hi, col)) *hi = (long)r;
    }
    double med = NAN;
    if (n) {
        qsort(v, n, sizeof *v, cmp_dbl);
        med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    }
    free(v);
    return med;
}

/* The rank that starts collectives latest, if it stands out: more than 5
 * median absolute deviations and 0.001 step above the median rank.  Ranks
 * that tie (small or very regular traces) name no straggler. */
static long straggler_row(const hta_table *ps) {
    if (!ps || ps->nrows < 3) return -1;
    long lo, hi;
    double med = col_median(ps, HTA_STRAGGLERS_MEAN_START, &lo, &hi);
    if (isnan(med) || hi < 0) return -1;
    double *dev = malloc(ps->nrows * sizeof *dev);
    if (!dev) return -1;
    size_t n = 0;
    for (size_t r = 0; r < ps->nrows; r++) {
        double x = num(ps, r, HTA_STRAGGLERS_MEAN_START);
        if (!isnan(x)) dev[n++] = fabs(x - med);
    }
    qsort(dev, n, sizeof *dev, cmp_dbl);
    double mad = n % 2 ? dev[n / 2] : (dev[n / 2 - 1] + dev[n / 2]) / 2;
    free(dev);
    double margin = num(ps, (size_t)hi, HTA_STRAGGLERS_MEAN_START) - med;
    return margin > 0.001 && margin > 5 * mad ? hi : -1;
}

/* Many ranks: one finding per area for all of them (median, least, most), so that 64 ranks do not give 64
 * copies of one sentence; single ranks only where they stand out. */
static void summary_findings(findings *f, const hta_table *rk, const rp_rank *pr, const rp_cpu *cpu) {
    long lo, hi;
    size_t n = rk->nrows;
    double idle = col_median(rk, HTA_REPORT_RANKS_IDLE, &lo, &hi);
    if (isnan(idle)) {
        size_t nt = 0;
        for (size_t k = 0; k < cpu->n; k++) nt += cpu->tracer[k];
        if (nt < n)
            rp_add_finding(f, -1, "gpu", "CPU-only traces, or the profiler did not record CUDA activity; the cpu "
                                         "finding says where the CPU time goes",
                           "no GPU kernels on any of the %zu ranks", n);
        return;
    }
    /* over the report's window, split as the findings split it (the ranks table keeps temporal's figures) */
    static const char *const idle_parts[] = {"the host blocked in runtime calls", "GPU work queued but waiting",
                                        "data loading", "the host otherwise (launch, Python)"};
    double *v = malloc(n * sizeof *v);
    size_t cnt[4] = {0, 0, 0, 0}, m = 0, ilo = 0, ihi = 0;
    for (size_t r = 0; v && r < n; r++) {
        rp_split sp;
        rp_split_of(&pr[r], &sp);
        v[r] = sp.window > 0 ? 100.0 * (double)(sp.window - sp.busy) / (double)sp.window : NAN;
        if (isnan(v[r])) continue;
        if (!m || v[r] < v[ilo]) ilo = r;
        if (!m || v[r] > v[ihi]) ihi = r;
        m++;
        const int64_t x[4] = {sp.block, sp.wait, sp.dl, sp.host};
        int b = 0;
        for (int j = 1; j < 4; j++) b = x[j] > x[b] ? j : b;
        cnt[b]++;
    }
    double *sv = v && m ? malloc(m * sizeof *sv) : NULL;
    if (!sv) {
        free(v);
        return;
    }
    size_t q = 0;
    for (size_t r = 0; r < n; r++)
        if (!isnan(v[r])) sv[q++] = v[r];
    qsort(sv, m, sizeof *sv, cmp_dbl);
    idle = m % 2 ? sv[m / 2] : (sv[m / 2 - 1] + sv[m / 2]) / 2;
    free(sv);
    int best = 0;
    for (int j = 1; j < 4; j++) best = cnt[j] > cnt[best] ? j : best;
    rp_add_finding(f, -1, "idle", "see the findings for what removing each part would save; `hta idle`",
                   "GPU idle over the window: median %.1f%% over %zu ranks (least %.1f%% on rank %d, most %.1f%% on "
                   "rank %d); most of it is %s on %zu of them",
                   idle, n, v[ilo], (int)pr[ilo].rank, v[ihi], (int)pr[ihi].rank, idle_parts[best], cnt[best]);
    for (size_t r = 0; r < n; r++) /* ranks well above the others */
        if (v[r] > idle + 10)
            rp_add_finding(f, pr[r].rank, "idle",
                           "this rank idles much more than the others: compare its `hta idle` and `hta launch` "
                           "with a typical rank's",
                           "GPU idle %.1f%% of the window, median of all ranks %.1f%%", v[r], idle);
    free(v);
    double ov = col_median(rk, HTA_REPORT_RANKS_OVERLAP, &lo, &hi);
    if (!isnan(ov))
        rp_add_finding(f, -1, "communication",
                    ov < 50 ? "collectives run mostly exposed: overlap them with compute (DDP bucketing, FSDP "
                              "prefetch, async collectives); see `hta overlap`"
                            : "see `hta overlap`",
                    "communication overlapped with compute: median %.1f%% (least %.1f%% on rank %.0f)", ov,
                    num(rk, (size_t)lo, HTA_REPORT_RANKS_OVERLAP), num(rk, (size_t)lo, HTA_REPORT_RANKS_RANK));
    double lod = 0, la = 0;
    for (size_t r = 0; r < n; r++) {
        double a = num(rk, r, HTA_REPORT_RANKS_LAUNCHES), d = num(rk, r, HTA_REPORT_RANKS_DELAY_OUTLIERS);
        if (!isnan(a)) la += a, lod += isnan(d) ? 0 : d;
    }
    if (la > 0 && lod / la >= 0.05)
        rp_add_finding(f, -1, "launch",
                    "kernels wait in a long launch queue or behind a sync; see `hta launch`, `hta counters`",
                    "%.0f of %.0f launches (%.0f%%) over all ranks start more than 100 us after their launch call",
                    lod, la, 100 * lod / la);
}

/* What bounds each rank's critical path: the parts' summary rows (HTA's bound_by summary per rank), the
 * notes of ranks without a path, and the findings: each rank's own for a few ranks; for many, how often
 * each bound_by class is a rank's largest. */
static hta_status critical_paths(const rp_rank *pr, size_t ns, parts *p, findings *f, hta_result *out,
                                 hta_error *err) {
    for (size_t i = 0; i < p->notes_t->nrows; i++)
        if (hta_result_note(out, "%s", txt(p->notes_t, i, RP_PART_NOTES_NOTE))) return hta_oom(err);
    if (ns > RANKS_IN_FULL) {
        const char *bound[16];
        size_t bound_n[16] = {0}, nbound = 0;
        for (size_t k = 0; k < ns; k++) {
            const char *bb = pr[k].cp_bound;
            if (!bb) continue;
            size_t j = 0;
            while (j < nbound && strcmp(bound[j], bb)) j++;
            if (j == nbound && nbound < 16) bound[nbound++] = bb;
            if (j < 16) bound_n[j]++;
        }
        if (nbound) {
            char text[512] = "";
            for (size_t j = 0; j < nbound; j++) {
                size_t l = strlen(text);
                snprintf(text + l, sizeof text - l, "%s%s on %zu rank%s", j ? ", " : "", bound[j], bound_n[j],
                         bound_n[j] == 1 ? "" : "s");
            }
            rp_add_finding(f, -1, "critical path",
                           "`hta critical-path --ranks R --what-if RULE` estimates what an optimisation would save",
                           "largest share of the critical path: %s", text);
        }
    } else {
        const hta_table *ft = p->findings_t;
        for (size_t i = 0; i < ft->nrows; i++)
            rp_add_finding(f, (int64_t)num(ft, i, HTA_OBS_RANK), txt(ft, i, HTA_OBS_AREA), txt(ft, i, HTA_OBS_TODO),
                           "%s", txt(ft, i, HTA_OBS_FINDING));
    }
    hta_table *tb = p->cpath_t;
    p->cpath_t = NULL;
    return hta_result_add(out, tb) ? hta_oom(err) : HTA_OK;
}

/* JSON files that are no traces (a folder of configs or results: Chrome's array form of objects, none a trace
 * event) would be a job of ranks without events, reported with confidence: where no rank has an event and some
 * file has elements, an error naming the files.  An empty trace (no elements) is one, and says "no events". */
static hta_status not_traces(const rp_rank *pr, size_t n, hta_error *err) {
    size_t junk = 0;
    for (size_t k = 0; k < n; k++) {
        if (pr[k].t1 >= pr[k].t0) return HTA_OK; /* some rank has events */
        junk += pr[k].file_events > 0;
    }
    if (!junk) return HTA_OK;
    char names[600];
    size_t len = 0, named = 0;
    names[0] = 0;
    for (size_t k = 0; k < n; k++)
        if (pr[k].file_events > 0 && rp_append(names, sizeof names, &len, "%s%s", named ? ", " : "", pr[k].path))
            named++;
    return hta_fail(err, HTA_ENOTTRACE, "%s%s: JSON, but no trace: %s no event a profiler writes (objects with "
                    "\"ph\" and \"ts\"); hta reads PyTorch profiler (Kineto) traces", names,
                    named < junk ? ", ..." : "", junk == 1 ? "it holds" : "they hold");
}

/* The job in one row (HTA_REPORT_HEADLINE). */
static hta_table *headline_table(const rp_rank *pr, size_t ns) {
    hta_table *tb = hta_table_from_def(&HTA_REPORT_HEADLINE_TABLE);
    long row = tb ? hta_table_add_row(tb) : -1;
    if (row < 0) {
        hta_table_free(tb);
        return NULL;
    }
    size_t steps = 0, with_events = 0;
    double tot = 0, gpu = 0, cpu = 0; /* summed over ranks: double, as times near 2^62 ns may be */
    for (size_t k = 0; k < ns; k++) {
        const rp_rank *p = &pr[k];
        if (p->t1 < p->t0) continue; /* no events: no step either (profile.c) */
        with_events++;
        if (p->nsteps > steps) steps = p->nsteps;
        int64_t a = p->step_ts[0], b = p->step_end[p->nsteps - 1];
        tot += (double)(b - a);
        for (size_t s = 0; s < p->nsteps; s++) gpu += (double)p->gpu_busy_ns[s];
        cpu += (double)p->cpu_steps_ns;
    }
    hta_table_set_int(tb, row, HTA_REPORT_HEADLINE_RANKS, (int64_t)ns);
    hta_table_set_int(tb, row, HTA_REPORT_HEADLINE_STEPS, (int64_t)steps);
    hta_table_set_float(tb, row, HTA_REPORT_HEADLINE_STEP, with_events ? (double)rp_job_step(pr, ns) / 1e3 : NAN);
    hta_table_set_float(tb, row, HTA_REPORT_HEADLINE_GPU_BUSY, tot > 0 ? hta_round(100.0 * gpu / tot, 1) : NAN);
    hta_table_set_float(tb, row, HTA_REPORT_HEADLINE_CPU_BUSY, tot > 0 ? hta_round(100.0 * cpu / tot, 1) : NAN);
    return tb;
}

/* Frees the tables of r, keeping its notes. */
static void drop_tables(hta_result *r) {
    for (size_t i = 0; i < r->n; i++) hta_table_free(r->tables[i]);
    r->n = 0;
}

/* The tables the report keeps through the savings, copied afresh and the old copies freed, once the parts'
 * rows are gone: their rows and strings were made rank by rank, between the ranks' models and the parts'
 * rows, so that the few bytes kept per rank held a page of the heap each (2.2 MB resident for 1.1 MB in use
 * on 256 generated ranks, with --threads 1); copied into the room just freed they take the pages they need.
 * A table whose columns are not its declaration's (renamed, dynamic) stays as it is, as does one that could
 * not be copied (the copy only saves room). */
static void compact(hta_table **tp) {
    hta_table *t = *tp, *c;
    if (!t || !t->def || t->ndyn || !(c = hta_table_from_def(t->def))) return;
    int same = c->ncols == t->ncols && !strcmp(c->name, t->name) && !hta_table_reserve(c, t->nrows ? t->nrows : 1);
    for (size_t i = 0; same && i < t->ncols; i++)
        same = c->cols[i].type == t->cols[i].type && !strcmp(c->cols[i].name, t->cols[i].name);
    for (size_t r = 0; same && r < t->nrows; r++) same = hta_table_copy_row(c, t, r) >= 0;
    if (!same) {
        hta_table_free(c);
        return;
    }
    for (size_t i = 0; i < t->ncols; i++) c->cols[i].wrap = t->cols[i].wrap;
    hta_table_free(t);
    *tp = c;
}

static void compact_result(hta_result *r) {
    for (size_t i = 0; i < r->n; i++) compact(&r->tables[i]);
}

static hta_status reduce_run(const hta_report_opts *o, const hta_report_src *src, hta_result *all, hta_result *out,
                             hta_error *err) {
    hta_arena pa = HTA_ARENA_INIT;
    rp_parts pp;
    parts p;
    memset(&p, 0, sizeof p);
    rp_cpu cpu;
    memset(&cpu, 0, sizeof cpu);
    hta_result_init(&cpu.res);
    findings f = {hta_table_from_def(&HTA_OBS_TABLE), 1, 0};
    hta_table *rk = NULL, *ft = NULL, *hl = NULL;
    kagg *kv = NULL;
    size_t nk = 0;
    double ktotal = 0;
    hta_result eff, cr; /* efficiency's and comms' reduced results, between their reduce and their tables */
    hta_result_init(&eff);
    hta_result_init(&cr);
    int hta_compat = src->ctx ? src->ctx->hta_compat : src->co ? src->co->hta_compat : 0;
    hta_status st = rp_part_unpack(all, &pa, &pp, err);
    size_t ns = pp.n;
    rp_rank *pr = pp.pr;
    if (!st) st = not_traces(pr, ns, err);
    if (!st) st = reduce_parts(all, ns, hta_compat, o->critical_path, &p, err);
    if (st) goto done;
    if (!f.t || !(rk = ranks_table(pr, ns, &p))) {
        st = hta_oom(err);
        goto done;
    }
    /* the ranks without GPU work (and libhtatrace files): what the CPU side says about them */
    if ((st = rp_cpu_run(pr, ns, rk, all, &cpu, err))) goto done;
    /* the findings are prose: wrapped in the table format instead of cut at 60 characters */
    hta_table_col_wrap(f.t, HTA_OBS_FINDING);
    hta_table_col_wrap(f.t, HTA_OBS_TODO);
    /* too short to judge: said once; under 1 ms, nothing read from its timings either (no idle share of a
     * 0.13 us window) */
    int brief = rp_too_short(pr, ns, NULL);
    if (brief) {
        rp_add_finding(&f, -1, "trace", "profile a longer stretch (several steps, schedule(wait, warmup, active)) "
                       "so that the GPU's work can be judged",
                       "too short to judge: under %d ms of GPU window or fewer than %d kernels on every rank; no "
                       "finding is drawn from its timings", (int)(RP_SHORT_NS / 1000000), RP_SHORT_KERNELS);
        if (hta_result_note(out, "the trace is too short to judge (under 1 ms of GPU window or fewer than 10 "
                                 "kernels on every rank): no findings")) {
            st = hta_oom(err);
            goto done;
        }
        f.quiet = brief == 2;
    }
    if (ns > RANKS_IN_FULL) summary_findings(&f, rk, pr, &cpu);
    else
        for (size_t r = 0; r < rk->nrows; r++) rank_findings(&f, rk, r, &pr[r], &cpu);
    rp_cpu_findings(&f, &cpu);
    if ((st = rp_metrics(pr, ns, &f, out, err))) goto done; /* htad's metrics beside the traces */
    /* kernel tables only where some rank ran kernels: on CPU-only traces and tracer files they would be
     * empty tables in the way of the CPU ones */
    if (cpu.n_on < ns) {
        if ((st = kernel_types_table(&p, out, err))) goto done;
        if ((st = kernel_tables(&p, o->top_kernels > 0 ? o->top_kernels : 10, out, &ktotal, &kv, &nk, err)))
            goto done;
    }
    if ((st = rp_cpu_tables(&cpu, o->top_kernels > 0 ? o->top_kernels : 10, 5, out, err))) goto done;
    /* the kernel with the most time over all ranks: where an optimisation pays most */
    if (nk && ktotal > 0) {
        char *sn = hta_shorten_name(kv[0].name), nb[RP_NAME_MAX + 1];
        rp_add_finding(&f, -1, "kernels",
                    "the first place to optimise GPU time; `hta kernels` has per-rank statistics",
                    "top kernel %s (%s) takes %.1f%% of all kernel time (%.0f us in %.0f calls)",
                    rp_name(sn ? sn : kv[0].name, nb), kv[0].type, 100 * kv[0].sum / ktotal, kv[0].sum, kv[0].count);
        free(sn);
    }
    rp_lateness(pr, ns);
    if (o->critical_path && (st = critical_paths(pr, ns, &p, &f, out, err))) goto done;
    /* The savings' passes are the reduce's peak: what they do not read of the parts goes before them (the
     * kernels' rows by rank and their names, efficiency's and comms' partial tables, reduced now and put in
     * the report after the savings as before), so that the parts' bytes per rank and the job's are not held
     * at once (docs/scaling.md, "report"). */
    free(kv), kv = NULL, nk = 0;
    hta_result_free(&p.kernels);
    p.kernel_type_t = p.all_kernels_t = NULL;
    hta_table_free(p.knames_t), hta_table_free(p.ksums_t);
    p.knames_t = p.ksums_t = NULL;
    if ((st = rp_efficiency_reduce(all, &eff, err)) || (st = rp_comms_reduce(all, &cr, err))) goto done;
    drop_tables(all);
    rp_parts_trim(&pp);
    hta_table **kept[] = {&p.temporal_t, &p.idle_t, &p.overlap_t, &p.launch_t, &p.cpath_t, &p.notes_t,
                          &p.findings_t, &rk, &f.t};
    for (size_t i = 0; i < sizeof kept / sizeof *kept; i++) compact(kept[i]);
    compact_result(out);
    compact_result(&p.stragglers);
    if (p.stragglers_t && (st = hta_result_table(&p.stragglers, &HTA_STRAGGLERS_TABLE, &p.stragglers_t, err)))
        goto done;
    hta_heap_trim(0); /* their pages back: the job's passes allocate in other sizes and threads */
    /* the causes, ranked by what fixing them saves */
    if ((st = rp_diagnose(src, pr, ns, rk, hta_result_find(out, "top_kernels"), &f, out, &ft, err))) goto done;
    int top = o->top_kernels > 0 ? o->top_kernels : 10; /* --top bounds every list */
    /* op_roofline: 15 rows at the default --top (the page's roofline chart draws them), else --top's */
    if ((st = rp_efficiency(&eff, &f, ft, top == 10 ? 15 : top, out, err))) goto done; /* names the slow ops in ft */
    if ((st = rp_comms(&cr, &f, top, out, err))) goto done;
    if (!(hl = headline_table(pr, ns))) {
        st = hta_oom(err);
        goto done;
    }
    for (size_t k = 0; k < ns; k++)
        if (pr[k].t1 < pr[k].t0 && hta_result_note(out, "rank %d: no events", (int)pr[k].rank)) {
            st = hta_oom(err);
            goto done;
        }
    /* stragglers ran only with three ranks or more (reduce_parts): ps is NULL otherwise, and
     * straggler_row says -1 */
    const hta_table *ps = p.stragglers_t;
    long worst = straggler_row(ps);
    if (worst >= 0) {
        /* one straggler naming: where the findings' straggler (the rank the others wait for at collectives) is
         * another rank, say why both are named */
        const char *fr = NULL;
        for (size_t r = 0; ft && r < ft->nrows; r++)
            if (!strcmp(txt(ft, r, HTA_FINDINGS_CAUSE), "straggler")) fr = txt(ft, r, HTA_FINDINGS_RANKS);
        char hr[24], why[256] = "";
        snprintf(hr, sizeof hr, "%.0f", num(ps, (size_t)worst, HTA_STRAGGLERS_RANK));
        if (fr && strcmp(fr, hr))
            snprintf(why, sizeof why, "; the straggler finding names rank %s: the rank the others wait for longest "
                                      "at the collectives, where this rule ranks by when collectives start", fr);
        else if (!fr)
            snprintf(why, sizeof why, "; no rank makes the others wait long enough for a straggler finding");
        rp_add_finding(&f, (int64_t)num(ps, (size_t)worst, HTA_STRAGGLERS_RANK), "straggler",
                    "the other ranks wait for this one in collectives: look at its data loading, CPU load "
                    "and GPU clocks; see `hta stragglers`",
                    "rank %.0f starts collectives last (normalized start %.4f, the median rank %.4f) in %.0f of "
                    "%.0f steps (`hta stragglers`' rule)%s",
                    num(ps, (size_t)worst, HTA_STRAGGLERS_RANK), num(ps, (size_t)worst, HTA_STRAGGLERS_MEAN_START),
                    col_median(ps, HTA_STRAGGLERS_MEAN_START, &(long){0}, &(long){0}),
                    num(ps, (size_t)worst, HTA_STRAGGLERS_FLAGGED), num(ps, (size_t)worst, HTA_STRAGGLERS_STEPS), why);
    }
    if (!f.ok || sort_findings(&f)) {
        st = hta_oom(err);
        goto done;
    }
    /* findings first, then the figures */
    hta_table *front[4] = {ft, hl, f.t, rk};
    ft = hl = f.t = rk = NULL;
    for (int i = 0; i < 4; i++)
        if (hta_result_add(out, front[i])) {
            for (int j = i + 1; j < 4; j++) hta_table_free(front[j]);
            st = hta_oom(err);
            goto done;
        }
    /* move them to the front: they are complete only now, after the critical paths, while the figure
     * tables went into out as they were made */
    size_t n = out->n;
    memmove(out->tables + 4, out->tables, (n - 4) * sizeof *out->tables);
    for (int i = 0; i < 4; i++) out->tables[i] = front[i];
    /* temporal's "no GPU activity" notes (the parts' notes) explain the zeros of the ranks table; for
     * libhtatrace files, which never have GPU activity, they would only be noise */
    size_t ntracer = 0;
    for (size_t k = 0; k < ns; k++) ntracer += cpu.tracer[k];
    for (size_t i = 0; ntracer < ns && i < all->nnotes; i++) hta_result_note(out, "%s", all->notes[i]);
    if (o->html) {
        if ((st = rp_html_write(o->html, pr, ns, out, p.idle_t, err))) goto done;
        hta_result_note(out, "wrote the HTML report to %s", o->html);
    }
done:
    hta_table_free(f.t);
    hta_table_free(rk);
    hta_table_free(ft);
    hta_table_free(hl);
    free(kv);
    hta_result_free(&eff);
    hta_result_free(&cr);
    rp_cpu_free(&cpu);
    parts_free(&p);
    rp_parts_free(&pp);
    hta_arena_free(&pa);
    return st;
}

hta_status hta_report_reduce(const hta_report_opts *o, const hta_report_src *src, hta_result *all,
                             hta_result *out, hta_error *err) {
    hta_report_opts dflt_;
    if (!o) hta_report_opts_default(&dflt_), o = &dflt_;
    return reduce_run(o, src, all, out, err);
}

hta_status hta_report(hta_ctx *ctx, const hta_report_opts *o, hta_result *out, hta_error *err) {
    hta_result part, all;
    hta_result_init(&part);
    hta_result_init(&all);
    hta_status st = hta_report_part(ctx, o, &part, err);
    /* as the parts of the ranks one by one are put together (their notes each once) */
    if (!st) st = hta_report_fold(&all, &part, err);
    hta_report_src src = {ctx, NULL, NULL, NULL, NULL};
    if (!st) st = hta_report_reduce(o, &src, &all, out, err);
    hta_result_free(&part);
    hta_result_free(&all);
    return st;
}
