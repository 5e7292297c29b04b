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
