/* allpairs: O(N^2) forces, no neighbour list; tiles of blockDim atoms staged in shared memory
 * as in the blocked matrix-multiplication technique the paper cites.  Small N only (the glue
 * skips it above MD_ALLPAIRS_MAX_N): the device reference. */
#include "common.cuh"

__global__ void k_force_allpairs(md_view v)
{
    extern __shared__ float4 tile[];
    int i = blockIdx.x * blockDim.x + threadIdx.x, t = threadIdx.x;
    float4 ri = i < v.n ? v.r[i] : make_float4(0.f, 0.f, 0.f, 0.f);
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
    float vir = 0.0f;
    for (int base = 0; base < v.n; base += blockDim.x) {
        if (base + t < v.n)
            tile[t] = v.r[base + t];
        __syncthreads();
        int cnt = min((int)blockDim.x, v.n - base);
        for (int k = 0; k < cnt; k++) {
            float4 rj = tile[k];
            float dx = md_image(ri.x - rj.x, v.L, v.invL);
            float dy = md_image(ri.y - rj.y, v.L, v.invL);
            float dz = md_image(ri.z - rj.z, v.L, v.invL);
            float r2 = dx * dx + dy * dy + dz * dz;
            if (r2 < v.rc2 && base + k != i)
                md_pair_add(dx, dy, dz, r2, v.shift, acc, vir);
        }
        __syncthreads();
    }
    if (i < v.n) {
        v.a[i] = acc;
        v.vir[i] = vir;
    }
}

extern "C" cudaError_t md_launch_force_allpairs(md_view v, cudaStream_t s)
{
    k_force_allpairs<<<CEIL_DIV(v.n, v.threads), v.threads, v.threads * sizeof(float4), s>>>(v);
    return cudaGetLastError();
}
