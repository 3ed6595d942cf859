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
    /* The trial that decided between the graph and the stream (seconds per
     * run, medians; -1 where no trial ran). */
    double trial_graph_s, trial_stream_s;
    char note[256]; /* why a faster method was not used, "" if none */
} kbi_hot;

/* The trial's size and its rule (kbi_hot_setup): a graph slower than the
 * stream by more than the margin plus the trial's noise is not used. */
#define KBI_HOT_TRIAL_PAIRS 5
#define KBI_HOT_TRIAL_MARGIN 0.03

/* The caller's untimed reset before each trial sample (NULL fn: none). */
typedef struct kbi_reset {
    int (*fn)(void *arg, char *msg);
    void *arg;
} kbi_reset;

/* Chooses how to time `batch` runs of a device variant in hot mode, so that
 * the figure is the GPU's time for the work as it runs uncaptured:
 *  - run() synchronises (KB_RUN_SYNCS): plain launches;
 *  - else a CUDA graph of the batch, if capture works (KB_RUN_NO_CAPTURE
 *    forbids it) and the graph agrees with the same runs queued on the
 *    stream behind the blocking kernel.  Capture can change the work: a
 *    large device-to-device cudaMemcpyAsync becomes a copy node that runs
 *    ~35% slower on the H200 at 512 MiB and more, and memset, host-function
 *    and allocation nodes differ from their stream forms too; so both are
 *    timed in a trial (KBI_HOT_TRIAL_PAIRS samples each) and a graph slower
 *    than the stream beyond the trial's noise plus KBI_HOT_TRIAL_MARGIN is
 *    dropped for the blocking kernel (h->note says so, h->trial_* keep the
 *    figures).  A batch of one is no exception: a long run() of many small
 *    kernels is timed as the GPU executes it, not at the CPU's launch rate;
 *  - else behind the blocking kernel, unless its trial times out (run()
 *    waits on the device): plain launches.
 * Every trial leaves the state as a sequence of ordinary runs would, each
 * trial sample after `reset` (may be NULL).  Returns KB_OK, or the plugin's
 * or a CUDA status with msg set. */
int kbi_hot_setup(kbi_device *d, const kb_plugin *p, void *state, int batch, uint32_t run_flags,
                  const kbi_reset *reset, kbi_hot *h, char *msg);
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
