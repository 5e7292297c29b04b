#ifndef HTA_TRACE_PARSE_H
#define HTA_TRACE_PARSE_H

#include "hta/trace.h"
#include "trace/rank_build.h"

/* Parses the trace file at path into b (one pass over the bytes, streaming). */
hta_status hta_parse_file(const char *path, rank_build *b, hta_progress_fn progress, void *pctx,
                          hta_error *err);

/* The integer value of "key" in a small JSON object's text (distributedInfo),
 * or -1. */
int64_t hta_json_int_field(const char *json, const char *key);

#endif
