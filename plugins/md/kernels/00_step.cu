/* md kernels every strategy shares: the two leapfrog halves, cell assignment, the counting
 * sort that reorders atoms by cell, H from cells and layers, the reductions of the second half
 * kick (per-block partials reduced in a fixed order by one block, so sums are reproducible),
 * and the step's bookkeeping on the device (history, rebuild decision, statistics). */
#include "common.cuh"

__global__ void k_first_half(md_view v)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= v.n)
        return;
    float4 a = v.a[i], vel = v.v[i], r = v.r[i];
    float h = 0.5f * v.dt;
    vel.x += h * a.x;
    vel.y += h * a.y;
    vel.z += h * a.z;
    r.x += v.dt * vel.x;
    r.y += v.dt * vel.y;
    r.z += v.dt * vel.z;
    /* Wrap into [-L/2, L/2): an atom moves far less than L in one step. */
    r.x -= v.L * floorf((r.x + 0.5f * v.L) * v.invL);
    r.y -= v.L * floorf((r.y + 0.5f * v.L) * v.invL);
    r.z -= v.L * floorf((r.z + 0.5f * v.L) * v.invL);
    /* Rounding can leave exactly L/2: fold it back. */
    if (r.x >= 0.5f * v.L)
        r.x -= v.L;
    if (r.y >= 0.5f * v.L)
        r.y -= v.L;
    if (r.z >= 0.5f * v.L)
        r.z -= v.L;
    v.v[i] = vel;
    v.r[i] = r;
}

/* Clears the cell counts and assigns each atom its cell; the rebuild's first kernel. */
__global__ void k_cells(md_view v)
{
    MD_REBUILD_GUARD(v);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0) {
        v.ctl->nl = 0;
        v.ctl->nbr_total = 0;
    }
    if (i < v.ncell)
        v.kc[i] = 0;
    if (i < v.n)
        v.cell[i] = md_cell_of(v.r[i], v);
}

/* k_cells and k_layers_atomic in one launch, for the strategies with device layers: kc is 0
 * on entry (cleared at load and by the previous build's neighbour count). */
__global__ void k_cells_slots(md_view v)
{
    MD_REBUILD_GUARD(v);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0) {
        v.ctl->nl = 0;
        v.ctl->nbr_total = 0;
    }
    if (i < v.n) {
        int c = md_cell_of(v.r[i], v);
        v.cell[i] = c;
        v.layer[i] = atomicAdd(&v.kc[c], 1);
    }
}

/* Exclusive scan of the cell counts into cell_start: one block, each thread a contiguous
 * chunk, then a scan of the chunk sums in shared memory. */
__global__ void k_scan(md_view v)
{
    __shared__ int sums[1024];
    if (!v.ctl->rebuild || !v.ctl->reorder_now)
        return;
    int t = threadIdx.x, chunk = CEIL_DIV(v.ncell, (int)blockDim.x);
    int lo = t * chunk, hi = min(lo + chunk, v.ncell), s = 0;
    for (int c = lo; c < hi; c++)
        s += v.kc[c];
    sums[t] = s;
    __syncthreads();
    for (int off = 1; off < (int)blockDim.x; off <<= 1) {
        int x = t >= off ? sums[t - off] : 0;
        __syncthreads();
        sums[t] += x;
        __syncthreads();
    }
    s = t > 0 ? sums[t - 1] : 0;
    for (int c = lo; c < hi; c++) {
        v.cell_start[c] = s;
        s += v.kc[c];
    }
}

__global__ void k_scatter(md_view v)
{
    if (!v.ctl->rebuild || !v.ctl->reorder_now)
        return;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= v.n)
        return;
    int dst = v.cell_start[v.cell[i]] + v.layer[i];
    v.r2[dst] = v.r[i];
    v.v2[dst] = v.v[i];
}

/* Back into r and v in cell order; cells recomputed from the same coordinates (the same
 * answer), layers become the slot within the cell. */
__global__ void k_copyback(md_view v)
{
    if (!v.ctl->rebuild || !v.ctl->reorder_now)
        return;
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= v.n)
        return;
    float4 r = v.r2[k];
    int c = md_cell_of(r, v);
    v.r[k] = r;
    v.v[k] = v.v2[k];
    v.cell[k] = c;
    v.layer[k] = k - v.cell_start[c];
}

/* H[c * lcap + l] = i (when H is used) and the layer count N_l = max k_c. */
__global__ void k_hfill(md_view v)
{
    MD_REBUILD_GUARD(v);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int occ = i < v.ncell ? v.kc[i] : 0;
    occ = __reduce_max_sync(0xffffffffu, occ);
    if ((threadIdx.x & 31) == 0 && occ > 0)
        atomicMax(&v.ctl->nl, occ);
    if (v.H && i < v.n) {
        int l = v.layer[i];
        if (l < v.lcap)
            v.H[(size_t)v.cell[i] * v.lcap + l] = i;
        else
            atomicOr(&v.ctl->overflow, MD_OVERFLOW_LAYERS);
    }
}

