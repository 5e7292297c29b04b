#!/usr/bin/env python3
# hta's trace generator: deterministic multi-rank Kineto traces for the tests and benches (the project's own copy).
"""Synthetic PyTorch-profiler (Kineto) multi-rank trace generator.

Writes realistic, physically consistent Kineto chrome-trace files
``rank-0.json[.gz]`` ... ``rank-<N-1>.json[.gz]`` for one profiled window of a
distributed training job, for benchmarking and testing trace-analysis tools.
Python 3 standard library only.  Output is byte-for-byte deterministic for a
given seed and option set (independent of --jobs and of the output path).

Usage
-----
  gen_kineto_trace.py --out DIR [--ranks 2] [--steps 5] [--target-mb 100] [--seed 0]
                      [--gzip] [--ns | --time-format modern|ns|legacy] [--straggler R]
                      [--mode fsdp|ddp] [--vendor cuda|hip] [--validate] [more options: --help]
  gen_kineto_trace.py --validate-only DIR [--skew-tolerance-us US]

  # 8 ranks, ~100 MB uncompressed each, rank 3 straggles, gzipped, then check
  gen_kineto_trace.py --out /tmp/tr8 --ranks 8 --steps 5 --target-mb 100 \
      --straggler 3 --gzip --validate
  # tiny 2-rank trace with ns-resolution timestamps (e.g. for HTA smoke tests)
  gen_kineto_trace.py --out /tmp/tr2 --ranks 2 --steps 3 --layers 4 --ns

Size / speed
  --target-mb MB    approximate *uncompressed* size per rank.  Two tiny dry runs
                    measure bytes per (layer, step); the number of transformer
                    layers (= kernels per step) is chosen to hit the target.
                    --layers N sets it directly.  ~55 MB/s per core (about 2 s
                    per 100 MB rank); gzip level 1 (default) costs little.
  --jobs N          worker processes; ranks are simulated in lock-step and
                    exchange collective arrival times over pipes (default
                    min(ranks, cpus-1)).

Timestamp formats (--time-format)
  modern (default)  ts/dur = microseconds with 3 decimals (ns resolution)
                    relative to baseTimeNanoseconds; displayTimeUnit "ms"
                    (PyTorch >= 2.4 Kineto).
  ns (--ns)         ns-resolution variant: absolute epoch microseconds with 3
                    decimals, displayTimeUnit "ns", no baseTimeNanoseconds (like
                    HTA tests/data/ns_resolution_trace).  ~1.7e15 us exceeds
                    double precision, exactly as in real traces of that kind.
  legacy            integer absolute epoch microseconds, no displayTimeUnit /
                    baseTimeNanoseconds (PyTorch <= 2.2 era Kineto).

Workload (identical collective sequence on every rank)
  Per ProfilerStep#k (main thread): DataLoader fetch (user_annotation
  "enumerate(DataLoader)#..."; in stall steps a long, CPU-busy run of
  python_function frames while the GPU idles), H2D batch copy on stream 24 +
  cudaEventRecord/cudaStreamWaitEvent into stream 7, zero_grad, forward
  (nested cpu_op trees, e.g. aten::linear -> aten::addmm -> cudaLaunchKernel,
  aten::linear -> aten::matmul -> aten::mm, flash attention, layer_norm, gelu,
  MoE router/experts), loss, backward on the autograd thread (pt_autograd_0,
  "autograd::engine::evaluate_function: XBackward0" nodes, AccumulateGrad,
  fwdbwd flows), grad clipping + AdamW (multi_tensor_apply kernels, or
  per-parameter tiny kernels with --optimizer forloop), loss.item() (D2H
  memcpy + cudaStreamSynchronize), plus cudaEventSynchronize timing on even
  steps and cudaDeviceSynchronize every third step.
  --mode fsdp (default): FSDP2-style per-layer AllGather (bf16) in forward and
  backward, ReduceScatter (f32) in backward, grad-norm AllReduce (f32).
  --mode ddp: bucketed AllReduce (f32) in backward, copy_bucket_to_grad DtoD
  memcpys.  --mode tp: Megatron-style tensor parallelism over all ranks (one
  group of --ranks): QKV and fc1 split by columns, the attention's heads and
  the output projection and fc2 by rows, each block's two row-parallel outputs
  all-reduced in bf16 in forward ([tokens, hidden]) and the two column-parallel
  inputs' gradients in backward; no gradient all-reduce (no data parallelism).
  All: MoE all_to_all (ncclDevKernel_SendRecv) every --moe-every
  layers.  NCCL kernels: ncclDevKernel_AllReduce_Sum_f32_RING_LL,
  ncclDevKernel_AllGather_RING_LL, ncclDevKernel_ReduceScatter_Sum_f32_RING_LL,
  ncclDevKernel_SendRecv, on stream 20, with collective args (Collective name,
  In/Out msg nelems, Group size, dtype, Process Group *, Seq).

Physical model
  Per-thread CPU clocks; every GPU op starts after its launch call returned;
  ops on one stream never overlap; cudaStreamWaitEvent / Stream Sync / Context
  Sync / Event Sync honoured; launch queue bounded at 1024 pending ops
  (cudaLaunchKernel then blocks); every rank's NCCL kernel ends after the last
  rank arrived (max arrival + size-dependent transfer time, NVLink inside a
  node of 8, IB across nodes).  Rank skew: per-rank CPU/GPU speed factors,
  start offsets and data-loading stalls; --straggler R makes rank R
  --straggler-slowdown (default 1.25x) slower on GPU (half that on CPU) with
  more frequent, longer stalls.  --cpu-scale / --gpu-scale (defaults 2.0 / 1.0)
  shift the balance between launch-bound and GPU-bound phases.

Realism options
  --window-cut      the last step has no trailing sync and the profiling window
                    closes while the GPU is busy: trailing GPU ops are dropped,
                    leaving launches with lone ac2g "s" flows (as in real traces).
  --clock-skew-us X per-node host clock offset (ranks 0-7 unskewed).
  --counters        Kineto hardware-counter tracks (ph "C", pid "GPU N Counters").
  --profile-memory  "[memory]" cpu_instant_event allocation events.
  --no-stack        no python_function events (with_stack=False).

Per-rank file contents
  Top level: schemaVersion, deviceProperties (8x NVIDIA A100-SXM4-80GB),
  distributedInfo {backend, rank, world_size, pg_count, pg_config,
  nccl_version}, record_shapes, with_stack, [profile_memory], trace_id,
  [displayTimeUnit], [baseTimeNanoseconds], traceEvents, traceName.
  traceEvents, in Kineto file order: autograd-thread CPU events, main-thread
  CPU events (cpu_op / user_annotation / python_function, pre-order, with
  fwdbwd flows), then cuda_runtime + GPU activity (kernel / gpu_memcpy /
  gpu_memset / cuda_sync) with ac2g flows (s on the runtime call, f on the GPU
  op; lone f on non-launch runtime calls, as Kineto emits), gpu_user_annotation,
  [counters], ph M metadata (process_name/labels/sort_index, thread_name/
  sort_index), the "PyTorch Profiler (0)" Trace span and ph i markers.

Vendor (--vendor cuda|hip)
  cuda (default)    CUPTI's rows on an NVIDIA A100, as above.
  hip               what PyTorch on ROCm (Kineto's roctracer path) writes for the
                    same job, with the same times (the random draws are the same):
                    HIP calls (hipLaunchKernel; hipExtModuleLaunchKernel for
                    hipBLASLt's Tensile GEMMs "Cijk_*"; hipModuleLaunchKernel for
                    AOTriton's flash attention "attn_fwd"/"bwd_*"; hipExtLaunchKernel
                    for RCCL's "ncclDevKernel_Generic_1"; hipMemcpyAsync,
                    hipMemsetAsync, hipEvent*/hipStream* calls, hipHostMalloc) whose
                    launch and copy rows carry "stream": "0x..." (the stream's
                    handle), "cid" and the launch config; .item() is one blocking
                    hipMemcpyWithStream (no stream sync call); a memset is the
                    runtime's kernel __amd_rocclr_fillBufferAligned; no cuda_sync
                    records; GPU streams are ROCm's queue numbers (7 -> 0, copy 24 -> 1,
                    RCCL 20 -> 2); deviceProperties of an AMD Instinct MI300X.

Validation (--validate / --validate-only DIR) json-loads every file (exact
decimal timestamps) and checks: per-stream GPU ops never overlap; every GPU op
has a launch runtime call with its correlation, starts after it, and has a
matching ac2g s/f pair; CPU events nest properly per thread; every cuda_sync
lies inside its runtime call and Stream/Context/Event Sync return only after
the awaited work finished; after a Stream Wait Event the next op on the
waiting stream starts after the awaited work; fwdbwd flows bind to cpu_ops;
identical NCCL sequence on all ranks and no NCCL kernel ends before the last
rank arrived (within --skew-tolerance-us).
"""

import argparse
import gzip
import heapq
import json
import os
import random
import shutil
import sys
import time

# ---------------------------------------------------------------------------
# Static data (from real traces)
# ---------------------------------------------------------------------------

A100_PROPS = ('"name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 84990623744,\n'
              '      "computeMajor": 8, "computeMinor": 0,\n'
              '      "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,\n'
              '      "regsPerBlock": 65536, "regsPerMultiprocessor": 65536, "warpSize": 32,\n'
              '      "sharedMemPerBlock": 49152, "sharedMemPerMultiprocessor": 167936,\n'
              '      "numSms": 108, "sharedMemPerBlockOptin": 166912')
NUM_SMS = 108
GPUS_PER_NODE = 8

CBID = {
    'cudaLaunchKernel': 211, 'cudaLaunchKernelExC': 430, 'cudaMemcpyAsync': 41,
    'cudaMemsetAsync': 51, 'cudaStreamSynchronize': 131, 'cudaDeviceSynchronize': 165,
    'cudaEventRecord': 135, 'cudaStreamWaitEvent': 147, 'cudaEventSynchronize': 137,
    'cudaEventQuery': 138, 'cudaEventElapsedTime': 139, 'cudaStreamIsCapturing': 317,
    'cudaFuncSetAttribute': 273, 'cudaStreamGetCaptureInfo_v2': 409, 'cudaHostAlloc': 27,
    'cudaPeekAtLastError': 11, 'cudaDeviceGetAttribute': 200,
    'cudaOccupancyMaxActiveBlocksPerMultiprocessor': 210,
}
LAUNCH_APIS = ('cudaLaunchKernel', 'cudaLaunchKernelExC', 'cudaMemcpyAsync', 'cudaMemsetAsync')
# the same calls under --vendor hip (for --validate)
HIP_LAUNCH_APIS = ('hipLaunchKernel', 'hipExtLaunchKernel', 'hipModuleLaunchKernel', 'hipExtModuleLaunchKernel',
                   'hipMemcpyAsync', 'hipMemcpyWithStream', 'hipMemsetAsync')

S_COMPUTE, S_NCCL, S_COPY = 7, 20, 24
QMAX = 1024                      # CUDA launch queue depth before launches block

BF = 'c10::BFloat16'
K_GEMM = {
    'big': 'ampere_bf16_s16816gemm_bf16_256x128_ldg8_f2f_stages_64x3_tn',
    'mid': 'sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x32_stage4_warpsize2x2x1_tensor16x8x16_kernel',
    'small': 'ampere_bf16_s16816gemm_bf16_64x64_ldg8_f2f_stages_64x5_tn',
    'nn': 'ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_nn',
    'nt': 'ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_nt',
    'tiny': 'void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8>(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8::Params)',
    'splitk': 'void splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float, __nv_bfloat16, true, false, false>(cublasSplitKParams<float>, float const*, __nv_bfloat16 const*, __nv_bfloat16*, float const*, float const*, __nv_bfloat16 const*, float const*, __nv_bfloat16*, void*, long, float*, int*)',
}


def _ew(functor, arity):
    return ('void at::native::vectorized_elementwise_kernel<4, %s, at::detail::Array<char*, %d> >'
            '(int, %s, at::detail::Array<char*, %d>)' % (functor, arity, functor, arity))


K = {
    'ln_fwd': 'void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)',
    'ln_bwd_in': 'void at::native::(anonymous namespace)::layer_norm_grad_input_kernel_vectorized<c10::BFloat16, float>(c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, c10::BFloat16 const*, c10::BFloat16*, int)',
    'ln_bwd_gb': 'void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel_32x32<c10::BFloat16, float>(long, long, c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, c10::BFloat16*, c10::BFloat16*)',
    'flash_fwd': 'void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)',
    'flash_bwd_dot': 'void pytorch_flash::flash_bwd_dot_do_o_kernel<true, pytorch_flash::Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<128, 64, 128, 8, cutlass::bfloat16_t> > >(pytorch_flash::Flash_bwd_params)',
    'flash_bwd': 'void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<pytorch_flash::Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<128, 64, 128, 8, cutlass::bfloat16_t> >, true, true, false, false, true, true, false>(pytorch_flash::Flash_bwd_params)',
    'flash_bwd_cvt': 'void pytorch_flash::flash_bwd_convert_dq_kernel<pytorch_flash::Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<128, 64, 128, 8, cutlass::bfloat16_t> > >(pytorch_flash::Flash_bwd_params, int)',
    'gelu': _ew('at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}', 2),
    'gelu_bwd': _ew('at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16, c10::BFloat16)#1}', 3),
    'add': _ew('at::native::CUDAFunctor_add<c10::BFloat16>', 3),
    'add_f32': _ew('at::native::CUDAFunctor_add<float>', 3),
    'mul': _ew('at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >', 3),
    'mul_scalar': _ew('at::native::AUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >', 2),
    'fill': _ew('at::native::FillFunctor<float>', 1),
    'fill_bf16': _ew('at::native::FillFunctor<c10::BFloat16>', 1),
    'reciprocal': _ew('at::native::reciprocal_kernel_cuda(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}', 2),
    'clamp': _ew('at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#14}::operator()() const::{lambda(float)#1}', 2),
    'softmax': 'void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)',
    'softmax_bwd': 'void at::native::(anonymous namespace)::cunn_SoftMaxBackward<4, float, float, float, at::native::(anonymous namespace)::SoftMaxBackwardEpilogue>(float*, float const*, float const*, int)',
    'log_softmax': 'void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(float*, float const*, int)',
    'log_softmax_bwd': 'void at::native::(anonymous namespace)::cunn_SoftMaxBackward<4, float, float, float, at::native::(anonymous namespace)::LogSoftMaxBackwardEpilogue>(float*, float const*, float const*, int)',
    'nll_fwd': 'void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<float, float, long>(float*, float*, float const*, long const*, float const*, bool, long, long, long, long)',
    'nll_bwd': 'void at::native::(anonymous namespace)::nll_loss_backward_reduce_cuda_kernel_2d<float, long>(float*, float const*, long const*, float const*, float const*, bool, int, int, long, long)',
    'to_f32': 'void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >(int, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1>)',
    'embed_fwd': 'void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, unsigned int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, unsigned int, long)',
    'embed_bwd': 'void at::native::(anonymous namespace)::embedding_backward_feature_kernel<c10::BFloat16, float, long>(long const*, c10::BFloat16 const*, c10::BFloat16*, int, long, int, int)',
    'index_select': 'void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, unsigned int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, unsigned int, long)',
    'index_add': 'void at::native::(anonymous namespace)::indexFuncLargeIndex<c10::BFloat16, long, unsigned int, 2, 2, -2, true, at::native::(anonymous namespace)::ReduceAdd>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, unsigned int, long, at::native::(anonymous namespace)::ReduceAdd const&, c10::BFloat16)',
    'topk': 'void at::native::sbtopk::gatherTopK<float, unsigned int, 2, false>(at::cuda::detail::TensorInfo<float const, unsigned int>, unsigned int, unsigned int, bool, unsigned int, unsigned int, at::cuda::detail::TensorInfo<float, unsigned int>, unsigned int, at::cuda::detail::TensorInfo<long, unsigned int>, unsigned int, float*)',
    'topk_sort': 'void at::native::bitonicSortKVInPlace<2, -1, 16, 16, float, long, at::native::GTOp<float, true>, unsigned int>(at::cuda::detail::TensorInfo<float, unsigned int>, unsigned int, unsigned int, unsigned int, at::cuda::detail::TensorInfo<long, unsigned int>, unsigned int, at::native::GTOp<float, true>)',
    'reduce_sum': 'void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4>)',
    'norm': 'void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::NormTwoOps<float, float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::NormTwoOps<float, float, float>, unsigned int, float, 4>)',
    'cat': 'void at::native::(anonymous namespace)::CatArrayBatchedCopy_aligned16_contig<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 1, 128, 1>(at::native::(anonymous namespace)::OpaqueType<2u>*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 128, 1>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)',
    'stack_f32': 'void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType<4u>, unsigned int, 1, 128, 1>(at::native::(anonymous namespace)::OpaqueType<4u>*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::OpaqueType<4u>, unsigned int, 128, 1>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)',
    'split_copy': 'void at::native::(anonymous namespace)::split_with_sizes_copy_out_contiguous_no_cast_kernel<c10::BFloat16>(char**, char**, long*, long*, long*, long, long)',
    'chunk_cat': 'void at::native::(anonymous namespace)::chunk_cat_cuda_kernel<float, c10::BFloat16>(c10::BFloat16**, float*, long*, long*, long*, long*, long, long, long, long)',
    'lpnorm_cleanup': 'void at::native::(anonymous namespace)::lpnorm_cleanup<float, (at::native::(anonymous namespace)::NormType)1, float, float>(float const*, at::native::(anonymous namespace)::TensorListAddresses, int)',
}


def _mta(meta, functor, extra):
    return ('void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<%d>, at::native::(anonymous namespace)::%s, %s>'
            '(at::native::(anonymous namespace)::TensorListMetadata<%d>, at::native::(anonymous namespace)::%s, %s)' % (meta, functor, extra, meta, functor, extra))


# (aten op, tensor-list depth, kernel name, dims-arity) for AdamW(foreach) + clipping
MTA_OPS = {
    'aten::_foreach_norm': (1, _mta(1, 'LpNormFunctor<float, (at::native::(anonymous namespace)::NormType)1, float, float>', 'float*, int')),
    'aten::_foreach_mul_': (1, _mta(1, 'BinaryOpScalarTensorFunctor<float, 1, 1, 0>', 'std::multiplies<float>, float*')),
    'aten::_foreach_mul_.Scalar': (1, _mta(1, 'BinaryOpScalarFunctor<float, 1, 1, 0>', 'std::multiplies<float>, double')),
    'aten::_foreach_lerp_': (2, _mta(2, 'PointwiseOpScalarFunctor<float, 2, 2, 0>', 'at::native::(anonymous namespace)::LerpFunctor<float>, double')),
    'aten::_foreach_addcmul_': (3, _mta(3, 'PointwiseOpScalarFunctor<float, 3, 3, 0>', 'std::multiplies<float>, double')),
    'aten::_foreach_sqrt': (2, _mta(2, 'UnaryOpFunctor<float, 2, 1, 1>', 'at::native::(anonymous namespace)::Sqrt<float>')),
    'aten::_foreach_div_': (1, _mta(1, 'BinaryOpScalarFunctor<float, 1, 1, 0>', 'std::divides<float>, double')),
    'aten::_foreach_add_': (1, _mta(1, 'BinaryOpScalarFunctor<float, 1, 1, 0>', 'std::plus<float>, double')),
    'aten::_foreach_addcdiv_': (3, _mta(3, 'PointwiseOpScalarFunctor<float, 3, 3, 0>', 'std::divides<float>, double')),
}
MTA_MAX_TENSORS = {1: 110, 2: 64, 3: 48, 4: 36, 5: 30}

