/* The Kineto vocabulary: how names tell kernel types, communication and
 * memory operations apart, and HTA's name shortening (analyses.md §0.4, §1).
 * Every name rule of the project lives here (src/core/vocab.c); where HTA's
 * rule is narrower than what traces really hold, both are here, HTA's with
 * the suffix _hta, so each caller says which it means. */
#ifndef HTA_VOCAB_H
#define HTA_VOCAB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum hta_kernel_type {
    HTA_KT_COMMUNICATION,
    HTA_KT_MEMORY,
    HTA_KT_COMPUTATION,
    HTA_KT_OTHER,
} hta_kernel_type;
/* Kernel types (analyses.md §1), from the full kernel name.  hta_kernel_type_of
 * is the corrected rule: communication is any kernel hta_is_comm_kernel_name
 * names (NCCL/RCCL/HCCL, MSCCL, DeepEP, NVSHMEM, custom all-reduce), copies
 * and sets of both vendors are memory,
 * sync records, host API names and MTIA's runtime work are other.
 * hta_kernel_type_of_hta is HTA's get_kernel_type, which calls every hip*
 * name communication and misses RCCL's and NCCL >= 2.19's kernels. */
hta_kernel_type hta_kernel_type_of(const char *name);
hta_kernel_type hta_kernel_type_of_hta(const char *name);
const char *hta_kernel_type_name(hta_kernel_type k); /* "COMMUNICATION", ... */
/* "Memset", "Memcpy Unknown" or the first 11 characters ("Memcpy DtoH"); buf >= 12 bytes. */
const char *hta_memory_kernel_type(const char *name, char *buf);
/* Communication under any NCCL/RCCL/HCCL naming (ncclKernel_*, ncclDevKernel_*
 * of NCCL >= 2.19, RCCL's), by name: the corrected rule, used unless a caller
 * reproduces HTA. */
int hta_is_nccl_kernel_name(const char *name);
/* Communication kernels by name, the corrected rule (docs/differences-from-hta.md, "Communication
 * kernels"): the NCCL family above; MSCCL and MSCCL++ (msccl*); DeepEP's dispatch/combine kernels
 * (dpsk::ep::, deep_ep::, but not its get_dispatch_layout, which only counts tokens on one GPU);
 * NVSHMEM and rocSHMEM (nvshmem*, rocshmem*); custom all-reduce kernels: vLLM's and SGLang's
 * cross_device_reduce_*, one-shot and two-shot all-reduces (TensorRT-LLM's oneShotAllReduceKernel,
 * PyTorch's symmetric-memory one_shot_all_reduce, ROCm quick-reduce's *_twoshot), multimem all-reduces,
 * and every kernel of PyTorch's c10d:: namespace.  A leading return type ("void ") is skipped, so a
 * namespace is matched at the start of the name only (DeepSeek's traces also hold CUB kernels in a
 * cdpsk::ep:: namespace, which are not DeepEP's). */
int hta_is_comm_kernel_name(const char *name);
/* The operators whose kernels are communication, whatever their names (hta_ctx_kernel_types): c10d's
 * (c10d::allreduce_, c10d::alltoall_base_, ..., and the functional collectives' _c10d_functional::*),
 * record_param_comms (around every collective of PyTorch >= 2.1) and ProcessGroupNCCL's nccl:* ranges. */
int hta_is_comm_op_name(const char *name);
/* 1 when name matches one of the n fnmatch(3) globs (--comm-kernel): the full kernel name. */
int hta_name_matches_glob(const char *name, const char *const *globs, size_t n);
/* HTA's communication rule of get_kernel_type (analyses.md §1): starts with
 * nccl, hip or hccl, or contains ncclKernel.  (It calls every hip* name
 * communication and misses RCCL's.) */
int hta_is_comm_name_hta(const char *name);
/* HTA's straggler rule (analyses.md §14): starts with ncclKernel, so NCCL >=
 * 2.19's ncclDevKernel_* is missed. */
int hta_is_nccl_kernel_name_hta(const char *name);

/* GPU copies and sets by activity name: CUDA's "Memcpy HtoD (...)" and
 * "Memset (Device)", and the hipMemcpy* / hipMemset* names HIP gives them
 * (both forms are in HTA's memory rule, analyses.md §1). */
