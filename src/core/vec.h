/* Growable arrays.  Large blocks come from glibc's mmap path, where realloc
 * moves pages with mremap instead of copying, so doubling a column does not
 * double peak memory. */
#ifndef HTA_UTIL_VEC_H
#define HTA_UTIL_VEC_H

#include <stddef.h>
#include <stdlib.h>

/* Ensures *p has room for `need` elements of size `elem`; *cap is updated.
 * Returns 0, or -1 when out of memory (the old block stays valid). */
static inline int hta_grow(void **p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return 0;
    size_t n = *cap ? *cap : 16;
    while (n < need) n += n / 2 + 16;
    if (n > (size_t)-1 / elem) return -1;
    void *q = realloc(*p, n * elem);
    if (!q) return -1;
    *p = q;
    *cap = n;
    return 0;
}

#define HTA_GROW(arr, cap, need) hta_grow((void **)&(arr), &(cap), (need), sizeof *(arr))

#endif
