/* Hardware efficiency (docs/efficiency.md): how well each operator's kernels use the GPU.
 *
 *   hta_efficiency   tables `op_roofline`: per operator name and shape class, the FLOPs and bytes its
 *                    recorded shapes (record_shapes: Input Dims, Input type, Input Strides, Concrete
 *                    Inputs) imply, the GPU time of the kernels it launched, the TFLOP/s and TB/s reached,
 *                    compute- or memory-bound at the device's ridge point and the share of the roof;
 *                    `device`: the peaks used (src/analysis/device_peaks.c)
 *
 * A kernel belongs to the outermost operator with a formula on its launch's call stack (aten::linear
 * over its aten::addmm, scaled_dot_product_attention over its flash kernels), or, where none has one, to
 * the innermost operator, listed with its time and a note; never a guessed figure.  Pure: reads the
 * trace, fills `out`, never prints.
 */
#ifndef HTA_EFFICIENCY_H
#define HTA_EFFICIENCY_H

#include "hta/analysis.h"
#include "hta/util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The number formats a peak is given for: the dtype class of an operator's inputs. */
typedef enum hta_peak_dtype {
    HTA_PDT_FP64,
    HTA_PDT_FP32,
    HTA_PDT_TF32,
    HTA_PDT_FP16,
    HTA_PDT_BF16,
    HTA_PDT_FP8,
    HTA_PDT_INT8,
    HTA_PDT_FP4,
    HTA_PDT_COUNT,
    HTA_PDT_NONE = -1, /* no peak applies (integer indices, bool...) */
} hta_peak_dtype;
const char *hta_peak_dtype_name(hta_peak_dtype d); /* "fp64", "fp32", ... */

/* One GPU of the peak table: dense (no sparsity) tensor-core TFLOP/s per dtype (0: no such figure), the
 * memory bandwidth in TB/s, and where the figures come from; its scale-up link (NVLink, Infinity Fabric,
 * else the PCIe slot): GB/s per direction over all links (0: not known), what it is (NULL: not known). */
typedef struct hta_device_peak {
    const char *model;
    double tflops[HTA_PDT_COUNT];
    double tbps;
    const char *source;
    double link_gbps;
    const char *link;
    /* the vector (non-tensor, CUDA-core / SIMD) TFLOP/s of fp64, fp32, fp16, bf16 (0: not published) */
    double vflops[4];
} hta_device_peak;
/* The vector peak an operator of dtype d is held to: the dtype's own where the table has it, else fp32's
 * (PyTorch's pointwise and norm kernels compute half precision in fp32); 0 none. */
double hta_device_vector_peak(const hta_device_peak *p, hta_peak_dtype d);

/* The dtype a kernel's math runs in, as its name says (cuBLAS, cuDNN, CUTLASS and xmma names: "bf16", "f16",
 * "h1688", "tf32", "s1688" without a 16-bit type, "e4m3"...), which picks its roof: an fp32 GEMM that runs on
 * TF32 tensor cores is held to the TF32 peak, not the plain fp32 one.  HTA_PDT_NONE: the name does not say. */
hta_peak_dtype hta_kernel_math_dtype(const char *kernel_name);

/* What deviceProperties says of a GPU (-1 / NULL where absent). */
typedef struct hta_device_props {
    const char *name;
    int64_t cc_major, cc_minor, sms, mem_bytes;
} hta_device_props;
/* The columns of a part's table of its ranks' GPUs, one row a rank (comms' and efficiency's parts),
 * for a column list: ids P_RANK, then hta_device_props' P_NAME, P_CCMAJ, P_CCMIN, P_SMS, P_MEM. */
