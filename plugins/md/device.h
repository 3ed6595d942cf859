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

/* Events of the device engine: the instrumented step's phases, the host layering's pieces of
 * c_i, and (instrumented runs only) the copies and the build kernel. */
enum {
    MD_EV_PHASE = 0,                               /* 5: step start, after first half, ... end */
    MD_EV_CHUNK = 5,                               /* MD_HOST_CHUNKS: piece k of c_i is in */
    MD_EV_IN0 = MD_EV_CHUNK + MD_HOST_CHUNKS,      /* before the first copy of c_i */
    MD_EV_IN1,                                     /* after the last */
    MD_EV_OUT,                                     /* 2 per piece: around its copy of l_i */
    MD_EV_BUILD0 = MD_EV_OUT + 2 * MD_HOST_CHUNKS, /* around the neighbour-matrix kernel */
    MD_EV_BUILD1,
    MD_EV_COUNT
};

/* Time per phase of an instrumented run, seconds (CUDA events; includes host work in between). */
typedef struct md_timing {
    double nbr, force, total;
    double host;  /* of nbr: the host layer assignment (copy c_i out, the loop, l_i and k_c in) */
    double build; /* the strategy's neighbour-matrix kernel alone (every step: it returns at
                     once when no rebuild is due) */
    /* the host layer assignment's pieces: blocked waiting for c_i (the cells kernel and the
     * copies), the host loop, and the copies on the device (c_i out; l_i and k_c in) */
    double host_wait, host_loop, copy_in, copy_out;
    long long host_calls; /* host layer assignments in the run */
    long long builds;     /* builds in the run (ctl.builds before and after) */
    int steps;
} md_timing;

typedef struct md_dev {
    md_view v;       /* device pointers and sizes, passed to every kernel */
    int strategy;    /* MD_DEV_* */
    int host_layers; /* layers assigned on the host (cell_block, layer_matrix): run() syncs */
    int *h_cell, *h_layer, *h_kc;    /* pinned host copies for the host layer assignment */
    md_ctl *h_ctl;                   /* pinned host copy of the control block */
    size_t bytes;                    /* device memory held */
    double host_s;                   /* wall time spent in the host layer assignment, seconds */
    double host_wait_s, host_loop_s; /* of it: waiting for c_i, the loop */
    long long host_calls;            /* host layer assignments since create */
    int instr;                       /* an instrumented step: record the copy/build events */
    int host_this_step;              /* the step's host layering recorded its copy events */
    int build_this_step;             /* the step recorded the build kernel's events */
    cudaEvent_t ev[MD_EV_COUNT];     /* see MD_EV_* */
    int have_events;                 /* how many of ev exist */
} md_dev;

/* Allocates the buffers of `strategy` for cfg (lcap layers, mcap neighbours per atom).
 * Returns KB_OK or a kb_status with msg; on failure frees what it took. */
int md_dev_create(md_dev *d, const md_config *cfg, int strategy, int lcap, int mcap, char *msg);
void md_dev_destroy(md_dev *d);
/* Loads a state (4 floats per atom), clears the control block and history, builds the
 * neighbour structures and forces; with reordering on (reorder > 0) that build sorts the atoms
 * by cell first.  Enqueued on stream (host layering syncs it). */
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
