/* The device side of the labeling plugin as the C glue sees it: one struct of device buffers
 * and the launchers (00_sweep.cu: bonds, new values, step counter, sums; 01..04: the
 * labelers).  Every launcher enqueues on `st` and returns the first CUDA error; only the
 * iterative labelers (hawick, kalentev) and lb_dev_sums wait on the stream. */
#ifndef LABELING_KERNELS_H
#define LABELING_KERNELS_H

#include <cuda_runtime_api.h>

#include "../labeling.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lb_dev {
    lb_lattice lat;
    lb_model model; /* model.proj points at device memory */
    uint64_t seed;
    uint16_t *spins;   /* n */
    uint8_t *bonds;    /* n */
    uint32_t *labels;  /* n */
    uint32_t *scratch; /* n: hawick's reference array R */
    uint64_t *step;    /* the step counter, on the device so that run() is capturable */
    int *flag;         /* iterative labelers: "something changed" */
    int *host_flag;    /* pinned copy of flag */
    int64_t *sums;     /* an lb_sums */
    const int64_t *cos_fix, *sin_fix; /* clock tables (q entries each) */
} lb_dev;

enum { LB_HAWICK, LB_KALENTEV, LB_KOMURA, LB_UNION_FIND, LB_LABELER_COUNT };

/* Labels `bonds` into d->labels (each site: the smallest site of its cluster).  *iterations
 * gets the number of scans of an iterative labeler, 1 otherwise. */
cudaError_t lb_dev_label(int labeler, const lb_dev *d, const uint8_t *bonds, cudaStream_t st,
                         int *iterations);
cudaError_t lb_label_hawick(const lb_dev *d, const uint8_t *bonds, cudaStream_t st,
                            int *iterations);
cudaError_t lb_label_kalentev(const lb_dev *d, const uint8_t *bonds, cudaStream_t st,
                              int *iterations);
cudaError_t lb_label_komura(const lb_dev *d, const uint8_t *bonds, cudaStream_t st);
cudaError_t lb_label_union_find(const lb_dev *d, const uint8_t *bonds, cudaStream_t st);

/* Active bonds of the step *d->step into d->bonds. */
cudaError_t lb_dev_bonds(const lb_dev *d, cudaStream_t st);
/* New values of every cluster of step *d->step from d->labels. */
cudaError_t lb_dev_flip(const lb_dev *d, cudaStream_t st);
/* ++*d->step. */
cudaError_t lb_dev_advance(const lb_dev *d, cudaStream_t st);
/* *d->step = step. */
cudaError_t lb_dev_set_step(const lb_dev *d, uint64_t step, cudaStream_t st);
/* Random initial spins (step 0), as lb_initial_spin. */
cudaError_t lb_dev_init_spins(const lb_dev *d, cudaStream_t st);
/* The sums of the configuration (labels: d->labels when with_labels) into *out; waits. */
cudaError_t lb_dev_sums(const lb_dev *d, int with_labels, lb_sums *out, cudaStream_t st);

#ifdef __cplusplus
}
#endif

#endif /* LABELING_KERNELS_H */
