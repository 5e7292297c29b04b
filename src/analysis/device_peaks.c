/* The peak table of `hta efficiency` (docs/efficiency.md, "Device peaks"): dense tensor-core TFLOP/s per
 * dtype and memory TB/s of known GPUs, from the vendors' datasheets and whitepapers, and how a trace's
 * deviceProperties finds its entry.
 *
 * Conventions (docs/efficiency.md gives each figure's source):
 *  - dense figures: where a datasheet gives a tensor-core figure "with sparsity" only, it is halved;
 *  - fp32 is the plain (non-tensor-core) FP32 peak on NVIDIA GPUs, since PyTorch's matmuls default to
 *    full FP32 (torch.backends.cuda.matmul.allow_tf32 = False); AMD's FP32 is the matrix-core figure
 *    its BLAS uses; fp64 is the tensor-core (matrix) figure where there is one;
 *  - fp16/bf16/fp8 with FP32 accumulation (what PyTorch asks for);
 *  - a ROCm device is one GCD: an MI250X shows as two devices, each with half the package's figures. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analysis/op_flops.h"
#include "hta/efficiency.h"

/* Figures several entries share (one chip in several boards or memory sizes), written once. */
#define A100_TENSOR {19.5, 19.5, 156, 312, 312, 0, 624, 0}
#define A100_VECTOR {9.7, 19.5, 78, 39}
#define H100_SXM_TENSOR {67, 67, 494.5, 989.5, 989.5, 1979, 1979, 0}
#define H100_SXM_VECTOR {33.5, 66.9, 133.8, 133.8}
#define MI300_TENSOR {163.4, 163.4, 653.7, 1307.4, 1307.4, 2614.9, 2614.9, 0}
#define MI300_VECTOR {81.7, 163.4, 0, 0}

/* Per entry: tensor TFLOP/s {fp64, fp32, tf32, fp16, bf16, fp8, int8, fp4}, TB/s, source, link GB/s per
 * direction and its name, vector (non-tensor) TFLOP/s {fp64, fp32, fp16, bf16}: NVIDIA's architecture
 * whitepapers (V100, A100, H100: "non-Tensor" rows), AMD's datasheets ("Vector" rows, per GCD for MI250X). */
static const hta_device_peak PEAKS[] = {
    {"V100 SXM2", {7.8, 15.7, 0, 125, 0, 0, 0, 0}, 0.9,
     "NVIDIA Tesla V100 datasheet (SXM2)", 150, "NVLink 2 (6 x 25 GB/s)", {7.8, 15.7, 31.4, 0}},
    {"V100 PCIe", {7, 14, 0, 112, 0, 0, 0, 0}, 0.9, "NVIDIA Tesla V100 datasheet (PCIe)", 16, "PCIe 3.0 x16", {7, 14, 28, 0}},
    {"V100S PCIe", {8.2, 16.4, 0, 130, 0, 0, 0, 0}, 1.134, "NVIDIA Tesla V100S datasheet", 16, "PCIe 3.0 x16", {8.2, 16.4, 32.8, 0}},
    {"A100 SXM4 40GB", A100_TENSOR, 1.555,
     "NVIDIA A100 datasheet", 300, "NVLink 3 (12 x 25 GB/s)", A100_VECTOR},
    {"A100 PCIe 40GB", A100_TENSOR, 1.555, "NVIDIA A100 datasheet", 32, "PCIe 4.0 x16", A100_VECTOR},
    {"A100 SXM4 80GB", A100_TENSOR, 2.039,
     "NVIDIA A100 datasheet", 300, "NVLink 3 (12 x 25 GB/s)", A100_VECTOR},
    {"A100 PCIe 80GB", A100_TENSOR, 1.935, "NVIDIA A100 datasheet", 32, "PCIe 4.0 x16", A100_VECTOR},
    {"H100 SXM5", H100_SXM_TENSOR, 3.35,
     "NVIDIA H100 datasheet (SXM)", 450, "NVLink 4 (18 x 25 GB/s)", H100_SXM_VECTOR},
    {"H100 PCIe", {51, 51, 378, 756.5, 756.5, 1513, 1513, 0}, 2.0, "NVIDIA H100 datasheet (PCIe)", 64, "PCIe 5.0 x16", {25.6, 51.2, 102.4, 102.4}},
    {"H100 NVL", {60, 60, 417.5, 835.5, 835.5, 1670.5, 1670.5, 0}, 3.9,
     "NVIDIA H100 datasheet (NVL)", 300, "NVLink bridge (600 GB/s bidirectional)", {30, 60, 0, 0}},
    {"H200 SXM", H100_SXM_TENSOR, 4.8,
     "NVIDIA H200 datasheet (SXM)", 450, "NVLink 4 (18 x 25 GB/s)", H100_SXM_VECTOR},
    {"H800 SXM5", {1, 67, 494.5, 989.5, 989.5, 1979, 1979, 0}, 3.35,
     "NVIDIA H800 datasheet (SXM)", 200, "NVLink (400 GB/s bidirectional)", {1, 67, 0, 0}},
    {"H800 PCIe", {0.8, 51, 378, 756.5, 756.5, 1513, 1513, 0}, 2.0, "NVIDIA H800 datasheet (PCIe)", 64, "PCIe 5.0 x16", {0.8, 51, 0, 0}},
    {"B200", {37, 75, 1125, 2250, 2250, 4500, 4500, 9000}, 8.0,
     "NVIDIA HGX B200 datasheet, per GPU", 900, "NVLink 5 (18 x 50 GB/s)", {37, 75, 0, 0}},
    {"RTX 2080 Ti", {0.42, 13.4, 0, 53.8, 0, 0, 0, 0}, 0.616,
     "NVIDIA Turing architecture whitepaper", 16, "PCIe 3.0 x16", {0.42, 13.4, 26.9, 0}},
    {"RTX 4090", {1.29, 82.6, 82.6, 165.2, 165.2, 330.3, 660.6, 0}, 1.008,
     "NVIDIA Ada Lovelace architecture whitepaper", 32, "PCIe 4.0 x16", {1.29, 82.6, 82.6, 0}},
    {"MI210", {45.3, 45.3, 0, 181, 181, 0, 181, 0}, 1.6, "AMD Instinct MI210 datasheet", 0, NULL, {22.6, 22.6, 0, 0}},
    {"MI250X (one GCD)", {47.85, 47.85, 0, 191.5, 191.5, 0, 191.5, 0}, 1.6384,
     "AMD Instinct MI250X datasheet, halved per GCD", 0, NULL, {23.95, 23.95, 0, 0}},
    {"MI300X", MI300_TENSOR, 5.3,
     "AMD Instinct MI300X datasheet", 448, "Infinity Fabric (7 x 64 GB/s)", MI300_VECTOR},
    {"MI325X", MI300_TENSOR, 6.0,
     "AMD Instinct MI325X datasheet", 448, "Infinity Fabric (7 x 64 GB/s)", MI300_VECTOR},
};
#define NPEAKS (sizeof PEAKS / sizeof *PEAKS)

