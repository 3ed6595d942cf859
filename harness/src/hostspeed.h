/* A short measure of the host's own speed, recorded in the env record so that `compare` can
 * tell two hosts apart that name the same CPU (two leases of one VM type can run host code
 * 1.3-4.8x apart with the same model, signature and cores). */
#ifndef KBENCH_HOSTSPEED_H
#define KBENCH_HOSTSPEED_H

#include <jansson.h>

/* The probe as {"compute_ms", "memory_gbs", "method"}: a fixed chain of dependent integer and
 * floating-point steps, and a sum over a buffer larger than a cache, each timed by the calling
 * thread's CPU time (waiting for a core is not counted: that is the case records' cpu_wait)
 * and the best of several tries kept.  Costs about 0.1 s.  NULL if the buffer cannot be
 * allocated. */
json_t *kbi_host_speed_probe(void);

/* Whether two probes say different hosts: compute more than 1.2x apart (it reads within 1% of
 * itself on one host), or memory more than 1.5x apart (one host's reading moves by up to 20%
 * between processes, with where the buffer's pages land).  *compute and *memory get the
 * ratios (the slower over the faster, >= 1; 0 when either side lacks a figure, and then the
 * probes never differ). */
int kbi_host_speeds_differ(double compute_ms_a, double memory_gbs_a, double compute_ms_b,
                           double memory_gbs_b, double *compute, double *memory);

#endif
