/* sgemm on the CPU: the `host` variant (float, blocked) and the double-precision reference it
 * is verified against.  Both column-major, C = alpha*A*B + beta*C0. */
#include <stdlib.h>
#include <string.h>

#include "sgemm.h"

/* Block sizes: a 64x64 float accumulator (16 KiB) stays in L1, a 64x256 panel of A (64 KiB)
 * in L2; each pass over the panel feeds four columns of the accumulator. */
enum { HOST_BM = 64, HOST_BN = 64, HOST_BK = 256 };

static int min_int(int a, int b)
{
    return a < b ? a : b;
}

/* acc[j][0..mb) += A[m0.., k0..k0+kb) * B[k0..k0+kb, n0+j] for j < nb. */
static void host_block(float acc[HOST_BN][HOST_BM], int mb, int nb, int kb, const float *A, int lda,
                       const float *B, int ldb)
{
    int j = 0;
    for (; j + 4 <= nb; j += 4) {
        float *restrict c0 = acc[j], *restrict c1 = acc[j + 1];
        float *restrict c2 = acc[j + 2], *restrict c3 = acc[j + 3];
        const float *b0 = B + (size_t)j * ldb, *b1 = b0 + ldb, *b2 = b1 + ldb, *b3 = b2 + ldb;
        for (int k = 0; k < kb; k++) {
            const float *restrict a = A + (size_t)k * lda;
            const float x0 = b0[k], x1 = b1[k], x2 = b2[k], x3 = b3[k];
            for (int i = 0; i < mb; i++) {
                const float ai = a[i];
                c0[i] += ai * x0;
                c1[i] += ai * x1;
                c2[i] += ai * x2;
                c3[i] += ai * x3;
            }
        }
    }
    for (; j < nb; j++) {
        float *restrict c = acc[j];
        const float *b = B + (size_t)j * ldb;
        for (int k = 0; k < kb; k++) {
            const float *restrict a = A + (size_t)k * lda;
            const float x = b[k];
            for (int i = 0; i < mb; i++)
                c[i] += a[i] * x;
        }
    }
}

void sgemm_host(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                float beta, const float *C0, float *C, int ldc)
{
    float acc[HOST_BN][HOST_BM]; /* 16 KiB */
    for (int n0 = 0; n0 < N; n0 += HOST_BN) {
        const int nb = min_int(HOST_BN, N - n0);
        for (int m0 = 0; m0 < M; m0 += HOST_BM) {
            const int mb = min_int(HOST_BM, M - m0);
            memset(acc, 0, sizeof acc);
            for (int k0 = 0; k0 < K; k0 += HOST_BK)
                host_block(acc, mb, nb, min_int(HOST_BK, K - k0), A + m0 + (size_t)k0 * lda, lda,
                           B + k0 + (size_t)n0 * ldb, ldb);
            for (int j = 0; j < nb; j++) {
                const size_t col = (size_t)(n0 + j) * ldc + m0;
                for (int i = 0; i < mb; i++)
                    C[col + i] =
                        beta != 0.0f ? alpha * acc[j][i] + beta * C0[col + i] : alpha * acc[j][i];
            }
        }
    }
}

void sgemm_host_reference(int M, int N, int K, double alpha, const float *A, const float *B,
                          double beta, const float *C0, double *ref)
{
    for (int n = 0; n < N; n++) {
        double *restrict r = ref + (size_t)n * M;
        memset(r, 0, sizeof(double) * (size_t)M);
        for (int k = 0; k < K; k++) {
            const float *restrict a = A + (size_t)k * M;
            const double b = B[k + (size_t)n * K];
            for (int m = 0; m < M; m++)
                r[m] += (double)a[m] * b;
        }
        const float *c0 = C0 + (size_t)n * M;
        for (int m = 0; m < M; m++)
            r[m] = alpha * r[m] + (beta != 0.0 ? beta * (double)c0[m] : 0.0);
    }
}
