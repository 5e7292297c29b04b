/* Builds one rank's columnar table while its file is parsed.  Strings go to a
 * rank-local symbol table; load.c merges the ranks' tables afterwards. */
#ifndef HTA_TRACE_RANK_BUILD_H
#define HTA_TRACE_RANK_BUILD_H

#include "hta/trace.h"

typedef struct meta_name { /* a ph "M" process_name / thread_name event */
    int64_t pid, tid;
    int is_thread;
    uint32_t value; /* local symbol */
} meta_name;

/* htaMerge of a merged trace (hta merge, docs/merge.md): what is needed to give the file back as its ranks
 * (merged.c).  Filled by the parser when the top-level key is there. */
typedef struct merge_part {
    int64_t rank, pid_base;
    int64_t events; /* elements of traceEvents written for the rank, -1 when htaMerge does not say */
    char *dinfo;    /* the rank's distributedInfo (raw JSON), NULL when null */
    char **pids;    /* the rank's original pids (raw JSON) in pid_base + n order; NULL when not listed */
    size_t npids;
} merge_part;

typedef struct merge_info {
    int present;                   /* the file has htaMerge */
    int64_t pid_stride, id_stride; /* -1 when absent */
    merge_part *parts;             /* in file order */
    size_t n;
} merge_info;

typedef struct rank_build {
    hta_rank *r;       /* columns being filled; r->n rows so far */
    hta_symtab *sym;   /* local symbols */
    size_t cap;        /* row capacity of every column */
    size_t args_cap, flows_cap, threads_cap, streams_cap, meta_cap;
    uint32_t *cats;    /* local category index -> local symbol */
    size_t ncats, cats_cap;
    meta_name *names;
    size_t nnames, names_cap;
    uint32_t thread_cache_idx;
    int64_t thread_cache_pid, thread_cache_tid, thread_cache_psym, thread_cache_tsym;
    uint32_t *thread_slot; size_t thread_nslot; /* hash: thread index + 1 */
    int64_t known_local[HTA_ARG_KNOWN_COUNT]; /* local symbol per known key, -1 */
    int64_t profiler_range_cat; /* local cat index of cuda_profiler_range, -1 */
    int64_t dist_rank;          /* distributedInfo.rank, -1 if absent */
    /* A file cut short after its events began (a crashed job's): what was complete is loaded, and the
     * loader warns with these.  cut: 1 when so (2: a gzip file); cut_json: the JSON byte where the complete part ends;
     * cut_file: the file's byte where the data ends (the compressed offset of a gzip file). */
    int cut;
    uint64_t cut_json, cut_file;
    merge_info merge;
    unsigned top_keys; /* TOP_* : the top-level keys the parse met that set the rank's fields */
} rank_build;

enum { TOP_DIST = 1, TOP_BASE = 2, TOP_MERGE = 4 }; /* distributedInfo, baseTimeNanoseconds, htaMerge */

/* Failures are statuses without a message: HTA_ENOMEM, or HTA_EFORMAT when
 * the file passes one of the table's limits (2^16 categories or streams,
 * 2^32 threads).  The parser words the message, with the byte offset of the
 * event, when it turns the status into its hta_error. */
hta_status rank_build_init(rank_build *b, hta_rank *r);
void rank_build_free_scratch(rank_build *b); /* keeps r, frees builder state */

/* Back to what rank_build_init and the loader left (every row, symbol and table gone), for a file parsed
 * again from its start (split.c). */
hta_status rank_build_restart(rank_build *b);
/* Room for `rows` rows, `args` args and `flows` flows in all. */
hta_status rank_build_reserve(rank_build *b, size_t rows, size_t args, size_t flows);

/* Appends an empty row; *row is its number.  Inline: once per event. */
hta_status rank_build_grow_rows(rank_build *b);
static inline hta_status rank_build_row(rank_build *b, size_t *row) {
    if (b->r->n == b->cap) HTA_TRY(rank_build_grow_rows(b));
    *row = b->r->n++;
    return HTA_OK;
}
hta_status rank_build_cat(rank_build *b, const char *s, size_t n, uint16_t *out);
hta_status rank_build_stream(rank_build *b, int64_t v, uint16_t *out);
hta_status rank_build_thread(rank_build *b, int64_t pid, int64_t tid, int64_t pid_sym, int64_t tid_sym,
                             uint32_t *out);
/* The next arg or flow slot; NULL when out of memory. */
hta_arg *rank_build_arg(rank_build *b);
hta_flow *rank_build_flow(rank_build *b);
hta_status rank_build_meta(rank_build *b, const char *key, size_t klen, const char *json, size_t jlen);
hta_status rank_build_name(rank_build *b, int64_t pid, int64_t tid, int is_thread, uint32_t value);
/* Finishes columns (args_off sentinel, derived columns allocated). */
hta_status rank_build_finish(rank_build *b);
/* Frees a rank and everything it holds (columns through hta_big_free, the small tables with free). */
void rank_free(hta_rank *r);
/* Frees what merge_info holds. */
void merge_info_free(merge_info *m);

#endif
