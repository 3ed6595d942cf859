/* The CUDA a kernel file sees when tests/emu compiles it as C++ for the CPU, so that the
 * kernel's own source (not a re-implementation) runs on a machine without a GPU under
 * AddressSanitizer and UBSan: an index past a buffer, past the launch's dynamic shared memory
 * or past a __shared__ array is a finding, and an element nobody wrote stays NaN.  The kernel
 * files an emulation compiles and every header beside them are copied through rewrite.cmake
 * first (`k<<<g, b, smem, s>>>(a)`
 * into `emu_launch(k, g, b, smem, s)(a)`, `extern __shared__ T x[];` into a pointer to the
 * CTA's dynamic shared memory, inline PTX outside __CUDA_ARCH__ into nothing, the sgemm
 * kernels' cp_async_* into emu_async.h's), then compiled with this header force-included.
 *
 * A launch runs its CTAs one after another; __shared__ variables become function statics,
 * which the CTA's threads share.  The threads of a CTA are either
 *   - fibers (the default): one OS thread switches between them; __syncthreads returns to the
 *     scheduler, which resumes them all once every live thread has arrived, in index order in
 *     even CTAs and in reverse in odd ones (so a read of another thread's write before the
 *     same barrier finds it missing in one of them).  Deterministic and cheap: what ctest runs
 *     (label emu, scripts/test-asan.sh); or
 *   - OS threads (EMU_THREADS, the KBENCH_EMU_TSAN build): one per CUDA thread, meeting at a
 *     std::barrier, so that ThreadSanitizer reports a missing __syncthreads as a data race.
 * A launch is checked as the GPU checks it (block and grid sizes, dynamic shared memory above
 * 48 KB only after cudaFuncSetAttribute, never above an H100/H200 CTA's 227 KB); a refused
 * launch does not run and cudaGetLastError returns its error.  The CUDA runtime calls the
 * plugins make run on host memory (emu_runtime.cpp): allocations start as 0xFF bytes (NaN in
 * float and double), and the device is an H200 as far as the plugins ask (compute capability
 * 9.0, 132 SMs).
 * Warp operations (__shfl_down_sync, __reduce_max_sync) meet at a block barrier: valid for the
 * kernels that use them, where every thread of the block calls them the same number of times.
 * Warp-wide tensor-core instructions have no emulation: a kernel provides host code for them
 * under !__CUDA_ARCH__ (permute's fused DMMA step) or is not emulated (sgemm's 11_tf32x3). */
#ifndef KBENCH_EMU_CUDA_H
#define KBENCH_EMU_CUDA_H

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>

#include <cuda_runtime_api.h> /* cudaError_t, cudaStream_t, dim3, uint3, float4, int4 */
#include <vector_functions.h> /* make_float4, make_int4 */

#undef __global__
#undef __device__
#undef __host__
#undef __shared__
#undef __forceinline__
#undef __launch_bounds__
#define __global__
#define __device__
#define __host__
#define __shared__ static
#define __forceinline__ inline
#define __launch_bounds__(...)
/* Inline PTX that only hints (an L1 prefetch), rewritten from `asm volatile(`. */
#define emu_asm(...) ((void)0)

/* The device's min, max and fma of any arithmetic type. */
using std::fma;
using std::max;
using std::min;

/* In the thread model each OS thread is one CUDA thread; fibers share one OS thread. */
#ifdef EMU_THREADS
#define EMU_PER_THREAD thread_local
#else
#define EMU_PER_THREAD
#endif

extern EMU_PER_THREAD uint3 threadIdx, blockIdx;
/* The running thread's index in its CTA (x fastest): its slot in per-thread emulation state. */
extern EMU_PER_THREAD unsigned emu_thread;
extern dim3 blockDim, gridDim;
extern void *emu_dyn_smem; /* the running CTA's dynamic shared memory */

/* What the emulation ran and refused, for a test's summary line. */
struct emu_counts {
    long long launches, ctas, threads, refused;
};
extern emu_counts emu_stats;
/* Prints emu_stats and the verdict on `cases` checked, `fails` of them failed; returns the
 * test's exit status. */
int emu_summary(int fails, int cases);

/* Whether the GPU would launch kernel with this configuration; if not, says why on stderr and
 * leaves the error for cudaGetLastError (emu_launch.cpp). */
bool emu_launch_ok(const void *kernel, dim3 grid, dim3 block, size_t smem);
/* The scheduler (emu_fibers.cpp, or emu_threads.cpp with EMU_THREADS): the barrier, and
 * body(arg) run as every thread of every CTA of the grid, CTA after CTA. */
void emu_syncthreads();
void emu_run(dim3 grid, dim3 block, size_t smem, void (*body)(const void *), const void *arg);
/* The runtime's side (emu_runtime.cpp): the dynamic shared memory a launch of kernel may
 * have, and the error the next cudaGetLastError returns. */
size_t emu_dyn_smem_limit(const void *kernel);
void emu_record_error(cudaError_t error);

inline void __syncthreads()
{
    emu_syncthreads();
}

/* CTAs run one after another: a fence has no other CTA's view to order its writes for. */
inline void __threadfence() {}

template <class T> inline T __ldg(const T *p)
{
    return *p;
}
template <class T> inline T __ldcg(const T *p)
{
    return *p;
}

/* ---- atomics: real ones, so that they are atomic in the thread model too --------------------- */

template <class T> inline T atomicAdd(T *p, std::type_identity_t<T> v)
{
    static_assert(std::is_integral_v<T>, "emulated atomicAdd: integers only");
    return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
template <class T> inline T atomicOr(T *p, std::type_identity_t<T> v)
{
    return __atomic_fetch_or(p, v, __ATOMIC_RELAXED);
}
template <class T> inline T atomicMax(T *p, std::type_identity_t<T> v)
{
    T old = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (old < v &&
           !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    return old;
}

/* ---- warp operations, through a slot per thread and the block barrier ---------------------- */

extern unsigned long long emu_slots[1024];

template <class T> inline T __shfl_down_sync(unsigned, T v, int off)
{
    const unsigned t = emu_thread, lane = t & 31;
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
    const unsigned t = emu_thread, w = t & ~31u;
    int m = v;
    emu_syncthreads();
    emu_slots[t] = (unsigned long long)(long long)v;
    emu_syncthreads();
    for (unsigned k = w; k < w + 32 && k < blockDim.x; k++)
        m = std::max(m, (int)(long long)emu_slots[k]);
    emu_syncthreads();
    return m;
}

#include "emu_async.h"

/* ---- the launch ----------------------------------------------------------------------------- */

/* emu_launch(kernel, grid, block, smem, stream)(args...): the rewritten `<<< >>>`.  The
 * arguments are copied once, as the GPU copies kernel parameters, and every thread calls the
 * kernel with them. */
template <class F> struct EmuLaunch {
    F kernel;
    dim3 grid, block;
    size_t smem;
    template <class... A> void operator()(A... args) const
    {
        if (!emu_launch_ok((const void *)kernel, grid, block, smem))
            return;
        struct call {
            F kernel;
            std::tuple<A...> args;
        };
        const call c{kernel, std::tuple<A...>(args...)};
        emu_run(
            grid, block, smem,
            [](const void *p) {
                const call *c = (const call *)p;
                std::apply(c->kernel, c->args);
                emu_async_check_drained();
            },
            &c);
    }
};

template <class F>
EmuLaunch<F> emu_launch(F kernel, dim3 grid, dim3 block, size_t smem = 0, cudaStream_t = 0)
{
    return EmuLaunch<F>{kernel, grid, block, smem};
}

#endif