NCCL_KERNEL = {
    'allreduce': 'ncclDevKernel_AllReduce_Sum_%s_RING_LL(ncclDevKernelArgsStorage<4096ul>)',
    '_allgather_base': 'ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)',
    '_reduce_scatter_base': 'ncclDevKernel_ReduceScatter_Sum_%s_RING_LL(ncclDevKernelArgsStorage<4096ul>)',
    'all_to_all': 'ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)',
}
NCCL_SHORT = {'Float': 'f32', 'BFloat16': 'bf16'}

# --------------------------------------------------------------------------
# --vendor hip: what PyTorch on ROCm (Kineto's roctracer path) writes for the same work.  Only names
# and args change; every time is the CUDA trace's (the random draws are the same), so an analysis that
# reads both vendors alike gives the same answers on both.
# --------------------------------------------------------------------------
MI300X_PROPS = ('"name": "AMD Instinct MI300X", "totalGlobalMem": 205571227648,\n'
                '      "computeMajor": 9, "computeMinor": 4,\n'
                '      "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,\n'
                '      "regsPerBlock": 65536, "warpSize": 64, "sharedMemPerBlock": 65536,\n'
                '      "numSms": 304, "maxSharedMemoryPerMultiProcessor": 65536')
# the CUDA runtime calls the model makes -> the HIP calls PyTorch on ROCm makes for them
HIP_API = {
    'cudaLaunchKernel': 'hipLaunchKernel',
    'cudaLaunchKernelExC': 'hipExtLaunchKernel',      # RCCL launches its kernels with hipExtLaunchKernel
    'cudaMemcpyAsync': 'hipMemcpyAsync',
    'cudaMemsetAsync': 'hipMemsetAsync',
    'cudaStreamSynchronize': 'hipStreamSynchronize',
    'cudaDeviceSynchronize': 'hipDeviceSynchronize',
    'cudaEventRecord': 'hipEventRecord',
    'cudaStreamWaitEvent': 'hipStreamWaitEvent',
    'cudaEventSynchronize': 'hipEventSynchronize',
    'cudaEventQuery': 'hipEventQuery',
    'cudaEventElapsedTime': 'hipEventElapsedTime',
    'cudaStreamIsCapturing': 'hipStreamIsCapturing',
    'cudaFuncSetAttribute': 'hipFuncSetAttribute',
    'cudaStreamGetCaptureInfo_v2': 'hipStreamGetCaptureInfo_v2',
    'cudaHostAlloc': 'hipHostMalloc',                  # PyTorch's pinned-memory allocator on ROCm
    'cudaPeekAtLastError': 'hipPeekAtLastError',
    'cudaDeviceGetAttribute': 'hipDeviceGetAttribute',
    'cudaOccupancyMaxActiveBlocksPerMultiprocessor': 'hipOccupancyMaxActiveBlocksPerMultiprocessor',
}
# args.cid: the values real ROCm traces show where one was seen (nothing reads them)
HIP_CID = {
    'hipLaunchKernel': 107, 'hipExtModuleLaunchKernel': 65, 'hipModuleLaunchKernel': 169,
    'hipExtLaunchKernel': 64, 'hipMemcpyAsync': 134, 'hipMemcpyWithStream': 153, 'hipMemsetAsync': 152,
    'hipStreamSynchronize': 59, 'hipDeviceSynchronize': 48, 'hipEventRecord': 58, 'hipStreamWaitEvent': 61,
    'hipEventSynchronize': 60, 'hipEventQuery': 57, 'hipEventElapsedTime': 56, 'hipStreamIsCapturing': 290,
    'hipFuncSetAttribute': 244, 'hipStreamGetCaptureInfo_v2': 298, 'hipHostMalloc': 92,
    'hipPeekAtLastError': 116, 'hipDeviceGetAttribute': 34, 'hipOccupancyMaxActiveBlocksPerMultiprocessor': 117,
}
# Kineto's RuntimeActivity::flowStart on ROCm: only these calls get the ac2g "s"; every other call (syncs,
# event record/wait, hipMemsetAsync) a lone "f", like non-launch calls on CUDA
HIP_FLOW_START = frozenset(('hipLaunchKernel', 'hipExtLaunchKernel', 'hipModuleLaunchKernel',
                            'hipExtModuleLaunchKernel', 'hipMemcpyAsync', 'hipMemcpyWithStream'))
# copies: hipMemcpyKind of the call, the activity's name and kind
HIP_COPY = {'HtoD': (1, 'Memcpy HtoD (Host -> Device)'), 'DtoH': (2, 'Memcpy DtoH (Device -> Host)'),
            'DtoD': (3, 'Memcpy DtoD (Device -> Device)')}
# a memset is a blit kernel of the runtime on ROCm (a "kernel" row, not a gpu_memset)
HIP_FILL_KERNEL = '__amd_rocclr_fillBufferAligned'
# RCCL's kernels: one generic kernel for every collective (the collective is in the kernel's args)
RCCL_KERNEL = 'ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)'
# GPU streams: the "stream" of a ROCm activity is its hardware queue, 0 for the default stream; the
# stream handle the runtime call names ("0x0" for the default stream)
HIP_QUEUE = {S_COMPUTE: 0, S_COPY: 1, S_NCCL: 2}
HIP_STREAM_HANDLE = {S_COMPUTE: '0x0', S_COPY: '0x5628f41a3e20', S_NCCL: '0x5628f3c07a50'}


def _tensile(layout, tile, wg):
    return ('Cijk_%s_BBS_BH_Bias_HA_S_SAV_UserArgs_MT%s_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_'
            'EPS0_GRVWA8_GRVWB8_GSUAMB_ISA942_IU1_K1_LBSPPA128_LBSPPB128_LBSPPM0_LPA16_LPB16_LPM0_LRVW8_LWPMn1_'
            'MIAV0_MIWT4_4_MO40_NTn1_NTA0_NTB0_NTC0_NTD0_NTM0_NEPBS16_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PKA1_SIA3_SS1_'
            'SPO0_SRVW0_SSO0_SVW1_TLDS1_USFGROn1_VSn1_VWA4_VWB4_WSGRA0_WSGRB0_WS64_WG%s' % (layout, tile, wg))


# kernels that are not PyTorch's own on ROCm: hipBLASLt's Tensile GEMMs (hipExtModuleLaunchKernel) and
# AOTriton's flash attention (hipModuleLaunchKernel); every other kernel keeps its name (hipLaunchKernel)
HIP_KERNEL = {
    K_GEMM['big']: (_tensile('Alik_Bljk', '256x128x64', '64_4_1'), 'hipExtModuleLaunchKernel'),
    K_GEMM['mid']: (_tensile('Alik_Bljk', '128x128x64', '32_8_1'), 'hipExtModuleLaunchKernel'),
    K_GEMM['small']: (_tensile('Alik_Bljk', '64x64x64', '16_16_1'), 'hipExtModuleLaunchKernel'),
    K_GEMM['tiny']: (_tensile('Alik_Bljk', '32x32x64', '16_8_1'), 'hipExtModuleLaunchKernel'),
    K_GEMM['nn']: (_tensile('Ailk_Bljk', '128x128x64', '32_8_1'), 'hipExtModuleLaunchKernel'),
    K_GEMM['nt']: (_tensile('Ailk_Bjlk', '128x256x64', '32_8_1'), 'hipExtModuleLaunchKernel'),
    K_GEMM['splitk']: ('Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_PostGSU16_VW1', 'hipExtModuleLaunchKernel'),
    K['flash_fwd']: ('attn_fwd', 'hipModuleLaunchKernel'),
    K['flash_bwd_dot']: ('bwd_preprocess', 'hipModuleLaunchKernel'),
    K['flash_bwd']: ('bwd_kernel_dk_dv', 'hipModuleLaunchKernel'),
    K['flash_bwd_cvt']: ('bwd_kernel_dq', 'hipModuleLaunchKernel'),
}

# --------------------------------------------------------------------------
# Event string templates (Kineto's chrome-trace layout)
# --------------------------------------------------------------------------
T_X = ('  {\n    "ph": "X", "cat": "%s", "name": "%s", "pid": %d, "tid": %d,\n'
       '    "ts": %s, "dur": %s,\n    "args": {\n      %s\n    }\n  }')
T_KERNEL = ('  {\n    "ph": "X", "cat": "kernel", "name": "%s", "pid": %d, "tid": %d,\n'
            '    "ts": %s, "dur": %s,\n    "args": {\n      "External id": %d,      "queued": 0, '
            '"device": %d, "context": 1,      "stream": %d, "correlation": %d,      %s\n    }\n  }')
T_MEM = ('  {\n    "ph": "X", "cat": "%s", "name": "%s", "pid": %d, "tid": %d,\n'
         '    "ts": %s, "dur": %s,\n    "args": {\n      "External id": %d,      "device": %d, '
         '"context": 1,      "stream": %d, "correlation": %d,      "bytes": %d, '
         '"memory bandwidth (GB/s)": %s\n    }\n  }')
T_RT = ('  {\n    "ph": "X", "cat": "cuda_runtime", "name": "%s", "pid": %d, "tid": %d,\n'
        '    "ts": %s, "dur": %s,\n    "args": {\n      "External id": %d,      "cbid": %d, '
        '"correlation": %d\n    }\n  }')
T_SYNC = ('  {\n    "ph": "X", "cat": "cuda_sync", "name": "%s", "pid": %d, "tid": %d,\n'
          '    "ts": %s, "dur": %s,\n    "args": {\n      "External id": %d,      "cuda_sync_kind": "%s", '
          '%s"stream": %d, "correlation": %d,      "device": %d, "context": 1\n    }\n  }')
# ROCm's rows (Kineto's roctracer path): launches and stream-ordered copies name their stream's handle
T_RT_HIP = ('  {\n    "ph": "X", "cat": "cuda_runtime", "name": "%s", "pid": %d, "tid": %d,\n'
            '    "ts": %s, "dur": %s,\n    "args": {\n      "External id": %d,      "cid": %d, '
            '"correlation": %d\n    }\n  }')
T_RT_HIP_LAUNCH = ('  {\n    "ph": "X", "cat": "cuda_runtime", "name": "%s", "pid": %d, "tid": %d,\n'
                   '    "ts": %s, "dur": %s,\n    "args": {\n      "External id": %d,      "kernel": "%s", '
                   '"cid": %d, "correlation": %d,      "stream": "%s",      %s,      "shared memory": %d\n    }\n  }')
T_RT_HIP_COPY = ('  {\n    "ph": "X", "cat": "cuda_runtime", "name": "%s", "pid": %d, "tid": %d,\n'
                 '    "ts": %s, "dur": %s,\n    "args": {\n      "External id": %d,      "stream": "%s", '
                 '"cid": %d, "correlation": %d, "src": "0x%x", "dst": "0x%x", "size": "%d", "kind": "%d"\n    }\n  }')
T_KERNEL_HIP = ('  {\n    "ph": "X", "cat": "kernel", "name": "%s", "pid": %d, "tid": %d,\n'
                '    "ts": %s, "dur": %s,\n    "args": {\n      "External id": %d,      "device": %d, '
                '"stream": %d,      "correlation": %d, "kind": "Dispatch Kernel",      %s\n    }\n  }')
T_MEM_HIP = ('  {\n    "ph": "X", "cat": "gpu_memcpy", "name": "%s", "pid": %d, "tid": %d,\n'
             '    "ts": %s, "dur": %s,\n    "args": {\n      "External id": %d,      "device": %d, '
             '"stream": %d,      "correlation": %d, "kind": "%s",      "bytes": %d, '
             '"memory bandwidth (GB/s)": %s\n    }\n  }')
T_FS = ('  {\n    "ph": "s", "id": %d, "pid": %d, "tid": %d, "ts": %s,\n'
        '    "cat": "%s", "name": "%s"\n  }')
T_FF = ('  {\n    "ph": "f", "id": %d, "pid": %d, "tid": %d, "ts": %s,\n'
        '    "cat": "%s", "name": "%s", "bp": "e"\n  }')
T_GANN = ('  {\n    "ph": "X", "cat": "gpu_user_annotation", "name": "%s", "pid": %d, "tid": %d,\n'
          '    "ts": %s, "dur": %s,\n    "args": {\n      "External id": %d\n    }\n  }')
T_MEMEV = ('  {\n    "ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",\n'
           '    "pid": %d, "tid": %d,\n    "ts": %s,\n    "args": {\n      "Total Reserved": %d, '
           '"Total Allocated": %d, "Bytes": %d, "Addr": %d, "Device Id": %d, "Device Type": 1, '
           '"Ev Idx": %d\n    }\n  }')
T_COUNTER = ('  {\n    "ph": "C", "cat": "hardware_counters", "name": "%s", "pid": "GPU %d Counters", '
             '"tid": 0,\n    "ts": %s,\n    "args": {\n      "": %s\n    }\n  }')
T_META = ('  {\n    "name": "%s", "ph": "M", "ts": %s, "pid": %s, "tid": %s,\n'
          '    "args": {\n      "%s": %s\n    }\n  }')


def jstr(s):
    """JSON-escape a string (without surrounding quotes)."""
    return json.dumps(s)[1:-1]


def fnum(x, nd=6):
    s = ('%.' + str(nd) + 'f') % x
    s = s.rstrip('0')
    return s + '0' if s.endswith('.') else s


def dims_str(dims):
    return '[' + ', '.join('[' + ', '.join(str(d) for d in dm) + ']' for dm in dims) + ']'


def list_str(items):
    return '[' + ', '.join('"%s"' % i for i in items) + ']'


_ARGS_CACHE = {}
_DEFAULT_SHAPES = {}


def shapes(dims, types, concrete=None):
    """Pre-formatted 'Input Dims'/'Input type'/'Concrete Inputs' args fragment."""
    key = (tuple(tuple(d) for d in dims), tuple(types), tuple(concrete) if concrete else None)
    s = _ARGS_CACHE.get(key)
    if s is None:
        if concrete is None:
            concrete = [''] * len(types)
        s = '"Input Dims": %s, "Input type": %s, "Concrete Inputs": %s, ' % (
            dims_str(dims), list_str(types), list_str(concrete))
        _ARGS_CACHE[key] = s
    return s


def default_shapes(name):
    """record_shapes-style args for ops created without explicit shapes."""
    s = _DEFAULT_SHAPES.get(name)
    if s is None:
        if name.startswith(('autograd::', 'torch::', 'record_param_comms', 'fsdp::', 'detach')) or \
                name.endswith('Backward0') or name.startswith('torch.distributed'):
            s = ''
        elif name in ('aten::empty', 'aten::empty_strided', 'aten::zeros'):
            s = shapes([[], [], [], [], [], []], ['', 'Scalar', '', '', '', ''])
        elif name in ('aten::empty_like', 'aten::zeros_like'):
            s = shapes([[], [], [], [], [], []], [BF, 'Scalar', '', '', '', 'Scalar'])
        elif name in ('aten::view', 'aten::reshape', 'aten::_unsafe_view', 'aten::_to_copy',
                      'aten::transpose', 'aten::as_strided', 'aten::fill_', 'aten::zero_', 'aten::lift_fresh'):
            s = shapes([[], []], [BF, ''])
        else:
            s = shapes([[]], [''])
        _DEFAULT_SHAPES[name] = s
    return s


_KT_CACHE = {}


