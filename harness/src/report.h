/* `kbench report`: turns one or more results files into a folder a person
 * would rather look at than the raw JSON Lines:
 *
 *   report.md    environment, then per plugin one table per parameter point
 *                (variant, status, median with its confidence interval, rates,
 *                fraction of the device ceiling, speedup against the
 *                profile's baseline variant, verify error, notes), per-case
 *                metrics, every case that did not run with its message, and
 *                the charts embedded
 *   report.html  report.md as one self-contained page: charts inline (SVG),
 *                tables sorted and filtered in the browser
 *   results.csv  one row per case with the same figures, for spreadsheets
 *   charts/      gnuplot .dat + .gp + .png + .svg (see chart.h)
 *
 * Several results files are merged: shards of one sweep, or runs on several
 * GPUs (rows then name their run). */
#ifndef KBENCH_REPORT_H
#define KBENCH_REPORT_H

#include <stdio.h>

#include "common.h"
#include "resultset.h"

typedef struct kbi_report_options {
    const char *title;      /* heading; NULL: the output folder's name */
    const char *gnuplot;    /* NULL: $KBENCH_GNUPLOT or PATH; "": no images */
    double gnuplot_timeout; /* seconds per chart; 0: 60 */
    int no_charts;          /* nonzero: write neither scripts nor images */
    const char *compare;    /* a `kbench compare --out` file to include; NULL: none */
} kbi_report_options;

/* The default output folder for a report of `input` (a file or folder):
 * reports/<name>, where name is the folder's name for a directory, the
 * parent folder's name for a file called results*.jsonl (its grandparent's
 * when the parent is a shard-* folder), else the file's stem. */
void kbi_report_default_dir(const char *input, char *out, size_t n);

/* Writes results.csv: a header, then one row per case in file order.
 * Returns KBI_OK or KBI_ERR_IO. */
int kbi_report_write_csv(const kbi_result_set *set, FILE *f);

/* Writes report.md, results.csv, report.html and the charts into outdir
 * (created); with opt->compare, that comparison's verdicts close report.md.
 * Charts that gnuplot fails to draw, or a missing gnuplot, are noted in the
 * report, not errors.  Returns KBI_OK, or KBI_ERR_IO / KBI_ERR_INPUT with err
 * set (a comparison file that cannot be read or is not compare's Markdown is
 * KBI_ERR_INPUT, before anything is written). */
int kbi_report_write(const kbi_result_set *set, const char *outdir, const kbi_report_options *opt,
                     char *err);

/* `kbench report RESULTS... [--out DIR] [--title T] [--no-charts] [--compare FILE]`.
 * argv[0] is "report".  Returns the exit code: 0 written, 2 bad usage or
 * input (file:line messages on stderr); --help prints usage and returns 0. */
int kbi_cmd_report(int argc, char **argv);

#endif