/* The rebuild's statistics, by one thread once every block's share is in. */
__device__ void md_finish_rebuild(md_view v)
{
    md_ctl *c = v.ctl;
    if (!c->forced) {
        c->rebuilds++;
        c->sum_nu += c->since_rebuild;
    }
    c->builds++;
    /* Other blocks of this launch added to these by atomics: read past this SM's L1, which
     * may hold the control block's line from the guard. */
    c->sum_np += (double)*(volatile unsigned long long *)&c->nbr_total / v.n;
    c->sum_nl += *(volatile int *)&c->nl;
    c->since_rebuild = 0;
    if (c->reorder_now)
        c->since_reorder = 0;
    c->disp = 0.0f;
    c->rebuild = 0;
    c->reorder_now = 0;
    c->forced = 0;
}

/* The neighbour total of the build (for N_p/N_a, one atomic per block) and N_l (most atoms in
 * a cell); clears kc for the next build's atomic slots; the last block to finish records the
 * build (md_finish_rebuild).  Every block passes the guard before the last one clears the
 * flag, so all blocks take the same branch. */
__global__ void k_count_finish(md_view v)
{
    __shared__ unsigned long long ws[32];
    __shared__ int wmax[32];
    __shared__ bool last;
    MD_REBUILD_GUARD(v);
    int i = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    unsigned long long m = i < v.n ? (unsigned long long)v.nn[i] : 0ull;
    int occ = 0;
    for (int c = i; c < v.ncell; c += gridDim.x * blockDim.x) {
        occ = max(occ, v.kc[c]);
        v.kc[c] = 0;
    }
    for (int off = 16; off > 0; off >>= 1) {
        m += __shfl_down_sync(0xffffffffu, m, off);
        occ = max(occ, __shfl_down_sync(0xffffffffu, occ, off));
    }
    if (lane == 0) {
        ws[w] = m;
        wmax[w] = occ;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long t = 0;
        int o = 0;
        for (int k = 0; k < (int)(blockDim.x >> 5); k++) {
            t += ws[k];
            o = max(o, wmax[k]);
        }
        if (t)
            atomicAdd(&v.ctl->nbr_total, t);
        if (o)
            atomicMax(&v.ctl->nl, o);
        __threadfence();
        last = atomicAdd(&v.ctl->done_count, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (last && threadIdx.x == 0) {
        __threadfence();
        v.ctl->done_count = 0;
        md_finish_rebuild(v);
    }
}

__global__ void k_finish_rebuild(md_view v)
{
    MD_REBUILD_GUARD(v);
    md_finish_rebuild(v);
}

/* The step's bookkeeping from the reduced sums, by one thread: history, rebuild decision. */
__device__ void md_end_step(md_view v, double v2, double u, double w, double vmax2)
{
    md_ctl *c = v.ctl;
    /* Each pair's energy and virial were summed from both of its atoms. */
    c->ke = 0.5 * v2 / v.n;
    c->pe = 0.5 * u / v.n;
    c->vir = 0.5 * w / v.n;
    c->vmax2 = vmax2;
    double *e = v.hist + 3 * (c->step % v.hist_len);
    e[0] = c->ke;
    e[1] = c->pe;
    e[2] = c->vir;
    c->step++;
    c->since_rebuild++;
    c->since_reorder++;
    c->disp += sqrtf((float)c->vmax2) * v.dt;
    if (c->disp > v.half_delta) {
        c->rebuild = 1;
        c->reorder_now = v.sort_always || (v.reorder > 0 && c->since_reorder >= v.reorder) ? 1 : 0;
    }
}

/* Tree reduction of nt entries of the four sums in shared memory (sum, sum, sum, max). */
__device__ void md_reduce4(double *sh, int t, int nt)
{
    for (int s = nt / 2; s > 0; s >>= 1) {
        if (t < s) {
            sh[t] += sh[t + s];
            sh[nt + t] += sh[nt + t + s];
            sh[2 * nt + t] += sh[2 * nt + t + s];
            sh[3 * nt + t] = fmax(sh[3 * nt + t], sh[3 * nt + t + s]);
        }
        __syncthreads();
    }
}

/* Second half kick and per-block partial sums of v^2, u, virial and the max of v^2; the last
 * block to finish reduces the partials in a fixed order (reproducible sums) and ends the step
 * (md_end_step): one launch instead of two. */
__global__ void k_second_half(md_view v)
{
    extern __shared__ double sh[];
    __shared__ bool last;
    int i = blockIdx.x * blockDim.x + threadIdx.x, t = threadIdx.x, nt = blockDim.x;
    double v2 = 0.0, u = 0.0, w = 0.0;
    if (i < v.n) {
        float4 a = v.a[i], vel = v.v[i];
        float h = 0.5f * v.dt;
        vel.x += h * a.x;
        vel.y += h * a.y;
        vel.z += h * a.z;
        v.v[i] = vel;
        v2 = (double)(vel.x * vel.x + vel.y * vel.y + vel.z * vel.z);
        u = a.w;
        w = v.vir[i];
    }
    sh[t] = v2;
    sh[nt + t] = u;
    sh[2 * nt + t] = w;
    sh[3 * nt + t] = v2;
    __syncthreads();
    md_reduce4(sh, t, nt);
    if (t == 0) {
        for (int k = 0; k < 4; k++)
            v.part[4 * blockIdx.x + k] = sh[k * nt];
        __threadfence();
        last = atomicAdd(&v.ctl->done_half, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last)
        return;
    __threadfence();
    {
        const volatile double *p = v.part;
        double a0 = 0.0, a1 = 0.0, a2 = 0.0, m = 0.0;
        for (int b = t; b < (int)gridDim.x; b += nt) {
            a0 += p[4 * b];
            a1 += p[4 * b + 1];
            a2 += p[4 * b + 2];
            m = fmax(m, p[4 * b + 3]);
        }
        sh[t] = a0;
        sh[nt + t] = a1;
        sh[2 * nt + t] = a2;
        sh[3 * nt + t] = m;
    }
    __syncthreads();
    md_reduce4(sh, t, nt);
    if (t == 0) {
        v.ctl->done_half = 0;
        md_end_step(v, sh[0], sh[nt], sh[2 * nt], sh[3 * nt]);
    }
}

__global__ void k_rescale(md_view v)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= v.n)
        return;
    float f = (float)sqrt(1.5 * v.temp / v.ctl->ke);
    float4 vel = v.v[i];
    vel.x *= f;
    vel.y *= f;
    vel.z *= f;
    v.v[i] = vel;
}

__global__ void k_force_rebuild(md_view v, int reorder)
{
    v.ctl->rebuild = 1;
    v.ctl->forced = 1;
    v.ctl->reorder_now = reorder || v.sort_always;
}

static int atom_blocks(const md_view &v)
{
    return CEIL_DIV(v.n, v.threads);
}

extern "C" cudaError_t md_launch_first_half(md_view v, cudaStream_t s)
{
    k_first_half<<<atom_blocks(v), v.threads, 0, s>>>(v);
    return cudaGetLastError();
}

extern "C" cudaError_t md_launch_cells(md_view v, cudaStream_t s)
{
    k_cells<<<CEIL_DIV(max(v.n, v.ncell), v.threads), v.threads, 0, s>>>(v);
    return cudaGetLastError();
}

extern "C" cudaError_t md_launch_cells_slots(md_view v, cudaStream_t s)
{
    k_cells_slots<<<atom_blocks(v), v.threads, 0, s>>>(v);
    return cudaGetLastError();
}

extern "C" cudaError_t md_launch_reorder(md_view v, cudaStream_t s)
{
    cudaError_t e;
    k_scan<<<1, 1024, 0, s>>>(v);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    k_scatter<<<atom_blocks(v), v.threads, 0, s>>>(v);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    k_copyback<<<atom_blocks(v), v.threads, 0, s>>>(v);
    return cudaGetLastError();
}

extern "C" cudaError_t md_launch_hfill(md_view v, cudaStream_t s)
{
    k_hfill<<<CEIL_DIV(max(v.n, v.ncell), v.threads), v.threads, 0, s>>>(v);
    return cudaGetLastError();
}

extern "C" cudaError_t md_launch_finish_rebuild(md_view v, cudaStream_t s)
{
    if (v.nn)
        k_count_finish<<<atom_blocks(v), v.threads, 0, s>>>(v);
    else
        k_finish_rebuild<<<1, 1, 0, s>>>(v);
    return cudaGetLastError();
}

extern "C" cudaError_t md_launch_second_half(md_view v, cudaStream_t s)
{
    k_second_half<<<atom_blocks(v), v.threads, 4 * v.threads * sizeof(double), s>>>(v);
    return cudaGetLastError();
}

extern "C" cudaError_t md_launch_rescale(md_view v, cudaStream_t s)
{
    k_rescale<<<atom_blocks(v), v.threads, 0, s>>>(v);
    return cudaGetLastError();
}

extern "C" cudaError_t md_launch_force_rebuild(md_view v, int reorder, cudaStream_t s)
{
    k_force_rebuild<<<1, 1, 0, s>>>(v, reorder);
    return cudaGetLastError();
}
