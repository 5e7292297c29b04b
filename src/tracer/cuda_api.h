/* The few CUDA runtime entry points libhtatrace uses, declared here so that no
 * CUDA header is needed.  They are looked up with dlsym at run time.
 * tests/tracer/cuda_header_check.c compiles these against the real
 * cuda_runtime_api.h when one is installed (HTAT_CUDA_TYPES_DEFINED). */
#ifndef HTAT_CUDA_API_H
#define HTAT_CUDA_API_H

#ifndef HTAT_CUDA_TYPES_DEFINED
typedef int htat_cudaError_t;       /* enum cudaError: 0 is cudaSuccess */
typedef void *htat_cudaEvent_t;     /* struct CUevent_st * */
typedef void *htat_cudaStream_t;    /* struct CUstream_st * */
#endif

#define HTAT_CUDA_SUCCESS 0
#define HTAT_CUDA_EVENT_DEFAULT 0u       /* cudaEventDefault */
#define HTAT_CUDA_STREAM_NON_BLOCKING 1u /* cudaStreamNonBlocking */

typedef htat_cudaError_t (*htat_cudaGetDeviceCount_fn)(int *count);
typedef htat_cudaError_t (*htat_cudaGetDevice_fn)(int *device);
typedef htat_cudaError_t (*htat_cudaSetDevice_fn)(int device);
typedef htat_cudaError_t (*htat_cudaEventCreateWithFlags_fn)(htat_cudaEvent_t *event, unsigned int flags);
typedef htat_cudaError_t (*htat_cudaEventRecord_fn)(htat_cudaEvent_t event, htat_cudaStream_t stream);
typedef htat_cudaError_t (*htat_cudaEventSynchronize_fn)(htat_cudaEvent_t event);
typedef htat_cudaError_t (*htat_cudaEventElapsedTime_fn)(float *ms, htat_cudaEvent_t start, htat_cudaEvent_t end);
typedef htat_cudaError_t (*htat_cudaEventDestroy_fn)(htat_cudaEvent_t event);
typedef htat_cudaError_t (*htat_cudaStreamCreateWithFlags_fn)(htat_cudaStream_t *stream, unsigned int flags);
typedef htat_cudaError_t (*htat_cudaStreamDestroy_fn)(htat_cudaStream_t stream);
typedef htat_cudaError_t (*htat_cudaStreamGetId_fn)(htat_cudaStream_t stream, unsigned long long *id);

#endif
