/* report.md: the environment of each run, a summary, then per plugin its
 * charts, metrics, one table per parameter point, ncu profiles, and every
 * case that did not run with its message. */
#define _XOPEN_SOURCE 700
#include "report_md.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "format.h"
#include "ncu.h"
#include "report.h"

static void md_env_row(FILE *f, const char *label, const kbi_result_set *set,
                       void (*cell)(FILE *, const kbi_env_record *))
{
    fprintf(f, "| %s |", label);
    for (size_t i = 0; i < set->n_envs; i++) {
        fputc(' ', f);
        cell(f, &set->envs[i]);
        fputs(" |", f);
    }
    fputc('\n', f);
}

static void env_run_id(FILE *f, const kbi_env_record *e)
{
    fprintf(f, "`%s`", e->run_id);
}

static void env_time(FILE *f, const kbi_env_record *e)
{
    kbi_md_cell(f, kbi_jstr(e->json, "time", NULL));
}

static void env_host(FILE *f, const kbi_env_record *e)
{
    kbi_md_cell(f, kbi_jstr(e->json, "host", NULL));
}

/* The CPU that host cases ran on, and the host speed probe where the record has one. */
static void env_cpu(FILE *f, const kbi_env_record *e)
{
    if (!e->cpu_model[0]) {
        fputs("not recorded", f);
        return;
    }
    kbi_md_cell(f, e->cpu_model);
    fprintf(f, ", %zu cores", e->cpu_cores);
    if (e->cpu_compute_ms > 0 && e->cpu_memory_gbs > 0)
        fprintf(f, "; speed probe %.2f ms, %.1f GB/s", e->cpu_compute_ms, e->cpu_memory_gbs);
}

static void env_gpu(FILE *f, const kbi_env_record *e)
{
    json_t *dev = json_object_get(e->json, "device");
    int has;
    double v;
    if (!json_is_object(dev)) {
        fputs("**none**: ", f);
        kbi_md_cell(f, kbi_jstr(e->json, "device_error", NULL));
        return;
    }
    kbi_md_cell(f, kbi_jstr(dev, "name", NULL));
    fputs(" (", f);
    v = kbi_jnum(dev, "index", NULL, &has);
    if (has)
        fprintf(f, "device %.0f", v);
    if (kbi_jstr(dev, "cc", NULL)[0])
        fprintf(f, ", CC %s", kbi_jstr(dev, "cc", NULL));
    v = kbi_jnum(dev, "sm_count", NULL, &has);
    if (has)
        fprintf(f, ", %.0f SMs", v);
    fputs(")", f);
}

static void env_memory(FILE *f, const kbi_env_record *e)
{
    json_t *dev = json_object_get(e->json, "device");
    int a, b;
    double mem = kbi_jnum(dev, "memory_bytes", NULL, &a), l2 = kbi_jnum(dev, "l2_bytes", NULL, &b);
    if (a)
        fprintf(f, "%.1f GiB", mem / (1024.0 * 1024 * 1024));
    if (b)
        fprintf(f, "%sL2 %.1f MiB", a ? ", " : "", l2 / (1024.0 * 1024));
    if (!a && !b)
        fputs("—", f);
}

static void env_clocks(FILE *f, const kbi_env_record *e)
{
    json_t *dev = json_object_get(e->json, "device");
    int a, b, c;
    double sm = kbi_jnum(dev, "sm_clock_mhz", NULL, &a),
           mem = kbi_jnum(dev, "mem_clock_mhz", NULL, &b);
    double loaded = kbi_jnum(dev, "sm_clock_loaded_mhz", NULL, &c);
    /* 0 means NVML could not say. */
    a = a && sm > 0;
    b = b && mem > 0;
    if (a)
        fprintf(f, "SM %.0f MHz", sm);
    if (a && c && loaded > 0 && loaded != sm)
        fprintf(f, " (%.0f MHz under load)", loaded);
    if (b)
        fprintf(f, "%smemory %.0f MHz", a ? ", " : "", mem);
    if (!a && !b)
        fputs("—", f);
    if (json_is_false(json_object_get(e->json, "nvml")))
        fputs(" (no NVML: clocks not watched)", f);
}

static void env_cuda(FILE *f, const kbi_env_record *e)
{
    char d[32], r[32];
    int a, b;
    kbi_fmt_cuda_version(kbi_jnum(e->json, "cuda_driver_version", NULL, &a), d, sizeof d);
    kbi_fmt_cuda_version(kbi_jnum(e->json, "cuda_runtime_version", NULL, &b), r, sizeof r);
    if (!a && !b) {
        fputs("—", f);
        return;
    }
    fprintf(f, "driver %s", a ? d : "?");
    if (kbi_jstr(e->json, "driver_version", NULL)[0]) {
        fputs(" (", f);
        kbi_md_cell(f, kbi_jstr(e->json, "driver_version", NULL));
        fputs(")", f);
    }
    fprintf(f, ", runtime %s", b ? r : "?");
}

static void env_build(FILE *f, const kbi_env_record *e)
{
    fprintf(f, "kbench %s, revision `", kbi_jstr(e->json, "kbench_version", NULL));
    kbi_md_cell(f, e->git_revision[0] ? e->git_revision : "unknown");
    fputs("`, ", f);
    kbi_md_cell(f, kbi_jstr(e->json, "build_type", NULL));
    if (kbi_jstr(e->json, "cuda_architectures", NULL)[0]) {
        fputs(", archs ", f);
        kbi_md_cell(f, kbi_jstr(e->json, "cuda_architectures", NULL));
    }
}

static void env_compiler(FILE *f, const kbi_env_record *e)
{
    char flags[512];
    kbi_md_cell(f, kbi_jstr(e->json, "compiler", NULL));
    snprintf(flags, sizeof flags, "%s", kbi_jstr(e->json, "c_flags", NULL));
    if (kbi_trim(flags)[0]) {
        fputs(", flags `", f);
        kbi_md_cell(f, kbi_trim(flags));
        fputs("`", f);
    }
}