int hta_is_memcpy_name(const char *name);
int hta_is_memset_name(const char *name);

/* ---- host API calls of every vendor ---- */

/* What a host call does, by its name, for CUDA's runtime (cuda*) and driver
 * (cu*), HIP (hip*) and MTIA: one table used by every analysis (launch
 * statistics, ATen ops, CUPTI, queue lengths, idle time, the critical path).
 * Versioned and per-thread-stream suffixes (_v2, _ptsz, _ptds, _spt) are
 * ignored.  /work/shared/traces/real/README.md lists the names real traces
 * link kernels to. */
enum {
    HTA_API_KERNEL_LAUNCH = 1 << 0, /* launches one kernel (cudaLaunchKernel, cuLaunchKernelEx, hipModuleLaunchKernel...) */
    HTA_API_GRAPH_LAUNCH = 1 << 1,  /* replays a graph: many kernels under one correlation id */
    HTA_API_MEMCPY = 1 << 2,        /* cudaMemcpy*, cuMemcpy*, hipMemcpy* */
    HTA_API_MEMSET = 1 << 3,        /* cudaMemset*, cuMemset*, hipMemset* */
    HTA_API_ASYNC = 1 << 4,         /* stream-ordered: returns before the device work is done */
    HTA_API_SYNC_DEVICE = 1 << 5,   /* waits for all device work (Device/Ctx/ThreadSynchronize) */
    HTA_API_SYNC_STREAM = 1 << 6,   /* waits for one stream */
    HTA_API_SYNC_EVENT = 1 << 7,    /* waits for a recorded event */
    HTA_API_EVENT_QUERY = 1 << 8,   /* polls an event or a stream */
    HTA_API_EVENT_RECORD = 1 << 9,
    HTA_API_STREAM_WAIT = 1 << 10,  /* makes a stream wait for an event (no host wait) */
    HTA_API_HOST_ALLOC = 1 << 11,   /* pinned host memory (takes the runtime's lock) */
    HTA_API_WAITS = 1 << 12,        /* a copy that returns when it is done, stream-ordered or not
                                     * (cudaMemcpy, hipMemcpy, hipMemcpyWithStream) */
    HTA_API_DEVICE_ALLOC = 1 << 13, /* the allocator's device calls, which synchronise the device or take
                                     * the driver's lock: cudaMalloc, cudaFree, cudaFreeHost, hipMalloc,
                                     * hipFree, hipHostFree, cuMemAlloc, cuMemFree (not the stream-ordered
                                     * MallocAsync / FreeAsync) */
    HTA_API_CAPTURE = 1 << 14,      /* graph capture: StreamBeginCapture, StreamEndCapture, GraphInstantiate,
                                     * StreamGetCaptureInfo (asked while capturing; an eager run asks a few times) */
    HTA_API_MODULE_LOAD = 1 << 15,  /* code loading (lazy loading on a kernel's first launch):
                                     * cuModuleLoad*, cuLibraryLoad*, hipModuleLoad*, ModuleGetFunction */
};
#define HTA_API_LAUNCH (HTA_API_KERNEL_LAUNCH | HTA_API_GRAPH_LAUNCH)
#define HTA_API_SYNC (HTA_API_SYNC_DEVICE | HTA_API_SYNC_STREAM | HTA_API_SYNC_EVENT)
/* The HTA_API_* bits of a host call's name; 0 for anything else. */
unsigned hta_api_of(const char *name);
/* Calls that put work on a device queue: launches and stream-ordered copies
 * and sets (the +1 of a queue length). */
static inline int hta_api_enqueues(unsigned f) {
    return (f & HTA_API_LAUNCH) || ((f & (HTA_API_MEMCPY | HTA_API_MEMSET)) && (f & HTA_API_ASYNC));
}
/* Calls after which the host has waited for the device: syncs, and copies
 * without Async in the name (cudaMemcpy, hipMemcpy, and hipMemcpyWithStream,
 * which is stream-ordered but returns when the copy is done: PyTorch's
 * .item() and .cpu() on ROCm). */
static inline int hta_api_blocks(unsigned f) { return (f & HTA_API_SYNC) || (f & HTA_API_WAITS); }
/* Calls that can hold the host while the device idles or its later work waits (the report's
 * host_blocking): the blocking ones above, pinned and device allocation and frees, code loading. */
