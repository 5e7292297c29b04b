/* Internal to src/trace/: the entry point of the streaming trace parser (parse.c).  load.c calls
 * hta_parse_file once per rank file, in its worker threads. */
#ifndef HTA_TRACE_PARSE_H
#define HTA_TRACE_PARSE_H

#include "hta/trace.h"
#include "trace/rank_build.h"

/* Parses the trace file at path into b (one pass over the bytes, streaming). */
hta_status hta_parse_file(const char *path, rank_build *b, hta_progress_fn progress, void *pctx,
                          hta_error *err);

#endif