/* The plugin files the run loaded (env "plugins"): name, size and hash, so that two builds of
 * one plugin read apart; records written before kbench recorded them show nothing. */
static void env_plugins(FILE *f, const kbi_env_record *e)
{
    json_t *list = json_object_get(e->json, "plugins");
    size_t i;
    json_t *p;
    json_array_foreach(list, i, p)
    {
        const char *name = json_string_value(json_object_get(p, "name"));
        const char *hash = json_string_value(json_object_get(p, "fnv1a64"));
        json_t *bytes = json_object_get(p, "bytes");
        fputs(i ? ", `" : "`", f);
        kbi_md_cell(f, name ? name : "?");
        fputc('`', f);
        if (hash && json_is_integer(bytes))
            fprintf(f, " (%lld bytes, FNV-1a %s)", (long long)json_integer_value(bytes), hash);
        else
            fputs(" (file not readable)", f);
    }
}

static void env_command(FILE *f, const kbi_env_record *e)
{
    const char *argv = kbi_jstr(e->json, "argv", NULL);
    if (argv[0]) {
        fputs("`", f);
        kbi_md_cell(f, argv);
        fputs("`", f);
    }
}

static void env_settings(FILE *f, const kbi_env_record *e)
{
    json_t *run = json_object_get(e->json, "run");
    fprintf(f,
            "cache %s, warm-up %.0f, %.0f–%.0f samples, min time %g s, max noise %g%%, "
            "timeout %g s",
            kbi_jstr(run, "cache", NULL), kbi_jnum(run, "warmup", NULL, NULL),
            kbi_jnum(run, "min_samples", NULL, NULL), kbi_jnum(run, "max_samples", NULL, NULL),
            kbi_jnum(run, "min_time", NULL, NULL), 100 * kbi_jnum(run, "max_noise", NULL, NULL),
            kbi_jnum(run, "timeout", NULL, NULL));
    if (kbi_jnum(run, "rounds", NULL, NULL) > 1)
        fprintf(f, ", %.0f rounds", kbi_jnum(run, "rounds", NULL, NULL));
}

static void env_shard(FILE *f, const kbi_env_record *e)
{
    const char *filter = kbi_jstr(e->json, "filter", NULL);
    kbi_md_cell(f, kbi_jstr(e->json, "shard", NULL)[0] ? kbi_jstr(e->json, "shard", NULL) : "1/1");
    if (filter[0]) {
        fputs(", filter `", f);
        kbi_md_cell(f, filter);
        fputs("`", f);
    }
}

static void env_ceilings(FILE *f, const kbi_env_record *e)
{
    const char *src = kbi_jstr(e->json, "ceilings", "source");
    if (e->bandwidth_gbs <= 0 && e->peak_gflops <= 0)
        fputs("none", f);
    if (e->bandwidth_gbs > 0)
        fprintf(f, "memory %.0f GB/s", e->bandwidth_gbs);
    if (e->peak_gflops > 0)
        fprintf(f, "%scompute %.0f GFLOP/s", e->bandwidth_gbs > 0 ? ", " : "", e->peak_gflops);
    if (src[0] && strcmp(src, "none") != 0)
        fprintf(f, " (%s)", src);
    /* Why a ceiling could not be measured. */
    if (kbi_jstr(e->json, "ceilings", "bandwidth_error")[0]) {
        fputs("; memory: ", f);
        kbi_md_cell(f, kbi_jstr(e->json, "ceilings", "bandwidth_error"));
    }
    if (kbi_jstr(e->json, "ceilings", "peak_error")[0]) {
        fputs("; compute: ", f);
        kbi_md_cell(f, kbi_jstr(e->json, "ceilings", "peak_error"));
    }
}

/* The board's idle power and limit, and the energy windows' settings. */
static void env_energy(FILE *f, const kbi_env_record *e)
{
    json_t *run = json_object_get(e->json, "run"), *energy = json_object_get(e->json, "energy");
    const char *why = kbi_jstr(energy, "why", NULL);
    if (strcmp(kbi_jstr(run, "energy", NULL), "on") != 0) {
        /* Runs before kbench measured energy do not say. */
        fputs(json_is_string(json_object_get(run, "energy")) ? "off" : "not measured", f);
        return;
    }
    if (!json_is_object(energy)) {
        fputs("on, not measured (no device)", f);
        return;
    }
    if (e->idle_watts > 0)
        fprintf(f, "idle %.1f W", e->idle_watts);
    else
        fputs("idle not measured", f);
    if (e->power_limit_watts > 0)
        fprintf(f, ", limit %.0f W", e->power_limit_watts);
    if (kbi_jnum(energy, "period_s", NULL, NULL) > 0)
        fprintf(f, ", counter steps every %.3g s", kbi_jnum(energy, "period_s", NULL, NULL));
    fprintf(f, "; %.0f windows of ≥ %g s per case", kbi_jnum(run, "energy_windows", NULL, NULL),
            kbi_jnum(run, "energy_window", NULL, NULL));
    if (why[0]) {
        fputs("; ", f);
        kbi_md_cell(f, why);
    }
}

static void env_complete(FILE *f, const kbi_env_record *e)
{
    fputs(e->complete ? "yes" : "**no**: interrupted or still running; results are partial", f);
}

