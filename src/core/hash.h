/* Hashing for the interning tables and the open-addressing maps of the
 * library: fast, non-cryptographic, good enough spread for names and ids. */
#ifndef HTA_UTIL_HASH_H
#define HTA_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A fast non-cryptographic hash for interning (8 bytes a step). */
static inline uint64_t hta_hash_bytes(const void *data, size_t n) {
    const unsigned char *p = data;
    uint64_t h = 0x9E3779B97F4A7C15ull ^ (n * 0xFF51AFD7ED558CCDull);
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = (h ^ (w * 0xC2B2AE3D27D4EB4Full)) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 29;
        p += 8;
        n -= 8;
    }
    /* the last n < 8 bytes as a zero-padded little-endian word, read without a byte loop (a loop of byte
     * stores read back as a word stalls the load): the same value as a memcpy into a zeroed word */
    uint64_t w = 0;
    if (n && p - (const unsigned char *)data >= 8 - (ptrdiff_t)n) {
        memcpy(&w, p + n - 8, 8);
        w >>= 8 * (8 - n);
    } else if (n >= 4) {
        uint32_t lo, hi;
        memcpy(&lo, p, 4);
        memcpy(&hi, p + n - 4, 4);
        w = lo | ((uint64_t)hi << (8 * (n - 4)));
    } else if (n) {
        w = (uint64_t)p[0] | (uint64_t)p[n / 2] << (8 * (n / 2)) | (uint64_t)p[n - 1] << (8 * (n - 1));
    }
    h = (h ^ (w * 0xC2B2AE3D27D4EB4Full)) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 32;
    return h;
}

/* For interning: long strings (C++ kernel names run to kilobytes) are hashed
 * on their length and three 32-byte windows; equality is still checked in
 * full, so this only trades a rare collision for not reading every byte. */
static inline uint64_t hta_hash_key(const void *data, size_t n) {
    if (n <= 96) return hta_hash_bytes(data, n);
    const char *p = data;
    uint64_t h = hta_hash_bytes(p, 32);
    h ^= hta_hash_bytes(p + n / 2 - 16, 32) * 0x9E3779B97F4A7C15ull;
    h ^= hta_hash_bytes(p + n - 32, 32) * 0xC2B2AE3D27D4EB4Full;
    return h ^ n;
}

static inline uint64_t hta_hash_u64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xFF51AFD7ED558CCDull;
    x ^= x >> 33;
    x *= 0xC4CEB9FE1A85EC53ull;
    x ^= x >> 33;
    return x;
}

/* The slots of an open-addressing map built anew for ns slots (a power of two), the old ones (*slot) freed:
 * entry i of n at the first free slot from hash(ctx, i), stored as i + 1 (0: free).  Returns 0, or -1 (the
 * map as it was) when out of memory. */
static inline int hta_slots_rebuild(uint32_t **slot, size_t *nslot, size_t ns, size_t n,
                                    uint64_t (*hash)(const void *ctx, size_t i), const void *ctx) {
    uint32_t *sl = calloc(ns, sizeof *sl);
    if (!sl) return -1;
    for (size_t i = 0; i < n; i++) {
        size_t j = hash(ctx, i) & (ns - 1);
        while (sl[j]) j = (j + 1) & (ns - 1);
        sl[j] = (uint32_t)i + 1;
    }
    free(*slot);
    *slot = sl;
    *nslot = ns;
    return 0;
}

#endif
