/* The Kineto vocabulary: which names are kernels of which type, communication,
 * memory operations, launch and sync calls, profiler steps; HTA's name
 * shortening.  One place for every name rule (hta/vocab.h says where each
 * comes from). */
#include "hta/vocab.h"

#include <ctype.h>
#include <fnmatch.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int starts(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

/* Whether s is one of the NULL-terminated names. */
static int in_list(const char *const *names, const char *s) {
    for (; *names; names++)
        if (!strcmp(s, *names)) return 1;
    return 0;
}

hta_kernel_type hta_kernel_type_of_hta(const char *n) {
    if (hta_is_comm_name_hta(n)) return HTA_KT_COMMUNICATION;
    /* (the hip forms of copies never get here: rule 1 took every hip* name) */
    if (hta_is_memcpy_name(n) || hta_is_memset_name(n) || starts(n, "dma")) return HTA_KT_MEMORY;
    static const char *const pre[] = {"nccl", "Stream Wait Event", "runFunction", "hip", "job_exe", "packet",
                                      "pe_exe", "cpum_exe_subgraph", "hccl", "collective_subgraph_execution"};
    static const char *const sub[] = {"Memcpy", "Memset", "dma", "Sync"};
    for (size_t i = 0; i < sizeof pre / sizeof *pre; i++)
        if (starts(n, pre[i])) return HTA_KT_OTHER;
    for (size_t i = 0; i < sizeof sub / sizeof *sub; i++)
        if (strstr(n, sub[i])) return HTA_KT_OTHER;
    if (starts(n, "cuda") && strstr(n + 4, "LaunchKernel")) return HTA_KT_OTHER;
    return HTA_KT_COMPUTATION;
}

/* ROCm's runtime fills and copies buffers with kernels of its own (hipMemsetAsync launches
 * __amd_rocclr_fillBufferAligned): memory work, not computation. */
static int is_rocclr_fill(const char *n) { return starts(n, "__amd_rocclr_fill"); }
static int is_rocclr_copy(const char *n) { return starts(n, "__amd_rocclr_copy"); }

hta_kernel_type hta_kernel_type_of(const char *n) {
    if (hta_is_comm_kernel_name(n)) return HTA_KT_COMMUNICATION;
    if (hta_is_memcpy_name(n) || hta_is_memset_name(n) || starts(n, "dma") || is_rocclr_fill(n) ||
        is_rocclr_copy(n))
        return HTA_KT_MEMORY;
    /* host API names (a runtime row on a stream), sync records, MTIA's runtime work */
    if (hta_api_of(n)) return HTA_KT_OTHER;
    hta_kernel_type k = hta_kernel_type_of_hta(n);
    /* HTA's rule 1 calls every hip* name communication; what is left of those is computation */
    return k == HTA_KT_COMMUNICATION ? (starts(n, "hip") ? HTA_KT_OTHER : HTA_KT_COMPUTATION) : k;
}

const char *hta_kernel_type_name(hta_kernel_type k) {
    switch (k) {
    case HTA_KT_COMMUNICATION: return "COMMUNICATION";
    case HTA_KT_MEMORY: return "MEMORY";
    case HTA_KT_COMPUTATION: return "COMPUTATION";
    case HTA_KT_OTHER: return "OTHER";
    }
    return "OTHER";
}

const char *hta_memory_kernel_type(const char *name, char *buf) {
    if (starts(name, "Memset") || is_rocclr_fill(name)) return "Memset";
    if (!starts(name, "Memcpy")) return "Memcpy Unknown";
    memcpy(buf, name, 11);
    buf[11] = 0;
    return buf;
}

int hta_is_nccl_kernel_name(const char *n) {
    return starts(n, "nccl") || strstr(n, "ncclKernel") || strstr(n, "ncclDevKernel") || starts(n, "rccl") ||
           strstr(n, "rcclKernel") || starts(n, "hccl");
}

/* Whether the name holds a after removing '_' and ASCII case: "one_shot_all_reduce" and
 * "oneShotAllReduce" are one spelling.  a is lower case without '_'. */
static int has_folded(const char *n, const char *a) {
    size_t al = strlen(a);
    for (; *n; n++) {
        const char *p = n;
        size_t k = 0;
        while (*p && k < al) {
            if (*p == '_') {
                p++;
                continue;
            }
            if (tolower((unsigned char)*p) != a[k]) break;
            p++, k++;
        }
        if (k == al) return 1;
    }
    return 0;
}

int hta_is_comm_kernel_name(const char *n) {
    if (hta_is_nccl_kernel_name(n)) return 1;
    /* kernels return void: the namespace follows the return type */
    const char *b = starts(n, "void ") ? n + 5 : n;
    if (starts(b, "msccl") || starts(b, "nvshmem") || starts(b, "rocshmem") || starts(b, "c10d::")) return 1;
    if (starts(b, "dpsk::ep::") || starts(b, "deep_ep::")) return !strstr(b, "get_dispatch_layout");
    if (strstr(n, "cross_device_reduce")) return 1;
    /* one-shot / two-shot / multimem all-reduce of the custom all-reduce libraries */
    return has_folded(n, "allreduce") &&
           (has_folded(n, "oneshot") || has_folded(n, "twoshot") || has_folded(n, "multimem"));
}

