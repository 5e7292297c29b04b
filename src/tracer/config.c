/* Configuration and life: init from a struct or the environment (at the first use, or
 * hta_tracer_init), the flushes asked for and the one at exit, thread registration, discard,
 * shutdown: the top of the tracer, above the flush, the buffers and the state it sets up. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int env_flag(const char *name, int dflt)
{
    const char *e = getenv(name);
    if (!e || !*e)
        return dflt;
    return !(strcmp(e, "0") == 0 || strcmp(e, "false") == 0 || strcmp(e, "no") == 0 || strcmp(e, "off") == 0);
}

int hta_tracer_exit_flush(void)
{
    int rc = HTA_TRACER_OK;
    htat_fork_wait();
    pthread_mutex_lock(&htat_g.mu);
    if (htat_g.inited && !htat_g.disabled && htat_g.flush_at_exit && atomic_load(&htat_g.recorded)) {
        if (htat_dirty_locked()) {
            char path[4096];
            rc = htat_flush_locked(path, sizeof path);
            htat_debug("exit flush: %s", hta_tracer_strerror(rc));
            if (rc != HTA_TRACER_OK) { /* nobody else will say it: the trace is lost */
                htat_warn("the trace of rank %d was not written at exit: %s", htat_g.rank,
                          htat_error_text()[0] ? htat_error_text() : hta_tracer_strerror(rc));
                htat_g.clean = 1; /* said once: the C handler after Python's finds nothing new */
            }
        } else {
            htat_debug("exit flush: nothing new since the last flush");
        }
    }
    pthread_mutex_unlock(&htat_g.mu);
    return rc;
}

static void at_exit(void)
{
    hta_tracer_exit_flush();
}

/* Applies cfg over the current settings (lock held). */
static int apply(const hta_tracer_config *cfg)
{
    hta_tracer_config d;
    if (!cfg) {
        hta_tracer_config_init(&d);
        cfg = &d;
    }
    htat_env_identity(cfg);
    htat_g.clean = 0; /* identity or pattern may change what the file says */
    const char *pat = cfg->file_pattern;
    if (!pat || !*pat)
        pat = getenv("HTA_TRACE_FILE");
    if (!pat || !*pat)
        pat = HTA_TRACER_DEFAULT_PATTERN;
    char *p = strdup(pat);
    if (!p)
        return HTA_TRACER_ENOMEM;
    free(htat_g.pattern);
    htat_g.pattern = p;
    htat_g.flush_at_exit = cfg->flush_at_exit >= 0 ? cfg->flush_at_exit != 0 : env_flag("HTA_TRACE_ATEXIT", 1);
    htat_g.gpu_allowed = cfg->gpu >= 0 ? cfg->gpu != 0 : env_flag("HTA_TRACE_GPU", 1);
    if (!htat_g.inited) { /* buffer geometry is fixed once threads exist */
        size_t cb = cfg->chunk_bytes ? cfg->chunk_bytes : (size_t)1 << 20;
        if (cb < 4096)
            cb = 4096;
        htat_g.chunk_words = (cb - sizeof(htat_chunk)) / sizeof(uint64_t);
    }
    htat_g.max_bytes = cfg->max_bytes_per_thread ? cfg->max_bytes_per_thread
                                                 : (size_t)htat_env_int("HTA_TRACE_MAX_MB", 0) << 20;
    return HTA_TRACER_OK;
}

/* First-time setup (lock held). */
static int first_init(const hta_tracer_config *cfg)
{
    htat_g.debug = env_flag("HTA_TRACE_DEBUG", 0);
    htat_g.disabled = !env_flag("HTA_TRACE", 1);
    int rc = apply(cfg);
    if (rc != HTA_TRACER_OK)
        return rc;
    htat_clock_setup();
    htat_g.mono0_ns = htat_mono_ns();
    htat_g.unix0_ns = htat_unix_ns();
    if (!htat_g.atexit_registered) {
        atexit(at_exit);
        htat_fork_register();
        htat_g.atexit_registered = 1;
    }
    htat_g.inited = 1;
    htat_debug("init: rank %d/%d (%s) dp %d pp %d tp %d pattern %s clock %s%s", htat_g.rank, htat_g.world_size,
               htat_g.rank_source, htat_g.dp, htat_g.pp, htat_g.tp, htat_g.pattern, htat_clock_name(),
               htat_g.disabled ? " (disabled)" : "");
    return HTA_TRACER_OK;
}

