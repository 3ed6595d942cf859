/* cp.async with the hardware's timing, for kernels that call cp_async_16/4/commit/wait
 * themselves (sgemm's; rewrite.cmake renames those calls to emu_cp_async_*; part of
 * emu_cuda.h, which includes it).
 *
 * The source is read at issue (ASan checks it; nothing is read when predicated off, the
 * destination is zero-filled), and the destination becomes NaN at once, since on the GPU its
 * bytes may change at any time until the copy retires.  The data lands when the
 * cp.async.wait_group that retires its group executes.  So a wait_group that is too shallow
 * reads NaN, and a copy issued into a stage that another thread may still read (a missing
 * barrier) is a write racing that read (ThreadSanitizer, thread model).  A misaligned address
 * (a fault on the GPU) and a thread that ends with copies in flight (a missing wait) stop the
 * emulation.  (Copies a kernel makes through sgemm's common.cuh helpers land at issue: that
 * header's own emulation branch.) */
#ifndef KBENCH_EMU_ASYNC_H
#define KBENCH_EMU_ASYNC_H

#include <cstdint>
#include <deque>
#include <limits>
#include <vector>

/* Stops the emulation as a device fault would stop the kernel (emu_runtime.cpp). */
[[noreturn]] void emu_fault(const char *what, const void *p);

struct EmuCopy {
    float *dst;
    float val;
};
struct EmuAsyncThread {
    std::vector<EmuCopy> open;               /* issued since the last commit */
    std::deque<std::vector<EmuCopy>> groups; /* committed, oldest first */
};
/* One per thread slot of a CTA (emu_thread), so fibers and OS threads each have their own. */
extern EmuAsyncThread emu_async[1024];

inline void emu_cp_async(void *smem, const void *gmem, bool pred, int bytes)
{
    if ((uintptr_t)smem % bytes != 0)
        emu_fault("misaligned cp.async destination", smem);
    if ((uintptr_t)gmem % bytes != 0)
        emu_fault("misaligned cp.async source", gmem);
    EmuAsyncThread &a = emu_async[emu_thread];
    float *d = (float *)smem;
    const float *s = (const float *)gmem;
    for (int i = 0; i < bytes / 4; i++) {
        a.open.push_back({d + i, pred ? s[i] : 0.0f});
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
    EmuAsyncThread &a = emu_async[emu_thread];
    a.groups.push_back(std::move(a.open));
    a.open.clear();
}
template <int N> inline void emu_cp_async_wait()
{
    EmuAsyncThread &a = emu_async[emu_thread];
    while (a.groups.size() > (size_t)N) {
        for (const EmuCopy &c : a.groups.front())
            *c.dst = c.val;
        a.groups.pop_front();
    }
}

/* Called as a thread's kernel returns: groups left committed are fine if they hold no copy
 * (a pipeline's empty tail groups). */
inline void emu_async_check_drained()
{
    EmuAsyncThread &a = emu_async[emu_thread];
    bool copies = !a.open.empty();
    for (const auto &g : a.groups)
        copies |= !g.empty();
    if (copies)
        emu_fault("thread exited with cp.async copies in flight", nullptr);
    a.groups.clear();
}

#endif
