/* The Kineto config text of a capture (dynolog-ipc.md §4), where libkineto writes the trace it asks
 * for, and the rules a trace path must follow (libkineto's own on-demand rule: inside one folder, no
 * ".."), shared by htad, which confines every path it is given, and `hta capture`. */
#include <inttypes.h>
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
