/* A CPU stand-in for the CUDA that kernels/02_tiled.cu uses, so that its own source (not a
 * re-implementation) runs under AddressSanitizer and ThreadSanitizer (run_emu_tiled.sh).
 * A launch starts one OS thread per CUDA thread of a block; those threads run the grid's CTAs
 * one after another, meeting at one std::barrier for __syncthreads and between CTAs.  Dynamic
 * shared memory is a heap block of exactly the bytes the launch asks for, allocated afresh for
 * every CTA and filled with 0xFF (NaN), so a slot past it is a heap overflow for ASan and a
 * slot read before any write shows as NaN in the result; static __shared__ variables become
 * function statics (one CTA at a time).  run_emu_tiled.sh rewrites `k<<<g, b, smem, s>>>(args)`
 * into `emu_launch(k, g, b, smem, s)(args)`, the `extern __shared__` array into a pointer to
 * emu_dyn_smem and inline PTX (an L1 prefetch: a hint, no effect on results) into emu_asm. */
#ifndef KBENCH_PERMUTE_EMU_TILED_H
#define KBENCH_PERMUTE_EMU_TILED_H

#include <algorithm>
#include <barrier>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h> /* cudaError_t, cudaStream_t, dim3, uint3, int4 */
#include <vector_functions.h> /* make_int4 */

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
#define emu_asm(...) ((void)0)

using std::min;

inline thread_local uint3 threadIdx, blockIdx;
inline dim3 blockDim, gridDim;
inline void *emu_dyn_smem;
inline std::barrier<> *emu_block_barrier;
/* Launches refused (a shape the kernel's launches never use: the test fails on it). */
inline int emu_bad_launches;
/* Work done, for the summary line: launches, CTAs, CTA threads. */
inline long long emu_launches, emu_ctas, emu_threads;

inline void __syncthreads()
{
    emu_block_barrier->arrive_and_wait();
}

template <class T> inline T __ldg(const T *p)
{
    return *p;
}

template <class F> struct EmuLaunch {
    F kernel;
    dim3 grid, block;
    size_t smem;
    template <class... Args> void operator()(Args... args) const
    {
        const unsigned n = block.x;
        if (n == 0 || n > 1024 || block.y != 1 || block.z != 1 || grid.x == 0 || grid.y != 1 ||
            grid.z != 1 || smem > 227 * 1024) {
            std::fprintf(stderr, "emu: bad launch %u x %u threads, %zu B shared memory\n", grid.x,
                         n, smem);
            emu_bad_launches++;
            return;
        }
        gridDim = grid;
        blockDim = block;
        emu_launches++;
        emu_ctas += grid.x;
        emu_threads += (long long)grid.x * n;
        std::barrier<> bar(n);
        emu_block_barrier = &bar;
        unsigned char *dyn = nullptr;
        auto body = [&](unsigned t) {
            threadIdx = uint3{t, 0, 0};
            for (unsigned b = 0; b < grid.x; b++) {
                if (t == 0) { /* a fresh block: exactly smem bytes, NaN */
                    std::free(dyn);
                    dyn = (unsigned char *)std::malloc(smem);
                    std::memset(dyn, 0xff, smem);
                    emu_dyn_smem = dyn;
                }
                bar.arrive_and_wait();
                blockIdx = uint3{b, 0, 0};
                kernel(args...);
                bar.arrive_and_wait(); /* the CTA's statics and shared memory are free again */
            }
        };
        std::vector<std::thread> threads;
        threads.reserve(n);
        for (unsigned t = 0; t < n; t++)
            threads.emplace_back(body, t);
        for (auto &th : threads)
            th.join();
        std::free(dyn);
        emu_dyn_smem = nullptr;
    }
};

template <class F>
EmuLaunch<F> emu_launch(F kernel, dim3 grid, dim3 block, size_t smem = 0, cudaStream_t = 0)
{
    return EmuLaunch<F>{kernel, grid, block, smem};
}

#endif
