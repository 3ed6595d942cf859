/* The host speed probe of the env record (see hostspeed.h). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "hostspeed.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
    COMPUTE_STEPS = 1 << 20, /* about 3 ms on a current core */
    MEMORY_BYTES = 64 << 20, /* beyond any last-level cache of one socket */
    TRIES = 7                /* the best of these is kept */
};

static volatile double sink; /* keeps the probes' results alive */

static double thread_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Dependent steps: each needs the one before, so the time is the core's latency and clock. */
static double compute_once(void)
{
    uint64_t x = 88172645463325252ull;
    double a = 1.0, t0 = thread_seconds();
    for (long i = 0; i < COMPUTE_STEPS; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        a = a * 0.999999 + (double)(x & 0xffu) * 1e-9;
    }
    sink = a + (double)x;
    return thread_seconds() - t0;
}

static double memory_once(const uint64_t *buf, size_t n)
{
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    double t0 = thread_seconds();
    for (size_t i = 0; i + 4 <= n; i += 4) {
        s0 += buf[i];
        s1 += buf[i + 1];
        s2 += buf[i + 2];
        s3 += buf[i + 3];
    }
    sink = (double)(s0 ^ s1 ^ s2 ^ s3);
    return thread_seconds() - t0;
}

json_t *kbi_host_speed_probe(void)
{
    size_t n = MEMORY_BYTES / sizeof(uint64_t);
    uint64_t *buf = malloc(MEMORY_BYTES);
    double compute = 0, memory = 0;
    json_t *probe;
    if (!buf)
        return NULL;
    for (size_t i = 0; i < n; i++) /* touched once, so no try pays for the first faults */
        buf[i] = i * 2654435761u;
    for (int k = 0; k < TRIES; k++) {
        double c = compute_once(), m = memory_once(buf, n);
        compute = k == 0 || c < compute ? c : compute;
        memory = k == 0 || m < memory ? m : memory;
    }
    free(buf);
    probe = json_object();
    json_object_set_new(probe, "compute_ms", json_real(1e3 * compute));
    json_object_set_new(probe, "memory_gbs",
                        json_real(memory > 0 ? 1e-9 * MEMORY_BYTES / memory : 0));
    json_object_set_new(probe, "method",
                        json_string("2^20 dependent xorshift and multiply-add steps; a sum over "
                                    "64 MiB; the thread's CPU time, best of 7"));
    return probe;
}

/* The ratio of two positive figures, the larger over the smaller; 0 when either is not. */
static double apart(double a, double b)
{
    if (!(a > 0 && b > 0))
        return 0;
    return a > b ? a / b : b / a;
}

int kbi_host_speeds_differ(double compute_ms_a, double memory_gbs_a, double compute_ms_b,
                           double memory_gbs_b, double *compute, double *memory)
{
    *compute = apart(compute_ms_a, compute_ms_b);
    *memory = apart(memory_gbs_a, memory_gbs_b);
    return *compute > 1.2 || *memory > 1.5;
}