static void write_environment(FILE *f, const kbi_rep_model *m)
{
    const kbi_result_set *set = m->set;
    fputs("## Environment\n\n", f);
    if (set->n_envs == 0) {
        fputs("No environment record was found: the results files hold cases only.\n\n", f);
        return;
    }
    fputs("| |", f);
    for (size_t i = 0; i < set->n_envs; i++) {
        fputc(' ', f);
        if (set->n_envs > 1)
            fprintf(f, "%s: ", m->runs.name[i]);
        kbi_md_cell(f, set->envs[i].source);
        fputs(" |", f);
    }
    fputs("\n|---|", f);
    for (size_t i = 0; i < set->n_envs; i++)
        fputs("---|", f);
    fputc('\n', f);
    md_env_row(f, "run", set, env_run_id);
    md_env_row(f, "time", set, env_time);
    md_env_row(f, "host", set, env_host);
    md_env_row(f, "CPU", set, env_cpu);
    md_env_row(f, "GPU", set, env_gpu);
    md_env_row(f, "memory", set, env_memory);
    md_env_row(f, "clocks", set, env_clocks);
    md_env_row(f, "CUDA", set, env_cuda);
    md_env_row(f, "build", set, env_build);
    md_env_row(f, "compiler", set, env_compiler);
    for (size_t i = 0; i < set->n_envs; i++)
        if (json_array_size(json_object_get(set->envs[i].json, "plugins"))) {
            md_env_row(f, "plugins", set, env_plugins);
            break;
        }
    md_env_row(f, "command", set, env_command);
    md_env_row(f, "measurement", set, env_settings);
    md_env_row(f, "shard", set, env_shard);
    md_env_row(f, "ceilings", set, env_ceilings);
    md_env_row(f, "energy", set, env_energy);
    md_env_row(f, "complete", set, env_complete);
    fputc('\n', f);
}

static void write_summary(FILE *f, const kbi_rep_model *m)
{
    const kbi_result_set *set = m->set;
    fputs("## Summary\n\n| plugin | cases |", f);
    for (int s = 0; s < KBI_ST_COUNT; s++)
        fprintf(f, " %s |", kbi_status_name((kbi_status)s));
    fputs("\n|---|---:|", f);
    for (int s = 0; s < KBI_ST_COUNT; s++)
        fputs("---:|", f);
    fputc('\n', f);
    for (size_t i = 0; i < m->n_plugins; i++) {
        const kbi_rep_plugin *p = &m->plugins[i];
        size_t count[KBI_ST_COUNT] = {0};
        for (size_t k = 0; k < p->n_cases; k++)
            count[set->cases[p->cases[k]].status]++;
        fprintf(f, "| [%s](#plugin-%s) | %zu |", p->name, p->name, p->n_cases);
        for (int s = 0; s < KBI_ST_COUNT; s++)
            fprintf(f, s == KBI_ST_OK || !count[s] ? " %zu |" : " **%zu** |", count[s]);
        fputc('\n', f);
    }
    fputc('\n', f);
}

static void md_image(FILE *f, const kbi_rep_chart *c)
{
    if (!c->stem || !c->drawn)
        return;
    fputs("![", f);
    kbi_md_cell(f, c->title);
    fprintf(f, "](charts/%s.png)\n\n", c->stem);
    fprintf(f,
            "<sub>[SVG](charts/%s.svg) · [data](charts/%s.dat) · "
            "[gnuplot script](charts/%s.gp)</sub>\n\n",
            c->stem, c->stem, c->stem);
}

/* Columns shown at one point: only the rates that some case there has. */
typedef struct point_cols {
    int flops, bytes, items, verify, run;
    int frac_peak, frac_bandwidth; /* some case has the fraction (ceilings known) */
    int energy;                    /* some case has an energy record */
    const char *item_unit;         /* of the first case that counts items */
    const char *verify_metric;     /* when every case uses one, else NULL */
    const char *baseline;          /* the point's baseline variant, "" if none */
    int mixed_baseline;            /* its cases name different baselines */
} point_cols;

static point_cols columns_of(const kbi_result_set *set, const kbi_rep_plugin *p,
                             const kbi_rep_point *q)
{
    point_cols pc = {0};
    int metric_set = 0;
    for (size_t r = 0; r < p->n_rows; r++) {
        const kbi_case_result *c;
        if (q->cell[r] == KBI_NO_CASE)
            continue;
        c = &set->cases[q->cell[r]];
        pc.flops |= c->flops > 0;
        pc.bytes |= c->bytes > 0;
        pc.items |= c->items > 0;
        pc.frac_peak |= c->flops > 0 && c->frac_peak > 0;
        pc.frac_bandwidth |= c->bytes > 0 && c->frac_bandwidth > 0;
        pc.energy |= c->has_energy;
        if (!pc.item_unit && c->items > 0 && c->item_unit[0])
            pc.item_unit = c->item_unit;
        if (c->has_verify) {
            pc.verify = 1;
            if (!metric_set) {
                pc.verify_metric = c->verify_metric;
                metric_set = 1;
            } else if (pc.verify_metric && strcmp(pc.verify_metric, c->verify_metric) != 0) {
                pc.verify_metric = NULL;
            }
        }
    }
    pc.run = p->multi_run;
    pc.baseline = q->baseline;
    pc.mixed_baseline = q->mixed_baseline;
    return pc;
}

/* A fraction of a ceiling as a table cell; "<0.1%" rather than "0.0%". */
static void md_fraction(FILE *f, double frac)
{
    if (frac < 0.001)
        fputs(" | <0.1%", f);
    else
        fprintf(f, " | %.1f%%", 100 * frac);
}

static void fmt_rate(double v, char *out, size_t n)
{
    kbi_fmt_sig4(v, out, n);
}

/* The median and its confidence interval; also for verify_failed cases,
 * which were timed. */