int hta_is_comm_op_name(const char *n) {
    return starts(n, "c10d::") || starts(n, "_c10d_functional::") || starts(n, "c10d_functional::") ||
           !strcmp(n, "record_param_comms") || starts(n, "nccl:");
}

int hta_name_matches_glob(const char *name, const char *const *globs, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!fnmatch(globs[i], name, 0)) return 1;
    return 0;
}

int hta_is_comm_name_hta(const char *n) {
    return starts(n, "nccl") || starts(n, "hip") || starts(n, "hccl") || strstr(n, "ncclKernel");
}

int hta_is_nccl_kernel_name_hta(const char *n) { return starts(n, "ncclKernel"); }

int hta_is_memcpy_name(const char *n) { return starts(n, "Memcpy") || starts(n, "hipMemcpy"); }
int hta_is_memset_name(const char *n) { return starts(n, "Memset") || starts(n, "hipMemset"); }

/* ---- launch and sync calls ---- */

/* ---- host API calls ---- */

/* What follows the vendor prefix, with the bits it means.  Exact matches after the suffixes are cut. */
typedef struct api_word {
    const char *w;
    unsigned f;
} api_word;

static const api_word api_words[] = {
    {"LaunchKernel", HTA_API_KERNEL_LAUNCH},
    {"LaunchKernelEx", HTA_API_KERNEL_LAUNCH},
    {"LaunchKernelExC", HTA_API_KERNEL_LAUNCH},
    {"LaunchCooperativeKernel", HTA_API_KERNEL_LAUNCH},
    {"LaunchCooperativeKernelMultiDevice", HTA_API_KERNEL_LAUNCH},
    {"LaunchGrid", HTA_API_KERNEL_LAUNCH},
    {"LaunchGridAsync", HTA_API_KERNEL_LAUNCH},
    {"ExtLaunchKernel", HTA_API_KERNEL_LAUNCH},
    {"ExtLaunchMultiKernelMultiDevice", HTA_API_KERNEL_LAUNCH},
    {"ModuleLaunchKernel", HTA_API_KERNEL_LAUNCH},
    {"ExtModuleLaunchKernel", HTA_API_KERNEL_LAUNCH},
    {"HccModuleLaunchKernel", HTA_API_KERNEL_LAUNCH},
    {"ModuleLaunchCooperativeKernel", HTA_API_KERNEL_LAUNCH},
    {"ModuleLaunchCooperativeKernelMultiDevice", HTA_API_KERNEL_LAUNCH},
    {"GraphLaunch", HTA_API_GRAPH_LAUNCH},
    {"DeviceSynchronize", HTA_API_SYNC_DEVICE},
    {"CtxSynchronize", HTA_API_SYNC_DEVICE},
    {"ThreadSynchronize", HTA_API_SYNC_DEVICE},
    {"StreamSynchronize", HTA_API_SYNC_STREAM},
    {"EventSynchronize", HTA_API_SYNC_EVENT},
    {"EventQuery", HTA_API_EVENT_QUERY},
    {"StreamQuery", HTA_API_EVENT_QUERY},
    {"EventRecord", HTA_API_EVENT_RECORD},
    {"EventRecordWithFlags", HTA_API_EVENT_RECORD},
    {"StreamWaitEvent", HTA_API_STREAM_WAIT},
    {"HostAlloc", HTA_API_HOST_ALLOC},
    {"MallocHost", HTA_API_HOST_ALLOC},
    {"HostMalloc", HTA_API_HOST_ALLOC},
    {"MemHostAlloc", HTA_API_HOST_ALLOC},
    {"MemAllocHost", HTA_API_HOST_ALLOC},
    {"Malloc", HTA_API_DEVICE_ALLOC},
    {"MallocManaged", HTA_API_DEVICE_ALLOC},
    {"MallocPitch", HTA_API_DEVICE_ALLOC},
    {"Malloc3D", HTA_API_DEVICE_ALLOC},
    {"MallocArray", HTA_API_DEVICE_ALLOC},
    {"Free", HTA_API_DEVICE_ALLOC},
    {"FreeHost", HTA_API_DEVICE_ALLOC},
    {"HostFree", HTA_API_DEVICE_ALLOC},
    {"FreeArray", HTA_API_DEVICE_ALLOC},
    {"MemAlloc", HTA_API_DEVICE_ALLOC},
    {"MemAllocManaged", HTA_API_DEVICE_ALLOC},
    {"MemAllocPitch", HTA_API_DEVICE_ALLOC},
    {"MemFree", HTA_API_DEVICE_ALLOC},
    {"MemFreeHost", HTA_API_DEVICE_ALLOC},
    {"ExtMallocWithFlags", HTA_API_DEVICE_ALLOC},
    {"StreamBeginCapture", HTA_API_CAPTURE},
    {"StreamEndCapture", HTA_API_CAPTURE},
    {"GraphInstantiate", HTA_API_CAPTURE},
    {"GraphInstantiateWithFlags", HTA_API_CAPTURE},
    {"GraphInstantiateWithParams", HTA_API_CAPTURE},
    /* asked by PyTorch's allocator and torch.compile while a capture runs (hipStreamGetCaptureInfo) */
    {"StreamGetCaptureInfo", HTA_API_CAPTURE},
    {"StreamGetCaptureInfo_v2", HTA_API_CAPTURE},
    {"ModuleLoad", HTA_API_MODULE_LOAD},
    {"ModuleLoadData", HTA_API_MODULE_LOAD},
    {"ModuleLoadDataEx", HTA_API_MODULE_LOAD},
    {"ModuleLoadFatBinary", HTA_API_MODULE_LOAD},
    {"ModuleGetFunction", HTA_API_MODULE_LOAD},
    {"LibraryLoadData", HTA_API_MODULE_LOAD},
    {"LibraryLoadFromFile", HTA_API_MODULE_LOAD},
    {"LibraryGetKernel", HTA_API_MODULE_LOAD},
};

