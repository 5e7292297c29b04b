/* Internal to src/trace/: one rank file parsed by several threads (split.c).  load.c calls it in place of
 * hta_parse_file when there are more threads than files. */
#ifndef HTA_TRACE_SPLIT_H
#define HTA_TRACE_SPLIT_H

#include "hta/trace.h"
#include "trace/rank_build.h"

/* Parses the file at path into b with up to `threads` threads: the same rows, symbols and errors as
 * hta_parse_file.  A gzip file, a small one (under 16 MiB a thread; the environment's HTA_SPLIT_MIN
 * sets the bytes, for tests) or threads < 2 is parsed by one thread. */
hta_status hta_parse_split(const char *path, rank_build *b, size_t threads, hta_progress_fn progress,
                           void *pctx, hta_error *err);

#endif
