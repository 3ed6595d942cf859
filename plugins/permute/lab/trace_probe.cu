/* The float32 DMMA ring kernel's (fused_mma_ring, auto's float32 kernel) timeline on the GPU
 * machine, CTA by CTA: kernels/04_fused.cu compiled here with PM_FUSED_TRACE, so thread 0 of
 * every CTA stamps the global timer at its start, when its first fill has landed, after its
 * loop and after its epilogue's stores have issued (the plugin's build has none of this).
 * Runs preset large_u (seed 1) at the given scale and beta, with the kernel's registers capped
 * for 3 or 4 CTAs an SM and the tiles in one of four orders (0: the plan's, longest first; 1:
 * shortest first; 2: the blocks' tiles dealt round robin, longest block first; 3 and 4: the
 * plan's, but the first wave dealt so that an SM's three CTAs differ in length, see reorder),
 * 220 launches back to back (the mean of launches 20-218 by events; the last one traced);
 * checks the result against the host
 * reference (pm_check); prints one line a CTA (its tile, SM, the tile's fills and the four
 * times in ns from the first CTA's start) and a summary: the kernel's span, the phases'
 * medians, SMs busy over time.  Built with -DKBENCH_LAB=ON (lab/CMakeLists.txt), or by hand:
 *   gcc -O2 -c -Iplugins/permute -Iharness/include plugins/permute/gen.c plugins/permute/plan_*.c
 *   nvcc -O3 -std=c++17 -arch=sm_90a -Iplugins/permute -Iplugins/permute/kernels \
 *        -Iharness/include -o trace_probe plugins/permute/lab/trace_probe.cu gen.o plan_*.o
 *   ./trace_probe [scale [beta [ctas [order]]]]
 */
#define PM_FUSED_TRACE
#include "../kernels/04_fused.cu"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kbench/cuda_check.h"
#include "spec.h"

static int upload(void **d, const void *h, size_t bytes, char *msg)
{
    KB_CUDA_TRY(cudaMalloc(d, bytes ? bytes : 1), msg);
    KB_CUDA_TRY(cudaMemcpy(*d, h, bytes, cudaMemcpyHostToDevice), msg);
    return KB_OK;
}

