/* Sample timing for device and host variants. */
#define _POSIX_C_SOURCE 200809L
#include "timer.h"

#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "kbench/cuda_check.h"

/* Bigger than any CPU's last-level cache we expect to run on. */
#define HOST_FLUSH_BYTES ((size_t)64 << 20)

int kbi_device_open(kbi_device *d, int device, char *err)
{
    struct cudaDeviceProp prop;
    cudaStream_t s = NULL;
    cudaEvent_t a = NULL, b = NULL;
    void *flush = NULL;
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
    d->ready = 1;
    d->device = device;
    d->stream = s;
    d->start = a;
    d->stop = b;
    d->flush = flush;
    return KBI_OK;
fail:
    kbi_errf(err, "%s", msg);
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

int kbi_time_device(kbi_device *d, const kb_plugin *p, void *state, int batch, int flush,
                    double *seconds, char *msg)
{
    cudaStream_t s = (cudaStream_t)d->stream;
    float ms = 0.0f;
    static unsigned char byte;
    if (flush)
        KB_CUDA_TRY(cudaMemsetAsync(d->flush, byte++, d->flush_bytes, s), msg);
    KB_CUDA_TRY(cudaEventRecord((cudaEvent_t)d->start, s), msg);
    for (int i = 0; i < batch; i++) {
        int rc = p->run(state, d->stream, msg);
        if (rc != KB_OK)
            return rc;
    }
    KB_CUDA_TRY(cudaEventRecord((cudaEvent_t)d->stop, s), msg);
    KB_CUDA_TRY(cudaEventSynchronize((cudaEvent_t)d->stop), msg);
    KB_CUDA_TRY(cudaGetLastError(), msg);
    KB_CUDA_TRY(cudaEventElapsedTime(&ms, (cudaEvent_t)d->start, (cudaEvent_t)d->stop), msg);
    *seconds = (double)ms * 1e-3 / (double)batch;
    return KB_OK;
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
