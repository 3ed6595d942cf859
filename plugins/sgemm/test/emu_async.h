/* Additions to emu_cuda.h for the tuned kernels (kernels/10_warptile.cu, run by
 * run_emu_warptile.sh): dynamic shared memory, cp.async with the hardware's timing rather than
 * a copy at issue, and a launch that provides both.
 *
 *   - Dynamic SMEM (`extern __shared__ float x[]`, rewritten by the script into a pointer to
 *     emu_dyn_smem) is one heap block per CTA of exactly the launch's byte count, so ASan sees
 *     a read or write past it, and it starts as NaN, so reading what no copy wrote shows in the
 *     result.  A launch asking for more than 48 KB must have raised the kernel's
 *     cudaFuncAttributeMaxDynamicSharedMemorySize first (as on the GPU), and nothing above the
 *     227 KB an H100/H200 CTA can have.
 *   - cp.async (the kernel's cp_async_* calls, renamed emu_cp_async_* by the script): the
 *     source is read at issue (ASan checks it; zero-fill when predicated off, nothing read),
 *     and the destination becomes NaN at once, since on the GPU its bytes may change at any
 *     time until the copy retires.  The data lands when the cp.async.wait_group that retires
 *     its group executes.  So a wait_group that is too shallow reads NaN, and a copy issued
 *     into a stage that another thread may still read (a missing barrier) is a write racing
 *     that read for TSan.  Both addresses must be aligned to the copy size, or the emulation
 *     stops as the GPU would fault.  A thread that exits with copies in flight stops it too.
 * Include this instead of emu_cuda.h. */
#ifndef KBENCH_SGEMM_EMU_ASYNC_H
#define KBENCH_SGEMM_EMU_ASYNC_H

#include "emu_cuda.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <new>
#include <vector>

/* CUDA's device min/max of ints. */
using std::max;
using std::min;

inline void *emu_dyn_smem; /* the running CTA's dynamic SMEM */

/* cudaFuncAttributeMaxDynamicSharedMemorySize per kernel, set by the cudaFuncSetAttribute of
 * the test driver; a launch checks its dynamic SMEM against it. */
inline std::mutex emu_func_mu;
inline std::map<const void *, int> emu_func_max_dyn_smem;

[[noreturn]] inline void emu_fault(const char *what, const void *p)
{
    std::fprintf(stderr, "emulated device fault: %s (%p)\n", what, p);
    std::abort();
}

struct EmuCopy {
    float *dst;
    float val;
};
struct EmuAsyncState {
    std::vector<EmuCopy> open;               /* issued since the last commit */
    std::deque<std::vector<EmuCopy>> groups; /* committed, oldest first */
};
inline thread_local EmuAsyncState emu_async;

inline void emu_cp_async(void *smem, const void *gmem, bool pred, int bytes)
{
    if ((uintptr_t)smem % bytes != 0)
        emu_fault("misaligned cp.async destination", smem);
    if ((uintptr_t)gmem % bytes != 0)
        emu_fault("misaligned cp.async source", gmem);
    float *d = (float *)smem;
    const float *s = (const float *)gmem;
    for (int i = 0; i < bytes / 4; i++) {
        emu_async.open.push_back({d + i, pred ? s[i] : 0.0f});
        d[i] = std::numeric_limits<float>::quiet_NaN();
    }
}
inline void emu_cp_async_16(void *smem, const void *gmem, bool pred)
{
    emu_cp_async(smem, gmem, pred, 16);
}
inline void emu_cp_async_4(void *smem, const void *gmem, bool pred)
{
    emu_cp_async(smem, gmem, pred, 4);
}
inline void emu_cp_async_commit()
{
    emu_async.groups.push_back(std::move(emu_async.open));
    emu_async.open.clear();
}
template <int N> inline void emu_cp_async_wait()
{
    while (emu_async.groups.size() > (size_t)N) {
        for (const EmuCopy &c : emu_async.groups.front())
            *c.dst = c.val;
        emu_async.groups.pop_front();
    }
}

/* kernel<<<grid, block, smem, stream>>>(args) is rewritten by run_emu_warptile.sh into
 * emu_launch_dyn(kernel, grid, block, smem, stream)(args). */
template <class F> struct EmuLaunchDyn {
    F kernel;
    dim3 grid, block;
    size_t smem;
    template <class... Args> void operator()(Args... args) const
    {
        if (smem > 227 * 1024)
            emu_fault("dynamic SMEM above 227 KB", (const void *)kernel);
        if (smem > 48 * 1024) {
            std::lock_guard<std::mutex> lock(emu_func_mu);
            auto it = emu_func_max_dyn_smem.find((const void *)kernel);
            if (it == emu_func_max_dyn_smem.end() || (size_t)it->second < smem)
                emu_fault("dynamic SMEM above 48 KB without the attribute", (const void *)kernel);
        }
        const unsigned n = block.x * block.y * block.z;
        if (n == 0 || n > 1024)
            emu_fault("invalid block size", (const void *)kernel);
        gridDim = grid;
        blockDim = block;
        for (unsigned bz = 0; bz < grid.z; bz++)
            for (unsigned by = 0; by < grid.y; by++)
                for (unsigned bx = 0; bx < grid.x; bx++) {
                    float *dyn = nullptr;
                    if (smem > 0) {
                        dyn = (float *)::operator new(smem, std::align_val_t(16));
                        std::fill(dyn, dyn + smem / sizeof(float),
                                  std::numeric_limits<float>::quiet_NaN());
                    }
                    emu_dyn_smem = dyn;
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
                            if (!emu_async.open.empty() || !emu_async.groups.empty())
                                emu_fault("thread exited with cp.async copies in flight", nullptr);
                            bar.arrive_and_drop();
                        });
                    for (auto &th : threads)
                        th.join();
                    if (dyn)
                        ::operator delete(dyn, std::align_val_t(16));
                }
    }
};

template <class F>
EmuLaunchDyn<F> emu_launch_dyn(F kernel, dim3 grid, dim3 block, size_t smem = 0, cudaStream_t = 0)
{
    return EmuLaunchDyn<F>{kernel, grid, block, smem};
}

#endif