static double median(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

/* Reorders the plan's tiles (items and their tables) by `order` (see above). */
static void reorder(pm_fused_plan *f, int order, int sms)
{
    const int64_t n = f->items;
    std::vector<int64_t> idx;
    if (order == 1) {
        for (int64_t i = n - 1; i >= 0; i--)
            idx.push_back(i);
    } else if (order == 2) {
        std::vector<std::vector<int64_t>> by(f->n_blocks);
        for (int64_t i = 0; i < n; i++)
            by[f->item[i].blk].push_back(i);
        for (size_t k = 0; (int64_t)idx.size() < n; k++)
            for (auto &b : by)
                if (k < b.size())
                    idx.push_back(b[k]);
    } else if ((order == 3 || order == 4) && n >= 3 * (int64_t)sms) {
        /* The hardware deals block b to SM (b mod SMs) in round b / SMs (the traces show it),
         * so an SM's first CTAs are positions j, j + SMs, j + 2 SMs.  Round 0 takes the
         * longest tiles, round 1 tiles from the middle of the list, round 2 the shortest
         * (order 4: the shortest but the last SMs / 2, kept for the end); the rest follows
         * longest first, so an SM's first three CTAs end apart. */
        const int64_t sm = sms, keep = order == 4 ? sm / 2 : 0;
        std::vector<char> used(n, 0);
        auto take = [&](int64_t from) {
            for (int64_t i = from; i < from + sm; i++)
                if (!used[i]) {
                    idx.push_back(i);
                    used[i] = 1;
                }
        };
        take(0);
        take(n / 2 - sm / 2);
        take(n - keep - sm);
        for (int64_t i = 0; i < n; i++)
            if (!used[i])
                idx.push_back(i);
    } else {
        for (int64_t i = 0; i < n; i++)
            idx.push_back(i);
    }
    std::vector<pm_fused_item> it(n);
    std::vector<pm_fused_gather> g((size_t)n * PM_FUSED_BN);
    std::vector<int32_t> dc((size_t)n * PM_FUSED_BN);
    for (int64_t k = 0; k < n; k++) {
        it[k] = f->item[idx[k]];
        std::copy(f->igather + idx[k] * PM_FUSED_BN, f->igather + (idx[k] + 1) * PM_FUSED_BN,
                  g.begin() + k * PM_FUSED_BN);
        std::copy(f->idcol + idx[k] * PM_FUSED_BN, f->idcol + (idx[k] + 1) * PM_FUSED_BN,
                  dc.begin() + k * PM_FUSED_BN);
    }
    std::copy(it.begin(), it.end(), f->item);
    std::copy(g.begin(), g.end(), f->igather);
    std::copy(dc.begin(), dc.end(), f->idcol);
}

static int trace(double scale, double beta, int ctas, int order, char *msg)
{
    pm_spec s = pm_test_spec(PM_LARGE_U, 4, 1.0, beta, scale);
    pm_problem p;
    pm_fused_plan f;
    int rc;
    if ((rc = pm_generate(&s, 1, &p, msg)) != KB_OK || (rc = pm_plan_fused(&p, NULL, &f, msg)))
        return rc;
    f.fill = PM_FUSED_FILL_RING;
    f.ctas = ctas;
    f.ring = 3;
    {
        int dev = 0, sms = 0;
        KB_CUDA_TRY(cudaGetDevice(&dev), msg);
        KB_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), msg);
        reorder(&f, order, sms);
    }
    const size_t cols = (size_t)f.items * PM_FUSED_BN, obytes = (size_t)p.dst_elems * 4;
    void *g, *dc, *it, *src, *cin, *u, *out;
    unsigned long long *tr;
    if ((rc = upload(&g, f.igather, cols * sizeof(pm_fused_gather), msg)) ||
        (rc = upload(&dc, f.idcol, cols * sizeof(int32_t), msg)) ||
        (rc = upload(&it, f.item, (size_t)f.items * sizeof(pm_fused_item), msg)) ||
        (rc = upload(&src, p.src, (size_t)p.src_elems * 4, msg)) ||
        (rc = upload(&cin, p.cin, obytes, msg)) ||
        (rc = upload(&u, p.u, (size_t)p.u_elems * 4, msg)))
        return rc;
    KB_CUDA_TRY(cudaMalloc(&out, obytes), msg);
    KB_CUDA_TRY(cudaMemset(out, 0xff, obytes), msg);
    KB_CUDA_TRY(cudaMalloc(&tr, (size_t)f.items * 6 * sizeof *tr), msg);
    KB_CUDA_TRY(cudaMemset(tr, 0, (size_t)f.items * 6 * sizeof *tr), msg);
    cudaEvent_t a, b;
    KB_CUDA_TRY(cudaEventCreate(&a), msg);
    KB_CUDA_TRY(cudaEventCreate(&b), msg);
    float ms = 0;
    for (int l = 0; l < 220; l++) {
        if (l == 20)
            KB_CUDA_TRY(cudaEventRecord(a), msg);
        if (l == 219) {
            KB_CUDA_TRY(cudaEventRecord(b), msg);
            KB_CUDA_TRY(cudaMemcpyToSymbol(pm_fused_trace, &tr, sizeof tr), msg);
        }
        KB_CUDA_TRY((cudaError_t)pm_run_fused(4, &f, (const pm_fused_gather *)g,
                                              (const int32_t *)dc, (const pm_fused_item *)it, src,
                                              cin, u, out, p.alpha, p.beta, NULL),
                    msg);
    }
    KB_CUDA_TRY(cudaDeviceSynchronize(), msg);
    KB_CUDA_TRY(cudaEventElapsedTime(&ms, a, b), msg);
    ms /= 199; /* launches 20 .. 218, back to back */
    std::vector<float> h(p.dst_elems);
    std::vector<unsigned long long> t((size_t)f.items * 6);
    KB_CUDA_TRY(cudaMemcpy(h.data(), out, obytes, cudaMemcpyDeviceToHost), msg);
    KB_CUDA_TRY(cudaMemcpy(t.data(), tr, t.size() * sizeof t[0], cudaMemcpyDeviceToHost), msg);
    int64_t bad = 0;
    const double err = pm_check(&p, h.data(), &bad);
    unsigned long long t0 = ~0ull, t1 = 0;
    for (int64_t i = 0; i < f.items; i++) {
        t0 = std::min(t0, t[i * 6 + 1]);
        t1 = std::max(t1, t[i * 6 + 4]);
    }
    printf("# large_u f32 scale %g beta %g, %d CTAs an SM, order %d: %lld tiles, %.2f us a "
           "launch back to back (events), the traced one's CTAs span %.2f us; err/bound %.3g, "
           "%lld bad\n",
           scale, beta, ctas, order, (long long)f.items, ms * 1e3, (t1 - t0) * 1e-3, err,
           (long long)bad);
    printf("# tile sm fills start first_fill loop_end end (ns from the first start)\n");
    std::vector<double> pro, loop, epi;
    for (int64_t i = 0; i < f.items; i++) {
        const unsigned long long *r = &t[i * 6];
        const int fills = (f.item[i].cols + PM_FUSED_BK - 1) / PM_FUSED_BK;
        printf("%lld %llu %d %llu %llu %llu %llu\n", (long long)i, r[0], fills, r[1] - t0,
               r[2] - t0, r[3] - t0, r[4] - t0);
        pro.push_back((double)(r[2] - r[1]));
        loop.push_back((double)(r[3] - r[2]) / fills);
        epi.push_back((double)(r[4] - r[3]));
    }
    printf("# medians: prologue %.0f ns, loop %.0f ns a fill, epilogue %.0f ns\n", median(pro),
           median(loop), median(epi));
    /* SMs with at least one CTA, in tenths of the span. */
    printf("# SMs busy by tenth of the span:");
    for (int k = 0; k < 10; k++) {
        const double lo = t0 + (t1 - t0) * k / 10.0, hi = t0 + (t1 - t0) * (k + 1) / 10.0;
        std::vector<char> busy(1024, 0);
        for (int64_t i = 0; i < f.items; i++)
            if ((double)t[i * 6 + 1] < hi && (double)t[i * 6 + 4] > lo)
                busy[t[i * 6] & 1023] = 1;
        printf(" %d", (int)std::count(busy.begin(), busy.end(), 1));
    }
    printf("\n");
    return bad == 0 ? KB_OK : KB_ERROR;
}

int main(int argc, char **argv)
{
    char msg[KB_MSG_SIZE] = "";
    const double scale = argc > 1 ? atof(argv[1]) : 1.0, beta = argc > 2 ? atof(argv[2]) : 0.0;
    const int ctas = argc > 3 ? atoi(argv[3]) : 3, order = argc > 4 ? atoi(argv[4]) : 0;
    const int rc = trace(scale, beta, ctas == 4 ? 4 : 3, order, msg);
    if (rc != KB_OK)
        fprintf(stderr, "trace_probe: %s\n", msg[0] ? msg : "the result did not verify");
    return rc == KB_OK ? 0 : 1;
}
