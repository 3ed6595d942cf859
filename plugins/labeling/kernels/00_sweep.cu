/* The parts of a Swendsen-Wang step that do not depend on the labeler: active bonds from the
 * spins, a new value per cluster from the labels, the device step counter, and the integer
 * sums of a configuration.  Each applies the per-site rule of labeling.h, the same code the
 * host reference runs, so host and device lattices stay bit-identical. */
#include "kernels/common.cuh"

static __global__ void bonds_kernel(lb_lattice lat, lb_model m, uint64_t seed, const uint64_t *step,
                                    const uint16_t *spins, uint8_t *bonds)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= lat.n)
        return;
    const uint64_t s = *step;
    bonds[i] = lb_bond_byte(&lat, &m, seed, s, lb_mirror(&m, seed, s), spins, i);
}

static __global__ void flip_kernel(lb_lattice lat, lb_model m, uint64_t seed, const uint64_t *step,
                                   uint16_t *spins, const uint32_t *labels)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= lat.n)
        return;
    const uint64_t s = *step;
    spins[i] = lb_new_spin(&m, seed, s, lb_mirror(&m, seed, s), spins[i], labels[i]);
}

static __global__ void init_kernel(lb_lattice lat, lb_model m, uint64_t seed, uint16_t *spins)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < lat.n)
        spins[i] = lb_initial_spin(&m, seed, i);
}

static __global__ void advance_kernel(uint64_t *step)
{
    ++*step;
}

static __global__ void set_step_kernel(uint64_t *step, uint64_t value)
{
    *step = value;
}

/* Sum over the block of a 64-bit value, added to *out by thread 0 of each warp. */
static __device__ __forceinline__ void add_warp(int64_t v, int64_t *out)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_down_sync(0xFFFFFFFFu, v, o);
    if ((threadIdx.x & 31) == 0 && v)
        atomicAdd((unsigned long long *)out, (unsigned long long)v);
}

static __global__ void sums_kernel(lb_lattice lat, lb_model m, const uint16_t *spins,
                                   const uint32_t *labels, const int64_t *cos_fix,
                                   const int64_t *sin_fix, lb_sums *out)
{
    __shared__ unsigned long long hist[LB_MAX_Q];
    const unsigned q = (unsigned)m.q;
    int64_t roots = 0, bond = 0, mx = 0, my = 0, bad = 0;
    if (m.kind == LB_POTTS) {
        for (unsigned k = threadIdx.x; k < q; k += blockDim.x)
            hist[k] = 0;
        __syncthreads();
    }
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < lat.n;
         i += gridDim.x * blockDim.x) {
        const unsigned a = spins[i];
        if (labels)
            roots += labels[i] == i;
        if (a >= q) {
            bad++;
            continue;
        }
        int x, y, z;
        lb_coords(lat.L, i, &x, &y, &z);
        for (int d = 0; d < lat.dim; d++) {
            const unsigned b = spins[lb_neighbor(lat.L, x, y, z, d, 1)] % q;
            if (m.kind == LB_ISING)
                bond += a == b ? 1 : -1;
            else if (m.kind == LB_POTTS)
                bond += a == b;
            else
                bond += cos_fix[(a + q - b) % q];
        }
        if (m.kind == LB_ISING) {
            mx += a ? 1 : -1;
        } else if (m.kind == LB_POTTS) {
            atomicAdd(&hist[a], 1ull);
        } else {
            mx += cos_fix[a];
            my += sin_fix[a];
        }
    }
    add_warp(roots, &out->roots);
    add_warp(bond, &out->bond);
    add_warp(mx, &out->mx);
    add_warp(my, &out->my);
    add_warp(bad, &out->bad);
    if (m.kind == LB_POTTS) {
        __syncthreads();
        for (unsigned k = threadIdx.x; k < q; k += blockDim.x)
            if (hist[k])
                atomicAdd((unsigned long long *)&out->hist[k], hist[k]);
    }
}

extern "C" cudaError_t lb_dev_bonds(const lb_dev *d, cudaStream_t st)
{
    bonds_kernel<<<lb_blocks(d->lat.n), LB_THREADS, 0, st>>>(d->lat, d->model, d->seed, d->step,
                                                             d->spins, d->bonds);
    return cudaGetLastError();
}

extern "C" cudaError_t lb_dev_flip(const lb_dev *d, cudaStream_t st)
{
    flip_kernel<<<lb_blocks(d->lat.n), LB_THREADS, 0, st>>>(d->lat, d->model, d->seed, d->step,
                                                            d->spins, d->labels);
    return cudaGetLastError();
}

extern "C" cudaError_t lb_dev_init_spins(const lb_dev *d, cudaStream_t st)
{
    init_kernel<<<lb_blocks(d->lat.n), LB_THREADS, 0, st>>>(d->lat, d->model, d->seed, d->spins);
    return cudaGetLastError();
}

extern "C" cudaError_t lb_dev_advance(const lb_dev *d, cudaStream_t st)
{
    advance_kernel<<<1, 1, 0, st>>>(d->step);
    return cudaGetLastError();
}

extern "C" cudaError_t lb_dev_set_step(const lb_dev *d, uint64_t step, cudaStream_t st)
{
    set_step_kernel<<<1, 1, 0, st>>>(d->step, step);
    return cudaGetLastError();
}

extern "C" cudaError_t lb_dev_sums(const lb_dev *d, int with_labels, lb_sums *out, cudaStream_t st)
{
    cudaError_t e;
    lb_sums *dev = (lb_sums *)d->sums;
    unsigned blocks = lb_blocks(d->lat.n);
    if (blocks > 4096)
        blocks = 4096;
    if ((e = cudaMemsetAsync(dev, 0, sizeof *dev, st)) != cudaSuccess)
        return e;
    sums_kernel<<<blocks, LB_THREADS, 0, st>>>(
        d->lat, d->model, d->spins, with_labels ? d->labels : NULL, d->cos_fix, d->sin_fix, dev);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    if ((e = cudaMemcpyAsync(out, dev, sizeof *out, cudaMemcpyDeviceToHost, st)) != cudaSuccess)
        return e;
    return cudaStreamSynchronize(st);
}

extern "C" cudaError_t lb_dev_label(int labeler, const lb_dev *d, const uint8_t *bonds,
                                    cudaStream_t st, int *iterations)
{
    *iterations = 1;
    switch (labeler) {
    case LB_HAWICK:
        return lb_label_hawick(d, bonds, st, iterations);
    case LB_KALENTEV:
        return lb_label_kalentev(d, bonds, st, iterations);
    case LB_KOMURA:
        return lb_label_komura(d, bonds, st);
    case LB_UNION_FIND:
        return lb_label_union_find(d, bonds, st);
    default:
        return cudaErrorInvalidValue;
    }
}
