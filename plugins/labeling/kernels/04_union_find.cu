/* Direct union-find on the device in the style of Playne and Hawick (2018, block-based as in
 * Allegretti et al.'s BUF): each block first joins the bonds inside its tile in shared memory
 * and writes the tile's roots as global site indices; a second kernel, over the tile faces
 * only, joins the bonds that cross tile borders, on the global label array with atomicMin; a
 * third flattens every label to its root.  The unions' finds relink the nodes they pass to
 * their grandparents (lb_find_jump); the flatten's finds only read.  No host round trip: the run is capturable.  Per-site bodies in
 * 04_union_find.cuh. */
#include "kernels/04_union_find.cuh"
#include "kernels/common.cuh"

/* Tiles of 256 sites: 32x8 in 2-D, 8x8x4 in 3-D. */
template <int TX, int TY, int TZ>
static __global__ void __launch_bounds__(TX *TY *TZ)
    uf_local(lb_lattice lat, const uint8_t *bonds, uint32_t *labels)
{
    __shared__ uint32_t s[TX * TY * TZ];
    const lb_tile tl = {TX, TY, TZ, (int)blockIdx.x, (int)blockIdx.y, (int)blockIdx.z};
    const uint32_t t = threadIdx.x;
    s[t] = t;
    __syncthreads();
    lb_uf_local_site(&lat, &tl, bonds, s, t);
    __syncthreads();
    lb_uf_write_site(&lat, &tl, s, labels, t);
}

/* Phase 3 over the tile faces only: LANES threads per tile, LB_THREADS / LANES tiles per
 * block. */
template <int TX, int TY, int TZ, int LANES>
static __global__ void __launch_bounds__(LB_THREADS)
    uf_faces(lb_lattice lat, int nbx, int nby, uint32_t tiles, const uint8_t *bonds,
             uint32_t *labels)
{
    const uint32_t tile = blockIdx.x * (LB_THREADS / LANES) + threadIdx.x / LANES;
    if (tile >= tiles)
        return;
    const int bx = (int)(tile % (uint32_t)nbx), by = (int)(tile / (uint32_t)nbx % (uint32_t)nby),
              bz = (int)(tile / ((uint32_t)nbx * (uint32_t)nby));
    lb_uf_face_site(&lat, TX, TY, TZ, bx, by, bz, (int)(threadIdx.x % LANES), bonds, labels);
}

template <int TX, int TY, int TZ>
static cudaError_t union_find(const lb_dev *d, const uint8_t *bonds, cudaStream_t st)
{
    constexpr int LANES = TZ == 1 ? TX : TX * TY; /* lb_uf_face_lanes of these tiles */
    static_assert(LB_THREADS % LANES == 0, "whole tiles per block");
    const lb_lattice lat = d->lat;
    const unsigned g = lb_blocks(lat.n);
    const dim3 tiles(CEIL_DIV(lat.L, TX), CEIL_DIV(lat.L, TY),
                     lat.dim == 3 ? CEIL_DIV(lat.L, TZ) : 1);
    const uint32_t n_tiles = tiles.x * tiles.y * tiles.z;
    cudaError_t e;
    uf_local<TX, TY, TZ><<<tiles, TX * TY * TZ, 0, st>>>(lat, bonds, d->labels);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    uf_faces<TX, TY, TZ, LANES>
        <<<CEIL_DIV(n_tiles, (uint32_t)(LB_THREADS / LANES)), LB_THREADS, 0, st>>>(
            lat, (int)tiles.x, (int)tiles.y, n_tiles, bonds, d->labels);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    /* The flatten must not relink: a relink stores an ancestor that need not be the root into
     * a site whose own thread may already have written its root there (H200, v2: 3-4000 sites
     * left off their root per lattice).  Read-only finds leave every label a root. */
    lb_flatten_kernel<<<g, LB_THREADS, 0, st>>>(lat.n, d->labels);
    return cudaGetLastError();
}

extern "C" cudaError_t lb_label_union_find(const lb_dev *d, const uint8_t *bonds, cudaStream_t st)
{
    if (d->lat.dim == 2)
        return union_find<32, 8, 1>(d, bonds, st);
    return union_find<8, 8, 4>(d, bonds, st);
}
