/* The emulation's launches (emu_cuda.h): the GPU's checks of a launch configuration, and the
 * scheduler that runs a grid CTA by CTA, its threads as fibers on the calling thread or (with
 * EMU_THREADS) as OS threads.  A CTA's dynamic shared memory is a fresh heap block of exactly
 * the launch's bytes, 16-byte aligned and filled with 0xFF (NaN), so a slot past it is a heap
 * overflow for ASan and a slot read before any write shows as NaN in the result. */
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "emu_cuda.h"

#ifdef EMU_THREADS
#include <barrier>
#include <thread>
#include <vector>
#else
#include <sys/mman.h>

#include "emu_context.h"
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h> /* the fiber switch annotations */
#define EMU_ASAN_FIBERS 1
#endif
#endif

EMU_PER_THREAD uint3 threadIdx, blockIdx;
EMU_PER_THREAD unsigned emu_thread;
dim3 blockDim, gridDim;
void *emu_dyn_smem;
emu_counts emu_stats;
unsigned long long emu_slots[1024];
EmuAsyncThread emu_async[1024];

void emu_fault(const char *what, const void *p)
{
    std::fprintf(stderr, "emulated device fault: %s (%p)\n", what, p);
    std::abort();
}

int emu_summary(int fails, int cases)
{
    std::printf("%lld launches, %lld CTAs, %lld CTA threads, %lld launches refused\n",
                emu_stats.launches, emu_stats.ctas, emu_stats.threads, emu_stats.refused);
    if (fails)
        std::printf("FAILED: %d of %d cases\n", fails, cases);
    else
        std::printf("all %d cases verified\n", cases);
    return fails != 0;
}

bool emu_launch_ok(const void *kernel, dim3 grid, dim3 block, size_t smem)
{
    const unsigned long long threads = (unsigned long long)block.x * block.y * block.z;
    const char *why = nullptr;
    cudaError_t error = cudaErrorInvalidConfiguration;
    if (threads == 0 || threads > 1024 || block.z > 64)
        why = "block size";
    else if (grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.x > INT_MAX || grid.y > 65535 ||
             grid.z > 65535)
        why = "grid size";
    else if (smem > emu_dyn_smem_limit(kernel)) {
        why = "dynamic shared memory above the kernel's limit (48 KB unless cudaFuncSetAttribute "
              "raised it, 227 KB at most)";
        error = cudaErrorInvalidValue;
    }
    if (!why)
        return true;
    std::fprintf(stderr,
                 "emu: launch refused, %s: grid %ux%ux%u, block %ux%ux%u, %zu B dynamic shared "
                 "memory\n",
                 why, grid.x, grid.y, grid.z, block.x, block.y, block.z, smem);
    emu_stats.refused++;
    emu_record_error(error);
    return false;
}

namespace
{

void set_thread(unsigned t)
{
    emu_thread = t;
    threadIdx = uint3{t % blockDim.x, t / blockDim.x % blockDim.y, t / (blockDim.x * blockDim.y)};
}

void *new_dyn_smem(size_t smem)
{
    if (smem == 0)
        return nullptr;
    void *p = ::operator new(smem, std::align_val_t(16));
    std::memset(p, 0xff, smem);
    return p;
}

void free_dyn_smem(void *p)
{
    if (p)
        ::operator delete(p, std::align_val_t(16));
}

} // namespace

#ifdef EMU_THREADS

namespace
{
std::barrier<> *cta_barrier; /* the running CTA's __syncthreads */
}

void emu_syncthreads()
{
    cta_barrier->arrive_and_wait();
}

/* n OS threads for the whole launch; thread 0 prepares each CTA between two barriers of all
 * of them, and a thread whose kernel returned leaves the CTA's barrier (as on the GPU, the
 * threads still running then meet without it). */
void emu_run(dim3 grid, dim3 block, size_t smem, void (*body)(const void *), const void *arg)
{
    const unsigned n = block.x * block.y * block.z;
    gridDim = grid;
    blockDim = block;
    std::barrier<> edge(n);
    auto thread_main = [&](unsigned t) {
        set_thread(t);
        for (unsigned bz = 0; bz < grid.z; bz++)
            for (unsigned by = 0; by < grid.y; by++)
                for (unsigned bx = 0; bx < grid.x; bx++) {
                    if (t == 0) {
                        emu_dyn_smem = new_dyn_smem(smem);
                        cta_barrier = new std::barrier<>(n);
                    }
                    edge.arrive_and_wait();
                    blockIdx = uint3{bx, by, bz};
                    body(arg);
                    cta_barrier->arrive_and_drop();
                    edge.arrive_and_wait(); /* the CTA's statics and shared memory are free */
                    if (t == 0) {
                        delete cta_barrier;
                        free_dyn_smem(emu_dyn_smem);
                    }
                }
    };
    std::vector<std::thread> threads;
    threads.reserve(n);
    for (unsigned t = 0; t < n; t++)
        threads.emplace_back(thread_main, t);
    for (auto &th : threads)
        th.join();
    emu_dyn_smem = nullptr;
    emu_stats.launches++;
    emu_stats.ctas += (long long)grid.x * grid.y * grid.z;
    emu_stats.threads += (long long)grid.x * grid.y * grid.z * n;
}

