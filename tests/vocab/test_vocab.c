/* The name rules of hta/vocab.h: each HTA rule beside its corrected form,
 * and the profiler-step variants, on the names that tell them apart. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hta/vocab.h"
#include "../check.h"

static int listed(const char *const *l, const char *s) {
    for (; *l; l++)
        if (!strcmp(*l, s)) return 1;
    return 0;
}

int main(void) {
    /* steps: ^ProfilerStep#(\d+) */
    CHECK(hta_step_number("ProfilerStep#12") == 12);
    CHECK(hta_step_number("ProfilerStep#12x") == 12);
    CHECK(hta_step_number("ProfilerStep# 12") == -1);
    CHECK(hta_step_number("ProfilerStep#") == -1);
    CHECK(hta_step_number("ProfilerStep") == -1);
    CHECK(hta_step_number("xProfilerStep#1") == -1);
    /* iterations: ProfilerStep\s*#\s*(\d+) */
    CHECK(hta_step_iteration("ProfilerStep#7") == 7);
    CHECK(hta_step_iteration("ProfilerStep \t#\n 7 tail") == 7);
    CHECK(hta_step_iteration("ProfilerStep") == -1);
    CHECK(hta_step_iteration("ProfilerStep#x") == -1);
    CHECK(hta_step_iteration("aten::mm") == -1);
    /* TraceDiff: int() of the rest */
    int64_t n = 0;
    CHECK(hta_step_int("ProfilerStep#-3", &n) == 1 && n == -3);
    CHECK(hta_step_int("ProfilerStep# 4", &n) == 1 && n == 4);
    CHECK(hta_step_int("ProfilerStep#4x", &n) == 0);
    CHECK(hta_step_int("ProfilerStep #4", &n) == 0);

    /* shortened names: HTA's leaves an empty component where the name had one in parentheses */
    static const char *const shorten[][3] = {
        {"void at::native::(anonymous namespace)::k<float>(float*)", "at::native::k", "at::native::::k"},
        {"void (anonymous namespace)::mm_kernel<c10::BFloat16>(int)", "mm_kernel", "::mm_kernel"},
        {"torch::jit::(anonymous namespace)::DifferentiableGraphBackward", "torch::jit::DifferentiableGraphBackward",
         "torch::jit::::DifferentiableGraphBackward"},
        {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float> >(int)",
         "at::native::vectorized_elementwise_kernel", "at::native::vectorized_elementwise_kernel"},
        {"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "ncclDevKernel_AllGather_RING_LL",
         "ncclDevKernel_AllGather_RING_LL"},
        {"Memcpy DtoD (Device -> Device)", "Memcpy DtoD (Device -> Device)", "Memcpy DtoD (Device -> Device)"},
    };
    for (size_t i = 0; i < sizeof shorten / sizeof *shorten; i++) {
        char *a = hta_shorten_name(shorten[i][0]), *b = hta_shorten_name_hta(shorten[i][0]);
        CHECK(a && !strcmp(a, shorten[i][1]));
        CHECK(b && !strcmp(b, shorten[i][2]));
        free(a);
        free(b);
    }

    /* launches: HTA's lists are narrower than the calls real traces hold */
    CHECK(hta_is_launch_name("hipModuleLaunchKernel") && hta_is_launch_name("cuLaunchKernelEx"));
    CHECK(hta_is_launch_name("hipGraphLaunch") && !hta_is_launch_name("cudaMemcpyAsync"));
    CHECK(!hta_is_runtime_launch_name_hta("hipModuleLaunchKernel") && hta_is_runtime_launch_name_hta("cudaMemcpyAsync"));
    CHECK(listed(hta_runtime_launch_names_hta, "hipMemcpyWithStream"));
    CHECK(listed(hta_launch_stats_names_hta, "cudaLaunchKernelExC") && !listed(hta_launch_stats_names_hta, "cuLaunchKernel"));
    CHECK(listed(hta_launch_stats_memory_names_hta, "cudaMemsetAsync"));
    CHECK(hta_is_launch_pattern_hta("cudaLaunchKernelExC") && !hta_is_launch_pattern_hta("cudaLaunchCooperativeKernel") && hta_is_launch_pattern_hta("runFunction - x"));
    CHECK(!hta_is_launch_pattern_hta("hipLaunchKernel"));
    CHECK(hta_is_cupti_launch_name_hta("cudaLaunchKernelExC") && !hta_is_cupti_launch_name_hta("cuLaunchKernel"));
    CHECK(hta_is_runtime_lock_name_hta("cudaHostAlloc") && !hta_is_runtime_lock_name_hta("cudaLaunchKernelExC"));
    CHECK(hta_is_blocking_call_hta("cudaEventQuery") && !hta_is_blocking_call_hta("hipDeviceSynchronize"));
    CHECK(hta_is_sync_name("hipDeviceSynchronize") && !hta_is_sync_name("cudaEventQuery"));
    CHECK(hta_sync_kind_of("Stream Wait Event") == HTA_SYNC_STREAM_WAIT_EVENT);
    CHECK(hta_sync_kind_of("cudaEventRecordWithFlags") == HTA_SYNC_NONE);
    CHECK(!strcmp(hta_sync_kind_name(HTA_SYNC_CONTEXT_SYNC), "Context Sync"));

    /* communication */
    CHECK(hta_is_comm_name_hta("hipMemcpyDtoD") && !hta_is_nccl_kernel_name("hipMemcpyDtoD"));
    CHECK(!hta_is_comm_name_hta("rcclKernel_x") && hta_is_nccl_kernel_name("rcclKernel_x"));
    CHECK(!hta_is_nccl_kernel_name_hta("ncclDevKernel_AllReduce") && hta_is_nccl_kernel_name("ncclDevKernel_AllReduce"));
    /* communication beyond NCCL/RCCL (hta_is_comm_kernel_name): names as real traces write them */
    static const char *const comm[] = {
        "void dpsk::ep::internode::dispatch<false, 8, true, 8>(int*)", "void dpsk::ep::internode::combine<false, 8>(int*)",
        "void dpsk::ep::internode::notify_dispatch<false, 4>(int const*, long*)", "deep_ep::intranode::dispatch<8>",
        "void deep_ep::internode_ll::combine<false>(void*)", "nvshmemi_transfer_rma_kernel",
        "void nvshmemi_init_array_kernel<int>(int*)", "rocshmem_wg_barrier", "mscclKernel_Sum_float_Simple_false",
        "void mscclpp::allreduce7<float>(float*)", "void vllm::cross_device_reduce_1stage<float, 8>(float*)",
        "void vllm::cross_device_reduce_2stage<__nv_bfloat16, 4>(__nv_bfloat16*)",
        "void tensorrt_llm::kernels::oneShotAllReduceKernel<float, 8>(AllReduceParams)",
        "void tensorrt_llm::kernels::twoShotAllReduceKernel<float, 8>(AllReduceParams)",
        "void c10d::symmetric_memory::one_shot_all_reduce_kernel<float, 8>(float**)",
        "void quickreduce::allreduce_prototype_twoshot<half>(half*)", "multimem_all_reduce_kernel",
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)", NULL};
    for (const char *const *c = comm; *c; c++) {
        if (!hta_is_comm_kernel_name(*c)) fprintf(stderr, "test_vocab: not communication: %s\n", *c), check_fails++;
        CHECK(hta_kernel_type_of(*c) == HTA_KT_COMMUNICATION);
    }
    static const char *const notcomm[] = {
        "void cdpsk::ep::CUB_DeviceScanKernel(int)", "void deep_ep::layout::get_dispatch_layout(int*)",
        "void dpsk::ep::cuda::get_dispatch_layout<256>(long const*)", "sm90_xmma_gemm_bf16bf16",
        "void at::native::reduce_kernel<512, 1>(ReduceOp)", "oneshot_gemm", "allreduce_stats_kernel", NULL};
    for (const char *const *c = notcomm; *c; c++) {
        if (hta_is_comm_kernel_name(*c)) fprintf(stderr, "test_vocab: communication: %s\n", *c), check_fails++;
        CHECK(hta_kernel_type_of(*c) != HTA_KT_COMMUNICATION);
    }
    /* HTA's rule knows none of them */
    CHECK(hta_kernel_type_of_hta("void dpsk::ep::internode::dispatch<false, 8, true, 8>(int*)") == HTA_KT_COMPUTATION);
    CHECK(hta_is_comm_op_name("c10d::allreduce_") && hta_is_comm_op_name("record_param_comms") &&
          hta_is_comm_op_name("nccl:all_reduce") && hta_is_comm_op_name("_c10d_functional::all_reduce"));
    CHECK(!hta_is_comm_op_name("aten::mm") && !hta_is_comm_op_name("record_param_comms_x"));
    const char *globs[] = {"my_*_a2a*", "x?y"};
    CHECK(hta_name_matches_glob("my_custom_a2a_kernel", globs, 2) && hta_name_matches_glob("xzy", globs, 2));
    CHECK(!hta_name_matches_glob("my_custom_kernel", globs, 2) && !hta_name_matches_glob("x", globs, 0));
    CHECK(hta_kernel_type_of_hta("hipMemcpyDtoD") == HTA_KT_COMMUNICATION);
    CHECK(hta_kernel_type_of("hipMemcpyDtoD") == HTA_KT_MEMORY);
    CHECK(hta_kernel_type_of_hta("rcclKernel_AllReduce") == HTA_KT_COMPUTATION);
    CHECK(hta_kernel_type_of("rcclKernel_AllReduce") == HTA_KT_COMMUNICATION);
    CHECK(hta_kernel_type_of("Cijk_Ailk_Bjlk_SB_MT64x16x16") == HTA_KT_COMPUTATION);
    CHECK(hta_is_memcpy_name("hipMemcpyDtoD") && hta_is_memset_name("Memset (Device)"));
    CHECK(hta_kernel_type_of("Memcpy DtoD (Device -> Device)") == HTA_KT_MEMORY);
    CHECK(hta_kernel_type_of("xMemcpy") == HTA_KT_OTHER && hta_kernel_type_of_hta("xMemcpy") == HTA_KT_OTHER);
    CHECK(hta_kernel_type_of("Context Sync") == HTA_KT_OTHER);

    /* host calls of every vendor: the names real traces link kernels to (shared/traces/real/README.md) */
    static const char *const launches[] = {"cudaLaunchKernel", "hipLaunchKernel", "hipExtModuleLaunchKernel",
                                           "hipModuleLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel",
                                           "cuLaunchKernelEx", "hipExtLaunchKernel", "cudaLaunchKernel_ptsz",
                                           "runFunction - job_prep_and_submit_for_execution"};
    for (size_t i = 0; i < sizeof launches / sizeof *launches; i++)
        CHECK(hta_api_of(launches[i]) == (HTA_API_KERNEL_LAUNCH | HTA_API_ASYNC) ||
              !strcmp(launches[i], "runFunction - job_prep_and_submit_for_execution"));
    CHECK(hta_api_of("hipGraphLaunch") & HTA_API_GRAPH_LAUNCH && hta_api_of("cudaGraphLaunch") & HTA_API_GRAPH_LAUNCH);
    CHECK(hta_api_enqueues(hta_api_of("hipMemcpyAsync")) && hta_api_enqueues(hta_api_of("hipMemcpyWithStream")));
    CHECK(hta_api_enqueues(hta_api_of("cuMemcpyHtoDAsync_v2")) && hta_api_enqueues(hta_api_of("hipMemsetAsync")));
    CHECK(!hta_api_enqueues(hta_api_of("cudaMemcpy")) && hta_api_blocks(hta_api_of("cudaMemcpy")));
    CHECK(hta_api_blocks(hta_api_of("hipMemcpy")) && !hta_api_blocks(hta_api_of("hipMemcpyAsync")));
    CHECK(hta_api_of("hipDeviceSynchronize") == HTA_API_SYNC_DEVICE && hta_api_of("cuCtxSynchronize") == HTA_API_SYNC_DEVICE);
    CHECK(hta_api_of("hipStreamSynchronize") == HTA_API_SYNC_STREAM && hta_api_of("cudaEventSynchronize") == HTA_API_SYNC_EVENT);
    CHECK(hta_api_of("hipEventSynchronize") == HTA_API_SYNC_EVENT && hta_api_of("hipEventQuery") == HTA_API_EVENT_QUERY);
    CHECK(hta_api_of("hipEventRecord") & HTA_API_EVENT_RECORD && hta_api_of("cudaEventRecordWithFlags") & HTA_API_EVENT_RECORD);
    CHECK(hta_api_of("hipStreamWaitEvent") & HTA_API_STREAM_WAIT && hta_api_of("cudaHostAlloc") == HTA_API_HOST_ALLOC);
    /* not host calls: other libraries' names, other calls, unknown suffixes */
    CHECK(!hta_api_of("cudnnConvolutionForward") && !hta_api_of("cublasSgemm_v2") && !hta_api_of("cudaDeviceGetAttribute"));
    CHECK(!hta_api_of("hipGetDevicePropertiesR0600") && !hta_api_of("cudaLaunchKernel_x") && !hta_api_of("cu"));
    CHECK(!hta_api_of("hipStreamIsCapturing") && !hta_api_of("Memcpy HtoD (Pinned -> Device)"));
    /* the report's host_blocking and capture_trace (docs/report.md): allocator calls of both vendors block,
     * the stream-ordered ones do not; capture and code loading by name; capture queries are no capture */
    CHECK(hta_api_of("hipFree") == HTA_API_DEVICE_ALLOC && hta_api_of("cudaMalloc") == HTA_API_DEVICE_ALLOC);
    CHECK(hta_api_of("cuMemFree_v2") == HTA_API_DEVICE_ALLOC && hta_api_of("hipHostFree") == HTA_API_DEVICE_ALLOC);
    CHECK(!hta_api_of("cudaMallocAsync") && !hta_api_of("cudaFreeAsync") && !hta_api_of("cudaFuncGetAttributes"));
    CHECK(hta_api_may_block(hta_api_of("hipFree")) && hta_api_may_block(hta_api_of("hipHostMalloc")));
    CHECK(hta_api_may_block(hta_api_of("hipMemcpyWithStream")) && hta_api_may_block(hta_api_of("cudaStreamSynchronize")));
    CHECK(!hta_api_may_block(hta_api_of("cudaLaunchKernel")) && !hta_api_may_block(hta_api_of("hipStreamWaitEvent")));
    CHECK(hta_api_of("hipStreamBeginCapture") == HTA_API_CAPTURE && hta_api_of("cudaStreamEndCapture") == HTA_API_CAPTURE);
    /* the capture's checks count as capture calls: an eager run makes a few of them, a capture hundreds (the
     * report calls a trace a capture only where a quarter of its launches ran nothing: diagnose.c) */
    CHECK(hta_api_of("hipGraphInstantiateWithFlags") == HTA_API_CAPTURE &&
          hta_api_of("hipStreamGetCaptureInfo") == HTA_API_CAPTURE && !hta_api_of("cudaStreamIsCapturing"));
    CHECK(hta_api_of("cuModuleLoadData") == HTA_API_MODULE_LOAD && hta_api_of("cuLibraryLoadData") == HTA_API_MODULE_LOAD);
    /* categories of events written without cat (torch's legacy Chrome export) */
