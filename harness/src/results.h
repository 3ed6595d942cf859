/* Results files: JSON Lines, one object per line, schema "kbench-results"
 * version KBI_RESULTS_VERSION (version 1 files are still read).
 *
 *   {"schema":"kbench-results","version":1,"record":"env","run_id":...}   once per run, first
 *   {"schema":"kbench-results","version":1,"record":"case","run_id":...}  one per case, as it ends
 *   {"schema":"kbench-results","version":3,"record":"round","run_id":...} one per round of a
 *                                   case, as it ends, when the run measures in rounds
 *   {"schema":"kbench-results","version":1,"record":"end","run_id":...}   last, when the run ends
 *
 * A round record is a case record (the round's own samples) with "round":
 * its number from 1; the reader joins a case's round records into one case,
 * as version 2 wrote it at the end of its last round ("rounds": samples per
 * round).  A file without its "end" record was interrupted; every complete
 * line before that point is still valid.  README.md documents every field. */
#ifndef KBENCH_RESULTS_H
#define KBENCH_RESULTS_H

#include <jansson.h>
#include <stdio.h>

#include "common.h"
#include "kbench/plugin.h"
#include "stats.h"

#define KBI_RESULTS_SCHEMA "kbench-results"
/* 2: typed metrics (uncertainty, better, bound), size_param, timing,
 * prepare_s; dims and integer lists as arrays.  3: round records, so a run
 * cut off mid-rounds keeps every finished round.  4: a case's id names its
 * problem (a knob or implicit parameter only where set away from its
 * default, ABI 1.3); params_text still names every parameter; "energy" of
 * device cases, and the board's idle power in the env record.  5: "instrumented" (ABI 1.4):
 * the seconds a plugin's instrument entry took and the metrics it reported.  Readers take 1
 * to 5; a record without "instrumented" (every record before 5) reads as before. */
#define KBI_RESULTS_VERSION 5
#define KBI_RESULTS_OLDEST_VERSION 1

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
/* The status of a case whose plugin entry point returned `code` (a
 * kb_status other than KB_OK): KB_SKIP is skipped, anything else error. */
kbi_status kbi_status_of_code(int code);

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

/* A metric of a case.  Version 1 records and undeclared metrics
 * (kb_host.metric) hold only name, value and unit: uncertainty NAN,
 * better KB_BETTER_NONE, no bound, declared 0, in_bound 1. */
typedef struct kbi_metric {
    char *name, *unit;
    double value;
    double uncertainty; /* one standard error; 0 exact; NAN unknown */
    kb_better better;
    uint32_t bounds;  /* KB_BOUND_LOW / KB_BOUND_HIGH */
    double low, high; /* where bounds say so */
    int declared;     /* declared in the plugin's descriptor */
    int in_bound;     /* the value lies within the bound (1 when there is none) */
    int timing;       /* declared KB_METRIC_TIMING (ABI 1.2): derived from a timing */
    /* Read from round records: value is the mean of the rounds' values, and uncertainty the
     * larger of the standard error the rounds' spread gives and the one the rounds' own
     * uncertainties give (a figure measured once per worker drifts between workers as the
     * case's time does).  rounds: how many were joined (0: one reading). */
    size_t rounds;
    double m2, u2; /* sum of squared deviations from the mean; sum of squared uncertainties */
    /* Reported while the plugin's instrument entry ran (ABI 1.4): the record's "instrumented"
     * names it. */
    int instrumented;
} kbi_metric;

/* Whether value lies within m's bound (1 without a bound; 0 for NAN). */
int kbi_metric_within(const kbi_metric *m, double value);
const char *kbi_better_name(kb_better b);

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
    double tf32_gflops; /* the TF32 tensor-core peak; 0 if none (or recorded before it was) */
    int complete; /* an "end" record with complete=true was seen */
    /* The host CPU ("cpu": what decides a host case's speed); "" or 0 when
     * the record does not say (written before kbench recorded it). */
    char *cpu_model;
    char *cpu_signature; /* x86 family/model/stepping, Arm implementer/part */
    size_t cpu_cores;    /* logical cores online */
    double cpu_max_mhz;  /* 0 unknown (no cpufreq, e.g. in most VMs) */
    double cpu_compute_ms, cpu_memory_gbs; /* the host speed probe (hostspeed.h); 0 unknown */
    /* The board's power at rest, measured before the first case, and its enforced limit
     * (env "energy"), in watts; 0 when the run did not measure them. */
    double idle_watts;
    double power_limit_watts;
} kbi_env_record;

/* The energy of a device case's timed work (energy.h says how it is measured).  A figure
 * not known is NAN. */
