/* The lexer's SIMD structural scan: 64 bytes of JSON text at a time become bitmasks (bit i for byte
 * i) of the real quotes, the string bodies, the structural characters outside strings, the starts of
 * other tokens (numbers, literals, stray bytes) and the string bytes that need a careful look (a
 * backslash, a control character, a byte >= 0x80).  Escapes are resolved across blocks (a quote after
 * an odd run of backslashes is no quote, whatever block the run began in) and so is being inside a
 * string: the caller classifies consecutive blocks in order through one scan_state.
 *
 * The classifier is picked once per process at run time from HTA_SIMD in the environment: unset or
 * "scalar", none (the lexer keeps its byte-by-byte skip, json_lex.c: measured as fast or faster on
 * every input tried, docs/scaling.md); "avx2" or "avx512" that classifier, "auto" the best the CPU has
 * (a path the CPU lacks falls to the best below it: the CPU is asked, never assumed).  The rows are the
 * same on every path (tests/loader/test_simd.py). */
#ifndef HTA_TRACE_JSON_SCAN_H
#define HTA_TRACE_JSON_SCAN_H

#include <stdint.h>

typedef struct scan_state {
    uint64_t esc;    /* 1: the previous block ended inside an odd run of backslashes */
    uint64_t instr;  /* all ones: the previous block ended inside a string */
    uint64_t other;  /* 1: the previous block ended in a run of other bytes */
} scan_state;

typedef struct scan_masks {
    uint64_t open_q;  /* a string's opening quote */
    uint64_t close_q; /* a string's closing quote */
    uint64_t careful; /* string bytes with a backslash, a control character or a byte >= 0x80 */
    uint64_t other;   /* bytes outside strings that are neither white space nor {}[],: nor a quote */
    uint64_t digit;   /* the bytes '0'-'9' */
    uint64_t sig;     /* what the structure walk stops at: {}[],: outside strings, opening quotes, the
                       * first byte of each run of other bytes (not white space, outside strings) */
} scan_masks;

/* Classifies the 64 bytes at p (all readable) as the block after the one st last saw. */
typedef void (*scan_block_fn)(const char *p, scan_state *st, scan_masks *m);

enum { SCAN_SCALAR = 0, SCAN_AVX2 = 1, SCAN_AVX512 = 2 };

/* The classifier this process uses (NULL on the scalar path), chosen on first call from HTA_SIMD and
 * the CPU; thread-safe. */
scan_block_fn scan_block_get(void);
/* Which path that is (SCAN_*), and its name ("scalar", "avx2", "avx512"). */
int scan_path(void);
const char *scan_path_name(void);
/* How many bytes of a skipped value the byte-by-byte skip reads before the walk takes over: 256, or
 * HTA_SIMD_WALK_AFTER from the environment (tests set 0 to walk every container). */
int scan_walk_after(void);

#endif