static void md_timing(FILE *f, const kbi_case_result *c)
{
    kbi_time_unit u;
    char buf[128], lo[64], hi[64];
    if (!(c->stats.median > 0)) {
        fputs(" | — | —", f);
        return;
    }
    if (kbi_case_not_timing(c)) {
        kbi_format_duration(c->stats.median, buf, sizeof buf);
        fprintf(f, " | not a timing (%s under a sanitizer) | —", buf);
        return;
    }
    u = kbi_time_unit_for(c->stats.median);
    kbi_format_duration(c->stats.median, buf, sizeof buf);
    kbi_fmt_sig4(c->stats.ci_low * u.scale, lo, sizeof lo);
    kbi_fmt_sig4(c->stats.ci_high * u.scale, hi, sizeof hi);
    fprintf(f,
            c->stats.noise < 0.01 ? " | %s | %s – %s %s (±%.2f%%)" : " | %s | %s – %s %s (±%.1f%%)",
            buf, lo, hi, u.name, 100 * c->stats.noise);
}

/* The rate of kind (count: the case's flops or bytes) and, when the table
 * has the column, its fraction of the device's ceiling. */
static void md_rate(FILE *f, const kbi_case_result *c, int kind, double count, int frac_column,
                    double frac)
{
    double v, lo, hi;
    char buf[128];
    int ok = kbi_case_ok(c) && count > 0;
    if (ok && kbi_case_rate(c, kind, &v, &lo, &hi)) {
        fmt_rate(v, buf, sizeof buf);
        fprintf(f, " | %s", buf);
    } else {
        fputs(" | —", f);
    }
    if (!frac_column)
        return;
    if (ok && frac > 0)
        md_fraction(f, frac);
    else
        fputs(" | —", f);
}

static void md_items(FILE *f, const kbi_case_result *c, const point_cols *pc)
{
    double v, lo, hi;
    char buf[128];
    if (!(kbi_case_ok(c) && c->items > 0 && kbi_case_rate(c, KBI_RATE_ITEMS, &v, &lo, &hi))) {
        fputs(" | —", f);
        return;
    }
    kbi_fmt_si(v, buf, sizeof buf);
    fprintf(f, " | %s", buf);
    /* The header names the unit; say it here only when it differs. */
    if (pc->item_unit && c->item_unit[0] && strcmp(c->item_unit, pc->item_unit) != 0)
        fprintf(f, " %s/s", c->item_unit);
}

static void md_speedup(FILE *f, const kbi_result_set *set, size_t ci, const point_cols *pc)
{
    double sp;
    if (!kbi_report_speedup(set, ci, &sp)) {
        fputs(" | —", f);
        return;
    }
    fprintf(f, " | %.2f×", sp);
    /* The header cannot name one baseline: the cell does. */
    if (pc->mixed_baseline) {
        fputs(" vs ", f);
        kbi_md_cell(f, set->cases[ci].baseline);
    }
}

static void md_verify(FILE *f, const kbi_case_result *c, const point_cols *pc)
{
    char buf[128], buf2[128];
    if (!c->has_verify) {
        fputs(c->status == KBI_ST_OK ? " | not verified" : " | —", f);
        return;
    }
    snprintf(buf, sizeof buf, "%.3g", c->verify_error);
    snprintf(buf2, sizeof buf2, "%.3g", c->verify_tolerance);
    if (isnan(c->verify_tolerance)) { /* the plugin gave no tolerance */
        fprintf(f, c->verify_passed ? " | %s" : " | **✗ %s**", buf);
        if (!pc->verify_metric && c->verify_metric[0])
            fprintf(f, " %s", c->verify_metric);
        return;
    }
    if (c->verify_error == 0 && c->verify_tolerance == 0) {
        fprintf(f, c->verify_passed ? " | exact" : " | **✗ mismatch**");
        return;
    }
    fprintf(f, c->verify_passed ? " | %s (tol %s)" : " | **✗ %s > tol %s**", buf, buf2);
    if (!pc->verify_metric && c->verify_metric[0])
        fprintf(f, " %s", c->verify_metric);
}

/* Energy per run ± its uncertainty, the mean power, and the work per joule of the rates the
 * table shows. */
static void md_energy(FILE *f, const kbi_case_result *c, const point_cols *pc)
{
    const kbi_case_energy *e = &c->energy;
    char buf[64];
    int ok = c->has_energy && e->measured && kbi_case_ok(c);
    if (!ok) {
        fputs(c->has_energy && kbi_case_ok(c) ? " | not measured | —" : " | — | —", f);
    } else {
        kbi_format_joules(e->j_per_run, buf, sizeof buf);
        fprintf(f, " | %s", buf);
        if (isfinite(e->j_per_run_u))
            fprintf(f, " ± %.1f%%", 100 * e->j_per_run_u / e->j_per_run);
        fprintf(f, " | %.0f W", e->watts);
    }
    if (pc->flops)
        fprintf(f, ok && e->gflop_per_j > 0 ? " | %.4g" : " | —", e->gflop_per_j);
    if (pc->bytes)
        fprintf(f, ok && e->gb_per_j > 0 ? " | %.4g" : " | —", e->gb_per_j);
}

