/* The CUDA runtime calls the plugins' device code makes, on host memory, for the emulation
 * (emu_cuda.h).  Allocations start as 0xFF bytes (NaN in float and double: a result element
 * nobody wrote fails its check), copies and sets happen at once, streams and events order
 * nothing (every launch has finished when it returns), and the one device is an H200 as far
 * as the plugins ask: compute capability 9.0 with 132 SMs (sgemm's split-K counts follow). */
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "emu_cuda.h"

namespace
{
std::mutex mu;
cudaError_t pending = cudaSuccess;
/* cudaFuncAttributeMaxDynamicSharedMemorySize per kernel. */
std::map<const void *, int> max_dyn_smem;

constexpr size_t kDefaultDynSmem = 48 * 1024, kMaxDynSmem = 227 * 1024;

cudaError_t host_alloc(void **p, size_t bytes)
{
    *p = std::malloc(bytes ? bytes : 1);
    if (!*p)
        return cudaErrorMemoryAllocation;
    std::memset(*p, 0xff, bytes);
    return cudaSuccess;
}
} // namespace

size_t emu_dyn_smem_limit(const void *kernel)
{
    std::lock_guard<std::mutex> lock(mu);
    auto it = max_dyn_smem.find(kernel);
    return it == max_dyn_smem.end() ? kDefaultDynSmem : (size_t)it->second;
}

void emu_record_error(cudaError_t error)
{
    std::lock_guard<std::mutex> lock(mu);
    pending = error;
}

/* Wall-clock time of the last record (launches run synchronously here). */
struct CUevent_st {
    std::chrono::steady_clock::time_point t;
};

extern "C" {

cudaError_t cudaGetLastError(void)
{
    std::lock_guard<std::mutex> lock(mu);
    const cudaError_t e = pending;
    pending = cudaSuccess;
    return e;
}
cudaError_t cudaPeekAtLastError(void)
{
    std::lock_guard<std::mutex> lock(mu);
    return pending;
}
const char *cudaGetErrorName(cudaError_t e)
{
    switch (e) {
    case cudaSuccess:
        return "cudaSuccess";
    case cudaErrorInvalidValue:
        return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation:
        return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidConfiguration:
        return "cudaErrorInvalidConfiguration";
    default:
        return "cudaErrorEmulated";
    }
}
const char *cudaGetErrorString(cudaError_t e)
{
    return e == cudaSuccess ? "no error" : "an emulated launch or call failed";
}

cudaError_t cudaGetDevice(int *device)
{
    *device = 0;
    return cudaSuccess;
}
cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    if (device != 0)
        return cudaErrorInvalidDevice;
    switch (attr) {
    case cudaDevAttrMultiProcessorCount:
        *value = 132;
        return cudaSuccess;
    case cudaDevAttrComputeCapabilityMajor:
        *value = 9;
        return cudaSuccess;
    case cudaDevAttrComputeCapabilityMinor:
        *value = 0;
        return cudaSuccess;
    default:
        return cudaErrorInvalidValue;
    }
}
cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value)
{
    if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize)
        return cudaSuccess; /* the carveout: a hint */
    if (value < 0 || (size_t)value > kMaxDynSmem)
        return cudaErrorInvalidValue;
    std::lock_guard<std::mutex> lock(mu);
    max_dyn_smem[func] = value;
    return cudaSuccess;
}
cudaError_t cudaDeviceSynchronize(void)
{
    return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t)
{
    return cudaSuccess;
}

cudaError_t cudaMalloc(void **p, size_t bytes)
{
    return host_alloc(p, bytes);
}
cudaError_t cudaMallocAsync(void **p, size_t bytes, cudaStream_t)
{
    return host_alloc(p, bytes);
}
cudaError_t cudaMallocHost(void **p, size_t bytes)
{
    return host_alloc(p, bytes);
}
cudaError_t cudaFree(void *p)
{
    std::free(p);
    return cudaSuccess;
}
cudaError_t cudaFreeAsync(void *p, cudaStream_t)
{
    std::free(p);
    return cudaSuccess;
}
cudaError_t cudaFreeHost(void *p)
{
    std::free(p);
    return cudaSuccess;
}
cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind)
{
    std::memcpy(dst, src, bytes);
    return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind,
                            cudaStream_t)
{
    std::memcpy(dst, src, bytes);
    return cudaSuccess;
}
cudaError_t cudaMemset(void *p, int value, size_t bytes)
{
    std::memset(p, value, bytes);
    return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void *p, int value, size_t bytes, cudaStream_t)
{
    std::memset(p, value, bytes);
    return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *e)
{
    *e = new CUevent_st();
    return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    delete e;
    return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t)
{
    e->t = std::chrono::steady_clock::now();
    return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t)
{
    return cudaSuccess;
}
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
    *ms = std::chrono::duration<float, std::milli>(b->t - a->t).count();
    return cudaSuccess;
}

} /* extern "C" */
