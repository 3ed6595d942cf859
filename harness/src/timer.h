/* Timing one sample: CUDA events on the harness's stream for device
 * variants (with the L2 flushed first in cold mode), CLOCK_MONOTONIC for
 * host variants. */
#ifndef KBENCH_TIMER_H
#define KBENCH_TIMER_H

#include <stddef.h>

#include "kbench/plugin.h"

/* The worker's CUDA resources, made once per worker process. */
typedef struct kbi_device {
    int ready;
    int device;
    void *stream; /* cudaStream_t */
    void *start, *stop; /* cudaEvent_t */
    void *flush;  /* device buffer larger than L2 */
    size_t flush_bytes;
    size_t l2_bytes;
} kbi_device;

/* Selects the device and creates the stream, events and flush buffer.
 * Returns KBI_OK, or KBI_ERR with err saying why (no device, no driver). */
int kbi_device_open(kbi_device *d, int device, char *err);
void kbi_device_close(kbi_device *d);

/* Waits for the stream and reports any pending (possibly sticky) error.
 * Returns KB_OK or KB_CUDA_ERROR with msg set. */
int kbi_device_sync(kbi_device *d, char *msg);

/* Times `batch` back-to-back runs of a device variant; *seconds is the time
 * per run.  With flush set, the L2 is overwritten before the first run (not
 * timed).  Returns the plugin's status or KB_CUDA_ERROR, with msg set. */
int kbi_time_device(kbi_device *d, const kb_plugin *p, void *state, int batch, int flush,
                    double *seconds, char *msg);

/* Same for a host variant; with flush set, the CPU caches are overwritten
 * (a buffer larger than the last-level cache) before the first run. */
int kbi_time_host(const kb_plugin *p, void *state, int batch, int flush, double *seconds,
                  char *msg);

#endif
