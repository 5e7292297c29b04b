/* Growable arrays.  Large blocks come from glibc's mmap path, where realloc
 * moves pages with mremap instead of copying, so doubling a column does not
 * double peak memory. */
#ifndef HTA_UTIL_VEC_H
#define HTA_UTIL_VEC_H

#include <stddef.h>
#include <stdlib.h>

#include "hta/error.h"

/* Ensures *p has room for `need` elements of size `elem`; *cap is updated.
 * Returns HTA_OK, or HTA_ENOMEM when out of memory (the old block stays
 * valid); it sets no message: the caller reports with hta_oom(err). */
static inline hta_status hta_grow(void **p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return HTA_OK;
    size_t n = *cap ? *cap : 16;
    while (n < need) n += n / 2 + 16;
    if (n > (size_t)-1 / elem) return HTA_ENOMEM;
    void *q = realloc(*p, n * elem);
    if (!q) return HTA_ENOMEM;
    *p = q;
    *cap = n;
    return HTA_OK;
}

#define HTA_GROW(arr, cap, need) hta_grow((void **)&(arr), &(cap), (need), sizeof *(arr))

#endif
