/* Komura (2015): label equivalence without iteration.  Each site starts labelled with the
 * smallest of itself and its bonded neighbours; analysis follows every chain to its
 * self-labelled end; one reduction pass joins, for every bond whose ends still differ, the two
 * roots with atomicMin; a second analysis flattens.  Four kernels, no host round trip, so the
 * run is capturable. */
#include "kernels/03_komura.cuh"
#include "kernels/common.cuh"

static __global__ void komura_init(lb_lattice lat, const uint8_t *bonds, uint32_t *L)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < lat.n)
        lb_komura_init_site(&lat, bonds, L, i);
}

static __global__ void komura_reduce(lb_lattice lat, const uint8_t *bonds, uint32_t *L)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < lat.n)
        lb_komura_reduce_site(&lat, bonds, L, i);
}

extern "C" cudaError_t lb_label_komura(const lb_dev *d, const uint8_t *bonds, cudaStream_t st)
{
    const unsigned g = lb_blocks(d->lat.n);
    cudaError_t e;
    komura_init<<<g, LB_THREADS, 0, st>>>(d->lat, bonds, d->labels);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    lb_flatten_kernel<<<g, LB_THREADS, 0, st>>>(d->lat.n, d->labels);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    komura_reduce<<<g, LB_THREADS, 0, st>>>(d->lat, bonds, d->labels);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    lb_flatten_kernel<<<g, LB_THREADS, 0, st>>>(d->lat.n, d->labels);
    return cudaGetLastError();
}