static inline int hta_api_may_block(unsigned f) {
    return hta_api_blocks(f) || (f & (HTA_API_HOST_ALLOC | HTA_API_DEVICE_ALLOC | HTA_API_MODULE_LOAD));
}

/* ---- launch and sync calls ---- */

/* Kernel and graph launches of every vendor (hta_api_of & HTA_API_LAUNCH).
 * HTA's analyses use narrower lists (the *_hta rules below). */
int hta_is_launch_name(const char *name);
/* Host calls that wait for the device (hta_api_of & HTA_API_SYNC). */
int hta_is_sync_name(const char *name);

/* HTA's "runtime launch" names (trace-format.md §4.4,
 * trace_symbol_table.py get_runtime_launch_events_mask): queue length and
 * critical-path launch edges.  NULL-terminated, for symbol look-ups. */
extern const char *const hta_runtime_launch_names_hta[];
int hta_is_runtime_launch_name_hta(const char *name);
/* HTA's kernel launch statistics (trace-format.md §4.4,
 * cuda_kernel_analysis.py): the launches, and the memory calls added with
 * include_memory_events.  NULL-terminated. */
extern const char *const hta_launch_stats_names_hta[];
extern const char *const hta_launch_stats_memory_names_hta[];
/* HTA's KERNEL_LAUNCH_CATEGORY_PATTERN (trace-format.md §4.4, ATen op
 * analysis): re.match of (cuda.*LaunchKernel)|(cuLaunchKernel)|(^runFunction). */
int hta_is_launch_pattern_hta(const char *name);
/* HTA's CUPTI counter analysis (analyses.md §13): names starting with
 * cudaLaunchKernel. */
int hta_is_cupti_launch_name_hta(const char *name);
/* HTA's critical-path runtime lock (critical-path.md, trace-format.md §4.4):
 * cudaHostAlloc, cudaLaunchKernel, cudaMemcpyAsync. */
int hta_is_runtime_lock_name_hta(const char *name);
/* HTA's critical-path blocking calls (trace-format.md §4.4): CUDA's device,
 * stream and event syncs, cudaEventQuery, cudaMemcpy, cudaMemcpyAsync. */
int hta_is_blocking_call_hta(const char *name);

/* The CUDA calls and cuda_sync activities the critical path links events by
 * (trace-format.md §4.4 "CP event-sync machinery"). */
typedef enum hta_sync_kind {
    HTA_SYNC_NONE,
    HTA_SYNC_EVENT_RECORD,      /* cudaEventRecord */
    HTA_SYNC_STREAM_WAIT_CALL,  /* cudaStreamWaitEvent */
    HTA_SYNC_STREAM_WAIT_EVENT, /* "Stream Wait Event" (cuda_sync) */
    HTA_SYNC_EVENT_SYNC,        /* "Event Sync" */
    HTA_SYNC_CONTEXT_SYNC,      /* "Context Sync" */
    HTA_SYNC_STREAM_SYNC,       /* "Stream Sync" */
} hta_sync_kind;
hta_sync_kind hta_sync_kind_of(const char *name);
const char *hta_sync_kind_name(hta_sync_kind k); /* the name itself; "" for none */

/* ---- profiler steps ---- */

/* HTA's ProfilerStepGroupingPattern `^ProfilerStep#(\d+)` (trace-format.md
 * §9, §10.2: trace filtering; also our step counts and merge barriers): N
 * (saturating), or -1. */
int64_t hta_step_number(const char *name);
/* HTA's iteration of a row (trace-format.md §8) and straggler steps
 * (analyses.md §14.1): names starting with
 * ProfilerStep, numbered by `ProfilerStep\s*#\s*(\d+)` (\s: ASCII white
 * space): N, or -1 (HTA asserts on a ProfilerStep name that does not match;
 * it is no step here). */
int64_t hta_step_iteration(const char *name);
/* TraceDiff's iterations() (analyses.md §15): Python's int() of the name
 * after "ProfilerStep#" (sign and leading white space allowed, nothing
 * after): 1 with *n, or 0. */
int hta_step_int(const char *name, int64_t *n);

