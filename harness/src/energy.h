/* The board's energy, from NVML's total-energy counter (millijoules since the driver loaded;
 * Volta and newer): the counter through dlopen, windows between two of its steps, and the
 * figures of a case made from several windows.
 *
 * The counter does not move continuously: on the H200 it steps every ~100 ms, so a reading
 * taken at a random moment is up to one period stale, and a 2 s window read that way is off
 * by up to 5% at each end.  A window here opens and closes on a step instead: the counter is
 * polled (about every KBI_ENERGY_POLL_S) while the work runs, the window opens at the first
 * change seen and closes at the first change after `min_s`, and the energy between two
 * changes is divided by the host time between them.  What is left is the poll's latency at
 * each end, KBI_ENERGY_POLL_S over the window's length.  The work keeps running past both
 * ends, so the window holds no idle time and no ramp. */
#ifndef KBENCH_ENERGY_H
#define KBENCH_ENERGY_H

#include <jansson.h>
#include <stddef.h>

#include "results.h"

/* How often a window reads the counter while it waits for a step (seconds). */
#define KBI_ENERGY_POLL_S 5e-4
/* The defaults of [run] energy_window and energy_windows. */
#define KBI_ENERGY_WINDOW_S 2.0
#define KBI_ENERGY_WINDOWS 3
/* The most windows a case takes ([run] energy_windows). */
#define KBI_ENERGY_MAX_WINDOWS 100

/* NVML's answer for a counter the GPU does not have (nvml.h: NVML_ERROR_NOT_SUPPORTED). */
#define KBI_NVML_ERROR_NOT_SUPPORTED 3

/* The energy counter of one GPU. */
typedef struct kbi_energy_meter {
    int ok;        /* the counter can be read */
    char why[256]; /* why not, when !ok */
    void *dev;     /* nvmlDevice_t */
    int (*total_energy)(void *dev, unsigned long long *mj);
    int (*power_limit)(void *dev, unsigned int *mw);
    const char *(*error_string)(int ret);
} kbi_energy_meter;

/* Opens NVML and the GPU at pci_bus_id (as cudaDeviceGetPCIBusId writes it) and reads the
 * counter once.  The library is $KBENCH_NVML when set (the tests' fake NVML), else
 * libnvidia-ml.so.1.  Returns 1 when the counter can be read, else 0 with m->why saying why
 * (no NVML, an NVML without the call, a GPU that does not have the counter: "not
 * supported"). */
int kbi_energy_open(kbi_energy_meter *m, const char *pci_bus_id);

/* The counter now, in millijoules.  Returns KBI_OK, or KBI_ERR with why (KBI_ERR_SIZE) set. */
int kbi_energy_read(const kbi_energy_meter *m, unsigned long long *mj, char *why);

/* The board's enforced power limit in watts, 0 when NVML does not say. */
double kbi_energy_power_limit(const kbi_energy_meter *m);

/* ---- one window ---- */

typedef enum kbi_window_state {
    KBI_WINDOW_OPEN = 0,  /* waiting for its first or its last step: feed it more */
    KBI_WINDOW_DONE,      /* closed on a step at least min_s after it opened */
    KBI_WINDOW_SHORT,     /* the work ended before the window could close */
    KBI_WINDOW_STUCK,     /* the counter did not change for stuck_s */
    KBI_WINDOW_BAD,       /* the counter moved by more than any board draws (reset, or garbage) */
    KBI_WINDOW_UNREADABLE /* the counter could not be read (the caller's, not the window's) */
} kbi_window_state;

typedef struct kbi_energy_window {
    double min_s;   /* the least length between the two steps */
    double stuck_s; /* no change for this long: the counter does not advance */
    int state;      /* kbi_window_state */
    int opened;
    unsigned long long last, e0;
    double begin_t, last_change_t, t0;
    size_t steps; /* changes seen since it opened */
    /* When DONE: */
    double joules, seconds, watts;
    double period_s; /* mean time between changes inside the window */
} kbi_energy_window;

/* Starts a window with the first reading (t in seconds, mj the counter), taken while the
 * work runs.  stuck_s <= 0: 1 s plus half of min_s. */
void kbi_energy_window_begin(kbi_energy_window *w, double min_s, double stuck_s, double t,
                             unsigned long long mj);

/* Feeds one later reading, `running` nonzero when the work was still running when it was
 * taken.  The counter may wrap (the difference is taken modulo 2^64).  Returns the window's
 * state; once it is not OPEN, later calls return the same. */
kbi_window_state kbi_energy_window_feed(kbi_energy_window *w, double t, unsigned long long mj,
                                        int running);

/* Why a window in state s gave no figure, one line into buf. */
void kbi_energy_window_why(const kbi_energy_window *w, kbi_window_state s, double now, char *buf,
                           size_t n);

/* The board at rest: one window of min_s with nothing running (the first step to the first
 * step past min_s).  Returns KBI_OK with *watts and *period_s (the counter's update period),
 * or KBI_ERR with why (KBI_ERR_SIZE) set. */
int kbi_energy_idle(const kbi_energy_meter *m, double min_s, double *watts, double *period_s,
                    char *why);

/* The env record's "energy" object for the GPU at pci_bus_id: "counter" (whether it can be
 * read), "why" (when not), "idle_w" (kbi_energy_idle over window_s), "idle_window_s",
 * "period_s", "power_limit_w" (null where unknown). */
json_t *kbi_energy_env_json(const char *pci_bus_id, double window_s);

/* ---- a case's figures ---- */

/* The figures of e from n windows, window i giving joules per run j[i] at power watts[i] over
 * seconds[i] (the window) with run_s[i] seconds per run: the means, and as uncertainty the
 * standard error over the windows combined with the poll's latency at both ends of a window
 * (NAN with one window).  Sets e->measured. */
void kbi_energy_summarise(kbi_case_energy *e, const double *j, const double *watts,
                          const double *seconds, const double *run_s, size_t n);

/* Subtracts the energy of the L2 flush that preceded every run in cold mode (flush_j joules,
 * uncertainty flush_u) from e's figures.  Where what is left is within 3 combined
 * uncertainties of zero, the run's energy cannot be told from the flush's: e is then not
 * measured, and says why. */
void kbi_energy_subtract_flush(kbi_case_energy *e, double flush_j, double flush_u);

/* Marks e not measured, with why. */
void kbi_energy_not_measured(kbi_case_energy *e, const char *why);

#endif
