/* The C API the Python package (python/htac, docs/python.md) calls through ctypes: a small, stable
 * surface over the analyses, exported by build/libhta.so (every other symbol of the shared library is
 * hidden).
 *
 * A session (hta_py_ctx) is one run context opened once: the ranks are loaded once and their views kept,
 * so that every analysis of a notebook reuses them.  An analysis is run by name with its options as text
 * ("key=value" lines; a list is the key repeated), and returns a result whose tables are read column by
 * column: int64 and double arrays as they are (numpy takes them without copying row by row), a text column
 * dictionary-encoded (a code per row into its distinct texts).  Errors come back as an hta_status and an hta_error whose message
 * names the file (and byte offset); nothing here prints, exits or aborts on bad input.
 *
 * A session is used by one thread at a time, and is not used once closed: the package serialises every
 * call on a session and its close (python/htac/_session.py, Session.use).  A NULL session (what the package
 * passes for a closed one) is never dereferenced: a call that can fail fails with "the trace was closed",
 * an accessor reads as empty (no ranks, no rows, NULL).
 *
 * The functions keep their signatures: new analyses and options are new names and keys, not new
 * functions (HTA_PY_ABI says which version of this surface the library has). */
#ifndef HTA_PYAPI_H
#define HTA_PYAPI_H

#include <stddef.h>
#include <stdint.h>

#include "hta/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HTA_PY_ABI 1
#define HTA_PY_EXPORT __attribute__((visibility("default")))

typedef struct hta_py_ctx hta_py_ctx;       /* a loaded trace, its options, its window */
typedef struct hta_py_result hta_py_result; /* the tables and notes of one call */
typedef struct hta_py_graph hta_py_graph;   /* a critical-path graph (built, or loaded from a file) */

HTA_PY_EXPORT int hta_py_abi(void);

/* Loads path (a trace file or a folder of rank files).  opts: ranks=0,2,5-7  hta_compat=1
 * include_last_step=1  threads=N.  Loader warnings are kept (hta_py_nwarnings). */
HTA_PY_EXPORT hta_status hta_py_open(const char *path, const char *opts, hta_py_ctx **out, hta_error *err);
HTA_PY_EXPORT void hta_py_close(hta_py_ctx *c);
HTA_PY_EXPORT size_t hta_py_nwarnings(const hta_py_ctx *c);
HTA_PY_EXPORT const char *hta_py_warning(const hta_py_ctx *c, size_t i);
/* The part of the trace the next calls analyse (hta/view.h's window syntax); NULL or "": all of it.
 * Changing it re-marks the rows and drops the views; the ranks stay loaded. */
HTA_PY_EXPORT hta_status hta_py_set_window(hta_py_ctx *c, const char *window, hta_error *err);

/* Runs analysis `name` (temporal, idle, kernels, overlap, launch, annotations, stragglers, ops, counters,
 * patterns, cupti, info, events, cpu_ops, report, augment, what_if: the keys each takes are in
 * src/pyapi/run.c) on every loaded rank. */
HTA_PY_EXPORT hta_status hta_py_run(hta_py_ctx *c, const char *name, const char *opts, hta_py_result **out,
                                    hta_error *err);
/* Trace diff of two sessions (hta/counters.h): short_names=1 device=gpu|cpu|all control_rank=R test_rank=R
 * control_iteration=N test_iteration=N control_label=T test_label=T. */
HTA_PY_EXPORT hta_status hta_py_diff(hta_py_ctx *control, hta_py_ctx *test, const char *opts,
                                     hta_py_result **out, hta_error *err);

/* ---- results ---- */
enum { HTA_PY_INT = 0, HTA_PY_FLOAT = 1, HTA_PY_STR = 2 };
HTA_PY_EXPORT size_t hta_py_ntables(const hta_py_result *r);
HTA_PY_EXPORT const char *hta_py_table_name(const hta_py_result *r, size_t t);
HTA_PY_EXPORT size_t hta_py_table_nrows(const hta_py_result *r, size_t t);
HTA_PY_EXPORT size_t hta_py_table_ncols(const hta_py_result *r, size_t t);
HTA_PY_EXPORT const char *hta_py_col_name(const hta_py_result *r, size_t t, size_t c);
HTA_PY_EXPORT int hta_py_col_type(const hta_py_result *r, size_t t, size_t c);
/* The cells of an INT / FLOAT column (NULL for another type); FLOAT nulls are NaN. */
HTA_PY_EXPORT const int64_t *hta_py_col_ints(const hta_py_result *r, size_t t, size_t c);
HTA_PY_EXPORT const double *hta_py_col_floats(const hta_py_result *r, size_t t, size_t c);
/* Per row 1 when the cell is null (INT columns); NULL when none is. */
HTA_PY_EXPORT const unsigned char *hta_py_col_nulls(const hta_py_result *r, size_t t, size_t c);
/* A STR column, dictionary-encoded: *codes (one per row, -1 for null) index its *ntexts distinct texts,
 * given as one buffer of NUL-terminated strings (*len bytes).  Both belong to r. */
HTA_PY_EXPORT hta_status hta_py_col_strs(hta_py_result *r, size_t t, size_t c, const int32_t **codes,
                                         const char **texts, size_t *ntexts, size_t *len, hta_error *err);
