/* Error reporting shared by every libhta module.
 *
 * Library functions never print or exit: they return an hta_status and, when
 * it is not HTA_OK, fill an hta_error with a one-line message that already
 * names the file and, where there is one, the byte offset.  The CLI prints it.
 *
 * The convention: a function that can fail returns hta_status and takes an
 * hta_error * (may be NULL) last; callers tell failures apart by the code,
 * never by the message text, and forward them with HTA_TRY / HTA_TRY_GOTO.
 */
#ifndef HTA_ERROR_H
#define HTA_ERROR_H

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum hta_status {
    HTA_OK = 0,
    HTA_EIO,      /* file cannot be opened or read */
    HTA_EFORMAT,  /* the bytes are not a valid trace (JSON, gzip, UTF-8, types) */
    HTA_ENOMEM,   /* allocation failed */
    HTA_EINVAL,   /* a caller passed an invalid argument or option */
    HTA_ENODATA,  /* the input holds nothing to analyse (e.g. folder without traces) */
    HTA_ENOTTRACE,/* valid JSON, but not a trace: no "traceEvents" array (a folder skips such files) */
    HTA_ESTOPPED, /* a caller's callback asked to stop (hta_raw_scan): not an error of the input */
} hta_status;

typedef struct hta_error {
    hta_status code;
    char msg[1024];
} hta_error;

/* Sets err (when not NULL) and returns code, so callers can write
 * `return hta_fail(err, HTA_EIO, "%s: %s", path, strerror(errno));` */
hta_status hta_fail(hta_error *err, hta_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
hta_status hta_vfail(hta_error *err, hta_status code, const char *fmt, va_list ap);

/* The one out-of-memory failure: sets err to HTA_ENOMEM, "out of memory". */
hta_status hta_oom(hta_error *err);

/* Forwarding: evaluates expr (an hta_status) and returns it from the calling
 * function when it is not HTA_OK; err already holds the message. */
#define HTA_TRY(expr)                                                          \
    do {                                                                       \
        hta_status hta_try_st_ = (expr);                                       \
        if (hta_try_st_ != HTA_OK) return hta_try_st_;                         \
    } while (0)

/* The same, for functions with a cleanup block: stores the status in st and
 * jumps to label. */
#define HTA_TRY_GOTO(st, expr, label)                                          \
    do {                                                                       \
        if (((st) = (expr)) != HTA_OK) goto label;                             \
    } while (0)

/* Prepends "prefix: " to an error message already set. */
void hta_error_prefix(hta_error *err, const char *prefix);

const char *hta_status_name(hta_status code);

#ifdef __cplusplus
}
#endif
#endif
