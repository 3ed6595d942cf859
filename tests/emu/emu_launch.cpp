/* The emulation's state (emu_cuda.h), the GPU's checks of a launch configuration, and what
 * both schedulers (emu_fibers.cpp, emu_threads.cpp) do for a CTA.  A CTA's dynamic shared
 * memory is a fresh heap block of exactly the launch's bytes, 16-byte aligned and filled with
 * 0xFF (NaN), so a slot past it is a heap overflow for ASan and a slot read before any write
 * shows as NaN in the result. */
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "emu_scheduler.h"

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

void emu_enter_thread(unsigned t)
{
    emu_thread = t;
    threadIdx = uint3{t % blockDim.x, t / blockDim.x % blockDim.y, t / (blockDim.x * blockDim.y)};
}

void *emu_new_dyn_smem(size_t smem)
{
    if (smem == 0)
        return nullptr;
    void *p = ::operator new(smem, std::align_val_t(16));
    std::memset(p, 0xff, smem);
    return p;
}

void emu_free_dyn_smem(void *p)
{
    if (p)
        ::operator delete(p, std::align_val_t(16));
}

void emu_count_launch(dim3 grid, dim3 block)
{
    const long long ctas = (long long)grid.x * grid.y * grid.z;
    emu_stats.launches++;
    emu_stats.ctas += ctas;
    emu_stats.threads += ctas * block.x * block.y * block.z;
}
