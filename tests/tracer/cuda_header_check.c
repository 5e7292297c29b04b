/* Compile-time check that the hand-written CUDA prototypes libhtatrace uses
 * (src/tracer/cuda_api.h) match the real cuda_runtime_api.h.  Built by
 * mk/tracer.mk only where that header is installed; nothing runs. */
#include <cuda_runtime_api.h>

#define HTAT_CUDA_TYPES_DEFINED 1
typedef cudaError_t htat_cudaError_t;
typedef cudaEvent_t htat_cudaEvent_t;
typedef cudaStream_t htat_cudaStream_t;
#include "tracer/cuda_api.h"

#define SAME(fn) \
    _Static_assert(__builtin_types_compatible_p(__typeof__(&fn), htat_##fn##_fn), #fn " prototype differs")

SAME(cudaGetDeviceCount);
SAME(cudaGetDevice);
SAME(cudaSetDevice);
SAME(cudaEventCreateWithFlags);
SAME(cudaEventRecord);
SAME(cudaEventSynchronize);
SAME(cudaEventElapsedTime);
SAME(cudaEventDestroy);
SAME(cudaStreamCreateWithFlags);
SAME(cudaStreamDestroy);
SAME(cudaStreamGetId);

_Static_assert(cudaSuccess == HTAT_CUDA_SUCCESS, "cudaSuccess");
_Static_assert(cudaEventDefault == HTAT_CUDA_EVENT_DEFAULT, "cudaEventDefault");
_Static_assert(cudaStreamNonBlocking == HTAT_CUDA_STREAM_NON_BLOCKING, "cudaStreamNonBlocking");
_Static_assert(sizeof(cudaError_t) == sizeof(int), "cudaError_t is int-sized");

int htat_cuda_header_check_unused(void);
int htat_cuda_header_check_unused(void) { return 0; }
