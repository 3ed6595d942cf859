/* Helpers shared by the sgemm kernels (kernels/NN_<variant>.cu): index macros, the epilogue,
 * alignment tests, cp.async wrappers and SMEM swizzles.  Kept here so that no kernel file
 * carries its own copy; additions welcome, edits to existing helpers must stay compatible. */
#ifndef KBENCH_SGEMM_COMMON_CUH
#define KBENCH_SGEMM_COMMON_CUH

#include <mutex>

#ifndef SGEMM_HOST_EMULATION
#include <cuda_runtime.h>
#endif
#include <stdint.h>

#include "kernels.h"

#define CEIL_DIV(a, b) (((a) + (b)-1) / (b))

/* Column-major element offset; size_t so that M*N > 2^31 does not overflow. */
__host__ __device__ __forceinline__ size_t sgemm_at(int row, int col, int ld)
{
    return (size_t)row + (size_t)col * (size_t)ld;
}

/* One element of the result: alpha*acc + beta*C0.  beta == 0 does not read C0 (BLAS rule). */
__device__ __forceinline__ void sgemm_store(float acc, float alpha, float beta, const float *C0,
                                            float *C, size_t idx)
{
    float v = alpha * acc;
    if (beta != 0.0f)
        v = fmaf(beta, C0[idx], v);
    C[idx] = v;
}

/* Four consecutive rows of one column of the result; idx must be 16-byte aligned in C and C0. */
__device__ __forceinline__ void sgemm_store4(float4 acc, float alpha, float beta, const float *C0,
                                             float *C, size_t idx)
{
    float4 v = make_float4(alpha * acc.x, alpha * acc.y, alpha * acc.z, alpha * acc.w);
    if (beta != 0.0f) {
        const float4 c = *reinterpret_cast<const float4 *>(C0 + idx);
        v.x = fmaf(beta, c.x, v.x);
        v.y = fmaf(beta, c.y, v.y);
        v.z = fmaf(beta, c.z, v.z);
        v.w = fmaf(beta, c.w, v.w);
    }
    *reinterpret_cast<float4 *>(C + idx) = v;
}

/* The first min(rows, 4) of four consecutive rows of one column of the result (rows below the
 * matrix's edge are left alone): one 128-bit store when `vec` (C, and C0 unless beta is 0, are
 * 16-byte aligned at idx) and all four are inside, else one element at a time. */
__device__ __forceinline__ void sgemm_store_rows(float4 acc, float alpha, float beta,
                                                 const float *C0, float *C, size_t idx, int rows,
                                                 bool vec)
{
    if (vec && rows >= 4) {
        sgemm_store4(acc, alpha, beta, C0, C, idx);
        return;
    }
    if (rows > 0)
        sgemm_store(acc.x, alpha, beta, C0, C, idx);
    if (rows > 1)
        sgemm_store(acc.y, alpha, beta, C0, C, idx + 1);
    if (rows > 2)
        sgemm_store(acc.z, alpha, beta, C0, C, idx + 2);
    if (rows > 3)
        sgemm_store(acc.w, alpha, beta, C0, C, idx + 3);
}

/* True when p is 16-byte aligned, i.e. usable for float4 / 16-byte cp.async. */
__host__ __device__ __forceinline__ bool sgemm_aligned16(const void *p)
{
    return ((uintptr_t)p & 15u) == 0;
}

/* True when every column of a column-major matrix starts 16-byte aligned, so 4 consecutive
 * rows of any column can move as one float4. */
__host__ __device__ __forceinline__ bool sgemm_vec4_ok(const void *p, int ld)
{
    return sgemm_aligned16(p) && (ld % 4) == 0;
}

/* ---- guarded global loads -----------------------------------------------------------------
 * Rows r..r+3 of column c of a column-major rows x cols matrix, zero where outside it.  One
 * 128-bit load when the four rows are inside and `vec` (sgemm_vec4_ok) holds, else scalar. */
