/* What emu_launch.cpp gives the two schedulers that run a grid (emu_fibers.cpp, the default,
 * and emu_threads.cpp, EMU_THREADS): each defines emu_syncthreads and emu_run (emu_cuda.h). */
#ifndef KBENCH_EMU_SCHEDULER_H
#define KBENCH_EMU_SCHEDULER_H

#include "emu_cuda.h"

/* Makes the running CPU thread CUDA thread t of the CTA (blockDim set). */
void emu_enter_thread(unsigned t);
/* A CTA's dynamic shared memory: smem bytes, 16-byte aligned, 0xFF; null for 0 bytes. */
void *emu_new_dyn_smem(size_t smem);
void emu_free_dyn_smem(void *p);
/* Adds a launch to emu_stats. */
void emu_count_launch(dim3 grid, dim3 block);

#endif
