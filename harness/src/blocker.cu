/* The blocking kernel of hot timing: it holds the harness's stream until
 * the host has enqueued a whole batch of runs, so the batch then executes
 * back to back and the events around it time the GPU, not the CPU's launch
 * rate (nvbench's method).  It gives up after a timeout, so a run() that
 * waits on the device cannot deadlock the worker; the timer then reports
 * the sample as unreliable. */
#include <cuda_runtime.h>

#include "blocker.h"

/* Spins until *release is nonzero or about `timeout_ns` have passed; sets
 * *timed_out when it gave up. */
__global__ void kbi_block_kernel(const volatile int *release, volatile int *timed_out,
                                 long long timeout_ns)
{
    unsigned long long start;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    while (!*release) {
        unsigned long long now;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if ((long long)(now - start) > timeout_ns) {
            *timed_out = 1;
            return;
        }
        __nanosleep(1000);
    }
}

extern "C" int kbi_block_launch(void *stream, const volatile int *release_dev,
                                volatile int *timed_out_dev, double timeout_s)
{
    kbi_block_kernel<<<1, 1, 0, (cudaStream_t)stream>>>(release_dev, timed_out_dev,
                                                        (long long)(timeout_s * 1e9));
    return (int)cudaGetLastError();
}
