/* md kernels: the device state every kernel sees (md_view, by value) and the control block it
 * keeps on the device (md_ctl), and the launchers the glue (md.c) calls.  One file per
 * strategy (kernels/NN_<variant>.cu); 00_step.cu holds the kernels every strategy shares
 * (leapfrog halves, cells, counting sort, reductions, the step's bookkeeping).
 *
 * Every step-loop kernel that belongs to the neighbour rebuild reads ctl->rebuild and returns
 * at once when no rebuild is due, so the whole step is the same sequence of launches every
 * time and a run can be captured into a CUDA graph; the decision itself is made on the device
 * by the last block of md_launch_second_half.  Every launcher enqueues on `stream`, never
 * synchronises, and returns cudaGetLastError() after its launch.
 */
#ifndef KBENCH_MD_KERNELS_H
#define KBENCH_MD_KERNELS_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Overflow flags of md_ctl.overflow. */
#define MD_OVERFLOW_LAYERS 0x1    /* a cell held more atoms than H has layers */
#define MD_OVERFLOW_NEIGHBORS 0x2 /* an atom had more neighbours than W has rows */

/* Lives on the device; the host reads it only outside run(). */
typedef struct md_ctl {
    double ke, pe, vir; /* per atom, of the latest step */
    double vmax2;       /* of the latest step */
    float disp;         /* cumulative max displacement since the last rebuild */
    int rebuild;        /* the current step rebuilds the neighbour structures */
    int reorder_now;    /* ... and reorders the atoms by cell first */
    int since_reorder;  /* steps since the last reordering */
    int since_rebuild;  /* steps since the last rebuild */
    int step;           /* steps since load: the history index is step % hist_len */
    int nl;             /* layers of the latest build (most atoms in one cell) */
    int overflow;       /* MD_OVERFLOW_* seen since load */
    int forced;         /* the pending rebuild was asked for by the host, not by displacement */
    unsigned long long nbr_total; /* neighbour entries of the latest build (both directions) */
    long long builds;             /* builds since load (the load's own included) */
    long long rebuilds;           /* builds due to displacement, since load */
    double sum_np; /* sums over builds: neighbour entries per atom (N_p/N_a), layers */
    double sum_nl;
    double sum_nu; /* sum over rebuilds of the steps since the previous one */
    /* blocks of the current launch that have finished (the last one does the kernel's
     * single-thread tail and sets it back to 0): second half kick, neighbour count */
    unsigned int done_half, done_count;
} md_ctl;

/* Everything a kernel needs, passed by value. */
/* Coordinate (and H) gathers of the build and force kernels: plain loads (cached in L1 on
 * sm_90), through the read-only path (`ldg` 1: ld.global.nc, the paper's texture cache), or
 * past L1 (`ldg` 0, `l1` 0: ld.global.cg, cached in L2 only: the nearest sm_90 analogue of the
 * G80's uncached global loads). */
enum { MD_LD_PLAIN = 0, MD_LD_NC = 1, MD_LD_CG = 2 };

typedef struct md_view {
    float4 *r, *v, *a; /* positions, velocities, accelerations (a.w: the atom's energy sum) */
    float4 *r2, *v2;   /* reordering scratch */
    float *vir;        /* per-atom virial sum (each pair counted from both atoms) */
    int *cell;         /* cell of each atom */
    int *layer;        /* layer of each atom (its slot in its cell) */
    int *kc;           /* atoms per cell */
    int *cell_start;   /* first sorted index of each cell (after the counting sort) */
    int *H;            /* H[c * lcap + l]: atom in layer l of cell c */
    int *W;            /* W[m * n + i]: m-th neighbour of atom i */
    int *nn;           /* neighbours of each atom */
    double *part;      /* per-block partial sums of the second half kick (4 per block) */
    double *hist;      /* per-step ke, pe, vir per atom (3 per step) */
    md_ctl *ctl;
    int n, G, ncell, lcap, mcap, hist_len, threads, nblocks;
    int sort_always; /* reorder at every rebuild (the sorted strategy) */
    int reorder;     /* steps between reorderings, 0 = never */
    int ld;          /* MD_LD_*: how the build and force kernels load coordinates (and H) */
    float L, invL, cellw_inv, rc2, rn2, shift, dt, half_delta, temp;
} md_view;

/* 00_step.cu */
cudaError_t md_launch_first_half(md_view v, cudaStream_t s);
cudaError_t md_launch_cells(md_view v, cudaStream_t s); /* clear kc, assign cells */
/* cells and the atomic slots in one kernel (kc must be 0: the neighbour count clears it) */
cudaError_t md_launch_cells_slots(md_view v, cudaStream_t s);
cudaError_t md_launch_reorder(md_view v, cudaStream_t s); /* counting sort when due */
cudaError_t md_launch_hfill(md_view v, cudaStream_t s);   /* H from cell and layer */
/* neighbour count, N_l, clears kc, then (last block) the rebuild's statistics and flags */
cudaError_t md_launch_finish_rebuild(md_view v, cudaStream_t s);
/* second half kick with partial sums, then (last block) the step's reduction, history and
 * the rebuild decision: one kernel */
cudaError_t md_launch_second_half(md_view v, cudaStream_t s);
cudaError_t md_launch_rescale(md_view v, cudaStream_t s); /* velocities to temp */
cudaError_t md_launch_force_rebuild(md_view v, int reorder, cudaStream_t s); /* set the flag */
/* 01_allpairs.cu */
cudaError_t md_launch_force_allpairs(md_view v, cudaStream_t s);
/* 02_cell_block.cu: block per cell, threads = layers (blockDim = lcap rounded up to 32) */
cudaError_t md_launch_build_cell_block(md_view v, cudaStream_t s);
/* 03_layer_matrix.cu: W from H, a thread per atom; forces from W (used by every W strategy) */
cudaError_t md_launch_build_layer_matrix(md_view v, cudaStream_t s);
cudaError_t md_launch_force_w(md_view v, cudaStream_t s);
/* 04_layer_atomic.cu: layers by atomics on the cell counts */
cudaError_t md_launch_layers_atomic(md_view v, cudaStream_t s);
/* 05_sorted.cu: W from the cell ranges of the sorted atoms */
cudaError_t md_launch_build_sorted(md_view v, cudaStream_t s);

#ifdef __cplusplus
}
#endif

#endif /* KBENCH_MD_KERNELS_H */
