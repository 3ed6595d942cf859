/* `kbench compare BASELINE RESULTS`: matches the cases of two sets of
 * results by case id (plugin/variant/parameters) and calls each one faster,
 * slower, same or unsure, with statistics a reader can check.
 *
 * The verdict of a case measured on both sides (status ok), with
 *   d   = median(results) / median(baseline) - 1   (> 0: results slower)
 *   nb, nr = the relative noise of each median (half its 95% CI / median)
 *   p   = the two-sided Mann-Whitney U p-value of the two sample sets
 *   t   = --threshold (default 0.02), alpha = --alpha (default 0.05):
 *
 *   slower / faster  |d| > t  and  |d| > nb + nr  and  p < alpha
 *                    (the change is larger than the threshold, larger than
 *                    the two runs' noise together, and the test agrees)
 *   same             |d| <= t  and  nb <= t  and  nr <= t
 *                    (the change is within the threshold, and each run was
 *                    precise enough to have seen a change of that size);
 *                    also when both sides hold the very same samples (one
 *                    file compared with itself), however noisy
 *   unsure           anything else: a change over the threshold that the
 *                    noise or the test does not support, or runs too noisy
 *                    to resolve the threshold (the "why" column says which)
 *
 * Cases measured in rounds on both sides ([run] rounds >= 2: each case
 * measured several times, interleaved over the run, each round in a fresh
 * worker) are judged by their round medians instead.  On a shared machine
 * the samples of one process are not independent: load that comes and
 * goes, the core a worker lands on, its memory layout move a whole round,
 * and a whole run, at once.  Rounds show how far the machine's state moves
 * one round; a run is one draw of that state, so it may sit off by as much.
 * With the logs of the round medians and
 *   est          the Hodges-Lehmann shift (results against baseline: the
 *                median of every pairwise difference)
 *   s            their spread (pooled median absolute deviation x 1.4826)
 *   h            z(1 - alpha/2) s sqrt(2 + 1/Rb + 1/Rr): both runs' own
 *                offsets, and the estimate's variance
 *   L = ln(1 + t):
 *   ratio            exp(est), the typical ratio of round medians
 *   slower / faster  est - h > L / est + h < -L: the whole interval lies
 *                    beyond the threshold
 *   same             the interval lies within -L..+L
 *   unsure           the interval reaches across a threshold
 *   detectable       exp(L + 1.5 (2 h)) - 1 (h without the host drift and
 *                    the CPU wait, which add to L once): to miss a true change this
 *                    large, the interval would have to sit off it by twice
 *                    its half-width, so it is called slower or faster
 *                    nearly always; where it exceeds a change that matters,
 *                    the machine was too noisy to tell (the answer is then
 *                    unsure, never a guess)
 * Host-timed cases (timing "host" on both sides) share the CPU with every
 * other user of the machine: a whole run can sit off further than its
 * rounds show (of ten back-to-back runs on a 2-core machine shared by
 * several builds, one sat 17-21% off the others, with tight rounds and no
 * wait for a CPU).  Their interval is widened by ln(1 + --host-drift) each
 * way (default 25%; 0 on a machine of one's own),
 * and without rounds their threshold is t + host-drift.
 * A host case's worker may also have waited for a CPU (the record's
 * "cpu_wait": the largest share w of a round's time it was runnable but not
 * running, from the kernel's run-queue accounting).  That stretches its
 * times by up to 1 / (1 - w): W = -ln(1 - w) (w = 5%: 5.3%, 12%: 13.6%,
 * 25%: 33%, 50%: 100%).  A wait only ever makes a side read slow, so the
 * results' W moves the interval's lower edge down (the results may read
 * slow) and the baseline's W its upper edge up (the results may read fast);
 * without rounds the threshold of a slowdown grows by expm1(W) of the
 * results, of a speedup by that of the baseline, and a change that looks
 * the same is unsure when the other side's wait could hide one over the
 * threshold.  The wait widens the interval; it never vetoes the verdict: a
 * change beyond all of it (a 10x slowdown under a 12% wait) is slower, one
 * within it (3% under 12%) unsure.  detectable and A (below) take the
 * larger W of the two sides.
 * An SM clock that dropped during a case on either side (a power or
 * thermal cap) acts like a wait: W_clock = ln(end clock of the baseline /
 * end clock of the results) moves the lower edge down where positive, its
 * opposite the upper edge up; the end clock is the one the case settled at.
 * Device cases whose run holds a host pass or many small launches
 * (record "host_paced": KB_RUN_HOST_PACED or KB_RUN_SYNCS, or plain
 * launches in hot mode) count as host-timed in all of this.
 * Host-timed cases whose env records name different CPUs (model,
 * signature, or max clock, where both sides record them) are "not
 * comparable": a host time follows the CPU, and no allowance can say by how
 * much.  A side that does not record its CPU (kbench before 1.2) is judged
 * as if on the same CPU, with a warning.
 * Device-timed cases (every case but host-timed ones) whose env records name
 * different GPU models (the device's name: "NVIDIA H200" against "NVIDIA
 * H100 80GB HBM3"; two boards of one model, whatever their UUIDs and PCI
 * bus ids, are the same GPU) are "not comparable" too: a device time follows
 * the GPU, and another GPU is not a change in the code.  Their times and
 * ratio are still shown.  --across-gpus judges them by the rules above
 * anyway (for one who compares GPUs on purpose), with the warning that the
 * GPUs differ.  A side that does not name its GPU is judged as if on the
 * same GPU.
 * Without rounds on both sides "detectable" is max(threshold, nb + nr), the
 * threshold widened as above: drift between the runs is then not measured,
 * and a shared machine's verdicts need rounds.
 *
 * A --sanitize run's times are not timings (kbi_case_not_timing): a case
 * ok on both sides with such a side is "not measured", and kbench compare
 * exits 2 (its statuses are still compared and shown).
 *
 * Cases not measured on both sides:
 *   failed           ok in the baseline, verify_failed/error/crashed/timeout
 *                    in the results: counted as a regression
 *   not measured     skipped in the results, or not ok in the baseline
 *   only in baseline / only in results: listed, no verdict
 * A matched case "could not be judged" when it is unsure, not comparable,
 * or measured in the baseline but not in the results (a baseline that
 * has no measurement of a case protects nothing there).
 *
 * Metrics (the plugin's declared results, e.g. an energy drift), per metric
 * of every case that has the results side, with values a (baseline) and b
 * (results), their standard uncertainties ua, ub and s = sqrt(ua^2 + ub^2):
 *
 *   worse / better   |b - a| > 3 s, in the metric's bad / good direction
 *                    (exact values, s = 0: any move); for a metric derived
 *                    from a timing (KB_METRIC_TIMING, ABI 1.2) the move must
 *                    also exceed what a time may move between runs (below)
 *   changed          the same for a metric where neither direction is
 *                    better: shown, never a regression
 *   same             |b - a| <= 3 s, or a == b
 *   unsure           a != b and an uncertainty is unknown
 *   new / gone       reported on one side only
 *   out of bound     the results' value lies outside the declared bound (a
 *                    flag beside the verdict, also for a case only in the
 *                    results)
 * A timing-derived metric is one round's figure on each side, so it moves
 * between runs as the case's time does, by more than its within-run
 * uncertainty says.  With x = |ln(b / a)|:
 *   same             x <= ln(1 + t)
 *   unsure           x within the case's timing allowance A, or |b - a| <= 3 s:
 *                    A = ln(1 + t) + ln(1 + host drift) + W + z(1 - alpha/2)
 *                    2 s_rounds with rounds on both sides (s_rounds: the
 *                    spread of the case's round medians; one round on each
 *                    side: sqrt(2 + 1 + 1) = 2), else ln(1 + t + host drift
 *                    + expm1(W)); of a case not comparable (different CPUs
 *                    or GPUs) any move is unsure
 *   worse / better   beyond both (changed for a metric with no direction)
 * Physics metrics (no flag: an energy drift, a moment ratio) keep the
 * 3-uncertainty rule alone.
 *
 * Energy (the case record's "energy", where both sides measured it): the joules per run
 * with their uncertainty, judged as a metric whose lower value is better and which derives
 * from a timing (a time per run times a power), under the name KBI_COMPARE_ENERGY_NAME:
 * worse only beyond the threshold, what the runs' drift can explain and 3 combined
 * uncertainties; a worse energy is a regression as any worse metric is.
 *
 * The headline names what is known: REGRESSION when any case is slower or
 * failed, or any metric worse or out of bound; else "UNSURE: n of m cases
 * could not be judged" when any matched case could not be judged; OK only
 * when every matched case was judged.  kbench compare exits 1 on a
 * regression, and with --fail-on-unsure also when it is unsure, else 0; 2
 * on bad usage or input, including two sides without a single case id in
 * common (a CI gate that compares nothing must not pass). */
