/* The SIMD structural scan (json_scan.h): per-CPU classifiers of 64-byte blocks, each compiled for its
 * instruction set by a target attribute (the build has no -march flag, so the binary runs on any x86-64),
 * the escape and in-string carries they share, and the choice of one at run time. */
#include "trace/json_scan.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define SCAN_X86 1
#endif

/* From the raw byte classes of one block to the masks the walk reads.  Plain integer work, the same
 * on every path, so every path gives the same masks.
 *
 * Escapes: a byte is escaped when an odd run of backslashes ends just before it.  A run's start bit
 * added to the backslash mask carries through the run and lands on the byte after it; the run's length
 * is odd when that byte and the start differ in parity.  Runs are therefore split by the parity of their
 * start (a run that goes on from the previous block counts from where it began there), and a run that
 * reaches the block's end passes its parity on as the carry out of the addition. */
static inline void scan_finish(uint64_t quote, uint64_t bs, uint64_t ws, uint64_t structural,
                               uint64_t special, uint64_t digit, scan_state *st, scan_masks *m) {
    const uint64_t even = 0x5555555555555555ull;
    uint64_t starts = bs & ~(bs << 1), escaped = 0;
    uint64_t se = starts & even, so = starts & ~even;
    if (st->esc) {
        if (bs & 1) { /* the odd run goes on: its start is an odd one */
            se &= ~1ull;
            so |= 1;
        } else {
            escaped |= 1;
        }
    }
    uint64_t sum_e = bs + se, sum_o;
    st->esc = __builtin_add_overflow(bs, so, &sum_o);
    escaped |= (sum_e & ~bs & ~even) | (sum_o & ~bs & even);
    uint64_t rq = quote & ~escaped;
    /* in a string: the prefix XOR of the real quotes (the opening quote in, the closing one out) */
    uint64_t x = rq;
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    uint64_t instr = x ^ st->instr;
    st->instr = (uint64_t)((int64_t)instr >> 63);
    uint64_t outside = ~(instr | rq);
    uint64_t other = outside & ~ws & ~structural;
    uint64_t other_start = other & ~((other << 1) | st->other);
    st->other = other >> 63;
    m->open_q = rq & instr;
    m->close_q = rq & ~instr;
    m->careful = (bs | special) & instr & ~rq;
    m->other = other;
    m->digit = digit;
    m->sig = (structural & outside) | m->open_q | other_start;
}

#ifdef SCAN_X86
__attribute__((target("avx2"))) static void scan_avx2(const char *p, scan_state *st, scan_masks *m) {
    uint64_t q = 0, b = 0, w = 0, s = 0, sp = 0, d = 0;
    for (int h = 0; h < 2; h++) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(p + 32 * h));
        __m256i lo = _mm256_or_si256(v, _mm256_set1_epi8(0x20)); /* '[' -> '{', ']' -> '}' */
#define EQ(x, c) _mm256_cmpeq_epi8((x), _mm256_set1_epi8(c))
        __m256i ws = _mm256_or_si256(_mm256_or_si256(EQ(v, ' '), EQ(v, '\n')),
                                     _mm256_or_si256(EQ(v, '\r'), EQ(v, '\t')));
        __m256i st8 = _mm256_or_si256(_mm256_or_si256(EQ(lo, '{'), EQ(lo, '}')),
                                      _mm256_or_si256(EQ(v, ','), EQ(v, ':')));
        /* signed compare: bytes >= 0x80 are negative, so below 0x20 too */
        __m256i spc = _mm256_cmpgt_epi8(_mm256_set1_epi8(0x20), v);
        __m256i dig = _mm256_and_si256(_mm256_cmpgt_epi8(v, _mm256_set1_epi8('0' - 1)),
                                       _mm256_cmpgt_epi8(_mm256_set1_epi8('9' + 1), v));
        int sh = 32 * h;
        q |= (uint64_t)(uint32_t)_mm256_movemask_epi8(EQ(v, '"')) << sh;
        b |= (uint64_t)(uint32_t)_mm256_movemask_epi8(EQ(v, '\\')) << sh;
#undef EQ
        w |= (uint64_t)(uint32_t)_mm256_movemask_epi8(ws) << sh;
        s |= (uint64_t)(uint32_t)_mm256_movemask_epi8(st8) << sh;
        sp |= (uint64_t)(uint32_t)_mm256_movemask_epi8(spc) << sh;
        d |= (uint64_t)(uint32_t)_mm256_movemask_epi8(dig) << sh;
    }
    scan_finish(q, b, w, s, sp, d, st, m);
}

__attribute__((target("avx512f,avx512bw"))) static void scan_avx512(const char *p, scan_state *st,
                                                                     scan_masks *m) {
    __m512i v = _mm512_loadu_si512((const void *)p);
    __m512i lo = _mm512_or_si512(v, _mm512_set1_epi8(0x20));
#define EQ(x, c) _mm512_cmpeq_epi8_mask((x), _mm512_set1_epi8(c))
    uint64_t q = EQ(v, '"'), b = EQ(v, '\\');
    uint64_t w = EQ(v, ' ') | EQ(v, '\n') | EQ(v, '\r') | EQ(v, '\t');
    uint64_t s = EQ(lo, '{') | EQ(lo, '}') | EQ(v, ',') | EQ(v, ':');
#undef EQ
    uint64_t sp = _mm512_cmplt_epu8_mask(v, _mm512_set1_epi8(0x20)) | _mm512_movepi8_mask(v);
    uint64_t d = _mm512_cmplt_epu8_mask(_mm512_sub_epi8(v, _mm512_set1_epi8('0')), _mm512_set1_epi8(10));
    scan_finish(q, b, w, s, sp, d, st, m);
}
#endif

static int chosen = -1; /* SCAN_*, once picked */
static int walk_after = -1;

static int pick(void) {
    int best = SCAN_SCALAR;
#ifdef SCAN_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) best = SCAN_AVX2;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")) best = SCAN_AVX512;
#endif
    /* the scalar path unless asked: on every shape of skipped value measured (docs/scaling.md) the
     * walk was no faster than the SSE2 byte-by-byte skip */
    const char *e = getenv("HTA_SIMD");
    int want = SCAN_SCALAR;
    if (e && !strcmp(e, "auto")) want = best;
    else if (e && !strcmp(e, "avx2")) want = SCAN_AVX2;
    else if (e && !strcmp(e, "avx512")) want = SCAN_AVX512;
    return want < best ? want : best;
}

int scan_path(void) {
    int c = __atomic_load_n(&chosen, __ATOMIC_ACQUIRE);
    if (c < 0) { /* two threads may both pick: they pick the same */
        c = pick();
        __atomic_store_n(&chosen, c, __ATOMIC_RELEASE);
    }
    return c;
}

int scan_walk_after(void) {
    int w = __atomic_load_n(&walk_after, __ATOMIC_ACQUIRE);
    if (w < 0) {
        const char *e = getenv("HTA_SIMD_WALK_AFTER");
        long v = e && *e ? strtol(e, NULL, 10) : 256;
        w = v < 0 ? 0 : v > (1 << 30) ? (1 << 30) : (int)v;
        __atomic_store_n(&walk_after, w, __ATOMIC_RELEASE);
    }
    return w;
}

const char *scan_path_name(void) {
    static const char *const names[] = {"scalar", "avx2", "avx512"};
    return names[scan_path()];
}

scan_block_fn scan_block_get(void) {
#ifdef SCAN_X86
    switch (scan_path()) {
    case SCAN_AVX512: return scan_avx512;
    case SCAN_AVX2: return scan_avx2;
    default: break;
    }
#endif
    return NULL;
}