/* Notes: what a reader must not miss about this number. */
static void md_notes(FILE *f, const kbi_case_result *c)
{
    json_t *clocks = json_object_get(c->json, "clocks");
    json_t *run = c->env ? json_object_get(c->env->json, "run") : NULL;
    int first = 1;
    fputs(" | ", f);
    if (c->clock_drop) {
        int a, b;
        double s0 = kbi_jnum(clocks, "sm_start_mhz", NULL, &a);
        double s1 = kbi_jnum(clocks, "sm_end_mhz", NULL, &b);
        if (a && b)
            fprintf(f, "⚠ SM clock dropped %.0f→%.0f MHz", s0, s1);
        else
            fputs("⚠ SM clock dropped", f);
        first = 0;
    }
    if (c->stats.median > 0 && run) {
        double max_noise = kbi_jnum(run, "max_noise", NULL, NULL);
        if (max_noise > 0 && c->stats.noise > max_noise) {
            fprintf(f, "%snoisy: ±%.1f%% > %.1f%%", first ? "" : "; ", 100 * c->stats.noise,
                    100 * max_noise);
            first = 0;
        }
        if (c->stats.n < (size_t)kbi_jnum(run, "min_samples", NULL, NULL)) {
            fprintf(f, "%sonly %zu samples", first ? "" : "; ", c->stats.n);
            first = 0;
        }
    }
    if (c->status == KBI_ST_OK && c->has_energy && !c->energy.measured) {
        fprintf(f, "%senergy: ", first ? "" : "; ");
        kbi_md_cell(f, c->energy.why);
        first = 0;
    }
    if (c->status == KBI_ST_OK && c->instrumented.ran && c->instrumented.status != KBI_ST_OK) {
        fprintf(f, "%sinstrument %s: ", first ? "" : "; ", kbi_status_name(c->instrumented.status));
        kbi_md_cell(f, c->instrumented.message);
        first = 0;
    }
    if (c->status == KBI_ST_OK && c->rounds_planned > 1 && c->rounds_read < c->rounds_planned) {
        /* The run was cut off mid-rounds: this case's spread over rounds is less known. */
        fprintf(f, "%sonly %zu of %zu rounds", first ? "" : "; ", c->rounds_read,
                c->rounds_planned);
        first = 0;
    }
    if (c->status != KBI_ST_OK && c->message[0]) {
        char shortmsg[100];
        snprintf(shortmsg, sizeof shortmsg, "%s", c->message);
        if (strlen(c->message) >= sizeof shortmsg)
            memcpy(shortmsg + sizeof shortmsg - 4, "...", 4);
        if (!first)
            fputs("; ", f);
        kbi_md_cell(f, shortmsg);
    }
    fputs(" |\n", f);
}

static void write_case_row(FILE *f, const kbi_rep_model *m, const kbi_rep_plugin *p, size_t row,
                           size_t ci, const point_cols *pc)
{
    const kbi_case_result *c = &m->set->cases[ci];
    fputs("| ", f);
    kbi_md_cell(f, p->rows[row].variant);
    if (strcmp(p->rows[row].variant, c->baseline) == 0)
        fputs(" (baseline)", f);
    if (pc->run)
        fprintf(f, " | %s", p->rows[row].run_label ? p->rows[row].run_label : "?");
    fprintf(f, c->status == KBI_ST_OK ? " | %s" : " | **%s**", kbi_status_name(c->status));
    md_timing(f, c);
    if (pc->flops)
        md_rate(f, c, KBI_RATE_FLOPS, c->flops, pc->frac_peak, c->frac_peak);
    if (pc->bytes)
        md_rate(f, c, KBI_RATE_BYTES, c->bytes, pc->frac_bandwidth, c->frac_bandwidth);
    if (pc->items)
        md_items(f, c, pc);
    if (pc->baseline[0])
        md_speedup(f, m->set, ci, pc);
    if (pc->verify)
        md_verify(f, c, pc);
    if (pc->energy)
        md_energy(f, c, pc);
    md_notes(f, c);
}

/* A column of a point's table: its heading (pre, then cell escaped, then
 * post) and its alignment. */
typedef struct md_col {
    const char *pre, *cell, *post, *align;
} md_col;

/* The columns the cases of a point need, in order; returns how many. */
static size_t point_columns(const point_cols *pc, md_col *c)
{
    size_t n = 0;
    c[n++] = (md_col){"variant", NULL, "", "---"};
    if (pc->run)
        c[n++] = (md_col){"run", NULL, "", "---"};
    c[n++] = (md_col){"status", NULL, "", "---"};
    c[n++] = (md_col){"median", NULL, "", "---:"};
    c[n++] = (md_col){"95% CI of median", NULL, "", "---"};
    if (pc->flops)
        c[n++] = (md_col){"GFLOP/s", NULL, "", "---:"};
    if (pc->flops && pc->frac_peak)
        c[n++] = (md_col){"of peak", NULL, "", "---:"};
    if (pc->bytes)
        c[n++] = (md_col){"GB/s", NULL, "", "---:"};
    if (pc->bytes && pc->frac_bandwidth)
        c[n++] = (md_col){"of bandwidth", NULL, "", "---:"};
    if (pc->items)
        c[n++] = (md_col){"", pc->item_unit ? pc->item_unit : "items", "/s", "---:"};
    if (pc->baseline[0] && pc->mixed_baseline)
        c[n++] = (md_col){"speedup vs its section's baseline", NULL, "", "---:"};
    else if (pc->baseline[0])
        c[n++] = (md_col){"speedup vs ", pc->baseline, "", "---:"};
    if (pc->verify && pc->verify_metric && pc->verify_metric[0])
        c[n++] = (md_col){"verify error (", pc->verify_metric, ")", "---"};
    else if (pc->verify)
        c[n++] = (md_col){"verify error", NULL, "", "---"};
    if (pc->energy) {
        c[n++] = (md_col){"energy per run", NULL, "", "---:"};
        c[n++] = (md_col){"power", NULL, "", "---:"};
        if (pc->flops)
            c[n++] = (md_col){"GFLOP/J", NULL, "", "---:"};
        if (pc->bytes)
            c[n++] = (md_col){"GB/J", NULL, "", "---:"};
    }
    c[n++] = (md_col){"notes", NULL, "", "---"};
    return n;
}