#ifndef KBENCH_COMPARE_H
#define KBENCH_COMPARE_H

#include <stdio.h>

#include "common.h"
#include "options.h"
#include "results.h"

typedef enum kbi_verdict {
    KBI_VERDICT_SAME = 0,
    KBI_VERDICT_FASTER,
    KBI_VERDICT_SLOWER,
    KBI_VERDICT_UNSURE,
    KBI_VERDICT_FAILED,
    KBI_VERDICT_NOT_MEASURED,
    KBI_VERDICT_ONLY_BASELINE,
    KBI_VERDICT_ONLY_RESULTS,
    KBI_VERDICT_NOT_COMPARABLE, /* timed on different CPUs or GPUs (see above) */
    KBI_VERDICT_COUNT
} kbi_verdict;

const char *kbi_verdict_name(kbi_verdict v);

#define KBI_COMPARE_THRESHOLD 0.02
#define KBI_COMPARE_ALPHA 0.05
/* Other users' load on a shared CPU can move a whole run (each of its
 * rounds alike) further than its rounds show; the default allowance for
 * host-timed cases. */
#define KBI_COMPARE_HOST_DRIFT 0.25
/* Interval widths past the threshold that a change must be to be called
 * detectable (see "detectable" above). */
#define KBI_COMPARE_DETECT_WIDTHS 1.5

