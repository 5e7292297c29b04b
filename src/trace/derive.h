/* Per-rank derivations done at load (partner, call stack, iteration) and
 * HTA's rounding of row times; internal to the trace layer and its views. */
#ifndef HTA_TRACE_DERIVE_H
#define HTA_TRACE_DERIVE_H

#include "hta/trace.h"

/* Computed once per rank after symbols are global: CPU<->GPU partner,
 * call-stack parent/depth, iteration. */
/* hta_streams: hta_load_opts.hta_streams (0: host calls lose their stream first).  threads: as
 * hta_load_opts.threads (the call stacks and the iterations are two threads' work when it allows). */
hta_status hta_derive_rank(const hta_trace *t, hta_rank *r, int hta_streams, int threads, hta_error *err);

/* HTA's rounding of one row (TF§6), with durations clamped at 0. */
void hta_round_row(const hta_rank *r, size_t i, int64_t *ts, int64_t *end);
/* The same with HTA's Q6 kept: an event inside one microsecond ends 1 us before it starts. */
void hta_round_row_q6(const hta_rank *r, size_t i, int64_t *ts, int64_t *end);

#endif