__device__ __forceinline__ float4 sgemm_load4(const float *__restrict__ base, int ld, int r, int c,
                                              int rows, int cols, bool vec)
{
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (c >= cols)
        return v;
    const float *col = base + (size_t)c * (size_t)ld;
    if (vec && r + 3 < rows)
        return *reinterpret_cast<const float4 *>(col + r);
    if (r < rows)
        v.x = col[r];
    if (r + 1 < rows)
        v.y = col[r + 1];
    if (r + 2 < rows)
        v.z = col[r + 2];
    if (r + 3 < rows)
        v.w = col[r + 3];
    return v;
}

/* One element, zero outside the matrix. */
__device__ __forceinline__ float sgemm_load1(const float *__restrict__ base, int ld, int r, int c,
                                             int rows, int cols)
{
    return (r < rows && c < cols) ? base[sgemm_at(r, c, ld)] : 0.0f;
}

/* ---- cp.async (sm_80+) -------------------------------------------------------------------
 * With pred false the source size is 0: nothing is read and the 16/4 SMEM bytes are zero
 * filled, which is how edge tiles pad with zeros.  Callers pass a valid global address even
 * then (the matrix base), so no out-of-range address is ever formed. */

#ifndef SGEMM_HOST_EMULATION
__device__ __forceinline__ uint32_t sgemm_smem_addr(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

/* 16 bytes, L2 only (.cg): streamed tiles are not re-read by this SM from L1. */
__device__ __forceinline__ void cp_async_16(void *smem, const void *gmem, bool pred)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(sgemm_smem_addr(smem)),
                 "l"(gmem), "r"(pred ? 16 : 0)
                 : "memory");
}

/* 4 bytes (.ca is the only cache option below 16 bytes; neighbouring k of a column are fetched
 * by neighbouring lanes, so the sector is read from L2 once). */
__device__ __forceinline__ void cp_async_4(void *smem, const void *gmem, bool pred)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(sgemm_smem_addr(smem)),
                 "l"(gmem), "r"(pred ? 4 : 0)
                 : "memory");
}

__device__ __forceinline__ void cp_async_commit()
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/* Wait until at most N committed groups of this thread are still in flight.  Makes the
 * thread's own copies visible to itself only: a __syncthreads() must follow before other
 * threads read them. */
template <int N> __device__ __forceinline__ void cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
#else
/* CPU emulation (tests/emu): the copy happens at issue time.  That is stricter than
 * the hardware for write-after-read hazards and cannot show a wait_group that is too short. */
__device__ __forceinline__ void cp_async_16(void *smem, const void *gmem, bool pred)
{
    const float *s = (const float *)gmem;
    float *d = (float *)smem;
    for (int i = 0; i < 4; i++)
        d[i] = pred ? s[i] : 0.0f;
}
__device__ __forceinline__ void cp_async_4(void *smem, const void *gmem, bool pred)
{
    *(float *)smem = pred ? *(const float *)gmem : 0.0f;
}
__device__ __forceinline__ void cp_async_commit() {}
template <int N> __device__ __forceinline__ void cp_async_wait() {}
#endif

/* Rows r..r+3 of column c into 16-byte aligned SMEM, zero filled outside the matrix: one
 * 16-byte copy when the rows are inside and `vec` holds, else four guarded 4-byte copies. */
__device__ __forceinline__ void cp_async_load4(float *smem, const float *base, int ld, int r, int c,
                                               int rows, int cols, bool vec)
{
    const bool col_ok = c < cols;
    const float *col = col_ok ? base + (size_t)c * (size_t)ld : base;
    if (vec && col_ok && r + 3 < rows) {
        cp_async_16(smem, col + r, true);
    } else if (!col_ok || r >= rows) {
        cp_async_16(smem, base, false);
    } else {
        for (int i = 0; i < 4; i++)
            cp_async_4(smem + i, r + i < rows ? col + r + i : base, r + i < rows);
    }
}

