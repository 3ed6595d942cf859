/* md plugin, device engine: allocation of a strategy's buffers, loading a state, and the MD
 * step as a sequence of kernel launches (kernels/).  Strategies with device-side layers
 * (layer_atomic, sorted) and allpairs enqueue the same launches every step, each rebuild kernel
 * deciding on the device whether it has work, so run() is capturable.  cell_block and
 * layer_matrix assign layers on the host as published: each step reads the rebuild decision
 * back and, at a rebuild, copies the cells to the host and the layers back (run() syncs). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "device.h"
#include "kbench/cuda_check.h"
#include "kbench/plugin.h"

#define DEV_ALLOC(ptr, count, msg)                                                                 \
    do {                                                                                           \
        size_t nb_ = (size_t)(count) * sizeof(*(ptr));                                             \
        KB_CUDA_GOTO(cudaMalloc((void **)&(ptr), nb_ ? nb_ : 1), msg, fail);                       \
        d->bytes += nb_;                                                                           \
    } while (0)

void md_dev_destroy(md_dev *d)
{
    md_view *v = &d->v;
    cudaFree(v->r);
    cudaFree(v->v);
    cudaFree(v->a);
    cudaFree(v->r2);
    cudaFree(v->v2);
    cudaFree(v->vir);
    cudaFree(v->cell);
    cudaFree(v->layer);
    cudaFree(v->kc);
    cudaFree(v->cell_start);
    cudaFree(v->H);
    cudaFree(v->W);
    cudaFree(v->nn);
    cudaFree(v->part);
    cudaFree(v->hist);
    cudaFree(v->ctl);
    cudaFreeHost(d->h_cell);
    cudaFreeHost(d->h_layer);
    cudaFreeHost(d->h_kc);
    cudaFreeHost(d->h_ctl);
    for (int k = 0; k < d->have_events; k++)
        cudaEventDestroy(d->ev[k]);
    memset(d, 0, sizeof *d);
}

int md_dev_create(md_dev *d, const md_config *cfg, int strategy, int lcap, int mcap, char *msg)
{
    md_view *v = &d->v;
    int rc = KB_OK, n = cfg->n;
    memset(d, 0, sizeof *d);
    d->strategy = strategy;
    d->host_layers = strategy == MD_DEV_CELL_BLOCK || strategy == MD_DEV_LAYER_MATRIX;
    v->n = n;
    v->G = cfg->G;
    v->ncell = cfg->ncell;
    v->lcap = strategy == MD_DEV_SORTED || strategy == MD_DEV_ALLPAIRS ? 0 : lcap;
    v->mcap = strategy == MD_DEV_ALLPAIRS ? 0 : mcap;
    v->hist_len = cfg->steps > 0 ? cfg->steps : 1;
    v->threads = cfg->threads;
    v->nblocks = (n + cfg->threads - 1) / cfg->threads;
    v->sort_always = strategy == MD_DEV_SORTED;
    v->reorder = cfg->reorder;
    v->ld = cfg->ldg ? MD_LD_NC : (cfg->l1 ? MD_LD_PLAIN : MD_LD_CG);
    /* The device works in the float image of the region edge; references use the same. */
    v->L = (float)cfg->L;
    v->invL = 1.0f / v->L;
    v->cellw_inv = (float)(cfg->G / (double)v->L);
    v->rc2 = (float)(cfg->rc * cfg->rc);
    v->rn2 = (float)((cfg->rc + cfg->delta) * (cfg->rc + cfg->delta));
    v->shift = (float)cfg->shift;
    v->dt = (float)cfg->dt;
    v->half_delta = (float)(0.5 * cfg->delta);
    v->temp = (float)cfg->temp;
    if (strategy == MD_DEV_CELL_BLOCK && (lcap + 31) / 32 * 32 > 1024) {
        kb_msgf(msg, "cell_block needs a block of %d threads (layers): more than 1024", lcap);
        return KB_SKIP;
    }

    DEV_ALLOC(v->r, n, msg);
    DEV_ALLOC(v->v, n, msg);
    DEV_ALLOC(v->a, n, msg);
    DEV_ALLOC(v->vir, n, msg);
    DEV_ALLOC(v->part, 4 * (size_t)v->nblocks, msg);
    DEV_ALLOC(v->hist, 3 * (size_t)v->hist_len, msg);
    DEV_ALLOC(v->ctl, 1, msg);
    if (strategy != MD_DEV_ALLPAIRS) {
        DEV_ALLOC(v->cell, n, msg);
        DEV_ALLOC(v->layer, n, msg);
        DEV_ALLOC(v->nn, n, msg);
        DEV_ALLOC(v->kc, cfg->ncell, msg);
        DEV_ALLOC(v->W, (size_t)mcap * n, msg);
        if (cfg->reorder > 0 || strategy == MD_DEV_SORTED) {
            DEV_ALLOC(v->r2, n, msg);
            DEV_ALLOC(v->v2, n, msg);
            DEV_ALLOC(v->cell_start, cfg->ncell, msg);
        }
        if (strategy != MD_DEV_SORTED)
            DEV_ALLOC(v->H, (size_t)cfg->ncell * lcap, msg);
    }
    if (d->host_layers) {
        KB_CUDA_GOTO(cudaMallocHost((void **)&d->h_cell, (size_t)n * sizeof(int)), msg, fail);
        KB_CUDA_GOTO(cudaMallocHost((void **)&d->h_layer, (size_t)n * sizeof(int)), msg, fail);
        KB_CUDA_GOTO(cudaMallocHost((void **)&d->h_kc, (size_t)cfg->ncell * sizeof(int)), msg,
                     fail);
    }
    KB_CUDA_GOTO(cudaMallocHost((void **)&d->h_ctl, sizeof(md_ctl)), msg, fail);
    /* Poison: an unwritten force or neighbour fails verify. */
    KB_CUDA_GOTO(cudaMemset(v->a, 0xFF, (size_t)n * sizeof(float4)), msg, fail);
    if (v->W)
        KB_CUDA_GOTO(cudaMemset(v->W, 0xFF, (size_t)mcap * n * sizeof(int)), msg, fail);
    for (int k = 0; k < MD_EV_COUNT; k++) {
        KB_CUDA_GOTO(cudaEventCreate(&d->ev[k]), msg, fail);
        d->have_events = k + 1;
    }
    return KB_OK;
