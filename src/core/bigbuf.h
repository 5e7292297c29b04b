/* Large growable arrays (the per-rank columns) straight from mmap: growing
 * one moves pages with mremap instead of copying bytes, and untouched
 * capacity costs no memory.  Blocks carry their own size. */
#ifndef HTA_UTIL_BIGBUF_H
#define HTA_UTIL_BIGBUF_H

#include <stddef.h>

/* Like realloc (p may be NULL); returns NULL when out of memory (p stays valid). */
void *hta_big_realloc(void *p, size_t bytes);
void hta_big_free(void *p);
/* Gives back the pages beyond the first `bytes` (growth leaves prefaulted
 * spare room); p stays valid. */
void hta_big_shrink(void *p, size_t bytes);

/* Faults in the whole pages of a block about to be written (from malloc or
 * anywhere): one call instead of a page fault per 4 KiB page, which costs
 * ~10 us on virtual machines.  Small blocks are left alone; pages already
 * present cost next to nothing.  Advisory: errors are ignored. */
void hta_prefault(void *p, size_t bytes);

/* Gives the heap's free pages back to the system (glibc's malloc_trim) where they are at least min_free
 * bytes: between the phases of a run, where what one phase freed lies in holes of the heap that the next,
 * which allocates differently, would not fill.  Each page given back costs a fault when the heap grows
 * again, so a few megabytes are left where they are (a small rank's run would pay more than it saves). */
void hta_heap_trim(size_t min_free);

#endif