static void write_point(FILE *f, const kbi_rep_model *m, const kbi_rep_plugin *p,
                        const kbi_rep_point *q)
{
    point_cols pc = columns_of(m->set, p, q);
    md_col cols[24];
    size_t n = point_columns(&pc, cols);
    fputs("### ", f);
    kbi_md_cell(f, q->label);
    fputs("\n\n|", f);
    for (size_t k = 0; k < n; k++) {
        fprintf(f, " %s", cols[k].pre);
        kbi_md_cell(f, cols[k].cell);
        fprintf(f, "%s |", cols[k].post);
    }
    fputs("\n|", f);
    for (size_t k = 0; k < n; k++)
        fprintf(f, "%s|", cols[k].align);
    fputc('\n', f);
    for (size_t r = 0; r < p->n_rows; r++)
        if (q->cell[r] != KBI_NO_CASE)
            write_case_row(f, m, p, r, q->cell[r], &pc);
    fputc('\n', f);
    md_image(f, &q->bar);
}

static void md_metric(FILE *f, double v, const char *fmt, const char *suffix)
{
    if (isnan(v)) {
        fputs(" — |", f);
        return;
    }
    fputc(' ', f);
    fprintf(f, fmt, v);
    fprintf(f, "%s |", suffix ? suffix : "");
}

/* Nsight Compute figures of the plugin's profiled cases (`kbench profile`):
 * one row per kernel the profiled run launched, with its three largest
 * stall reasons. */
