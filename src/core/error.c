/* Error reporting (hta/error.h): filling hta_error, status names. */
#include "hta/error.h"

#include <stdio.h>
#include <string.h>

/* err may be NULL (a caller that only wants the status); the status is returned either way so that a
 * failure reads `return hta_fail(...)`. */
hta_status hta_vfail(hta_error *err, hta_status code, const char *fmt, va_list ap) {
    if (err) {
        err->code = code;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    }
    return code;
}

hta_status hta_fail(hta_error *err, hta_status code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    hta_vfail(err, code, fmt, ap);
    va_end(ap);
    return code;
}

hta_status hta_oom(hta_error *err) { return hta_fail(err, HTA_ENOMEM, "out of memory"); }

/* Prefixes the message with its context ("augment: ..."), cutting the message, never the prefix, when both
 * do not fit. */
void hta_error_prefix(hta_error *err, const char *prefix) {
    if (!err) return;
    char tmp[sizeof err->msg];
    size_t pl = strlen(prefix);
    if (pl + 2 >= sizeof tmp) return;
    memcpy(tmp, prefix, pl);
    memcpy(tmp + pl, ": ", 2);
    size_t ml = strnlen(err->msg, sizeof err->msg - 1);
    if (ml > sizeof tmp - pl - 3) ml = sizeof tmp - pl - 3;
    memcpy(tmp + pl + 2, err->msg, ml);
    tmp[pl + 2 + ml] = 0;
    memcpy(err->msg, tmp, sizeof tmp);
}

const char *hta_status_name(hta_status code) {
    switch (code) {
    case HTA_OK: return "ok";
    case HTA_EIO: return "I/O error";
    case HTA_EFORMAT: return "bad trace";
    case HTA_ENOMEM: return "out of memory";
    case HTA_EINVAL: return "invalid argument";
    case HTA_ENODATA: return "no data";
    case HTA_ENOTTRACE: return "not a trace";
    case HTA_ESTOPPED: return "stopped by caller";
    }
    return "unknown error";
}