/* One element into SMEM, zero outside the matrix. */
__device__ __forceinline__ void cp_async_load1(float *smem, const float *base, int ld, int r, int c,
                                               int rows, int cols)
{
    const bool ok = r < rows && c < cols;
    cp_async_4(smem, ok ? base + sgemm_at(r, c, ld) : base, ok);
}

/* ---- swizzles ------------------------------------------------------------------------------
 * An SMEM tile row (a multiple of 32 floats, so every row starts in bank 0) seen as 16-byte
 * chunks; chunk c of bank group c % 8.  XOR-ing the chunk index with a key taken from the row
 * (or from higher chunk bits) is a permutation within the row, so a warp that fills whole rows
 * stays conflict-free, while accesses that would have hit one chunk column of many rows (or
 * every other chunk of one row) spread over different bank groups.  Both the writer and the
 * reader apply it.  This flips the chunk bits of a float index by key and keeps the 4 floats of
 * a chunk together, so 128-bit accesses and 16-byte cp.async stay legal. */
__host__ __device__ __forceinline__ int sgemm_swizzle(int idx, int key)
{
    return idx ^ (key << 2);
}

/* SMs of the current device, for launch decisions (split-K, tail splitting); read once per
 * device.  132 (an H100/H200) if the runtime cannot tell. */
inline int sgemm_sm_count()
{
    static std::mutex mu;
    static int cached_dev = -1, cached = 132;
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess)
        return cached;
    std::lock_guard<std::mutex> lock(mu);
    if (dev != cached_dev) {
        int sms = 0;
        if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) == cudaSuccess &&
            sms > 0)
            cached = sms;
        cached_dev = dev;
    }
    return cached;
}

/* ---- stream-ordered workspace --------------------------------------------------------------
 * Device scratch memory a launcher needs beyond its arguments (split-K partial sums, pre-split
 * operands): grown on demand with cudaMallocAsync on the run's stream, so the run path never
 * synchronises the device, and reused while large enough.  The old buffer is freed in stream
 * order, after the kernels already queued on that stream.  release() synchronises the device
 * and frees it; the plugin calls it from its teardown.  A launcher keeps one per process: runs
 * on several streams at once would share it (the harness uses one stream).  (The CPU
 * emulation in tests/emu supplies the runtime calls it makes.) */
struct SgemmWorkspace {
    std::mutex mu;
    float *ptr = nullptr;
    size_t bytes = 0;
    bool from_pool = false; /* cudaMallocAsync (else cudaMalloc: no memory pools) */

    /* zero: a new buffer starts as zero bytes (cudaMemsetAsync, in stream order); a buffer
     * kept from an earlier call holds what that call's kernels left in it. */
    cudaError_t get(size_t want, cudaStream_t stream, float **out, bool zero = false)
    {
        std::lock_guard<std::mutex> lock(mu);
        if (want <= bytes) {
            *out = ptr;
            return cudaSuccess;
        }
        drop(stream);
        void *p = nullptr;
        cudaError_t e = cudaMallocAsync(&p, want, stream);
        from_pool = e == cudaSuccess;
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            if ((e = cudaMalloc(&p, want)) != cudaSuccess)
                return e;
        }
        ptr = (float *)p;
        bytes = want;
        *out = ptr;
        return zero ? cudaMemsetAsync(p, 0, want, stream) : cudaSuccess;
    }

    void release()
    {
        std::lock_guard<std::mutex> lock(mu);
        if (!ptr)
            return;
        (void)cudaDeviceSynchronize();
        drop(0);
        (void)cudaDeviceSynchronize();
    }

  private:
    void drop(cudaStream_t stream)
    {
        if (ptr && from_pool)
            (void)cudaFreeAsync(ptr, stream);
        else if (ptr)
            (void)cudaFree(ptr);
        ptr = nullptr;
        bytes = 0;
    }
};

#endif /* KBENCH_SGEMM_COMMON_CUH */
