/* The loader's listing of a path's rank files and its probe of a file's head, shared by the loader
 * (load.c) and the rank plan (plan.c), which decide the same way which files are ranks. */
#ifndef HTA_TRACE_LISTING_H
#define HTA_TRACE_LISTING_H

#include "hta/trace.h"

/* The files of path: path itself when it is a file, else the folder's rank files, sorted by name;
 * every file skipped is named through o->warn.  *files (each string too) is the caller's to free, also
 * after an error. */
hta_status hta_list_rank_files(const char *path, const hta_load_opts *o, char ***files, size_t *nf,
                               hta_error *err);
/* The rank the head of the file names (distributedInfo before traceEvents), or -1; *merged (may be
 * NULL) = 1 when the head holds htaMerge. */
int64_t hta_probe_rank(const char *path, int *merged);

#endif
