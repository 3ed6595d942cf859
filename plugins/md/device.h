/* md plugin, device engine: the buffers of one device strategy and the step loop that drives
 * the kernels of kernels/ (device.c).  Used by the glue (md.c) for the device variants and by
 * prepare to equilibrate on the device. */
#ifndef KBENCH_MD_DEVICE_H
#define KBENCH_MD_DEVICE_H

#include <cuda_runtime_api.h>

#include "kernels/kernels.h"
#include "md.h"

enum {
    MD_DEV_ALLPAIRS = 0,
    MD_DEV_CELL_BLOCK = 1,
    MD_DEV_LAYER_MATRIX = 2,
    MD_DEV_LAYER_ATOMIC = 3,
    MD_DEV_SORTED = 4
};

/* The host layer assignment moves c_i and l_i in this many pieces, so the copies overlap the
 * host loop. */
#define MD_HOST_CHUNKS 8

/* Time per phase of an instrumented run, seconds (CUDA events; includes host work in between). */
typedef struct md_timing {
    double nbr, force, total;
    double host; /* of nbr: the host layer assignment (copy c_i out, the loop, l_i and k_c in) */
    int steps;
} md_timing;

typedef struct md_dev {
    md_view v;       /* device pointers and sizes, passed to every kernel */
    int strategy;    /* MD_DEV_* */
    int host_layers; /* layers assigned on the host (cell_block, layer_matrix): run() syncs */
    int *h_cell, *h_layer, *h_kc;       /* pinned host copies for the host layer assignment */
    md_ctl *h_ctl;                      /* pinned host copy of the control block */
    size_t bytes;                       /* device memory held */
    double host_s;                      /* wall time spent in the host layer assignment, seconds */
    cudaEvent_t ev[5 + MD_HOST_CHUNKS]; /* phases of an instrumented step; host layering chunks */
    int have_events;                    /* how many of ev exist */
} md_dev;

/* Allocates the buffers of `strategy` for cfg (lcap layers, mcap neighbours per atom).
 * Returns KB_OK or a kb_status with msg; on failure frees what it took. */
int md_dev_create(md_dev *d, const md_config *cfg, int strategy, int lcap, int mcap, char *msg);
void md_dev_destroy(md_dev *d);
/* Loads a state (4 floats per atom), clears the control block and history, builds the
 * neighbour structures and forces.  Enqueued on stream (host layering syncs it). */
int md_dev_load(md_dev *d, const float *r4, const float *v4, cudaStream_t stream, char *msg);
/* `steps` MD steps; with t non-NULL each phase is timed with events (synchronising). */
int md_dev_steps(md_dev *d, int steps, cudaStream_t stream, md_timing *t, char *msg);
/* A rebuild of the neighbour structures and the forces now (no reordering unless the
 * strategy always sorts). */
int md_dev_rebuild_now(md_dev *d, cudaStream_t stream, char *msg);
/* Rescales velocities to the configured temperature (equilibration). */
int md_dev_rescale(md_dev *d, cudaStream_t stream, char *msg);
/* Copies the control block to the host (synchronises the stream). */
int md_dev_read_ctl(md_dev *d, md_ctl *out, cudaStream_t stream, char *msg);

/* Equilibrates on the device (layer_matrix with host layers: deterministic), fills ps like
 * md_prepare_host.  Returns KB_OK or a status with msg. */
int md_prepare_device(const md_config *cfg, uint64_t seed, cudaStream_t stream, md_point_state *ps,
                      char *msg);

#endif /* KBENCH_MD_DEVICE_H */
