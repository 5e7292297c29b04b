/* Analyses: pure functions from a loaded trace and options to tables.
 * Each fills `out` (initialised by the caller) and returns HTA_OK or an error. */
#ifndef HTA_ANALYSIS_H
#define HTA_ANALYSIS_H

#include "hta/context.h"
#include "hta/table.h"

#ifdef __cplusplus
extern "C" {
#endif

/* `hta info`: tables `ranks`, `categories`, `streams`, `steps`. */
hta_status hta_info(hta_ctx *ctx, hta_result *out, hta_error *err);

/* `hta events`: the rows themselves, for inspection and scripting. */
typedef struct hta_events_opts {
    const char *cat;      /* only this category (NULL = all) */
    const char *name;     /* only names containing this text (NULL = all) */
    int hta_table;        /* rows of HTA's table (view: filtered, aligned, rounded) instead of the file */
    long limit;           /* at most this many rows per rank; <= 0 = all */
} hta_events_opts;
void hta_events_opts_default(hta_events_opts *o);
hta_status hta_events(hta_ctx *ctx, const hta_events_opts *eo,
                      hta_result *out, hta_error *err);

#ifdef __cplusplus
}
#endif
#endif
