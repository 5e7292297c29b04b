/* The report's options: its defaults, and the options it runs the kernel breakdown with, both in the
 * run over all ranks (report.c) and in each rank's part (part.c). */
#include "hta/report.h"
#include "report/internal.h"

void hta_report_opts_default(hta_report_opts *o) {
    o->html = NULL;
    o->top_kernels = 10;
    o->critical_path = 1;
    o->release = 0;
}

void rp_kernel_opts(hta_kernel_opts *ko) {
    hta_kernel_opts_default(ko);
    ko->top = 1 << 20; /* every kernel with its own statistics: the report ranks them itself */
    ko->duration_ratio = 1.0;
}
