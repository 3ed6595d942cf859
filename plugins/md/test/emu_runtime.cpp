/* The emulation's runtime (see emu_cuda.h): the fiber scheduler that runs a grid block by
 * block, and the few CUDA runtime calls device.c and md.c make, on host memory.  Device
 * allocations start as 0xAB bytes (garbage, not zeros), dynamic shared memory as 0xFF (NaN). */
#include <ucontext.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#include "emu_cuda.h"

uint3 threadIdx, blockIdx;
dim3 blockDim, gridDim;
void *emu_dyn_smem;
unsigned long long emu_slots[1024];

static cudaError_t emu_error = cudaSuccess;

enum { RUNNABLE, AT_BARRIER, DONE };
struct fiber {
    ucontext_t ctx;
    int state;
};
static ucontext_t sched_ctx;
static fiber fibers[1024];
static char *stacks[1024];
static const size_t stack_size = 128 * 1024;
static int cur;
static const std::function<void()> *body_fn;

static void fiber_main()
{
    (*body_fn)();
    fibers[cur].state = DONE;
    swapcontext(&fibers[cur].ctx, &sched_ctx);
}

void emu_syncthreads(void)
{
    fibers[cur].state = AT_BARRIER;
    swapcontext(&fibers[cur].ctx, &sched_ctx);
}

void emu_run_grid(dim3 grid, dim3 block, size_t smem, const std::function<void()> &body)
{
    unsigned n = block.x * block.y * block.z;
    if (n == 0 || n > 1024 || block.y != 1 || block.z != 1 || grid.x == 0 || grid.y != 1 ||
        grid.z != 1 || smem > 48 * 1024) {
        std::fprintf(stderr, "emu: bad launch %ux%ux%u blocks of %ux%ux%u, %zu B smem\n", grid.x,
                     grid.y, grid.z, block.x, block.y, block.z, smem);
        emu_error = cudaErrorInvalidConfiguration;
        return;
    }
    std::vector<char> dyn(smem ? smem : 1, (char)0xFF);
    emu_dyn_smem = dyn.data();
    body_fn = &body;
    blockDim = block;
    gridDim = grid;
    for (unsigned t = 0; t < n; t++)
        if (!stacks[t])
            stacks[t] = (char *)std::malloc(stack_size);
    for (unsigned b = 0; b < grid.x; b++) {
        blockIdx = uint3{b, 0, 0};
        for (unsigned t = 0; t < n; t++) {
            getcontext(&fibers[t].ctx);
            fibers[t].ctx.uc_stack.ss_sp = stacks[t];
            fibers[t].ctx.uc_stack.ss_size = stack_size;
            fibers[t].ctx.uc_link = &sched_ctx;
            makecontext(&fibers[t].ctx, fiber_main, 0);
            fibers[t].state = RUNNABLE;
        }
        for (;;) {
            int live = 0;
            for (unsigned t = 0; t < n; t++) {
                if (fibers[t].state != RUNNABLE)
                    continue;
                cur = (int)t;
                threadIdx = uint3{t, 0, 0};
                swapcontext(&sched_ctx, &fibers[t].ctx);
            }
            for (unsigned t = 0; t < n; t++)
                if (fibers[t].state == AT_BARRIER) {
                    fibers[t].state = RUNNABLE;
                    live++;
                }
            if (!live)
                break;
        }
    }
    emu_dyn_smem = nullptr;
}

extern "C" {

cudaError_t cudaGetLastError(void)
{
    cudaError_t e = emu_error;
    emu_error = cudaSuccess;
    return e;
}
const char *cudaGetErrorName(cudaError_t e)
{
    return e == cudaSuccess ? "cudaSuccess" : "cudaErrorEmulated";
}
const char *cudaGetErrorString(cudaError_t e)
{
    return e == cudaSuccess ? "no error" : "an emulated launch failed";
}
cudaError_t cudaMalloc(void **p, size_t n)
{
    *p = std::malloc(n ? n : 1);
    if (!*p)
        return cudaErrorMemoryAllocation;
    std::memset(*p, 0xAB, n);
    return cudaSuccess;
}
cudaError_t cudaFree(void *p)
{
    std::free(p);
    return cudaSuccess;
}
cudaError_t cudaMallocHost(void **p, size_t n)
{
    return cudaMalloc(p, n);
}
cudaError_t cudaFreeHost(void *p)
{
    std::free(p);
    return cudaSuccess;
}
cudaError_t cudaMemcpy(void *d, const void *s, size_t n, enum cudaMemcpyKind)
{
    std::memcpy(d, s, n);
    return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, enum cudaMemcpyKind, cudaStream_t)
{
    std::memcpy(d, s, n);
    return cudaSuccess;
}
cudaError_t cudaMemset(void *p, int v, size_t n)
{
    std::memset(p, v, n);
    return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t)
{
    std::memset(p, v, n);
    return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t)
{
    return cudaSuccess;
}
cudaError_t cudaEventCreate(cudaEvent_t *e)
{
    *e = (cudaEvent_t)std::calloc(1, sizeof(double));
    return *e ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    std::free(e);
    return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    *(double *)e = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
    return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t)
{
    return cudaSuccess;
}
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
    *ms = (float)(1e3 * (*(double *)b - *(double *)a));
    return cudaSuccess;
}
}
