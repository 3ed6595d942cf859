/* layer_matrix: the paper's method.  A thread per atom walks the 27 neighbouring cells of its
 * own cell through the cell-layer occupancy matrix H and records its neighbours in W[m][i], so
 * the m-th neighbours of consecutive atoms are contiguous (coalesced).  The force kernel here
 * reads W (no Newton's third law: each atom sums its own force and energy); every strategy
 * with a neighbour matrix uses it.  Layers are assigned on the host (glue) as published. */
#include "common.cuh"

template <int LD> __global__ void k_build_layer_matrix(md_view v)
{
    MD_REBUILD_GUARD(v);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < v.n) {
        float4 ri = v.r[i];
        int c = v.cell[i], cx = c % v.G, cy = (c / v.G) % v.G, cz = c / (v.G * v.G), k = 0;
        for (int dz = -1; dz <= 1; dz++)
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    int c2 = md_cell_shift(cx, cy, cz, dx, dy, dz, v.G);
                    int cnt = min(v.kc[c2], v.lcap);
                    const int *h = v.H + (size_t)c2 * v.lcap;
                    for (int l = 0; l < cnt; l++) {
                        int j = md_load<LD>(h, l);
                        float4 rj = md_load<LD>(v.r, j);
                        float ex = md_image(ri.x - rj.x, v.L, v.invL);
                        float ey = md_image(ri.y - rj.y, v.L, v.invL);
                        float ez = md_image(ri.z - rj.z, v.L, v.invL);
                        if (j != i && ex * ex + ey * ey + ez * ez < v.rn2) {
                            if (k < v.mcap)
                                v.W[(size_t)k * v.n + i] = j;
                            k++;
                        }
                    }
                }
        if (k > v.mcap)
            atomicOr(&v.ctl->overflow, MD_OVERFLOW_NEIGHBORS);
        v.nn[i] = min(k, v.mcap);
    }
}

template <int LD> __global__ void k_force_w(md_view v)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= v.n)
        return;
    float4 ri = v.r[i], acc = make_float4(0.f, 0.f, 0.f, 0.f);
    float vir = 0.0f;
    int m = v.nn[i];
    for (int k = 0; k < m; k++) {
        int j = v.W[(size_t)k * v.n + i];
        float4 rj = md_load<LD>(v.r, j);
        float dx = md_image(ri.x - rj.x, v.L, v.invL);
        float dy = md_image(ri.y - rj.y, v.L, v.invL);
        float dz = md_image(ri.z - rj.z, v.L, v.invL);
        float r2 = dx * dx + dy * dy + dz * dz;
        if (r2 < v.rc2)
            md_pair_add(dx, dy, dz, r2, v.shift, acc, vir);
    }
    v.a[i] = acc;
    v.vir[i] = vir;
}

extern "C" cudaError_t md_launch_build_layer_matrix(md_view v, cudaStream_t s)
{
    /* The ldg switch covers the neighbour build's reads too: the paper read H and the
     * coordinates through the texture cache in both kernels. */
    MD_LD_DISPATCH(v, k_build_layer_matrix, CEIL_DIV(v.n, v.threads), v.threads, s);
    return cudaGetLastError();
}

extern "C" cudaError_t md_launch_force_w(md_view v, cudaStream_t s)
{
    MD_LD_DISPATCH(v, k_force_w, CEIL_DIV(v.n, v.threads), v.threads, s);
    return cudaGetLastError();
}
