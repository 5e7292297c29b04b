/* Interning (hta_tracer_intern): names kept for the life of the library, so that a scope can be named
 * by a pointer that stays valid after the caller's string is gone.  Open addressing over strdup'd
 * strings, under its own lock (a fork takes it too: fork.c). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

pthread_mutex_t htat_intern_mu = PTHREAD_MUTEX_INITIALIZER;
static char **itab;
static size_t icap, icount;

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603u;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 1099511628211u;
    return h;
}

static int intern_grow(void)
{
    size_t ncap = icap ? icap * 2 : 256;
    char **n = calloc(ncap, sizeof *n);
    if (!n)
        return -1;
    for (size_t i = 0; i < icap; i++) {
        if (!itab[i])
            continue;
        size_t j = hash_str(itab[i]) & (ncap - 1);
        while (n[j])
            j = (j + 1) & (ncap - 1);
        n[j] = itab[i];
    }
    free(itab);
    itab = n;
    icap = ncap;
    return 0;
}

const char *hta_tracer_intern(const char *s)
{
    if (!s)
        return NULL;
    const char *r = NULL;
    pthread_mutex_lock(&htat_intern_mu);
    if ((icount + 1) * 2 > icap && intern_grow() != 0)
        goto out;
    size_t j = hash_str(s) & (icap - 1);
    while (itab[j]) {
        if (strcmp(itab[j], s) == 0) {
            r = itab[j];
            goto out;
        }
        j = (j + 1) & (icap - 1);
    }
    itab[j] = strdup(s);
    if (itab[j]) {
        r = itab[j];
        icount++;
    }
out:
    pthread_mutex_unlock(&htat_intern_mu);
    return r;
}

void htat_intern_free(void)
{
    pthread_mutex_lock(&htat_intern_mu);
    for (size_t i = 0; i < icap; i++)
        free(itab[i]);
    free(itab);
    itab = NULL;
    icap = icount = 0;
    pthread_mutex_unlock(&htat_intern_mu);
}
