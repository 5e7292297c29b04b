/* Scratch arenas: the memory convention of the library.
 *
 * Per-call scratch (sort permutations, per-rank intervals, hash sets) comes
 * from an arena instead of a dozen mallocs with a cleanup block each: an
 * analysis takes a mark at entry and resets to it on every exit, success or
 * error, so nothing leaks and there is nothing to free one by one.  Blocks are
 * big (1 MiB at least) and kept after a reset, so the next analysis of the
 * same run reuses pages already faulted in (page faults are costly here).
 * An arena is not thread safe: one per thread. */
#ifndef HTA_ARENA_H
#define HTA_ARENA_H

#include <stddef.h>

typedef struct hta_arena_block hta_arena_block;

typedef struct hta_arena {
    hta_arena_block *head; /* block being filled; older ones behind it */
    hta_arena_block *spare;/* blocks freed by a reset, reused first */
    size_t used;           /* bytes used in head */
} hta_arena;

/* A position to return to: everything allocated after it is released. */
typedef struct hta_arena_mark {
    hta_arena_block *head;
    size_t used;
} hta_arena_mark;

#define HTA_ARENA_INIT {0, 0, 0}

/* n bytes, 16-byte aligned, uninitialised; NULL when out of memory. */
void *hta_arena_alloc(hta_arena *a, size_t n);
/* count * size bytes zeroed; NULL on overflow or out of memory. */
void *hta_arena_calloc(hta_arena *a, size_t count, size_t size);
/* count elements of size bytes (overflow checked), uninitialised. */
void *hta_arena_array(hta_arena *a, size_t count, size_t size);
char *hta_arena_strdup(hta_arena *a, const char *s);
/* Growing an array p of arena a that has room for *cap elements of size
 * bytes, to hold at least need: when it has not, a larger one (twice the
 * room, or need) is taken and the first *cap elements copied (the last
 * allocation of the arena grows in place when its block has the room).  The
 * old space stays used until the next reset.  Returns the array (p when it
 * had the room) and updates *cap; NULL when out of memory (p stays valid). */
void *hta_arena_grow(hta_arena *a, void *p, size_t *cap, size_t need, size_t size);

hta_arena_mark hta_arena_save(const hta_arena *a);
/* Releases everything allocated since m (the blocks are kept for reuse). */
void hta_arena_reset(hta_arena *a, hta_arena_mark m);
/* Gives every block back to the system. */
void hta_arena_free(hta_arena *a);
/* Gives back the spare blocks (those a reset released), keeping what is in
 * use: before a phase that needs memory of its own more than reuse. */
void hta_arena_trim(hta_arena *a);

/* Typed helper: HTA_ANEW(a, T, n) is a T[n] from arena a (at least one
 * element, so that n = 0 still gives a valid pointer). */
#define HTA_ANEW(a, T, n) ((T *)hta_arena_array((a), (n) != 0 ? (size_t)(n) : 1u, sizeof(T)))

#endif
