/* The growable byte buffer (hta/util.h: hta_bytes): doubling growth, one flag for running out of memory. */
#include <stdlib.h>
#include <string.h>

#include "hta/util.h"

void hta_bytes_put(hta_bytes *b, const void *x, size_t n) {
    if (b->oom) return;
    if (b->n + n > b->cap) {
        size_t c = b->cap ? b->cap : 4096;
        while (c < b->n + n) c *= 2;
        char *q = realloc(b->p, c);
        if (!q) {
            b->oom = 1;
            return;
        }
        b->p = q, b->cap = c;
    }
    memcpy(b->p + b->n, x, n);
    b->n += n;
}
