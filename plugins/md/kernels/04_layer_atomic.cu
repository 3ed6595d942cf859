/* layer_atomic: the layer matrix with the layer assignment on the device: each atom takes the
 * next slot of its cell with an atomic increment of k_c (the paper kept this on the host
 * because the atomics of its GPU were slow).  The slot order within a cell is whatever order
 * the atomics land in; the neighbour build and forces are layer_matrix's. */
#include "common.cuh"

__global__ void k_layers_atomic(md_view v)
{
    MD_REBUILD_GUARD(v);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < v.n)
        v.layer[i] = atomicAdd(&v.kc[v.cell[i]], 1);
}

extern "C" cudaError_t md_launch_layers_atomic(md_view v, cudaStream_t s)
{
    k_layers_atomic<<<CEIL_DIV(v.n, v.threads), v.threads, 0, s>>>(v);
    return cudaGetLastError();
}
