/* sgemm ladder step 11, 3xTF32: fp32 GEMM on the tensor cores at fp32-level accuracy.
 *
 * Each fp32 input x is split into big = tf32(x) (rounded to nearest) and
 * small = tf32(x - big); x - big is exact in fp32 and small keeps its leading 11 bits, so
 * big + small holds x to 2^-23 relative.  A*B is then small*big + big*small + big*big
 * (small*small, below 2^-22 relative, is dropped), each product on the tensor cores with fp32
 * accumulation, the small products first.  The tensor cores' fp32 accumulation truncates, so
 * summing all of K in their accumulator would drift (by about 4e-5 relative at K = 4096 in a
 * CPU model of that rounding, where fp32 FFMA gets 1e-6); every kernel therefore accumulates a
 * short run of K (32 for mma_sync, 64 for wgmma) on the tensor cores and adds it to a separate
 * fp32 accumulator with round-to-nearest FADDs (two-level accumulation: 3.5e-7 and 5.8e-7 in
 * the same model at K = 4096, better than sequential FFMA).
 *
 * Four kernels, all 128x128x32 CTA tiles computed by 256 threads, with a ring fed from the
 * column-major inputs (A tile as As[k][m], B tile as Bs[n][k]: neither is transposed in
 * global memory), one header each:
 *   - mma_sync (11_tf32x3_mma.cuh, sm_80+): mma.sync.m16n8k8 tf32, 8 warps of 64x32;
 *     fragments are read from padded SMEM with conflict-free 32-bit loads and split in
 *     registers.
 *   - wgmma (11_tf32x3_wgmma.cuh, sm_90a only): two warpgroups of 64x128, wgmma.m64n128k8 with
 *     A from registers (split there, as above) and B from SMEM through a matrix descriptor.
 *     wgmma reads tf32 only K-major, which B already is; a split pass per K tile turns the raw
 *     B tile into big and small copies in the 128-byte-swizzled layout the descriptor
 *     describes, while the tensor cores work on the previous tile.  Also with split-K
 *     (configuration 4): a shape of few tiles and long K (256x4096x4096) then fills the SMs
 *     without paying for pre-splitting the whole of B, as kernel 3's split-K does.
 *   - wgmma on pre-split B (11_tf32x3_presplit.cuh, sm_90a only): B is split once per launch
 *     into a workspace of big and small copies, which the ring copies as they are (A is still
 *     split in registers); stages are handed over by mbarriers instead of CTA barriers, and
 *     shapes of too few tiles split K.  Configuration 5 is the same kernel on C^T = B^T A^T:
 *     A^T pre-split, B raw and split in registers, which where B is the large operand
 *     (256x4096x4096) pre-splits a sixteenth of the bytes.
 *   - wgmma fed by a producer warpgroup (11_tf32x3_ws.cuh, sm_90a only; configuration 6,
 *     kernel 5): kernel 3's K loop in two warpgroups, and a third that only copies (B's
 *     pre-split tile images by bulk copies, A by cp.async) and refills each stage as soon as
 *     it is released; setmaxnreg moves its registers to the two that compute.  Configuration
 *     7 is the same kernel on C^T = B^T A^T, as configuration 5 is kernel 3's.
 * 11_tf32x3_common.cuh holds what they share (split-K's plan, workspace and in-order finish
 * among it); this file, the tuner.  tf32x3_tune() times the
 * configurations that can run here and keeps the fastest per shape; run_tf32x3() runs that
 * choice, and on a shape not tuned kernel 5 (the pre-split wgmma kernel fed by a producer
 * warpgroup, with split-K) on a compute capability 9.0 device, mma_sync elsewhere. */
#include "common.cuh"
#include "tune.cuh"

#include <algorithm>

#include "11_tf32x3_mma.cuh"
#include "11_tf32x3_wgmma.cuh"
#include "11_tf32x3_presplit.cuh"
#include "11_tf32x3_ws.cuh"

namespace
{

/* Tuned in this order (tune.cuh), the wgmma ones on compute capability 9.0 only. */
const SgemmConfig kConfigs[] = {
    {"mma_sync_128x128x32_s4", run_mma, false},
    {"wgmma_128x128x32_s4", run_wgmma<false>, true},
    {"wgmma_presplit_128x128x32_s4", run_wgmma_ps<false>, true},
    {"wgmma_presplit_128x128x32_s4_splitk", run_wgmma_ps<true>, true},
    {"wgmma_128x128x32_s4_splitk", run_wgmma<true>, true},
    {"wgmma_presplit_a_128x128x32_s4_splitk", run_wgmma_ps<true, true>, true},
    {"wgmma_producer_128x128x32_s4_splitk", run_wgmma_ws<true>, true},
    {"wgmma_producer_presplit_a_128x128x32_s4_splitk", run_wgmma_ws<true, true>, true},
};

/* Used when the shape was not tuned: the pre-split wgmma kernel fed by a producer warpgroup,
 * with split-K, where it runs (on an H100 the fastest of 3 and 6 at all six shapes of
 * profiles/sgemm.ini), mma_sync elsewhere. */
int default_config(int, int, int)
{
    return sgemm_device_is_sm90() ? 6 : 0;
}

/* The tuned choice per shape, and the tune loop (tune.cuh). */
SgemmTuner tuner(kConfigs, default_config);

} // namespace

extern "C" int tf32x3_config_count(void)
{
    return tuner.count();
}

extern "C" const char *tf32x3_config_name(int idx)
{
    return tuner.name(idx);
}

/* Runs configuration `config`; cudaErrorNotSupported when it cannot run on this device (the
 * wgmma kernel anywhere but compute capability 9.0). */
extern "C" cudaError_t run_tf32x3_config(int config, int M, int N, int K, float alpha,
                                         const float *A, int lda, const float *B, int ldb,
                                         float beta, const float *C0, float *C, int ldc,
                                         cudaStream_t stream)
{
    return tuner.run_config(config, {M, N, K, alpha, A, lda, B, ldb, beta, C0, C, ldc, stream});
}

extern "C" SGEMM_LAUNCHER(tf32x3)
{
    return tuner.run({M, N, K, alpha, A, lda, B, ldb, beta, C0, C, ldc, stream});
}

extern "C" cudaError_t tf32x3_tune(int M, int N, int K, float alpha, const float *A, int lda,
                                   const float *B, int ldb, float beta, const float *C0, float *C,
                                   int ldc, cudaStream_t stream, int *chosen_config)
{
    return tuner.tune({M, N, K, alpha, A, lda, B, ldb, beta, C0, C, ldc, stream}, chosen_config);
}

/* Frees the pre-split and split-K workspaces after all work on the device has finished
 * (synchronises the device); safe to call more than once. */
extern "C" void tf32x3_release(void)
{
    presplit_ws.release();
    splitk_ws.release();
    splitk_flag_ws.release();
}
