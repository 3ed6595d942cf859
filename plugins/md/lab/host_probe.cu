/* The host layer assignment of cell_block and layer_matrix, taken apart on the GPU machine:
 * copy bandwidth of 4 B per atom pinned and pageable, the host loop l_i = k_{c_i}++ alone
 * (caches flushed first, as after a DMA), and the whole round trip as v1 did it (one copy each
 * way, a stream sync) and as v2/v3 do it (8 pieces with an event each, copies overlapping the
 * loop).  Cell indices are those of a liquid sorted by cell (uniform random positions: the
 * occupancy varies as after a reordering) or of the SP lattice in its own order, so the loop
 * sees the plugin's access patterns; the loop is timed as v3.1 has it (plain) and as v2/v3 had
 * it (the current cell's count in a register, a branch when the cell changes).  Prints one line per measurement, the
 * median and the best of 15.  Not part of the build:
 *   nvcc -O2 -o host_probe plugins/md/lab/host_probe.cu && ./host_probe 128 102
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));           \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

#define REPS 15
#define CHUNKS 8

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void show(const char *what, double *t, int n_atoms, double bytes)
{
    qsort(t, REPS, sizeof *t, cmp_d);
    printf("%-44s median %8.3f ms  best %8.3f ms  %6.2f ns/atom", what, 1e3 * t[REPS / 2],
           1e3 * t[0], 1e9 * t[REPS / 2] / n_atoms);
    if (bytes > 0)
        printf("  %6.2f GB/s", 1e-9 * bytes / t[REPS / 2]);
    printf("\n");
}

static char *junk;
static const size_t junk_bytes = (size_t)256 << 20;

static void flush_caches(int k)
{
    memset(junk, k, junk_bytes);
}

/* The plugin's loop (v3.1): l_i = k_{c_i}++. */
static void layer_loop(const int *cell, int *layer, int *kc, int lo, int hi)
{
    for (int i = lo; i < hi; i++)
        layer[i] = kc[cell[i]]++;
}

/* v2/v3's loop: the running count of the current cell kept in a register. */
static void layer_loop_branch(const int *cell, int *layer, int *kc, int lo, int hi)
{
    int prev = -1, run = 0;
    for (int i = lo; i < hi; i++) {
        int c = cell[i];
        if (c != prev) {
            if (prev >= 0)
                kc[prev] = run;
            prev = c;
            run = kc[c];
        }
        layer[i] = run++;
    }
    if (prev >= 0)
        kc[prev] = run;
}

