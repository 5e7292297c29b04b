/* The report's own result tables (their declarations are in hta/report.h and internal.h) and the
 * findings list that every diagnosis appends to (report.c, diagnose.c, efficiency.c, part.c,
 * report_cpu.c, report_metrics.c): a leaf, so that the files that add findings never call back into
 * the report's run, which calls them. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "hta/report.h"
#include "report/internal.h"

HTA_TABLE_DEFINE(HTA_FINDINGS);
HTA_TABLE_DEFINE(HTA_OBS);
HTA_TABLE_DEFINE_LIKE(RP_PART_FINDINGS, HTA_OBS); /* the parts' critical-path findings (part.c) */
HTA_TABLE_DEFINE(HTA_REPORT_HEADLINE);
HTA_TABLE_DEFINE(HTA_REPORT_RANKS);
HTA_TABLE_DEFINE(HTA_REPORT_KERNEL_TYPES);
HTA_TABLE_DEFINE(HTA_TOP_KERNELS);
HTA_TABLE_DEFINE(HTA_REPORT_CPATH);

void rp_add_finding(findings *f, int64_t rank, const char *area, const char *detail, const char *fmt, ...) {
    if (f->quiet) return;
    /* as long as the text is: a finding is never cut */
    va_list ap;
    va_start(ap, fmt);
    char *buf = NULL;
    int n = vasprintf(&buf, fmt, ap);
    va_end(ap);
    if (n < 0) {
        f->ok = 0;
        return;
    }
    long row = hta_table_add_row(f->t);
    int bad = row < 0;
    bad = bad || hta_table_set_str(f->t, row, HTA_OBS_FINDING, buf);
    free(buf);
    if (bad || hta_table_set_str(f->t, row, HTA_OBS_AREA, area) ||
        hta_table_set_str(f->t, row, HTA_OBS_TODO, detail)) {
        f->ok = 0;
        return;
    }
    if (rank >= 0) hta_table_set_int(f->t, row, HTA_OBS_RANK, rank);
    else hta_table_set_null(f->t, row, HTA_OBS_RANK);
}

hta_table *rp_table_head(const hta_table *t, size_t n) {
    hta_table *h = hta_table_from_def(t->def);
    for (size_t r = 0; h && r < t->nrows && r < n; r++) {
        long row = hta_table_add_row(h);
        if (row < 0) goto oom;
        for (size_t c = 0; c < t->ncols; c++) {
            const hta_column *col = &t->cols[c];
            if (col->null && col->null[r]) continue;
            if (col->type == HTA_COL_STR) {
                if (col->v.s[r] && hta_table_set_str(h, row, (int)c, col->v.s[r])) goto oom;
            } else if (col->type == HTA_COL_INT) hta_table_set_int(h, row, (int)c, col->v.i[r]);
            else hta_table_set_float(h, row, (int)c, col->v.f[r]);
        }
    }
    return h;
oom:
    hta_table_free(h);
    return NULL;
}
