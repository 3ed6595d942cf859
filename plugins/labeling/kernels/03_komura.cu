/* Komura (2015): label equivalence without iteration.  Each site starts labelled with the
 * smallest of itself and its bonded neighbours; analysis follows every chain to its
 * self-labelled end; one reduction pass joins, for every bond whose ends still differ, the two
 * roots with atomicMin; a second analysis flattens.  Four kernels, no host round trip, so the
 * run is capturable. */
#include "kernels/common.cuh"

static __global__ void komura_init(lb_lattice lat, const uint8_t *bonds, uint32_t *L)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= lat.n)
        return;
    int x, y, z;
    lb_coords(lat.L, i, &x, &y, &z);
    uint32_t l = i;
    const uint8_t b = bonds[i];
    for (int d = 0; d < lat.dim; d++) {
        if (b & (1u << d))
            l = min(l, lb_neighbor(lat.L, x, y, z, d, 1));
        const uint32_t dn = lb_neighbor(lat.L, x, y, z, d, 0);
        if (bonds[dn] & (1u << d))
            l = min(l, dn);
    }
    L[i] = l;
}

static __global__ void komura_reduce(lb_lattice lat, const uint8_t *bonds, uint32_t *L)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= lat.n)
        return;
    const uint8_t b = bonds[i];
    if (!b)
        return;
    int x, y, z;
    lb_coords(lat.L, i, &x, &y, &z);
    for (int d = 0; d < lat.dim; d++)
        if (b & (1u << d)) {
            const uint32_t j = lb_neighbor(lat.L, x, y, z, d, 1);
            if (lb_find(L, i) != lb_find(L, j))
                lb_unite(L, i, j);
        }
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
