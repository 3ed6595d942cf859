/* A CPU stand-in for the CUDA that kernels/02_tiled.cu uses, so that its own source (not a
 * re-implementation) runs under AddressSanitizer and ThreadSanitizer (run_emu_tiled.sh).
 * Two ways to run a CTA's threads.  Threads (the TSan build): a launch starts one OS thread per
 * CUDA thread of a block; those threads run the grid's CTAs one after another, meeting at one
 * std::barrier for __syncthreads and between CTAs, so a missing barrier is a data race.
 * Fibers (EMU_FIBERS, the ASan build): each CUDA thread is a ucontext fiber on the calling
 * thread, __syncthreads switches back to a scheduler that resumes them all once every live one
 * has arrived; the same barrier phases at a fraction of the cost (no futex per thread and
 * barrier: the thread model spends most of its time there on 2 cores).  Dynamic
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
#include <tuple>
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

#ifdef EMU_FIBERS
#include <sanitizer/common_interface_defs.h> /* the fiber switch annotations */
#include <ucontext.h>

/* The scheduler: fibers of the current CTA, their state, and the stacks (kept across
 * launches).  ASan is told of every switch, so it tracks the stack each fiber runs on. */
enum { EMU_RUNNABLE, EMU_AT_BARRIER, EMU_DONE };
struct emu_fiber {
    ucontext_t ctx;
    int state;
    void *fake; /* ASan's fake stack of the fiber while it is switched out */
};
inline emu_fiber emu_fibers[1024];
inline char *emu_stacks[1024];
inline constexpr size_t emu_stack_size = 256 * 1024;
inline ucontext_t emu_sched_ctx;
inline const void *emu_sched_bottom;
inline size_t emu_sched_size;
inline unsigned emu_cur;
inline void (*emu_body)(const void *);
inline const void *emu_body_arg;

/* A fiber gives control back to the scheduler (done: for good). */
inline void emu_yield(bool done)
{
    emu_fiber &f = emu_fibers[emu_cur];
    __sanitizer_start_switch_fiber(done ? nullptr : &f.fake, emu_sched_bottom, emu_sched_size);
    swapcontext(&f.ctx, &emu_sched_ctx);
    __sanitizer_finish_switch_fiber(f.fake, &emu_sched_bottom, &emu_sched_size);
}

inline void emu_fiber_main()
{
    __sanitizer_finish_switch_fiber(nullptr, &emu_sched_bottom, &emu_sched_size);
    emu_body(emu_body_arg);
    emu_fibers[emu_cur].state = EMU_DONE;
    emu_yield(true);
}

inline void __syncthreads()
{
    emu_fibers[emu_cur].state = EMU_AT_BARRIER;
    emu_yield(false);
}

/* Runs one CTA of n threads: every runnable fiber until it reaches a barrier or ends, then
 * the barrier opens, until all have ended. */
inline void emu_run_cta(unsigned n)
{
    for (unsigned t = 0; t < n; t++) {
        if (!emu_stacks[t])
            emu_stacks[t] = (char *)std::malloc(emu_stack_size);
        getcontext(&emu_fibers[t].ctx);
        emu_fibers[t].ctx.uc_stack.ss_sp = emu_stacks[t];
        emu_fibers[t].ctx.uc_stack.ss_size = emu_stack_size;
        emu_fibers[t].ctx.uc_link = nullptr;
        makecontext(&emu_fibers[t].ctx, emu_fiber_main, 0);
        emu_fibers[t].state = EMU_RUNNABLE;
        emu_fibers[t].fake = nullptr;
    }
    for (;;) {
        for (unsigned t = 0; t < n; t++) {
            if (emu_fibers[t].state != EMU_RUNNABLE)
                continue;
            emu_cur = t;
            threadIdx = uint3{t, 0, 0};
            void *fake = nullptr;
            __sanitizer_start_switch_fiber(&fake, emu_stacks[t], emu_stack_size);
            swapcontext(&emu_sched_ctx, &emu_fibers[t].ctx);
            __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
        }
        bool waiting = false;
        for (unsigned t = 0; t < n; t++)
            if (emu_fibers[t].state == EMU_AT_BARRIER) {
                emu_fibers[t].state = EMU_RUNNABLE;
                waiting = true;
            }
        if (!waiting)
            return;
    }
}
#else
inline void __syncthreads()
{
    emu_block_barrier->arrive_and_wait();
}
#endif

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
#ifdef EMU_FIBERS
        struct call {
            const EmuLaunch *l;
            const std::tuple<Args...> *a;
        };
        const std::tuple<Args...> a{args...};
        const call c{this, &a};
        emu_body = [](const void *p) {
            const call *c = (const call *)p;
            std::apply(c->l->kernel, *c->a);
        };
        emu_body_arg = &c;
        for (unsigned b = 0; b < grid.x; b++) {
            unsigned char *dyn = (unsigned char *)std::malloc(smem); /* exactly smem bytes */
            std::memset(dyn, 0xff, smem);
            emu_dyn_smem = dyn;
            blockIdx = uint3{b, 0, 0};
            emu_run_cta(n);
            std::free(dyn);
        }
        emu_dyn_smem = nullptr;
#else
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
#endif
    }
};

template <class F>
EmuLaunch<F> emu_launch(F kernel, dim3 grid, dim3 block, size_t smem = 0, cudaStream_t = 0)
{
    return EmuLaunch<F>{kernel, grid, block, smem};
}

#endif
