/* The run context: what one run of hta works on (the loaded ranks, which of
 * them are selected, how HTA's table of each is formed).  Every analysis, the
 * critical path and merge take it; nothing below it knows about it. */
#ifndef HTA_CONTEXT_H
#define HTA_CONTEXT_H

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

#ifdef __cplusplus
}
#endif
#endif