static int probe(int ne, int sorted)
{
    const double rho = 0.8, rn = 1.122462048309373 + 0.6; /* SP: rc + delta */
    double L = ne / 0.9283177667225558, a = L / ne;          /* rho^(1/3) = 0.92832 */
    int G = (int)(L / rn), ncell = G * G * G, n = ne * ne * ne;
    double w = L / G, t[REPS];
    int *h_cell, *h_layer, *h_kc, *p_cell, *p_layer, *d_cell, *d_layer, *d_kc;
    cudaStream_t s;
    cudaEvent_t ev[CHUNKS];
    (void)rho;
    printf("\nN_e %d: %d atoms, %d cells (%s)\n", ne, n, ncell,
           sorted ? "liquid, sorted by cell" : "lattice order");
    CHECK(cudaStreamCreate(&s));
    for (int k = 0; k < CHUNKS; k++)
        CHECK(cudaEventCreate(&ev[k]));
    CHECK(cudaMallocHost((void **)&h_cell, (size_t)n * 4));
    CHECK(cudaMallocHost((void **)&h_layer, (size_t)n * 4));
    CHECK(cudaMallocHost((void **)&h_kc, (size_t)ncell * 4));
    p_cell = (int *)malloc((size_t)n * 4);
    p_layer = (int *)malloc((size_t)n * 4);
    CHECK(cudaMalloc((void **)&d_cell, (size_t)n * 4));
    CHECK(cudaMalloc((void **)&d_layer, (size_t)n * 4));
    CHECK(cudaMalloc((void **)&d_kc, (size_t)ncell * 4));
    if (!p_cell || !p_layer)
        return 1;
    srand(1);
    for (int i = 0; i < n && sorted; i++) /* uniform random positions */
        p_cell[i] = (int)((double)rand() / ((double)RAND_MAX + 1.0) * ncell);
    for (int i = 0; i < n && !sorted; i++) {
        int x = i % ne, y = (i / ne) % ne, z = i / (ne * ne);
        int cx = (int)((x + 0.5) * a / w), cy = (int)((y + 0.5) * a / w),
            cz = (int)((z + 0.5) * a / w);
        cx = cx < G ? cx : G - 1;
        cy = cy < G ? cy : G - 1;
        cz = cz < G ? cz : G - 1;
        p_cell[i] = (cz * G + cy) * G + cx;
    }
    if (sorted) { /* counting sort of the cell indices */
        int *cnt = (int *)calloc((size_t)ncell + 1, 4), *o = (int *)malloc((size_t)n * 4);
        if (!cnt || !o)
            return 1;
        for (int i = 0; i < n; i++)
            cnt[p_cell[i] + 1]++;
        for (int c = 0; c < ncell; c++)
            cnt[c + 1] += cnt[c];
        for (int i = 0; i < n; i++)
            o[cnt[p_cell[i]]++] = p_cell[i];
        memcpy(p_cell, o, (size_t)n * 4);
        free(o);
        free(cnt);
    }
    CHECK(cudaMemcpy(d_cell, p_cell, (size_t)n * 4, cudaMemcpyHostToDevice));

    /* copies alone */
    for (int r = 0; r < REPS; r++) {
        double t0 = now_s();
        CHECK(cudaMemcpyAsync(h_cell, d_cell, (size_t)n * 4, cudaMemcpyDeviceToHost, s));
        CHECK(cudaStreamSynchronize(s));
        t[r] = now_s() - t0;
    }
    show("c_i D2H, pinned", t, n, 4.0 * n);
    for (int r = 0; r < REPS; r++) {
        double t0 = now_s();
        CHECK(cudaMemcpyAsync(d_layer, h_layer, (size_t)n * 4, cudaMemcpyHostToDevice, s));
        CHECK(cudaStreamSynchronize(s));
        t[r] = now_s() - t0;
    }
    show("l_i H2D, pinned", t, n, 4.0 * n);
    for (int r = 0; r < REPS; r++) {
        double t0 = now_s();
        CHECK(cudaMemcpy(p_layer, d_cell, (size_t)n * 4, cudaMemcpyDeviceToHost));
        t[r] = now_s() - t0;
    }
    show("c_i D2H, pageable", t, n, 4.0 * n);
    for (int r = 0; r < REPS; r++) {
        double t0 = now_s();
        CHECK(cudaMemcpy(d_layer, p_layer, (size_t)n * 4, cudaMemcpyHostToDevice));
        t[r] = now_s() - t0;
    }
    show("l_i H2D, pageable", t, n, 4.0 * n);

    /* the loop alone, caches flushed first */
    memcpy(h_cell, p_cell, (size_t)n * 4);
    for (int r = 0; r < REPS; r++) {
        double t0;
        flush_caches(r);
        t0 = now_s();
        memset(h_kc, 0, (size_t)ncell * 4);
        layer_loop(h_cell, h_layer, h_kc, 0, n);
        t[r] = now_s() - t0;
    }
    show("host loop plain (memset k_c + loop), cold", t, n, 0);
    for (int r = 0; r < REPS; r++) {
        double t0;
        flush_caches(r);
        t0 = now_s();
        memset(h_kc, 0, (size_t)ncell * 4);
        layer_loop_branch(h_cell, h_layer, h_kc, 0, n);
        t[r] = now_s() - t0;
    }
    show("host loop v2 branch (memset + loop), cold", t, n, 0);

    /* v1: one copy each way, a stream sync */
    for (int r = 0; r < REPS; r++) {
        double t0;
        flush_caches(r);
        t0 = now_s();
        CHECK(cudaMemcpyAsync(h_cell, d_cell, (size_t)n * 4, cudaMemcpyDeviceToHost, s));
        CHECK(cudaStreamSynchronize(s));
        memset(h_kc, 0, (size_t)ncell * 4);
        layer_loop(h_cell, h_layer, h_kc, 0, n);
        CHECK(cudaMemcpyAsync(d_layer, h_layer, (size_t)n * 4, cudaMemcpyHostToDevice, s));
        CHECK(cudaMemcpyAsync(d_kc, h_kc, (size_t)ncell * 4, cudaMemcpyHostToDevice, s));
        CHECK(cudaStreamSynchronize(s));
        t[r] = now_s() - t0;
    }
    show("round trip v1 (one copy each way)", t, n, 0);

    /* v2/v3: pieces with events, copies overlapping the loop */
    for (int r = 0; r < REPS; r++) {
        int chunk = (n + CHUNKS - 1) / CHUNKS;
        double t0;
        flush_caches(r);
        t0 = now_s();
        for (int k = 0; k < CHUNKS; k++) {
            int lo = k * chunk, cnt = lo < n ? (n - lo < chunk ? n - lo : chunk) : 0;
            if (cnt > 0)
                CHECK(cudaMemcpyAsync(h_cell + lo, d_cell + lo, (size_t)cnt * 4,
                                      cudaMemcpyDeviceToHost, s));
            CHECK(cudaEventRecord(ev[k], s));
        }
        memset(h_kc, 0, (size_t)ncell * 4);
        for (int k = 0; k < CHUNKS; k++) {
            int lo = k * chunk, hi = lo + chunk < n ? lo + chunk : n;
            CHECK(cudaEventSynchronize(ev[k]));
            if (lo >= hi)
                continue;
            layer_loop(h_cell, h_layer, h_kc, lo, hi);
            CHECK(cudaMemcpyAsync(d_layer + lo, h_layer + lo, (size_t)(hi - lo) * 4,
                                  cudaMemcpyHostToDevice, s));
        }
        CHECK(cudaMemcpyAsync(d_kc, h_kc, (size_t)ncell * 4, cudaMemcpyHostToDevice, s));
        CHECK(cudaStreamSynchronize(s));
        t[r] = now_s() - t0;
    }
    show("round trip v2/v3 (8 pieces, events)", t, n, 0);

    cudaFreeHost(h_cell);
    cudaFreeHost(h_layer);
    cudaFreeHost(h_kc);
    free(p_cell);
    free(p_layer);
    cudaFree(d_cell);
    cudaFree(d_layer);
    cudaFree(d_kc);
    for (int k = 0; k < CHUNKS; k++)
        cudaEventDestroy(ev[k]);
    cudaStreamDestroy(s);
    return 0;
}

int main(int argc, char **argv)
{
    junk = (char *)malloc(junk_bytes);
    if (!junk)
        return 1;
    for (int k = 1; k < argc; k++) {
        int ne = atoi(argv[k]);
        if (ne < 8 || ne > 400) {
            fprintf(stderr, "N_e %s out of range 8..400\n", argv[k]);
            return 2;
        }
        if (probe(ne, 1) || probe(ne, 0))
            return 1;
    }
    free(junk);
    return 0;
}
