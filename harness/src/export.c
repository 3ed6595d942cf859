/* `kbench export`: the cases an export holds, their rates, and the verb (export.h); the
 * formats are written by export_gbench.c, export_bmf.c and export_gab.c. */
#define _POSIX_C_SOURCE 200809L
#include "export.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonfile.h"
#include "options.h"
#include "resultset.h"

/* Cases named one by one in the notes; the rest are counted. */
#define NOTES_NAMED 10

static const struct {
    const char *name;
    double per_second;
} time_units[] = {{"ns", 1e9}, {"us", 1e6}, {"ms", 1e3}, {"s", 1}};

/* Why c is not exported, or NULL when it is a measurement. */
static const char *left_out_because(const kbi_case_result *c)
{
    if (c->status != KBI_ST_OK)
        return kbi_status_name(c->status);
    if (kbi_case_not_timing(c))
        return "a --sanitize run: its times are not timings";
    if (!(c->stats.n > 0 && c->stats.median > 0 && isfinite(c->stats.median)))
        return "no time";
    return NULL;
}

/* The GPUs the runs of set name, ", "-joined, when they name more than one; else NULL. */
static char *several_gpus(const kbi_result_set *set)
{
    kbi_buf b = {0};
    size_t distinct = 0;
    for (size_t i = 0; i < set->n_envs; i++) {
        const char *g = set->envs[i].device_name;
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(set->envs[j].device_name, g) == 0;
        if (!seen && g[0]) {
            kbi_buf_printf(&b, "%s%s", b.len ? ", " : "", g);
            distinct++;
        }
    }
    if (distinct > 1)
        return b.data;
    kbi_buf_free(&b);
    return NULL;
}

int kbi_export_select(const kbi_result_set *set, const char *time_unit, kbi_export_set *x,
                      char *err)
{
    json_t *last = json_object();
    size_t left_out = 0;
    char note[KBI_ERR_SIZE], *gpus;
    memset(x, 0, sizeof *x);
    for (size_t u = 0; u < sizeof time_units / sizeof *time_units; u++)
        if (strcmp(time_unit, time_units[u].name) == 0) {
            x->time_unit = time_units[u].name;
            x->per_second = time_units[u].per_second;
        }
    if (!x->time_unit) {
        kbi_errf(err, "--time-unit '%s': expected ns, us, ms or s", time_unit);
        json_decref(last);
        return KBI_ERR_INPUT;
    }
    x->set = set;
    x->cases = kbi_xcalloc(set->n_cases + 1, sizeof *x->cases);
    for (size_t i = 0; i < set->n_cases; i++) {
        const kbi_case_result *c = &set->cases[i];
        json_t *prev = json_object_get(last, c->id);
        if (prev) {
            snprintf(note, sizeof note,
                     "case %.600s is read twice (%.150s and %.150s); the later "
                     "record is exported",
                     c->id, set->cases[json_integer_value(prev)].source, c->source);
            kbi_strlist_add(&x->notes, note);
        }
        json_object_set_new(last, c->id, json_integer((json_int_t)i));
    }
    for (size_t i = 0; i < set->n_cases; i++) {
        const kbi_case_result *c = &set->cases[i];
        json_t *at = json_object_get(last, c->id);
        const char *why;
        if (at && (size_t)json_integer_value(at) != i)
            continue; /* a later record of the id is the one */
        if ((why = left_out_because(c)) == NULL) {
            x->cases[x->n++] = c;
        } else if (left_out++ < NOTES_NAMED) {
            snprintf(note, sizeof note, "left out %.600s: %s%s%.300s", c->id, why,
                     c->message[0] ? ": " : "", c->message);
            kbi_strlist_add(&x->notes, note);
        }
    }
    if (left_out > NOTES_NAMED) {
        snprintf(note, sizeof note, "... and %zu more cases not measured, left out too",
                 left_out - NOTES_NAMED);
        kbi_strlist_add(&x->notes, note);
    }
    if ((gpus = several_gpus(set)) != NULL) {
        snprintf(note, sizeof note,
                 "the runs were measured on different GPUs (%.800s): one "
                 "tracker series should hold one GPU's figures",
                 gpus);
        kbi_strlist_add(&x->notes, note);
        free(gpus);
    }
    json_decref(last);
    return KBI_OK;
}