#else /* fibers */

namespace
{

enum { RUNNABLE, AT_BARRIER, DONE };
struct fiber {
    emu_context ctx;
    int state;
    void *fake_stack; /* ASan's fake stack of the fiber while it is switched out */
};
fiber fibers[1024];
char *stacks[1024]; /* kept across launches; a guard page below each */
constexpr size_t stack_bytes = 512 * 1024, guard_bytes = 4096;
emu_context scheduler;
const void *scheduler_bottom;
size_t scheduler_size;
void (*run_body)(const void *);
const void *run_arg;

char *stack_of(unsigned t)
{
    if (!stacks[t]) {
        void *p = mmap(nullptr, stack_bytes + guard_bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
        if (p == MAP_FAILED)
            emu_fault("no memory for a fiber's stack", nullptr);
        mprotect(p, guard_bytes, PROT_NONE); /* an overflow faults instead of corrupting */
        stacks[t] = (char *)p + guard_bytes;
    }
    return stacks[t];
}

/* The running fiber gives control back to the scheduler (done: for good). */
void to_scheduler(bool done)
{
    fiber &f = fibers[emu_thread];
#ifdef EMU_ASAN_FIBERS
    __sanitizer_start_switch_fiber(done ? nullptr : &f.fake_stack, scheduler_bottom,
                                   scheduler_size);
#endif
    emu_context_switch(&f.ctx, &scheduler);
#ifdef EMU_ASAN_FIBERS
    __sanitizer_finish_switch_fiber(f.fake_stack, &scheduler_bottom, &scheduler_size);
#endif
}

void fiber_main()
{
#ifdef EMU_ASAN_FIBERS
    __sanitizer_finish_switch_fiber(nullptr, &scheduler_bottom, &scheduler_size);
#endif
    run_body(run_arg);
    fibers[emu_thread].state = DONE;
    to_scheduler(true);
}

void resume(unsigned t)
{
    set_thread(t);
#ifdef EMU_ASAN_FIBERS
    void *fake = nullptr;
    __sanitizer_start_switch_fiber(&fake, stacks[t], stack_bytes);
#endif
    emu_context_switch(&scheduler, &fibers[t].ctx);
#ifdef EMU_ASAN_FIBERS
    __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
}

/* One CTA of n threads: every runnable fiber until it reaches a barrier or ends, then the
 * barrier opens, until all have ended.  Odd CTAs run their threads last to first, so that a
 * read of what another thread of the CTA writes before the same barrier (a missing
 * __syncthreads) finds it unwritten in one CTA or the other. */
void run_cta(unsigned n, bool reverse)
{
    for (unsigned t = 0; t < n; t++) {
        emu_context_make(&fibers[t].ctx, stack_of(t), stack_bytes, fiber_main);
        fibers[t].state = RUNNABLE;
        fibers[t].fake_stack = nullptr;
    }
    for (;;) {
        for (unsigned i = 0; i < n; i++) {
            const unsigned t = reverse ? n - 1 - i : i;
            if (fibers[t].state == RUNNABLE)
                resume(t);
        }
        bool waiting = false;
        for (unsigned t = 0; t < n; t++)
            if (fibers[t].state == AT_BARRIER) {
                fibers[t].state = RUNNABLE;
                waiting = true;
            }
        if (!waiting)
            return;
    }
}

} // namespace

void emu_syncthreads()
{
    fibers[emu_thread].state = AT_BARRIER;
    to_scheduler(false);
}

void emu_run(dim3 grid, dim3 block, size_t smem, void (*body)(const void *), const void *arg)
{
    const unsigned n = block.x * block.y * block.z;
    gridDim = grid;
    blockDim = block;
    run_body = body;
    run_arg = arg;
    for (unsigned bz = 0; bz < grid.z; bz++)
        for (unsigned by = 0; by < grid.y; by++)
            for (unsigned bx = 0; bx < grid.x; bx++) {
                emu_dyn_smem = new_dyn_smem(smem);
                blockIdx = uint3{bx, by, bz};
                run_cta(n, (bx + by + bz) % 2 == 1);
                free_dyn_smem(emu_dyn_smem);
            }
    emu_dyn_smem = nullptr;
    emu_stats.launches++;
    emu_stats.ctas += (long long)grid.x * grid.y * grid.z;
    emu_stats.threads += (long long)grid.x * grid.y * grid.z * n;
}

#endif