const hta_device_peak *hta_device_peaks(size_t *n) {
    *n = NPEAKS;
    return PEAKS;
}

const char *hta_peak_dtype_name(hta_peak_dtype d) {
    static const char *const names[HTA_PDT_COUNT] = {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "fp4"};
    return d >= 0 && d < HTA_PDT_COUNT ? names[d] : "none";
}

hta_peak_dtype hta_kernel_math_dtype(const char *k) {
    /* the narrowest type the name gives is what its tensor cores take: "s1688gemm_bf16" multiplies bf16 (the
     * s is the fp32 accumulator), "f16f16_f16f32" fp16 */
    if (strcasestr(k, "e4m3") || strcasestr(k, "e5m2") || strcasestr(k, "fp8")) return HTA_PDT_FP8;
    if (strcasestr(k, "bf16") || strcasestr(k, "bfloat16")) return HTA_PDT_BF16;
    if (strcasestr(k, "f16") || strcasestr(k, "h1688") || strcasestr(k, "h16816") || strcasestr(k, "h884") ||
        strcasestr(k, "half"))
        return HTA_PDT_FP16;
    /* fp32 data on TF32 tensor cores: cuBLAS/cuDNN's tf32 kernels, CUTLASS's s1688/s16816 tensor-op GEMMs (fp32
     * in and out, TF32 math), AMD's xf32 */
    if (strcasestr(k, "tf32") || strcasestr(k, "xf32") || strstr(k, "s1688") || strstr(k, "s16816"))
        return HTA_PDT_TF32;
    return HTA_PDT_NONE;
}

static const hta_device_peak *model(const char *m) {
    for (size_t i = 0; i < NPEAKS; i++)
        if (!strcmp(PEAKS[i].model, m)) return &PEAKS[i];
    return NULL;
}

static int has(const char *s, const char *p) { return strcasestr(s, p) != NULL; }

/* The name rules: the words vendors put in the names their drivers report (nvidia-smi, rocm-smi). */
static const hta_device_peak *by_name(const char *n, int64_t mem) {
    int big = mem > ((int64_t)50 << 30); /* an 80 GB A100 */
    if (has(n, "H100")) return model(has(n, "PCIe") ? "H100 PCIe" : has(n, "NVL") ? "H100 NVL" : "H100 SXM5");
    if (has(n, "H200")) return model("H200 SXM");
    if (has(n, "H800")) return model(has(n, "PCIe") ? "H800 PCIe" : "H800 SXM5");
    if (has(n, "B200")) return model("B200");
    if (has(n, "A100")) {
        int pcie = has(n, "PCIe");
        if (has(n, "80GB") || (!has(n, "40GB") && big)) return model(pcie ? "A100 PCIe 80GB" : "A100 SXM4 80GB");
        return model(pcie ? "A100 PCIe 40GB" : "A100 SXM4 40GB");
    }
    if (has(n, "V100S")) return model("V100S PCIe");
    if (has(n, "V100")) return model(has(n, "PCIe") ? "V100 PCIe" : "V100 SXM2");
    if (has(n, "2080 Ti")) return model("RTX 2080 Ti");
    if (has(n, "4090")) return model("RTX 4090");
    if (has(n, "MI325X")) return model("MI325X");
    if (has(n, "MI300X")) return model("MI300X");
    if (has(n, "MI250")) return model("MI250X (one GCD)");
    if (has(n, "MI210")) return model("MI210");
    return NULL;
}

