/* `kbench history RESULTS...`: runs of one profile over revisions, in order, with every step
 * between consecutive runs judged by compare's own rule (compare.h), so that "when did this
 * get slower?" has one answer over twenty runs.
 *
 * A run is what its env record names (run_id, git_revision, time); shards of one sweep are
 * one run, as in a report (kbi_results_sweep_of).  Runs are ordered by
 *   time      the env record's "time" (ISO 8601 UTC, as kbench writes it), the default
 *   revision  the position of the run's git_revision in `git rev-list HEAD` of the current
 *             folder (oldest first; a revision git does not know there is an error), ties by
 *             time
 *   input     the order RESULTS name them (a folder's files in name order)
 *
 * A case is followed from run to run by compare's matching (kbi_compare_sets: full id, then
 * id, then across a parameter one side lacks), so a results file written before ids named
 * only the problem follows on from one written after.  Step k compares run k against, for
 * each case, its latest record in the runs before k: a case missing from a run is judged,
 * where it comes back, against the last run that measured it.  Each step's verdict is
 * compare's (kbi_compare_case): same, faster, slower, unsure, failed, not measured, not
 * comparable.  Only times and statuses are followed; metrics are compare's to judge.
 *
 * kbench history writes history.md (the runs, the steps with their counts, and per plugin one
 * table: a row per case, a column per run with its median and the step's verdict),
 * history.csv (a row per case and run), and charts/ (per case: its median and 95% interval
 * against the runs, the steps compare called slower or faster marked; per plugin, the cases
 * that changed, relative to their first run), and prints each slower step on stdout. */
#ifndef KBENCH_HISTORY_H
#define KBENCH_HISTORY_H

#include <stdio.h>

#include "compare.h"
#include "resultset.h"

typedef enum kbi_history_order {
    KBI_HISTORY_BY_TIME = 0,
    KBI_HISTORY_BY_REVISION,
    KBI_HISTORY_BY_INPUT,
} kbi_history_order;

/* One run: its env record(s) and its cases, as a result set of its own that shares what it
 * holds with the loaded set (never freed through kbi_results_free). */
typedef struct kbi_history_run {
    const kbi_env_record *env; /* the first env record of its sweep */
    const char *revision;      /* git_revision, "" unknown */
    const char *time;          /* the env record's time, "" unknown */
    char label[64];            /* its revision in short ("8ef6958"), unique among the runs */
    kbi_result_set view;       /* its env records and cases (shallow copies) */
    /* The step into this run (none for the first): compare's count of each verdict, and
     * its warnings, less the one that the revisions differ. */
    size_t count[KBI_VERDICT_COUNT];
    kbi_strlist warnings;
    size_t matched, unjudged; /* cases on both sides, and of them those not judged */
    int regressed;            /* compare's headline would say REGRESSION */
} kbi_history_run;

/* One case in one run. */
typedef struct kbi_history_cell {
    const kbi_case_result *c; /* its record in this run; NULL: not in this run */
    int judged;               /* a step ends here: compared with run `from` */
    size_t from;              /* the run of the case's previous record */
    kbi_compare_outcome out;  /* compare's verdict of that step */
} kbi_history_cell;

/* One case followed over the runs. */
typedef struct kbi_history_track {
    const char *plugin;
    const char *id;          /* its id in the newest run that has it */
    kbi_history_cell *cells; /* one per run */
} kbi_history_track;

typedef struct kbi_history {
    kbi_history_run *runs; /* oldest first */
    size_t n_runs;
    kbi_history_track *tracks; /* in order of first appearance */
    size_t n_tracks;
    kbi_compare_options opt;
    kbi_history_order order;
    kbi_strlist warnings; /* runs of different profiles, a run without a time, ... */
    int exit_code;        /* kbi_comparison_exit_code of the newest step */
} kbi_history;

/* Groups set's cases into runs, orders them by `order`, and judges every step with opt.
 * Returns KBI_OK, or KBI_ERR_INPUT with err "FILE:LINE: what, expected what" (fewer than two
 * runs, a case without an env record, a revision git does not know). */
int kbi_history_build(const kbi_result_set *set, kbi_history_order order,
                      const kbi_compare_options *opt, kbi_history *h, char *err);
void kbi_history_free(kbi_history *h);

/* Whether a case of plugin has a step compare called slower or faster (history_chart.c). */
int kbi_history_plugin_changed(const kbi_history *h, const char *plugin);

/* history.md: the runs, the steps and one table per plugin (history_md.c). charts: the
 * folder of the charts relative to the file ("charts"), NULL when there are none. */
int kbi_history_write_markdown(const kbi_history *h, const char *charts, FILE *f);

/* history.csv: a header, then a row per case and run it was measured in: the case's id in
 * the newest run (case) and in this one (id_in_run), the run, its median and interval, and
 * the step's verdict where one ends there. */
int kbi_history_write_csv(const kbi_history *h, FILE *f);

/* On f: each slower (and failed) step of each case, "slower: ID: REV -> REV (run a -> b):
 * x1.200", then a line on the newest step. */
void kbi_history_write_summary(const kbi_history *h, FILE *f);

/* The charts into dir (history_chart.c): per case, and per plugin the cases that changed.
 * gnuplot as kbi_chart_init takes it.  Returns KBI_OK (charts that gnuplot could not draw are
 * named in *warnings, which the caller frees), or KBI_ERR_IO with err set. */
int kbi_history_write_charts(const kbi_history *h, const char *dir, const char *gnuplot,
                             kbi_strlist *warnings, size_t *n_drawn, char *err);

/* The stem of track t's chart (file-name safe), into out (size n). */
void kbi_history_chart_stem(const kbi_history *h, size_t t, char *out, size_t n);

/* `kbench history RESULTS... [--out DIR] [--order time|revision|input] [--threshold X]
 * [--alpha A] [--host-drift X] [--fail-on-unsure] [--no-charts] [--gnuplot PATH]`.  argv[0]
 * is "history".  Returns 0, 1 when the newest step holds a regression as compare calls one
 * (or, with --fail-on-unsure, a case it could not judge), 2 bad usage or input. */
int kbi_cmd_history(int argc, char **argv);

#endif
