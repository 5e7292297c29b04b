/* Analyses: pure functions from a loaded trace and options to tables.
 * Each fills `out` (initialised by the caller) and returns HTA_OK or an error. */
#ifndef HTA_ANALYSIS_H
#define HTA_ANALYSIS_H

#include "hta/table.h"
#include "hta/trace.h"
#include "hta/view.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Options every analysis shares: which ranks, how HTA's table is formed. */
typedef struct hta_common_opts {
    const int32_t *ranks; /* NULL = all loaded ranks */
    size_t nranks;
    hta_view_opts view;
} hta_common_opts;

/* Ranks selected by o, as indexes into t->ranks.  Returns the count; *idx is
 * malloc'ed (free it). */
size_t hta_select_ranks(const hta_trace *t, const hta_common_opts *o, size_t **idx);

/* `hta info`: tables `ranks`, `categories`, `streams`, `steps`. */
hta_status hta_info(const hta_trace *t, const hta_common_opts *o, hta_result *out, hta_error *err);

/* `hta events`: the rows themselves, for inspection and scripting. */
typedef struct hta_events_opts {
    const char *cat;      /* only this category (NULL = all) */
    const char *name;     /* only names containing this text (NULL = all) */
    int hta_table;        /* rows of HTA's table (view: filtered, aligned, rounded) instead of the file */
    long limit;           /* at most this many rows per rank; <= 0 = all */
} hta_events_opts;
hta_status hta_events(const hta_trace *t, const hta_common_opts *o, const hta_events_opts *eo,
                      hta_result *out, hta_error *err);

#ifdef __cplusplus
}
#endif
#endif
