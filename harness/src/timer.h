/* Timing one sample: CUDA events on the harness's stream for device
 * variants (with the L2 flushed first in cold mode), CLOCK_MONOTONIC for
 * host variants.  In hot mode a batch of back-to-back runs is timed as the
 * GPU executes it: replayed from a CUDA graph, or queued behind a blocking
 * kernel, so the figure is not the CPU's launch rate. */
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
    /* The blocking kernel's flags, in mapped host memory: [0] release,
     * [1] timed out. */
    volatile int *block_host;
    int *block_dev;
} kbi_device;

/* How a sample was timed; its name goes into the case record ("timing"). */
typedef enum kbi_timing {
    KBI_TIMING_EVENTS = 0, /* device: runs launched between two events (one run per
                              sample in cold mode, the L2 flushed before it) */
    KBI_TIMING_GRAPH,      /* hot: the batch captured once into a CUDA graph, replayed */
    KBI_TIMING_BLOCKED,    /* hot: the batch queued behind a blocking kernel */
    KBI_TIMING_LAUNCHES,   /* hot: plain launches (run() synchronises or nothing else
                              worked): the CPU's launch rate may show */
    KBI_TIMING_HOST        /* host variant: CLOCK_MONOTONIC */
} kbi_timing;

const char *kbi_timing_name(kbi_timing t);

/* A hot-mode batch, set up once per case by kbi_hot_setup. */
typedef struct kbi_hot {
    kbi_timing method;
    int batch;
    void *graph; /* cudaGraphExec_t when method is GRAPH */
    char note[256]; /* why a faster method was not used, "" if none */
} kbi_hot;

/* Chooses how to time `batch` runs of a device variant: a graph unless
 * run_flags forbid capture or capture fails, then the blocking kernel
 * unless run() synchronises (KB_RUN_SYNCS, or the kernel's trial timed
 * out), then plain launches.  Every trial leaves the state as a sequence of
 * ordinary runs would (the graph is launched once to upload it).  Returns
 * KB_OK, or the plugin's or a CUDA status with msg set. */
int kbi_hot_setup(kbi_device *d, const kb_plugin *p, void *state, int batch, uint32_t run_flags,
                  kbi_hot *h, char *msg);
/* Times one sample of h->batch runs; *seconds is the time per run. */
int kbi_hot_sample(kbi_device *d, const kb_plugin *p, void *state, const kbi_hot *h,
                   double *seconds, char *msg);
void kbi_hot_free(kbi_hot *h);

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
