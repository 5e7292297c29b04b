/* What every file of htad shares, in a leaf that calls no other file of htad back: the options, the log
 * and the clocks, the lock `mu` and the counters /metrics reads (their files count under it), the
 * shutdown's deadline and the number of open connections (conn.c sets them; s3.c and metrics.c read
 * them).  main.c fills g_opt before any thread starts. */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "daemon/htad.h"

pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
uint64_t g_captures_total, g_traces_stored_total, g_traces_lost_total, g_requests_total, g_requests_refused_total,
    g_procs_refused_total, g_polls_dropped_total;
uint64_t g_retention_passes_total, g_captures_removed_total;

static _Atomic int64_t g_stop_by;
static atomic_size_t g_conns;

int64_t htad_stop_by_ms(void) { return atomic_load(&g_stop_by); }
void htad_set_stop_by(int64_t t) { atomic_store(&g_stop_by, t); }
size_t htad_conn_count(void) { return atomic_load(&g_conns); }
void htad_set_conn_count(size_t n) { atomic_store(&g_conns, n); }

htad_opts g_opt;

int64_t htad_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t htad_mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void htad_log(const char *fmt, ...) {
    char msg[1400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* names, paths and errors come from clients and files: a newline or a terminal escape in them
     * must not forge a log line or reach a terminal */
    char safe[sizeof msg * 2];
    hta_escape_text(msg, sizeof msg, safe, sizeof safe);
    time_t now = time(NULL);
    struct tm tm;
    char ts[32];
    localtime_r(&now, &tm);
    strftime(ts, sizeof ts, "%Y-%m-%d %H:%M:%S", &tm);
    fprintf(stderr, "%s htad: %s\n", ts, safe);
}
