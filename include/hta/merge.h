/* `hta merge`: one Chrome trace from the per-rank files, each rank on its own
 * process tracks, with the ranks' clocks lined up (docs/merge.md).
 *
 * Two steps.  hta_merge_plan_build() looks at the loaded trace and decides,
 * per rank, how its timestamps map onto the common timeline:
 *     u      = ts + base                      (base: the rank's unix clock, if known)
 *     merged = u + offset + drift * (u - t0)  - origin
 * hta_merge_write() then streams every rank's file again (hta_raw_scan) and
 * writes every event with its pid, ts (and flow ids) rewritten; it does not
 * need the loaded trace, which can be freed first to bound memory.
 */
#ifndef HTA_MERGE_H
#define HTA_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "hta/context.h"
#include "hta/error.h"
#include "hta/table.h"
#include "hta/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum hta_align_method {
    HTA_ALIGN_NONE,       /* clocks as written (after the unix base) */
    HTA_ALIGN_BARRIER,    /* a marker that starts (or ends) together on every rank */
    HTA_ALIGN_COLLECTIVE, /* collectives end together on their ranks */
} hta_align_method;

typedef enum hta_drift_mode { HTA_DRIFT_AUTO, HTA_DRIFT_ON, HTA_DRIFT_OFF } hta_drift_mode;

typedef struct hta_merge_opts {
    hta_align_method method;
    const char *barrier; /* marker name for HTA_ALIGN_BARRIER; NULL = each ProfilerStep#N */
    int barrier_end;     /* align the marker's end instead of its begin */
    hta_drift_mode drift;/* collective only; barrier never fits a drift */
} hta_merge_opts;

/* Where a rank's unix time comes from. */
typedef enum hta_clock_source {
    HTA_CLOCK_AS_WRITTEN,  /* no base: ts taken as they are */
    HTA_CLOCK_KINETO_BASE, /* baseTimeNanoseconds */
    HTA_CLOCK_TRACER_ANCHOR, /* htaClockAnchor (libhtatrace) */
} hta_clock_source;

typedef struct hta_merge_rank {
    int32_t rank;
    char *path;
    hta_clock_source clock;
    int64_t base_ns;     /* u = ts + base_ns */
    int64_t pid_base;    /* merged pid = pid_base + index of the original pid */
    int fitted;          /* offset/drift come from anchors (else 0: reference or none) */
    int reference;       /* the rank the others are aligned to */
    double offset_ns;    /* at t0 */
    double drift;        /* relative (1e-6 = 1 ppm) */
    double t0_ns;        /* in u; the mean time of the used anchors */
    size_t anchors;      /* anchors used */
    size_t outliers;     /* anchors dropped as outliers */
    double rms_ns, max_ns; /* residuals of the used anchors; NaN without anchors */
    int64_t min_u;       /* earliest row or flow, in u (INT64_MAX if none) */
} hta_merge_rank;

typedef struct hta_merge_plan {
    hta_merge_opts opts;
    hta_merge_rank *r; /* ascending rank */
    size_t n;
    int64_t origin_ns;   /* subtracted from aligned u */
    int unix_known;      /* every rank's u is unix time: origin is a unix time */
    int64_t pid_stride;  /* merged pid = rank * pid_stride + original pid index */
    int64_t id_stride;   /* merged flow id = id * id_stride + rank */
    char **notes;        /* remarks for the user */
    size_t nnotes;
} hta_merge_plan;

hta_status hta_merge_plan_build(hta_ctx *ctx, const hta_merge_opts *o, hta_merge_plan *plan,
                                hta_error *err);

/* Rank by rank (docs/scaling.md): hta_merge_plan_build is hta_merge_summary followed by
 * hta_merge_plan_from_summary.  A rank's summary is what the plan needs of it: its clock, the span of its
 * times, and its anchors (the collective ends, or barrier markers, the alignment fits offsets with), each
 * as the instance's key (numbered by occurrence when the plan is built) and its time, a key's group (a
 * process group names all its ranks: kilobytes in a large job) once per rank; a rank whose
 * clock cannot be used carries the error, raised when the plan is built.  As tables, summaries travel
 * between processes (hta-mpi) as any result does; those of several contexts appended in rank order give
 * the plan of one context holding all those ranks. */
