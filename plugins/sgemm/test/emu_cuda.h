/* A CPU stand-in for the little of CUDA the hand-written sgemm kernels use, so that their index
 * math, guards and barriers can be checked on a machine without a GPU (run_emu.sh).  Each CUDA
 * thread is a std::thread, a block's threads meet at a std::barrier, blocks run one after
 * another, and __shared__ arrays become function statics shared by the block.  Built with
 * AddressSanitizer it catches out-of-bounds global and SMEM accesses; with ThreadSanitizer, a
 * missing __syncthreads().  cp.async copies at issue time (see common.cuh). */
#ifndef KBENCH_SGEMM_EMU_CUDA_H
#define KBENCH_SGEMM_EMU_CUDA_H

#include <barrier>
#include <cmath>
#include <cstddef>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h> /* cudaError_t, cudaStream_t, dim3, uint3, float4 */
#include <vector_functions.h> /* make_float4 */

#undef __global__
#undef __device__
#undef __host__
#undef __shared__
#undef __launch_bounds__
#define __global__
#define __device__
#define __host__
#define __shared__ static
#define __launch_bounds__(...)

inline thread_local uint3 threadIdx;
inline thread_local uint3 blockIdx;
inline dim3 blockDim, gridDim;
inline std::barrier<> *emu_block_barrier;

inline void __syncthreads()
{
    emu_block_barrier->arrive_and_wait();
}

/* kernel<<<grid, block, smem, stream>>>(args) is rewritten by run_emu.sh into
 * emu_launch(kernel, grid, block, smem, stream)(args). */
template <class F> struct EmuLaunch {
    F kernel;
    dim3 grid, block;
    template <class... Args> void operator()(Args... args) const
    {
        gridDim = grid;
        blockDim = block;
        const unsigned n = block.x * block.y * block.z;
        for (unsigned bz = 0; bz < grid.z; bz++)
            for (unsigned by = 0; by < grid.y; by++)
                for (unsigned bx = 0; bx < grid.x; bx++) {
                    std::barrier<> bar(n);
                    emu_block_barrier = &bar;
                    std::vector<std::thread> threads;
                    threads.reserve(n);
                    for (unsigned t = 0; t < n; t++)
                        threads.emplace_back([&, t] {
                            blockIdx = uint3{bx, by, bz};
                            threadIdx =
                                uint3{t % block.x, t / block.x % block.y, t / (block.x * block.y)};
                            kernel(args...);
                            bar.arrive_and_drop(); /* an exited thread no longer holds a barrier */
                        });
                    for (auto &th : threads)
                        th.join();
                }
    }
};

template <class F>
EmuLaunch<F> emu_launch(F kernel, dim3 grid, dim3 block, size_t = 0, cudaStream_t = 0)
{
    return EmuLaunch<F>{kernel, grid, block};
}

#endif