typedef struct kbi_compare_options {
    double threshold; /* relative change that matters; 0: the default */
    double alpha;     /* significance level of the test; 0: the default */
    /* Appended for rounds: how far a whole run of host-timed cases may sit
     * off, unseen by its rounds (see the top of this file); 0: the default,
     * negative: none. */
    double host_drift;
    /* Appended: exit 1 when a case could not be judged (--fail-on-unsure). */
    int fail_on_unsure;
    /* Appended: judge device cases measured on different GPU models (--across-gpus). */
    int across_gpus;
} kbi_compare_options;

typedef struct kbi_compare_outcome {
    kbi_verdict verdict;
    double ratio;      /* results median / baseline median; NAN if not measured */
    double noise_base; /* relative noise of each median; NAN if not measured */
    double noise_results;
    double p;      /* Mann-Whitney p-value; NAN if not computed */
    char why[256]; /* one line for the table; "" when nothing to add */
    /* Appended for rounds (see the top of this file). */
    double detectable; /* smallest relative change these runs resolve; NAN unknown */
    size_t rounds_base, rounds_results; /* rounds judged on each side; 0: samples judged */
    /* The relative change one round's timing-derived figure of this case may
     * show without a change in the code: the threshold, the drift and the
     * CPU wait (A at the top of this file, as exp(A) - 1); NAN when the case
     * was not measured on both sides. */
    double timing_allowance;
    /* Appended: of a case not comparable, what differs between its sides ("CPUs" or
     * "GPUs"); NULL for every other verdict. */
    const char *differs;
} kbi_compare_outcome;

/* The statistical core: the verdict of two measured cases from their
 * statistics and samples (see the top of this file).  A side with no
 * median is unsure. */
void kbi_compare_samples(const kbi_stats *base, const double *base_samples, size_t n_base,
                         const kbi_stats *res, const double *res_samples, size_t n_res,
                         const kbi_compare_options *opt, kbi_compare_outcome *out);

/* The verdict of one case; base or res may be NULL (only on one side). */
void kbi_compare_case(const kbi_case_result *base, const kbi_case_result *res,
                      const kbi_compare_options *opt, kbi_compare_outcome *out);

typedef enum kbi_metric_verdict {
    KBI_MV_SAME = 0,
    KBI_MV_BETTER,
    KBI_MV_WORSE,
    KBI_MV_CHANGED,
    KBI_MV_UNSURE,
    KBI_MV_NEW,
    KBI_MV_GONE,
    KBI_MV_COUNT
} kbi_metric_verdict;

const char *kbi_metric_verdict_name(kbi_metric_verdict v);

/* How many combined standard uncertainties a move must exceed. */
#define KBI_COMPARE_METRIC_SIGMAS 3.0

typedef struct kbi_metric_outcome {
    const char *name;
    const kbi_metric *base, *res; /* either may be NULL (new / gone) */
    kbi_metric_verdict verdict;
    double change;    /* res - base value; NAN when not on both sides */
    double sigma;     /* sqrt(ua^2 + ub^2); NAN when an uncertainty is unknown */
    int out_of_bound; /* the results' value lies outside its declared bound */
    char why[160];    /* one line for the table; "" when nothing to add */
} kbi_metric_outcome;

/* The verdict of one metric (see the top of this file); base or res may
 * be NULL.  A timing-derived metric is judged against the default threshold
 * alone, as if its case had no drift. */
