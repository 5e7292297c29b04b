#include "util/bigbuf.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#define HDR 64 /* keeps the payload 64-byte aligned */

void *hta_big_realloc(void *p, size_t bytes) {
    if (bytes > SIZE_MAX - HDR - 4096) return NULL;
    size_t want = (bytes + HDR + 4095) & ~(size_t)4095;
    if (!p) {
        void *m = mmap(NULL, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) return NULL;
        /* huge pages: one fault per 2 MiB instead of per 4 KiB */
        if (want >= (2u << 20)) madvise(m, want, MADV_HUGEPAGE);
        *(size_t *)m = want;
        return (char *)m + HDR;
    }
    char *base = (char *)p - HDR;
    size_t have = *(size_t *)base;
    if (want <= have) return p;
    void *m = mremap(base, have, want, MREMAP_MAYMOVE);
    if (m == MAP_FAILED) return NULL;
    if (want >= (2u << 20)) madvise(m, want, MADV_HUGEPAGE);
    *(size_t *)m = want;
    return (char *)m + HDR;
}

void hta_big_free(void *p) {
    if (!p) return;
    char *base = (char *)p - HDR;
    munmap(base, *(size_t *)base);
}