unsigned hta_api_of(const char *n) {
    /* MTIA's launch (trace-format.md §4.4) */
    if (!strcmp(n, "runFunction - job_prep_and_submit_for_execution")) return HTA_API_KERNEL_LAUNCH;
    const char *w;
    if (starts(n, "cuda")) w = n + 4;
    else if (starts(n, "hip")) w = n + 3;
    else if (starts(n, "cu")) w = n + 2;
    else return 0;
    if (*w < 'A' || *w > 'Z') return 0; /* a prefix of another word: "cudnn...", "cublas..." */
    size_t len = strlen(w);
    /* _v2, _v3, _ptsz, _ptds, _spt: the same call (per-thread default stream, versioned entry points) */
    const char *u = memchr(w, '_', len);
    if (u) {
        const char *sfx = u + 1;
        size_t sl = len - (size_t)(sfx - w);
        int known = (sl == 4 && (!memcmp(sfx, "ptsz", 4) || !memcmp(sfx, "ptds", 4))) ||
                    (sl == 3 && !memcmp(sfx, "spt", 3)) || (sl == 2 && sfx[0] == 'v' && sfx[1] >= '0' && sfx[1] <= '9');
        if (!known) return 0;
        len = (size_t)(u - w);
    }
    if (len >= 6 && !memcmp(w, "Memcpy", 6)) {
        /* stream-ordered: *Async, hipMemcpyWithStream */
        int async = strstr(w, "Async") != NULL, ordered = async || strstr(w, "WithStream") != NULL;
        return HTA_API_MEMCPY | (ordered ? HTA_API_ASYNC : 0) | (async ? 0 : HTA_API_WAITS);
    }
    if (len >= 6 && !memcmp(w, "Memset", 6)) return HTA_API_MEMSET | (strstr(w, "Async") ? HTA_API_ASYNC : 0);
    for (size_t i = 0; i < sizeof api_words / sizeof *api_words; i++)
        if (strlen(api_words[i].w) == len && !memcmp(api_words[i].w, w, len)) {
            unsigned f = api_words[i].f;
            return (f & (HTA_API_LAUNCH | HTA_API_EVENT_RECORD | HTA_API_STREAM_WAIT)) ? f | HTA_API_ASYNC : f;
        }
    return 0;
}

int hta_is_launch_name(const char *n) { return (hta_api_of(n) & HTA_API_LAUNCH) != 0; }

int hta_is_sync_name(const char *n) { return (hta_api_of(n) & HTA_API_SYNC) != 0; }

const char *const hta_runtime_launch_names_hta[] = {
    "cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx",
    "cudaMemcpyAsync", "cudaMemsetAsync", "runFunction - job_prep_and_submit_for_execution",
    "hipLaunchKernel", "hipExtModuleLaunchKernel", "hipMemcpyAsync", "hipMemsetAsync",
    "hipMemcpyWithStream", NULL};

int hta_is_runtime_launch_name_hta(const char *n) { return in_list(hta_runtime_launch_names_hta, n); }

const char *const hta_launch_stats_names_hta[] = {"cudaLaunchKernel", "cudaLaunchKernelExC",
                                                  "runFunction - job_prep_and_submit_for_execution", NULL};
const char *const hta_launch_stats_memory_names_hta[] = {"cudaMemsetAsync", "cudaMemcpyAsync", NULL};

int hta_is_launch_pattern_hta(const char *n) {
    return (starts(n, "cuda") && strstr(n + 4, "LaunchKernel")) || starts(n, "cuLaunchKernel") ||
           starts(n, "runFunction");
}