void kbi_export_set_free(kbi_export_set *x)
{
    free(x->cases);
    kbi_strlist_free(&x->notes);
    memset(x, 0, sizeof *x);
}

size_t kbi_export_rates(const kbi_case_result *c, kbi_export_rate out[3])
{
    size_t n = 0;
    if (!c->has_counts)
        return 0;
    if (c->flops > 0)
        out[n++] = (kbi_export_rate){"flops_per_second", "gflops", "GFLOP/s", c->flops, 1e-9};
    if (c->bytes > 0)
        out[n++] = (kbi_export_rate){"bytes_per_second", "gbs", "GB/s", c->bytes, 1e-9};
    if (c->items > 0) {
        out[n] = (kbi_export_rate){"items_per_second", "throughput", "", c->items, 1};
        snprintf(out[n].unit, sizeof out[n].unit, "%.70s/s",
                 c->item_unit[0] ? c->item_unit : "items");
        n++;
    }
    return n;
}

void kbi_export_rate_values(const kbi_case_result *c, const kbi_export_rate *r, double *value,
                            double *low, double *high)
{
    double k = r->per_run * r->scale;
    *value = k / c->stats.median;
    /* The slowest time in the interval gives the lowest rate. */
    *low = c->stats.ci_high > 0 ? k / c->stats.ci_high : NAN;
    *high = c->stats.ci_low > 0 ? k / c->stats.ci_low : NAN;
}

int kbi_export_has_metric(const kbi_metric *m)
{
    return isfinite(m->value);
}

/* An energy figure as a metric; names and units are static strings, never freed. */
static kbi_metric energy_metric(const char *name, const char *unit, double value, double u,
                                kb_better better)
{
    return (kbi_metric){.name = (char *)name,
                        .unit = (char *)unit,
                        .value = value,
                        .uncertainty = u,
                        .better = better,
                        .in_bound = 1};
}

void kbi_export_metrics_of(const kbi_case_result *c, kbi_export_metrics *m)
{
    const kbi_case_energy *e = &c->energy;
    size_t k = 0;
    memset(m, 0, sizeof *m);
    if (c->has_energy && e->measured && e->j_per_run > 0) {
        /* Work per joule is a count over the energy: its relative error is the energy's. */
        double rel = e->j_per_run_u / e->j_per_run;
        m->energy[k++] =
            energy_metric("energy_j_per_run", "J", e->j_per_run, e->j_per_run_u, KB_BETTER_LOWER);
        m->energy[k++] = energy_metric("energy_watts", "W", e->watts, e->watts_u, KB_BETTER_NONE);
        if (e->gflop_per_j > 0)
            m->energy[k++] = energy_metric("energy_gflop_per_j", "GFLOP/J", e->gflop_per_j,
                                           e->gflop_per_j * rel, KB_BETTER_HIGHER);
        if (e->gb_per_j > 0)
            m->energy[k++] = energy_metric("energy_gb_per_j", "GB/J", e->gb_per_j,
                                           e->gb_per_j * rel, KB_BETTER_HIGHER);
    }
    m->all = calloc(c->n_metrics + k + 1, sizeof *m->all);
    if (!m->all)
        return;
    for (size_t i = 0; i < c->n_metrics; i++)
        if (kbi_export_has_metric(&c->metrics[i]))
            m->all[m->n++] = &c->metrics[i];
    for (size_t i = 0; i < k; i++)
        if (kbi_export_has_metric(&m->energy[i]))
            m->all[m->n++] = &m->energy[i];
}

