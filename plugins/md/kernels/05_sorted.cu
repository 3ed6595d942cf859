/* sorted: this plugin's design for the H200.  At every rebuild the atoms are counting-sorted by
 * cell on the device (atomic slots, a scan, a scatter: 00_step.cu), so a cell's atoms are a
 * contiguous range and no H matrix is needed; a thread per atom (in sorted order) scans the
 * ranges of its 27 neighbouring cells and writes W[m][i].  Neighbours of consecutive atoms are
 * then close in memory too, so the force kernel's gathers hit L1/L2.  Every kernel of the step
 * decides on the device whether it has work, so a whole run is capturable into a CUDA graph. */
#include "common.cuh"

template <int LD> __global__ void k_build_sorted(md_view v)
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
                    int lo = v.cell_start[c2], hi = lo + v.kc[c2];
                    for (int j = lo; j < hi; j++) {
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

extern "C" cudaError_t md_launch_build_sorted(md_view v, cudaStream_t s)
{
    MD_LD_DISPATCH(v, k_build_sorted, CEIL_DIV(v.n, v.threads), v.threads, s);
    return cudaGetLastError();
}
