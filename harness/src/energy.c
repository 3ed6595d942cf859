/* The board's energy counter through NVML (dlopen), windows between its steps, and a case's
 * energy figures from several windows. */
#define _POSIX_C_SOURCE 200809L
#include "energy.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common.h"

/* No board draws this much: a window that reads more saw a counter reset or garbage. */
#define MAX_PLAUSIBLE_WATTS 1e5

/* The NVML entry point `name` of lib into *fn; nonzero when found. */
static int find(void *lib, const char *name, void *fn)
{
    *(void **)fn = dlsym(lib, name);
    return *(void **)fn != NULL;
}

int kbi_energy_open(kbi_energy_meter *m, const char *pci_bus_id)
{
    const char *path = getenv("KBENCH_NVML");
    int (*init)(void) = NULL, (*by_pci)(const char *, void **) = NULL, ret;
    unsigned long long mj;
    void *lib;
    memset(m, 0, sizeof *m);
    if (!path || !path[0])
        path = "libnvidia-ml.so.1";
    /* Kept open for the process: NVML is loaded once, as for the clocks (env.c). */
    lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(m->why, sizeof m->why, "no NVML (%.200s)", dlerror());
        return 0;
    }
    find(lib, "nvmlErrorString", &m->error_string);
    find(lib, "nvmlDeviceGetEnforcedPowerLimit", &m->power_limit);
    if (!find(lib, "nvmlInit_v2", &init) ||
        !find(lib, "nvmlDeviceGetHandleByPciBusId_v2", &by_pci) ||
        !find(lib, "nvmlDeviceGetTotalEnergyConsumption", &m->total_energy)) {
        snprintf(m->why, sizeof m->why,
                 "%s has no nvmlDeviceGetTotalEnergyConsumption (an NVML older than the "
                 "energy counter)",
                 path);
        return 0;
    }
    if ((ret = init()) != 0 || (ret = by_pci(pci_bus_id, &m->dev)) != 0) {
        snprintf(m->why, sizeof m->why, "NVML cannot open the GPU at %s: %s", pci_bus_id,
                 m->error_string ? m->error_string(ret) : "error");
        return 0;
    }
    ret = m->total_energy(m->dev, &mj);
    if (ret == KBI_NVML_ERROR_NOT_SUPPORTED) {
        snprintf(m->why, sizeof m->why,
                 "this GPU has no energy counter (nvmlDeviceGetTotalEnergyConsumption: not "
                 "supported; Volta and newer have one)");
        return 0;
    }
    if (ret != 0) {
        snprintf(m->why, sizeof m->why, "nvmlDeviceGetTotalEnergyConsumption failed: %s",
                 m->error_string ? m->error_string(ret) : "error");
        return 0;
    }
    m->ok = 1;
    return 1;
}

int kbi_energy_read(const kbi_energy_meter *m, unsigned long long *mj, char *why)
{
    int ret;
    if (!m->ok) {
        kbi_errf(why, "%s", m->why[0] ? m->why : "no energy counter");
        return KBI_ERR;
    }
    if ((ret = m->total_energy(m->dev, mj)) != 0) {
        kbi_errf(why, "nvmlDeviceGetTotalEnergyConsumption failed: %s",
                 m->error_string ? m->error_string(ret) : "error");
        return KBI_ERR;
    }
    return KBI_OK;
}

double kbi_energy_power_limit(const kbi_energy_meter *m)
{
    unsigned int mw = 0;
    if (!m->ok || !m->power_limit || m->power_limit(m->dev, &mw) != 0)
        return 0.0;
    return mw / 1000.0;
}

/* ---- one window ---- */

void kbi_energy_window_begin(kbi_energy_window *w, double min_s, double stuck_s, double t,
                             unsigned long long mj)
{
    memset(w, 0, sizeof *w);
    w->min_s = min_s;
    w->stuck_s = stuck_s > 0 ? stuck_s : 1.0 + 0.5 * min_s;
    w->last = mj;
    w->begin_t = w->last_change_t = t;
    w->joules = w->seconds = w->watts = w->period_s = NAN;
}