void kbi_compare_metric(const kbi_metric *base, const kbi_metric *res, kbi_metric_outcome *out);

/* The same, for a metric of a case whose timings may move by `allowance`
 * (a relative change, kbi_compare_outcome.timing_allowance; below the
 * threshold: the threshold) with the change that matters `threshold` (0:
 * the default).  The results' declaration says whether it is a timing
 * (an older baseline may not say). */
void kbi_compare_metric_in_case(const kbi_metric *base, const kbi_metric *res, double threshold,
                                double allowance, kbi_metric_outcome *out);

/* The name of a case's energy per run among its metrics' verdicts. */
#define KBI_COMPARE_ENERGY_NAME "energy per run (kbench)"

typedef struct kbi_compare_row {
    const kbi_case_result *base, *res; /* either may be NULL */
    kbi_compare_outcome out;
    kbi_metric_outcome *metrics; /* the energy per run first (where both sides measured it),
                                    the baseline's order, then metrics new in the results */
    size_t n_metrics;
    /* Appended: each side's energy per run as a metric (base, results), which the energy's
     * outcome in `metrics` points to. */
    kbi_metric energy[2];
} kbi_compare_row;

typedef struct kbi_comparison {
    kbi_compare_row *rows; /* baseline order, then cases only in the results */
    size_t n_rows;
    size_t count[KBI_VERDICT_COUNT];
    size_t metric_count[KBI_MV_COUNT];
    size_t out_of_bound; /* metrics of the results outside their bound */
    size_t not_timing_base, not_timing_results; /* cases of a --sanitize run on each side */
    /* Appended: the cases on both sides, and of them those that could not be judged (see
     * the top of this file). */
    size_t matched, unjudged;
    char **warnings; /* different GPUs, clocks, revisions, settings; duplicates */
    size_t n_warnings;
    kbi_compare_options opt;
    /* Appended: what the baseline folder's manifest says of each run it holds (see
     * kbi_compare_use_manifest); none without a manifest. */
    kbi_strlist reference;
} kbi_comparison;

/* Matches base against res by case id and fills out (which the caller frees
 * with kbi_comparison_free).  When a side holds one id twice (two runs of a
 * case), the later record is used and a warning says so.  Returns KBI_OK. */
int kbi_compare_sets(const kbi_result_set *base, const kbi_result_set *res,
                     const kbi_compare_options *opt, kbi_comparison *out, char *err);
void kbi_comparison_free(kbi_comparison *c);

/* When base_path is a folder with a manifest (manifest.h): each of its runs named in
 * c->reference, and a warning for each run whose profile (found from the current folder)
 * now expands to cases the reference lacks or no longer has cases it holds. */
void kbi_compare_use_manifest(kbi_comparison *c, const char *base_path,
                              const kbi_result_set *base);

/* Writes the comparison as Markdown: the settings, warnings, one table row
 * per matched case, the cases on one side only, and the totals.  base_name
 * and res_name say where each side came from. */
int kbi_compare_write_markdown(const kbi_comparison *c, const char *base_name, const char *res_name,
                               FILE *f);

/* Whether c found a regression: a case slower or failed, a metric worse or out of bound (the
 * headline's REGRESSION). */
int kbi_comparison_regressed(const kbi_comparison *c);

/* 2 when a side holds a --sanitize run's cases (not timings); else 1 when
 * a case is slower or failed, or a metric worse or out of bound, or (with
 * opt.fail_on_unsure) a case could not be judged; else 0. */
int kbi_comparison_exit_code(const kbi_comparison *c);

/* The options of compare's rule (--threshold, --alpha, --host-drift, --fail-on-unsure,
 * --across-gpus), with their values going into opt, written into
 * out[0..KBI_COMPARE_RULE_OPTIONS): so a verb that judges as compare does (history) takes them
 * as compare does.  Returns their count. */
#define KBI_COMPARE_RULE_OPTIONS 5
size_t kbi_compare_rule_options(kbi_compare_options *opt, kbi_option *out);

/* `kbench compare BASELINE RESULTS [--threshold X] [--alpha A] [--host-drift X]
 * [--fail-on-unsure] [--across-gpus] [--out FILE]`.  argv[0] is "compare".  Returns the exit
 * code: 0 no regression, 1 a case slower or newly failing or a metric worse
 * or out of bound (or, with --fail-on-unsure, a case not judged), 2 bad usage
 * or input; --help prints usage, 0. */
int kbi_cmd_compare(int argc, char **argv);

#endif
