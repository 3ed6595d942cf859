/* A device case's energy windows: the timed work replayed back to back on the harness's
 * stream (the hot batch's graph, or its runs; in cold mode each run after its L2 flush),
 * kept a few chunks ahead of the GPU while the counter is polled, until a window between two
 * of its steps is long enough (energy.h). */
#define _POSIX_C_SOURCE 200809L
#include "energy_case.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common.h"
#include "kbench/cuda_check.h"

/* Work is enqueued in chunks of about this many seconds, at most AHEAD chunks ahead of the
 * GPU: the stream never drains while the host polls the counter, and the host never blocks
 * on a full launch queue. */
#define CHUNK_S 0.01
#define AHEAD 4
#define MAX_UNITS_PER_CHUNK (1 << 20)

/* One unit of work: the flush (cold mode), then the graph or w->runs runs. */
static int enqueue_unit(const kbi_energy_work *w, char *msg)
{
    cudaStream_t s = (cudaStream_t)w->dev->stream;
    static unsigned char byte;
    if (w->flush)
        KB_CUDA_TRY(cudaMemsetAsync(w->dev->flush, byte++, w->dev->flush_bytes, s), msg);
    if (w->hot && w->hot->method == KBI_TIMING_GRAPH && w->runs > 0) {
        KB_CUDA_TRY(cudaGraphLaunch((cudaGraphExec_t)w->hot->graph, s), msg);
        return KB_OK;
    }
    for (int i = 0; i < w->runs; i++) {
        int rc = w->p->run(w->state, w->dev->stream, msg);
        if (rc != KB_OK)
            return rc;
    }
    return KB_OK;
}

/* What one window measured. */
typedef struct window_figures {
    double j_per_unit, watts, seconds, unit_s, period_s;
    long long units;
} window_figures;

/* Keeps the stream fed: enqueues chunks until AHEAD are outstanding, and retires the chunks
 * the GPU finished.  Returns KB_OK or a plugin/CUDA status. */
static int feed_stream(const kbi_energy_work *w, cudaEvent_t *ring, int per_chunk, size_t *chunks,
                       size_t *done, long long *units, char *msg)
{
    cudaError_t e = cudaSuccess;
    while (*chunks - *done < AHEAD) {
        for (int i = 0; i < per_chunk; i++) {
            int rc = enqueue_unit(w, msg);
            if (rc != KB_OK)
                return rc;
        }
        *units += per_chunk;
        KB_CUDA_TRY(cudaEventRecord(ring[*chunks % AHEAD], (cudaStream_t)w->dev->stream), msg);
        (*chunks)++;
    }
    while (*done < *chunks && (e = cudaEventQuery(ring[*done % AHEAD])) == cudaSuccess)
        (*done)++;
    if (*done < *chunks && e != cudaErrorNotReady)
        KB_CUDA_TRY(e, msg);
    return KB_OK;
}

/* The window's loop once the ring exists: feeds the stream, opens the window once the GPU has
 * started, feeds it readings until it is no longer open or `budget` seconds have passed.
 * Returns KB_OK with *st set, or a plugin/CUDA status. */
static int run_window(const kbi_energy_meter *m, const kbi_energy_work *w, cudaEvent_t *ring,
                      double min_s, double budget, kbi_energy_window *win, kbi_window_state *st,
                      long long *units, char *why, char *msg)
{
    const struct timespec poll = {0, (long)(KBI_ENERGY_POLL_S * 1e9)};
    cudaStream_t s = (cudaStream_t)w->dev->stream;
    int per_chunk = w->unit_s > 0 ? (int)fmin(ceil(CHUNK_S / w->unit_s), MAX_UNITS_PER_CHUNK) : 1;
    size_t chunks = 0, done = 0;
    double start = kbi_now(), now;
    int begun = 0, rc;
    unsigned long long mj;
    *st = KBI_WINDOW_OPEN;
    KB_CUDA_TRY(cudaEventRecord((cudaEvent_t)w->dev->start, s), msg);
    while (*st == KBI_WINDOW_OPEN) {
        if ((rc = feed_stream(w, ring, per_chunk > 0 ? per_chunk : 1, &chunks, &done, units,
                              msg)) != KB_OK)
            return rc;
        if (kbi_energy_read(m, &mj, why) != KBI_OK) {
            *st = KBI_WINDOW_UNREADABLE; /* why says what: no figure, not the case's failure */
            break;
        }
        now = kbi_now();
        if (!begun) {
            cudaError_t e = cudaEventQuery((cudaEvent_t)w->dev->start);
            if (e != cudaSuccess && e != cudaErrorNotReady)
                KB_CUDA_TRY(e, msg);
            if (e == cudaSuccess) {
                kbi_energy_window_begin(win, min_s, 0, now, mj);
                begun = 1;
            } else if (now - start > budget) {
                /* The GPU never reached the work: no window (said as one too short). */
                kbi_energy_window_begin(win, min_s, 0, start, mj);
                *st = kbi_energy_window_feed(win, now, mj, 0);
            }
        } else {
            *st = kbi_energy_window_feed(win, now, mj, now - start <= budget);
        }
        if (*st == KBI_WINDOW_OPEN)
            nanosleep(&poll, NULL);
    }
    KB_CUDA_TRY(cudaEventRecord((cudaEvent_t)w->dev->stop, s), msg);
    KB_CUDA_TRY(cudaEventSynchronize((cudaEvent_t)w->dev->stop), msg);
    return KB_OK;
}

