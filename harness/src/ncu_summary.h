/* A profiled run of many kernel launches, summed up per kernel name: how
 * often each kernel ran, its total and mean duration, its share of the
 * profiled time, and every numeric metric averaged over its launches.  md's
 * 100 steps launch about 900 kernels; read one table per launch and nobody
 * sees which kernel the time goes to. */
#ifndef KBENCH_NCU_SUMMARY_H
#define KBENCH_NCU_SUMMARY_H

#include <stdio.h>

#include <jansson.h>

/* The kernels of a profile (kbi_ncu_parse_csv's array) grouped by name, the
 * longest total duration first (ties, and kernels without a duration, in the
 * order they first ran): a JSON array of {"name", "launches", "duration":
 * {"total", "mean", "unit"}, "share", "metrics": {NAME: {"value", "unit",
 * "launches"}}}.  duration's figures and share are null when the launches
 * carry no gpu__time_duration.sum; share is of the summed duration of every
 * profiled launch; a metric's value is its mean over the launches where it is
 * a number ("launches" of them).  Caller owns the result. */
json_t *kbi_ncu_summarize(json_t *kernels);

/* What limited the profiled launches (`kbench profile --launches/--skip/
 * --kernel`): 0 and NULL where nothing did. */
typedef struct kbi_ncu_limits {
    int launch_count;
    int launch_skip;
    const char *kernel_regex;
} kbi_ncu_limits;

/* Prints the summary as a table, one row per kernel name, under a line that
 * says how many launches were profiled and what limited them. */
void kbi_ncu_print_kernel_table(FILE *out, json_t *summary, size_t n_launches,
                                const kbi_ncu_limits *limits);

#endif
