/* Internal to src/trace/: the entry points of the streaming trace parser (parse.c).  load.c calls
 * hta_parse_file once per rank file, in its worker threads, and hta_json_int_field to read a
 * file's distributedInfo.rank while probing which files --ranks selects. */
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
