/* Internal to src/trace/: the entry point of the streaming trace parser (parse.c).  load.c calls
 * hta_parse_file once per rank file, in its worker threads. */
#ifndef HTA_TRACE_PARSE_H
#define HTA_TRACE_PARSE_H

#include "hta/trace.h"
#include "trace/rank_build.h"

/* Parses the trace file at path into b (one pass over the bytes, streaming). */
hta_status hta_parse_file(const char *path, rank_build *b, hta_progress_fn progress, void *pctx,
                          hta_error *err);

/* One chunk of a plain JSON file parsed by several threads (split.c).  A chunk other than the first
 * starts at the '{' of what is taken to be an event of traceEvents, and any chunk stops at the first of
 * the later chunks' starts that its own parse reaches as an event's '{': that proves the later chunk's
 * start right, whatever the strings before it hold.  Starts it goes past without reaching are wrong
 * guesses, and it parses on through their chunks itself. */
typedef struct parse_chunk {
    uint64_t start;        /* 0: the file's start; else an event's '{' */
    int array_form;        /* the file is Chrome's bare array of events (for a start > 0) */
    const uint64_t *stops; /* the later chunks' starts, ascending */
    size_t nstops;
    size_t landed;         /* out: the stop reached, nstops when the parse ran to the end of the file */
    uint64_t dur_sum;      /* out: |dur| summed over the chunk's rows */
} parse_chunk;
/* A later chunk (start > 0) writes UINT32_MAX as the category of a flow without one, where the first
 * writes local symbol 0: split.c makes it the whole file's symbol 0. */
hta_status hta_parse_chunk(const char *path, rank_build *b, parse_chunk *c, hta_progress_fn progress,
                           void *pctx, hta_error *err);

#endif
