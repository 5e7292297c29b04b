/* The checks of the C test programs that are not unit.h harness tests (one main, the result its exit
 * status): CHECK(c) reports a false c on stderr with its file and line, counts it in check_fails and goes
 * on; REQUIRE(c) reports it and returns 1 from the calling function. */
#ifndef HTA_TESTS_CHECK_H
#define HTA_TESTS_CHECK_H

#include <stdio.h>

static int check_fails __attribute__((unused)); /* REQUIRE alone leaves it unread */

static inline void check_report_(const char *file, int line, const char *what) {
    fprintf(stderr, "%s:%d: check failed: %s\n", file, line, what);
}

#define CHECK(c)                                                            \
    do {                                                                    \
        if (!(c)) check_report_(__FILE__, __LINE__, #c), check_fails++;     \
    } while (0)
#define REQUIRE(c)                                                          \
    do {                                                                    \
        if (!(c)) return check_report_(__FILE__, __LINE__, #c), 1;          \
    } while (0)

#endif