/* The window in state s, remembered once it is not open: later feeds return it. */
static kbi_window_state settle(kbi_energy_window *w, kbi_window_state s)
{
    w->state = (int)s;
    return s;
}

kbi_window_state kbi_energy_window_feed(kbi_energy_window *w, double t, unsigned long long mj,
                                        int running)
{
    if (w->state != KBI_WINDOW_OPEN)
        return (kbi_window_state)w->state;
    if (mj == w->last) {
        if (!running)
            return settle(w, KBI_WINDOW_SHORT);
        return settle(w, t - w->last_change_t > w->stuck_s ? KBI_WINDOW_STUCK : KBI_WINDOW_OPEN);
    }
    /* A change: the counter's value at a step covers the time up to it.  A change seen after
     * the work ended may hold idle time, so it neither opens nor closes a window. */
    if (!running)
        return settle(w, KBI_WINDOW_SHORT);
    w->last = mj;
    w->last_change_t = t;
    if (!w->opened) {
        w->opened = 1;
        w->e0 = mj;
        w->t0 = t;
        return KBI_WINDOW_OPEN;
    }
    w->steps++;
    if (t - w->t0 < w->min_s)
        return KBI_WINDOW_OPEN;
    /* Unsigned difference: right across a wrap of the 64-bit counter. */
    w->joules = (double)(mj - w->e0) / 1000.0;
    w->seconds = t - w->t0;
    w->watts = w->joules / w->seconds;
    w->period_s = w->seconds / (double)w->steps;
    if (!(w->watts < MAX_PLAUSIBLE_WATTS))
        return settle(w, KBI_WINDOW_BAD);
    return settle(w, KBI_WINDOW_DONE);
}

void kbi_energy_window_why(const kbi_energy_window *w, kbi_window_state s, double now, char *buf,
                           size_t n)
{
    switch (s) {
    case KBI_WINDOW_SHORT:
        if (!w->opened && w->steps == 0)
            snprintf(buf, n,
                     "window too short to measure: the energy counter did not step in the %.3g s "
                     "the work ran (a window needs two steps at least %g s apart)",
                     now - w->begin_t, w->min_s);
        else
            snprintf(buf, n,
                     "window too short to measure: the work ended %.3g s after the energy "
                     "counter's first step, before a step %g s later",
                     now - w->t0, w->min_s);
        break;
    case KBI_WINDOW_STUCK:
        snprintf(buf, n, "the energy counter did not change for %.3g s while the GPU worked",
                 now - w->last_change_t);
        break;
    case KBI_WINDOW_BAD:
        snprintf(buf, n,
                 "the energy counter moved by %.4g J in %.3g s (%.3g W): reset or unreadable",
                 w->joules, w->seconds, w->watts);
        break;
    default:
        snprintf(buf, n, "%s", "");
    }
}

int kbi_energy_idle(const kbi_energy_meter *m, double min_s, double *watts, double *period_s,
                    char *why)
{
    const struct timespec poll = {0, (long)(KBI_ENERGY_POLL_S * 1e9)};
    kbi_energy_window w;
    kbi_window_state st = KBI_WINDOW_OPEN;
    unsigned long long mj;
    char line[256];
    if (kbi_energy_read(m, &mj, why) != KBI_OK)
        return KBI_ERR;
    kbi_energy_window_begin(&w, min_s, 0, kbi_now(), mj);
    while (st == KBI_WINDOW_OPEN) {
        nanosleep(&poll, NULL);
        if (kbi_energy_read(m, &mj, why) != KBI_OK)
            return KBI_ERR;
        st = kbi_energy_window_feed(&w, kbi_now(), mj, 1);
    }
    if (st != KBI_WINDOW_DONE) {
        kbi_energy_window_why(&w, st, kbi_now(), line, sizeof line);
        kbi_errf(why, "idle power: %s", line);
        return KBI_ERR;
    }
    *watts = w.watts;
    *period_s = w.period_s;
    return KBI_OK;
}

