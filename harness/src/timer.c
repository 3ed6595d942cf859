/* Sample timing for device and host variants. */
#define _POSIX_C_SOURCE 200809L
#include "timer.h"

#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

#include "blocker.h"
#include "common.h"
#include "stats.h"
#include "kbench/cuda_check.h"

/* Bigger than any CPU's last-level cache we expect to run on. */
#define HOST_FLUSH_BYTES ((size_t)64 << 20)

/* The blocking kernel gives up after this long; the trial that tells
 * whether run() waits on the device uses the shorter one. */
#define BLOCK_TIMEOUT_S 10.0
#define BLOCK_TRIAL_TIMEOUT_S 0.5

/* The most runs a graph holds: a batch is sized to about a millisecond of
 * work, so this is reached only by sub-100 ns runs. */
#define GRAPH_MAX_BATCH 10000

const char *kbi_timing_name(kbi_timing t)
{
    static const char *const names[] = {"events", "graph", "blocked", "launches", "host"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "unknown";
}

int kbi_device_open(kbi_device *d, int device, char *err)
{
    struct cudaDeviceProp prop;
    cudaStream_t s = NULL;
    cudaEvent_t a = NULL, b = NULL;
    void *flush = NULL, *block = NULL, *block_dev = NULL;
    char msg[KB_MSG_SIZE];
    int rc = KB_OK;
    memset(d, 0, sizeof *d);
    KB_CUDA_GOTO(cudaSetDevice(device), msg, fail);
    KB_CUDA_GOTO(cudaGetDeviceProperties(&prop, device), msg, fail);
    KB_CUDA_GOTO(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), msg, fail);
    KB_CUDA_GOTO(cudaEventCreate(&a), msg, fail);
    KB_CUDA_GOTO(cudaEventCreate(&b), msg, fail);
    d->l2_bytes = (size_t)prop.l2CacheSize;
    /* Twice the L2, at least 64 MiB: every line of a previous run's data is
     * evicted before the sample. */
    d->flush_bytes = 2 * d->l2_bytes > ((size_t)64 << 20) ? 2 * d->l2_bytes : ((size_t)64 << 20);
    KB_CUDA_GOTO(cudaMalloc(&flush, d->flush_bytes), msg, fail);
    KB_CUDA_GOTO(cudaHostAlloc(&block, 2 * sizeof(int), cudaHostAllocMapped), msg, fail);
    KB_CUDA_GOTO(cudaHostGetDevicePointer(&block_dev, block, 0), msg, fail);
    d->block_host = block;
    d->block_dev = block_dev;
    d->ready = 1;
    d->device = device;
    d->stream = s;
    d->start = a;
    d->stop = b;
    d->flush = flush;
    return KBI_OK;
fail:
    kbi_errf(err, "%s", msg);
    if (block)
        cudaFreeHost(block);
    if (flush)
        cudaFree(flush);
    if (a)
        cudaEventDestroy(a);
    if (b)
        cudaEventDestroy(b);
    if (s)
        cudaStreamDestroy(s);
    (void)rc;
    return KBI_ERR;
}

void kbi_device_close(kbi_device *d)
{
    if (!d->ready)
        return;
    cudaFree(d->flush);
    cudaFreeHost((void *)d->block_host);
    cudaEventDestroy((cudaEvent_t)d->start);
    cudaEventDestroy((cudaEvent_t)d->stop);
    cudaStreamDestroy((cudaStream_t)d->stream);
    memset(d, 0, sizeof *d);
}

int kbi_device_sync(kbi_device *d, char *msg)
{
    KB_CUDA_TRY(cudaStreamSynchronize((cudaStream_t)d->stream), msg);
    KB_CUDA_TRY(cudaGetLastError(), msg);
    return KB_OK;
}

