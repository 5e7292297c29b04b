/* The Kineto config text of a capture (dynolog-ipc.md §4), where libkineto writes the trace it asks
 * for, and the rules a trace path must follow (libkineto's own on-demand rule: inside one folder, no
 * ".."), shared by htad, which confines every path it is given, and `hta capture`. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "hta/capture.h"

hta_status hta_capture_config(const hta_capture_opts *o, hta_sbuf *out, hta_error *err) {
    if (!o->log_file || !*o->log_file) return hta_fail(err, HTA_EINVAL, "capture config without a trace file");
    /* kineto splits each line on '=' and a value may not hold one; a newline would start a new key */
    if (strpbrk(o->log_file, "=\n\r#"))
        return hta_fail(err, HTA_EINVAL, "%s: a trace path may not contain '=', '#' or a newline", o->log_file);
    if (o->iterations <= 0 && o->duration_ms <= 0)
        return hta_fail(err, HTA_EINVAL, "capture config: a duration or a number of iterations is needed");
    hta_sb_printf(out, "ACTIVITIES_LOG_FILE=%s\n", o->log_file);
    if (o->iterations > 0) {
        /* dyno gputrace's iteration form: the next iteration that is a multiple of 1 */
        hta_sb_printf(out, "PROFILE_START_ITERATION=0\nPROFILE_START_ITERATION_ROUNDUP=1\n"
                           "ACTIVITIES_ITERATIONS=%" PRId64 "\n", o->iterations);
    } else {
        if (o->start_time_ms > 0) hta_sb_printf(out, "PROFILE_START_TIME=%" PRId64 "\n", o->start_time_ms);
        hta_sb_printf(out, "ACTIVITIES_DURATION_MSECS=%" PRId64 "\n", o->duration_ms);
    }
    if (o->warmup_s >= 0) hta_sb_printf(out, "ACTIVITIES_WARMUP_PERIOD_SECS=%" PRId64 "\n", o->warmup_s);
    if (o->trace_id && *o->trace_id && !strpbrk(o->trace_id, "=\n\r#"))
        hta_sb_printf(out, "REQUEST_TRACE_ID=%s\n", o->trace_id);
    return out->oom ? hta_oom(err) : HTA_OK;
}

int hta_config_log_file(const char *cfg, size_t len, char *buf, size_t cap) {
    static const char key[] = "ACTIVITIES_LOG_FILE";
    int found = 0;
    const char *p = cfg, *end = cfg + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        const char *hash = memchr(p, '#', (size_t)(le - p));
        const char *ve = hash ? hash : le; /* kineto drops a comment */
        const char *a = p;
        while (a < ve && (*a == ' ' || *a == '\t')) a++;
        if ((size_t)(ve - a) > sizeof key - 1 && !memcmp(a, key, sizeof key - 1)) {
            const char *q = a + sizeof key - 1;
            while (q < ve && (*q == ' ' || *q == '\t')) q++;
            if (q < ve && *q == '=') {
                q++;
                while (q < ve && (*q == ' ' || *q == '\t')) q++;
                const char *r = ve;
                while (r > q && (r[-1] == ' ' || r[-1] == '\t' || r[-1] == '\r')) r--;
                if ((size_t)(r - q) < cap) {
                    memcpy(buf, q, (size_t)(r - q));
                    buf[r - q] = 0;
                    found = 1;
                }
            }
        }
        p = le + 1;
    }
    return found;
}

int hta_kineto_trace_path(const char *f, int32_t pid, char *buf, size_t cap) {
    const char *at = strstr(f, ".pt.trace.json");
    if (!at) at = strstr(f, ".json");
    int n = at ? snprintf(buf, cap, "%.*s_%d%s", (int)(at - f), f, (int)pid, at) : snprintf(buf, cap, "%s", f);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

hta_status hta_path_confined(const char *path, const char *dir, hta_error *err) {
    size_t dl = strlen(dir);
    while (dl > 1 && dir[dl - 1] == '/') dl--;
    if (path[0] != '/') return hta_fail(err, HTA_EINVAL, "%s: not an absolute path", path);
    if (strstr(path, ".."))
        return hta_fail(err, HTA_EINVAL, "%s: a trace path may not contain '..'", path);
    for (const char *c = path; *c; c++)
        if ((unsigned char)*c < 0x20) return hta_fail(err, HTA_EINVAL, "trace path with a control character");
    if (strncmp(path, dir, dl) || path[dl] != '/' || !path[dl + 1] || strchr(path + dl + 1, '/'))
        return hta_fail(err, HTA_EINVAL, "%s: a trace path must name a file directly in %.*s", path, (int)dl, dir);
    return HTA_OK;
}

int hta_safe_name(const char *s) {
    if (!*s || *s == '.' || strlen(s) > 200) return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || strchr("._-", *s)))
            return 0;
    return 1;
}

