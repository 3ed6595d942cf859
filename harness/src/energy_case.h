/* A device case's energy: its timed work replayed back to back while the board's energy
 * counter is read between two of its steps (energy.h), after the case's timing, so that the
 * timing is unaffected. */
#ifndef KBENCH_ENERGY_CASE_H
#define KBENCH_ENERGY_CASE_H

#include "energy.h"
#include "timer.h"

/* The work of a window, unit by unit: in cold mode (flush set) the L2 flush, then `runs` runs
 * (runs 0: the flush alone, to measure it); in hot mode the batch the case was timed with
 * (hot->graph replayed when the method is graph, else hot->batch runs launched on the
 * stream). */
typedef struct kbi_energy_work {
    kbi_device *dev;
    const kb_plugin *p;
    void *state;
    const kbi_hot *hot; /* NULL in cold mode */
    int flush;
    int runs;      /* runs per unit */
    double unit_s; /* a unit's expected seconds (from the timing): sizes the chunks */
} kbi_energy_work;

/* Up to n_windows windows of at least min_s, each within 2 min_s + 1 s, and none begun past
 * `deadline` (kbi_now() seconds): fills e with joules and seconds per run (of a unit over
 * its runs; the flush alone: per flush) and the power, or marks it not measured with the
 * reason (a window too short, a counter that does not step, no time left).  Returns KB_OK,
 * or the plugin's or a CUDA status with msg set when the work itself failed. */
int kbi_energy_case(const kbi_energy_meter *m, const kbi_energy_work *w, double min_s,
                    int n_windows, double deadline, kbi_case_energy *e, char *msg);

#endif