/* Records the stop event, waits for it and converts to seconds per run. */
static int finish_sample(kbi_device *d, int batch, double *seconds, char *msg)
{
    float ms = 0.0f;
    KB_CUDA_TRY(cudaEventRecord((cudaEvent_t)d->stop, (cudaStream_t)d->stream), msg);
    KB_CUDA_TRY(cudaEventSynchronize((cudaEvent_t)d->stop), msg);
    KB_CUDA_TRY(cudaGetLastError(), msg);
    KB_CUDA_TRY(cudaEventElapsedTime(&ms, (cudaEvent_t)d->start, (cudaEvent_t)d->stop), msg);
    *seconds = (double)ms * 1e-3 / (double)batch;
    return KB_OK;
}

int kbi_time_device(kbi_device *d, const kb_plugin *p, void *state, int batch, int flush,
                    double *seconds, char *msg)
{
    cudaStream_t s = (cudaStream_t)d->stream;
    static unsigned char byte;
    if (flush)
        KB_CUDA_TRY(cudaMemsetAsync(d->flush, byte++, d->flush_bytes, s), msg);
    KB_CUDA_TRY(cudaEventRecord((cudaEvent_t)d->start, s), msg);
    for (int i = 0; i < batch; i++) {
        int rc = p->run(state, d->stream, msg);
        if (rc != KB_OK)
            return rc;
    }
    return finish_sample(d, batch, seconds, msg);
}

/* One sample behind the blocking kernel.  *timed_out tells whether the
 * kernel gave up before every run was enqueued (run() waited on the
 * device, or the host was descheduled for that long). */
static int sample_blocked(kbi_device *d, const kb_plugin *p, void *state, int batch,
                          double timeout_s, double *seconds, int *timed_out, char *msg)
{
    cudaStream_t s = (cudaStream_t)d->stream;
    int rc = KB_OK;
    d->block_host[0] = 0;
    d->block_host[1] = 0;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    KB_CUDA_TRY((cudaError_t)kbi_block_launch(s, d->block_dev, d->block_dev + 1, timeout_s), msg);
    KB_CUDA_TRY(cudaEventRecord((cudaEvent_t)d->start, s), msg);
    for (int i = 0; i < batch && rc == KB_OK; i++)
        rc = p->run(state, s, msg);
    /* Release the kernel whatever happened, so the stream drains. */
    __atomic_store_n(&d->block_host[0], 1, __ATOMIC_SEQ_CST);
    if (rc != KB_OK) {
        cudaStreamSynchronize(s);
        return rc;
    }
    rc = finish_sample(d, batch, seconds, msg);
    *timed_out = d->block_host[1] != 0;
    return rc;
}

/* Captures `batch` runs into a graph.  Returns KB_OK with *exec set, or
 * nonzero when capture is not possible (msg says why; the CUDA error state
 * is cleared, nothing is left capturing). */
static int capture_batch(kbi_device *d, const kb_plugin *p, void *state, int batch,
                         cudaGraphExec_t *exec, char *msg)
{
    cudaStream_t s = (cudaStream_t)d->stream;
    cudaGraph_t graph = NULL;
    cudaError_t e;
    int rc = KB_OK;
    *exec = NULL;
    KB_CUDA_TRY(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), msg);
    for (int i = 0; i < batch && rc == KB_OK; i++)
        rc = p->run(state, s, msg);
    e = cudaStreamEndCapture(s, &graph);
    if (rc != KB_OK || e != cudaSuccess) {
        if (rc == KB_OK)
            kb_cuda_fail(e, "cudaStreamEndCapture", __FILE__, __LINE__, msg);
        if (graph)
            cudaGraphDestroy(graph);
        (void)cudaGetLastError();
        return KB_ERROR;
    }
    e = cudaGraphInstantiate(exec, graph, 0);
    cudaGraphDestroy(graph);
    if (e != cudaSuccess) {
        kb_cuda_fail(e, "cudaGraphInstantiate", __FILE__, __LINE__, msg);
        *exec = NULL;
        return KB_ERROR;
    }
    /* The first launch uploads the graph: keep it out of the samples. */
    e = cudaGraphLaunch(*exec, s);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(s);
    if (e != cudaSuccess) {
        rc = kb_cuda_fail(e, "cudaGraphLaunch", __FILE__, __LINE__, msg);
        cudaGraphExecDestroy(*exec);
        *exec = NULL;
        return rc;
    }
    return KB_OK;
}

