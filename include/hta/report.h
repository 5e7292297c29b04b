/* `hta report`: every analysis that applies, distilled into what a person
 * can act on. */
#ifndef HTA_REPORT_H
#define HTA_REPORT_H

#include "hta/analysis.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hta_report_opts {
    int top_kernels;   /* rows of `top_kernels` (default 10) */
    int critical_path; /* also the critical path of each rank (what bounds it) */
} hta_report_opts;
void hta_report_opts_default(hta_report_opts *o); /* top 10 kernels, critical paths on */

/* Tables: `findings` (rank, area, finding, what_to_do), `ranks` (one row of
 * key figures per rank), `kernel_types`, `top_kernels`, and with
 * critical_path `critical_path` (rank, bound_by, duration, percentage). */
hta_status hta_report(hta_ctx *ctx, const hta_report_opts *o, hta_result *out, hta_error *err);

#ifdef __cplusplus
}
#endif
#endif
