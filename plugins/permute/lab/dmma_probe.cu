/* The FP64 tensor pipe's rate as the fused kernels use it, measured on the GPU machine: every
 * warp of a full grid issues independent mma.sync DMMAs in a loop (8 accumulator tiles, so no
 * DMMA waits on the one before), as m16n8k4 and as m16n8k16; then m16n8k4 with the ring
 * kernel's conversions beside it (6 F2F.F64.F32 for 4 DMMAs, as fused_mma_ring reads its
 * float fragments), and with the operands read from shared memory as floats (6 LDS + 6 F2F for
 * 4 DMMAs: the ring kernel's k-step without its barrier, fills and epilogue).  Prints TFLOP/s
 * (2 flops a multiply-add), the best of 7 launches.  Not part of the build:
 *   nvcc -O3 -arch=sm_90a -Iharness/include -o dmma_probe plugins/permute/lab/dmma_probe.cu
 *   ./dmma_probe
 */
#include <cuda_runtime.h>
#include <stdio.h>

#include "kbench/cuda_check.h"

#define ITERS 2048

__device__ __forceinline__ void dmma4(double (&d)[4], double a0, double a1, double b)
{
    asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5}, "
                 "{%6}, {%0, %1, %2, %3};\n"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a0), "d"(a1), "d"(b));
}

__device__ __forceinline__ void dmma16(double (&d)[4], const double (&a)[8], const double (&b)[4])
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, "
                 "{%4, %5, %6, %7, %8, %9, %10, %11}, {%12, %13, %14, %15}, {%0, %1, %2, %3};\n"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]),
                   "d"(a[7]), "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]));
}

/* mode 0: m16n8k4 alone; 1: m16n8k16 alone; 2: m16n8k4 with 6 F2F a 4 DMMAs (operands from
 * float registers); 3: m16n8k4 with 6 LDS + 6 F2F a 4 DMMAs (operands from shared memory). */
template <int MODE> __global__ void __launch_bounds__(256) probe(double *out, float seed)
{
    __shared__ float sh[4][256];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int i = threadIdx.x; i < 4 * 256; i += blockDim.x)
        (&sh[0][0])[i] = seed + (float)i * 1e-3f;
    __syncthreads();
    double d[8][4];
    for (int j = 0; j < 8; j++)
        for (int i = 0; i < 4; i++)
            d[j][i] = 0.0;
    float fa0 = seed + lane, fa1 = seed - lane, fb = seed * 0.5f;
    for (int it = 0; it < ITERS; it++) {
        if (MODE == 0) {
            for (int j = 0; j < 8; j++)
                dmma4(d[j], (double)fa0, (double)fa1, (double)fb);
        } else if (MODE == 1) {
            double a[8], b[4];
            for (int i = 0; i < 8; i++)
                a[i] = fa0 + i;
            for (int i = 0; i < 4; i++)
                b[i] = fb + i;
            for (int j = 0; j < 2; j++) /* 2 x 4x the work of a k4: 8 k4 DMMAs' worth */
                dmma16(d[j], a, b);
        } else {
            for (int h = 0; h < 2; h++) { /* 2 k-steps of 4 DMMAs */
                float x0, x1, y[4];
                if (MODE == 3) {
                    const int k = (it + h) & 3;
                    x0 = sh[k][(warp * 32 + lane) & 255];
                    x1 = sh[k][(warp * 32 + lane + 8) & 255];
                    for (int j = 0; j < 4; j++)
                        y[j] = sh[k][(lane * 9 + j) & 255];
                } else {
                    x0 = fa0 + it;
                    x1 = fa1 - it;
                    for (int j = 0; j < 4; j++)
                        y[j] = fb + j + h;
                }
                const double a0 = x0, a1 = x1; /* F2F.F64.F32 */
                for (int j = 0; j < 4; j++)
                    dmma4(d[4 * h + j], a0, a1, (double)y[j]);
            }
        }
    }
    double s = 0;
    for (int j = 0; j < 8; j++)
        for (int i = 0; i < 4; i++)
            s += d[j][i];
    if (s == 12345.678)
        out[blockIdx.x] = s; /* never: keeps the work */
}

template <int MODE> static int run(const char *what, int sms, char *msg)
{
    double *out, best = 1e30;
    cudaEvent_t a, b;
    const int blocks = sms * 8;
    KB_CUDA_TRY(cudaMalloc(&out, blocks * sizeof(double)), msg);
    KB_CUDA_TRY(cudaEventCreate(&a), msg);
    KB_CUDA_TRY(cudaEventCreate(&b), msg);
    for (int r = 0; r < 8; r++) {
        float ms;
        KB_CUDA_TRY(cudaEventRecord(a), msg);
        probe<MODE><<<blocks, 256>>>(out, 1.0f + r);
        KB_CUDA_TRY(cudaGetLastError(), msg);
        KB_CUDA_TRY(cudaEventRecord(b), msg);
        KB_CUDA_TRY(cudaEventSynchronize(b), msg);
        KB_CUDA_TRY(cudaEventElapsedTime(&ms, a, b), msg);
        if (r > 0 && ms < best) /* the first launch warms up */
            best = ms;
    }
    /* Every mode does 8 m16n8k4's worth (8 x 512 multiply-adds) a warp an iteration. */
    const double flops = 2.0 * 512.0 * 8.0 * ITERS * (double)blocks * 8.0;
    printf("%-44s %7.3f ms  %6.2f TFLOP/s\n", what, best, flops / (best * 1e-3) / 1e12);
    KB_CUDA_TRY(cudaFree(out), msg);
    return KB_OK;
}

static int probe_all(char *msg)
{
    int dev = 0, sms = 0, clock = 0, rc;
    KB_CUDA_TRY(cudaGetDevice(&dev), msg);
    KB_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), msg);
    KB_CUDA_TRY(cudaDeviceGetAttribute(&clock, cudaDevAttrClockRate, dev), msg);
    printf("%d SMs, %.0f MHz: 128 multiply-adds a clock an SM would be %.2f TFLOP/s\n", sms,
           clock / 1e3, 2.0 * 128 * sms * clock * 1e3 / 1e12);
    if ((rc = run<0>("m16n8k4, 8 independent tiles", sms, msg)) != KB_OK ||
        (rc = run<1>("m16n8k16, 2 independent tiles", sms, msg)) != KB_OK ||
        (rc = run<2>("m16n8k4 + 6 F2F a 4 DMMAs", sms, msg)) != KB_OK)
        return rc;
    return run<3>("m16n8k4 + 6 LDS + 6 F2F a 4 DMMAs", sms, msg);
}

int main(void)
{
    char msg[KB_MSG_SIZE] = "";
    if (probe_all(msg) == KB_OK)
        return 0;
    fprintf(stderr, "dmma_probe: %s\n", msg);
    return 1;
}