/* ---- categories of events written without one ---- */

/* The category an event with no "cat" key at all gets (docs/loading.md,
 * "Events without cat"): the PyTorch autograd profiler's Chrome export
 * (torch <= 1.13, export_chrome_trace) writes none.  By what Kineto writes
 * for the same events: a row on the legacy exporter's GPU process (pid
 * "CUDA functions") is a "kernel"; ProfilerStep* is a "user_annotation";
 * operators ("ns::op", autograd nodes "XBackward0", the unprefixed "detach",
 * "detach_", "record_param_comms") are "cpu_op"; any other name is a record_function range,
 * "user_annotation".  name: [name, name + n), not terminated; pid: the
 * pid's text when it is a string (NULL otherwise), [pid, pid + pn). */
const char *hta_infer_category(const char *name, size_t n, const char *pid, size_t pn);

/* HTA's shorten_name (analyses.md §0.4) into a malloc'ed string (NULL when out of memory): templates,
 * arguments and the return type removed.  hta_shorten_name drops the empty components HTA leaves where
 * a name had one in parentheses: "at::native::(anonymous namespace)::k<...>(...)" gives
 * "at::native::k", where HTA's rule (the _hta variant, for HTA's own tables) gives
 * "at::native::::k". */
char *hta_shorten_name(const char *name);
char *hta_shorten_name_hta(const char *name);

/* ---- vendor-neutral kernel categories and operator formulas (docs/efficiency.md) ---- */

/* What a GPU kernel does, by its name, the same for CUDA and ROCm libraries (cuBLAS/hipBLASLt/Tensile,
 * cuDNN/MIOpen/CK, FlashAttention/AITER, NCCL/RCCL, ATen's own kernels, Triton): `kernels`' category
 * column and `diff --by category`. */
typedef enum hta_kernel_category {
    HTA_KC_GEMM,
    HTA_KC_ATTENTION,
    HTA_KC_CONVOLUTION,
    HTA_KC_NORMALIZATION, /* layer/RMS/group/batch norm, softmax */
    HTA_KC_ELEMENTWISE,   /* pointwise, copies and layout changes done by kernels, fills */
    HTA_KC_REDUCTION,     /* sums, means, max, losses, pooling */
    HTA_KC_COMMUNICATION,
    HTA_KC_MEMORY,        /* memcpy and memset activities (and ROCm's copy/fill kernels) */
    HTA_KC_OTHER,
} hta_kernel_category;
hta_kernel_category hta_kernel_category_of(const char *name);
const char *hta_kernel_category_name(hta_kernel_category c); /* "gemm", "attention", ... */

