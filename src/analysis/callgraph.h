/* HTA's call graph (TF§14.1) over a rank's view, as the frequent-pattern and
 * CUPTI analyses see it: CPU rows of the threads that have a call stack, and
 * device activity on a stream > 0 hung under the CPU call that launched it. */
#ifndef HTA_ANALYSIS_CALLGRAPH_H
#define HTA_ANALYSIS_CALLGRAPH_H

#include "hta/arena.h"
#include "hta/view.h"

typedef struct hta_cgraph {
    int32_t *vpos;  /* view position of each row, -1 outside the view */
    int32_t *depth; /* HTA's depth, -1 outside the graph */
    int32_t *top;   /* memo of hta_cgraph_top */
} hta_cgraph;

/* Builds g with its arrays from arena a (the caller's per-call scratch: they
 * go with the caller's reset, there is nothing to free). */
hta_status hta_cgraph_build(const hta_view *v, hta_arena *a, hta_cgraph *g, hta_error *err);
/* The CPU row a device row hangs under, or -1 (not a kernel node). */
int32_t hta_cgraph_kernel_parent(const hta_rank *r, const hta_cgraph *g, uint32_t row);
/* The ancestor-or-self of CPU row `row` at depth d, or -1.  One d per graph. */
int32_t hta_cgraph_top(const hta_rank *r, hta_cgraph *g, uint32_t row, int32_t d);

#endif