fail:
    md_dev_destroy(d);
    return rc;
}

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Layers in atom order on the host, as published: l_i = k_{c_i}++.  c_i comes over in
 * MD_HOST_CHUNKS pieces into pinned memory, each with an event, and each piece's l_i goes back
 * as soon as the loop has done it, so the copies overlap the loop (the same l_i and k_c as one
 * copy each way).  The loop is the published one, l_i = k_{c_i}++: v2 kept the current cell's
 * count in a register while consecutive atoms shared it, but in a cell-sorted liquid the cell
 * changes after a random 0-9 atoms and that branch mispredicts: H200 run 3 measured 3.9 ns per
 * atom sorted against 1.2-1.8 in the lattice's order (this CPU: 3.3 vs 1.3 ns for the plain
 * loop, which store forwarding keeps cheap).  Its wall time (from the first wait to the last
 * copy enqueued) goes into host_s, the
 * waits and the loop separately into host_wait_s and host_loop_s; an instrumented step also
 * records events around the copies (copy bandwidth on the device's clock). */
static int host_layer_assign(md_dev *d, cudaStream_t s, char *msg)
{
    md_view *v = &d->v;
    int rc = KB_OK, n = v->n, chunk = (n + MD_HOST_CHUNKS - 1) / MD_HOST_CHUNKS;
    int *cell = d->h_cell, *layer = d->h_layer, *kc = d->h_kc;
    double t0 = wall_s(), t1;
    if (d->instr)
        KB_CUDA_GOTO(cudaEventRecord(d->ev[MD_EV_IN0], s), msg, fail);
    for (int k = 0; k < MD_HOST_CHUNKS; k++) {
        int lo = k * chunk, cnt = lo < n ? (n - lo < chunk ? n - lo : chunk) : 0;
        if (cnt > 0)
            KB_CUDA_GOTO(cudaMemcpyAsync(cell + lo, v->cell + lo, (size_t)cnt * sizeof(int),
                                         cudaMemcpyDeviceToHost, s),
                         msg, fail);
        KB_CUDA_GOTO(cudaEventRecord(d->ev[MD_EV_CHUNK + k], s), msg, fail);
    }
    if (d->instr)
        KB_CUDA_GOTO(cudaEventRecord(d->ev[MD_EV_IN1], s), msg, fail);
    memset(kc, 0, (size_t)v->ncell * sizeof(int));
    for (int k = 0; k < MD_HOST_CHUNKS; k++) {
        int lo = k * chunk, hi = lo + chunk < n ? lo + chunk : n;
        t1 = wall_s();
        KB_CUDA_GOTO(cudaEventSynchronize(d->ev[MD_EV_CHUNK + k]), msg, fail);
        d->host_wait_s += wall_s() - t1;
        if (lo >= hi)
            continue;
        t1 = wall_s();
        for (int i = lo; i < hi; i++)
            layer[i] = kc[cell[i]]++;
        d->host_loop_s += wall_s() - t1;
        if (d->instr)
            KB_CUDA_GOTO(cudaEventRecord(d->ev[MD_EV_OUT + 2 * k], s), msg, fail);
        KB_CUDA_GOTO(cudaMemcpyAsync(v->layer + lo, layer + lo, (size_t)(hi - lo) * sizeof(int),
                                     cudaMemcpyHostToDevice, s),
                     msg, fail);
        if (hi == n) /* the last piece: k_c too */
            KB_CUDA_GOTO(cudaMemcpyAsync(v->kc, kc, (size_t)v->ncell * sizeof(int),
                                         cudaMemcpyHostToDevice, s),
                         msg, fail);
        if (d->instr)
            KB_CUDA_GOTO(cudaEventRecord(d->ev[MD_EV_OUT + 2 * k + 1], s), msg, fail);
    }
    d->host_this_step = d->instr;
    d->host_calls++;
fail:
    d->host_s += wall_s() - t0;
    return rc;
}

/* The rebuild kernels of the strategy (each returns at once when no rebuild is due). */
static int rebuild_phase(md_dev *d, cudaStream_t s, char *msg)
{
    md_view v = d->v;
    int rc = KB_OK;
    if (d->strategy == MD_DEV_ALLPAIRS) {
        KB_CUDA_TRY(md_launch_finish_rebuild(v, s), msg);
        return KB_OK;
    }
    if (d->host_layers) {
        KB_CUDA_TRY(md_launch_cells(v, s), msg);
        if (d->h_ctl->reorder_now) /* the reordering's slots; the host then assigns layers */
            KB_CUDA_TRY(md_launch_layers_atomic(v, s), msg);
    } else {
        KB_CUDA_TRY(md_launch_cells_slots(v, s), msg);
    }
    if (v.cell_start)
        KB_CUDA_TRY(md_launch_reorder(v, s), msg);
    if (d->host_layers && (rc = host_layer_assign(d, s, msg)))
        return rc;
    if (v.H) /* N_l comes from the neighbour count's pass over kc */
        KB_CUDA_TRY(md_launch_hfill(v, s), msg);
    if (d->instr)
        KB_CUDA_TRY(cudaEventRecord(d->ev[MD_EV_BUILD0], s), msg);
    switch (d->strategy) {
    case MD_DEV_CELL_BLOCK:
        KB_CUDA_TRY(md_launch_build_cell_block(v, s), msg);
        break;
    case MD_DEV_SORTED:
        KB_CUDA_TRY(md_launch_build_sorted(v, s), msg);
        break;
    default:
        KB_CUDA_TRY(md_launch_build_layer_matrix(v, s), msg);
        break;
    }
    if (d->instr) {
        KB_CUDA_TRY(cudaEventRecord(d->ev[MD_EV_BUILD1], s), msg);
        d->build_this_step = 1;
    }
    KB_CUDA_TRY(md_launch_finish_rebuild(v, s), msg);
    return KB_OK;
}

static int force_phase(md_dev *d, cudaStream_t s, char *msg)
{
    if (d->strategy == MD_DEV_ALLPAIRS)
        KB_CUDA_TRY(md_launch_force_allpairs(d->v, s), msg);
    else
        KB_CUDA_TRY(md_launch_force_w(d->v, s), msg);
    return KB_OK;
}

/* Host-layer strategies: whether the device decided on a rebuild (reads the control block). */
static int rebuild_due(md_dev *d, cudaStream_t s, int *due, char *msg)
{
    KB_CUDA_TRY(cudaMemcpyAsync(d->h_ctl, d->v.ctl, sizeof(md_ctl), cudaMemcpyDeviceToHost, s),
                msg);
    KB_CUDA_TRY(cudaStreamSynchronize(s), msg);
    *due = d->h_ctl->rebuild;
    return KB_OK;
}

static double ev_s(md_dev *d, int a, int b)
{
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, d->ev[a], d->ev[b]);
    return 1e-3 * ms;
}