int hta_is_cupti_launch_name_hta(const char *n) { return starts(n, "cudaLaunchKernel"); }

int hta_is_runtime_lock_name_hta(const char *n) {
    static const char *const names[] = {"cudaHostAlloc", "cudaLaunchKernel", "cudaMemcpyAsync", NULL};
    return in_list(names, n);
}

int hta_is_blocking_call_hta(const char *n) {
    static const char *const names[] = {"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventQuery",
                                        "cudaEventSynchronize", "cudaMemcpy", "cudaMemcpyAsync", NULL};
    return in_list(names, n);
}

static const char *const sync_names[] = {
    [HTA_SYNC_NONE] = "",
    [HTA_SYNC_EVENT_RECORD] = "cudaEventRecord",
    [HTA_SYNC_STREAM_WAIT_CALL] = "cudaStreamWaitEvent",
    [HTA_SYNC_STREAM_WAIT_EVENT] = "Stream Wait Event",
    [HTA_SYNC_EVENT_SYNC] = "Event Sync",
    [HTA_SYNC_CONTEXT_SYNC] = "Context Sync",
    [HTA_SYNC_STREAM_SYNC] = "Stream Sync",
};

hta_sync_kind hta_sync_kind_of(const char *n) {
    for (size_t k = HTA_SYNC_NONE + 1; k < sizeof sync_names / sizeof *sync_names; k++)
        if (!strcmp(n, sync_names[k])) return (hta_sync_kind)k;
    return HTA_SYNC_NONE;
}

const char *hta_sync_kind_name(hta_sync_kind k) {
    return (size_t)k < sizeof sync_names / sizeof *sync_names ? sync_names[k] : "";
}

/* ---- profiler steps ---- */

static const char STEP[] = "ProfilerStep";

/* Digits at s into an int64 (stops growing near the top, as the callers
 * always did: a step number never gets there). */
static int64_t digits(const char *s) {
    int64_t v = 0;
    while (*s >= '0' && *s <= '9' && v < INT64_MAX / 10) v = v * 10 + (*s++ - '0');
    return v;
}

