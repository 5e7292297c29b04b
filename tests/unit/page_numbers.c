/* Unit tests of the HTML page's one number format and label cut (src/report/svg.c): never an exponent,
 * thousands apart, 4 significant digits or the decimals asked for; a label cut keeps its start and end. */
#include <stdlib.h>

#include "report/svg.h"
#include "unit.h"

#define NUM(v, dec, want)                                                             \
    do {                                                                              \
        char b_[SVG_NUM];                                                             \
        const char *g_ = svg_num((v), (dec), b_);                                     \
        if (strcmp(g_, (want))) UNIT_FAIL("svg_num(%s) = %s, expected %s", #v, g_, (want)); \
    } while (0)

static void significant(void) {
    NUM(1520.0, SVG_SIG, "1,520");      /* %.3g would write 1.52e+03 */
    NUM(2e-05, SVG_SIG, "0.00002");     /* %g: 2e-05 */
    NUM(0.30000000000000004, SVG_SIG, "0.3");
    NUM(12.5, SVG_SIG, "12.5");
    NUM(3.0, SVG_SIG, "3");
    NUM(0.0, SVG_SIG, "0");
    NUM(-0.0, SVG_SIG, "0");
    NUM(-1234567.891, SVG_SIG, "-1,234,568");
    NUM(999.96, SVG_SIG, "1,000");
    NUM(0.005215, SVG_SIG, "0.005215");
    NUM(1e-15, SVG_SIG, "0");
    NUM(1e20, SVG_SIG, "100,000,000,000,000,000,000");
}

static void fixed(void) {
    NUM(12345.67, 1, "12,345.7");
    NUM(6836.2, 0, "6,836");
    NUM(999.0, 0, "999");
    NUM(-0.04, 1, "0.0"); /* rounds to zero: no sign */
    NUM(1000000.0, 2, "1,000,000.00");
}

static void not_a_number(void) {
    NUM(NAN, SVG_SIG, "-");
    NUM(INFINITY, 0, "-");
    char b[SVG_NUM];
    CHECK(!strcmp(svg_int(1234567LL, b), "1,234,567"));
    CHECK(!strcmp(svg_int(-1000LL, b), "-1,000"));
    CHECK(!strcmp(svg_int(7LL, b), "7"));
}

static void fit(void) {
    char b[64];
    const char *s = "at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>";
    CHECK(!strcmp(svg_fit("short", 20, b), "short"));
    const char *c = svg_fit(s, 30, b);
    CHECK_EQ_I64(strlen(c), 30);
    CHECK(!strncmp(c, "at::native::vecto...", 20)); /* the start: 30 - 3 - 10 characters */
    CHECK(strstr(c, "...") != NULL);
    CHECK(!strcmp(c + strlen(c) - 8, "<float>>")); /* the end: the template arguments */
}

UNIT_MAIN(T(significant), T(fixed), T(not_a_number), T(fit))
