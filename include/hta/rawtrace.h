/* Streaming the original trace file again, event by event, to write derived
 * traces (counters, overlays, what-if schedules) that keep every original
 * event.  The file is read with the same decompressor as the loader; memory
 * stays bounded. */
#ifndef HTA_RAWTRACE_H
#define HTA_RAWTRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hta/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hta_raw_callbacks {
    /* Each top-level key other than traceEvents, with its value's raw JSON. */
    int (*meta)(void *ctx, const char *key, size_t klen, const char *json, size_t jlen);
    /* Each element of traceEvents: its position and raw JSON text (an object). */
    int (*event)(void *ctx, uint32_t index, const char *json, size_t len);
    void *ctx;
} hta_raw_callbacks;

/* Calls cb for every top-level value and event of the file at path, in file
 * order.  A callback returning non-zero stops the scan: the result is
 * HTA_ESTOPPED ("stopped by caller"), unless the callback stopped because it
 * failed and filled this same err (e.g. a write to a full disk, through the
 * writer's hta_error): then that failure, code and message, is returned as
 * is.  Either way the caller tells a stop from a bad file by the status. */
hta_status hta_raw_scan(const char *path, const hta_raw_callbacks *cb, hta_error *err);

/* Makes sure dir is a folder, creating it and its missing parents (as
 * mkdir -p). */
hta_status hta_output_dir(const char *dir, hta_error *err);

/* Output of a derived trace: gzip when gz is set, written to path + ".tmp"
 * and renamed on hta_trace_out_close(…, commit = 1), removed otherwise. */
typedef struct hta_trace_out hta_trace_out;
hta_status hta_trace_out_open(const char *path, int gz, hta_trace_out **out, hta_error *err);
hta_status hta_trace_out_write(hta_trace_out *o, const void *data, size_t len, hta_error *err);
hta_status hta_trace_out_printf(hta_trace_out *o, hta_error *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
hta_status hta_trace_out_close(hta_trace_out *o, int commit, hta_error *err);

#ifdef __cplusplus
}
#endif
#endif