#define HTA_DEVICE_PROPS_COLS(C, P)                                                                          \
    C(P##_RANK, "rank", INT, "", "rank")                                                                     \
    C(P##_NAME, "name", STR, "", "device name, null without deviceProperties")                               \
    C(P##_CCMAJ, "cc_major", INT, "", "computeMajor, -1")                                                    \
    C(P##_CCMIN, "cc_minor", INT, "", "computeMinor, -1")                                                    \
    C(P##_SMS, "sms", INT, "", "numSms, -1")                                                                 \
    C(P##_MEM, "mem_bytes", INT, "", "totalGlobalMem, -1")

/* The table's entry for a GPU: by name first ("NVIDIA H100 80GB HBM3", "AMD Instinct MI300X VF"), then,
 * for a name the table does not know or an empty one (ROCm's virtual devices), by compute capability,
 * SM (CU) count and memory size.  NULL: unknown. */
const hta_device_peak *hta_device_peak_find(const hta_device_props *p);
/* Rank r's GPU as its deviceProperties gives it: the entry whose id is `device` (< 0, or none with it: the
 * first), its name copied into name[cap] (p->name points there).  0: the trace has no deviceProperties
 * (*p all -1, name NULL). */
int hta_rank_device_props(const hta_rank *r, int64_t device, hta_device_props *p, char *name, size_t cap);
/* Every entry, for docs and tests; *n of them. */
const hta_device_peak *hta_device_peaks(size_t *n);

typedef struct hta_efficiency_opts {
    double peak_tflops; /* > 0: this TFLOP/s for every dtype instead of the table's (--peak-tflops) */
    double peak_tbps;   /* > 0: this TB/s instead of the table's (--peak-tbps) */
    double peak_vector_tflops; /* > 0: this vector TFLOP/s for every dtype (--peak-vector-tflops) */
} hta_efficiency_opts;
void hta_efficiency_opts_default(hta_efficiency_opts *o);

#define HTA_OP_ROOFLINE(T, C, D)                                                                            \
    T("op_roofline", "per operator and shape class: FLOPs and bytes from the recorded shapes, the GPU time " \
                     "of its kernels, and how near the device's roof they run; by GPU time")                 \
    C(HTA_ROOF_OP, "op", STR, "", "operator name; (no operator) for kernels launched outside any")          \
    C(HTA_ROOF_SHAPE, "shape", STR, "",                                                                     \
      "tensor inputs' dims as recorded (Input Dims), and the arguments the formula read")                   \
    C(HTA_ROOF_DTYPE, "dtype", STR, "", "tensor inputs' dtypes (Input type)")                               \
    C(HTA_ROOF_CATEGORY, "category", STR, "", "the kernel category (hta kernels) holding most of the row's "  \
                                              "GPU time: gemm, attention, convolution, normalization, ...")  \
    C(HTA_ROOF_CALLS, "calls", INT, "", "operator calls, all ranks")                                        \
    C(HTA_ROOF_GFLOPS, "gflops", FLOAT, "GFLOP", "floating-point operations of all calls; null: bytes only " \
                                                 "or no formula")                                           \
    C(HTA_ROOF_GBYTES, "gbytes", FLOAT, "GB", "bytes read and written by all calls (inputs, outputs)")      \
    C(HTA_ROOF_GPU_US, "gpu_us", FLOAT, "us", "time of the GPU kernels, copies and sets the calls launched") \
    C(HTA_ROOF_TFLOPS, "tflops", FLOAT, "TFLOP/s", "gflops over gpu_us")                                    \
    C(HTA_ROOF_TBPS, "tbps", FLOAT, "TB/s", "gbytes over gpu_us")                                           \
    C(HTA_ROOF_INTENSITY, "intensity", FLOAT, "FLOP/B", "arithmetic intensity: gflops over gbytes")         \
    C(HTA_ROOF_BOUND, "bound", STR, "", "compute or memory: intensity against the device's ridge point")    \
    C(HTA_ROOF_PEAK_PCT, "peak_pct", FLOAT, "%",                                                            \
      "tflops of the roof at this intensity (compute: the peak of the units it runs on, `roof`; memory: "   \
      "peak TB/s times intensity); bytes-only operators: tbps of peak TB/s; null without a peak")           \
    C(HTA_ROOF_ROOF, "roof", STR, "", "the roof peak_pct is measured against: tensor DTYPE (GEMMs, "         \
                                      "convolutions, attention), vector DTYPE (norms, softmax), memory "    \
                                      "(bytes-only operators)")                                             \
    C(HTA_ROOF_US_MEDIAN, "time_us_median", FLOAT, "us", "per call: median of its kernels' time")           \
    C(HTA_ROOF_US_MIN, "time_us_min", FLOAT, "us", "per call: shortest")                                    \
    C(HTA_ROOF_US_MAX, "time_us_max", FLOAT, "us", "per call: longest")                                     \
    C(HTA_ROOF_US_STD, "time_us_std", FLOAT, "us", "per call: sample standard deviation; null for one call") \
    C(HTA_ROOF_TF_MEDIAN, "tflops_median", FLOAT, "TFLOP/s", "per call: median of one call's FLOPs over "    \
                                                             "its time; null without FLOPs")                \
    C(HTA_ROOF_TF_MIN, "tflops_min", FLOAT, "TFLOP/s", "per call: lowest")                                  \
    C(HTA_ROOF_TF_MAX, "tflops_max", FLOAT, "TFLOP/s", "per call: highest")                                 \
    C(HTA_ROOF_TF_STD, "tflops_std", FLOAT, "TFLOP/s", "per call: sample standard deviation")               \
    C(HTA_ROOF_NOTE, "note", STR, "", "why a figure is missing; null when none is")
HTA_TABLE_DECLARE(HTA_OP_ROOFLINE)

#define HTA_DEVICE_PEAK(T, C, D)                                                                            \
    T("device", "the peaks op_roofline is measured against: per GPU model of the ranks and dtype")          \
    C(HTA_DEV_NAME, "device", STR, "", "deviceProperties' name of the ranks' GPU")                          \
    C(HTA_DEV_MODEL, "model", STR, "", "the peak table's entry, 'user' for --peak-* alone, or unknown")     \
    C(HTA_DEV_RANKS, "ranks", INT, "", "ranks on this GPU")                                                 \
    C(HTA_DEV_DTYPE, "dtype", STR, "", "fp64, fp32, tf32, fp16, bf16, fp8, int8 or fp4")                    \
    C(HTA_DEV_TFLOPS, "peak_tflops", FLOAT, "TFLOP/s", "dense tensor-core peak of the dtype")                \
    C(HTA_DEV_VTFLOPS, "peak_vector_tflops", FLOAT, "TFLOP/s", "vector (non-tensor) peak of the dtype: the " \
                                                               "fp32 figure where none is published")       \
    C(HTA_DEV_TBPS, "peak_tbps", FLOAT, "TB/s", "memory bandwidth")                                         \
    C(HTA_DEV_RIDGE, "ridge", FLOAT, "FLOP/B", "intensity where compute- and memory-bound meet")            \
    C(HTA_DEV_SOURCE, "source", STR, "", "where the figures come from")
HTA_TABLE_DECLARE(HTA_DEVICE_PEAK)

hta_status hta_efficiency(hta_ctx *ctx, const hta_efficiency_opts *o, hta_result *out, hta_error *err);
/* Its two halves (docs/scaling.md, "Reduce"): per rank its GPU and, per operator and shape class, the
 * calls, the kernels' ns and the FLOPs and bytes of one call; the reduce sums calls and ns (int64) over
 * the ranks and gives the figures. */
hta_status hta_efficiency_part(hta_ctx *ctx, const hta_efficiency_opts *o, hta_result *out, hta_error *err);
hta_status hta_efficiency_reduce(const hta_efficiency_opts *o, hta_result *parts, hta_result *out,
                                 hta_error *err);
/* part folded into acc as it comes, in rank order (instead of hta_result_append): its operators' rows merged
 * per key into acc's (calls and ns summed, the calls' times kept), so that acc holds a row per operator and
 * shape class, not one per rank too; hta_efficiency_reduce of acc gives the same bytes. */
hta_status hta_efficiency_fold(hta_result *acc, hta_result *part, hta_error *err);

#ifdef __cplusplus
}
#endif
#endif