void kbi_export_metrics_free(kbi_export_metrics *m)
{
    free(m->all);
    memset(m, 0, sizeof *m);
}

/* ---- the verb ---- */

static const char export_help[] =
    "Writes the measured cases of RESULTS (results files or folders, read as report and\n"
    "compare read them; several are merged) in a format a CI tracker ingests:\n"
    "\n"
    "  gbench  Google Benchmark's JSON: github-action-benchmark's `googlecpp` tool and\n"
    "          Google Benchmark's tools/compare.py read it.  One benchmark per case:\n"
    "          real_time is the median time per run (cpu_time repeats it: kbench times\n"
    "          the GPU or the wall clock, not the CPU), iterations the runs timed,\n"
    "          counters flops/bytes/items_per_second and the declared metrics (their\n"
    "          units and better directions in the label); context names the host, CPU,\n"
    "          GPU, driver, CUDA runtime, revision and profile of the first run.\n"
    "  bmf     Bencher Metric Format, for `bencher run --adapter json --file FILE`: per\n"
    "          case, latency (ns per run) and throughput (items/s), gflops (GFLOP/s) and\n"
    "          gbs (GB/s) where the case counts them, each with lower_value/upper_value\n"
    "          from the 95% confidence interval of the median, and each declared metric\n"
    "          (value +/- 1.96 standard errors).  Names past Bencher's 1024 characters\n"
    "          are shortened to 1007 and a hash of the whole id.\n"
    "  gab     github-action-benchmark's custom arrays [{name, value, unit, range,\n"
    "          extra}], two files: --out PREFIX writes PREFIX-times.json (median times,\n"
    "          and metrics where lower is better: tool customSmallerIsBetter) and\n"
    "          PREFIX-rates.json (GFLOP/s, GB/s, items/s, and metrics where higher is\n"
    "          better: tool customBiggerIsBetter); range is half the interval's width.\n"
    "A case whose energy was measured ([run] energy = on) carries it in every format like\n"
    "a metric, named as results.csv names it: energy_j_per_run (J, lower is better),\n"
    "energy_watts (W, no better direction: in neither gab file), energy_gflop_per_j and\n"
    "energy_gb_per_j (higher is better), uncertainties one standard error.\n";

static const char export_notes[] =
    "Every benchmark is named by its case id.  Cases that were not measured (failed,\n"
    "skipped, timed out, or times of a --sanitize run) are left out, each named on\n"
    "stderr: a tracker would chart their missing time as a change.  A case read twice\n"
    "is exported from its later record.\n"
    "Exit status: 0 written, 1 no case was measured (nothing written), 2 bad usage,\n"
    "unreadable or invalid results, or a file that cannot be written.\n";

/* Writes the gab pair PREFIX-times.json and PREFIX-rates.json. */
static int write_gab(const kbi_export_set *x, const char *prefix, char *err)
{
    for (int rates = 0; rates < 2; rates++) {
        json_t *j = kbi_export_gab(x, rates);
        kbi_buf path = {0};
        int rc;
        kbi_buf_printf(&path, "%s-%s.json", prefix, rates ? "rates" : "times");
        rc = kbi_json_write_file(j, path.data, 2, err);
        if (rc == KBI_OK)
            fprintf(stderr, "kbench export: wrote %s (%zu entries%s)\n", path.data,
                    json_array_size(j),
                    json_array_size(j) ? "" : ": github-action-benchmark refuses an empty file");
        json_decref(j);
        kbi_buf_free(&path);
        if (rc != KBI_OK)
            return rc;
    }
    return KBI_OK;
}

/* Writes x in format to out (NULL: stdout).  Returns KBI_OK or an error with err set. */
static int write_format(kbi_export_set *x, const char *format, const char *out, char *err)
{
    json_t *j;
    int rc;
    if (strcmp(format, "gab") == 0)
        return write_gab(x, out, err);
    j = strcmp(format, "gbench") == 0 ? kbi_export_gbench(x) : kbi_export_bmf(x);
    rc = kbi_json_write_file(j, out ? out : "-", 2, err);
    if (rc == KBI_OK && out)
        fprintf(stderr, "kbench export: wrote %s (%zu cases)\n", out, x->n);
    json_decref(j);
    return rc;
}

