/* Kalentev, Rai, Kemnitz and Schneider (2011): label equivalence with one label array and two
 * kernels, no atomics.  Scanning writes the smallest bonded neighbour label into L[L[i]] (a
 * plain racy store: a lost write leaves a difference that the next scan finds again);
 * analysis points every site at the end of its chain.  Iterated until a scan changes
 * nothing (a flag read back each iteration, so the run synchronises). */
#include "kernels/02_kalentev.cuh"
#include "kernels/common.cuh"

static __global__ void kalentev_init(uint32_t n, uint32_t *L)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        lb_kalentev_init_site(L, i);
}

static __global__ void kalentev_scan(lb_lattice lat, const uint8_t *bonds, uint32_t *L, int *flag)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < lat.n)
        lb_kalentev_scan_site(&lat, bonds, L, flag, i);
}

static __global__ void kalentev_analysis(uint32_t n, uint32_t *L)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        lb_kalentev_analysis_site(L, i);
}

extern "C" cudaError_t lb_label_kalentev(const lb_dev *d, const uint8_t *bonds, cudaStream_t st,
                                         int *iterations)
{
    const uint32_t n = d->lat.n;
    const unsigned g = lb_blocks(n);
    cudaError_t e;
    kalentev_init<<<g, LB_THREADS, 0, st>>>(n, d->labels);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    for (uint32_t it = 1; it <= n + 1; it++) {
        if ((e = cudaMemsetAsync(d->flag, 0, sizeof(int), st)) != cudaSuccess)
            return e;
        kalentev_scan<<<g, LB_THREADS, 0, st>>>(d->lat, bonds, d->labels, d->flag);
        if ((e = cudaGetLastError()) != cudaSuccess)
            return e;
        kalentev_analysis<<<g, LB_THREADS, 0, st>>>(n, d->labels);
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