HTA_PY_EXPORT size_t hta_py_nnotes(const hta_py_result *r);
HTA_PY_EXPORT const char *hta_py_note(const hta_py_result *r, size_t i);
HTA_PY_EXPORT void hta_py_result_free(hta_py_result *r);

/* ---- the critical path (hta/cpath.h, hta/sim.h), as `hta critical-path` answers it ----
 * Built for one rank: opts annotation=NAME instance=N|A:B data_load=TEXT (repeatable)
 * zero_weight_launch=1.  By default the simulation graph's one path through the span the annotation's
 * instances select; with hta_compat (and from a saved file) HTA's graph.  The report: tables summary,
 * breakdown (top=N: the N longest path edges; 0: all, in path order), stats (and steps by default).  A
 * session-less call (NULL) works on a graph loaded from a file; a built one needs its open session. */
HTA_PY_EXPORT hta_status hta_py_cp_build(hta_py_ctx *c, int32_t rank, const char *opts, hta_py_graph **out,
                                         hta_error *err);
HTA_PY_EXPORT hta_status hta_py_cp_load(const char *path, hta_py_graph **out, hta_error *err);
/* Stores HTA's graph of the selection (built now in the default mode) in path. */
HTA_PY_EXPORT hta_status hta_py_cp_save(hta_py_ctx *c, hta_py_graph *g, const char *path, hta_error *err);
HTA_PY_EXPORT int32_t hta_py_cp_rank(const hta_py_graph *g);
HTA_PY_EXPORT hta_status hta_py_cp_report(hta_py_ctx *c, const hta_py_graph *g, const char *opts,
                                          hta_py_result **out, hta_error *err);
/* The rank's trace with the path overlaid, written into outdir (opts all_events=1 all_edges=1); the
 * result's one note is the file written. */
HTA_PY_EXPORT hta_status hta_py_cp_overlay(hta_py_ctx *c, const hta_py_graph *g, const char *outdir,
                                           const char *opts, hta_py_result **out, hta_error *err);
HTA_PY_EXPORT void hta_py_cp_free(hta_py_graph *g);

/* ---- the trace itself: rank k's rows (file order) as columns ----
 * hta_py_rank_col names: ts dur correlation external_id (int64, 'q'), name thread index (uint32, 'I'),
 * cat stream (uint16, 'H'), partner parent iteration (int32, 'i'), depth (int16, 'h'); *code gets the
 * numpy type code.  The arrays belong to the session. */
HTA_PY_EXPORT size_t hta_py_nranks(const hta_py_ctx *c);
HTA_PY_EXPORT int32_t hta_py_rank(const hta_py_ctx *c, size_t k);
HTA_PY_EXPORT const char *hta_py_rank_path(const hta_py_ctx *c, size_t k);
HTA_PY_EXPORT size_t hta_py_rank_nrows(const hta_py_ctx *c, size_t k);
/* What decided the dtypes of HTA's table of the rank's file (TF§4.2): HTA_PY_DUR_NOT_INT (an event without
 * dur, or a dur with a fraction), HTA_PY_PID_TEXT, HTA_PY_TID_TEXT (a pid / tid written as text),
 * HTA_PY_TS_FRACTIONAL (HTA rounds the file's times). */
enum { HTA_PY_DUR_NOT_INT = 1, HTA_PY_PID_TEXT = 2, HTA_PY_TID_TEXT = 4, HTA_PY_TS_FRACTIONAL = 8 };
HTA_PY_EXPORT int hta_py_rank_flags(const hta_py_ctx *c, size_t k);
HTA_PY_EXPORT const void *hta_py_rank_col(const hta_py_ctx *c, size_t k, const char *name, char *code);
/* The rank's threads' pid and tid (a string id: -1, its text in hta_py_rank_thread_text) into arrays of
 * hta_py_rank_nthreads entries. */
HTA_PY_EXPORT size_t hta_py_rank_nthreads(const hta_py_ctx *c, size_t k);
HTA_PY_EXPORT void hta_py_rank_threads(const hta_py_ctx *c, size_t k, int64_t *pid, int64_t *tid);
HTA_PY_EXPORT const char *hta_py_rank_thread_text(const hta_py_ctx *c, size_t k, size_t thread, int tid);
/* Stream values (index -> stream, [0] = -1) and category symbols (index -> symbol id). */
HTA_PY_EXPORT const int64_t *hta_py_rank_streams(const hta_py_ctx *c, size_t k, size_t *n);
HTA_PY_EXPORT const uint32_t *hta_py_cats(const hta_py_ctx *c, size_t *n);
/* Every symbol (names, categories) as one buffer of NUL-terminated strings, id order; *n symbols. */
HTA_PY_EXPORT const char *hta_py_symbols(hta_py_ctx *c, size_t *n, size_t *len);
/* Rank k's view (HTA's table: the filter's or window's rows, times relative to the run's origin, rounded
 * to whole us with hta_compat): its rows of the rank, ts and dur in ns. */
HTA_PY_EXPORT hta_status hta_py_view(hta_py_ctx *c, size_t k, const uint32_t **row, const int64_t **ts,
                                     const int64_t **dur, size_t *n, hta_error *err);

#ifdef __cplusplus
}
#endif
#endif