/* The FLOP/byte formula of an operator (a cpu_op name), src/analysis/efficiency.c. */
typedef enum hta_op_formula {
    HTA_OPF_NONE = 0,
    HTA_OPF_MM,          /* aten::mm (a[M,K], b[K,N]) */
    HTA_OPF_ADDMM,       /* aten::addmm (bias, a, b) */
    HTA_OPF_BMM,         /* aten::bmm (a[B,M,K], b[B,K,N]) */
    HTA_OPF_BADDBMM,     /* aten::baddbmm (bias, a, b) */
    HTA_OPF_MATMUL,      /* aten::matmul (broadcast batch) */
    HTA_OPF_LINEAR,      /* aten::linear (x[...,K], w[N,K], bias) */
    HTA_OPF_SCALED_MM,   /* aten::_scaled_mm (a, b, scale_a, scale_b, bias, scale_result, out_dtype) */
    HTA_OPF_CONV,        /* aten::convolution, _convolution (input, weight, bias, stride, padding, dilation,
                          * transposed, output_padding, groups) */
    HTA_OPF_CONV_ND,     /* aten::conv1d/2d/3d (input, weight, bias, stride, padding, dilation, groups) */
    HTA_OPF_CONV_BWD,    /* aten::convolution_backward (grad_out, input, weight, bias_sizes, stride, padding,
                          * dilation, transposed, output_padding, groups, output_mask) */
    HTA_OPF_SDPA,        /* aten::scaled_dot_product_attention and its fused forwards, [B,H,S,D] */
    HTA_OPF_FLASH_FWD,   /* aten::_flash_attention_forward, _efficient_attention_forward, [B,S,H,D] */
    HTA_OPF_SDPA_BWD,    /* aten::_scaled_dot_product_*_attention_backward, [B,H,S,D] */
    HTA_OPF_FLASH_BWD,   /* aten::_flash_attention_backward, _efficient_attention_backward, [B,S,H,D] */
    HTA_OPF_LAYER_NORM,  /* aten::layer_norm, native_layer_norm */
    HTA_OPF_RMS_NORM,    /* aten::rms_norm, _fused_rms_norm */
    HTA_OPF_GROUP_NORM,  /* aten::group_norm, native_group_norm */
    HTA_OPF_BATCH_NORM,  /* aten::batch_norm, native_batch_norm, cudnn/miopen_batch_norm */
    HTA_OPF_SOFTMAX,     /* aten::softmax, _softmax, log_softmax, _log_softmax */
    HTA_OPF_ELTWISE,     /* pointwise (bytes only): inputs read, the broadcast output written */
    HTA_OPF_ELTWISE_INPLACE, /* pointwise in place (add_, mul_, ...): inputs read, the first written */
    HTA_OPF_COPY,        /* aten::copy_ (dst, src): src read, dst written */
    HTA_OPF_FILL,        /* aten::fill_, zero_: the tensor written */
    HTA_OPF_REDUCE,      /* aten::sum, mean, amax, ... (self, dim, keepdim): input read, reduced output */
    HTA_OPF_GROUPED_MM,  /* aten::_grouped_mm (mat_a, mat_b, offs, bias, out_dtype): MoE's grouped GEMM */
    HTA_OPF_NORM_BWD,    /* native_{layer,batch,group}_norm_backward: bytes only (arg: the weight's position) */
    HTA_OPF_POOL,        /* max_pool2d (arg 0), max_pool2d_with_indices (1), avg_pool2d (2) */
    HTA_OPF_ADAPTIVE_POOL, /* adaptive_avg_pool2d, _adaptive_avg_pool2d (self, output_size) */
    HTA_OPF_UPSAMPLE,    /* upsample_nearest2d / bilinear2d (self, output_size, ...): bytes only */
    HTA_OPF_GATHER,      /* gather (self, dim, index) and index_select (self, dim, index; arg 1): bytes only */
    HTA_OPF_TENSOR_LIST, /* cat, stack, _foreach_*: tensor lists, whose dtype Kineto does not record */
    HTA_OPF_FLASH_FWD_Q1, /* AITER's wrapper_fmha_v3_fwd: as _FLASH_FWD with q, k, v at 1, 2, 3 */
    HTA_OPF_FLASH_BWD_Q0, /* AITER's _flash_attn_backward: as _FLASH_BWD with q, k, v at 0, 1, 2 */
    HTA_OPF_MOE_COMM,    /* MoE dispatch / combine (tokens[T, hidden]): the payload's bytes, no FLOPs */
    HTA_OPF_PAGED_ATTN,  /* paged attention (vLLM's unified_attention): needs the KV cache's lengths */
    HTA_OPF_GRAD_LIKE,   /* a backward (grad_output, self, ...; arg: self's position) writing grad_input like
                          * self: pooling backwards, mse_loss_backward: bytes only */
    HTA_OPF_LOSS,        /* mse_loss, l1_loss, ... (self, target, reduction): bytes only */
    HTA_OPF_SCATTER,     /* scatter(_add)(_) (self, dim, index, src), index_add(_) (self, dim, index, source):
                          * bytes only; arg: bit 0 in place (else self copied first), bit 1 adds (a read-
                          * modify-write), bit 2 index_add (one element per source element, not index's) */
} hta_op_formula;
/* The formula of operator `name`; HTA_OPF_NONE for a name without one. *arg: for HTA_OPF_SDPA,
 * _FLASH_FWD, _SDPA_BWD, _FLASH_BWD the position of the causal flag in Concrete Inputs (a negative
 * position -p-1: a mask type, causal when not 0), for HTA_OPF_REDUCE the position of the dim list,
 * for the norms the position of the weight (affine when it is a tensor). */
hta_op_formula hta_op_formula_of(const char *name, int *arg);

#ifdef __cplusplus
}
#endif
#endif