/* ---- a dyno config as libkineto will read it (AbstractConfig::parse, Config::handleOption) ---- */

static const char *const INT32_KEYS[] = {
    "ACTIVITIES_DURATION_SECS", "ACTIVITIES_DURATION_MSECS", "ACTIVITIES_ITERATIONS", "VERBOSE_LOG_LEVEL",
    "CUPTI_PM_SAMPLING_DEVICE_ID", "PROFILE_MEMORY_DURATION_MSECS", "ACTIVITIES_MAX_GPU_BUFFER_SIZE_MB",
    "ACTIVITIES_WARMUP_PERIOD_SECS", "ACTIVITIES_WARMUP_ITERATIONS", "ROCTRACER_MAX_EVENTS",
    "PROFILE_START_ITERATION", "PROFILE_START_ITERATION_ROUNDUP", "ON_DEMAND_CONFIG_UPDATE_INTERVAL_SECS", NULL};
static const char *const BOOL_KEYS[] = {
    "ACTIVITIES_ENABLED", "CUPTI_PER_THREAD_BUFFER_ENABLED", "PROFILE_MEMORY",
    "ACTIVITIES_DISPLAY_CUDA_SYNC_WAIT_EVENTS", "CLIENT_INTERFACE_ENABLE_OP_INPUTS_COLLECTION",
    "PYTHON_STACK_TRACE", "PROFILE_REPORT_INPUT_SHAPES", "PROFILE_PROFILE_MEMORY", "PROFILE_WITH_STACK",
    "PROFILE_WITH_FLOPS", "PROFILE_WITH_MODULES", "ENABLE_IPC_FABRIC", NULL};
static const char *const ACTIVITY_TYPES[] = {
    "cpu_op", "user_annotation", "gpu_user_annotation", "gpu_memcpy", "gpu_memset", "kernel",
    "external_correlation", "cuda_runtime", "cuda_driver", "cpu_instant_event", "python_function", "overhead",
    "mtia_runtime", "mtia_ccp_events", "mtia_insight", "cuda_sync", "cuda_event", "mtia_counters", "glow_runtime",
    "cuda_profiler_range", "hpu_op", "xpu_runtime", "xpu_driver", "collective_comm", "privateuse1_runtime",
    "privateuse1_driver", "xpu_scope_profiler", "xpu_sync", "hardware_counters", NULL};

static int in_list(const char *const *l, const char *s, size_t n) {
    for (; *l; l++)
        if (strlen(*l) == n && !memcmp(*l, s, n)) return 1;
    return 0;
}

/* kineto's trim: spaces, tabs and newlines at both ends (not '\r') */
static void trim(const char **a, const char **b) {
    while (*a < *b && strchr(" \t\n", **a)) (*a)++;
    while (*b > *a && strchr(" \t\n", (*b)[-1])) (*b)--;
}

/* toIntRange: strtoll of the whole text, in [0, hi] */
static int int_value(const char *v, size_t n, int64_t hi, int64_t *out) {
    char buf[32], *end;
    if (!n || n >= sizeof buf) return 0;
    memcpy(buf, v, n);
    buf[n] = 0;
    errno = 0;
    long long x = strtoll(buf, &end, 10);
    if (*end || errno || x < 0 || x > hi) return 0;
    *out = x;
    return 1;
}

