/* Shared between the stream plugin's C glue and its CUDA kernels. */
#ifndef KBENCH_STREAM_H
#define KBENCH_STREAM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define STREAM_HD __host__ __device__
#else
#define STREAM_HD
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum stream_op { OP_COPY, OP_SCALE, OP_ADD, OP_TRIAD, OP_FMA } stream_op;

/* The scalar of scale and triad. */
#define STREAM_Q 3.0f

/* The fma op: c[i] is a[i] after STREAM_FMA_STEPS dependent steps x = x/2 + 1/2 (one fused
 * multiply-add each, 2 flops), 2,048 flops per 8 bytes moved: bound by the FP32 FMA pipes, not by
 * memory.  Each step halves the error carried in, so the fp32 result stays within 2^-23 of the
 * same steps in double. */
#define STREAM_FMA_STEPS 1024

/* Input element i of array `which` (0: a, 1: b): a seeded value in [1, 2),
 * never zero, computed the same way on host and device so verify needs no
 * copy of the inputs. */
static inline STREAM_HD float stream_input(uint64_t seed, int which, size_t i)
{
    uint64_t z = seed * 0x9E3779B97F4A7C15ull + (uint64_t)which * 0xD1B54A32D192ED03ull +
                 (uint64_t)i * 0x94D049BB133111EBull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return 1.0f + (float)(z >> 40) * (1.0f / 16777216.0f);
}

/* Device side (kernels.cu).  Each returns a cudaError_t as int. */
int stream_device_fill(float *x, size_t n, uint64_t seed, int which, void *stream);
/* Largest relative error of c against op in double, and the count of
 * elements over tol, computed on the device (a NaN counts as infinity). */
int stream_device_check(stream_op op, const float *c, size_t n, uint64_t seed, double tol,
                        double *worst, unsigned long long *bad);
int stream_device_run(stream_op op, float *c, const float *a, const float *b, size_t n,
                      int sm_count, int blocks_per_sm, void *stream);

#ifdef __cplusplus
}
#endif

#endif
