/* The library's state and its two ways of speaking (debug, warn): the lowest file of the tracer, which
 * every other file reads and none of which it calls.  The global settings and thread list (htat_g, under
 * its lock), the generation that makes every thread's cached buffer stale at shutdown or fork, and the
 * calling thread's buffer. */
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "internal.h"

htat_global htat_g = {.mu = PTHREAD_MUTEX_INITIALIZER};
__thread htat_thread *htat_tls __attribute__((tls_model("initial-exec")));
__thread unsigned htat_tls_gen __attribute__((tls_model("initial-exec")));
_Atomic unsigned htat_gen = 1;

void htat_debug(const char *fmt, ...)
{
    if (!htat_g.debug)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("htatrace: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* One line on stderr, in one write() so that ranks sharing a terminal do not
 * interleave mid-line.  For what nobody else could report: the library's
 * callers get return codes, but no one calls the exit handler. */
void htat_warn(const char *fmt, ...)
{
    char buf[4600];
    int n = snprintf(buf, sizeof buf, "htatrace[%d]: ", (int)getpid());
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m < sizeof buf - (size_t)n - 1 ? (size_t)m : sizeof buf - (size_t)n - 2);
    buf[len++] = '\n';
    ssize_t w = write(2, buf, len);
    (void)w;
}