typedef struct kbi_case_energy {
    int measured;                  /* the figures hold; else `why` says why not */
    char why[256];                 /* "" when measured */
    double j_per_run, j_per_run_u; /* joules per run and its standard uncertainty */
    double watts, watts_u;         /* the board's mean power in the windows */
    double run_s;                  /* seconds per run in the windows (cold: with its flush) */
    double window_s;               /* mean length of a window, between two counter steps */
    double period_s;               /* the counter's update period seen in the windows */
    double flush_j;                /* cold mode: the L2 flush's energy taken off each run */
    double extra_s;                /* seconds the windows added to the case */
    long windows;                  /* windows the figures come from */
    long long runs;                /* runs in those windows */
    double gflop_per_j, gb_per_j;  /* from the plugin's counts; 0 when it counts none */
} kbi_case_energy;

/* What the plugin's instrument entry (ABI 1.4) did: called once, after the verify that
 * followed the timed runs, outside every sample ("instrumented", version 5). */
typedef struct kbi_case_instrumented {
    int ran;                   /* it was called; the fields below hold */
    double wall_s;             /* seconds it took, with the device work it queued */
    kbi_status status;         /* ok; skipped (the case stays ok); error (the case is error) */
    char message[KB_MSG_SIZE]; /* what the plugin said; "" none */
} kbi_case_instrumented;

/* One case record: the one struct the harness writes a case from
 * (kbi_case_record_json) and reads one back into (kbi_results_read), for
 * every status alike.  Strings are owned and never NULL once read ("" when
 * absent); kbi_case_result_free frees them. */
typedef struct kbi_case_result {
    char *source; /* file and line, e.g. "run/results.jsonl:7" ("" when built) */
    char *run_id;
    const kbi_env_record *env; /* NULL if the file had no env record for run_id */
    int version;               /* schema version of the record read */
    long index;                /* position in the run's case list; -1 unknown */
    char *id, *plugin, *variant, *target, *baseline; /* baseline: "" if none */
    int is_baseline;
    json_t *params;    /* object, owned: numbers, strings, and arrays of integers
                          for dims and integer lists (strings "AxB" in version 1) */
    char *params_text; /* "name=value,..." of every parameter (the id's, before version 4) */
    /* plugin/variant/params_text (the id where there is no params_text): every parameter,
     * what ids named before version 4; what compare and the reader match cases by.  Set by
     * the reader and by kbi_case_record_init; read it through kbi_case_full_id. */
    char *full_id;
    char *size_param;  /* the plugin's size axis; "" when it names none */
    /* ABI 1.4's headline and roof of the case's plugin and variant (roofs.h): "" when its
     * plugin declares none or the record was written before kbench recorded them. */
    char *headline;
    char *roof;
    kbi_status status;
    char *message;
    char *cache;      /* "cold", "hot"; "" unknown */
    char *timing;     /* graph, blocked, launches, events, host; "" unknown (v1) */
    int host_paced;   /* a device case whose time follows the CPU (KB_RUN_HOST_PACED) */
    long batch;       /* runs per sample; 0 unknown */
    /* Hot mode's trial of graph replay against stream launches (timer.h),
     * seconds per run; 0 where none ran. */
    double hot_trial_graph_s, hot_trial_stream_s;
    double prepare_s; /* seconds prepare took; NAN when not recorded */
    double *samples;  /* seconds */
    size_t n_samples;
    int has_stats; /* the record held stats (and rates) */
    kbi_stats stats;
    int has_counts;
    double flops, bytes, items;
    char *item_unit;
    double gflops, gbs, items_per_s;
    double frac_bandwidth, frac_peak; /* of the run's ceilings, 0 if unknown */
    int has_verify, verify_passed;
    double verify_error, verify_tolerance;
    char *verify_metric;
    kbi_metric *metrics;
    size_t n_metrics;
    int has_clocks;
    double clock_start_mhz, clock_end_mhz;
    long long throttle_reasons;
    int clock_drop;
    int sticky_error;  /* the case left a sticky CUDA error */
    json_t *sanitizer; /* {"tool","errors","log"} under --sanitize, else NULL (owned) */
    double wall_s;     /* NAN unknown */
    char *time;        /* when the case ended; "" unknown */
    json_t *json;      /* the whole record as read (owned); NULL when built */
    /* The compute-sanitizer tool of a --sanitize run ("" otherwise): its
     * times are not timings (kbi_case_not_timing also asks the env). */
    char *sanitize;
    /* Samples of each round, in order, when the run measured the case in
     * rounds spread over the run ([run] rounds > 1); NULL and 0 otherwise.
     * round_medians (n_rounds, owned) are computed from the samples. */
    size_t *rounds;
    size_t n_rounds;
    double *round_medians;
    /* Rounds: how many of this case were read (1 for a case measured once
     * in a run of rounds, 0 when the run measured no rounds), and how many
     * the run meant to measure ([run] rounds of its env record, 0 unknown). */
    size_t rounds_read;
    size_t rounds_planned;
    /* Why the stored stats were not believed (they disagree with the
     * samples, which are the truth); "" when they agree. */
    char stats_note[224];
    /* Why the stored verdict was not believed (kbi_verdict_passed); "" when
     * it was. */
    char verify_note[224];
    /* A host case's worker: the largest share of a round's time it waited
     * for a CPU (runnable, not running: another process had the core); its
     * times then measure the machine's load.  NAN unknown. */
    double cpu_wait;
    /* The energy of the timed work ("energy", version 4): a device case of a run with
     * [run] energy on; has_energy 0 otherwise. */
    int has_energy;
    kbi_case_energy energy;
    /* The instrument entry's run ("instrumented", version 5); ran 0 when there was none. */
    kbi_case_instrumented instrumented;
} kbi_case_result;

