/* The calling thread's last write error: what hta_tracer_last_error() says.
 * Per thread, so that a flush failing on one thread does not hide behind
 * another thread's success.  The text lives on the heap (a thread key frees
 * it): the library's TLS must stay small, it is in the static TLS block. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

#define ERR_CAP 4600

static __thread int err_no;
static pthread_key_t err_key;
static pthread_once_t err_once = PTHREAD_ONCE_INIT;

static void make_key(void)
{
    pthread_key_create(&err_key, free);
}

static char *text(int create)
{
    pthread_once(&err_once, make_key);
    char *t = pthread_getspecific(err_key);
    if (!t && create) {
        t = calloc(1, ERR_CAP);
        if (t && pthread_setspecific(err_key, t) != 0) {
            free(t);
            t = NULL;
        }
    }
    return t;
}

void htat_set_error(int err, const char *fmt, ...)
{
    err_no = err;
    char *t = text(1);
    if (!t)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t, ERR_CAP, fmt, ap);
    va_end(ap);
    htat_debug("%s", t);
}

void htat_clear_error(void)
{
    err_no = 0;
    char *t = text(0);
    if (t)
        t[0] = 0;
}

const char *htat_error_text(void)
{
    const char *t = text(0);
    return t ? t : "";
}

const char *hta_tracer_last_error(void)
{
    return htat_error_text();
}

int hta_tracer_last_errno(void)
{
    return err_no;
}