#define HTA_MERGE_SUM_RANKS(T, C, D)                                                                         \
    T("merge_summary_ranks", "summary: per rank, its file, clock and span")                                  \
    HTA_RANK_COL(C, HTA_MSUM)                                                                                \
    C(HTA_MSUM_FILE, "file", STR, "", "trace file")                                                          \
    C(HTA_MSUM_MERGED, "merged", INT, "", "1: the rank comes from a merged trace")                           \
    C(HTA_MSUM_CLOCK, "clock", INT, "", "hta_clock_source")                                                  \
    C(HTA_MSUM_BASE, "base_ns", INT, "ns", "u = ts + base_ns")                                               \
    C(HTA_MSUM_UNIX, "unix", INT, "", "0: its clock is no unix time (a tracer file without an anchor)")     \
    C(HTA_MSUM_TMIN, "t_min_ns", INT, "ns", "earliest time of the file (t_min > t_max: none)")               \
    C(HTA_MSUM_TMAX, "t_max_ns", INT, "ns", "latest time of the file")                                       \
    C(HTA_MSUM_MIN_U, "min_u_ns", INT, "ns", "earliest row on its unix clock (INT64_MAX: none)")             \
    C(HTA_MSUM_ERROR, "error", STR, "", "why its clock cannot be used; null when it can")
HTA_TABLE_DECLARE(HTA_MERGE_SUM_RANKS)

#define HTA_MERGE_SUM_GROUPS(T, C, D)                                                                        \
    T("merge_summary_groups", "summary: per rank, the groups of its anchors' keys, in order of first use")   \
    HTA_RANK_COL(C, HTA_MSUM_GROUP)                                                                          \
    C(HTA_MSUM_GROUP, "group", STR, "",                                                                      \
      "a key up to its last '|': the process group (with its list of ranks), kernel or marker")
HTA_TABLE_DECLARE(HTA_MERGE_SUM_GROUPS)

#define HTA_MERGE_SUM_ANCHORS(T, C, D)                                                                       \
    T("merge_summary_anchors", "summary: per rank, its anchors in order (the k-th of a key is instance k)")  \
    HTA_RANK_COL(C, HTA_MSUM_ANCHOR)                                                                         \
    C(HTA_MSUM_ANCHOR_GROUP, "group", INT, "", "its key's group: the rank's n-th row of merge_summary_groups") \
    C(HTA_MSUM_ANCHOR_KEY, "key", STR, "", "the rest of its key, after the group's '|' (a sequence number, "   \
      "a stream)")                                                                                           \
    C(HTA_MSUM_ANCHOR_U, "u_ns", INT, "ns", "its time on the rank's unix clock")
HTA_TABLE_DECLARE(HTA_MERGE_SUM_ANCHORS)

/* The summary of every rank of ctx (ctx's rank order) for options o, added to out (three tables). */
hta_status hta_merge_summary(hta_ctx *ctx, const hta_merge_opts *o, hta_result *out, hta_error *err);
/* The plan from summaries (every rank's, appended in rank order). */
hta_status hta_merge_plan_from_summary(const hta_result *sum, const hta_merge_opts *o, hta_merge_plan *plan,
                                       hta_error *err);
void hta_merge_plan_free(hta_merge_plan *plan);

/* Merged time of u on rank i, in ns (rounded to the nearest ns). */
int64_t hta_merge_map(const hta_merge_plan *plan, size_t i, int64_t u);

/* What hta_merge_write() did. */
typedef struct hta_merge_stats {
    uint64_t events_in;     /* events read, all ranks */
    uint64_t events_added;  /* process_name / process_sort_index metadata added */
    uint64_t bytes_in;      /* JSON bytes read */
    uint64_t bytes_out;     /* bytes written (before gzip) */
    uint64_t ids_kept;      /* flow/async ids that could not be made unique (kept as written) */
} hta_merge_stats;

/* Writes the merged trace to out_path (gzip when gz), through a temporary
 * file renamed into place. */
hta_status hta_merge_write(const hta_merge_plan *plan, const char *out_path, int gz,
                           hta_merge_stats *st, hta_error *err);

