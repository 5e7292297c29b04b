/* Raw trace JSON, one reader and one writer (src/rawjson/): an event object
 * taken apart into its members as the loader reads them, and the writer of
 * every derived trace (counter tracks, pattern and critical-path overlays,
 * what-if re-timed traces, merged timelines), which streams the original file
 * through hta_raw_scan and copies every event unless told otherwise. */
#ifndef HTA_RAWJSON_H
#define HTA_RAWJSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hta/error.h"
#include "hta/rawtrace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Makes sure dir is a folder, creating it and its missing parents (as
 * mkdir -p). */
hta_status hta_output_dir(const char *dir, hta_error *err);

/* Output of a derived trace: gzip when gz is set, through the one writer of
 * output files (hta/outfile.h): a regular file or a missing path is written
 * to a temporary file renamed into place on hta_trace_out_close(…, commit =
 * 1) and removed otherwise; a FIFO or a device is written through. */
typedef struct hta_trace_out hta_trace_out;
hta_status hta_trace_out_open(const char *path, int gz, hta_trace_out **out, hta_error *err);
hta_status hta_trace_out_write(hta_trace_out *o, const void *data, size_t len, hta_error *err);
hta_status hta_trace_out_printf(hta_trace_out *o, hta_error *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
hta_status hta_trace_out_close(hta_trace_out *o, int commit, hta_error *err);
/* The output's path as given, and whether path is the file o writes or
 * replaces (same device and inode). */
const char *hta_trace_out_path(const hta_trace_out *o);
int hta_trace_out_is(const hta_trace_out *o, const char *path);

/* ---- One raw event object taken apart (rawobj.c) ----
 * The one reader of an event's JSON text for everything that rewrites or
 * re-reads raw events: the members in file order, each key decoded (so
 * "n\u0061me" is name) and each value as its raw JSON span.  Works on
 * [json, json + len) alone: no terminator or padding is needed. */
typedef struct hta_raw_member {
    const char *key;  /* decoded key (not NUL-terminated) */
    size_t klen;
    const char *rkey; /* the key's text as written, between the quotes */
    size_t rklen;
    const char *val;  /* the value's raw JSON text */
    size_t vlen;
} hta_raw_member;

typedef struct hta_raw_obj {
    hta_raw_member *m; /* members in file order */
    size_t n;
    const char *close; /* the object's closing brace */
    /* storage, kept between calls */
    size_t cap;
    char *keys; /* decoded keys that had escapes */
    size_t keys_cap;
} hta_raw_obj;

/* Splits the object at json (leading whitespace allowed) into o, reusing
 * o's storage (start from a zeroed hta_raw_obj; free with hta_raw_obj_free).
 * Returns 0, -1 when it is not a well-formed object, -2 when out of memory. */
int hta_raw_obj_parse(hta_raw_obj *o, const char *json, size_t len);
void hta_raw_obj_free(hta_raw_obj *o);

/* The member named key, or NULL.  A key written twice gives the last one,
 * the value the loader keeps (src/trace/parse.c overwrites on each). */
const hta_raw_member *hta_raw_obj_get(const hta_raw_obj *o, const char *key);
/* Whether m's decoded key is key. */
int hta_raw_key_is(const hta_raw_member *m, const char *key);

/* A JSON integer value (no fraction or exponent) into *v: 0, or -1. */
int hta_raw_int(const hta_raw_member *m, int64_t *v);
/* A time in microseconds (decimal JSON number) to exact ns, rounding half
 * to even below the ns as the loader does (no double): 0, or -1 when the
 * value is not a number or is out of range. */
int hta_raw_time_ns(const hta_raw_member *m, int64_t *ns);
/* Whether m's value is the JSON string s (escapes decoded). */
int hta_raw_str_is(const hta_raw_member *m, const char *s);

/* ns as microseconds text, exact: the shortest ("12", "12.5") or, with
 * fixed3, always three decimals ("12.500").  buf: 32 bytes; returns the
 * length. */
size_t hta_raw_format_us(int64_t ns, int fixed3, char *buf);

/* ---- Derived traces (rawwrite.c) ----
 * The one writer of trace files made from other trace files: counter tracks
 * (counters --augment), overlays (patterns, critical path), the what-if
 * trace and the merged trace.  It streams the input with hta_raw_scan and
 * writes every top-level member and event as it was, in file order, except
 * what the caller's hooks change; the output goes through hta_trace_out (temp
 * file + rename, or a FIFO written through; gzip on request).  An input that
 * is the output file (same device and inode) is refused (HTA_EINVAL) before
 * it is read, and nothing is put in place.  Layout, as Kineto writes it:
 *   {\n"key": value,\n"traceEvents": [\nevent,\nevent\n],\n"key": value\n}\n
 * An input in Chrome's array form ([event, ...], torch's legacy export) is written in this object form:
 * the same events at the same positions, in the one form every reader takes.  A merged trace (htaMerge)
 * is refused (HTA_EINVAL): its ranks share the file (hta_rank.merged). */
typedef struct hta_rawout hta_rawout;

/* What a derived trace changes; every member may be NULL. */
typedef struct hta_rawout_hooks {
    /* Each input event, in file order: write it (hta_rawout_event, _edited,
     * _add_arg, or hta_rawout_sep then any text), or write nothing to drop
     * it.  NULL: every event copied.  Non-zero stops the writer (after a
     * failed write, or with hta_rawout_fail). */
    int (*event)(void *ctx, hta_rawout *w, uint32_t index, const char *json, size_t len);
    /* Events appended at the end of traceEvents. */
    int (*tail)(void *ctx, hta_rawout *w);
    /* Each top-level member but traceEvents (key as written), seen before
     * hta_rawout_derive copies it (hta_rawout_events leaves it out). */
    int (*meta)(void *ctx, hta_rawout *w, const char *key, size_t klen, const char *json, size_t jlen);
    void *ctx;
} hta_rawout_hooks;

/* Writes out: the trace at in with hooks applied; gzip when gz.  (The scan
 * reports no empty traceEvents array, so an empty one is written after the
 * members that followed it.) */
hta_status hta_rawout_derive(const char *in, const char *out, int gz, const hta_rawout_hooks *hooks,
                             hta_error *err);

/* Whether the file at path is gzip (the loader's test: its magic bytes). */
int hta_raw_is_gzip(const char *path);

/* A writer whose caller writes the framing itself (hta merge: several inputs
 * into one traceEvents array).  Errors go to err, which must outlive w;
 * hta_rawout_close renames into place when commit is set and nothing failed. */
hta_status hta_rawout_open(const char *out, int gz, hta_rawout **w, hta_error *err);
/* The events of the trace at in, through hooks (meta: see above). */
hta_status hta_rawout_events(hta_rawout *w, const char *in, const hta_rawout_hooks *hooks);
hta_status hta_rawout_close(hta_rawout *w, int commit);

/* Output; each returns 0, or -1 once anything failed (the error is kept for
 * the writer's caller). */
int hta_rawout_put(hta_rawout *w, const void *s, size_t n);
int hta_rawout_puts(hta_rawout *w, const char *s);
/* Room for n bytes at the end of the output, then hta_rawout_wrote with the
 * count written there: for callers that format an event in place.  NULL
 * when out of memory or after a failure. */
char *hta_rawout_room(hta_rawout *w, size_t n);
void hta_rawout_wrote(hta_rawout *w, size_t n);
/* Starts an event: the separator from the one before. */
int hta_rawout_sep(hta_rawout *w);
/* A whole event (separator included). */
int hta_rawout_event(hta_rawout *w, const char *json, size_t len);

/* An event written with parts of its text changed: each edit replaces
 * [at, end) of the event's text with text (at == end: an insertion).  Edits
 * may come in any order but must not overlap; insertions at one place go in
 * array order.  At most 16. */
typedef struct hta_raw_edit {
    const char *at, *end;
    const char *text;
    size_t len;
} hta_raw_edit;
int hta_rawout_edited(hta_rawout *w, const char *json, size_t len, const hta_raw_edit *e, size_t n);
/* An event with member (`"key": value`) added to its args object (the one
 * the loader reads: the last), or with an args object of that one member
 * when it has none.  o: the event taken apart. */
int hta_rawout_add_arg(hta_rawout *w, const hta_raw_obj *o, const char *json, size_t len, const char *member,
                       size_t mlen);

/* Records a hook's failure (message as hta_fail); returns -1. */
int hta_rawout_fail(hta_rawout *w, hta_status code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The same for out of memory (hta_oom's status and message); returns -1. */
int hta_rawout_oom(hta_rawout *w);
/* Events written so far, and bytes (before compression). */
uint64_t hta_rawout_count(const hta_rawout *w);
uint64_t hta_rawout_bytes(const hta_rawout *w);

#ifdef __cplusplus
}
#endif
#endif
