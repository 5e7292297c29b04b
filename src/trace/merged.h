/* Internal to src/trace/: a merged trace (hta merge) loaded back as its ranks (merged.c).  The parser
 * reads the file's htaMerge into the rank builder (merged_read); once the whole file is one rank with
 * global symbols, load.c cuts it into the ranks htaMerge lists (merged_split). */
#ifndef HTA_TRACE_MERGED_H
#define HTA_TRACE_MERGED_H

#include "hta/trace.h"
#include "trace/json_lex.h"
#include "trace/rank_build.h"

/* Reads htaMerge's value at p (an object, already validated by lex_skip_value, so the lexer cannot run
 * past it) into m.  Returns 0, or -1 when out of memory. */
int merged_read(lex *L, const char *p, merge_info *m);

/* Splits w, a whole merged file loaded as one rank (global symbols, derived columns not yet computed),
 * into the ranks of m: *parts gets m->n new ranks in htaMerge's order.  When htaMerge cannot place the
 * events (no ranks, overlapping ranges, a rank given twice) *nparts is 0 and *why says why: the caller
 * keeps w as one rank.  Fails only when out of memory. */
hta_status merged_split(hta_trace *t, const hta_rank *w, const merge_info *m, hta_rank ***parts,
                        size_t *nparts, const char **why, hta_error *err);

#endif