/* c's full id; its id for a record built without one. */
const char *kbi_case_full_id(const kbi_case_result *c);

/* The verdict kbench records for a plugin's: failed when the plugin says
 * so, and also when error exceeds tolerance (both given: not NaN), whatever
 * the plugin said; kbench never turns a plugin's failure into a pass, since
 * a plugin may check more than its one figure shows.  Returns nonzero for
 * passed; when the plugin said passed and its figures do not, says so in
 * note (size n), else sets note to "". */
int kbi_verdict_passed(int plugin_passed, double error, double tolerance, char *note, size_t n);

/* e's work per joule (gflop_per_j, gb_per_j) from the counts of one run; 0 where e is not
 * measured or there is no count. */
void kbi_case_energy_derive(kbi_case_energy *e, double flops, double bytes);

/* Computes r's statistics from its samples, and its rates from its counts
 * and the median, as fractions of the given ceilings (0: unknown). */
void kbi_case_result_derive(kbi_case_result *r, double bandwidth_gbs, double peak_gflops);

/* Nonzero when c's times are not timings: it comes from a --sanitize run
 * (its record, its "sanitizer" findings, or its env record says so). */
int kbi_case_not_timing(const kbi_case_result *c);

/* Sets r's rounds from the samples per round (copied), and computes the
 * round medians from r's samples.  Returns 0, or -1 (rounds left unset)
 * when the counts do not add up to r's samples or n < 2 (one round is no
 * "rounds"). */
int kbi_case_result_set_rounds(kbi_case_result *r, const size_t *per_round, size_t n);

/* The case record of r as written in results files (without "schema",
 * "version", "record" and "run_id", which kbi_results_write adds): exactly
 * the fields kbi_results_read reads back into a kbi_case_result.  Returns a
 * new reference. */
json_t *kbi_case_record_json(const kbi_case_result *r);

/* Reads a case record (obj: a whole results line or a record without the
 * envelope) into r.  Returns NULL, or the name of what was missing or
 * malformed (r is then freed already).  `version` is the schema version
 * of the line (1 reads metrics as name -> {value, unit}). */
const char *kbi_case_record_read(kbi_case_result *r, json_t *obj, int version);

/* Frees what r owns and zeroes it. */
void kbi_case_result_free(kbi_case_result *r);

/* Adds metric m (copied) to r, replacing one of the same name. */
void kbi_case_result_set_metric(kbi_case_result *r, const kbi_metric *m);

/* Warnings of one kind past the first KBI_WARNINGS_PER_KIND are counted in
 * one line ("... and 49,990 more like it"), so a large file's warnings stay
 * readable. */
#define KBI_WARNINGS_PER_KIND 5

typedef struct kbi_warning_kind {
    const char *kind; /* a static string naming the kind */
    size_t count;     /* warnings of this kind so far */
    size_t summary;   /* index in warnings of the "... more like it" line; SIZE_MAX none */
} kbi_warning_kind;

typedef struct kbi_result_set {
    kbi_env_record *envs;
    size_t n_envs;
    kbi_case_result *cases;
    size_t n_cases;
    char **warnings; /* e.g. truncated tail, interrupted run */
    size_t n_warnings;
    kbi_warning_kind *warning_kinds; /* how many of each kind (kbi_results_warn) */
    size_t n_warning_kinds;
    json_t *profiles; /* kbench profile documents (profile.json) found beside the results
                         files, each with "source" added; NULL when none */
} kbi_result_set;

/* Appends the records of one results file to set, a case's round records
 * joined into one case.  A last line without a newline that does not parse
 * is a truncated tail: a warning, not an error.  Any other bad line, another
 * schema or version, a case whose required fields are missing, or a record
 * that cannot be a measurement is an error "FILE:LINE: what, expected
 * what": status ok without samples or with only zero samples, a negative
 * sample, a count that is not a non-negative number, an id that is not
 * plugin/variant/params, rounds out of order, an end record whose case
 * count is not the file's.  A verdict of passed whose error exceeds its
 * tolerance is read as verify_failed, with a warning.  Returns KBI_OK,
 * KBI_ERR_IO or KBI_ERR_INPUT. */
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

/* Adds a warning of a kind (a static string): past KBI_WARNINGS_PER_KIND of
 * one kind, only counted in one "... and N more like it" line. */
void kbi_results_warn(kbi_result_set *set, const char *kind, const char *text);

#endif
