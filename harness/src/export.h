/* `kbench export RESULTS... --format gbench|bmf|gab`: the measured cases of a run in the
 * formats CI trackers ingest, one writer per format:
 *
 *   gbench  Google Benchmark's JSON (export_gbench.c): read by github-action-benchmark's
 *           `googlecpp` tool and by Google Benchmark's tools/compare.py
 *   bmf     Bencher Metric Format (export_bmf.c): read by `bencher run --adapter json`
 *   gab     github-action-benchmark's custom arrays (export_gab.c): times (and metrics
 *           where lower is better) for `customSmallerIsBetter`, rates (and metrics where
 *           higher is better) for `customBiggerIsBetter`, as two files
 *
 * Every format names a case by its id, and gives its median time per run; the interval is
 * the 95% confidence interval of the median (stats.h) where the format has room for one.
 * Cases not measured (any status but ok, or a --sanitize run's times) are left out, each
 * named in a note: a tracker would chart a failed case's missing time as a speed-up. */
#ifndef KBENCH_EXPORT_H
#define KBENCH_EXPORT_H

#include <jansson.h>

#include "common.h"
#include "results.h"

/* Bencher's longest benchmark name; a longer case id is shortened (kbi_export_bmf). */
#define KBI_BMF_NAME_MAX 1024

/* The cases one export holds. */
typedef struct kbi_export_set {
    const kbi_result_set *set;
    const kbi_case_result **cases; /* measured, one per id (its last record), in read order */
    size_t n;
    const char *time_unit; /* gbench and gab: ns, us, ms or s */
    double per_second;     /* time units in a second (1e9 for ns) */
    kbi_strlist notes;     /* what was left out or changed, and why: for stderr */
} kbi_export_set;

/* Fills x with the measured cases of set (which x points into: keep it), times in time_unit
 * (ns, us, ms or s).  Returns KBI_OK, or KBI_ERR_INPUT with err for an unknown unit. */
int kbi_export_select(const kbi_result_set *set, const char *time_unit, kbi_export_set *x,
                      char *err);
void kbi_export_set_free(kbi_export_set *x);

/* A rate of a case from one of its counts (per run) over its time. */
typedef struct kbi_export_rate {
    const char *counter; /* gbench counter: flops_per_second, bytes_per_second, items_per_second */
    const char *measure; /* Bencher measure: gflops, gbs, throughput (its built-in ops/s) */
    char unit[80];       /* as a person reads it: GFLOP/s, GB/s, atom-steps/s */
    double per_run;      /* the count of one run */
    double scale;        /* unit per count per second: 1e-9 for GFLOP/s and GB/s, else 1 */
} kbi_export_rate;

/* The rates of c (those of its counts above 0), at most 3, into out; returns how many. */
size_t kbi_export_rates(const kbi_case_result *c, kbi_export_rate out[3]);

/* A rate's value and interval (in its unit) from c's median and confidence interval. */
void kbi_export_rate_values(const kbi_case_result *c, const kbi_export_rate *r, double *value,
                            double *low, double *high);

/* Whether metric m goes along: a number (a metric whose value is null does not). */
int kbi_export_has_metric(const kbi_metric *m);

/* The figures of a case that every format writes as metrics: its declared metrics that go
 * along, then the energy of its timed work where the run measured it, as results.csv names
 * it (energy_j_per_run J, lower is better; energy_watts W, no better direction;
 * energy_gflop_per_j and energy_gb_per_j where it counts flops or bytes, higher is better;
 * uncertainties one standard error). */
#define KBI_EXPORT_ENERGY_MAX 4
typedef struct kbi_export_metrics {
    const kbi_metric **all; /* n of them: into the case's metrics and `energy` */
    size_t n;
    kbi_metric energy[KBI_EXPORT_ENERGY_MAX];
} kbi_export_metrics;

/* Fills m with the metrics of c (m points into c: keep it); kbi_export_metrics_free frees. */
void kbi_export_metrics_of(const kbi_case_result *c, kbi_export_metrics *m);
void kbi_export_metrics_free(kbi_export_metrics *m);

/* The format writers (new references).  bmf adds a note for each name it shortened and
 * one naming its measures with their better direction; gab's `rates` picks the file. */
json_t *kbi_export_gbench(const kbi_export_set *x);
json_t *kbi_export_bmf(kbi_export_set *x);
json_t *kbi_export_gab(const kbi_export_set *x, int rates);

/* `kbench export` */
int kbi_cmd_export(int argc, char **argv);

#endif
