/* Label equivalence (Hawick, Leist and Playne 2010) as Komura and Okabe use it: labels L and
 * a reference array R; scanning lowers R[L[i]] to the smallest bonded neighbour label with
 * atomicMin, analysis resolves R along its chains from every self-labelled site, labeling sets
 * L[i] = R[L[i]]; iterated until a scan changes nothing (a flag read back each iteration, so
 * the run synchronises). */
#include "kernels/01_hawick.cuh"
#include "kernels/common.cuh"

static __global__ void hawick_init(uint32_t n, uint32_t *L, uint32_t *R)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        lb_hawick_init_site(L, R, i);
}

static __global__ void hawick_scan(lb_lattice lat, const uint8_t *bonds, const uint32_t *L,
                                   uint32_t *R, int *flag)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < lat.n)
        lb_hawick_scan_site(&lat, bonds, L, R, flag, i);
}

static __global__ void hawick_analysis(uint32_t n, const uint32_t *L, uint32_t *R)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        lb_hawick_analysis_site(L, R, i);
}

static __global__ void hawick_labeling(uint32_t n, uint32_t *L, const uint32_t *R)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        lb_hawick_labeling_site(L, R, i);
}

extern "C" cudaError_t lb_label_hawick(const lb_dev *d, const uint8_t *bonds, cudaStream_t st,
                                       int *iterations)
{
    const uint32_t n = d->lat.n;
    const unsigned g = lb_blocks(n);
    cudaError_t e;
    hawick_init<<<g, LB_THREADS, 0, st>>>(n, d->labels, d->scratch);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    /* A scan that changes something lowers some label for good: n + 1 scans bound any input. */
    for (uint32_t it = 1; it <= n + 1; it++) {
        if ((e = cudaMemsetAsync(d->flag, 0, sizeof(int), st)) != cudaSuccess)
            return e;
        hawick_scan<<<g, LB_THREADS, 0, st>>>(d->lat, bonds, d->labels, d->scratch, d->flag);
        if ((e = cudaGetLastError()) != cudaSuccess)
            return e;
        hawick_analysis<<<g, LB_THREADS, 0, st>>>(n, d->labels, d->scratch);
        if ((e = cudaGetLastError()) != cudaSuccess)
            return e;
        hawick_labeling<<<g, LB_THREADS, 0, st>>>(n, d->labels, d->scratch);
        if ((e = cudaGetLastError()) != cudaSuccess)
            return e;
        if ((e = cudaMemcpyAsync(d->host_flag, d->flag, sizeof(int), cudaMemcpyDeviceToHost, st)) !=
                cudaSuccess ||
            (e = cudaStreamSynchronize(st)) != cudaSuccess)
            return e;
        if (!*d->host_flag) {
            *iterations = (int)it;
            return cudaSuccess;
        }
    }
    return cudaErrorUnknown;
}