/* One sample of h->batch runs replayed from h->graph. */
static int sample_graph(kbi_device *d, const kbi_hot *h, double *seconds, char *msg)
{
    cudaStream_t s = (cudaStream_t)d->stream;
    KB_CUDA_TRY(cudaEventRecord((cudaEvent_t)d->start, s), msg);
    KB_CUDA_TRY(cudaGraphLaunch((cudaGraphExec_t)h->graph, s), msg);
    return finish_sample(d, h->batch, seconds, msg);
}

/* One trial sample of h->batch runs by `method` (GRAPH or BLOCKED), after
 * the caller's reset.  *timed_out as for sample_blocked. */
static int trial_sample(kbi_device *d, const kb_plugin *p, void *state, const kbi_hot *h,
                        kbi_timing method, const kbi_reset *reset, double *t, int *timed_out,
                        char *msg)
{
    int rc = reset && reset->fn ? reset->fn(reset->arg, msg) : KB_OK;
    *timed_out = 0;
    if (rc != KB_OK)
        return rc;
    if (method == KBI_TIMING_BLOCKED)
        return sample_blocked(d, p, state, h->batch, BLOCK_TRIAL_TIMEOUT_S, t, timed_out, msg);
    return sample_graph(d, h, t, msg);
}

/* The graph agrees with the stream: KBI_HOT_TRIAL_PAIRS samples of each,
 * interleaved (graph, stream, graph, ...) so that a drift of the clocks
 * falls on both alike.  The graph is kept unless its median is slower than
 * the stream's by more than the trial's noise (both medians' relative
 * noise added) plus KBI_HOT_TRIAL_MARGIN; then the case is timed behind the
 * blocking kernel, the way the runs execute uncaptured, and the note says
 * why.  *timed_out: the blocking kernel gave up (the stream method cannot
 * be timed; the graph is kept unchecked). */
static int graph_agrees(kbi_device *d, const kb_plugin *p, void *state, kbi_hot *h,
                        const kbi_reset *reset, int *timed_out, char *msg)
{
    double g[KBI_HOT_TRIAL_PAIRS], b[KBI_HOT_TRIAL_PAIRS];
    kbi_stats sg, sb;
    int rc;
    for (int i = 0; i < KBI_HOT_TRIAL_PAIRS; i++) {
        if ((rc = trial_sample(d, p, state, h, KBI_TIMING_GRAPH, reset, &g[i], timed_out, msg)) !=
            KB_OK)
            return rc;
        rc = trial_sample(d, p, state, h, KBI_TIMING_BLOCKED, reset, &b[i], timed_out, msg);
        if (rc != KB_OK || *timed_out)
            return rc;
    }
    kbi_stats_compute(g, KBI_HOT_TRIAL_PAIRS, &sg);
    kbi_stats_compute(b, KBI_HOT_TRIAL_PAIRS, &sb);
    h->trial_graph_s = sg.median;
    h->trial_stream_s = sb.median;
    if (sg.median > sb.median * (1.0 + KBI_HOT_TRIAL_MARGIN + sg.noise + sb.noise)) {
        kbi_hot_free(h);
        h->method = KBI_TIMING_BLOCKED;
        snprintf(h->note, sizeof h->note,
                 "graph replay is %.1f%% slower than the same runs launched on the stream "
                 "(trial medians %.4g us and %.4g us per run): timed on the stream, behind the "
                 "blocking kernel",
                 100.0 * (sg.median / sb.median - 1.0), 1e6 * sg.median, 1e6 * sb.median);
    }
    return KB_OK;
}

