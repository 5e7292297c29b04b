/* Unit tests of the HTML page's one number format and label cut (src/report/svg.c): never an exponent,
 * thousands apart, 4 significant digits or the decimals asked for; a label cut keeps its start and end;
 * kernels that shorten alike get labels that tell them apart (src/report/html_names.c). */
#include <stdio.h>
#include <stdlib.h>

#include "report/internal.h"
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
}

static void as_the_tables(void) {
    NUM(13328071.7, SVG_TABLE, "13328071.7"); /* %g: 1.33281e+07 */
    NUM(49652.832, SVG_TABLE, "49652.832");
    NUM(0.00002, SVG_TABLE, "0.0000200");
    NUM(NAN, SVG_TABLE, "-");
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

/* The H100 Qwen trace's elementwise kernels (names shortened here to what matters) */
static const char *const QWEN[] = {
    "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<"
    "c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> > >"
    "(at::TensorIteratorBase&)::{lambda(int)#1}>(int)",
    "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::"
    "direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda(c10::BFloat16)#1}>"
    "(at::TensorIteratorBase&)::{lambda(int)#1}>(int)",
    "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::CUDAFunctor_add<"
    "c10::BFloat16> >(at::TensorIteratorBase&)::{lambda(int)#1}>(int)",
    "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<float, "
    "float, float, at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&)::{lambda(int)#1}>"
    "(int)",
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel"
    "__5x_cublas",
};

static void kernel_labels(void) {
    char **l = rp_kernel_labels(QWEN, 5, 46);
    CHECK(l != NULL);
    if (!l) return;
    CHECK(!strcmp(l[0], "elementwise_kernel (BinaryFunctor, BFloat16)"));
    CHECK(!strcmp(l[1], "elementwise_kernel (direct_copy_kernel_cuda)"));
    CHECK(!strcmp(l[2], "elementwise_kernel (CUDAFunctor_add)"));
    CHECK(!strcmp(l[3], "elementwise_kernel (BinaryFunctor)"));
    CHECK(!strcmp(l[4], "sm90_xmma_gemm_bf16bf16_bf16...rnel__5x_cublas")); /* alone: its start and end */
    for (int i = 0; i < 5; i++) CHECK(strlen(l[i]) <= 46);
    rp_labels_free(l, 5);
}

/* Many kernels of one template that no word tells apart, and names that differ only where the cut drops:
 * still one label each, within the room. */
static void kernel_labels_many(void) {
    enum { N = 200 };
    char *names[N];
    for (int i = 0; i < N; i++) {
        int r = i % 2 ? asprintf(&names[i], "void k<%d>(float*)", i)
                      /* alike for 30 characters, then a tile size, then alike for 30 more */
                      : asprintf(&names[i], "Cijk_Alik_Bljk_BBS_BH_Bias_HAS_MT%dx%d_SE_K1_TT4_4_WG32_8_1_WS64", i, i);
        if (r < 0) names[i] = NULL;
        CHECK(names[i] != NULL);
    }
    char **l = rp_kernel_labels((const char *const *)names, N, 30);
    CHECK(l != NULL);
    for (int i = 0; l && i < N; i++) {
        CHECK(strlen(l[i]) <= 30);
        for (int j = 0; j < i; j++)
            if (!strcmp(l[i], l[j])) UNIT_FAIL("kernels %d and %d both '%s'", j, i, l[i]);
    }
    rp_labels_free(l, N);
    for (int i = 0; i < N; i++) free(names[i]);
}

UNIT_MAIN(T(significant), T(fixed), T(not_a_number), T(as_the_tables), T(fit), T(kernel_labels), T(kernel_labels_many))
