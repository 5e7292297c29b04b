/* A tiny unit-test harness.  Each test is a `static void NAME(void)` using the
 * CHECK macros (a failed check reports and the test goes on); the file ends with
 * UNIT_MAIN(T(a), T(b), ...).  The program runs the tests named on its command
 * line (all without names), `--list` prints the names.  Output, one line per
 * test, read by tests/run.py:
 *     ok   NAME
 *     FAIL NAME
 *         file:line: what failed
 * Exit status 1 when a test failed, 2 for an unknown name. */
#ifndef HTA_TESTS_UNIT_H
#define HTA_TESTS_UNIT_H

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct unit_test {
    const char *name;
    void (*fn)(void);
} unit_test;
#define T(fn) {#fn, fn}

static const char *unit_name_; /* the running test */
static int unit_failed_;       /* its failed checks */

/* Reports one failed check (the test's FAIL line first). */
#define UNIT_FAIL(...)                                         \
    do {                                                       \
        if (!unit_failed_++) printf("FAIL %s\n", unit_name_);  \
        printf("    %s:%d: ", __FILE__, __LINE__);             \
        printf(__VA_ARGS__);                                   \
        putchar('\n');                                         \
    } while (0)

#define CHECK(c) \
    do {         \
        if (!(c)) UNIT_FAIL("%s", #c); \
    } while (0)

#define CHECK_EQ_I64(got, want)                                                                          \
    do {                                                                                                 \
        int64_t g_ = (int64_t)(got), w_ = (int64_t)(want);                                               \
        if (g_ != w_) UNIT_FAIL("%s = %" PRId64 ", expected %s = %" PRId64, #got, g_, #want, w_);        \
    } while (0)

/* Doubles equal to the bit (NaN equals NaN). */
#define CHECK_EQ_DBL(got, want)                                                                          \
    do {                                                                                                 \
        double g_ = (got), w_ = (want);                                                                  \
        if (!(g_ == w_ || (isnan(g_) && isnan(w_)))) UNIT_FAIL("%s = %.17g, expected %.17g", #got, g_, w_); \
    } while (0)

/* Doubles within a relative tolerance (NaN equals NaN). */
#define CHECK_NEAR(got, want, rel)                                                                       \
    do {                                                                                                 \
        double g_ = (got), w_ = (want);                                                                  \
        if (!(fabs(g_ - w_) <= (rel) * fabs(w_) || (isnan(g_) && isnan(w_))))                            \
            UNIT_FAIL("%s = %.17g, expected %.17g (rel %g)", #got, g_, w_, (double)(rel));               \
    } while (0)

/* Byte strings of known length. */
#define CHECK_EQ_MEM(got, gn, want, wn)                                                                  \
    do {                                                                                                 \
        size_t gn_ = (gn), wn_ = (wn);                                                                   \
        if (gn_ != wn_ || memcmp((got), (want), gn_))                                                    \
            UNIT_FAIL("%s = \"%.*s\" (%zu bytes), expected \"%.*s\" (%zu bytes)", #got, (int)gn_,        \
                      (const char *)(got), gn_, (int)wn_, (const char *)(want), wn_);                    \
    } while (0)

#define CHECK_EQ_STR(got, want)                                          \
    do {                                                                 \
        const char *gs_ = (got), *ws_ = (want);                          \
        if (!gs_ || strcmp(gs_, ws_))                                    \
            UNIT_FAIL("%s = \"%s\", expected \"%s\"", #got, gs_ ? gs_ : "(null)", ws_); \
    } while (0)

/* Arrays of n unsigned values (permutations): the first difference. */
#define CHECK_EQ_U32S(got, want, n)                                                                      \
    do {                                                                                                 \
        for (size_t k_ = 0; k_ < (size_t)(n); k_++)                                                      \
            if ((uint64_t)(got)[k_] != (uint64_t)(want)[k_]) {                                           \
                UNIT_FAIL("%s[%zu] = %" PRIu64 ", expected %" PRIu64 " (n = %zu)", #got, k_,             \
                          (uint64_t)(got)[k_], (uint64_t)(want)[k_], (size_t)(n));                       \
                break;                                                                                   \
            }                                                                                            \
    } while (0)

static int unit_main(int argc, char **argv, const unit_test *t, size_t n) {
    if (argc == 2 && !strcmp(argv[1], "--list")) {
        for (size_t i = 0; i < n; i++) puts(t[i].name);
        return 0;
    }
    int failed = 0;
    for (int a = 1; a < argc; a++) {
        size_t i = 0;
        while (i < n && strcmp(t[i].name, argv[a])) i++;
        if (i == n) {
            printf("FAIL %s\n    no such test\n", argv[a]);
            return 2;
        }
    }
    for (size_t i = 0; i < n; i++) {
        int wanted = argc == 1;
        for (int a = 1; a < argc && !wanted; a++) wanted = !strcmp(t[i].name, argv[a]);
        if (!wanted) continue;
        unit_name_ = t[i].name;
        unit_failed_ = 0;
        t[i].fn();
        if (!unit_failed_) printf("ok   %s\n", t[i].name);
        failed |= unit_failed_ != 0;
        fflush(stdout);
    }
    return failed;
}

#define UNIT_MAIN(...)                                                \
    int main(int argc, char **argv) {                                 \
        static const unit_test tests_[] = {__VA_ARGS__};              \
        return unit_main(argc, argv, tests_, sizeof tests_ / sizeof tests_[0]); \
    }

#endif
