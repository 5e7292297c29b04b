/* Scratch arenas (arena.h): a chain of big blocks, bump allocation, marks. */
#include "hta/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/bigbuf.h"

#define ARENA_MIN_BLOCK ((size_t)1 << 20)
#define ARENA_ALIGN 16

struct hta_arena_block {
    hta_arena_block *prev; /* older block */
    size_t size;           /* usable bytes in data */
    _Alignas(ARENA_ALIGN) unsigned char data[];
};

static hta_arena_block *take_block(hta_arena *a, size_t n) {
    /* a spare block big enough, else a new one */
    for (hta_arena_block **pp = &a->spare; *pp; pp = &(*pp)->prev) {
        hta_arena_block *b = *pp;
        if (b->size >= n) {
            *pp = b->prev;
            return b;
        }
    }
    size_t size = n < ARENA_MIN_BLOCK ? ARENA_MIN_BLOCK : n;
    if (size > SIZE_MAX - sizeof(hta_arena_block)) return NULL;
    hta_arena_block *b = malloc(sizeof *b + size);
    if (!b) return NULL;
    b->size = size;
    return b;
}

void *hta_arena_alloc(hta_arena *a, size_t n) {
    if (n == 0) n = 1;
    if (n > SIZE_MAX - ARENA_ALIGN) return NULL;
    n = (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    if (!a->head || a->head->size - a->used < n) {
        hta_arena_block *b = take_block(a, n);
        if (!b) return NULL;
        b->prev = a->head;
        a->head = b;
        a->used = 0;
        /* a big request is touched soon: fault its pages in at once */
        if (n >= ARENA_MIN_BLOCK) hta_prefault(b->data, n);
    }
    void *p = a->head->data + a->used;
    a->used += n;
    return p;
}

void *hta_arena_array(hta_arena *a, size_t count, size_t size) {
    if (size && count > SIZE_MAX / size) return NULL;
    return hta_arena_alloc(a, count * size);
}

void *hta_arena_calloc(hta_arena *a, size_t count, size_t size) {
    void *p = hta_arena_array(a, count, size);
    if (p) memset(p, 0, count * size);
    return p;
}

char *hta_arena_strdup(hta_arena *a, const char *s) {
    size_t n = strlen(s) + 1;
    char *d = hta_arena_alloc(a, n);
    if (d) memcpy(d, s, n);
    return d;
}

void *hta_arena_grow(hta_arena *a, void *p, size_t *cap, size_t need, size_t size) {
    if (need <= *cap) return p;
    size_t nc = *cap > SIZE_MAX / 2 ? SIZE_MAX : 2 * *cap;
    if (nc < need) nc = need;
    if (nc < 16) nc = 16;
    if (size && nc > SIZE_MAX / size) return NULL;
    size_t old = *cap * size, want = nc * size;
    /* the arena's last allocation: grow in place when its block has the room */
    if (p && a->head && (unsigned char *)p >= a->head->data &&
        (unsigned char *)p + ((old + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1)) == a->head->data + a->used &&
        want <= a->head->size - (size_t)((unsigned char *)p - a->head->data)) {
        size_t start = (size_t)((unsigned char *)p - a->head->data);
        a->used = start + ((want + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1));
        *cap = nc;
        return p;
    }
    void *q = hta_arena_alloc(a, want);
    if (!q) return NULL;
    if (old) memcpy(q, p, old);
    *cap = nc;
    return q;
}

hta_arena_mark hta_arena_save(const hta_arena *a) {
    hta_arena_mark m = {a->head, a->used};
    return m;
}

void hta_arena_reset(hta_arena *a, hta_arena_mark m) {
    while (a->head && a->head != m.head) {
        hta_arena_block *b = a->head;
        a->head = b->prev;
        b->prev = a->spare;
        a->spare = b;
    }
    a->used = a->head ? m.used : 0;
}

void hta_arena_trim(hta_arena *a) {
    while (a->spare) {
        hta_arena_block *b = a->spare;
        a->spare = b->prev;
        free(b);
    }
}

void hta_arena_free(hta_arena *a) {
    hta_arena_reset(a, (hta_arena_mark){NULL, 0});
    hta_arena_trim(a);
}