/* An instrumented step's copy and build events, once the step has synchronised. */
static void instr_collect(md_dev *d, md_timing *t)
{
    if (d->build_this_step)
        t->build += ev_s(d, MD_EV_BUILD0, MD_EV_BUILD1);
    if (d->host_this_step) {
        t->copy_in += ev_s(d, MD_EV_IN0, MD_EV_IN1);
        for (int k = 0; k < MD_HOST_CHUNKS; k++)
            if (k * ((d->v.n + MD_HOST_CHUNKS - 1) / MD_HOST_CHUNKS) < d->v.n)
                t->copy_out += ev_s(d, MD_EV_OUT + 2 * k, MD_EV_OUT + 2 * k + 1);
    }
    d->build_this_step = d->host_this_step = 0;
}

int md_dev_steps(md_dev *d, int steps, cudaStream_t s, md_timing *t, char *msg)
{
    int rc = KB_OK;
    double host0 = d->host_s, wait0 = d->host_wait_s, loop0 = d->host_loop_s;
    long long calls0 = d->host_calls;
    md_ctl c0;
    if (t && (rc = md_dev_read_ctl(d, &c0, s, msg)))
        return rc;
    d->instr = t != NULL;
    d->build_this_step = d->host_this_step = 0;
    for (int k = 0; k < steps; k++) {
        int due = 1;
        if (t)
            KB_CUDA_GOTO(cudaEventRecord(d->ev[0], s), msg, fail);
        KB_CUDA_GOTO(md_launch_first_half(d->v, s), msg, fail);
        if (t)
            KB_CUDA_GOTO(cudaEventRecord(d->ev[1], s), msg, fail);
        if (d->host_layers && (rc = rebuild_due(d, s, &due, msg)))
            goto fail;
        if (due && (rc = rebuild_phase(d, s, msg)))
            goto fail;
        if (t)
            KB_CUDA_GOTO(cudaEventRecord(d->ev[2], s), msg, fail);
        if ((rc = force_phase(d, s, msg)))
            goto fail;
        if (t)
            KB_CUDA_GOTO(cudaEventRecord(d->ev[3], s), msg, fail);
        KB_CUDA_GOTO(md_launch_second_half(d->v, s), msg, fail); /* ends the step too */
        if (t) {
            KB_CUDA_GOTO(cudaEventRecord(d->ev[4], s), msg, fail);
            KB_CUDA_GOTO(cudaEventSynchronize(d->ev[4]), msg, fail);
            t->nbr += ev_s(d, 1, 2);
            t->force += ev_s(d, 2, 3);
            t->total += ev_s(d, 0, 4);
            t->steps++;
            instr_collect(d, t);
        }
    }
    if (t) {
        md_ctl c1;
        t->host += d->host_s - host0;
        t->host_wait += d->host_wait_s - wait0;
        t->host_loop += d->host_loop_s - loop0;
        t->host_calls += d->host_calls - calls0;
        if ((rc = md_dev_read_ctl(d, &c1, s, msg)))
            goto fail;
        t->builds += c1.builds - c0.builds;
    }
fail:
    d->instr = 0;
    return rc;
}