#define INFER(n, pid) hta_infer_category(n, strlen(n), pid, sizeof(pid) - 1)
    CHECK(!strcmp(INFER("ProfilerStep#2", "CPU functions"), "user_annotation"));
    CHECK(!strcmp(INFER("aten::addmm", "CPU functions"), "cpu_op"));
    CHECK(!strcmp(INFER("AddmmBackward0", ""), "cpu_op"));
    CHECK(!strcmp(INFER("AddmmBackward", ""), "cpu_op"));
    CHECK(!strcmp(INFER("detach_", ""), "cpu_op"));
    CHECK(!strcmp(INFER("record_param_comms", ""), "cpu_op"));
    CHECK(!strcmp(INFER("Optimizer.step#AdamW.step", "CPU functions"), "user_annotation"));
    CHECK(!strcmp(INFER("detached", ""), "user_annotation"));
    CHECK(!strcmp(INFER("Backward", ""), "cpu_op"));
    CHECK(!strcmp(INFER("", ""), "user_annotation"));
    CHECK(!strcmp(INFER("void at::native::kernel<float>", "CUDA functions"), "kernel"));
    CHECK(!strcmp(hta_infer_category("aten::mm", 8, NULL, 0), "cpu_op"));
#undef INFER
    if (check_fails) return 1;
    puts("test_vocab: ok");
    return 0;
}
