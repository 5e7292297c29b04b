/* Big growable blocks straight from mmap (bigbuf.h): the per-rank columns.
 * Growth uses mremap, so a doubling moves page tables, not bytes, and a
 * column's unused tail costs nothing until touched.  Fresh pages are faulted
 * in with one madvise call instead of one fault per 4 KiB page. */
#include "core/bigbuf.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#define HDR 64 /* keeps the payload 64-byte aligned */

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* Callers grow in modest steps and fill what they asked for, so fault the
 * new pages in with one call: page faults one by one cost more than the
 * parsing itself on virtual machines.  Older kernels ignore the advice. */
static void prefault(char *base, size_t from, size_t to) {
    if (to > from) madvise(base + from, to - from, MADV_POPULATE_WRITE);
}

void *hta_big_realloc(void *p, size_t bytes) {
    if (bytes > SIZE_MAX - HDR - 4096) return NULL;
    size_t want = (bytes + HDR + 4095) & ~(size_t)4095;
    if (!p) {
        void *m = mmap(NULL, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) return NULL;
        prefault(m, 0, want);
        *(size_t *)m = want;
        return (char *)m + HDR;
    }
    char *base = (char *)p - HDR;
    size_t have = *(size_t *)base;
    if (want <= have) return p;
    void *m = mremap(base, have, want, MREMAP_MAYMOVE);
    if (m == MAP_FAILED) return NULL;
    prefault(m, have, want);
    *(size_t *)m = want;
    return (char *)m + HDR;
}

void hta_big_shrink(void *p, size_t bytes) {
    if (!p) return;
    char *base = (char *)p - HDR;
    size_t have = *(size_t *)base;
    size_t want = (bytes + HDR + 4095) & ~(size_t)4095;
    if (want >= have) return;
    if (mremap(base, have, want, 0) != MAP_FAILED) *(size_t *)base = want; /* in place: never moves */
}

void hta_big_free(void *p) {
    if (!p) return;
    char *base = (char *)p - HDR;
    munmap(base, *(size_t *)base);
}

void hta_prefault(void *p, size_t bytes) {
    if (!p || bytes < ((size_t)64 << 10)) return;
    uintptr_t a = ((uintptr_t)p + 4095) & ~(uintptr_t)4095, e = ((uintptr_t)p + bytes) & ~(uintptr_t)4095;
    if (e > a) madvise((void *)a, e - a, MADV_POPULATE_WRITE);
}

/* Under AddressSanitizer the heap is the sanitizer's: glibc's mallinfo2 and malloc_trim would only read a heap
 * nothing uses, and set it up on first use, which is not safe from several threads at once (the report's
 * parts trim in parallel). */
#if defined(__SANITIZE_ADDRESS__)
#define HEAP_OF_GLIBC 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HEAP_OF_GLIBC 0
#endif
#endif
#ifndef HEAP_OF_GLIBC
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#define HEAP_OF_GLIBC 1
#else
#define HEAP_OF_GLIBC 0
#endif
#endif

void hta_heap_trim(size_t min_free) {
#if HEAP_OF_GLIBC
    if (mallinfo2().fordblks >= min_free) malloc_trim(0);
#else
    (void)min_free;
#endif
}