/* A forced rebuild (reordering first when asked) and the forces. */
static int rebuild_forced(md_dev *d, int reorder, cudaStream_t s, char *msg)
{
    int rc;
    KB_CUDA_TRY(md_launch_force_rebuild(d->v, reorder, s), msg);
    if (d->host_layers) {
        int due;
        if ((rc = rebuild_due(d, s, &due, msg)))
            return rc;
    }
    if ((rc = rebuild_phase(d, s, msg)))
        return rc;
    return force_phase(d, s, msg);
}

int md_dev_rebuild_now(md_dev *d, cudaStream_t s, char *msg)
{
    return rebuild_forced(d, 0, s, msg);
}

int md_dev_load(md_dev *d, const float *r4, const float *v4, cudaStream_t s, char *msg)
{
    md_view *v = &d->v;
    size_t nb = (size_t)v->n * sizeof(float4);
    KB_CUDA_TRY(cudaMemcpyAsync(v->r, r4, nb, cudaMemcpyHostToDevice, s), msg);
    KB_CUDA_TRY(cudaMemcpyAsync(v->v, v4, nb, cudaMemcpyHostToDevice, s), msg);
    KB_CUDA_TRY(cudaMemsetAsync(v->ctl, 0, sizeof(md_ctl), s), msg);
    if (v->kc) /* the device-layer strategies' first atomic slots count from 0 */
        KB_CUDA_TRY(cudaMemsetAsync(v->kc, 0, (size_t)v->ncell * sizeof(int), s), msg);
    KB_CUDA_TRY(cudaMemsetAsync(v->hist, 0, 3 * (size_t)v->hist_len * sizeof(double), s), msg);
    /* The pageable copies above may return before the data has moved: wait before the host's
     * buffers can change, and so the first step sees the new state. */
    KB_CUDA_TRY(cudaStreamSynchronize(s), msg);
    /* With reordering on, the state starts sorted by cell, as the paper's runs are in steady
     * state (reordered every 100 steps over 6000): a sample of 100 steps from the lattice's
     * order would otherwise never reach a reordering.  reorder = 0 keeps the stored order
     * (Table 8, the shuffled start). */
    return rebuild_forced(d, v->reorder > 0, s, msg);
}

