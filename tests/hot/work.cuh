/* The work both the hot-timing fixture plugin and graph_replay time: a
 * float axpy (z = a x + y, about a microsecond at 64 Ki elements), a
 * cuBLAS SGEMM (256^3 by default), a run of many small axpys, and one
 * device-to-device cudaMemcpyAsync.  One definition, so the two programs
 * time exactly the same kernels. */
#ifndef KBENCH_HOT_WORK_CUH
#define KBENCH_HOT_WORK_CUH

#include <cublas_v2.h>
#include <cuda_runtime.h>

__global__ static void hot_axpy_kernel(int n, float a, const float *x, const float *y, float *z)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        z[i] = a * x[i] + y[i];
}

static inline cudaError_t hot_axpy(cudaStream_t s, int n, const float *x, const float *y, float *z)
{
    hot_axpy_kernel<<<(n + 255) / 256, 256, 0, s>>>(n, 2.0f, x, y, z);
    return cudaGetLastError();
}

/* The "many" work: `launches` back-to-back axpys of HOT_MANY_ELEMS floats,
 * a run() of many small kernels (a millisecond and more at 1000). */
#define HOT_MANY_ELEMS 4096

static inline cudaError_t hot_many(cudaStream_t s, int launches, const float *x, const float *y,
                                   float *z)
{
    for (int i = 0; i < launches; i++) {
        cudaError_t e = hot_axpy(s, HOT_MANY_ELEMS, x, y, z);
        if (e != cudaSuccess)
            return e;
    }
    return cudaSuccess;
}

/* The "memcpy" work: one device-to-device cudaMemcpyAsync of n floats. */
static inline cudaError_t hot_memcpy(cudaStream_t s, size_t n, const float *x, float *z)
{
    return cudaMemcpyAsync(z, x, n * sizeof(float), cudaMemcpyDeviceToDevice, s);
}

/* C = A B, all n x n, column-major; the handle is bound to the stream. */
static inline cublasStatus_t hot_sgemm(cublasHandle_t h, int n, const float *a, const float *b,
                                       float *c)
{
    const float one = 1.0f, zero = 0.0f;
    return cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n);
}

/* cuBLAS allocates no workspace inside a graph capture once it has one. */
#define HOT_CUBLAS_WORKSPACE ((size_t)32 << 20)

/* Deterministic inputs in [-1, 1), never all zeros. */
static inline void hot_fill(float *h, size_t n, unsigned seed)
{
    unsigned x = seed * 2654435761u + 1u;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        h[i] = (float)((x >> 8) & 0xffff) / 32768.0f - 1.0f;
    }
}

#endif
