/* Internal to the breakdown analyses: one rank's GPU rows with their kernel types. */
#ifndef HTA_BREAKDOWN_ROWS_H
#define HTA_BREAKDOWN_ROWS_H

#include "hta/breakdown.h"
#include "hta/util.h"
#include "hta/vocab.h"

typedef struct bd_rows {
    const hta_view *v; /* HTA's table of the rank (the context's) */
    hta_ctx *ctx;      /* to say when v is no longer needed */
    size_t ri;
    size_t n;         /* selected rows */
    uint32_t *pos;    /* view position of each selected row, in view order */
    int64_t *ts;      /* ns relative to the trace origin */
    int64_t *dur;     /* ns, >= 0 */
    uint8_t *type;    /* hta_kernel_type (vocab.h; HTA's rule with hta_compat) */
} bd_rows;

/* GPU rows of rank t->ranks[ri] chosen by `sel` (HTA_GPU_ROWS_ACTIVITY or
 * _ANY_STREAM), in view order, from the context's view (given back by
 * bd_rows_free). */
/* The rows an analysis with option `sel` counts as GPU work in this context: HTA's any-stream rule
 * (Quirk A2) with --hta-compat. */
static inline hta_gpu_rows bd_gpu_rows(const hta_ctx *ctx, hta_gpu_rows sel) {
    return ctx->hta_compat ? HTA_GPU_ROWS_ANY_STREAM : sel;
}

hta_status bd_rows_build(hta_ctx *ctx, size_t ri, hta_gpu_rows sel,
                         bd_rows *out, hta_error *err);
void bd_rows_free(bd_rows *b);

/* Union (analyses.md §2) of the selected rows whose type is `type` (or all
 * rows when type < 0): *nu intervals in us and ue, malloc'ed (NULL after a
 * failure). */
hta_status bd_union(const bd_rows *b, int type, int64_t **us, int64_t **ue, size_t *nu, hta_error *err);

/* Two unions over one rank's GPU rows (types a and b, < 0 = all rows) and
 * how they relate: what temporal breakdown and overlap are made of. */
typedef struct bd_pair {
    size_t na;          /* intervals in union a */
    int64_t span;       /* first start to last end of union a, ns */
    int64_t len_a, len_b, both; /* union lengths and their overlap, ns */
} bd_pair;
hta_status bd_union_pair(hta_ctx *ctx, size_t ri, hta_gpu_rows sel, int type_a,
                         int type_b, bd_pair *out, hta_error *err);
/* A table of declaration def with a row per rank of ctx, added to out: row fills rank k's row from its pair of
 * unions (bd_union_pair with sel, type_a, type_b; user: the analysis's options), and may add notes to out. */
typedef void (*bd_pair_row_fn)(const hta_ctx *ctx, size_t k, const bd_pair *u, const void *user, hta_table *tb,
                               size_t row, hta_result *out);
hta_status bd_pair_table(hta_ctx *ctx, const hta_table_def *def, hta_gpu_rows sel, int type_a, int type_b,
                         bd_pair_row_fn row, const void *user, hta_result *out, hta_error *err);

/* Adds a note saying why rank r has no GPU rows of the kind `sel` (`what`
 * names them): none at all, or none inside HTA's profiled steps. */
void bd_note_empty(const hta_trace *t, const hta_rank *r, hta_gpu_rows sel, const char *what, hta_result *out);

/* Is this row GPU activity in the sense of `sel`? */
int bd_is_gpu_row(const hta_trace *t, const hta_rank *r, size_t row, hta_gpu_rows sel);


#endif
