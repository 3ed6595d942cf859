/* Results files: JSON Lines, one object per line, schema "kbench-results"
 * version KBI_RESULTS_VERSION.
 *
 *   {"schema":"kbench-results","version":1,"record":"env","run_id":...}   once per run, first
 *   {"schema":"kbench-results","version":1,"record":"case","run_id":...}  one per case, as it ends
 *   {"schema":"kbench-results","version":1,"record":"end","run_id":...}   last, when the run ends
 *
 * A file without its "end" record was interrupted; every complete line
 * before that point is still valid.  README.md documents every field. */
#ifndef KBENCH_RESULTS_H
#define KBENCH_RESULTS_H

#include <jansson.h>
#include <stdio.h>

#include "common.h"
#include "stats.h"

#define KBI_RESULTS_SCHEMA "kbench-results"
#define KBI_RESULTS_VERSION 1

/* Case statuses, as written in results. */
typedef enum kbi_status {
    KBI_ST_OK = 0,
    KBI_ST_VERIFY_FAILED,
    KBI_ST_SKIPPED,
    KBI_ST_ERROR,
    KBI_ST_CRASHED,
    KBI_ST_TIMEOUT,
    KBI_ST_COUNT
} kbi_status;

const char *kbi_status_name(kbi_status s);
/* Returns the status for a name, or -1. */
int kbi_status_parse(const char *name);
/* Nonzero for statuses that make `kbench run` exit 1. */
int kbi_status_is_failure(kbi_status s);

/* ---- writing ---- */

typedef struct kbi_results_writer {
    int fd; /* -1 when closed */
    char *path;
    char *run_id;
} kbi_results_writer;

/* Creates (truncates) path.  Returns KBI_OK or KBI_ERR_IO with err naming
 * the path and the system's reason. */
int kbi_results_open(kbi_results_writer *w, const char *path, const char *run_id, char *err);

/* Adds "schema", "version", "record" and "run_id" to obj, writes it as one
 * line and fsyncs.  Takes no reference to obj.  Returns KBI_OK or
 * KBI_ERR_IO with err naming the path and the reason (disk full, write
 * error); the file is then cut back to its last complete line, so every
 * record written before stays readable. */
int kbi_results_write(kbi_results_writer *w, const char *record, json_t *obj, char *err);

void kbi_results_close(kbi_results_writer *w);

/* ---- reading (report, compare) ---- */

typedef struct kbi_metric {
    char *name, *unit;
    double value;
} kbi_metric;

typedef struct kbi_env_record {
    char *run_id;
    char *source; /* file it came from */
    json_t *json; /* the whole record (owned) */
    /* Convenience copies; "" or 0 when absent. */
    char *device_name;
    char *git_revision;
    double sm_clock_mhz;
    double bandwidth_gbs; /* ceiling used by the run, 0 if none */
    double peak_gflops;
    int complete; /* an "end" record with complete=true was seen */
} kbi_env_record;

typedef struct kbi_case_result {
    char *source; /* file and line, e.g. "run/results.jsonl:7" */
    char *run_id;
    const kbi_env_record *env; /* NULL if the file had no env record for run_id */
    char *id, *plugin, *variant, *target, *baseline; /* baseline: "" if none */
    int is_baseline;
    json_t *params; /* object, owned */
    char *params_text; /* "name=value,..." as in the id */
    kbi_status status;
    char *message;
    double *samples; /* seconds */
    size_t n_samples;
    kbi_stats stats;
    double flops, bytes, items;
    char *item_unit;
    double gflops, gbs, items_per_s;
    double frac_bandwidth, frac_peak; /* of the run's ceilings, 0 if unknown */
    int has_verify, verify_passed;
    double verify_error, verify_tolerance;
    char *verify_metric;
    kbi_metric *metrics;
    size_t n_metrics;
    int clock_drop;
    json_t *json; /* the whole record (owned) */
} kbi_case_result;

typedef struct kbi_result_set {
    kbi_env_record *envs;
    size_t n_envs;
    kbi_case_result *cases;
    size_t n_cases;
    char **warnings; /* e.g. truncated tail, interrupted run */
    size_t n_warnings;
    json_t *profiles; /* kbench profile documents (profile.json) found beside the results
                         files, each with "source" added; NULL when none */
} kbi_result_set;

/* Appends the records of one results file to set.  A last line without a
 * newline that does not parse is a truncated tail: a warning, not an error.
 * Any other bad line, another schema or version, or a case whose required
 * fields are missing is an error "FILE:LINE: what, expected what".  Returns
 * KBI_OK, KBI_ERR_IO or KBI_ERR_INPUT. */
int kbi_results_load(kbi_result_set *set, const char *path, char *err);

/* The same from an open stream; `name` stands for the file in messages
 * (the fuzzer reads from memory through this). */
int kbi_results_read(kbi_result_set *set, FILE *f, const char *name, char *err);
void kbi_results_free(kbi_result_set *set);

/* Removes case i from set (frees it; later cases move down by one).  Used
 * to drop a case read twice when results files are merged. */
void kbi_results_drop_case(kbi_result_set *set, size_t i);

/* Adds a warning to set (copied). */
void kbi_results_add_warning(kbi_result_set *set, const char *text);

#endif
