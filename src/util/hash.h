#ifndef HTA_UTIL_HASH_H
#define HTA_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>
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
    uint64_t w = 0;
    memcpy(&w, p, n);
    h = (h ^ (w * 0xC2B2AE3D27D4EB4Full)) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 32;
    return h;
}

static inline uint64_t hta_hash_u64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xFF51AFD7ED558CCDull;
    x ^= x >> 33;
    x *= 0xC4CEB9FE1A85EC53ull;
    x ^= x >> 33;
    return x;
}

#endif