int kbi_cmd_export(int argc, char **argv)
{
    const char *format = NULL, *out = NULL, *time_unit = "ns";
    const kbi_option options[] = {
        {.name = "format",
         .short_name = 'f',
         .kind = KBI_OPT_STRING,
         .target = &format,
         .required = 1,
         .expected = "--format gbench, bmf or gab",
         .arg = "gbench|bmf|gab",
         .help = "the format (required)"},
        {.name = "out",
         .short_name = 'o',
         .kind = KBI_OPT_STRING,
         .target = &out,
         .arg = "FILE",
         .help = "where to write (default: stdout); for gab a PREFIX (required)"},
        {.name = "time-unit",
         .short_name = 'u',
         .kind = KBI_OPT_STRING,
         .target = &time_unit,
         .arg = "U",
         .help = "gbench's and gab's time unit: ns (default), us, ms or s"},
    };
    const kbi_verb_spec spec = {.verb = "export",
                                .synopsis = "RESULTS...",
                                .help = export_help,
                                KBI_SPEC_OPTIONS(options),
                                .min_operands = 1,
                                .max_operands = SIZE_MAX,
                                .operands = "one or more results files or folders",
                                .summary = "for CI trackers (Google Benchmark, Bencher, "
                                           "github-action-benchmark)",
                                .notes = export_notes};
    kbi_result_set set = {0};
    kbi_export_set x = {0};
    char err[KBI_ERR_SIZE] = "";
    int first, parsed, code = KBI_EXIT_USAGE, selected = 0;
    if ((parsed = kbi_options_parse(&spec, argc, argv, &first)) != KBI_OPTS_GO_ON)
        return parsed;
    if (strcmp(format, "gbench") != 0 && strcmp(format, "bmf") != 0 && strcmp(format, "gab") != 0) {
        fprintf(stderr, "kbench export: --format '%s': expected gbench, bmf or gab\n", format);
        return KBI_EXIT_USAGE;
    }
    if (strcmp(format, "gab") == 0 && !out) {
        fprintf(stderr, "kbench export: --format gab writes two files: give --out PREFIX "
                        "(PREFIX-times.json, PREFIX-rates.json)\n");
        return KBI_EXIT_USAGE;
    }
    if (kbi_results_load_inputs(&set, (const char *const *)&argv[first], (size_t)(argc - first),
                                err) != KBI_OK)
        goto fail;
    for (size_t i = 0; i < set.n_warnings; i++)
        fprintf(stderr, "kbench export: warning: %s\n", set.warnings[i]);
    if (set.n_cases == 0) {
        kbi_errf(err, "%s: no case records, expected the results of a run", argv[first]);
        goto fail;
    }
    if (kbi_export_select(&set, time_unit, &x, err) != KBI_OK)
        goto fail;
    selected = 1;
    for (size_t i = 0; i < x.notes.n; i++)
        fprintf(stderr, "kbench export: %s\n", x.notes.s[i]);
    if (x.n == 0) {
        fprintf(stderr, "kbench export: no case of the %zu read was measured; nothing written\n",
                set.n_cases);
        code = KBI_EXIT_FAILED;
        goto done;
    }
    kbi_strlist_free(&x.notes); /* said; the writers add their own */
    if (write_format(&x, format, out, err) != KBI_OK)
        goto fail;
    for (size_t i = 0; i < x.notes.n; i++)
        fprintf(stderr, "kbench export: %s\n", x.notes.s[i]);
    code = KBI_EXIT_OK;
    goto done;
fail:
    fprintf(stderr, "kbench export: %s\n", err);
done:
    if (selected)
        kbi_export_set_free(&x);
    kbi_results_free(&set);
    return code;
}