int htat_global_init(void)
{
    int rc = HTA_TRACER_OK;
    pthread_mutex_lock(&htat_g.mu);
    if (!htat_g.inited)
        rc = first_init(NULL);
    pthread_mutex_unlock(&htat_g.mu);
    return rc;
}

void hta_tracer_config_init(hta_tracer_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->rank = cfg->world_size = cfg->dp = cfg->pp = cfg->tp = -1;
    cfg->flush_at_exit = -1;
    cfg->gpu = -1;
}

int hta_tracer_init(const hta_tracer_config *cfg)
{
    pthread_mutex_lock(&htat_g.mu);
    int rc = htat_g.inited ? apply(cfg) : first_init(cfg);
    pthread_mutex_unlock(&htat_g.mu);
    return rc;
}

htat_thread *htat_thread_slow(void)
{
    if (htat_global_init() != HTA_TRACER_OK || htat_g.disabled)
        return NULL;
    return htat_thread_new();
}

int hta_tracer_discard(void)
{
    pthread_mutex_lock(&htat_g.mu);
    for (htat_thread *t = htat_g.threads; t; t = t->next)
        htat_thread_discard(t);
    htat_g.clean = 0;
    pthread_mutex_unlock(&htat_g.mu);
    return HTA_TRACER_OK;
}

int hta_tracer_shutdown(void)
{
    pthread_mutex_lock(&htat_g.mu);
    atomic_fetch_add(&htat_gen, 1); /* every thread's cached buffer is now stale */
    htat_threads_free_all();
    htat_gpu_shutdown();
    htat_spans_free();
    htat_intern_free();
    free(htat_g.pattern);
    htat_g.pattern = NULL;
    htat_g.inited = 0;
    htat_g.clean = 0;
    atomic_store(&htat_g.recorded, 0);
    htat_tls = NULL;
    pthread_mutex_unlock(&htat_g.mu);
    return HTA_TRACER_OK;
}

const char *hta_tracer_strerror(int status)
{
    switch (status) {
    case HTA_TRACER_OK: return "HTA_TRACER_OK: success";
    case HTA_TRACER_EINVAL: return "HTA_TRACER_EINVAL: invalid argument";
    case HTA_TRACER_ENOMEM: return "HTA_TRACER_ENOMEM: out of memory";
    case HTA_TRACER_EIO: return "HTA_TRACER_EIO: cannot write the trace file";
    case HTA_TRACER_ENOENT: return "HTA_TRACER_ENOENT: no enclosing scope has that key";
    case HTA_TRACER_ESTATE: return "HTA_TRACER_ESTATE: no open scope / wrong state";
    case HTA_TRACER_ENOCUDA: return "HTA_TRACER_ENOCUDA: no usable CUDA runtime";
    case HTA_TRACER_DISABLED: return "HTA_TRACER_DISABLED: tracing is disabled (HTA_TRACE=0)";
    default: return "unknown status";
    }
}

int hta_tracer_flush_path(char *path_out, size_t path_cap)
{
    int rc = htat_global_init();
    if (rc != HTA_TRACER_OK)
        return rc;
    htat_fork_wait();
    pthread_mutex_lock(&htat_g.mu);
    rc = htat_flush_locked(path_out, path_cap);
    pthread_mutex_unlock(&htat_g.mu);
    return rc;
}

int hta_tracer_flush(void)
{
    return hta_tracer_flush_path(NULL, 0);
}

int hta_tracer_output_path(char *path_out, size_t path_cap)
{
    if (!path_out)
        return HTA_TRACER_EINVAL;
    int rc = htat_global_init();
    if (rc != HTA_TRACER_OK)
        return rc;
    pthread_mutex_lock(&htat_g.mu);
    char want[4096];
    rc = htat_format_path(want, sizeof want);
    if (rc == HTA_TRACER_OK) {
        const char *a = htat_out_actual(want);
        if (strlen(a) + 1 > path_cap)
            rc = HTA_TRACER_EINVAL;
        else
            strcpy(path_out, a);
    }
    pthread_mutex_unlock(&htat_g.mu);
    return rc;
}