static void write_profiles(FILE *f, const kbi_result_set *set, const char *plugin)
{
    size_t i, len = strlen(plugin);
    json_t *doc;
    json_array_foreach(set->profiles, i, doc)
    {
        const char *id = json_string_value(json_object_get(doc, "case"));
        json_t *kernels = json_object_get(doc, "kernels"), *k;
        size_t j;
        if (strncmp(id, plugin, len) != 0 || id[len] != '/')
            continue;
        fputs("### Nsight Compute: `", f);
        kbi_md_cell(f, id);
        fputs("`\n\nOne profiled run (`kbench profile`, ", f);
        kbi_md_cell(f, json_string_value(json_object_get(doc, "source")));
        fputs("); stalls are warps per issued instruction.\n\n", f);
        fputs("| kernel | grid | block | duration | SM % | memory % | DRAM % | DRAM bytes | "
              "occupancy % | regs/thread | smem/block | bank conflicts ld / st | L1 hit % | "
              "L2 hit % | top stalls |\n",
              f);
        fputs("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n", f);
        json_array_foreach(kernels, j, k)
        {
            const char *unit;
            double v, w, top[3];
            char reasons[3][64];
            size_t n_top;
            fputs("| ", f); /* md_cell escapes < and |, so no code span here */
            kbi_md_cell(f, json_string_value(json_object_get(k, "name")));
            fputs(" | ", f);
            kbi_md_cell(f, json_string_value(json_object_get(k, "grid")));
            fputs(" | ", f);
            kbi_md_cell(f, json_string_value(json_object_get(k, "block")));
            fputs(" |", f);
            v = kbi_ncu_metric(k, "gpu__time_duration.sum", &unit);
            md_metric(f, v, "%.4g ", unit);
            md_metric(f,
                      kbi_ncu_metric(k, "sm__throughput.avg.pct_of_peak_sustained_elapsed", NULL),
                      "%.1f", NULL);
            md_metric(
                f,
                kbi_ncu_metric(
                    k, "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", NULL),
                "%.1f", NULL);
            md_metric(f,
                      kbi_ncu_metric(k, "dram__throughput.avg.pct_of_peak_sustained_elapsed", NULL),
                      "%.1f", NULL);
            v = kbi_ncu_metric(k, "dram__bytes.sum", &unit);
            md_metric(f, v, "%.4g ", unit);
            md_metric(f,
                      kbi_ncu_metric(k, "sm__warps_active.avg.pct_of_peak_sustained_active", NULL),
                      "%.1f", NULL);
            md_metric(f, kbi_ncu_metric(k, "launch__registers_per_thread", NULL), "%.0f", NULL);
            /* Static + dynamic, each in the unit ncu chose (byte or Kbyte). */
            v = kbi_ncu_metric(k, "launch__shared_mem_per_block_static", &unit);
            v = isnan(v) ? 0 : v * (unit && strncmp(unit, "Kbyte", 5) == 0 ? 1e3 : 1);
            w = kbi_ncu_metric(k, "launch__shared_mem_per_block_dynamic", &unit);
            w = isnan(w) ? 0 : w * (unit && strncmp(unit, "Kbyte", 5) == 0 ? 1e3 : 1);
            md_metric(f, v + w, "%.0f", " B");
            v = kbi_ncu_metric(k, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", NULL);
            w = kbi_ncu_metric(k, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", NULL);
            if (isnan(v) && isnan(w))
                fputs(" — |", f);
            else
                fprintf(f, " %.0f / %.0f |", v, w);
            md_metric(f, kbi_ncu_metric(k, "l1tex__t_sector_hit_rate.pct", NULL), "%.1f", NULL);
            md_metric(f, kbi_ncu_metric(k, "lts__t_sector_hit_rate.pct", NULL), "%.1f", NULL);
            n_top = kbi_ncu_top_stalls(k, reasons, top, 3);
            for (size_t t = 0; t < n_top; t++)
                fprintf(f, "%s%s %.2f", t ? ", " : " ", reasons[t], top[t]);
            fputs(" |\n", f);
        }
        fputc('\n', f);
    }
}

/* The metrics of every case of p, one row per case (point, then variant),
 * one column per metric: its value ± its standard uncertainty, in bold with
 * ✗ where it lies outside its declared bound. */
static void write_metrics_table(FILE *f, const kbi_rep_model *m, const kbi_rep_plugin *p)
{
    const kbi_result_set *set = m->set;
    kbi_strlist names = {0};
    const kbi_metric **decl;
    size_t n_oob = 0;
    int *instrumented, any_instrumented = 0;
    for (size_t k = 0; k < p->n_cases; k++) {
        const kbi_case_result *c = &set->cases[p->cases[k]];
        for (size_t j = 0; j < c->n_metrics; j++) {
            int seen = 0;
            for (size_t i = 0; i < names.n && !seen; i++)
                seen = strcmp(names.s[i], c->metrics[j].name) == 0;
            if (!seen)
                kbi_strlist_add(&names, c->metrics[j].name);
        }
    }
    if (!names.n)
        return;
    /* The heading of a column comes from a case that declares the metric. */
    decl = kbi_xcalloc(names.n, sizeof *decl);
    instrumented = kbi_xcalloc(names.n, sizeof *instrumented);
    for (size_t k = 0; k < p->n_cases; k++) {
        const kbi_case_result *c = &set->cases[p->cases[k]];
        for (size_t i = 0; i < names.n; i++) {
            const kbi_metric *x = kbi_find_metric(c, names.s[i]);
            if (x && (!decl[i] || (!decl[i]->declared && x->declared)))
                decl[i] = x;
            n_oob += x && !(x->in_bound && kbi_metric_within(x, x->value));
            instrumented[i] |= x && x->instrumented;
            any_instrumented |= instrumented[i];
        }
    }
    fprintf(f, "### Metrics of `%s`\n\n", p->name);
    fputs("Values the plugin reported, ± one standard uncertainty where it gave one", f);
    if (any_instrumented)
        fputs("; *instrumented*: measured by the plugin's instrument step, after the last verify "
              "and apart from the timed samples",
              f);
    if (n_oob)
        fprintf(f, "; **✗** marks a value outside its declared bound (%zu)", n_oob);
    fputs(".\n\n| case | variant |", f);
    for (size_t i = 0; i < names.n; i++) {
        const kbi_metric *d = decl[i];
        int any = 0;
        fputc(' ', f);
        kbi_md_cell(f, names.s[i]);
        if (d->unit[0] && strcmp(d->unit, "1") != 0) {
            fputs(" (", f);
            kbi_md_cell(f, d->unit);
            any = 1;
        }
        if (d->better != KB_BETTER_NONE) {
            fprintf(f, "%s%s is better", any ? "; " : " (", kbi_better_name(d->better));
            any = 1;
        }
        if (d->bounds & KB_BOUND_LOW) {
            fprintf(f, "%s≥ %.4g", any ? "; " : " (", d->low);
            any = 1;
        }
        if (d->bounds & KB_BOUND_HIGH) {
            fprintf(f, "%s≤ %.4g", any ? "; " : " (", d->high);
            any = 1;
        }
        if (instrumented[i]) {
            fprintf(f, "%s*instrumented*", any ? "; " : " (");
            any = 1;
        }
        fputs(any ? ") |" : " |", f);
    }
    fputs("\n|---|---|", f);
    for (size_t i = 0; i < names.n; i++)
        fputs("---:|", f);
    fputc('\n', f);
    for (size_t q = 0; q < p->n_points; q++) {
        for (size_t r = 0; r < p->n_rows; r++) {
            size_t ci = p->points[q].cell[r];
            const kbi_case_result *c;
            if (ci == KBI_NO_CASE || set->cases[ci].n_metrics == 0)
                continue;
            c = &set->cases[ci];
            fputs("| ", f);
            kbi_md_cell(f, p->points[q].label);
            fputs(" | ", f);
            kbi_md_cell(f, p->rows[r].name);
            fputs(" |", f);
            for (size_t i = 0; i < names.n; i++) {
                const kbi_metric *x = kbi_find_metric(c, names.s[i]);
                char v[96];
                if (!x) {
                    fputs(" — |", f);
                    continue;
                }
                kbi_fmt_metric(x, v, sizeof v);
                fprintf(f, x->in_bound && kbi_metric_within(x, x->value) ? " %s |" : " **%s ✗** |",
                        v);
            }
            fputc('\n', f);
        }
    }
    fputc('\n', f);
    free(decl);
    free(instrumented);
    kbi_strlist_free(&names);
}

/* The parameters every point of p shares, once, so that the headings can name only what
 * varies (nvbench's compact state names); nothing when there is one point (its heading names
 * its problem) or nothing is shared. */
static void write_shared_params(FILE *f, const kbi_result_set *set, const kbi_rep_plugin *p)
{
    int any = 0;
    if (p->n_points < 2)
        return;
    for (size_t k = 0; k < p->n_keys; k++) {
        char t[256];
        if (p->varies[k])
            continue;
        kbi_param_text(&set->cases[p->points[0].first], p->keys[k], t, sizeof t);
        fputs(any ? ", " : "Every case has ", f);
        kbi_md_cell(f, p->keys[k]);
        fputc('=', f);
        kbi_md_cell(f, t);
        any = 1;
    }
    if (any)
        fputs("; each heading names what varies.\n\n", f);
}

static void write_plugin(FILE *f, const kbi_rep_model *m, const kbi_rep_plugin *p)
{
    const kbi_result_set *set = m->set;
    size_t n_bad = 0;
    char ubuf[128];
    fprintf(f, "<a id=\"plugin-%s\"></a>\n\n## Plugin `%s`\n\n", p->name, p->name);
    fprintf(f, "%zu cases at %zu parameter points, %zu variants", p->n_cases, p->n_points,
            p->n_rows);
    if (p->baselines.n == 1) {
        fputs("; baseline variant `", f);
        kbi_md_cell(f, p->baseline);
        fputs("` (speedup = its median time / the variant's)", f);
    } else if (p->baselines.n > 1) {
        /* One per profile section: each table and chart names its own. */
        fputs("; baseline variants ", f);
        for (size_t i = 0; i < p->baselines.n; i++) {
            fputs(i ? ", `" : "`", f);
            kbi_md_cell(f, p->baselines.s[i]);
            fputs("`", f);
        }
        fputs(", one per profile section, each table and chart naming its own (speedup = "
              "the baseline's median time / the variant's)",
              f);
    }
    if (p->kind != KBI_RATE_NONE)
        fprintf(f, "; charts show %s", kbi_rep_kind_label(set, p, ubuf, sizeof ubuf));
    fputs(". Charts show cases whose status is ok.\n\n", f);
    write_shared_params(f, set, p);
    for (size_t i = 0; i < p->notes.n; i++) {
        fputs("- Note: ", f);
        kbi_md_cell(f, p->notes.s[i]);
        fputc('\n', f);
    }
    if (p->notes.n)
        fputc('\n', f);
    for (size_t i = 0; i < p->n_charts; i++)
        md_image(f, &p->charts[i]);
    write_metrics_table(f, m, p);
    for (size_t k = 0; k < p->n_points; k++)
        write_point(f, m, p, &p->points[k]);
    if (set->profiles)
        write_profiles(f, set, p->name);
    for (size_t k = 0; k < p->n_cases; k++)
        n_bad += set->cases[p->cases[k]].status != KBI_ST_OK;
    if (n_bad) {
        fprintf(f, "### Cases of `%s` that did not pass (%zu)\n\n", p->name, n_bad);
        fputs("| case | status | message | record |\n|---|---|---|---|\n", f);
        for (size_t k = 0; k < p->n_cases; k++) {
            const kbi_case_result *c = &set->cases[p->cases[k]];
            if (c->status == KBI_ST_OK)
                continue;
            fputs("| `", f);
            kbi_md_cell(f, c->id);
            fprintf(f, "` | **%s** | ", kbi_status_name(c->status));
            kbi_md_cell(f, c->message[0] ? c->message : "(no message)");
            fputs(" | ", f);
            kbi_md_cell(f, c->source);
            fputs(" |\n", f);
        }
        fputc('\n', f);
    }
}

void kbi_report_write_comparison(FILE *f, const char *path, const char *text)
{
    const char *line = strchr(text, '\n'); /* its "# kbench compare" heading is ours */
    fputs("## Comparison\n\nWhat `kbench compare` wrote to `", f);
    kbi_md_cell(f, path);
    fputs("` (`--out`):\n\n", f);
    while (line && *++line) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        fprintf(f, "%s%.*s\n", line[0] == '#' ? "#" : "", (int)n, line);
        line = end;
    }
    fputc('\n', f);
}

int kbi_report_write_markdown(FILE *f, const kbi_rep_model *m, const char *title,
                              const kbi_chart_ctx *ctx, int charts_requested)
{
    const kbi_result_set *set = m->set;
    char now[64];
    time_t t = time(NULL);
    struct tm tm;
    size_t n_warn = set->n_warnings + (ctx ? ctx->n_warnings : 0);
    strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
    fputs("# kbench report: ", f);
    kbi_md_cell(f, title);
    fprintf(f, "\n\nWritten %s by kbench report from %zu case%s of %zu run%s.\n\n", now,
            set->n_cases, set->n_cases == 1 ? "" : "s", set->n_envs, set->n_envs == 1 ? "" : "s");
    fputs("Times are medians of every sample; the interval is the 95% confidence interval of "
          "the median (order statistics) and ± its half-width relative to the median. Rates "
          "come from the median and the plugin's counts; fractions are of the run's "
          "ceilings.\n\n",
          f);
    if (!charts_requested) {
        fputs("> Charts were not drawn: they were turned off (--no-charts).\n\n", f);
    } else if (ctx && !ctx->gnuplot) {
        fputs("> **Charts were not drawn**: ", f);
        kbi_md_cell(f, ctx->why_not);
        fputs(". Their data and gnuplot scripts are in `charts/`; run `gnuplot NAME.gp` there "
              "to draw them.\n\n",
              f);
    }
    {
        size_t not_timing = 0;
        for (size_t i = 0; i < set->n_cases; i++)
            not_timing += kbi_case_not_timing(&set->cases[i]);
        if (not_timing)
            fprintf(f,
                    "> **Not timings:** %zu case%s come%s from a `--sanitize` run: the sanitizer "
                    "slows kernels by orders of magnitude, so %s times are shown as not "
                    "timings, with no rate, speedup or chart point.\n\n",
                    not_timing, not_timing == 1 ? "" : "s", not_timing == 1 ? "s" : "",
                    not_timing == 1 ? "its" : "their");
    }
    if (n_warn) {
        fputs("## Warnings\n\n", f);
        for (size_t i = 0; i < set->n_warnings; i++) {
            fputs("- ", f);
            kbi_md_cell(f, set->warnings[i]);
            fputc('\n', f);
        }
        for (size_t i = 0; ctx && i < ctx->n_warnings; i++) {
            fputs("- ", f);
            kbi_md_cell(f, ctx->warnings[i]);
            fputc('\n', f);
        }
        fputc('\n', f);
    }
    {
        /* Clock drops are easy to miss in big tables: list them up front. */
        size_t drops = 0;
        for (size_t i = 0; i < set->n_cases; i++)
            drops += set->cases[i].clock_drop != 0;
        if (drops) {
            fprintf(f,
                    "> ⚠ The SM clock dropped during %zu case%s (thermal or power "
                    "throttling); their times are flagged in the notes:",
                    drops, drops == 1 ? "" : "s");
            for (size_t i = 0; i < set->n_cases; i++)
                if (set->cases[i].clock_drop) {
                    fputs(" `", f);
                    kbi_md_cell(f, set->cases[i].id);
                    fputs("`", f);
                }
            fputs("\n\n", f);
        }
    }
    write_environment(f, m);
    write_summary(f, m);
    for (size_t i = 0; i < m->n_plugins; i++)
        write_plugin(f, m, &m->plugins[i]);
    return ferror(f) ? KBI_ERR_IO : KBI_OK;
}