int64_t hta_step_number(const char *n) {
    if (!starts(n, STEP) || n[sizeof STEP - 1] != '#') return -1;
    n += sizeof STEP;
    return *n >= '0' && *n <= '9' ? digits(n) : -1;
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

int64_t hta_step_iteration(const char *n) {
    if (!starts(n, STEP)) return -1;
    n += sizeof STEP - 1;
    while (is_space(*n)) n++;
    if (*n++ != '#') return -1;
    while (is_space(*n)) n++;
    return *n >= '0' && *n <= '9' ? digits(n) : -1;
}

int hta_step_int(const char *n, int64_t *num) {
    if (!starts(n, STEP) || n[sizeof STEP - 1] != '#') return 0;
    n += sizeof STEP;
    char *e;
    long long v = strtoll(n, &e, 10);
    if (e == n || *e) return 0;
    *num = v;
    return 1;
}

/* ---- categories of events written without one ---- */

const char *hta_infer_category(const char *name, size_t n, const char *pid, size_t pn) {
    /* torch's legacy export puts GPU kernels on the string pid "CUDA functions" (tid = device), CPU
     * events on "CPU functions"; a kernel's name may hold "::" ("void at::native::..."), so the pid
     * decides first */
    if (pid && pn == 14 && !memcmp(pid, "CUDA functions", 14)) return "kernel";
    /* Kineto writes ProfilerStep#N as a user_annotation; HTA's iterations start with this prefix */
    if (n >= sizeof STEP - 1 && !memcmp(name, STEP, sizeof STEP - 1)) return "user_annotation";
    for (size_t i = 0; i + 1 < n; i++)
        if (name[i] == ':' && name[i + 1] == ':') return "cpu_op"; /* aten::mm, c10d::allreduce_ */
    /* autograd nodes: "AddmmBackward0" (torch >= 1.10), "AddmmBackward" before */
    size_t e = n;
    while (e > 0 && name[e - 1] >= '0' && name[e - 1] <= '9') e--;
    if (e >= 8 && !memcmp(name + e - 8, "Backward", 8)) return "cpu_op";
    /* the operators the profiler records without a namespace (Kineto files them under cpu_op): autograd's
     * detach, and c10d's record_param_comms around every collective */
    static const char *const bare_ops[] = {"detach", "detach_", "record_param_comms"};
    for (size_t i = 0; i < sizeof bare_ops / sizeof *bare_ops; i++)
        if (n == strlen(bare_ops[i]) && !memcmp(name, bare_ops[i], n)) return "cpu_op";
    return "user_annotation";
}

/* HTA's shorten_name; fix: without HTA's quirk, a component in parentheses ("(anonymous namespace)")
 * leaves no empty "::::" or leading "::" behind. */
static char *shorten(const char *name, int fix) {
    if (hta_is_memcpy_name(name) || hta_is_memset_name(name) || starts(name, "dma") ||
        (!strchr(name, '<') && !strchr(name, '(')))
        return strdup(name);
    size_t n = strlen(name);
    char *st = malloc(n + 1);
    if (!st) return NULL;
    size_t sp = 0;
    for (size_t i = 0; i < n; i++) {
        if (name[i] == '-' && name[i + 1] == '>') {
            i++;
            continue;
        }
        char c = name[i];
        if (c == '>' || c == ')') {
            char open = c == '>' ? '<' : '(';
            while (sp && st[sp - 1] != open) sp--;
            if (sp) sp--;
            continue;
        }
        st[sp++] = c;
    }
    st[sp] = 0;
    char *last = strrchr(st, ' ');
    char *res = strdup(last ? last + 1 : st);
    free(st);
    if (res && fix) {
        /* "a::(anonymous namespace)::b" became "a::::b", "void (anonymous namespace)::b" became "::b" */
        size_t w = 0;
        for (size_t i = 0; res[i];) {
            if (!strncmp(res + i, "::", 2) && (w == 0 || (w >= 2 && !strncmp(res + w - 2, "::", 2)))) {
                i += 2;
                continue;
            }
            res[w++] = res[i++];
        }
        res[w] = 0;
    }
    return res;
}

char *hta_shorten_name(const char *name) { return shorten(name, 1); }
char *hta_shorten_name_hta(const char *name) { return shorten(name, 0); }

/* ---- vendor-neutral kernel categories (docs/efficiency.md, "Kernel categories") ----
 *
 * The rules run in order, the first match wins; each names the libraries whose kernels it catches, so a
 * CUDA and a ROCm run of one model fall into the same categories.  Order matters where names share
 * words: cuDNN's implicit_convolve_sgemm and MIOpen's igemm_* are convolutions before "gemm" is tried,
 * cuBLAS's splitKreduce is GEMM before "reduce", ATen's reduce_kernel<NormTwoOps> is a reduction before
 * "norm", Triton's pointwise epilogue "triton_poi_fused_addmm_gelu" is element-wise before "mm". */

/* ASCII case-insensitive substring */
static int has_ci(const char *s, const char *p) {
    size_t n = strlen(p);
    for (; *s; s++) {
        size_t i = 0;
        while (i < n && s[i] && (s[i] | 0x20) == (p[i] | 0x20)) i++;
        if (i == n) return 1;
    }
    return 0;
}

static int any_ci(const char *s, const char *const *ps) {
    for (; *ps; ps++)
        if (has_ci(s, *ps)) return 1;
    return 0;
}

hta_kernel_category hta_kernel_category_of(const char *n) {
    hta_kernel_type kt = hta_kernel_type_of(n);
    if (kt == HTA_KT_COMMUNICATION) return HTA_KC_COMMUNICATION;
    if (kt == HTA_KT_MEMORY) return HTA_KC_MEMORY;
    /* collectives outside NCCL/RCCL: PyTorch's symmetric memory and custom all-reduce (vLLM, SGLang),
     * DeepEP, AITER's */
    static const char *const comm[] = {"all_reduce", "allreduce", "all_gather", "allgather", "reduce_scatter",
                                       "reducescatter", "alltoall", "all_to_all", "multimem", "deep_ep",
                                       "cross_device_reduce", NULL};
    if (any_ci(n, comm)) return HTA_KC_COMMUNICATION;
    /* Triton (torch.compile): the kind is in the prefix; templates are matmuls (or convolutions) */
    if (starts(n, "triton_")) {
        if (has_ci(n, "attention") || has_ci(n, "flash") || has_ci(n, "attn")) return HTA_KC_ATTENTION;
        if (starts(n, "triton_tem_")) return has_ci(n, "conv") ? HTA_KC_CONVOLUTION : HTA_KC_GEMM;
        if (starts(n, "triton_poi_")) return HTA_KC_ELEMENTWISE;
        if (starts(n, "triton_red_") || starts(n, "triton_per_"))
            return has_ci(n, "norm") || has_ci(n, "softmax") ? HTA_KC_NORMALIZATION : HTA_KC_REDUCTION;
    }
    /* FlashAttention (fmha, flash_fwd), xFormers/CUTLASS fmha, cuDNN's sdpa, AITER/CK fmha and paged
     * attention, SageAttention, vLLM's unified and paged attention */
    /* quantisation kernels (FlashInfer's carry its namespace in their arguments) are pointwise, unless
     * fused into a norm (AITER's add_rmsnorm_quant) */
    if (has_ci(n, "quantize") && !has_ci(n, "norm")) return HTA_KC_ELEMENTWISE;
    static const char *const attn[] = {"flash", "fmha", "attention", "attn_fwd", "attn_bwd", "mha_fwd",
                                       "mha_bwd", "sage_fwd", "sage_bwd", "sdpa", NULL};
    if (any_ci(n, attn)) return HTA_KC_ATTENTION;
    /* cuDNN (implicit/explicit_convolve_sgemm, *scudnn*, winograd, fprop/dgrad/wgrad engines, im2col),
     * MIOpen (igemm_fwd/bwd/wrw, naive_conv, Im2d2Col), CK (grouped_conv) */
    static const char *const conv[] = {"convolution", "convolve", "conv1d", "conv2d", "conv3d", "grouped_conv",
                                       "naive_conv", "conv_fwd", "conv_bwd", "conv_wrw", "_conv_", "scudnn", "winograd", "fprop", "dgrad", "wgrad", "im2col",
                                       "im2d2col", "igemm_fwd", "igemm_bwd", "igemm_wrw", "cask_cudnn", NULL};
    if (any_ci(n, conv) && !has_ci(n, "bn_fw") && !has_ci(n, "bn_bw")) return HTA_KC_CONVOLUTION;
    /* cuBLAS/cuBLASLt (*gemm*, nvjet, gemv, splitKreduce, dot_kernel), CUTLASS, hipBLASLt/Tensile (Cijk_),
     * CK gemm, Triton's matmul_ogs, fp4/fp8 block-scaled bmm */
    static const char *const gemm[] = {"gemm", "gemv", "nvjet", "cutlass", "cijk_", "cublas", "hipblaslt",
                                       "splitkreduce", "matmul", "dot_kernel", "bmm_", "wmma", "xmma", NULL};
    if (any_ci(n, gemm)) return HTA_KC_GEMM;
    static const char *const red[] = {"reduce", "argmax", "argmin", "amax", "criterion", "cross_entropy",
                                      "pool", "topk", NULL};
    if (any_ci(n, red)) return HTA_KC_REDUCTION;
    /* ATen's layer/group/batch norm, cuDNN's bn_fw/bn_bw, AITER/vLLM rmsnorm, softmax */
    static const char *const norm[] = {"bn_fw", "bn_bw", "softmax", "welford", NULL};
    /* "norm", but not the random "normal" kernels nor MoE routing's "renormalize" */
    if (any_ci(n, norm) || (has_ci(n, "norm") && !has_ci(n, "normal"))) return HTA_KC_NORMALIZATION;
    /* ATen's elementwise kernels and functors, copies, fills, cat, transposes; MIOpen's OpTensor */
    static const char *const elt[] = {"elementwise", "functor", "copy", "fill", "cat_", "catarray",
                                      "transpose", "tensorop", "upsample", "index", "where", "activation",
                                      "relu", "gelu", "silu", "sigmoid", "dropout", "quant", "gather",
                                      "scatter", "rotary", "nchwtonhwc", "nhwctonchw", NULL};
    if (any_ci(n, elt)) return HTA_KC_ELEMENTWISE;
    return HTA_KC_OTHER;
}

const char *hta_kernel_category_name(hta_kernel_category c) {
    static const char *const names[] = {"gemm", "attention", "convolution", "normalization", "elementwise",
                                        "reduction", "communication", "memory", "other"};
    return (unsigned)c <= HTA_KC_OTHER ? names[c] : "other";
}

/* ---- operators with a FLOP/byte formula (src/analysis/efficiency.c, docs/efficiency.md) ----
 *
 * By exact name: the argument positions of each formula are those of the ATen schema of that name. */
typedef struct op_entry {
    const char *name;
    hta_op_formula f;
    int arg;
} op_entry;

static const op_entry OPS[] = {
    {"aten::mm", HTA_OPF_MM, 0},
    {"aten::addmm", HTA_OPF_ADDMM, 0},
    {"aten::bmm", HTA_OPF_BMM, 0},
    {"aten::baddbmm", HTA_OPF_BADDBMM, 0},
    {"aten::matmul", HTA_OPF_MATMUL, 0},
    {"aten::linear", HTA_OPF_LINEAR, 0},
    {"aten::_scaled_mm", HTA_OPF_SCALED_MM, 0},
    {"aten::convolution", HTA_OPF_CONV, 0},
    {"aten::_convolution", HTA_OPF_CONV, 0},
    {"aten::conv1d", HTA_OPF_CONV_ND, 0},
    {"aten::conv2d", HTA_OPF_CONV_ND, 0},
    {"aten::conv3d", HTA_OPF_CONV_ND, 0},
    {"aten::convolution_backward", HTA_OPF_CONV_BWD, 0},
    /* is_causal's position in each schema */
    {"aten::scaled_dot_product_attention", HTA_OPF_SDPA, 5},
    {"aten::_scaled_dot_product_flash_attention", HTA_OPF_SDPA, 4},
    {"aten::_scaled_dot_product_efficient_attention", HTA_OPF_SDPA, 6},
    {"aten::_scaled_dot_product_cudnn_attention", HTA_OPF_SDPA, 6},
    {"aten::_scaled_dot_product_flash_attention_for_cpu", HTA_OPF_SDPA, 4},
    {"aten::_flash_attention_forward", HTA_OPF_FLASH_FWD, 8},
    {"aten::_efficient_attention_forward", HTA_OPF_FLASH_FWD, -9 - 1}, /* custom_mask_type */
    {"aten::_scaled_dot_product_flash_attention_backward", HTA_OPF_SDPA_BWD, 11},
    {"aten::_scaled_dot_product_efficient_attention_backward", HTA_OPF_SDPA_BWD, 11},
    {"aten::_scaled_dot_product_cudnn_attention_backward", HTA_OPF_SDPA_BWD, 14},
    {"aten::_flash_attention_backward", HTA_OPF_FLASH_BWD, 11},
    {"aten::_efficient_attention_backward", HTA_OPF_FLASH_BWD, -14 - 1}, /* custom_mask_type */
    /* the weight's position */
    {"aten::layer_norm", HTA_OPF_LAYER_NORM, 2},
    {"aten::native_layer_norm", HTA_OPF_LAYER_NORM, 2},
    {"aten::rms_norm", HTA_OPF_RMS_NORM, 2},
    {"aten::_fused_rms_norm", HTA_OPF_RMS_NORM, 2},
    {"aten::group_norm", HTA_OPF_GROUP_NORM, 2},
    {"aten::native_group_norm", HTA_OPF_GROUP_NORM, 1},
    {"aten::batch_norm", HTA_OPF_BATCH_NORM, 1},
    {"aten::native_batch_norm", HTA_OPF_BATCH_NORM, 1},
    {"aten::_native_batch_norm_legit", HTA_OPF_BATCH_NORM, 1},
    {"aten::cudnn_batch_norm", HTA_OPF_BATCH_NORM, 1},
    {"aten::miopen_batch_norm", HTA_OPF_BATCH_NORM, 1},
    {"aten::softmax", HTA_OPF_SOFTMAX, 0},
    {"aten::_softmax", HTA_OPF_SOFTMAX, 0},
    {"aten::log_softmax", HTA_OPF_SOFTMAX, 0},
    {"aten::_log_softmax", HTA_OPF_SOFTMAX, 0},
    {"aten::copy_", HTA_OPF_COPY, 0},
    {"aten::fill_", HTA_OPF_FILL, 0},
    {"aten::zero_", HTA_OPF_FILL, 0},
    /* the dim list's position */
    {"aten::sum", HTA_OPF_REDUCE, 1},
    {"aten::mean", HTA_OPF_REDUCE, 1},
    {"aten::amax", HTA_OPF_REDUCE, 1},
    {"aten::amin", HTA_OPF_REDUCE, 1},
    {"aten::linalg_vector_norm", HTA_OPF_REDUCE, 2},
    /* flash-attn 2's ops ([B,S,H,D]; is_causal's position) */
    {"flash_attn::_flash_attn_forward", HTA_OPF_FLASH_FWD, 5},
    {"flash_attn::_flash_attn_backward", HTA_OPF_FLASH_BWD, 11},
    /* flash-attn 2's variable-length ops: q [total_tokens, H, D], whose sequences' lengths are the values of
     * cu_seqlens (a tensor: not recorded); the formula says so */
    {"flash_attn::_flash_attn_varlen_forward", HTA_OPF_FLASH_FWD, 9},
    {"flash_attn::_flash_attn_varlen_backward", HTA_OPF_FLASH_BWD, 13},
    /* flash-attn 2's autograd function as a cpu_op (q, k, v, dropout_p, softmax_scale, causal, ...) */
    {"FlashAttnFunc", HTA_OPF_FLASH_FWD, 5},
    /* FlashAttention-3 (hopper): q, k, v [B,S,H,D] first, is_causal the 25th argument */
    {"flash_attn_3::fwd", HTA_OPF_FLASH_FWD, 24},
    /* AMD's AITER: q, k, v [B,S,H,D] first (mha_bwd: after dout), then dropout_p, softmax_scale, causal */
    {"aiter::_flash_attn_forward", HTA_OPF_FLASH_FWD, 5},
    {"aiter::mha_fwd", HTA_OPF_FLASH_FWD, 5},
    {"aiter::fmha_v3_fwd", HTA_OPF_FLASH_FWD, 5},
    {"aiter::wrapper_fmha_v3_fwd", HTA_OPF_FLASH_FWD_Q1, 6},
    {"aiter::_flash_attn_backward", HTA_OPF_FLASH_BWD_Q0, 12},
    {"aiter::mha_bwd", HTA_OPF_FLASH_BWD, 8},
    {"aiter::wrapper_fmha_v3_bwd", HTA_OPF_FLASH_BWD, 9},
    /* paged attention: the KV cache's per-request lengths live in the attention metadata, not the args */
    {"vllm::unified_attention", HTA_OPF_PAGED_ATTN, 0},
    {"vllm::unified_attention_with_output", HTA_OPF_PAGED_ATTN, 0},
    /* MoE token dispatch and combine (expert parallelism's all-to-all, as autograd functions) */
    {"MoEDispatch", HTA_OPF_MOE_COMM, 0},
    {"MoECombine", HTA_OPF_MOE_COMM, 0},
    /* backwards whose grad_input has self's shape (self's position) */
    {"aten::max_pool2d_with_indices_backward", HTA_OPF_GRAD_LIKE, 1},
    {"aten::avg_pool2d_backward", HTA_OPF_GRAD_LIKE, 1},
    {"aten::adaptive_avg_pool2d_backward", HTA_OPF_GRAD_LIKE, 1},
    {"aten::_adaptive_avg_pool2d_backward", HTA_OPF_GRAD_LIKE, 1},
    {"aten::mse_loss_backward", HTA_OPF_GRAD_LIKE, 1},
    {"aten::l1_loss_backward", HTA_OPF_GRAD_LIKE, 1},
    {"aten::smooth_l1_loss_backward", HTA_OPF_GRAD_LIKE, 1},
    {"aten::scatter", HTA_OPF_SCATTER, 0},
    {"aten::scatter_", HTA_OPF_SCATTER, 1},
    {"aten::scatter_add", HTA_OPF_SCATTER, 2},
    {"aten::scatter_add_", HTA_OPF_SCATTER, 3},
    {"aten::index_add", HTA_OPF_SCATTER, 6},
    {"aten::index_add_", HTA_OPF_SCATTER, 7},
    /* advanced indexing: the indices are a tensor list, whose dtypes Kineto does not record */
    {"aten::index", HTA_OPF_TENSOR_LIST, 0},
    {"aten::index_put_", HTA_OPF_TENSOR_LIST, 0},
    {"aten::mse_loss", HTA_OPF_LOSS, 0},
    {"aten::l1_loss", HTA_OPF_LOSS, 0},
    {"aten::smooth_l1_loss", HTA_OPF_LOSS, 0},
    {"aten::_grouped_mm", HTA_OPF_GROUPED_MM, 0},
    /* the weight's position */
    {"aten::native_layer_norm_backward", HTA_OPF_NORM_BWD, 5},
    {"aten::native_batch_norm_backward", HTA_OPF_NORM_BWD, 2},
    {"aten::native_group_norm_backward", HTA_OPF_NORM_BWD, 4},
    {"aten::max_pool2d", HTA_OPF_POOL, 0},
    {"aten::max_pool2d_with_indices", HTA_OPF_POOL, 1},
    {"aten::avg_pool2d", HTA_OPF_POOL, 2},
    {"aten::adaptive_avg_pool2d", HTA_OPF_ADAPTIVE_POOL, 0},
    {"aten::_adaptive_avg_pool2d", HTA_OPF_ADAPTIVE_POOL, 0},
    {"aten::upsample_nearest2d", HTA_OPF_UPSAMPLE, 0},
    {"aten::upsample_bilinear2d", HTA_OPF_UPSAMPLE, 0},
    {"aten::gather", HTA_OPF_GATHER, 0},
    {"aten::index_select", HTA_OPF_GATHER, 1},
    {"aten::cat", HTA_OPF_TENSOR_LIST, 0},
    {"aten::stack", HTA_OPF_TENSOR_LIST, 0},
    {NULL, HTA_OPF_NONE, 0},
};

/* Pointwise operators of ATen (out of place; the in-place form is the name with "_" appended). */
static const char *const ELTWISE[] = {
    "add", "sub", "mul", "div", "rsub", "neg", "abs", "exp", "log", "sqrt", "rsqrt", "pow", "reciprocal",
    "relu", "gelu", "silu", "sigmoid", "tanh", "clamp", "clamp_min", "clamp_max", "maximum", "minimum",
    "where", "masked_fill", "threshold", "hardtanh", "leaky_relu", "sin", "cos", "erf", "square", "addcmul",
    "addcdiv", "lerp", "threshold_backward", "gelu_backward", "silu_backward", "sigmoid_backward",
    "tanh_backward", NULL};

hta_op_formula hta_op_formula_of(const char *name, int *arg) {
    *arg = 0;
    for (const op_entry *e = OPS; e->name; e++)
        if (!strcmp(name, e->name)) {
            *arg = e->arg;
            return e->f;
        }
    if (!starts(name, "aten::")) return HTA_OPF_NONE;
    if (starts(name, "aten::_foreach_")) return HTA_OPF_TENSOR_LIST;
    const char *b = name + 6;
    size_t l = strlen(b);
    char base[32];
    int inplace = l > 1 && b[l - 1] == '_' && l < sizeof base;
    if (inplace) {
        memcpy(base, b, l - 1);
        base[l - 1] = 0;
        b = base;
    }
    if (in_list(ELTWISE, b)) return inplace ? HTA_OPF_ELTWISE_INPLACE : HTA_OPF_ELTWISE;
    return HTA_OPF_NONE;
}
