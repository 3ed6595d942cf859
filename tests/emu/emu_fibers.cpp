/* The default scheduler (emu_scheduler.h): a CTA's threads are fibers on the launching
 * thread, each with its own stack (kept across launches, a guard page below it); a thread runs
 * until it reaches a barrier or ends, and the barrier opens once every live thread has reached
 * it.  ASan is told of every switch, so that it tracks the stack each fiber runs on. */
#include <sys/mman.h>

#include "emu_context.h"
#include "emu_scheduler.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h> /* the fiber switch annotations */
#define EMU_ASAN_FIBERS 1
#endif

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
    emu_enter_thread(t);
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
                emu_dyn_smem = emu_new_dyn_smem(smem);
                blockIdx = uint3{bx, by, bz};
                run_cta(n, (bx + by + bz) % 2 == 1);
                emu_free_dyn_smem(emu_dyn_smem);
            }
    emu_dyn_smem = nullptr;
    emu_count_launch(grid, block);
}