json_t *kbi_energy_env_json(const char *pci_bus_id, double window_s)
{
    json_t *o = json_object();
    kbi_energy_meter m;
    double watts = NAN, period = NAN, limit;
    char why[KBI_ERR_SIZE] = "";
    int ok = kbi_energy_open(&m, pci_bus_id);
    json_object_set_new(o, "counter", json_boolean(ok));
    if (!ok)
        snprintf(why, sizeof why, "%s", m.why);
    else if (kbi_energy_idle(&m, window_s, &watts, &period, why) != KBI_OK)
        watts = period = NAN;
    limit = kbi_energy_power_limit(&m);
    if (why[0])
        json_object_set_new(o, "why", json_string(why));
    json_object_set_new(o, "idle_w", isfinite(watts) ? json_real(watts) : json_null());
    json_object_set_new(o, "idle_window_s", json_real(window_s));
    json_object_set_new(o, "period_s", isfinite(period) ? json_real(period) : json_null());
    json_object_set_new(o, "power_limit_w", limit > 0 ? json_real(limit) : json_null());
    return o;
}

/* ---- a case's figures ---- */

/* Mean and standard error of x[0..n) (NAN with fewer than two). */
static void mean_se(const double *x, size_t n, double *mean, double *se)
{
    double s = 0, ss = 0;
    for (size_t i = 0; i < n; i++)
        s += x[i];
    *mean = n ? s / (double)n : NAN;
    for (size_t i = 0; i < n; i++)
        ss += (x[i] - *mean) * (x[i] - *mean);
    *se = n >= 2 ? sqrt(ss / (double)(n - 1) / (double)n) : NAN;
}

void kbi_energy_summarise(kbi_case_energy *e, const double *j, const double *watts,
                          const double *seconds, const double *run_s, size_t n)
{
    double se_j, se_w, window, se_window, run, se_run, latency;
    if (n == 0) {
        kbi_energy_not_measured(e, "no energy window was measured");
        return;
    }
    mean_se(j, n, &e->j_per_run, &se_j);
    mean_se(watts, n, &e->watts, &se_w);
    mean_se(seconds, n, &window, &se_window);
    mean_se(run_s, n, &run, &se_run);
    /* Each end of a window is seen up to one poll late: a relative error of two polls over
     * the window, on every window alike. */
    latency = 2 * KBI_ENERGY_POLL_S / window;
    e->j_per_run_u = sqrt(se_j * se_j + pow(latency * e->j_per_run, 2));
    e->watts_u = sqrt(se_w * se_w + pow(latency * e->watts, 2));
    e->window_s = window;
    e->run_s = run;
    e->windows = (long)n;
    e->measured = 1;
    e->why[0] = '\0';
    (void)se_window;
    (void)se_run;
}

void kbi_energy_subtract_flush(kbi_case_energy *e, double flush_j, double flush_u)
{
    double u;
    if (!e->measured)
        return;
    e->j_per_run -= flush_j;
    u = e->j_per_run_u = sqrt(e->j_per_run_u * e->j_per_run_u + flush_u * flush_u);
    e->flush_j = flush_j;
    if (isnan(u) || !(e->j_per_run > 3 * u)) {
        char why[sizeof e->why];
        snprintf(why, sizeof why,
                 "cold mode: the run's energy (%.4g J of the %.4g J each run and its L2 flush "
                 "took, ± %.2g) cannot be told from the flush's",
                 e->j_per_run, e->j_per_run + flush_j, u);
        kbi_energy_not_measured(e, why);
    }
}

void kbi_energy_not_measured(kbi_case_energy *e, const char *why)
{
    double extra = e->extra_s;
    memset(e, 0, sizeof *e);
    e->j_per_run = e->j_per_run_u = e->watts = e->watts_u = e->run_s = e->window_s = e->period_s =
        NAN;
    e->extra_s = extra;
    snprintf(e->why, sizeof e->why, "%s", why && why[0] ? why : "not measured");
}
