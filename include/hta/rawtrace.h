/* Streaming the original trace file again, event by event, with the
 * loader's own decompressor and lexer: for the rare arg without a slot and
 * for the derived-trace writers (hta/rawjson.h).  Memory stays bounded. */
#ifndef HTA_RAWTRACE_H
#define HTA_RAWTRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hta/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Both of Chrome's forms are read: the object {"traceEvents": [...], ...} and the bare array of events
 * [...] (no metadata; its final ']' may be missing, docs/loading.md). */
typedef struct hta_raw_callbacks {
    /* Each top-level key other than traceEvents, with its value's raw JSON. */
    int (*meta)(void *ctx, const char *key, size_t klen, const char *json, size_t jlen);
    /* Each element of traceEvents (or of the array): its position and raw JSON text (an object). */
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

#ifdef __cplusplus
}
#endif
#endif