int kbi_hot_setup(kbi_device *d, const kb_plugin *p, void *state, int batch, uint32_t run_flags,
                  const kbi_reset *reset, kbi_hot *h, char *msg)
{
    char why[KB_MSG_SIZE] = "";
    double t;
    int timed_out = 0, rc;
    memset(h, 0, sizeof *h);
    h->batch = batch;
    h->trial_graph_s = h->trial_stream_s = -1.0;
    if (run_flags & KB_RUN_SYNCS) {
        h->method = KBI_TIMING_LAUNCHES;
        snprintf(h->note, sizeof h->note, "run() synchronises (KB_RUN_SYNCS): plain launches");
        return KB_OK;
    }
    if (!(run_flags & KB_RUN_NO_CAPTURE)) {
        cudaGraphExec_t exec;
        int b = batch > GRAPH_MAX_BATCH ? GRAPH_MAX_BATCH : batch;
        if (capture_batch(d, p, state, b, &exec, why) == KB_OK) {
            h->method = KBI_TIMING_GRAPH;
            h->graph = exec;
            h->batch = b;
            rc = graph_agrees(d, p, state, h, reset, &timed_out, msg);
            if (rc == KB_OK && timed_out)
                snprintf(h->note, sizeof h->note,
                         "graph replay not checked against stream launches: the blocking "
                         "kernel timed out before a batch of %d runs was enqueued",
                         h->batch);
            return rc;
        }
        if ((rc = kbi_device_sync(d, msg)) != KB_OK)
            return rc;
        snprintf(h->note, sizeof h->note, "graph capture failed (%.200s)", why);
    }
    /* A trial behind the blocking kernel with a short timeout: a run()
     * that waits on the device holds the host until the kernel gives up. */
    if ((rc = trial_sample(d, p, state, h, KBI_TIMING_BLOCKED, reset, &t, &timed_out, msg)) !=
        KB_OK)
        return rc;
    if (!timed_out) {
        h->method = KBI_TIMING_BLOCKED;
        return KB_OK;
    }
    h->method = KBI_TIMING_LAUNCHES;
    snprintf(h->note + strlen(h->note), sizeof h->note - strlen(h->note),
             "%srun() waits on the device (the blocking kernel timed out): plain launches",
             h->note[0] ? "; " : "");
    return KB_OK;
}

int kbi_hot_sample(kbi_device *d, const kb_plugin *p, void *state, const kbi_hot *h,
                   double *seconds, char *msg)
{
    int timed_out = 0, rc;
    switch (h->method) {
    case KBI_TIMING_GRAPH:
        return sample_graph(d, h, seconds, msg);
    case KBI_TIMING_BLOCKED:
        rc = sample_blocked(d, p, state, h->batch, BLOCK_TIMEOUT_S, seconds, &timed_out, msg);
        if (rc == KB_OK && timed_out) {
            kb_msgf(msg, "the blocking kernel timed out after %g s before the batch of %d runs "
                         "was enqueued: does run() wait on the device? (set KB_RUN_SYNCS)",
                    BLOCK_TIMEOUT_S, h->batch);
            return KB_ERROR;
        }
        return rc;
    default:
        return kbi_time_device(d, p, state, h->batch, 0, seconds, msg);
    }
}

void kbi_hot_free(kbi_hot *h)
{
    if (h->graph)
        cudaGraphExecDestroy((cudaGraphExec_t)h->graph);
    h->graph = NULL;
}

int kbi_time_host(const kb_plugin *p, void *state, int batch, int flush, double *seconds,
                  char *msg)
{
    static unsigned char *buf;
    static unsigned char byte;
    double t0, t1;
    if (flush) {
        if (!buf)
            buf = malloc(HOST_FLUSH_BYTES);
        if (buf)
            memset(buf, byte++, HOST_FLUSH_BYTES);
    }
    t0 = kbi_now();
    for (int i = 0; i < batch; i++) {
        int rc = p->run(state, NULL, msg);
        if (rc != KB_OK)
            return rc;
    }
    t1 = kbi_now();
    *seconds = (t1 - t0) / (double)batch;
    return KB_OK;
}