/* ---- the merged trace written by several processes (hta-mpi, docs/scaling.md) ----
 * Each process writes the ranks of its share to part files (hta_merge_write_part: the rank's events
 * exactly as hta_merge_write writes them, and an account of them); process 0 joins the parts in rank
 * order with the accounts of every rank appended in rank order (hta_merge_join), which gives the file
 * hta_merge_write gives, byte for byte.  The parts must be readable by process 0 (a folder all share). */
#define HTA_MERGE_PART(T, C, D)                                                                              \
    T("merge_part", "account of one rank's part of a merged trace")                                          \
    HTA_RANK_COL(C, HTA_MPART)                                                                               \
    C(HTA_MPART_EVENTS, "events", INT, "", "events written, added metadata included")                        \
    C(HTA_MPART_BYTES, "bytes", INT, "", "bytes of the part")                                                \
    C(HTA_MPART_EVENTS_IN, "events_in", INT, "", "events read")                                              \
    C(HTA_MPART_BYTES_IN, "bytes_in", INT, "", "JSON bytes read")                                            \
    C(HTA_MPART_ADDED, "events_added", INT, "", "metadata events added")                                     \
    C(HTA_MPART_IDS_KEPT, "ids_kept", INT, "", "ids kept as written")                                        \
    C(HTA_MPART_DINFO, "distributed_info", STR, "", "its distributedInfo as written; null when none")
HTA_TABLE_DECLARE(HTA_MERGE_PART)
#define HTA_MERGE_PART_PIDS(T, C, D)                                                                         \
    T("merge_part_pids", "the original pids of one rank's part, in merged pid order")                        \
    HTA_RANK_COL(C, HTA_MPART_PIDS)                                                                          \
    C(HTA_MPART_PID, "pid", STR, "", "raw JSON of the pid")
HTA_TABLE_DECLARE(HTA_MERGE_PART_PIDS)

/* Rank i of the plan to part_path (plain JSON text, through a temporary file); its account added to info. */
hta_status hta_merge_write_part(const hta_merge_plan *p, size_t i, const char *part_path, hta_result *info,
                                hta_error *err);
/* The merged trace from the parts (part_paths[i]: rank i's) and their accounts (every rank's, appended in
 * rank order), as hta_merge_write writes it. */
hta_status hta_merge_join(const hta_merge_plan *p, const char *out_path, int gz, const hta_result *info,
                          const char *const *part_paths, hta_merge_stats *st, hta_error *err);

#define HTA_MERGE_ALIGNMENT(T, C, D)                                                                         \
    T("merge_alignment", "per rank: how its clock was mapped onto the merged timeline, and how well")        \
    HTA_RANK_COL(C, HTA_MERGE)                                                                               \
    C(HTA_MERGE_FILE, "file", STR, "", "trace file")                                                         \
    C(HTA_MERGE_CLOCK, "clock", STR, "",                                                                     \
      "where its unix time comes from: baseTimeNanoseconds, htaClockAnchor or as written")                   \
    C(HTA_MERGE_METHOD, "method", STR, "", "reference, the method used, none, or none (no anchors)")         \
    C(HTA_MERGE_PID_BASE, "pid_base", INT, "", "its pids are pid_base + n in the merged trace")              \
    C(HTA_MERGE_ANCHORS, "anchors", INT, "", "anchors used in the fit (markers or collective instances)")    \
    C(HTA_MERGE_OUTLIERS, "outliers", INT, "", "anchors dropped as outliers")                                \
    C(HTA_MERGE_OFFSET, "offset_us", FLOAT, "us", "correction added to its clock at t0, 3 decimals")         \
    C(HTA_MERGE_DRIFT, "drift_ppm", FLOAT, "ppm", "fitted clock drift, 3 decimals; 0 when not fitted")       \
    C(HTA_MERGE_RMS, "rms_us", FLOAT, "us",                                                                  \
      "rms residual of the used anchors after alignment; null without anchors")                              \
    C(HTA_MERGE_MAX, "max_us", FLOAT, "us", "largest residual of the used anchors; null without anchors")
HTA_TABLE_DECLARE(HTA_MERGE_ALIGNMENT)

/* The table `merge_alignment` and the plan's notes. */
hta_status hta_merge_result(const hta_merge_plan *plan, hta_result *out, hta_error *err);

#ifdef __cplusplus
}
#endif
#endif
