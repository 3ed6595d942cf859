/* cell_block: the neighbour tabulation of the paper's Ref. [6]: a block per cell, a thread per
 * layer (the cell's atoms), each of the 27 neighbouring cells' atoms staged in shared memory in
 * turn.  Parallelism per block is the cell occupancy, which is what limits it for short
 * ranges.  Forces then come from W as in layer_matrix. */
#include "common.cuh"

__global__ void k_build_cell_block(md_view v)
{
    extern __shared__ float4 sp[];
    int *sid = (int *)(sp + blockDim.x);
    MD_REBUILD_GUARD(v);
    int c = blockIdx.x, t = threadIdx.x;
    int cnt = min(v.kc[c], v.lcap);
    int i = t < cnt ? v.H[(size_t)c * v.lcap + t] : -1;
    float4 ri = i >= 0 ? v.r[i] : make_float4(0.f, 0.f, 0.f, 0.f);
    int cx = c % v.G, cy = (c / v.G) % v.G, cz = c / (v.G * v.G), m = 0;
    for (int dz = -1; dz <= 1; dz++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                int c2 = md_cell_shift(cx, cy, cz, dx, dy, dz, v.G);
                int cnt2 = min(v.kc[c2], v.lcap);
                __syncthreads();
                if (t < cnt2) {
                    int j = v.H[(size_t)c2 * v.lcap + t];
                    sid[t] = j;
                    sp[t] = v.r[j];
                }
                __syncthreads();
                if (i < 0)
                    continue;
                for (int k = 0; k < cnt2; k++) {
                    int j = sid[k];
                    float4 rj = sp[k];
                    float ex = md_image(ri.x - rj.x, v.L, v.invL);
                    float ey = md_image(ri.y - rj.y, v.L, v.invL);
                    float ez = md_image(ri.z - rj.z, v.L, v.invL);
                    if (j != i && ex * ex + ey * ey + ez * ez < v.rn2) {
                        if (m < v.mcap)
                            v.W[(size_t)m * v.n + i] = j;
                        m++;
                    }
                }
            }
    if (i >= 0) {
        if (m > v.mcap)
            atomicOr(&v.ctl->overflow, MD_OVERFLOW_NEIGHBORS);
        v.nn[i] = min(m, v.mcap);
    }
}

extern "C" cudaError_t md_launch_build_cell_block(md_view v, cudaStream_t s)
{
    int threads = CEIL_DIV(v.lcap, 32) * 32;
    if (threads > 1024)
        return cudaErrorInvalidConfiguration;
    k_build_cell_block<<<v.ncell, threads, threads *(sizeof(float4) + sizeof(int)), s>>>(v);
    return cudaGetLastError();
}