/* Where the name says nothing (ROCm reports "" for virtual devices): compute capability (gfx942 is
 * 9.4, gfx90a 9.0), SM/CU count and memory, each combination one product. */
static const hta_device_peak *by_props(const hta_device_props *p) {
    int64_t gb = p->mem_bytes >= 0 ? p->mem_bytes >> 30 : -1;
    if (p->cc_major == 9 && p->cc_minor == 4 && p->sms == 304) return model(gb > 200 ? "MI325X" : "MI300X");
    if (p->cc_major == 9 && p->cc_minor == 0 && p->sms == 110) return model("MI250X (one GCD)");
    if (p->cc_major == 9 && p->cc_minor == 0 && p->sms == 104) return model("MI210");
    if (p->cc_major == 9 && p->cc_minor == 0 && p->sms == 132) return model(gb > 100 ? "H200 SXM" : "H100 SXM5");
    if (p->cc_major == 9 && p->cc_minor == 0 && p->sms == 114) return model("H100 PCIe");
    if (p->cc_major == 10 && p->cc_minor == 0 && p->sms == 148) return model("B200");
    if (p->cc_major == 8 && p->cc_minor == 0 && p->sms == 108) return model(gb > 50 ? "A100 SXM4 80GB" : "A100 SXM4 40GB");
    if (p->cc_major == 7 && p->cc_minor == 0 && p->sms == 80) return model("V100 SXM2");
    if (p->cc_major == 8 && p->cc_minor == 9 && p->sms == 128) return model("RTX 4090");
    if (p->cc_major == 7 && p->cc_minor == 5 && p->sms == 68) return model("RTX 2080 Ti");
    return NULL;
}

const hta_device_peak *hta_device_peak_find(const hta_device_props *p) {
    const hta_device_peak *d = p->name && *p->name ? by_name(p->name, p->mem_bytes) : NULL;
    return d ? d : by_props(p);
}

double hta_device_vector_peak(const hta_device_peak *p, hta_peak_dtype d) {
    if (!p) return 0;
    int i = d == HTA_PDT_FP64 ? 0 : d == HTA_PDT_FP16 ? 2 : d == HTA_PDT_BF16 ? 3 : 1;
    return p->vflops[i] > 0 ? p->vflops[i] : p->vflops[1];
}

int hta_rank_device_props(const hta_rank *r, int64_t device, hta_device_props *p, char *name, size_t cap) {
    *p = (hta_device_props){NULL, -1, -1, -1, -1};
    if (cap) name[0] = 0;
    const char *js = hta_rank_meta(r, "deviceProperties");
    if (!js) return 0;
    /* a flat scan of the array of flat objects Kineto writes: the keys we need, per object */
    int64_t vals[5] = {-1, -1, -1, -1, -1};
    int first = 1;
    for (const char *q0 = strchr(js, '{'); q0;) {
        const char *e = strchr(q0, '}');
        if (!e) break;
        int64_t v[5] = {-1, -1, -1, -1, -1};
        char nm[256] = "";
        static const char *const keys[5] = {"\"id\":", "\"computeMajor\":", "\"computeMinor\":", "\"numSms\":",
                                            "\"totalGlobalMem\":"};
        for (int k = 0; k < 5; k++) {
            const char *q = strstr(q0, keys[k]);
            if (q && q < e) v[k] = strtoll(op_skip_ws(q + strlen(keys[k])), NULL, 10);
        }
        const char *q = strstr(q0, "\"name\":");
        if (q && q < e) {
            q = op_skip_ws(q + 7);
            if (*q == '"') {
                const char *z = strchr(q + 1, '"');
                size_t l = z && z < e ? (size_t)(z - q - 1) : 0;
                if (l >= sizeof nm) l = sizeof nm - 1;
                memcpy(nm, q + 1, l);
                nm[l] = 0;
            }
        }
        /* the first object unless a later one is the device's */
        int mine = device >= 0 && v[0] == device;
        if (first || mine) memcpy(vals, v, sizeof v), snprintf(name, cap, "%s", nm);
        first = 0;
        if (mine) break;
        q0 = strchr(e, '{');
    }
    *p = (hta_device_props){name, vals[1], vals[2], vals[3], vals[4]};
    return 1;
}
