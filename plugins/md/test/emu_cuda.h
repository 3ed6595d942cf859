/* A CPU stand-in for the part of CUDA the md kernels use, so that the whole device engine
 * (device.c, md.c, kernels/) can run on a machine without a GPU (run_emu.sh).  Each CUDA thread
 * of a block is a ucontext fiber on one OS thread; __syncthreads() switches to the scheduler
 * until every live thread of the block has arrived; blocks run one after another, so
 * __shared__ arrays become function statics.  Warp operations (__shfl_down_sync,
 * __reduce_max_sync) meet at the block barrier too: valid for these kernels, where every
 * thread of a block calls them the same number of times.  Atomics are plain operations (one
 * OS thread).  run_emu.sh rewrites `k<<<g, b, smem, s>>>(args)` into
 * `emu_launch(k, g, b, smem, s)(args)` and `extern __shared__ T x[];` into a pointer to the
 * launch's dynamic shared memory. */
#ifndef KBENCH_MD_EMU_CUDA_H
#define KBENCH_MD_EMU_CUDA_H

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>

#include <cuda_runtime_api.h> /* cudaError_t, cudaStream_t, dim3, uint3, float4 */
#include <vector_functions.h> /* make_float4 */

#undef __global__
#undef __device__
#undef __host__
#undef __shared__
#undef __forceinline__
#define __global__
#define __device__
#define __host__
#define __shared__ static
#define __forceinline__ inline

using std::max;
using std::min;

extern uint3 threadIdx, blockIdx;
extern dim3 blockDim, gridDim;
extern void *emu_dyn_smem;

/* The fiber scheduler (emu_runtime.cpp). */
void emu_syncthreads(void);
void emu_run_grid(dim3 grid, dim3 block, size_t smem, const std::function<void()> &body);
/* A slot per thread of the block for the warp operations. */
extern unsigned long long emu_slots[1024];

inline void __syncthreads(void)
{
    emu_syncthreads();
}

template <class T> inline T __shfl_down_sync(unsigned, T v, int off)
{
    unsigned t = threadIdx.x, lane = t & 31;
    T out = v;
    emu_syncthreads();
    emu_slots[t] = (unsigned long long)v;
    emu_syncthreads();
    if (lane + off < 32 && t + off < blockDim.x)
        out = (T)emu_slots[t + off];
    emu_syncthreads();
    return out;
}

inline int __reduce_max_sync(unsigned, int v)
{
    unsigned t = threadIdx.x, w = t & ~31u;
    int m = v;
    emu_syncthreads();
    emu_slots[t] = (unsigned long long)(long long)v;
    emu_syncthreads();
    for (unsigned k = w; k < w + 32 && k < blockDim.x; k++)
        m = std::max(m, (int)(long long)emu_slots[k]);
    emu_syncthreads();
    return m;
}

inline int atomicAdd(int *p, int v)
{
    int o = *p;
    *p = o + v;
    return o;
}
inline unsigned long long atomicAdd(unsigned long long *p, unsigned long long v)
{
    unsigned long long o = *p;
    *p = o + v;
    return o;
}
inline unsigned atomicAdd(unsigned *p, unsigned v)
{
    unsigned o = *p;
    *p = o + v;
    return o;
}
/* Blocks run one after another and memory is the host's: a fence has nothing to order. */
inline void __threadfence() {}
inline int atomicOr(int *p, int v)
{
    int o = *p;
    *p = o | v;
    return o;
}
inline int atomicMax(int *p, int v)
{
    int o = *p;
    *p = std::max(o, v);
    return o;
}
template <class T> inline T __ldg(const T *p)
{
    return *p;
}
template <class T> inline T __ldcg(const T *p)
{
    return *p;
}

template <class F> struct EmuLaunch {
    F kernel;
    dim3 grid, block;
    size_t smem;
    template <class... A> void operator()(A... args)
    {
        emu_run_grid(grid, block, smem, [&] { kernel(args...); });
    }
};

template <class F>
EmuLaunch<F> emu_launch(F kernel, dim3 grid, dim3 block, size_t smem = 0, cudaStream_t = 0)
{
    return EmuLaunch<F>{kernel, grid, block, smem};
}

#endif
