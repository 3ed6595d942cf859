/* A fake NVML (built as libnvidia-ml.so.1 in the build's tests/nvml folder) for the energy
 * tests: an energy counter that steps every FAKE_NVML_PERIOD_MS milliseconds (default 20) by
 * what FAKE_NVML_WATTS watts (default 80) draw in a period, from FAKE_NVML_START_MJ (default
 * 1000; near 2^64 it wraps) at the first call.  FAKE_NVML_MODE: "unsupported" (the counter
 * answers NVML_ERROR_NOT_SUPPORTED), "stuck" (it never moves), "no_device" (no GPU at the bus
 * id); anything else works. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

enum { SUCCESS = 0, NOT_SUPPORTED = 3, NOT_FOUND = 6 };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double setting(const char *name, double otherwise)
{
    const char *v = getenv(name);
    return v && v[0] ? strtod(v, NULL) : otherwise;
}

static int mode_is(const char *mode)
{
    const char *v = getenv("FAKE_NVML_MODE");
    return v && strcmp(v, mode) == 0;
}

EXPORT int nvmlInit_v2(void)
{
    return SUCCESS;
}

EXPORT int nvmlDeviceGetHandleByPciBusId_v2(const char *bus, void **dev)
{
    (void)bus;
    if (mode_is("no_device"))
        return NOT_FOUND;
    *dev = (void *)1;
    return SUCCESS;
}

EXPORT int nvmlDeviceGetTotalEnergyConsumption(void *dev, unsigned long long *mj)
{
    static double first = -1;
    const char *start_text = getenv("FAKE_NVML_START_MJ");
    unsigned long long start = start_text && start_text[0] ? strtoull(start_text, NULL, 10) : 1000;
    double period = setting("FAKE_NVML_PERIOD_MS", 20) * 1e-3,
           watts = setting("FAKE_NVML_WATTS", 80);
    unsigned long long steps;
    (void)dev;
    if (mode_is("unsupported"))
        return NOT_SUPPORTED;
    if (first < 0)
        first = now();
    steps = mode_is("stuck") ? 0 : (unsigned long long)((now() - first) / period);
    /* Unsigned arithmetic: wraps past 2^64 as a real counter would. */
    *mj = start + steps * (unsigned long long)(watts * period * 1000.0 + 0.5);
    return SUCCESS;
}

EXPORT int nvmlDeviceGetEnforcedPowerLimit(void *dev, unsigned int *mw)
{
    (void)dev;
    *mw = 700000;
    return SUCCESS;
}

EXPORT const char *nvmlErrorString(int ret)
{
    static char text[64];
    snprintf(text, sizeof text, "fake NVML error %d", ret);
    return text;
}
