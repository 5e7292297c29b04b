#include "hta/counters.h"
hta_status hta_counters_augment(const hta_trace *t, const hta_counters_opts *o, const char *outdir,
                                hta_result *out, hta_error *err) {
    return hta_fail(err, HTA_EINVAL, "not yet");
}
