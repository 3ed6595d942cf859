/* `kbench profile`: one case under Nsight Compute.  kbench builds the ncu
 * command line (profiling off from the start; the harness opens it around
 * one run() of the case, inside the case's NVTX range), runs it, reads ncu's
 * raw CSV back, and writes profile.json beside the case's results, which
 * `kbench report` shows next to the timings. */
#ifndef KBENCH_NCU_H
#define KBENCH_NCU_H

#include <jansson.h>

#include "common.h"

#define KBI_PROFILE_SCHEMA "kbench-profile"
/* Version 2 added "summary" (ncu_summary.h) and "limits". */
#define KBI_PROFILE_VERSION 2

/* The metrics asked for when neither --metrics nor --set is given: time,
 * speed-of-light, DRAM, occupancy, resources, bank conflicts, hit rates and
 * warp stall reasons. */
extern const char *const kbi_ncu_default_metrics;

typedef struct kbi_ncu_options {
    const char *ncu;          /* path of ncu */
    const char *kbench;       /* path of this kbench */
    const char *profile_path; /* the profile the case comes from */
    const char *case_id;      /* exact case id */
    const char *out_dir;      /* where results.jsonl and profile.ncu-rep go */
    const char *metrics;      /* comma-separated metric names, or NULL */
    const char *set;          /* an ncu section set (e.g. "full"), or NULL */
    const char *plugins_dir;  /* --plugins for the child, or NULL */
    int device;               /* -1: the profile's */
    int launch_count;         /* ncu --launch-count: profile at most this many launches; 0 all */
    int launch_skip;          /* ncu --launch-skip: skip this many matching launches first */
    const char *kernel_regex; /* ncu --kernel-name regex:...: only kernels matching it, or NULL */
    char **extra;             /* extra ncu arguments, NULL-terminated, or NULL */
} kbi_ncu_options;

/* The NVTX include filter selecting the case's push/pop ranges:
 * "kbench/PLUGIN/VARIANT/PARAMS/".  Caller frees. */
char *kbi_ncu_nvtx_filter(const char *case_id);

/* The argv of the profiling run (NULL-terminated; free with
 * kbi_ncu_argv_free). */
char **kbi_ncu_argv(const kbi_ncu_options *o);
void kbi_ncu_argv_free(char **argv);

/* Parses ncu's `--csv --page raw` output (a header row of metric names, a
 * row of units, one row per profiled kernel) into a JSON array of kernels:
 * {"id", "name", "block", "grid", "metrics": {NAME: {"value": number or
 * string, "unit": UNIT}}}.  Returns NULL with err set ("NAME:LINE: ...") on
 * malformed input. */
json_t *kbi_ncu_parse_csv(const char *text, const char *name, char *err);

/* A metric of one kernel of a profile document: its value, or NAN when it
 * is absent or not a number; *unit (if unit is not NULL) gets its unit. */
double kbi_ncu_metric(json_t *kernel, const char *name, const char **unit);

/* The kernel's largest warp-stall reasons (the smsp__average_warps_issue_
 * stalled_* metrics), largest first: up to n reason names such as
 * "long_scoreboard" into reasons and their values (warps per issued
 * instruction) into values.  Returns how many were found. */
size_t kbi_ncu_top_stalls(json_t *kernel, char reasons[][64], double *values, size_t n);

/* argv[0] == "profile"; returns the process exit code. */
int kbi_cmd_profile(int argc, char **argv);

#endif