int md_dev_rescale(md_dev *d, cudaStream_t s, char *msg)
{
    KB_CUDA_TRY(md_launch_rescale(d->v, s), msg);
    return KB_OK;
}

int md_dev_read_ctl(md_dev *d, md_ctl *out, cudaStream_t s, char *msg)
{
    KB_CUDA_TRY(cudaMemcpyAsync(d->h_ctl, d->v.ctl, sizeof(md_ctl), cudaMemcpyDeviceToHost, s),
                msg);
    KB_CUDA_TRY(cudaStreamSynchronize(s), msg);
    *out = *d->h_ctl;
    return KB_OK;
}

int md_prepare_device(const md_config *cfg, uint64_t seed, cudaStream_t s, md_point_state *ps,
                      char *msg)
{
    md_dev d;
    md_config c = *cfg;
    md_ctl ctl;
    double rn = cfg->rc + cfg->delta;
    int n = cfg->n, rc = KB_NOMEM;
    /* Capacities for a liquid of this density, generous: the lattice and the equilibrating
     * liquid are less clustered than that. */
    double per_cell = (double)n / cfg->ncell, per_sphere = 4.18879 * rn * rn * rn * cfg->rho;
    int lcap = (int)(2.0 * per_cell + 16), mcap = (int)(1.6 * per_sphere + 32);
    memset(&d, 0, sizeof d);
    if (md_point_lattice(cfg, seed, ps, msg))
        goto fail;
    ps->on_device = 1;
    c.reorder = 0; /* no atomics anywhere: the equilibrated state depends on the seed only */
    c.steps = 1;
    if ((rc = md_dev_create(&d, &c, MD_DEV_LAYER_MATRIX, lcap, mcap, msg)))
        goto fail;
    if ((rc = md_dev_load(&d, ps->r, ps->v, s, msg)))
        goto fail;
    for (int k = 1; k <= cfg->equil; k++) {
        if ((rc = md_dev_steps(&d, 1, s, NULL, msg)))
            goto fail;
        if (cfg->rescale_every > 0 && k % cfg->rescale_every == 0 &&
            (rc = md_dev_rescale(&d, s, msg)))
            goto fail;
    }
    if ((rc = md_dev_read_ctl(&d, &ctl, s, msg)))
        goto fail;
    if (ctl.overflow) {
        kb_msgf(msg,
                "equilibration overflowed its capacities (flags %d; layers %d, neighbours "
                "%d)",
                ctl.overflow, lcap, mcap);
        rc = KB_ERROR;
        goto fail;
    }
    KB_CUDA_GOTO(cudaMemcpy(ps->r, d.v.r, (size_t)n * sizeof(float4), cudaMemcpyDeviceToHost), msg,
                 fail);
    KB_CUDA_GOTO(cudaMemcpy(ps->v, d.v.v, (size_t)n * sizeof(float4), cudaMemcpyDeviceToHost), msg,
                 fail);
    for (int i = 0; i < n; i++)
        ps->r[4 * i + 3] = ps->v[4 * i + 3] = 0.0f;
    if (md_point_reference(ps, msg)) {
        rc = KB_NOMEM;
        goto fail;
    }
    rc = KB_OK;
fail:
    md_dev_destroy(&d);
    if (rc)
        md_point_free(ps);
    return rc;
}