/* One window of at least min_s.  Returns KB_OK with f filled, a positive kbi_window_state
 * with why set when the window gave no figure, or a plugin/CUDA status with msg set. */
static int one_window(const kbi_energy_meter *m, const kbi_energy_work *w, double min_s,
                      double budget, window_figures *f, char *why, char *msg)
{
    cudaEvent_t ring[AHEAD] = {0};
    kbi_energy_window win;
    kbi_window_state st = KBI_WINDOW_OPEN;
    float ms = 0;
    int rc = KB_OK, made = 0;
    memset(f, 0, sizeof *f);
    memset(&win, 0, sizeof win);
    rc = kbi_device_sync(w->dev, msg);
    for (; rc == KB_OK && made < AHEAD; made++)
        if (cudaEventCreateWithFlags(&ring[made], cudaEventDisableTiming) != cudaSuccess)
            rc = kb_cuda_fail(cudaGetLastError(), "cudaEventCreateWithFlags", __FILE__, __LINE__,
                              msg);
    if (rc == KB_OK)
        rc = run_window(m, w, ring, min_s, budget, &win, &st, &f->units, why, msg);
    if (rc == KB_OK && cudaEventElapsedTime(&ms, (cudaEvent_t)w->dev->start,
                                            (cudaEvent_t)w->dev->stop) != cudaSuccess)
        rc = kb_cuda_fail(cudaGetLastError(), "cudaEventElapsedTime", __FILE__, __LINE__, msg);
    if (rc != KB_OK)
        cudaStreamSynchronize((cudaStream_t)w->dev->stream);
    for (int i = 0; i < AHEAD; i++)
        if (ring[i])
            cudaEventDestroy(ring[i]);
    if (rc != KB_OK)
        return rc;
    if (st != KBI_WINDOW_DONE) {
        if (st != KBI_WINDOW_UNREADABLE)
            kbi_energy_window_why(&win, st, kbi_now(), why, KBI_ERR_SIZE);
        return (int)st;
    }
    /* The window lies inside the busy time, so its power is the work's; the GPU time per
     * unit over the whole replay (gaps included) makes it energy per unit. */
    f->unit_s = f->units > 0 ? (double)ms * 1e-3 / (double)f->units : NAN;
    f->watts = win.watts;
    f->seconds = win.seconds;
    f->period_s = win.period_s;
    f->j_per_unit = win.watts * f->unit_s;
    return KB_OK;
}

int kbi_energy_case(const kbi_energy_meter *m, const kbi_energy_work *w, double min_s,
                    int n_windows, double deadline, kbi_case_energy *e, char *msg)
{
    double j[KBI_ENERGY_MAX_WINDOWS], watts[KBI_ENERGY_MAX_WINDOWS], secs[KBI_ENERGY_MAX_WINDOWS],
        unit_s[KBI_ENERGY_MAX_WINDOWS], period = 0, t0 = kbi_now(), budget = 2 * min_s + 1.0;
    double per = w->runs > 0 ? (double)w->runs : 1.0; /* runs per unit (the flush alone: 1) */
    long long runs = 0;
    char why[KBI_ERR_SIZE] = "";
    size_t k = 0;
    if (n_windows > KBI_ENERGY_MAX_WINDOWS)
        n_windows = KBI_ENERGY_MAX_WINDOWS;
    for (int i = 0; i < n_windows; i++) {
        window_figures f;
        int rc;
        if (kbi_now() + budget > deadline) {
            if (k == 0)
                snprintf(why, sizeof why,
                         "no time left in the case's timeout for an energy window (%.3g s)",
                         budget);
            break;
        }
        rc = one_window(m, w, min_s, budget, &f, why, msg);
        if (rc < 0)
            return rc;
        if (rc > 0)
            break; /* a window that came out short or stuck would again */
        j[k] = f.j_per_unit / per;
        watts[k] = f.watts;
        secs[k] = f.seconds;
        unit_s[k] = f.unit_s / per;
        period += f.period_s;
        runs += f.units * (long long)per;
        k++;
    }
    if (k > 0) {
        kbi_energy_summarise(e, j, watts, secs, unit_s, k);
        e->period_s = period / (double)k;
        e->runs = runs;
    } else {
        kbi_energy_not_measured(e, why);
    }
    e->extra_s = kbi_now() - t0;
    return KB_OK;
}
