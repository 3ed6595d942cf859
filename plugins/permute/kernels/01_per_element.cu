// per_element: the kernels the seed replaced.  One thread per destination element; its tree
// and multi-index come from integer division, and a generic block loops over its source trees
// reading U[i][j] and the permuted source element of each.  Abelian blocks (rows = cols = 1)
// get their own kernel without coefficients (the unique/generic split), so a tensor with both
// kinds takes two launches.
#include "common.cuh"

namespace
{

template <typename T, bool UNIQUE, bool BETA>
__global__ void __launch_bounds__(PM_ELEM_THREADS)
    per_element(const pm_elem_block *__restrict__ blk, const int32_t *__restrict__ begin,
                const int32_t *__restrict__ owner, const T *__restrict__ src,
                const T *__restrict__ cin, const T *__restrict__ u, T *__restrict__ out, T alpha,
                T beta)
{
    __shared__ pm_elem_block b;
    __shared__ int32_t first;
    if (threadIdx.x == 0) {
        const int bi = owner[blockIdx.x];
        first = begin[bi];
        b = blk[bi];
    }
    __syncthreads();
    const int32_t e = ((int32_t)blockIdx.x - first) * PM_ELEM_THREADS + (int32_t)threadIdx.x;
    if (e >= b.rows * b.n)
        return;
    int32_t i = e / b.n, r = e - i * b.n, soff = 0;
#pragma unroll
    for (int k = 0; k < PM_MAX_RANK; k++) {
        if (k < b.rank) {
            int32_t q = r / b.ddim[k];
            soff += (r - q * b.ddim[k]) * b.sstr[k];
            r = q;
        }
    }
    T acc;
    if (UNIQUE) {
        acc = src[b.src_off + soff];
    } else {
        acc = T(0);
        const T *ui = u + b.u_off + (int64_t)i * b.cols;
        for (int j = 0; j < b.cols; j++)
            acc += ui[j] * src[b.src_off + (int64_t)j * b.n + soff];
    }
    const int64_t d = b.dst_off + e;
    out[d] = BETA ? alpha * acc + beta * cin[d] : alpha * acc;
}

template <typename T, bool UNIQUE>
cudaError_t launch(const pm_elem_plan *h, const pm_elem_block *blk, const int32_t *begin,
                   const int32_t *owner, const void *src, const void *cin, const void *u, void *out,
                   double alpha, double beta, cudaStream_t s)
{
    const unsigned grid = (unsigned)h->begin[h->n_blocks];
    if (grid == 0)
        return cudaSuccess;
    if (beta != 0.0)
        per_element<T, UNIQUE, true>
            <<<grid, PM_ELEM_THREADS, 0, s>>>(blk, begin, owner, (const T *)src, (const T *)cin,
                                              (const T *)u, (T *)out, (T)alpha, (T)beta);
    else
        per_element<T, UNIQUE, false>
            <<<grid, PM_ELEM_THREADS, 0, s>>>(blk, begin, owner, (const T *)src, (const T *)cin,
                                              (const T *)u, (T *)out, (T)alpha, (T)beta);
    return cudaGetLastError();
}

} // namespace

extern "C" int pm_run_per_element(int esize, int unique, const pm_elem_plan *hplan,
                                  const pm_elem_block *dblk, const int32_t *dbegin,
                                  const int32_t *downer, const void *src, const void *cin,
                                  const void *u, void *out, double alpha, double beta, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    if (esize == 4)
        return (int)(unique ? launch<float, true>(hplan, dblk, dbegin, downer, src, cin, u, out,
                                                  alpha, beta, s)
                            : launch<float, false>(hplan, dblk, dbegin, downer, src, cin, u, out,
                                                   alpha, beta, s));
    return (int)(unique ? launch<double, true>(hplan, dblk, dbegin, downer, src, cin, u, out, alpha,
                                               beta, s)
                        : launch<double, false>(hplan, dblk, dbegin, downer, src, cin, u, out,
                                                alpha, beta, s));
}