def ktail(grid, block, regs, smem):
    key = (grid, block, regs, smem)
    s = _KT_CACHE.get(key)
    if s is None:
        nb = grid[0] * grid[1] * grid[2]
        tpb = block[0] * block[1] * block[2]
        wpb = (tpb + 31) // 32
        bps = nb / float(NUM_SMS)
        wps = bps * wpb
        lim = [32, 2048 // max(tpb, 1)]
        if regs:
            lim.append(65536 // max(1, regs * wpb * 32))
        if smem:
            lim.append(167936 // smem)
        occ = int(min(100.0, 100.0 * min(bps, max(0, min(lim))) * wpb / 64.0))
        s = ('"registers per thread": %d,      "shared memory": %d,      "blocks per SM": %s,      '
             '"warps per SM": %s,      "grid": [%d, %d, %d],      "block": [%d, %d, %d],      '
             '"est. achieved occupancy %%": %d' % (regs, smem, fnum(bps), fnum(wps),
                                                   grid[0], grid[1], grid[2],
                                                   block[0], block[1], block[2], occ))
        _KT_CACHE[key] = s
    return s


class Kern(object):
    """A kernel 'template': escaped name + static launch-config args (and what ROCm calls it)."""
    __slots__ = ('name', 'tail', 'grid', 'block', 'smem', 'hip')

    def __init__(self, name, grid, block, regs, smem, extra=''):
        self.name = jstr(name)
        self.tail = ktail(grid, block, regs, smem) + extra
        self.grid = grid
        self.block = block
        self.smem = smem
        self.hip = HIP_KERNEL.get(name)


def hip_dims(grid, block):
    return '"grid": [%d, %d, %d],      "block": [%d, %d, %d]' % (grid + block)


def cdiv(a, b):
    return (a + b - 1) // b


# --------------------------------------------------------------------------
# Per-thread state
# --------------------------------------------------------------------------
class Thread(object):
    __slots__ = ('tid', 't', 'stack', 'buf', 'annots', 'pystack', 'opext', 'roots', 'part',
                 'label', 'nbytes', 'nev')

    def __init__(self, tid, label, part):
        self.tid = tid
        self.label = label
        self.t = 0
        self.stack = []      # open frames [idx, cat, name, ts, ext, args, evidx, annot, pyid]
        self.buf = []        # event strings (None = placeholder of an open frame)
        self.annots = []     # open frames that produce gpu_user_annotation
        self.pystack = []    # open python ids
        self.opext = []      # External ids of open cpu_ops
        self.roots = []      # finished root python frames (emitted first at assembly)
        self.part = part
        self.nbytes = 0
        self.nev = 0

    def flush(self, force=False):
        upto = self.stack[0][0] if self.stack else len(self.buf)
        if upto <= 0 or (not force and upto < 4096):
            return
        chunk = self.buf[:upto]
        s = ',\n'.join(chunk) + ',\n'
        self.nbytes += len(s)
        self.nev += upto
        if self.part is not None:
            self.part.write(s)
        del self.buf[:upto]
        for fr in self.stack:
            fr[0] -= upto


# --------------------------------------------------------------------------
# Rank simulator
# --------------------------------------------------------------------------
class RankSim(object):

    def __init__(self, cfg, rank, tmpdir=None):
        self.cfg = cfg
        self.rank = rank
        self.ws = cfg.ranks
        self.dev = rank % GPUS_PER_NODE
        self.L = cfg.layers
        self.hip = cfg.vendor == 'hip'
        rng = random.Random(cfg.seed * 1000003 + rank * 7919 + 17)
        self.rng = rng
        self.R = rng.random
        shared = random.Random(cfg.seed * 31 + 7)
        self.pid = 100000 + shared.randrange(1000, 3000000) + rank * 37 + rng.randrange(0, 30)
        self.main_tid = self.pid
        self.bwd_tid = self.pid + 3000 + rng.randrange(100, 9000)
        slow = cfg.straggler_slowdown if rank == cfg.straggler else 1.0
        self.cpu_f = (0.96 + 0.08 * self.R()) * (1.0 + (slow - 1.0) * 0.5) * cfg.cpu_scale
        # --host-slow: this rank's host (every CPU operator, runtime call and launch) slower, its GPU as the others'
        if rank in getattr(cfg, 'host_slow', ()):
            self.cpu_f *= getattr(cfg, 'host_slowdown', 1.0)
        self.gpu_f = (0.985 + 0.03 * self.R()) * slow * cfg.gpu_scale
        self.straggler = (rank == cfg.straggler)
        # time formatting
        node = rank // GPUS_PER_NODE
        self.clock_skew = 0
        if cfg.clock_skew_ns and node > 0:
            self.clock_skew = int(random.Random(cfg.seed * 7 + node * 13 + 1).uniform(-1.0, 1.0) * cfg.clock_skew_ns)
        self.origin = cfg.origin_ns + self.clock_skew
        self._bind_time()
        self.tmpdir = tmpdir
        parts = {}
        for key in ('main', 'bwd', 'gpu'):
            parts[key] = (open(os.path.join(tmpdir, key + '.part'), 'w') if tmpdir else None)
        self.parts = parts
        self.main = Thread(self.main_tid, 'pt_main_thread', parts['main'])
        self.bwd = Thread(self.bwd_tid, 'pt_autograd_0', parts['bwd'])
        self.gbuf = []
        self.gbytes = 0
        self.gnev = 0
        self.annot_ev = []
        self.counter_ev = []
        # ids
        self.ext = 1
        self.corr = 500 + rng.randrange(0, 4000)
        self.flow = 1
        self.pyid = 1
        self.seqno = 1000 + shared.randrange(0, 5000)
        self.evidx = 0
        self.cuda_event_id = 0
        self.events = {}           # cudaEventRecord corr -> (stream, done_time, event_id)
        self.sfree = {S_COMPUTE: 0, S_NCCL: 0, S_COPY: 0}
        self.used_streams = set()
        self.pend = []             # heap of pending GPU op end times (launch queue)
        self.coll_idx = 0
        self.pg_seq = 0
        self.nsync = 0
        self.mem_alloc = 6 * 1024 ** 3 + rng.randrange(0, 1 << 28)
        self.mem_reserved = self.mem_alloc + (2 << 30)
        self.kcount = 0
        self.t_end = 0
        self.step_marks = []
        self.cutting = False       # --window-cut: buffer GPU ops of the last step
        self.tail_gpu = []
        self.window_end = None
        self._build_model()

    # ------------------------------------------------------------------ time
    def _bind_time(self):
        o = self.origin
        if self.cfg.time_format == 'legacy':
            def F(t):
                return str((t + o) // 1000)

            def D(a, b):
                return str((b + o) // 1000 - (a + o) // 1000)
        else:
            def F(t):
                t += o
                return '%d.%03d' % (t // 1000, t % 1000)

            def D(a, b):
                d = b - a
                return '%d.%03d' % (d // 1000, d % 1000)
        self.F = F
        self.D = D

    # ------------------------------------------------------------------ rng helpers
    def _step_rng(self, k, part):
        seed = '%d/%d/%d/%s' % (self.cfg.seed, self.rank, k, part)
        self.rng = random.Random(seed)
        self.R = self.rng.random

    def g(self, base):
        """CPU duration/gap in ns around base ns (uniform +-40%, rare hiccups)."""
        r = self.R()
        v = base * self.cpu_f * (0.6 + 0.8 * r)
        if r < 0.03:                      # heavy tail: cache misses, GIL, allocator
            v *= 1.5 + 3.0 * self.R()
            if r < 0.0006:                # rare OS/GC hiccup
                v += 20000 + 300000 * self.R()
        return int(v)

    def gd(self, base):
        """GPU duration in ns (+-4% noise)."""
        return int(base * self.gpu_f * (0.96 + 0.08 * self.R())) + 600

    # ------------------------------------------------------------------ model
    def _build_model(self):
        c = self.cfg
        H, Fd, S = c.hidden, c.ffn, c.seq
        B = c.batch
        T = B * S
        self.H, self.Fd, self.S, self.B, self.T = H, Fd, S, B, T
        # tensor parallelism: each rank holds 1/tp of the heads and of the MLP's columns
        self.tp = c.ranks if c.mode == 'tp' else 1
        self.NH = max(1, H // 128 // self.tp)
        self.V = c.vocab
        self.E_local = 2
        # parameters per layer (numel)
        self.p_layer = [3 * H * H, 3 * H, H * H, H * Fd, Fd, Fd * H, H, H, H, H, H]
        self.p_moe = [3 * H * H, 3 * H, H * H, H * 8, H, H, H, H] + [H * Fd, Fd * H] * self.E_local
        self.p_root = [self.V * H, H, H, self.V * H]
        nparams = len(self.p_root)
        nelem = sum(self.p_root)
        for i in range(self.L):
            pl = self.p_moe if self.is_moe(i) else self.p_layer
            nparams += len(pl)
            nelem += sum(pl)
        self.nparams = nparams
        self.nelem = nelem

    def is_moe(self, i):
        me = self.cfg.moe_every
        return me > 0 and (i % me) == me - 1

    def gemm_kern(self, M, N, Kd, kind=None):
        if kind is None:
            if M * N >= 4096 * 4096:
                kind = 'big'
            elif M * N >= 512 * 512:
                kind = 'mid'
            elif M * N >= 64 * 64:
                kind = 'small'
            else:
                kind = 'tiny'
        tm, tn = {'big': (256, 128), 'mid': (128, 128), 'small': (64, 64), 'tiny': (32, 32),
                  'nn': (128, 128), 'nt': (128, 256)}[kind]
        grid = (cdiv(N, tn), cdiv(M, tm), 1)
        block = (256, 1, 1) if kind != 'tiny' else (128, 1, 1)
        regs = {'big': 232, 'mid': 168, 'small': 128, 'tiny': 96, 'nn': 238, 'nt': 240}[kind]
        smem = {'big': 73728, 'mid': 65536, 'small': 36864, 'tiny': 20480, 'nn': 73728, 'nt': 98304}[kind]
        kern = Kern(K_GEMM[kind], grid, block, regs, smem)
        flops = 2.0 * M * N * Kd
        size = float(M) * N * Kd
        eff = 210e3 * size / (size + 3e9) + 8e3     # flops per ns
        return kern, int(flops / eff) + 2500

    def ew_kern(self, key, numel, elem=2, arity=2):
        blocks = max(1, min(cdiv(numel, 512), NUM_SMS * 4 * 8))
        kern = Kern(K[key], (blocks, 1, 1), (128, 1, 1), 16 + 2 * arity, 0)
        nbytes = numel * elem * arity
        return kern, int(nbytes / 1300.0) + 1800

    # ------------------------------------------------------------------ CPU frames
    def begin(self, th, name, cat='cpu_op', args='', gap=3000, annot=False):
        t = th.t + self.g(gap)
        th.t = t
        ext = self.ext
        self.ext = ext + 1
        buf = th.buf
        if not args and cat == 'cpu_op':
            args = default_shapes(name)
        fr = [len(buf), cat, name, t, ext, args, self.evidx, None, 0]
        self.evidx += 1
        buf.append(None)
        if annot:
            fr[7] = {}
            th.annots.append(fr)
        th.stack.append(fr)
        if cat == 'cpu_op':
            th.opext.append(ext)
        return ext

    def end(self, th, tail=2000):
        fr = th.stack.pop()
        t = th.t + self.g(tail)
        th.t = t
        cat = fr[1]
        if cat == 'python_function':
            th.pystack.pop()
            args = fr[5]
        else:
            if cat == 'cpu_op':
                th.opext.pop()
            args = '"External id": %d,"Record function id": %d, %s"Ev Idx": %d' % (
                fr[4], fr[4], fr[5], fr[6])
        th.buf[fr[0]] = T_X % (cat, fr[2], self.pid, th.tid, self.F(fr[3]), self.D(fr[3], t), args)
        if fr[7] is not None:
            th.annots.remove(fr)
            for stream, (a, b) in fr[7].items():
                self.annot_ev.append((a, b, fr[2], stream, fr[4]))
        return t

    def leaf(self, th, name, dur, gap=2500, args=''):
        t = th.t + self.g(gap)
        e = t + self.g(dur)
        th.t = e
        ext = self.ext
        self.ext = ext + 1
        if not args:
            args = default_shapes(name)
        th.buf.append(T_X % ('cpu_op', name, self.pid, th.tid, self.F(t), self.D(t, e),
                             '"External id": %d,"Record function id": %d, %s"Ev Idx": %d' % (
                                 ext, ext, args, self.evidx)))
        self.evidx += 1
        if self.cfg.profile_memory and name in ('aten::empty', 'aten::empty_strided') and self.R() < 0.5:
            self.mem_event(th, e - 200)
        return e

    def pybegin(self, th, name, module_id=None, gap=1500):
        t = th.t + self.g(gap)
        th.t = t
        pid_ = self.pyid
        self.pyid += 1
        parent = th.pystack[-1] if th.pystack else 'null'
        if module_id is None:
            args = '"Python parent id": %s, "Python id": %d, "Ev Idx": %d' % (parent, pid_, self.evidx)
        else:
            args = '"Python parent id": %s, "Python id": %d, "Python module id": %d, "Ev Idx": %d' % (
                parent, pid_, module_id, self.evidx)
        self.evidx += 1
        fr = [len(th.buf), 'python_function', name, t, 0, args, 0, None, pid_]
        th.buf.append(None)
        th.stack.append(fr)
        th.pystack.append(pid_)

    def pyleaf(self, th, name, dur, gap=1000):
        t = th.t + self.g(gap)
        e = t + self.g(dur)
        th.t = e
        parent = th.pystack[-1] if th.pystack else 'null'
        th.buf.append(T_X % ('python_function', name, self.pid, th.tid, self.F(t), self.D(t, e),
                             '"Python parent id": %s, "Python id": %d, "Ev Idx": %d' % (
                                 parent, self.pyid, self.evidx)))
        self.pyid += 1
        self.evidx += 1

    def root_begin(self, th, name, t):
        pid_ = self.pyid
        self.pyid += 1
        parent = th.pystack[-1] if th.pystack else 'null'
        th.roots.append([name, t, None, '"Python parent id": %s, "Python id": %d, "Ev Idx": %d' % (
            parent, pid_, self.evidx)])
        self.evidx += 1
        th.pystack.append(pid_)

    def root_end(self, th, t):
        for r in reversed(th.roots):
            if r[2] is None:
                r[2] = t
                break
        th.pystack.pop()

    def fwd_flow(self, th, seq):
        """fwdbwd flow start on the forward op just opened (same ts)."""
        fr = th.stack[-1]
        fid = self.flow
        self.flow += 1
        th.buf.append(T_FS % (fid, self.pid, th.tid, self.F(fr[3]), 'fwdbwd', 'fwdbwd'))
        return fid

    def mem_event(self, th, t):
        nbytes = 512 * (1 + int(self.R() * 40000))
        if self.R() < 0.45:
            nbytes = -nbytes
        self.mem_alloc = max(1 << 30, self.mem_alloc + nbytes)
        if self.mem_alloc > self.mem_reserved:
            self.mem_reserved = self.mem_alloc + (1 << 30)
        th.buf.append(T_MEMEV % (self.pid, th.tid, self.F(t), self.mem_reserved, self.mem_alloc,
                                 nbytes, 139900000000000 + int(self.R() * 1e10) * 512, self.dev,
                                 self.evidx))
        self.evidx += 1

    # ------------------------------------------------------------------ runtime / GPU
    def _next_corr(self):
        c = self.corr
        # CUPTI correlation ids are shared with un-recorded (blocklisted) calls
        self.corr = c + (1 if self.R() < 0.8 else 2 + int(self.R() * 3))
        return c

    def _cur_ext(self, th, corr):
        return th.opext[-1] if th.opext else corr

    def gflush(self, force=False):
        """Writes the buffered GPU events out: once 8192 wait, or (force) any."""
        if len(self.gbuf) >= 8192 or (force and self.gbuf):
            s = ',\n'.join(self.gbuf) + ',\n'
            self.gbytes += len(s)
            self.gnev += len(self.gbuf)
            if self.parts['gpu'] is not None:
                self.parts['gpu'].write(s)
            self.gbuf = []

    def runtime(self, th, name, dur=1500, gap=800):
        """Non-launch CUDA runtime call (gets a lone 'f' ac2g flow like Kineto emits)."""
        t = th.t + self.g(gap)
        e = t + self.g(dur)
        th.t = e
        corr = self._next_corr()
        ext = self._cur_ext(th, corr)
        ts = self.F(t)
        gb = self.gbuf
        if self.hip:
            name = HIP_API[name]
            gb.append(T_RT_HIP % (name, self.pid, th.tid, ts, self.D(t, e), ext, HIP_CID[name], corr))
        else:
            gb.append(T_RT % (name, self.pid, th.tid, ts, self.D(t, e), ext, CBID[name], corr))
        gb.append(T_FF % (corr, self.pid, th.tid, ts, 'ac2g', 'ac2g'))
        return corr, t, e

    def _queue_block(self, t):
        heap = self.pend
        while heap and heap[0] <= t:
            heapq.heappop(heap)
        if len(heap) >= QMAX:
            tf = heapq.heappop(heap)
            while heap and heap[0] <= tf:
                heapq.heappop(heap)
            return tf - t
        return 0

    def _emit_launch(self, th, api, t, e, corr, ext, hip=None):
        """The runtime call and its flow start.  With --vendor hip: hip = (HIP name, row) where the
        caller writes ROCm's row (launches, copies); by default the HIP call's plain row."""
        ts = self.F(t)
        gb = self.gbuf
        if self.hip:
            if hip is None:
                name = HIP_API[api]
                gb.append(T_RT_HIP % (name, self.pid, th.tid, ts, self.D(t, e), ext, HIP_CID[name], corr))
            else:
                name = hip[0]
                gb.append(hip[1])
            gb.append((T_FS if name in HIP_FLOW_START else T_FF) % (corr, self.pid, th.tid, ts, 'ac2g', 'ac2g'))
            return
        gb.append(T_RT % (api, self.pid, th.tid, ts, self.D(t, e), ext, CBID[api], corr))
        gb.append(T_FS % (corr, self.pid, th.tid, ts, 'ac2g', 'ac2g'))

    def _emit_gpu(self, th, stream, start, end, corr, ext, text):
        tid = HIP_QUEUE[stream] if self.hip else stream
        if self.cutting:
            self.tail_gpu.append((end, text, T_FF % (corr, self.dev, tid, self.F(start), 'ac2g', 'ac2g')))
        else:
            gb = self.gbuf
            gb.append(text)
            gb.append(T_FF % (corr, self.dev, tid, self.F(start), 'ac2g', 'ac2g'))
        heapq.heappush(self.pend, end)
        self.used_streams.add(stream)
        self.kcount += 1
        for fr in th.annots:
            sp = fr[7].get(stream)
            if sp is None:
                fr[7][stream] = [start, end]
            else:
                if start < sp[0]:
                    sp[0] = start
                if end > sp[1]:
                    sp[1] = end
        if end > self.t_end:
            self.t_end = end
        if not self.cutting:
            self.gflush()

    def launch(self, th, kern, gdur, stream=S_COMPUTE, gap=1500, api='cudaLaunchKernel', rdur=5000):
        t = th.t + self.g(gap)
        blocked = self._queue_block(t)
        e = t + self.g(rdur) + blocked
        th.t = e
        corr = self._next_corr()
        ext = self._cur_ext(th, corr)
        hip = None
        if self.hip:
            kname, api = kern.hip or (kern.name, 'hipLaunchKernel')
            dims = hip_dims(kern.grid, kern.block)
            hip = (api, T_RT_HIP_LAUNCH % (api, self.pid, th.tid, self.F(t), self.D(t, e), ext, kname, HIP_CID[api],
                                           corr, HIP_STREAM_HANDLE[stream], dims, min(kern.smem, 65536)))
        self._emit_launch(th, api, t, e, corr, ext, hip)
        sf = self.sfree[stream]
        start = e + 300 + int(2200 * self.R())
        q = self.R()                    # drawn always: a knob that changes timing keeps the draws in step
        if sf + 400 > start:
            start = sf + 400 + int(1100 * q)
        end = start + self.gd(gdur)
        self.sfree[stream] = end
        if hip:
            q = HIP_QUEUE[stream]
            text = T_KERNEL_HIP % (kname, self.dev, q, self.F(start), self.D(start, end), ext, self.dev, q, corr, dims)
        else:
            text = T_KERNEL % (kern.name, self.dev, stream, self.F(start), self.D(start, end),
                               ext, self.dev, stream, corr, kern.tail)
        self._emit_gpu(th, stream, start, end, corr, ext, text)
        return start, end

    def memop(self, th, kind, nbytes, stream=S_COMPUTE, gap=1500, blocking=False):
        """cudaMemcpyAsync / cudaMemsetAsync + gpu_memcpy / gpu_memset."""
        if kind == 'memset':
            api, cat, name, bw = 'cudaMemsetAsync', 'gpu_memset', 'Memset (Device)', 1100.0
        elif kind == 'HtoD':
            api, cat, name, bw = 'cudaMemcpyAsync', 'gpu_memcpy', 'Memcpy HtoD (Pinned -> Device)', 21.0
        elif kind == 'DtoH':
            api, cat, name, bw = 'cudaMemcpyAsync', 'gpu_memcpy', 'Memcpy DtoH (Device -> Pageable)', 6.0
        else:
            api, cat, name, bw = 'cudaMemcpyAsync', 'gpu_memcpy', 'Memcpy DtoD (Device -> Device)', 650.0
        t = th.t + self.g(gap)
        blocked = self._queue_block(t)
        rd = self.g(9000 if api == 'cudaMemcpyAsync' else 7000) + blocked
        corr = self._next_corr()
        ext = self._cur_ext(th, corr)
        sf = self.sfree[stream]
        start = t + min(rd, 6000) + 300 + int(1500 * self.R())
        q = self.R()
        if sf + 400 > start:
            start = sf + 400 + int(900 * q)
        dur = int((1100 + nbytes / bw) * (0.95 + 0.1 * self.R()))
        end = start + dur
        e = t + rd
        q = self.R()
        if blocking and e < end + 2500:
            e = end + 2500 + int(4000 * q)
        th.t = e
        self.sfree[stream] = end
        if self.hip:
            self._hip_memop(th, kind, nbytes, stream, blocking, t, e, start, end, corr, ext)
            return start, end
        self._emit_launch(th, api, t, e, corr, ext)
        self._emit_gpu(th, stream, start, end, corr, ext,
                       T_MEM % (cat, name, self.dev, stream, self.F(start), self.D(start, end), ext,
                                self.dev, stream, corr, nbytes, repr(nbytes / float(dur))))
        return start, end

    def _hip_memop(self, th, kind, nbytes, stream, blocking, t, e, start, end, corr, ext):
        """ROCm's rows for memop: a memset is the runtime's fill kernel; a blocking copy is
        hipMemcpyWithStream (PyTorch's memcpy_and_sync on ROCm)."""
        q = HIP_QUEUE[stream]
        if kind == 'memset':
            dims = hip_dims((max(1, min(cdiv(nbytes, 4096), 1024)), 1, 1), (256, 1, 1))
            self._emit_launch(th, 'cudaMemsetAsync', t, e, corr, ext)
            self._emit_gpu(th, stream, start, end, corr, ext,
                           T_KERNEL_HIP % (HIP_FILL_KERNEL, self.dev, q, self.F(start), self.D(start, end), ext,
                                           self.dev, q, corr, dims))
            return
        api = 'hipMemcpyWithStream' if blocking else 'hipMemcpyAsync'
        knum, name = HIP_COPY[kind]
        # host and device addresses of the copy (made up, deterministic; no random draw)
        host, dev = 0x7f3c80000000 + (corr % 4096) * 0x100000, 0x7ee400000000 + (corr % 8192) * 0x200000
        src, dst = {'HtoD': (host, dev), 'DtoH': (dev, host)}.get(kind, (dev, dev + 0x40000000))
        self._emit_launch(th, api, t, e, corr, ext,
                          (api, T_RT_HIP_COPY % (api, self.pid, th.tid, self.F(t), self.D(t, e), ext,
                                                 HIP_STREAM_HANDLE[stream], HIP_CID[api], corr, src, dst, nbytes, knum)))
        self._emit_gpu(th, stream, start, end, corr, ext,
                       T_MEM_HIP % (name, self.dev, q, self.F(start), self.D(start, end), ext, self.dev, q, corr,
                                    kind, nbytes, repr(nbytes / float(end - start))))

    # ---- events & syncs
    def event_record(self, th, stream, gap=800):
        corr, t, e = self.runtime(th, 'cudaEventRecord', 1800, gap)
        self.cuda_event_id = (self.cuda_event_id % 63) + 1
        done = max(self.sfree[stream], e)
        self.events[corr] = (stream, done, self.cuda_event_id)
        return corr

    def _sync_ev(self, th, name, stream_tid, stream_arg, t, e, corr, ext, extra):
        a = t + 300 + int(self.R() * 900)
        b = e - 200 - int(self.R() * 500)
        if b < a:
            b = a
        if self.hip:
            return          # ROCm writes no sync records (the draws above keep both vendors' times equal)
        self.gbuf.append(T_SYNC % (name, self.dev, stream_tid, self.F(a), self.D(a, b), ext, name,
                                   extra, stream_arg, corr, self.dev))
        self.gbuf.append(T_FF % (corr, self.dev, stream_tid, self.F(a), 'ac2g', 'ac2g'))
        self.nsync += 1

    def stream_wait(self, th, stream, rec_corr, gap=700):
        rstream, done, eid = self.events[rec_corr]
        t = th.t + self.g(gap)
        e = t + 1300 + self.g(1200)
        th.t = e
        corr = self._next_corr()
        ext = self._cur_ext(th, corr)
        self._emit_launch(th, 'cudaStreamWaitEvent', t, e, corr, ext)
        self._sync_ev(th, 'Stream Wait Event', stream, stream, t, e, corr, ext,
                      '"wait_on_stream": %d, "wait_on_cuda_event_record_corr_id": %d, '
                      '"wait_on_cuda_event_id": %d, ' % (rstream, rec_corr, eid))
        if done > self.sfree[stream]:
            self.sfree[stream] = done

    def stream_sync(self, th, stream, gap=1500, after_copy=False):
        t = th.t + self.g(gap)
        done = self.sfree[stream]
        e = max(t + self.g(3500), done + 2000 + int(self.R() * 3000))
        th.t = e
        corr = self._next_corr()
        ext = self._cur_ext(th, corr)
        if self.hip and after_copy:
            # PyTorch's memcpy_and_sync is one hipMemcpyWithStream on ROCm, which returns once the copy is
            # done: no sync call (its time passes and its draws are made, so both vendors' times agree)
            self.R()
            self.R()
            return
        self._emit_launch(th, 'cudaStreamSynchronize', t, e, corr, ext)
        self._sync_ev(th, 'Stream Sync', stream, stream, t, e, corr, ext, '')

    def device_sync(self, th, gap=2000):
        t = th.t + self.g(gap)
        done = max(self.sfree.values())
        e = max(t + self.g(6000), done + 2500 + int(self.R() * 4000))
        th.t = e
        corr = self._next_corr()
        ext = self._cur_ext(th, corr)
        self._emit_launch(th, 'cudaDeviceSynchronize', t, e, corr, ext)
        self._sync_ev(th, 'Context Sync', -1, -1, t, e, corr, ext, '')

    def event_sync(self, th, rec_corr, gap=1500):
        rstream, done, eid = self.events[rec_corr]
        t = th.t + self.g(gap)
        e = max(t + self.g(3000), done + 1500 + int(self.R() * 2500))
        th.t = e
        corr = self._next_corr()
        ext = self._cur_ext(th, corr)
        self._emit_launch(th, 'cudaEventSynchronize', t, e, corr, ext)
        self._sync_ev(th, 'Event Sync', -1, -1, t, e, corr, ext,
                      '"wait_on_stream": %d, "wait_on_cuda_event_record_corr_id": %d, '
                      '"wait_on_cuda_event_id": %d, ' % (rstream, rec_corr, eid))

    # ---- NCCL
    def xfer_ns(self, coll, nbytes):
        n = self.ws
        if n <= 1:
            return 3000 + int(nbytes / 800.0)
        intra = n <= GPUS_PER_NODE
        bw = 170.0 if intra else 21.0          # bytes per ns (GB/s)
        lat = 9000 if intra else 22000
        if coll == 'allreduce':
            v = 2.0 * (n - 1) / n * nbytes / bw
        else:
            v = (n - 1.0) / n * nbytes / bw
        return int(lat + v)

    def coll_launch(self, th, coll, dtype, in_n, out_n, nbytes, gap=2500):
        """Launch an NCCL kernel on the NCCL stream; yields to the coordinator."""
        kname = NCCL_KERNEL[coll]
        if '%s' in kname:
            kname = kname % NCCL_SHORT[dtype]
        t = th.t + self.g(gap)
        blocked = self._queue_block(t)
        e = t + self.g(9000) + blocked
        th.t = e
        corr = self._next_corr()
        ext = self._cur_ext(th, corr)
        nch = 16 if self.ws <= GPUS_PER_NODE else 32
        hip = None
        if self.hip:
            api = HIP_API['cudaLaunchKernelExC']
            dims = hip_dims((nch, 1, 1), (256, 1, 1))
            hip = (api, T_RT_HIP_LAUNCH % (api, self.pid, th.tid, self.F(t), self.D(t, e), ext, RCCL_KERNEL,
                                           HIP_CID[api], corr, HIP_STREAM_HANDLE[S_NCCL], dims, 0))
        self._emit_launch(th, 'cudaLaunchKernelExC', t, e, corr, ext, hip)
        sf = self.sfree[S_NCCL]
        ready = e + 500 + int(2500 * self.R())
        q = self.R()
        if sf + 400 > ready:
            ready = sf + 400 + int(900 * q)
        key = (self.coll_idx, coll, nbytes)
        self.coll_idx += 1
        t_all = yield (key, ready)
        end = max(t_all + self.xfer_ns(coll, nbytes), ready + 3000) + int(self.R() * 1800)
        self.sfree[S_NCCL] = end
        ranks = ', '.join(str(i) for i in range(self.ws))
        blk = 544 if coll != 'all_to_all' else 640
        extra = (',      "Collective name": "%s", "In msg nelems": %d, "Out msg nelems": %d, '
                 '"Group size": %d, "dtype": "%s", "In split size": "[]", "Out split size": "[]", '
                 '"Process Group Name": "0", "Process Group Description": "default_pg", '
                 '"Process Group Ranks": "[%s]", "Seq": %d' % (coll, in_n, out_n, self.ws, dtype,
                                                              ranks, self.pg_seq))
        if hip:
            q = HIP_QUEUE[S_NCCL]
            self._emit_gpu(th, S_NCCL, ready, end, corr, ext,
                           T_KERNEL_HIP % (RCCL_KERNEL, self.dev, q, self.F(ready), self.D(ready, end), ext,
                                           self.dev, q, corr, dims + extra))
            return
        tail = ktail((nch, 1, 1), (blk, 1, 1), 96, 87568 if coll != 'all_to_all' else 41744) + extra
        self._emit_gpu(th, S_NCCL, ready, end, corr, ext,
                       T_KERNEL % (jstr(kname), self.dev, S_NCCL, self.F(ready), self.D(ready, end),
                                   ext, self.dev, S_NCCL, corr, tail))

    def collective(self, th, c10d_op, coll, annot, dtype, in_n, out_n, elem):
        """ProcessGroupNCCL pattern: record(7) / wait(20) / launch / record(20).

        Returns the correlation id of the work-end cudaEventRecord on the NCCL stream."""
        nbytes = (out_n if coll == '_allgather_base' else in_n) * elem
        self.pg_seq += 1
        ranks = ', '.join(str(i) for i in range(self.ws))
        self.begin(th, c10d_op, 'cpu_op', shapes([[in_n], [out_n]], [dtype_name(dtype)] * 2), gap=6000)
        self.begin(th, 'record_param_comms', 'cpu_op',
                   '"Collective name": "%s", "dtype": "%s", "In msg nelems": %d, "Out msg nelems": %d, '
                   '"Group size": %d, "Global rank start": 0, "Global rank stride": 1, '
                   '"Process Group Name": "0", "Process Group Description": "default_pg", '
                   '"Process Group Ranks": "[%s]", "In split size": "[]", "Out split size": "[]", '
                   '"Rank": %d, "Seq": %d, ' % (coll, dtype, in_n, out_n, self.ws, ranks, self.rank,
                                                self.pg_seq), gap=4000)
        self.runtime(th, 'cudaStreamIsCapturing', 900)
        rec = self.event_record(th, S_COMPUTE)
        self.stream_wait(th, S_NCCL, rec)
        self.begin(th, annot, 'user_annotation', gap=3500)
        self.runtime(th, 'cudaStreamGetCaptureInfo_v2', 900)
        yield from self.coll_launch(th, coll, dtype, in_n, out_n, nbytes)
        done = self.event_record(th, S_NCCL)
        self.end(th, 3000)
        self.end(th, 5000)
        self.end(th, 4000)
        return done

    # ------------------------------------------------------------------ compound ops
    def op_launch(self, th, name, args, kern_dur, seq=None, gap=4000, flow=False, pre=None):
        """cpu_op containing one kernel launch. Returns fwdbwd flow id if requested."""
        if seq is not None:
            args = args + '"Fwd thread id": 0, "Sequence number": %d, ' % seq
        self.begin(th, name, 'cpu_op', args, gap=gap)
        fid = self.fwd_flow(th, seq) if flow else None
        if pre:
            for p in pre:
                self.leaf(th, p, 3000)
        kern, dur = kern_dur
        self.launch(th, kern, dur)
        self.end(th, 2500)
        return fid

    def linear_fwd(self, th, N, Kd, tape, rows=None, bias=False):
        """aten::linear -> (t, matmul -> mm) or, with bias, (t, view, addmm, view)."""
        B, S = self.B, self.S
        M = rows if rows is not None else self.T
        seq = self.seqno
        self.seqno += 3
        if bias:
            self.begin(th, 'aten::linear', 'cpu_op',
                       shapes([[B, S, Kd], [N, Kd], [N]], [BF, BF, BF]) +
                       '"Fwd thread id": 0, "Sequence number": %d, ' % seq, gap=9000)
            f_t = self._fwd_t(th, seq, N, Kd)
            self.leaf(th, 'aten::view', 1800, 2000, shapes([[B, S, Kd], []], [BF, '']))
            self.begin(th, 'aten::addmm', 'cpu_op',
                       shapes([[N], [M, Kd], [Kd, N], [], []], [BF, BF, BF, 'Scalar', 'Scalar'], ['', '', '', '1', '1']) +
                       '"Fwd thread id": 0, "Sequence number": %d, ' % (seq + 1), gap=2500)
            f_mm = self.fwd_flow(th, seq + 1)
            kern, dur = self.gemm_kern(M, N, Kd)
            self.launch(th, kern, dur)
            if M * N < 1024 * 1024:
                self.launch(th, Kern(K_GEMM['splitk'], (cdiv(N, 32), cdiv(M, 32), 1), (32, 16, 1), 32, 0),
                            int(M * N * 8 / 1300.0) + 2500, gap=1000)
            self.end(th, 2500)
            self.begin(th, 'aten::view', 'cpu_op', shapes([[M, N], []], [BF, '']) +
                       '"Fwd thread id": 0, "Sequence number": %d, ' % (seq + 2), gap=1500)
            f_v = self.fwd_flow(th, seq + 2)
            self.end(th, 1500)
            self.end(th, 2000)
            tape.append((False, self.bwd_linear_bias, (seq, M, N, Kd, f_t, f_mm, f_v)))
            return
        self.begin(th, 'aten::linear', 'cpu_op',
                   shapes([[B, S, Kd], [N, Kd], []], [BF, BF, '']) +
                   '"Fwd thread id": 0, "Sequence number": %d, ' % seq, gap=9000)
        f_t = self._fwd_t(th, seq, N, Kd)
        self.begin(th, 'aten::matmul', 'cpu_op', shapes([[B, S, Kd], [Kd, N]], [BF, BF]) +
                   '"Fwd thread id": 0, "Sequence number": %d, ' % (seq + 1), gap=2000)
        self.begin(th, 'aten::reshape', 'cpu_op', shapes([[B, S, Kd], []], [BF, '']), gap=2000)
        self.leaf(th, 'aten::view', 1800, 1500, shapes([[B, S, Kd], []], [BF, '']))
        self.end(th, 1000)
        self.begin(th, 'aten::mm', 'cpu_op', shapes([[M, Kd], [Kd, N]], [BF, BF]) +
                   '"Fwd thread id": 0, "Sequence number": %d, ' % (seq + 1), gap=2500)
        f_mm = self.fwd_flow(th, seq + 1)
        kern, dur = self.gemm_kern(M, N, Kd)
        self.launch(th, kern, dur)
        self.end(th, 2500)
        self.leaf(th, 'aten::_unsafe_view', 2000, 1500, shapes([[M, N], []], [BF, '']))
        self.end(th, 1500)
        self.end(th, 2000)
        tape.append((False, self.bwd_linear, (seq, M, N, Kd, f_t, f_mm)))

    # ------------------------------------------------------------------ backward nodes
    def node_begin(self, th, node, seq, fid, gap=9000):
        self.begin(th, 'autograd::engine::evaluate_function: ' + node, 'cpu_op',
                   '"Fwd thread id": 1, "Sequence number": %d, ' % seq, gap=gap)
        self.begin(th, node, 'cpu_op', '"Fwd thread id": 1, "Sequence number": %d, ' % seq, gap=3000)
        if fid is not None:
            fr = th.stack[-1]
            th.buf.append(T_FF % (fid, self.pid, th.tid, self.F(fr[3]), 'fwdbwd', 'fwdbwd'))

    def node_end(self, th):
        self.end(th, 2500)
        self.end(th, 3500)

    def accumulate_grad(self, th, numel):
        self.begin(th, 'autograd::engine::evaluate_function: torch::autograd::AccumulateGrad', 'cpu_op', gap=7000)
        self.begin(th, 'torch::autograd::AccumulateGrad', 'cpu_op', gap=3000)
        self.begin(th, 'aten::detach', 'cpu_op', shapes([[numel]], ['float']), gap=2000)
        self.leaf(th, 'detach', 1500, 1500)
        self.end(th, 1500)
        self.end(th, 2000)
        self.end(th, 3000)

    def _fwd_t(self, th, seq, n, kd):
        """aten::t of a linear's weight [n, kd] in the forward pass (autograd sequence seq); its flow."""
        self.begin(th, 'aten::t', 'cpu_op', shapes([[n, kd]], [BF]) +
                   '"Fwd thread id": 0, "Sequence number": %d, ' % seq, gap=2500)
        f_t = self.fwd_flow(th, seq)
        self.begin(th, 'aten::transpose', 'cpu_op', shapes([[n, kd], [], []], [BF, 'Scalar', 'Scalar'], ['', '0', '1']), gap=1500)
        self.leaf(th, 'aten::as_strided', 1800, 1500, shapes([[n, kd], [], [], []], [BF, '', '', '']))
        self.end(th, 1200)
        self.end(th, 1000)
        return f_t

    def _bwd_t(self, th, a, b):
        self.begin(th, 'aten::t', 'cpu_op', shapes([[a, b]], [BF]), gap=2500)
        self.begin(th, 'aten::transpose', 'cpu_op', shapes([[a, b], [], []], [BF, 'Scalar', 'Scalar'], ['', '0', '1']), gap=1500)
        self.leaf(th, 'aten::as_strided', 1800, 1500)
        self.end(th, 1200)
        self.end(th, 1000)

    def _bwd_mm(self, th, M, N, Kd):
        """A linear's two backward GEMMs, under the mm node: the input's gradient (grad [M, N] x W [N, Kd])
        and the weight's (grad^T [N, M] x input [M, Kd]), each after its aten::t."""
        self._bwd_t(th, Kd, N)
        self.begin(th, 'aten::mm', 'cpu_op', shapes([[M, N], [N, Kd]], [BF, BF]), gap=2500)
        kern, dur = self.gemm_kern(M, Kd, N, 'nn')
        self.launch(th, kern, dur)
        self.end(th, 2500)
        self._bwd_t(th, M, N)
        self.begin(th, 'aten::mm', 'cpu_op', shapes([[N, M], [M, Kd]], [BF, BF]), gap=2500)
        kern, dur = self.gemm_kern(N, Kd, M, 'nt')
        self.launch(th, kern, dur)
        self.end(th, 2500)

    def bwd_linear_bias(self, th, seq, M, N, Kd, f_t, f_mm, f_v):
        self.node_begin(th, 'ViewBackward0', seq + 2, f_v)
        self.begin(th, 'aten::reshape', 'cpu_op', shapes([[M, N], []], [BF, '']), gap=2500)
        self.leaf(th, 'aten::view', 1800, 1500, shapes([[M, N], []], [BF, '']))
        self.end(th, 1000)
        self.node_end(th)
        self.begin(th, 'autograd::engine::evaluate_function: AddmmBackward0', 'cpu_op',
                   '"Fwd thread id": 1, "Sequence number": %d, ' % (seq + 1), gap=9000)
        self.begin(th, 'AddmmBackward0', 'cpu_op', '"Fwd thread id": 1, "Sequence number": %d, ' % (seq + 1), gap=3000)
        fr = th.stack[-1]
        th.buf.append(T_FF % (f_mm, self.pid, th.tid, self.F(fr[3]), 'fwdbwd', 'fwdbwd'))
        self._bwd_mm(th, M, N, Kd)
        self._bwd_t(th, N, Kd)
        self.end(th, 2500)
        self.begin(th, 'aten::sum', 'cpu_op', shapes([[M, N], [], [], []], [BF, '', 'Scalar', ''], ['', '', 'True', '']), gap=3000)
        self.launch(th, Kern(K['reduce_sum'], (cdiv(N, 32), 4, 1), (32, 16, 1), 32, 16), int(M * N * 2 / 1100.0) + 3000)
        self.end(th, 2500)
        self.leaf(th, 'aten::view', 1800, 2500, shapes([[1, N], []], [BF, '']))
        self.end(th, 3500)
        self.node_begin(th, 'TBackward0', seq, f_t)
        self._bwd_t(th, Kd, N)
        self.node_end(th)
        self.accumulate_grad(th, N * Kd)
        self.accumulate_grad(th, N)

    def bwd_linear(self, th, seq, M, N, Kd, f_t, f_mm):
        self.node_begin(th, 'UnsafeViewBackward0', seq + 1, None)
        self.begin(th, 'aten::reshape', 'cpu_op', shapes([[self.B, self.S, N], []], [BF, '']), gap=2500)
        self.leaf(th, 'aten::view', 1800, 1500, shapes([[self.B, self.S, N], []], [BF, '']))
        self.end(th, 1000)
        self.node_end(th)
        self.node_begin(th, 'MmBackward0', seq + 1, f_mm)
        self._bwd_mm(th, M, N, Kd)
        self.node_end(th)
        self.node_begin(th, 'TBackward0', seq, f_t)
        self._bwd_t(th, Kd, N)
        self.node_end(th)
        self.accumulate_grad(th, N * Kd)

    def simple_fwd(self, th, tape, fwd_name, inner, kern_key, numel, node, bwd_inner, bwd_keys,
                   arity=2, dims=None, types=None):
        """Elementwise-style forward op with one kernel; pushes its backward node."""
        seq = self.seqno
        self.seqno += 1
        dims = dims or [[self.B, self.S, self.H]]
        types = types or [BF] * len(dims)
        self.begin(th, fwd_name, 'cpu_op', shapes(dims, types) +
                   '"Fwd thread id": 0, "Sequence number": %d, ' % seq, gap=8000)
        fid = self.fwd_flow(th, seq)
        if inner:
            self.begin(th, inner, 'cpu_op', shapes(dims, types), gap=2500)
        if fwd_name in ('aten::layer_norm',):
            self.leaf(th, 'aten::empty', 2500)
            self.leaf(th, 'aten::empty', 2500)
            self.leaf(th, 'aten::empty', 2500)
        self.launch(th, *self.ew_kern(kern_key, numel, 2, arity))
        if inner:
            self.end(th, 2000)
        self.end(th, 2000)
        tape.append((False, self.bwd_simple, (node, seq, fid, bwd_inner, bwd_keys, numel, dims, types)))

    def bwd_simple(self, th, node, seq, fid, bwd_inner, bwd_keys, numel, dims, types):
        self.node_begin(th, node, seq, fid)
        if bwd_inner:
            self.begin(th, bwd_inner, 'cpu_op', shapes(dims, types), gap=3000)
            if bwd_inner == 'aten::native_layer_norm_backward':
                self.leaf(th, 'aten::empty_like', 3500)
                self.leaf(th, 'aten::empty_like', 3500)
            for k in bwd_keys:
                if k == 'ln_bwd_gb':
                    self.launch(th, Kern(K[k], (cdiv(self.H, 32), 1, 1), (32, 32, 1), 64, 8448),
                                int(numel * 2 / 900.0) + 3000)
                else:
                    self.launch(th, *self.ew_kern(k, numel, 2, 3))
            self.end(th, 2500)
        self.node_end(th)
        if node == 'NativeLayerNormBackward0':
            self.accumulate_grad(th, self.H)
            self.accumulate_grad(th, self.H)

    def attention_fwd(self, th, tape):
        B, S, NH = self.B, self.S, self.NH
        seq = self.seqno
        self.seqno += 1
        d = [[B, NH, S, 128]] * 3
        self.begin(th, 'aten::scaled_dot_product_attention', 'cpu_op',
                   shapes(d + [[], [], [], []], [BF, BF, BF, '', 'Scalar', 'Scalar', ''], ['', '', '', '', '0.', 'True', '']) +
                   '"Fwd thread id": 0, "Sequence number": %d, ' % seq, gap=9000)
        self.begin(th, 'aten::_scaled_dot_product_flash_attention', 'cpu_op',
                   shapes(d + [[], [], []], [BF, BF, BF, 'Scalar', 'Scalar', 'Scalar'], ['', '', '', '0.', 'True', 'False']) +
                   '"Fwd thread id": 0, "Sequence number": %d, ' % seq, gap=3000)
        fid = self.fwd_flow(th, seq)
        self.begin(th, 'aten::_flash_attention_forward', 'cpu_op', shapes(d, [BF] * 3), gap=3000)
        self.leaf(th, 'aten::empty_like', 3500)
        self.leaf(th, 'aten::empty', 3000)
        self.leaf(th, 'aten::empty', 3000)
        flops = 4.0 * B * NH * S * S * 128 / 2
        self.launch(th, Kern(K['flash_fwd'], (cdiv(S, 128), B, NH), (128, 1, 1), 255, 49152),
                    int(flops / 150e3) + 4000)
        self.end(th, 3000)
        self.leaf(th, 'aten::transpose', 2500)
        self.end(th, 2500)
        self.end(th, 2500)
        tape.append((False, self.bwd_attention, (seq, fid, flops)))

    def bwd_attention(self, th, seq, fid, flops):
        B, S, NH = self.B, self.S, self.NH
        self.node_begin(th, 'ScaledDotProductFlashAttentionBackward0', seq, fid)
        self.begin(th, 'aten::_scaled_dot_product_flash_attention_backward', 'cpu_op', gap=3500)
        self.begin(th, 'aten::_flash_attention_backward', 'cpu_op', gap=3000)
        self.leaf(th, 'aten::empty_like', 3000)
        self.leaf(th, 'aten::empty_like', 3000)
        self.leaf(th, 'aten::empty_like', 3000)
        self.leaf(th, 'aten::empty', 3000)
        self.launch(th, Kern(K['flash_bwd_dot'], (cdiv(S, 128), B, NH), (256, 1, 1), 40, 0),
                    int(B * NH * S * 128 * 4 / 1100.0) + 3000)
        self.leaf(th, 'aten::zeros', 4000)
        self.runtime(th, 'cudaFuncSetAttribute', 1500)
        self.launch(th, Kern(K['flash_bwd'], (cdiv(S, 128), B, NH), (256, 1, 1), 255, 98304),
                    int(flops * 2.5 / 140e3) + 5000)
        self.launch(th, Kern(K['flash_bwd_cvt'], (cdiv(S, 64), B, NH), (256, 1, 1), 64, 32768),
                    int(B * NH * S * 128 * 6 / 1100.0) + 2500)
        self.end(th, 3000)
        self.end(th, 2500)
        self.node_end(th)

    def residual_add(self, th, tape):
        seq = self.seqno
        self.seqno += 1
        n = self.T * self.H
        dims = [[self.B, self.S, self.H], [self.B, self.S, self.H], []]
        self.begin(th, 'aten::add', 'cpu_op', shapes(dims, [BF, BF, 'Scalar'], ['', '', '1']) +
                   '"Fwd thread id": 0, "Sequence number": %d, ' % seq, gap=7000)
        fid = self.fwd_flow(th, seq)
        self.launch(th, *self.ew_kern('add', n, 2, 3))
        self.end(th, 2000)
        tape.append((False, self.bwd_add, (seq, fid)))

    def bwd_add(self, th, seq, fid):
        self.node_begin(th, 'AddBackward0', seq, fid)
        self.node_end(th)

    # ------------------------------------------------------------------ FSDP / DDP / MoE
    def fsdp_all_gather(self, th, layer):
        fqn = 'layers.%d' % layer if layer >= 0 else 'root'
        numel = sum(self.layer_params(layer))
        self.begin(th, 'FSDP::all_gather (%s)' % fqn, 'user_annotation', gap=6000)
        self.begin(th, 'FSDP::all_gather_copy_in', 'user_annotation', gap=3000)
        self.begin(th, 'fsdp::all_gather_copy_in', 'cpu_op',
                   shapes([[], [], [], []], ['TensorList', 'ScalarList', 'Scalar', 'Scalar']), gap=3000)
        self.leaf(th, 'aten::empty', 3000)
        self.begin(th, 'aten::split_with_sizes', 'cpu_op', gap=2000)
        self.leaf(th, 'aten::as_strided', 1500, 1000)
        self.leaf(th, 'aten::as_strided', 1500, 1000)
        self.end(th, 1500)
        self.begin(th, 'aten::_foreach_copy_', 'cpu_op', gap=2500)
        shard = cdiv(numel, self.ws)
        self.launch(th, *self.ew_kern('cat', shard, 2, 2))
        self.end(th, 2000)
        self.end(th, 2500)
        self.end(th, 2000)
        done = yield from self.collective(th, 'c10d::_allgather_base_', '_allgather_base',
                                          'nccl:_all_gather_base', 'BFloat16', shard, shard * self.ws, 2)
        self.end(th, 3000)
        return done

    def fsdp_copy_out(self, th, layer, rec):
        numel = sum(self.layer_params(layer))
        self.begin(th, 'FSDP::all_gather_copy_out', 'user_annotation', gap=4000)
        self.stream_wait(th, S_COMPUTE, rec)
        self.begin(th, 'fsdp::split_with_sizes_copy', 'cpu_op', gap=3000)
        self.begin(th, 'aten::split_with_sizes_copy', 'cpu_op', gap=2500)
        self.launch(th, Kern(K['split_copy'], (min(4096, cdiv(numel, 2048)), 1, 1), (128, 1, 1), 32, 0),
                    int(numel * 4 / 1300.0) + 2500)
        self.end(th, 2000)
        self.end(th, 2000)
        self.end(th, 2500)

    def fsdp_reduce_scatter(self, th, layer):
        fqn = 'layers.%d' % layer if layer >= 0 else 'root'
        numel = sum(self.layer_params(layer))
        self.begin(th, 'FSDP::post_backward_reduce (%s)' % fqn, 'user_annotation', gap=6000)
        self.begin(th, 'FSDP::reduce_scatter_copy_in', 'user_annotation', gap=2500)
        self.begin(th, 'fsdp::chunk_cat', 'cpu_op', gap=2500)
        self.begin(th, 'aten::_chunk_cat', 'cpu_op', gap=2000)
        self.leaf(th, 'aten::empty', 2500)
        self.launch(th, Kern(K['chunk_cat'], (min(4096, cdiv(numel, 2048)), 1, 1), (128, 1, 1), 40, 0),
                    int(numel * 6 / 1300.0) + 2500)
        self.end(th, 2000)
        self.end(th, 2000)
        self.end(th, 2000)
        shard = cdiv(numel, self.ws)
        done = yield from self.collective(th, 'c10d::_reduce_scatter_base_', '_reduce_scatter_base',
                                          'nccl:_reduce_scatter_base', 'Float', shard * self.ws, shard, 4)
        self.end(th, 3000)
        self.rs_last = done
        return done

    def layer_params(self, layer):
        if layer < 0:
            return self.p_root
        return self.p_moe if self.is_moe(layer) else self.p_layer

    def all_to_all(self, th, name, seq=None, fid_node=None):
        """MoE dispatch/combine all_to_all (SendRecv kernels); compute waits on it."""
        n = self.T * self.H * 2 // max(1, self.ws) * max(1, self.ws)
        self.begin(th, name, 'user_annotation', gap=5000)
        done = yield from self.collective(th, 'c10d::alltoall_base_', 'all_to_all', 'nccl:all_to_all',
                                          'BFloat16', n, n, 2)
        self.stream_wait(th, S_COMPUTE, done)
        self.end(th, 3000)

    def tp_allreduce(self, th, name):
        """Tensor parallelism: a row-parallel output (or a column-parallel input's gradient), [T, H] bf16,
        summed over the group; the next compute waits for it."""
        n = self.T * self.H
        self.begin(th, name, 'user_annotation', gap=4000)
        done = yield from self.collective(th, 'c10d::allreduce_', 'allreduce', 'nccl:all_reduce', 'BFloat16',
                                          n, n, 2)
        self.stream_wait(th, S_COMPUTE, done)
        self.end(th, 3000)

    def bwd_tp_allreduce(self, th):
        yield from self.tp_allreduce(th, '## TP all_reduce (backward) ##')

    def bwd_all_to_all(self, th, node, seq, fid):
        self.node_begin(th, node, seq, fid)
        yield from self.all_to_all(th, '## MoE all_to_all (backward) ##')
        self.node_end(th)

    # ------------------------------------------------------------------ step phases
    def dataload(self, th, k, gap_step):
        self.begin(th, 'enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__',
                   'user_annotation', gap=15000)
        with_stack = self.cfg.with_stack
        if with_stack:
            self.pybegin(th, 'torch/utils/data/dataloader.py(701): __next__')
            self.pybegin(th, 'torch/utils/data/dataloader.py(1448): _next_data')
        if gap_step:
            # the host's speed (cpu_f, --cpu-scale) applies once: through g() in the traced calls below, and
            # to the untraced part here
            total = self.cfg.gap_ms * 1e6 * (0.7 + 0.6 * self.R())
            if self.straggler:
                total *= 1.6
            nsamp = max(4, self.B * 4)
            per = total / nsamp
            for s in range(nsamp):
                if with_stack:
                    self.pybegin(th, 'torch/utils/data/_utils/fetch.py(52): fetch')
                    self.pybegin(th, 'dataset.py(88): __getitem__')
                    self.pyleaf(th, 'tokenizer.py(310): encode', per * 0.45)
                    self.pyleaf(th, 'dataset.py(64): _augment', per * 0.25)
                self.leaf(th, 'aten::tensor', per * 0.05 + 8000)
                self.leaf(th, 'aten::lift_fresh', 2500)
                if with_stack:
                    self.end(th, 2500)
                    self.end(th, 2000)
                else:
                    th.t += int(per * 0.7 * self.cpu_f)
            if with_stack:
                self.pybegin(th, 'torch/utils/data/_utils/collate.py(171): default_collate')
            self.leaf(th, 'aten::stack', 250000, 4000, shapes([[]], ['TensorList']))
            self.leaf(th, 'aten::stack', 250000, 4000, shapes([[]], ['TensorList']))
            if with_stack:
                self.end(th, 3000)
                self.pybegin(th, 'torch/utils/data/_utils/pin_memory.py(64): pin_memory')
            self.begin(th, 'aten::pin_memory', 'cpu_op', gap=3000)
            self.begin(th, 'aten::_pin_memory', 'cpu_op', gap=2000)
            self.leaf(th, 'aten::empty', 4000)
            self.runtime(th, 'cudaHostAlloc', 35000 + 20000 * self.R())
            self.leaf(th, 'aten::copy_', 180000)
            self.end(th, 2500)
            self.end(th, 2500)
            if with_stack:
                self.end(th, 3000)
        else:
            if with_stack:
                self.pybegin(th, 'torch/utils/data/dataloader.py(1412): _get_data')
                self.pybegin(th, 'torch/utils/data/dataloader.py(1243): _try_get_data')
                self.pyleaf(th, 'multiprocessing/queues.py(113): get', 60000 + 200000 * self.R())
                self.end(th, 2000)
                self.end(th, 2000)
                self.pyleaf(th, 'torch/utils/data/dataloader.py(1480): _process_data', 9000)
            else:
                th.t += int(80000 + 200000 * self.R())
        if with_stack:
            self.end(th, 3000)
            self.end(th, 3000)
        self.end(th, 4000)

    def h2d_batch(self, th):
        self.begin(th, 'copy_batch_to_gpu', 'user_annotation', gap=8000)
        for _ in range(2):
            self.begin(th, 'aten::to', 'cpu_op', shapes([[self.B, self.S], [], [], [], [], [], [], []],
                                                        ['long int', 'Scalar', 'Scalar', '', '', 'Scalar', 'Scalar', '']), gap=6000)
            self.begin(th, 'aten::_to_copy', 'cpu_op', gap=3000)
            self.leaf(th, 'aten::empty_strided', 4000)
            self.begin(th, 'aten::copy_', 'cpu_op', shapes([[self.B, self.S], [self.B, self.S], []],
                                                           ['long int', 'long int', 'Scalar'], ['', '', 'True']), gap=3000)
            self.memop(th, 'HtoD', self.T * 8, S_COPY)
            self.end(th, 2500)
            self.end(th, 2500)
            self.end(th, 2500)
        rec = self.event_record(th, S_COPY)
        self.stream_wait(th, S_COMPUTE, rec)
        self.end(th, 3000)

    def zero_grad(self, th):
        self.begin(th, 'Optimizer.zero_grad#AdamW.zero_grad', 'user_annotation', gap=12000)
        th.t += self.g(30000 + 3 * self.nparams * 250)
        self.end(th, 3000)

    def layer_norm_fwd(self, th, tape):
        """A LayerNorm over the block's activations, its backward on the tape."""
        H = self.H
        self.simple_fwd(th, tape, 'aten::layer_norm', 'aten::native_layer_norm', 'ln_fwd',
                        self.T * H, 'NativeLayerNormBackward0', 'aten::native_layer_norm_backward',
                        ('ln_bwd_in', 'ln_bwd_gb'), 2,
                        [[self.B, self.S, H], [], [H], [H], []], [BF, '', BF, BF, 'Scalar'])

    def moe_all_to_all(self, th, tape, name):
        """An MoE all-to-all (dispatch or combine), its backward on the tape; generator."""
        seq = self.seqno
        self.seqno += 1
        yield from self.all_to_all(th, name)
        tape.append((True, self.bwd_all_to_all, ('_AllToAllBackward', seq, None)))

    def sublayer_end(self, th, name):
        """The end of attention or the MLP: tensor parallelism's all-reduce of its output, then
        (with stacks) its module's two Python frames closed; generator."""
        if self.tp > 1:
            yield from self.tp_allreduce(th, name)
        if self.cfg.with_stack:
            self.end(th, 2000)
            self.end(th, 2000)

    def block_fwd(self, th, tape, i):
        """One transformer block forward (plain or MoE); generator."""
        H, Fd, T = self.H, self.Fd, self.T
        ws = self.cfg.with_stack
        if ws:
            self.pybegin(th, 'nn.Module: TransformerBlock_%d' % i, module_id=10 + 8 * i)
            self.pybegin(th, 'model.py(142): forward')
            self.pybegin(th, 'nn.Module: LayerNorm_%d' % (2 * i), module_id=11 + 8 * i)
        self.layer_norm_fwd(th, tape)
        if ws:
            self.end(th, 1500)
            self.pybegin(th, 'nn.Module: Attention_%d' % i, module_id=12 + 8 * i)
            self.pybegin(th, 'model.py(88): forward')
        tp = self.tp
        if tp > 1:
            tape.append((True, self.bwd_tp_allreduce, ()))  # the QKV input's gradient, after its backward
        self.linear_fwd(th, 3 * H // tp, H, tape, bias=True)
        for _ in range(3):
            self.leaf(th, 'aten::view', 1800, 2500)
            self.leaf(th, 'aten::transpose', 2500, 2000)
        self.attention_fwd(th, tape)
        self.leaf(th, 'aten::transpose', 2500, 3000)
        self.leaf(th, 'aten::reshape', 3500, 2000)
        self.linear_fwd(th, H, H // tp, tape)
        yield from self.sublayer_end(th, '## TP all_reduce (attention) ##')
        self.residual_add(th, tape)
        if ws:
            self.pybegin(th, 'nn.Module: LayerNorm_%d' % (2 * i + 1), module_id=13 + 8 * i)
        self.layer_norm_fwd(th, tape)
        if ws:
            self.end(th, 1500)
        if self.is_moe(i):
            if ws:
                self.pybegin(th, 'nn.Module: MoE_%d' % i, module_id=14 + 8 * i)
                self.pybegin(th, 'moe.py(201): forward')
            # router
            self.linear_fwd(th, 8, H, tape)
            self.simple_fwd(th, tape, 'aten::softmax', 'aten::_softmax', 'softmax', T * 8,
                            'SoftmaxBackward0', 'aten::_softmax_backward_data', ('softmax_bwd',), 2,
                            [[self.B, self.S, 8], [], []], ['float', 'Scalar', ''])
            self.begin(th, 'aten::topk', 'cpu_op', shapes([[T, 8], [], [], [], []], ['float', 'Scalar', 'Scalar', 'Scalar', 'Scalar'], ['', '2', '-1', 'True', 'True']), gap=6000)
            self.leaf(th, 'aten::empty', 2500)
            self.leaf(th, 'aten::empty', 2500)
            self.launch(th, Kern(K['topk'], (cdiv(T, 64), 1, 1), (128, 1, 1), 40, 4096), 9000)
            self.launch(th, Kern(K['topk_sort'], (cdiv(T, 16), 1, 1), (16, 16, 1), 36, 2048), 7000)
            self.end(th, 2500)
            self.begin(th, 'aten::zeros', 'cpu_op', shapes([[], [], [], [], []], ['', '', '', '', '']), gap=4000)
            self.leaf(th, 'aten::empty', 2500)
            self.begin(th, 'aten::zero_', 'cpu_op', gap=2000)
            self.memop(th, 'memset', 8 * 8 * self.ws)
            self.end(th, 2000)
            self.end(th, 2000)
            self.op_launch(th, 'aten::index_select', shapes([[T, H], [], [T * 2]], [BF, 'Scalar', 'long int']),
                           self.ew_kern('index_select', 2 * T * H, 2, 2))
            yield from self.moe_all_to_all(th, tape, '## MoE dispatch ##')
            rows = max(64, 2 * T // self.E_local)
            for e_ in range(self.E_local):
                self.linear_fwd(th, Fd, H, tape, rows=rows)
                self.simple_fwd(th, tape, 'aten::gelu', None, 'gelu', rows * Fd, 'GeluBackward0',
                                'aten::gelu_backward', ('gelu_bwd',), 2,
                                [[rows, Fd], []], [BF, ''])
                self.linear_fwd(th, H, Fd, tape, rows=rows)
            yield from self.moe_all_to_all(th, tape, '## MoE combine ##')
            self.op_launch(th, 'aten::index_add_', shapes([[T, H], [], [T * 2], [T * 2, H]], [BF, 'Scalar', 'long int', BF]),
                           self.ew_kern('index_add', 2 * T * H, 2, 3))
            if ws:
                self.end(th, 2000)
                self.end(th, 2000)
        else:
            if ws:
                self.pybegin(th, 'nn.Module: MLP_%d' % i, module_id=14 + 8 * i)
                self.pybegin(th, 'model.py(61): forward')
            if tp > 1:
                tape.append((True, self.bwd_tp_allreduce, ()))  # fc1's input gradient
            self.linear_fwd(th, Fd // tp, H, tape, bias=True)
            self.simple_fwd(th, tape, 'aten::gelu', None, 'gelu', T * Fd // tp, 'GeluBackward0',
                            'aten::gelu_backward', ('gelu_bwd',), 2,
                            [[self.B, self.S, Fd // tp], []], [BF, ''], )
            self.linear_fwd(th, H, Fd // tp, tape, bias=True)
            yield from self.sublayer_end(th, '## TP all_reduce (mlp) ##')
        self.residual_add(th, tape)
        if ws:
            self.end(th, 2000)
            self.end(th, 2500)

    def forward(self, th, tape):
        mode = self.cfg.mode
        ws = self.cfg.with_stack
        self.begin(th, '## forward ##', 'user_annotation', gap=15000, annot=True)
        if ws:
            self.pybegin(th, 'torch/nn/modules/module.py(1750): _call_impl')
            self.pybegin(th, 'nn.Module: Transformer_0', module_id=1)
        if mode == 'ddp':
            self.begin(th, 'DistributedDataParallel.forward', 'user_annotation', gap=8000, annot=True)
            ag = None
        elif mode == 'tp':
            ag = None
        else:
            self.begin(th, 'FSDP::root_pre_forward', 'user_annotation', gap=8000)
            self.leaf(th, 'aten::_to_copy', 9000)
            self.end(th, 3000)
            ag = {}
            self.begin(th, 'FSDP::pre_forward (root)', 'user_annotation', gap=4000)
            ag[-1] = yield from self.fsdp_all_gather(th, -1)
            if self.L > 0:
                ag[0] = yield from self.fsdp_all_gather(th, 0)
            self.fsdp_copy_out(th, -1, ag[-1])
            self.end(th, 3000)
            tape.append((True, self.bwd_fsdp_post, (-1,)))
        # embedding
        seq = self.seqno
        self.seqno += 1
        self.begin(th, 'aten::embedding', 'cpu_op', shapes([[self.V, self.H], [self.B, self.S], [], [], []],
                                                            [BF, 'long int', 'Scalar', 'Scalar', 'Scalar'], ['', '', '-1', 'False', 'False']) +
                   '"Fwd thread id": 0, "Sequence number": %d, ' % seq, gap=9000)
        fid = self.fwd_flow(th, seq)
        self.leaf(th, 'aten::reshape', 3000)
        self.op_launch(th, 'aten::index_select', shapes([[self.V, self.H], [], [self.T]], [BF, 'Scalar', 'long int']),
                       self.ew_kern('embed_fwd', self.T * self.H, 2, 2))
        self.leaf(th, 'aten::view', 2000)
        self.end(th, 2500)
        tape.append((False, self.bwd_embedding, (seq, fid)))
        for i in range(self.L):
            if mode == 'fsdp':
                self.begin(th, 'FSDP::pre_forward (layers.%d)' % i, 'user_annotation', gap=6000)
                if i + 1 < self.L:
                    ag[i + 1] = yield from self.fsdp_all_gather(th, i + 1)
                self.fsdp_copy_out(th, i, ag.pop(i))
                self.end(th, 3000)
                tape.append((True, self.bwd_fsdp_post, (i,)))
            elif mode == 'ddp' and i % self.cfg.bucket_layers == 0:
                tape.append((True, self.bwd_ddp_bucket, (i,)))
            yield from self.block_fwd(th, tape, i)
            if mode == 'fsdp':
                self.begin(th, 'FSDP::post_forward (layers.%d)' % i, 'user_annotation', gap=4000)
                th.t += self.g(12000)
                self.end(th, 2000)
                tape.append((True, self.bwd_fsdp_pre, (i,)))
            th.flush()
        # final norm, lm head, loss
        self.simple_fwd(th, tape, 'aten::layer_norm', 'aten::native_layer_norm', 'ln_fwd', self.T * self.H,
                        'NativeLayerNormBackward0', 'aten::native_layer_norm_backward',
                        ('ln_bwd_in', 'ln_bwd_gb'), 2,
                        [[self.B, self.S, self.H], [], [self.H], [self.H], []], [BF, '', BF, BF, 'Scalar'])
        self.linear_fwd(th, self.V, self.H, tape)
        if mode == 'ddp':
            self.end(th, 4000)
        if ws:
            self.end(th, 3000)
            self.end(th, 3000)
        self.end(th, 5000)
        # loss (computed in fp32)
        V, T = self.V, self.T
        seq = self.seqno
        self.seqno += 3
        self.begin(th, 'aten::cross_entropy_loss', 'cpu_op', shapes([[T, V], [T], [], [], [], []],
                                                                     [BF, 'long int', '', 'Scalar', 'Scalar', 'Scalar'], ['', '', '', '1', '-100', '0.']) +
                   '"Fwd thread id": 0, "Sequence number": %d, ' % seq, gap=12000)
        self.op_launch(th, 'aten::to', shapes([[T, V], [], [], [], []], [BF, 'Scalar', 'Scalar', 'Scalar', '']),
                       self.ew_kern('to_f32', T * V, 3, 2), seq=seq, pre=('aten::_to_copy', 'aten::empty_strided'))
        self.begin(th, 'aten::log_softmax', 'cpu_op', '"Fwd thread id": 0, "Sequence number": %d, ' % (seq + 1), gap=4000)
        f_ls = self.op_launch(th, 'aten::_log_softmax', shapes([[T, V], [], []], ['float', 'Scalar', 'Scalar'], ['', '1', 'False']),
                              (Kern(K['log_softmax'], (T, 1, 1), (1024, 1, 1), 38, 0), int(T * V * 8 / 1300.0) + 4000),
                              seq=seq + 1, flow=True)
        self.end(th, 2500)
        self.begin(th, 'aten::nll_loss_nd', 'cpu_op', '"Fwd thread id": 0, "Sequence number": %d, ' % (seq + 2), gap=4000)
        self.begin(th, 'aten::nll_loss', 'cpu_op', '"Fwd thread id": 0, "Sequence number": %d, ' % (seq + 2), gap=2500)
        f_nll = self.op_launch(th, 'aten::nll_loss_forward', shapes([[T, V], [T], [], [], []], ['float', 'long int', '', 'Scalar', 'Scalar']),
                               (Kern(K['nll_fwd'], (1, 1, 1), (32, 1, 1), 32, 0), 9000), seq=seq + 2, flow=True)
        self.end(th, 2000)
        self.end(th, 2000)
        self.end(th, 3000)
        tape.append((False, self.bwd_loss, (seq, f_ls, f_nll)))

    def bwd_loss(self, th, seq, f_ls, f_nll):
        T, V = self.T, self.V
        self.node_begin(th, 'NllLossBackward0', seq + 2, f_nll)
        self.begin(th, 'aten::nll_loss_backward', 'cpu_op', gap=3000)
        self.op_launch(th, 'aten::zero_', '', self.ew_kern('fill', T * V, 4, 1), pre=('aten::fill_',))
        self.launch(th, Kern(K['nll_bwd'], (1, 1, 1), (32, 1, 1), 32, 0), 7000)
        self.end(th, 2500)
        self.node_end(th)
        self.node_begin(th, 'LogSoftmaxBackward0', seq + 1, f_ls)
        self.op_launch(th, 'aten::_log_softmax_backward_data', '',
                       (Kern(K['log_softmax_bwd'], (T, 1, 1), (1024, 1, 1), 40, 0), int(T * V * 12 / 1300.0) + 4000))
        self.node_end(th)
        self.node_begin(th, 'ToCopyBackward0', seq, None)
        self.op_launch(th, 'aten::to', '', self.ew_kern('to_f32', T * V, 3, 2), pre=('aten::_to_copy', 'aten::empty_strided'))
        self.node_end(th)

    def bwd_embedding(self, th, seq, fid):
        self.node_begin(th, 'EmbeddingBackward0', seq, fid)
        self.begin(th, 'aten::embedding_backward', 'cpu_op', gap=3000)
        self.begin(th, 'aten::embedding_dense_backward', 'cpu_op', gap=2500)
        self.op_launch(th, 'aten::zeros', '', self.ew_kern('fill_bf16', self.V * self.H, 2, 1), pre=('aten::empty',))
        self.launch(th, Kern(K['embed_bwd'], (cdiv(self.H, 32), 1, 1), (32, 32, 1), 48, 12288),
                    int(self.T * self.H * 6 / 900.0) + 6000)
        self.end(th, 2500)
        self.end(th, 2500)
        self.node_end(th)
        self.accumulate_grad(th, self.V * self.H)

    def bwd_fsdp_pre(self, th, i):
        self.begin(th, 'FSDP::pre_backward (layers.%d)' % i, 'user_annotation', gap=6000)
        if i == self.L - 1:
            self.bag[i] = yield from self.fsdp_all_gather(th, i)
        if i - 1 >= 0:
            self.bag[i - 1] = yield from self.fsdp_all_gather(th, i - 1)
        self.fsdp_copy_out(th, i, self.bag.pop(i))
        self.end(th, 3000)

    def bwd_fsdp_post(self, th, i):
        yield from self.fsdp_reduce_scatter(th, i)

    def bwd_ddp_bucket(self, th, i):
        """DDP reducer: bucket ready -> allreduce (f32)."""
        nb = self.cfg.bucket_layers
        layers = [j for j in range(i, min(self.L, i + nb))]
        numel = sum(sum(self.layer_params(j)) for j in layers)
        if i == 0:
            numel += sum(self.p_root)
        self.begin(th, 'torch::distributed::reducer::mark_variable_ready', 'cpu_op', gap=5000)
        self.op_launch(th, 'aten::div_', shapes([[numel], []], ['float', 'Scalar']),
                       self.ew_kern('mul_scalar', numel, 4, 2))
        done = yield from self.collective(th, 'c10d::allreduce_', 'allreduce', 'nccl:all_reduce',
                                          'Float', numel, numel, 4)
        self.end(th, 3000)
        self.ddp_done.append((done, layers))

    def backward(self, m, tape):
        bw = self.bwd
        self.begin(m, '## backward ##', 'user_annotation', gap=12000, annot=True)
        self.begin(m, 'aten::ones_like', 'cpu_op', shapes([[], [], [], [], [], []], ['float', 'Scalar', '', '', '', 'Scalar']), gap=5000)
        self.leaf(m, 'aten::empty_like', 4000)
        self.op_launch(m, 'aten::fill_', shapes([[], []], ['float', 'Scalar'], ['', '1']),
                       self.ew_kern('fill', 1, 4, 1))
        self.end(m, 2500)
        if self.cfg.with_stack:
            self.pyleaf(m, 'torch/autograd/__init__.py(347): backward', 6000)
        # hand over to the autograd device thread
        bw.t = max(bw.t, m.t + 15000 + int(20000 * self.R()))
        self.bag = {}
        self.ddp_done = []
        for is_gen, fn, args in reversed(tape):
            if is_gen:
                yield from fn(bw, *args)
            else:
                fn(bw, *args)
            if len(bw.buf) > 8192:
                bw.flush()
        if self.cfg.mode == 'fsdp':
            self.begin(bw, 'FSDP::root_post_backward', 'user_annotation', gap=8000)
            self.stream_wait(bw, S_COMPUTE, self.rs_last)
            self.end(bw, 4000)
        else:
            for done, layers in self.ddp_done:
                self.stream_wait(bw, S_COMPUTE, done)
            for done, layers in self.ddp_done:
                for j in layers:
                    for numel in self.layer_params(j)[:4]:
                        self.begin(bw, 'torch.distributed.ddp.reducer::copy_bucket_to_grad', 'cpu_op', gap=6000)
                        self.begin(bw, 'aten::copy_', 'cpu_op', shapes([[numel], [numel], []], ['float', 'float', 'Scalar'], ['', '', 'False']), gap=3000)
                        self.memop(bw, 'DtoD', numel * 4)
                        self.end(bw, 2500)
                        self.end(bw, 2500)
        bw.flush(force=True)
        # main thread was blocked inside backward()
        m.t = max(m.t, bw.t + 8000 + int(15000 * self.R()))
        self.end(m, 4000)

    def mta(self, th, op, numels, elem=4, seq=None):
        """aten::_foreach_* op -> many multi_tensor_apply kernels (chunked like ATen)."""
        depth, kname = MTA_OPS[op]
        name = op.split('.')[0]
        n = len(numels)
        maxt = MTA_MAX_TENSORS[depth]
        self.begin(th, name, 'cpu_op', shapes([[]] * min(depth, 3), ['TensorList'] * min(depth, 3)), gap=9000)
        chunk = 65536 * 320
        launches = []
        cur_t = 0
        cur_e = 0
        for numel in numels:
            cur_t += 1
            cur_e += numel
            while cur_e >= chunk:
                launches.append(chunk)
                cur_e -= chunk
                cur_t = 1 if cur_e else 0
            if cur_t >= maxt:
                launches.append(cur_e)
                cur_t = 0
                cur_e = 0
        if cur_t:
            launches.append(cur_e)
        kern = Kern(kname, (320, 1, 1), (512, 1, 1), 32 + 8 * depth, 0)
        for ne in launches:
            self.launch(th, kern, int(max(ne, 1) * elem * (depth + 1) / 1300.0) + 2800, gap=1200, rdur=4200)
        if op == 'aten::_foreach_norm':
            self.launch(th, Kern(K['lpnorm_cleanup'], (n, 1, 1), (512, 1, 1), 32, 4096), 3500)
        self.end(th, 3000)

    def optimizer(self, th, k):
        ws = self.cfg.with_stack
        numels = []
        for pl in [self.p_root] + [self.layer_params(i) for i in range(self.L)]:
            for p in pl:
                numels.append(cdiv(p, self.ws) if self.cfg.mode in ('fsdp', 'tp') else p)
        n = len(numels)
        if ws:
            self.pybegin(th, 'torch/nn/utils/clip_grad.py(76): clip_grad_norm_')
        self.mta(th, 'aten::_foreach_norm', numels)
        self.op_launch(th, 'aten::stack', shapes([[]], ['TensorList']), (Kern(K['stack_f32'], (cdiv(n, 128), 1, 1), (128, 1, 1), 30, 0), 3500),
                       pre=('aten::empty',))
        self.op_launch(th, 'aten::linalg_vector_norm', shapes([[n], [], [], [], []], ['float', 'Scalar', '', 'Scalar', '']),
                       (Kern(K['norm'], (1, 1, 1), (512, 1, 1), 32, 16), 4000))
        if self.cfg.mode == 'fsdp':
            done = yield from self.collective(th, 'c10d::allreduce_', 'allreduce', 'nccl:all_reduce', 'Float', 1, 1, 4)
            self.stream_wait(th, S_COMPUTE, done)
        self.op_launch(th, 'aten::add', shapes([[], []], ['float', 'Scalar'], ['', '1e-06']), self.ew_kern('add_f32', 1, 4, 3))
        self.op_launch(th, 'aten::reciprocal', shapes([[]], ['float']), self.ew_kern('reciprocal', 1, 4, 2))
        self.op_launch(th, 'aten::mul', shapes([[], []], ['float', 'Scalar']), self.ew_kern('mul_scalar', 1, 4, 2))
        self.op_launch(th, 'aten::clamp', shapes([[], [], []], ['float', '', 'Scalar']), self.ew_kern('clamp', 1, 4, 2))
        self.mta(th, 'aten::_foreach_mul_', numels)
        if ws:
            self.end(th, 3000)
        self.begin(th, 'Optimizer.step#AdamW.step', 'user_annotation', gap=15000, annot=True)
        if ws:
            self.pybegin(th, 'torch/optim/adamw.py(209): step')
            self.pybegin(th, 'torch/optim/adam.py(517): _multi_tensor_adam')
        self.begin(th, 'aten::_foreach_add_', 'cpu_op', shapes([[], []], ['TensorList', 'Scalar'], ['', '1']), gap=6000)
        th.t += self.g(200 * n + 20000)        # step counters on CPU
        self.end(th, 2500)
        if self.cfg.optimizer == 'foreach':
            self.mta(th, 'aten::_foreach_lerp_', numels)
            self.mta(th, 'aten::_foreach_mul_.Scalar', numels)
            self.mta(th, 'aten::_foreach_addcmul_', numels)
            self.mta(th, 'aten::_foreach_mul_.Scalar', numels)
            self.mta(th, 'aten::_foreach_sqrt', numels)
            self.mta(th, 'aten::_foreach_div_', numels)
            self.mta(th, 'aten::_foreach_add_', numels)
            self.mta(th, 'aten::_foreach_addcdiv_', numels)
        else:
            # torch.optim.AdamW(foreach=False): ~8 tiny elementwise kernels per parameter
            for numel in numels:
                for op, key, ar in (('aten::mul_', 'mul_scalar', 2), ('aten::lerp_', 'add_f32', 3),
                                    ('aten::mul_', 'mul_scalar', 2), ('aten::addcmul_', 'add_f32', 3),
                                    ('aten::sqrt', 'mul_scalar', 2), ('aten::div_', 'mul_scalar', 2),
                                    ('aten::add_', 'add_f32', 3), ('aten::addcdiv_', 'add_f32', 3)):
                    self.op_launch(th, op, shapes([[numel], []], ['float', 'Scalar']),
                                   self.ew_kern(key, numel, 4, ar), gap=5000)
        if ws:
            self.end(th, 3000)
            self.end(th, 3000)
        self.end(th, 6000)

    def log_loss(self, th):
        if self.cfg.with_stack:
            self.pybegin(th, 'train.py(262): log_metrics')
        self.begin(th, 'aten::item', 'cpu_op', shapes([[]], ['float']), gap=9000)
        self.begin(th, 'aten::_local_scalar_dense', 'cpu_op', shapes([[]], ['float']), gap=3000)
        self.memop(th, 'DtoH', 4, S_COMPUTE, blocking=True)
        self.stream_sync(th, S_COMPUTE, after_copy=True)
        self.end(th, 2500)
        self.end(th, 2500)
        if self.cfg.with_stack:
            self.end(th, 5000)

    # ------------------------------------------------------------------ main loop
    def run(self):
        """Generator: yields (collective key, ready time), receives max ready time."""
        cfg = self.cfg
        m = self.main
        plan = cfg.plan
        m.t = int(self.R() * 1500000)      # ranks start profiling at slightly different times
        self.bwd.t = m.t
        self.t_start = m.t
        ws = cfg.with_stack
        if ws:
            self.root_begin(m, 'train.py(412): <module>', m.t)
            self.root_begin(m, 'train.py(355): main', m.t)
            self.root_begin(m, 'train.py(298): train', m.t)

        for k in range(cfg.steps):
            st = plan[k]
            self.begin(m, 'ProfilerStep#%d' % (cfg.first_step + k), 'user_annotation', gap=20000)
            self.step_marks.append(m.t)
            if cfg.window_cut and k == cfg.steps - 1:
                self.cutting = True
            # each step draws from its own stream, and data loading from another: a knob that changes how
            # many draws one part makes (a stall, the optimizer) leaves every other draw as it was, so a
            # job generated again with a knob changed is the same job with that change (the ground truth
            # of bench/whatif_accuracy.py)
            self._step_rng(k, 'step')
            q = self.R()
            gap_step = st['gap'] or (self.straggler and q < 0.5)
            main_rng = self.rng
            self._step_rng(k, 'data')
            self.dataload(m, k, gap_step)
            self.rng, self.R = main_rng, main_rng.random
            if st['timing']:
                self.event_record(m, S_COMPUTE, 3000)       # timing start event
            self.h2d_batch(m)
            if ws:
                self.pybegin(m, 'train.py(231): train_step')
            self.zero_grad(m)
            tape = []
            yield from self.forward(m, tape)
            yield from self.backward(m, tape)
            yield from self.optimizer(m, k)
            if ws:
                self.end(m, 5000)
            last_cut = cfg.window_cut and k == cfg.steps - 1
            if st['timing'] and not last_cut:
                rec_end = self.event_record(m, S_COMPUTE, 3000)
                self.event_sync(m, rec_end)
                self.runtime(m, 'cudaEventElapsedTime', 2500)
            if st['log'] and not last_cut:
                self.log_loss(m)
            if st['devsync'] and not last_cut:
                if ws:
                    self.pyleaf(m, 'torch/cuda/__init__.py(954): synchronize', 4000)
                self.device_sync(m)
            self.end(m, 8000)
            m.flush(force=True)
            self.gflush()
        if ws:
            for _ in range(3):
                self.root_end(m, m.t + 20000)
        if cfg.window_cut:
            # profiler stops right after the last ProfilerStep: GPU work still in flight is lost
            self.window_end = m.t + 30000
            kept = [x for x in self.tail_gpu if x[0] <= self.window_end]
            self.kcount -= len(self.tail_gpu) - len(kept)
            self.dropped = len(self.tail_gpu) - len(kept)
            for x in kept:
                self.gbuf.append(x[1])
                self.gbuf.append(x[2])
            self.tail_gpu = []
            self.cutting = False
            self.t_end = self.window_end
        else:
            self.dropped = 0
            self.t_end = max(self.t_end, m.t, self.bwd.t) + 50000
        ann = []
        for a, b, name, stream, ext in self.annot_ev:
            if self.window_end is not None:
                if a > self.window_end:
                    continue
                b = min(b, self.window_end)
            tid = HIP_QUEUE[stream] if self.hip else stream
            ann.append(T_GANN % (name, self.dev, tid, self.F(a - 1), self.D(a - 1, b + 1), ext))
        self.annot_ev = ann
        if cfg.counters:
            self.make_counters()
        self.finish()

    def make_counters(self):
        names = ('sm__throughput.avg.pct_of_peak_sustained_elapsed',
                 'dram__throughput.avg.pct_of_peak_sustained_elapsed',
                 'pcie__read_bytes.sum.per_second')
        step = 1000000
        t = self.t_start
        while t < self.t_end:
            busy = 0.55 + 0.4 * self.R()
            vals = (100 * busy, 70 * busy * self.R(), 1e8 * self.R())
            for nm, v in zip(names, vals):
                self.counter_ev.append(T_COUNTER % (nm, self.dev, self.F(t), fnum(v, 3)))
            t += step

    # ------------------------------------------------------------------ output
    def finish(self):
        self.main.flush(force=True)
        self.bwd.flush(force=True)
        self.gflush(force=True)
        for p in self.parts.values():
            if p is not None:
                p.close()

    def meta_events(self):
        t0 = self.t_start
        ts = self.F(t0)
        pname = '"python3.10"'
        out = []
        M = T_META
        out.append(M % ('process_name', ts, self.pid, 0, 'name', pname))
        out.append(M % ('process_labels', ts, self.pid, 0, 'labels', '"CPU"'))
        out.append(M % ('process_sort_index', ts, self.pid, 0, 'sort_index', self.pid))
        for d in range(GPUS_PER_NODE):
            out.append(M % ('process_name', ts, d, 0, 'name', pname))
            out.append(M % ('process_labels', ts, d, 0, 'labels', '"GPU %d"' % d))
            out.append(M % ('process_sort_index', ts, d, 0, 'sort_index', (5000000 if self.hip else 16777216) + d))
        if self.nsync:
            out.append(M % ('thread_name', ts, self.dev, -1, 'name', '"Device %d"' % self.dev))
            out.append(M % ('thread_sort_index', ts, self.dev, -1, 'sort_index', -1))
        for s in sorted(HIP_QUEUE[x] for x in self.used_streams) if self.hip else sorted(self.used_streams):
            out.append(M % ('thread_name', ts, self.dev, s, 'name', '"stream %d "' % s))
            out.append(M % ('thread_sort_index', ts, self.dev, s, 'sort_index', s))
        for th in (self.main, self.bwd):
            out.append(M % ('thread_name', ts, self.pid, th.tid, 'name', '"thread %d (%s)"' % (th.tid, th.label)))
            out.append(M % ('thread_sort_index', ts, self.pid, th.tid, 'sort_index', th.tid))
        return out

    def tail_events(self):
        a = self.t_start - 30000
        b = self.t_end
        out = []
        out.append('  {\n    "ph": "X", "cat": "Trace", "ts": %s, "dur": %s,\n    "pid": "Spans", '
                   '"tid": "PyTorch Profiler",\n    "name": "PyTorch Profiler (0)",\n    "args": {\n'
                   '      "Op count": 0\n    }\n  }' % (self.F(a), self.D(a, b)))
        out.append(T_META % ('process_sort_index', self.F(a), '"Spans"', 0, 'sort_index', 536870912))
        out.append('  {\n    "name": "Iteration Start: PyTorch Profiler", "ph": "i", "s": "g",\n'
                   '    "pid": "Traces", "tid": "Trace PyTorch Profiler", "ts": %s\n  }' % self.F(a))
        out.append('  {\n    "name": "Record Window End", "ph": "i", "s": "g",\n'
                   '    "pid": "", "tid": "", "ts": %s\n  }' % self.F(b + 20000))
        return out

    def header(self):
        cfg = self.cfg
        props = MI300X_PROPS if self.hip else A100_PROPS
        devs = ',\n'.join('    {\n      "id": %d, %s\n    }' % (d, props) for d in range(GPUS_PER_NODE))
        ranks = ', '.join(str(i) for i in range(self.ws))
        dist = ('{"backend": "nccl", "rank": %d, "world_size": %d, "pg_count": 1, "pg_config": '
                '[{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl", "pg_size": %d, '
                '"ranks": [%s]}], "nccl_version": "2.21.5"}' % (self.rank, self.ws, self.ws, ranks))
        h = ['{\n  "schemaVersion": 1,\n  "deviceProperties": [\n%s\n  ],\n' % devs,
             '  "distributedInfo": %s,\n' % dist,
             '  "roctracer_version": 4.1,\n  "hip_runtime_version": 60342134,\n'
             '  "hip_driver_version": 60342134,\n' if self.hip else '',
             '  "record_shapes": 1,\n']
        if cfg.with_stack:
            h.append('  "with_stack": 1,\n')
        if cfg.profile_memory:
            h.append('  "profile_memory": 1,\n')
        h.append('  "trace_id": "%032X",\n' % ((cfg.seed * 2654435761 + self.rank * 40503 + 0x5EED) & ((1 << 128) - 1)))
        if cfg.time_format == 'modern':
            h.append('  "displayTimeUnit": "ms",\n  "baseTimeNanoseconds": %d,\n' % cfg.base_ns)
        elif cfg.time_format == 'ns':
            h.append('  "displayTimeUnit": "ns",\n')
        h.append('  "traceEvents": [\n')
        return ''.join(h)

    def assemble(self, path):
        """Write the final rank file from the part files."""
        th_sections = []
        for th in (self.bwd, self.main):
            roots = []
            for name, t0, t1, args in th.roots:
                roots.append(T_X % ('python_function', name, self.pid, th.tid, self.F(t0),
                                    self.D(t0, t1 if t1 is not None else self.t_end), args))
            th_sections.append((roots, th))
        tail = (self.annot_ev + self.counter_ev + self.meta_events() + self.tail_events())
        cfg = self.cfg
        if cfg.gzip:
            f = gzip.GzipFile(filename=os.path.basename(path), mode='wb', compresslevel=cfg.gzip_level,
                              fileobj=open(path, 'wb'), mtime=0)
        else:
            f = open(path, 'wb')
        total = 0
        nev = 0
        try:
            s = self.header().encode()
            f.write(s)
            total += len(s)
            for roots, th in th_sections:
                if roots:
                    s = (',\n'.join(roots) + ',\n').encode()
                    f.write(s)
                    total += len(s)
                    nev += len(roots)
                fn = os.path.join(self.tmpdir, ('main' if th is self.main else 'bwd') + '.part')
                with open(fn, 'rb') as src:
                    shutil.copyfileobj(src, f, 1 << 22)
                total += th.nbytes
                nev += th.nev
            with open(os.path.join(self.tmpdir, 'gpu.part'), 'rb') as src:
                shutil.copyfileobj(src, f, 1 << 22)
            total += self.gbytes
            nev += self.gnev
            s = (',\n'.join(tail) + '\n  ],\n  "traceName": "%s"\n}\n' % jstr(os.path.basename(path))).encode()
            f.write(s)
            total += len(s)
            nev += len(tail)
        finally:
            fo = getattr(f, 'fileobj', None) if cfg.gzip else None
            f.close()
            if fo is not None:
                fo.close()
        for key in ('main', 'bwd', 'gpu'):
            try:
                os.remove(os.path.join(self.tmpdir, key + '.part'))
            except OSError:
                pass
        try:
            os.rmdir(self.tmpdir)
        except OSError:
            pass
        return total, nev

    def dry_bytes(self):
        return self.main.nbytes + self.bwd.nbytes + self.gbytes


def dtype_name(d):
    return {'Float': 'float', 'BFloat16': BF}.get(d, d)


# --------------------------------------------------------------------------
# Lock-step driver
# --------------------------------------------------------------------------
def drive_local(sims):
    """Run rank generators in lock-step in this process.  Returns nothing."""
    gens = [s.run() for s in sims]
    reqs = []
    for gen in gens:
        try:
            reqs.append(next(gen))
        except StopIteration:
            reqs.append(None)
    return gens, reqs


def _advance(gens, reqs, resp):
    out = []
    for gen, val in zip(gens, resp):
        try:
            out.append(gen.send(val))
        except StopIteration:
            out.append(None)
    return out


def _rank_sims(cfg, ranks):
    """A RankSim per rank, each with its scratch folder under cfg.out."""
    sims = []
    for r in ranks:
        td = os.path.join(cfg.out, '.tmp-rank-%d' % r)
        os.makedirs(td, exist_ok=True)
        sims.append(RankSim(cfg, r, td))
    return sims


def _assemble(cfg, sims):
    """Writes each simulated rank's file: (rank, path, bytes, events, kernels) per rank."""
    results = []
    for s in sims:
        path = os.path.join(cfg.out, 'rank-%d.json%s' % (s.rank, '.gz' if cfg.gzip else ''))
        nbytes, nev = s.assemble(path)
        results.append((s.rank, path, nbytes, nev, s.kcount))
    return results


def _worker(conn, cfg, ranks):
    try:
        sims = _rank_sims(cfg, ranks)
        gens, reqs = drive_local(sims)
        while True:
            conn.send(reqs)
            resp = conn.recv()
            if resp is None:
                break
            reqs = _advance(gens, reqs, resp)
        conn.send(('done', _assemble(cfg, sims)))
    except Exception:
        import traceback
        conn.send(('error', traceback.format_exc()))
    finally:
        conn.close()


def _resolve(all_reqs):
    """all_reqs: list of (key, ready) or None for every rank.  Returns t_all list."""
    live = [r for r in all_reqs if r is not None]
    if not live:
        return None
    if len(live) != len(all_reqs):
        raise RuntimeError('ranks disagree on the number of collectives')
    key0 = live[0][0]
    for r in live:
        if r[0] != key0:
            raise RuntimeError('collective mismatch across ranks: %r vs %r' % (r[0], key0))
    t_all = max(r[1] for r in live)
    return [t_all] * len(all_reqs)


def generate(cfg):
    os.makedirs(cfg.out, exist_ok=True)
    ranks = list(range(cfg.ranks))
    jobs = max(1, min(cfg.jobs, cfg.ranks))
    results = []
    if jobs == 1:
        sims = _rank_sims(cfg, ranks)
        gens, reqs = drive_local(sims)
        while True:
            resp = _resolve(reqs)
            if resp is None:
                break
            reqs = _advance(gens, reqs, resp)
        return _assemble(cfg, sims)
    import multiprocessing as mp
    try:
        ctx = mp.get_context('fork')
    except ValueError:
        ctx = mp.get_context()
    groups = [ranks[i::jobs] for i in range(jobs)]
    conns, procs = [], []
    for g in groups:
        a, b = ctx.Pipe()
        p = ctx.Process(target=_worker, args=(b, cfg, g))
        p.start()
        conns.append(a)
        procs.append(p)
    try:
        while True:
            msgs = [c.recv() for c in conns]
            for m in msgs:
                if isinstance(m, tuple) and m and m[0] == 'error':
                    raise RuntimeError('worker failed:\n' + m[1])
            flat = [None] * cfg.ranks
            for g, m in zip(groups, msgs):
                for r, req in zip(g, m):
                    flat[r] = req
            resp = _resolve(flat)
            if resp is None:
                for c in conns:
                    c.send(None)
                break
            for g, c in zip(groups, conns):
                c.send([resp[r] for r in g])
        for c in conns:
            m = c.recv()
            if m[0] == 'error':
                raise RuntimeError('worker failed:\n' + m[1])
            results.extend(m[1])
    finally:
        for p in procs:
            p.join()
    results.sort()
    return results


# --------------------------------------------------------------------------
# Configuration
# --------------------------------------------------------------------------
class Cfg(object):
    pass


def make_plan(cfg):
    rng = random.Random(cfg.seed * 131 + 5)
    plan = []
    for k in range(cfg.steps):
        plan.append({
            'gap': (k == 1 and cfg.steps >= 3 and cfg.gap_prob > 0) or (k >= 2 and rng.random() < cfg.gap_prob),
            'timing': k % 2 == 0,
            'log': True,
            'devsync': k % 3 == 2,
        })
    return plan


def calibrate(cfg):
    """Estimate bytes per (step, layer) with two dry single-rank runs."""
    def dry(L):
        c = Cfg()
        c.__dict__.update(cfg.__dict__)
        c.layers = L
        c.steps = 1
        c.plan = make_plan(c)
        s = RankSim(c, 0, None)
        gen = s.run()
        try:
            req = next(gen)
            while True:
                req = gen.send(req[1])
        except StopIteration:
            pass
        hdr = len(s.header()) + sum(len(x) + 2 for x in s.meta_events() + s.tail_events() + s.annot_ev)
        return s.dry_bytes() + hdr
    m = max(4, 2 * max(1, cfg.moe_every) if cfg.moe_every > 0 else 4)
    b1 = dry(m)
    b2 = dry(2 * m)
    per_layer = max(1.0, (b2 - b1) / float(m))
    fixed = b1 - per_layer * m
    target = cfg.target_mb * 1e6
    layers = int(round((target / max(1, cfg.steps) - fixed) / per_layer))
    return max(1, layers), per_layer, fixed


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description='Synthetic multi-rank PyTorch profiler (Kineto) trace generator',
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument('--out', help='output directory')
    ap.add_argument('--ranks', type=int, default=2)
    ap.add_argument('--steps', type=int, default=5)
    ap.add_argument('--target-mb', type=float, default=100.0, help='approx. uncompressed MB per rank')
    ap.add_argument('--layers', type=int, default=0, help='transformer layers (overrides --target-mb)')
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--gzip', action='store_true', help='write rank-N.json.gz')
    ap.add_argument('--gzip-level', type=int, default=1)
    ap.add_argument('--ns', action='store_true', help='alias for --time-format ns')
    ap.add_argument('--time-format', choices=('modern', 'ns', 'legacy'), default='modern')
    ap.add_argument('--straggler', type=int, default=-1, help='straggler rank (default none)')
    ap.add_argument('--straggler-slowdown', type=float, default=1.25)
    ap.add_argument('--host-slow', default='', help='ranks whose host is slower (comma list: 2,5), the GPU as '
                    "the others'")
    ap.add_argument('--host-slowdown', type=float, default=4.0, help='their CPU time factor (default 4)')
    ap.add_argument('--mode', choices=('fsdp', 'ddp', 'tp'), default='fsdp')
    ap.add_argument('--optimizer', choices=('foreach', 'forloop'), default='foreach',
                    help='AdamW implementation: foreach (multi_tensor_apply kernels) or forloop '
                         '(per-parameter tiny kernels, CPU/launch bound)')
    ap.add_argument('--moe-every', type=int, default=4, help='every Nth layer is MoE (0 = none)')
    ap.add_argument('--bucket-layers', type=int, default=4, help='DDP: layers per allreduce bucket')
    ap.add_argument('--hidden', type=int, default=1024)
    ap.add_argument('--seq', type=int, default=2048)
    ap.add_argument('--batch', type=int, default=2)
    ap.add_argument('--vocab', type=int, default=32000)
    ap.add_argument('--cpu-scale', type=float, default=2.0,
                    help='multiplier on all CPU op/runtime costs (profiler overhead, host speed)')
    ap.add_argument('--gpu-scale', type=float, default=1.0, help='multiplier on GPU kernel durations')
    ap.add_argument('--gap-prob', type=float, default=0.3, help='probability of a data-loading stall per step')
    ap.add_argument('--gap-ms', type=float, default=25.0, help='mean data-loading stall (ms)')
    ap.add_argument('--vendor', choices=('cuda', 'hip'), default='cuda',
                    help='whose trace: cuda (NVIDIA, CUPTI) or hip (what PyTorch on ROCm writes for the same '
                         'work: HIP calls with their stream, no cuda_sync records, RCCL and Tensile kernels, '
                         'an AMD GPU); the times are the same for both')
    ap.add_argument('--first-step', type=int, default=10, help='number of the first ProfilerStep#')
    ap.add_argument('--no-stack', action='store_true', help='no python_function events')
    ap.add_argument('--profile-memory', action='store_true', help='emit [memory] instant events')
    ap.add_argument('--window-cut', action='store_true',
                    help='end the profiling window while the GPU is still busy (no sync in the last '
                         'step; GPU ops finishing after the window are dropped, leaving launches '
                         'with lone ac2g "s" flows as in real traces)')
    ap.add_argument('--clock-skew-us', type=float, default=0.0,
                    help='host clock offset per node (nodes of 8 ranks; node 0 unskewed), uniformly in '
                         '+-this many us, applied to output timestamps only')
    ap.add_argument('--skew-tolerance-us', type=float, default=None,
                    help='validation: tolerance for cross-rank collective ordering (default: --clock-skew-us)')
    ap.add_argument('--counters', action='store_true', help='emit ph "C" hardware counter events')
    ap.add_argument('--jobs', type=int, default=0,
                    help='worker processes simulating ranks in lock-step (default: min(ranks, cpus-1))')
    ap.add_argument('--validate', action='store_true', help='validate the output after generation')
    ap.add_argument('--validate-only', metavar='DIR', help='only validate the traces in DIR')
    ap.add_argument('--quiet', action='store_true')
    a = ap.parse_args(argv)
    if not a.validate_only and not a.out:
        ap.error('--out is required')
    return a


def build_cfg(a):
    cfg = Cfg()
    cfg.out = a.out
    cfg.ranks = max(1, a.ranks)
    cfg.steps = max(1, a.steps)
    cfg.target_mb = a.target_mb
    cfg.seed = a.seed
    cfg.gzip = a.gzip
    cfg.gzip_level = a.gzip_level
    cfg.time_format = 'ns' if a.ns else a.time_format
    cfg.straggler = a.straggler
    cfg.straggler_slowdown = a.straggler_slowdown
    cfg.host_slow = {int(x) for x in a.host_slow.split(',') if x.strip()}
    cfg.host_slowdown = a.host_slowdown
    cfg.mode = a.mode
    cfg.optimizer = a.optimizer
    cfg.moe_every = max(0, a.moe_every)
    cfg.bucket_layers = max(1, a.bucket_layers)
    cfg.hidden = a.hidden
    cfg.ffn = 4 * a.hidden
    cfg.seq = a.seq
    cfg.batch = a.batch
    cfg.vocab = a.vocab
    cfg.cpu_scale = a.cpu_scale
    cfg.gpu_scale = a.gpu_scale
    cfg.gap_prob = a.gap_prob
    cfg.gap_ms = a.gap_ms
    cfg.first_step = a.first_step
    cfg.vendor = a.vendor
    cfg.with_stack = not a.no_stack
    cfg.profile_memory = a.profile_memory
    cfg.counters = a.counters
    cfg.window_cut = a.window_cut
    cfg.clock_skew_ns = int(a.clock_skew_us * 1000)
    cfg.jobs = a.jobs if a.jobs > 0 else min(cfg.ranks, max(1, (os.cpu_count() or 1) - 1))
    # time origin (deterministic per seed)
    srng = random.Random(cfg.seed * 977 + 3)
    epoch_ns = (1717000000 + srng.randrange(0, 30000000)) * 1000000000 + srng.randrange(0, 10 ** 9)
    if cfg.time_format == 'modern':
        rel = srng.randrange(10 * 10 ** 9, 7200 * 10 ** 9)       # process uptime at profiler start
        cfg.base_ns = epoch_ns - rel
        cfg.origin_ns = rel
    else:
        cfg.base_ns = 0
        cfg.origin_ns = epoch_ns
    cfg.layers = a.layers
    cfg.plan = None
    return cfg


# --------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------
def _ns(v):
    """Exact integer ns from a parsed ts/dur (int microseconds or Decimal)."""
    return int(v * 1000)


def validate_dir(d, quiet=False, tol_ns=0):
    from decimal import Decimal
    files = sorted(f for f in os.listdir(d) if f.startswith('rank-') and (f.endswith('.json') or f.endswith('.json.gz')))
    if not files:
        return False, ['no rank-*.json[.gz] files in %s' % d]
    errors = []
    colls = {}
    summary = []
    for fn in files:
        path = os.path.join(d, fn)
        opener = gzip.open if fn.endswith('.gz') else open
        t0 = time.time()
        with opener(path, 'rt') as f:
            data = json.load(f, parse_float=Decimal)
        tload = time.time() - t0
        errs = []
        ev = data['traceEvents']
        for key in ('schemaVersion', 'deviceProperties', 'distributedInfo', 'traceEvents', 'traceName'):
            if key not in data:
                errs.append('missing top-level key %s' % key)
        rank = data['distributedInfo']['rank']
        rt = {}
        gpu = []
        syncs = []
        flows_s = {}
        flows_f = {}
        fwdbwd = {'s': [], 'f': []}
        cpu = {}
        nsteps = 0
        step_starts = []
        notes = []
        for e in ev:
            ph = e.get('ph')
            cat = e.get('cat')
            if ph == 'X':
                ts = _ns(e['ts'])
                dur = _ns(e['dur'])
                if dur < 0:
                    errs.append('negative dur %r' % e['name'])
                if cat == 'cuda_runtime':
                    c = e['args']['correlation']
                    if c in rt:
                        errs.append('duplicate runtime correlation %d' % c)
                    rt[c] = (e['name'], ts, ts + dur, e['pid'], e['tid'])
                    cpu.setdefault((e['pid'], e['tid']), []).append((ts, ts + dur, e['name']))
                elif cat in ('kernel', 'gpu_memcpy', 'gpu_memset'):
                    a = e['args']
                    gpu.append((e['pid'], e['tid'], ts, ts + dur, a['correlation'], e['name'], a))
                elif cat == 'cuda_sync':
                    syncs.append((e, ts, ts + dur))
                elif cat in ('cpu_op', 'user_annotation', 'python_function'):
                    cpu.setdefault((e['pid'], e['tid']), []).append((ts, ts + dur, e['name']))
                    if cat == 'user_annotation' and e['name'].startswith('ProfilerStep#'):
                        nsteps += 1
                        step_starts.append(ts)
            elif ph == 's' and cat == 'ac2g':
                flows_s[e['id']] = e
            elif ph == 'f' and cat == 'ac2g':
                flows_f.setdefault(e['id'], []).append(e)
            elif cat == 'fwdbwd':
                fwdbwd[ph].append((e['pid'], e['tid'], _ns(e['ts'])))
        # 1. per-stream non-overlap
        by_stream = {}
        for g in gpu:
            by_stream.setdefault((g[0], g[1]), []).append(g)
        nover = 0
        for k, lst in by_stream.items():
            lst.sort(key=lambda x: x[2])
            for a, b in zip(lst, lst[1:]):
                if b[2] < a[3]:
                    nover += 1
                    if nover <= 3:
                        errs.append('overlap on stream %r: %s [%d,%d] and %s [%d,%d]' % (k, a[5][:40], a[2], a[3], b[5][:40], b[2], b[3]))
        # 2. launches and flows
        min_lag = None
        nbad = 0
        launched_on = {}
        for g in gpu:
            c = g[4]
            r = rt.get(c)
            if r is None or (r[0] not in LAUNCH_APIS and r[0] not in HIP_LAUNCH_APIS):
                nbad += 1
                if nbad <= 3:
                    errs.append('GPU op %s corr %d has no launching runtime event' % (g[5][:40], c))
                continue
            lag = g[2] - r[1]
            if min_lag is None or lag < min_lag:
                min_lag = lag
            if g[2] < r[1]:
                errs.append('GPU op corr %d starts before its launch' % c)
            fs = flows_s.get(c)
            ff = flows_f.get(c, [])
            if r[0] == 'hipMemsetAsync':
                # not a flow start on ROCm: a lone f on the call
                if not any(_ns(x['ts']) == r[1] and x['tid'] == r[4] for x in ff):
                    errs.append('missing ac2g f flow on the call of corr %d' % c)
            elif fs is None or _ns(fs['ts']) != r[1] or fs['tid'] != r[4]:
                errs.append('missing/mismatched ac2g s flow for corr %d' % c)
            if not any(_ns(x['ts']) == g[2] and x['tid'] == g[1] and x['pid'] == g[0] for x in ff):
                errs.append('missing/mismatched ac2g f flow for corr %d' % c)
            launched_on[c] = g
        matched = set(g[4] for g in gpu)
        unmatched = [r for c, r in rt.items() if (r[0] in LAUNCH_APIS or r[0] in HIP_LAUNCH_APIS) and c not in matched]
        last_step_start = max(step_starts) if step_starts else None
        early = [r for r in unmatched if last_step_start is None or r[1] < last_step_start]
        if early:
            errs.append('%d launch runtime events without GPU op before the last step' % len(early))
        if unmatched:
            notes.append('%d launches in the last step without GPU op (window cut)' % len(unmatched))
        # 3. CPU nesting per thread (no partial overlaps)
        npart = 0
        for k, lst in cpu.items():
            lst.sort(key=lambda x: (x[0], -x[1]))
            stack = []
            for a, b, nm in lst:
                while stack and stack[-1][1] <= a:
                    stack.pop()
                if stack and b > stack[-1][1]:
                    npart += 1
                    if npart <= 3:
                        errs.append('partial overlap on thread %r: %s inside %s' % (k, nm, stack[-1][2]))
                stack.append((a, b, nm))
        # 4. syncs (per-stream launch-ordered prefix max of GPU end times)
        import bisect
        per_stream = {}
        for g in gpu:
            if g[4] in rt:
                per_stream.setdefault(g[1], []).append((rt[g[4]][1], g[3], g[2]))
        pre = {}
        for st, lst in per_stream.items():
            lst.sort()
            mx = []
            cur = -1
            for lt, en, sta in lst:
                cur = max(cur, en)
                mx.append(cur)
            pre[st] = ([x[0] for x in lst], mx, [x[2] for x in lst])

        def done_before(st, t):
            """max end of GPU ops on stream st launched before time t (-1 if none)."""
            p = pre.get(st)
            if not p:
                return -1
            i = bisect.bisect_left(p[0], t)
            return p[1][i - 1] if i > 0 else -1

        for e, a, b in syncs:
            args = e['args']
            c = args['correlation']
            r = rt.get(c)
            if r is None:
                errs.append('cuda_sync corr %d without runtime' % c)
                continue
            kind = args['cuda_sync_kind']
            if not (r[1] <= a and b <= r[2]):
                errs.append('cuda_sync %s not inside its runtime call' % kind)
            if kind == 'Stream Sync':
                if done_before(args['stream'], r[1]) > r[2]:
                    errs.append('Stream Sync corr %d returns before its stream drained' % c)
            elif kind == 'Context Sync':
                if max([done_before(st, r[1]) for st in pre] + [-1]) > r[2]:
                    errs.append('Context Sync corr %d returns before the device drained' % c)
            elif kind in ('Event Sync', 'Stream Wait Event'):
                rc = args['wait_on_cuda_event_record_corr_id']
                rec = rt.get(rc)
                if rec is None or rec[0] != 'cudaEventRecord':
                    errs.append('%s refers to unknown cudaEventRecord %r' % (kind, rc))
                    continue
                pend = done_before(args['wait_on_stream'], rec[1])
                if pend < 0:
                    continue
                if kind == 'Event Sync':
                    if r[2] < pend:
                        errs.append('Event Sync corr %d returns before the recorded work finished' % c)
                else:
                    st = args['stream']
                    p = pre.get(st)
                    if p:
                        i = bisect.bisect_right(p[0], r[1])
                        if i < len(p[0]) and p[2][i] < pend:
                            errs.append('Stream Wait Event corr %d: next op on stream %d starts before '
                                        'the waited work ends' % (c, st))
        # 5. fwdbwd flows bind to cpu ops
        cpu_starts = set()
        for k, lst in cpu.items():
            for a, b, nm in lst:
                cpu_starts.add((k[0], k[1], a))
        for ph in ('s', 'f'):
            for x in fwdbwd[ph]:
                if x not in cpu_starts:
                    errs.append('fwdbwd %s flow not bound to a CPU op' % ph)
                    break
        # NCCL kernels for cross-rank check
        nccl = [g for g in gpu if g[5].startswith('nccl')]
        nccl.sort(key=lambda g: g[2])
        colls[rank] = [(g[6].get('Collective name'), g[6].get('In msg nelems'), g[6].get('Seq'), g[2], g[3]) for g in nccl]
        summary.append('%s: rank %d, %d events, %d GPU ops, %d runtime, %d cuda_sync, %d NCCL kernels, '
                       '%d ProfilerSteps, min launch->start lag %.3f us, load %.1fs%s'
                       % (fn, rank, len(ev), len(gpu), len(rt), len(syncs), len(nccl), nsteps,
                          (min_lag or 0) / 1000.0, tload, ''.join('; ' + n for n in notes)))
        if errs:
            errors.extend('%s: %s' % (fn, x) for x in errs[:20])
        del data, ev
    # cross-rank collective consistency
    ranks = sorted(colls)
    if ranks:
        n = min(len(colls[r]) for r in ranks)
        ref = [c[:3] for c in colls[ranks[0]]][:n]
        for r in ranks[1:]:
            if [c[:3] for c in colls[r]][:n] != ref:
                errors.append('collective sequence of rank %d differs from rank %d' % (r, ranks[0]))
        if True:
            bad = 0
            for i in range(n):
                last_start = max(colls[r][i][3] for r in ranks)
                for r in ranks:
                    if colls[r][i][4] + 2 * tol_ns < last_start:
                        bad += 1
            if bad:
                errors.append('%d NCCL kernels end before the last rank arrived' % bad)
            summary.append('cross-rank: %d collectives per rank, identical sequence on %d ranks' % (len(ref), len(ranks)))
    if not quiet:
        for s in summary:
            print('  ' + s)
    return not errors, errors


# --------------------------------------------------------------------------
def main(argv=None):
    a = parse_args(argv)
    tol = a.skew_tolerance_us if a.skew_tolerance_us is not None else a.clock_skew_us
    if a.validate_only:
        ok, errs = validate_dir(a.validate_only, tol_ns=int(tol * 1000))
        for e in errs:
            print('ERROR ' + e)
        print('validation %s' % ('PASSED' if ok else 'FAILED'))
        return 0 if ok else 1
    cfg = build_cfg(a)
    t0 = time.time()
    if cfg.layers <= 0:
        cfg.layers, per_layer, fixed = calibrate(cfg)
        if not a.quiet:
            print('calibrated: %.0f bytes/layer/step, %.0f fixed bytes/step -> %d layers'
                  % (per_layer, fixed, cfg.layers))
    cfg.plan = make_plan(cfg)
    t1 = time.time()
    results = generate(cfg)
    t2 = time.time()
    tot = sum(r[2] for r in results)
    if not a.quiet:
        for rank, path, nbytes, nev, nk in results:
            print('rank %d: %s  %.1f MB uncompressed, %d events, %d GPU ops%s'
                  % (rank, path, nbytes / 1e6, nev, nk,
                     (', %.1f MB on disk' % (os.path.getsize(path) / 1e6)) if cfg.gzip else ''))
        print('generated %d ranks x %d steps x %d layers (%s, %s time format) in %.1fs '
              '(calibration %.1fs): %.1f MB uncompressed, %.1f MB/s, jobs=%d'
              % (cfg.ranks, cfg.steps, cfg.layers, cfg.mode, cfg.time_format, t2 - t0, t1 - t0,
                 tot / 1e6, tot / 1e6 / max(1e-9, t2 - t1), cfg.jobs))
    if a.validate:
        ok, errs = validate_dir(cfg.out, a.quiet, tol_ns=int(tol * 1000))
        for e in errs:
            print('ERROR ' + e)
        print('validation %s' % ('PASSED' if ok else 'FAILED'))
        return 0 if ok else 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