hta_status hta_config_check(const char *cfg, size_t len, int64_t now_ms, hta_config_info *info, hta_error *err) {
    memset(info, 0, sizeof *info);
    info->duration_ms = 500; /* libkineto's defaults */
    info->warmup_s = 5;
    info->start_iteration = -1;
    int64_t secs = -1, msecs = -1;
    const char *p = cfg, *end = cfg + len;
    for (int line = 1; p < end; line++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end;
        if (memchr(p, '\r', (size_t)(le - p)))
            return hta_fail(err, HTA_EINVAL, "config line %d: a carriage return (CRLF line ends?): libkineto reads "
                                             "it as part of the value and rejects the config", line);
        const char *hash = memchr(p, '#', (size_t)(le - p)), *e = hash ? hash : le, *k = p;
        p = le + 1;
        trim(&k, &e);
        if (k == e) continue;
        const char *eq = memchr(k, '=', (size_t)(e - k));
        if (!eq || memchr(eq + 1, '=', (size_t)(e - eq - 1)))
            return hta_fail(err, HTA_EINVAL, "config line %d: '%.*s' is not KEY=VALUE (libkineto rejects the "
                                             "config)", line, (int)(e - k < 60 ? e - k : 60), k);
        const char *ke = eq, *v = eq + 1, *ve = e;
        trim(&k, &ke);
        trim(&v, &ve);
        size_t kn = (size_t)(ke - k), vn = (size_t)(ve - v);
        int64_t x = 0;
        const char *bad = NULL;
        if (in_list(INT32_KEYS, k, kn)) {
            if (!int_value(v, vn, INT32_MAX, &x)) bad = "an integer in [0, 2147483647]";
            else if (kn == 24 && !memcmp(k, "ACTIVITIES_DURATION_SECS", kn)) secs = x;
            else if (kn == 25 && !memcmp(k, "ACTIVITIES_DURATION_MSECS", kn)) msecs = x;
            else if (kn == 21 && !memcmp(k, "ACTIVITIES_ITERATIONS", kn)) info->iterations = x;
            else if (kn == 29 && !memcmp(k, "ACTIVITIES_WARMUP_PERIOD_SECS", kn)) info->warmup_s = x;
            else if (kn == 23 && !memcmp(k, "PROFILE_START_ITERATION", kn)) info->start_iteration = x;
            else if (kn == 31 && !memcmp(k, "PROFILE_START_ITERATION_ROUNDUP", kn) && x > 0 &&
                     info->start_iteration < 0)
                info->start_iteration = 0;
        } else if (kn == 18 && !memcmp(k, "PROFILE_START_TIME", kn)) {
            if (!int_value(v, vn, INT64_MAX, &x)) bad = "an integer in [0, 9223372036854775807]";
            else if (x && x < now_ms - 10000) bad = "a time (Unix ms) at most 10 s in the past";
            else info->start_time_ms = x;
        } else if (in_list(BOOL_KEYS, k, kn)) {
            static const char *const bools[] = {"n", "y", "no", "yes", "f", "t", "false", "true", "0", "1", NULL};
            char low[8];
            size_t q = 0;
            for (; q < vn && q < sizeof low - 1; q++) low[q] = (char)tolower((unsigned char)v[q]);
            if (vn >= sizeof low || !in_list(bools, low, q)) bad = "a boolean (y/n, yes/no, t/f, true/false, 1/0)";
        } else if (kn == 14 && !memcmp(k, "ACTIVITY_TYPES", kn)) {
            for (const char *a = v; a <= ve && !bad;) {
                const char *c = memchr(a, ',', (size_t)(ve - a)), *ae = c ? c : ve, *b = a;
                char low[40];
                trim(&b, &ae);
                size_t q = 0;
                for (; b + q < ae && q < sizeof low - 1; q++) low[q] = (char)tolower((unsigned char)b[q]);
                if (b < ae && (ae - b >= (ptrdiff_t)sizeof low || !in_list(ACTIVITY_TYPES, low, q)))
                    bad = "a list of libkineto's activity types (cpu_op, kernel, cuda_runtime, ...)";
                a = ae + 1;
            }
        }
        if (bad)
            return hta_fail(err, HTA_EINVAL, "config line %d: %.*s=%.*s: libkineto wants %s", line, (int)kn, k,
                            (int)(vn < 60 ? vn : 60), v, bad);
    }
    /* the last of the two duration keys wins in libkineto; either replaces the default */
    if (msecs >= 0) info->duration_ms = msecs;
    else if (secs >= 0) info->duration_ms = secs * 1000;
    return HTA_OK;
}
