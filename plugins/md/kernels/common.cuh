/* Helpers shared by the md kernels (kernels/NN_<variant>.cu): CEIL_DIV, the rebuild guard,
 * the minimum image, the pair force, gathered loads (plain, read-only path or past L1),
 * and the cell of a position.  Single precision throughout, as in the paper. */
#ifndef KBENCH_MD_COMMON_CUH
#define KBENCH_MD_COMMON_CUH

/* MD_HOST_EMULATION: md_emu (tests/emu) compiles the kernels as C++ against tests/emu/emu_cuda.h. */
#ifndef MD_HOST_EMULATION
#include <cuda_runtime.h>
#endif

#include "kernels.h"

#define CEIL_DIV(a, b) (((a) + (b)-1) / (b))

/* A rebuild kernel's first line: nothing to do at a step that does not rebuild. */
#define MD_REBUILD_GUARD(v)                                                                        \
    if (!(v).ctl->rebuild)                                                                         \
    return

/* Periodic minimum image of one coordinate difference (positions lie in [-L/2, L/2)). */
__device__ __forceinline__ float md_image(float d, float L, float invL)
{
    return d - L * rintf(d * invL);
}

/* Element j of a gathered array, loaded as MD_LD_* says (kernels.h). */
template <int LD, class T> __device__ __forceinline__ T md_load(const T *p, int j)
{
    if (LD == MD_LD_NC)
        return __ldg(p + j);
    if (LD == MD_LD_CG)
        return __ldcg(p + j);
    return p[j];
}

/* Launches kernel template K<mode> for the view's load mode (the host emulation's launch
 * is a call: tests/emu/rewrite.cmake rewrites <<< >>> in the .cu files, not in this header). */
#ifdef MD_HOST_EMULATION
#define MD_LD_LAUNCH(K, grid, block, s, v) emu_launch(K, grid, block, 0, s)(v)
#else
#define MD_LD_LAUNCH(K, grid, block, s, v) K<<<(grid), (block), 0, (s)>>>(v)
#endif
#define MD_LD_DISPATCH(v, K, grid, block, s)                                                       \
    do {                                                                                           \
        if ((v).ld == MD_LD_NC)                                                                    \
            MD_LD_LAUNCH(K<MD_LD_NC>, grid, block, s, v);                                          \
        else if ((v).ld == MD_LD_CG)                                                               \
            MD_LD_LAUNCH(K<MD_LD_CG>, grid, block, s, v);                                          \
        else                                                                                       \
            MD_LD_LAUNCH(K<MD_LD_PLAIN>, grid, block, s, v);                                       \
    } while (0)

/* Adds the pair (dx, dy, dz), r2 < rc2, to the force, energy and virial sums. */
__device__ __forceinline__ void md_pair_add(float dx, float dy, float dz, float r2, float shift,
                                            float4 &acc, float &vir)
{
    float ri2 = 1.0f / r2, ri6 = ri2 * ri2 * ri2;
    float fr = 48.0f * ri6 * (ri6 - 0.5f) * ri2;
    acc.x += fr * dx;
    acc.y += fr * dy;
    acc.z += fr * dz;
    acc.w += 4.0f * ri6 * (ri6 - 1.0f) + shift;
    vir += fr * r2;
}

__device__ __forceinline__ int md_cell1(float x, const md_view &v)
{
    int c = (int)((x + 0.5f * v.L) * v.cellw_inv);
    return c < 0 ? 0 : (c >= v.G ? v.G - 1 : c);
}

__device__ __forceinline__ int md_cell_of(float4 p, const md_view &v)
{
    return (md_cell1(p.z, v) * v.G + md_cell1(p.y, v)) * v.G + md_cell1(p.x, v);
}

/* The cell at offset (dx, dy, dz) of cell (cx, cy, cz), periodic. */
__device__ __forceinline__ int md_cell_shift(int cx, int cy, int cz, int dx, int dy, int dz, int G)
{
    cx += dx;
    cy += dy;
    cz += dz;
    cx = cx < 0 ? cx + G : (cx >= G ? cx - G : cx);
    cy = cy < 0 ? cy + G : (cy >= G ? cy - G : cy);
    cz = cz < 0 ? cz + G : (cz >= G ? cz - G : cz);
    return (cz * G + cy) * G + cx;
}

#endif /* KBENCH_MD_COMMON_CUH */
