/* The blocking kernel of hot timing (see blocker.cu). */
#ifndef KBENCH_BLOCKER_H
#define KBENCH_BLOCKER_H

#ifdef __cplusplus
extern "C" {
#endif

/* Enqueues on `stream` a one-thread kernel that spins until *release_dev
 * (mapped host memory) is nonzero, or gives up after timeout_s and sets
 * *timed_out_dev.  Returns a cudaError_t (0 ok). */
int kbi_block_launch(void *stream, const volatile int *release_dev, volatile int *timed_out_dev,
                     double timeout_s);

#ifdef __cplusplus
}
#endif

#endif
