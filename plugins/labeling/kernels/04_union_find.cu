/* Direct union-find on the device in the style of Playne and Hawick (2018, block-based as in
 * Allegretti et al.'s BUF): each block first joins the bonds inside its tile in shared memory
 * and writes the tile's roots as global site indices; a second kernel joins only the bonds
 * that cross tile borders, on the global label array with atomicMin; a third flattens every
 * label to its root.  No host round trip: the run is capturable. */
#include "kernels/common.cuh"

/* Tiles of 256 sites: 32x8 in 2-D, 8x8x4 in 3-D; local index lx + TX*(ly + TY*lz) orders the
 * sites of a tile as their global indices do, so a local root is the tile component's
 * smallest site. */
__device__ __forceinline__ uint32_t find_shared(const uint32_t *s, uint32_t a)
{
    const volatile uint32_t *v = s;
    uint32_t p = v[a];
    while (p != a) {
        a = p;
        p = v[a];
    }
    return a;
}

__device__ __forceinline__ void unite_shared(uint32_t *s, uint32_t a, uint32_t b)
{
    for (;;) {
        a = find_shared(s, a);
        b = find_shared(s, b);
        if (a == b)
            return;
        if (a > b) {
            const uint32_t t = a;
            a = b;
            b = t;
        }
        const uint32_t old = atomicMin(&s[b], a);
        if (old == b)
            return;
        b = old;
    }
}

template <int TX, int TY, int TZ>
static __global__ void __launch_bounds__(TX *TY *TZ)
    uf_local(lb_lattice lat, const uint8_t *bonds, uint32_t *labels)
{
    __shared__ uint32_t s[TX * TY * TZ];
    const int t = threadIdx.x, lx = t % TX, ly = (t / TX) % TY, lz = t / (TX * TY);
    const int x = blockIdx.x * TX + lx, y = blockIdx.y * TY + ly, z = blockIdx.z * TZ + lz;
    const int L = lat.L;
    const bool in = x < L && y < L && z < (lat.dim == 3 ? L : 1);
    const uint32_t g = (uint32_t)x + (uint32_t)L * ((uint32_t)y + (uint32_t)L * (uint32_t)z);
    s[t] = t;
    __syncthreads();
    const uint8_t b = in ? bonds[g] : 0;
    if ((b & 1u) && lx + 1 < TX && x + 1 < L)
        unite_shared(s, t, t + 1);
    if ((b & 2u) && ly + 1 < TY && y + 1 < L)
        unite_shared(s, t, t + TX);
    if (TZ > 1 && (b & 4u) && lz + 1 < TZ && z + 1 < L)
        unite_shared(s, t, t + TX * TY);
    __syncthreads();
    if (!in)
        return;
    const uint32_t r = find_shared(s, t);
    const int rx = blockIdx.x * TX + (int)(r % TX), ry = blockIdx.y * TY + (int)((r / TX) % TY),
              rz = blockIdx.z * TZ + (int)(r / (TX * TY));
    labels[g] = (uint32_t)rx + (uint32_t)L * ((uint32_t)ry + (uint32_t)L * (uint32_t)rz);
}

/* The bonds the tiles left: those leaving a tile's last row in their direction (or wrapping
 * around the lattice). */
template <int TX, int TY, int TZ>
static __global__ void uf_borders(lb_lattice lat, const uint8_t *bonds, uint32_t *labels)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= lat.n)
        return;
    const uint8_t b = bonds[i];
    if (!b)
        return;
    int x, y, z;
    lb_coords(lat.L, i, &x, &y, &z);
    const int L = lat.L;
    if ((b & 1u) && (x % TX == TX - 1 || x == L - 1))
        lb_unite(labels, i, lb_neighbor(L, x, y, z, 0, 1));
    if ((b & 2u) && (y % TY == TY - 1 || y == L - 1))
        lb_unite(labels, i, lb_neighbor(L, x, y, z, 1, 1));
    if (lat.dim == 3 && (b & 4u) && (z % TZ == TZ - 1 || z == L - 1))
        lb_unite(labels, i, lb_neighbor(L, x, y, z, 2, 1));
}

template <int TX, int TY, int TZ>
static cudaError_t union_find(const lb_dev *d, const uint8_t *bonds, cudaStream_t st)
{
    const lb_lattice lat = d->lat;
    const unsigned g = lb_blocks(lat.n);
    const dim3 tiles(CEIL_DIV(lat.L, TX), CEIL_DIV(lat.L, TY), lat.dim == 3 ? CEIL_DIV(lat.L, TZ) : 1);
    cudaError_t e;
    uf_local<TX, TY, TZ><<<tiles, TX * TY * TZ, 0, st>>>(lat, bonds, d->labels);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    uf_borders<TX, TY, TZ><<<g, LB_THREADS, 0, st>>>(lat, bonds, d->labels);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    lb_flatten_kernel<<<g, LB_THREADS, 0, st>>>(lat.n, d->labels);
    return cudaGetLastError();
}

extern "C" cudaError_t lb_label_union_find(const lb_dev *d, const uint8_t *bonds, cudaStream_t st)
{
    if (d->lat.dim == 2)
        return union_find<32, 8, 1>(d, bonds, st);
    return union_find<8, 8, 4>(d, bonds, st);
}
