/* What `kbench history` writes as text: history.md (the runs, the steps, a table per plugin),
 * history.csv (a row per case and run), and the summary on stdout (each slower step). */
#define _XOPEN_SOURCE 700
#include "history.h"

#include <math.h>
#include <string.h>

#include "format.h"

static const char *const order_names[] = {"time", "revision", "input"};

/* "r2 → r3 (`8ef6958` → `14ba196`)" of the step from run a to run b. */
static void step_name(const kbi_history *h, size_t a, size_t b, FILE *f)
{
    fprintf(f, "r%zu → r%zu (`%s` → `%s`)", a + 1, b + 1, h->runs[a].label, h->runs[b].label);
}

/* The median of c, or its status when it has none. */
static void median_text(const kbi_case_result *c, char *out, size_t n)
{
    if (c->status == KBI_ST_OK && c->stats.median > 0)
        kbi_format_duration(c->stats.median, out, n);
    else
        snprintf(out, n, "%s", kbi_status_name(c->status));
}

/* One cell of a plugin's table: the case's median in run k, then the verdict of the step that
 * ends there (a change in bold where it is a regression), and the run it was judged against
 * when that is not the run before. */
static void cell_text(const kbi_history_cell *cell, size_t k, FILE *f)
{
    char median[64];
    kbi_verdict v = cell->out.verdict;
    if (!cell->c) {
        fputs("—", f);
        return;
    }
    median_text(cell->c, median, sizeof median);
    fputs(median, f);
    if (!cell->judged)
        return;
    if ((v == KBI_VERDICT_SLOWER || v == KBI_VERDICT_FASTER) && isfinite(cell->out.ratio))
        fprintf(f, v == KBI_VERDICT_SLOWER ? " **slower ×%.3f**" : " faster ×%.3f",
                cell->out.ratio);
    else
        fprintf(f, v == KBI_VERDICT_FAILED ? " **%s**" : " %s", kbi_verdict_name(v));
    if (cell->from + 1 != k)
        fprintf(f, " (since r%zu)", cell->from + 1);
}

static void write_runs(const kbi_history *h, FILE *f)
{
    fputs("## Runs\n\n| run | revision | time | run id | GPU | cases | env record |\n"
          "|---|---|---|---|---|---:|---|\n",
          f);
    for (size_t k = 0; k < h->n_runs; k++) {
        const kbi_history_run *r = &h->runs[k];
        fprintf(f, "| r%zu | `", k + 1);
        kbi_md_cell(f, r->revision[0] ? r->revision : "unknown");
        fputs("` | ", f);
        kbi_md_cell(f, r->time[0] ? r->time : "—");
        fputs(" | ", f);
        kbi_md_cell(f, r->env->run_id);
        fputs(" | ", f);
        kbi_md_cell(f, r->env->device_name && r->env->device_name[0] ? r->env->device_name : "—");
        fprintf(f, " | %zu | ", r->view.n_cases);
        kbi_md_cell(f, r->env->source);
        fputs(" |\n", f);
    }
    fputc('\n', f);
}

/* Whether every step's warnings hold w (so it is said once, above the table). */
static int every_step_says(const kbi_history *h, const char *w)
{
    for (size_t k = 1; k < h->n_runs; k++) {
        int found = 0;
        for (size_t i = 0; i < h->runs[k].warnings.n && !found; i++)
            found = strcmp(h->runs[k].warnings.s[i], w) == 0;
        if (!found)
            return 0;
    }
    return 1;
}

/* A table of the steps: each verdict's count, and compare's warnings (those of every step once,
 * before it). */
static void write_steps(const kbi_history *h, FILE *f)
{
    static const kbi_verdict shown[] = {KBI_VERDICT_SLOWER, KBI_VERDICT_FAILED, KBI_VERDICT_FASTER,
                                        KBI_VERDICT_SAME, KBI_VERDICT_UNSURE};
    fputs("## Steps\n\n", f);
    for (size_t i = 0; i < h->runs[1].warnings.n; i++)
        if (every_step_says(h, h->runs[1].warnings.s[i])) {
            fputs("Every step: ", f);
            kbi_md_cell(f, h->runs[1].warnings.s[i]);
            fputs(".\n\n", f);
        }
    fputs("| step | slower | failed | faster | same | unsure | other | new | missing | notes |\n"
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
          f);
    for (size_t k = 1; k < h->n_runs; k++) {
        const kbi_history_run *r = &h->runs[k];
        size_t other = r->matched, said = 0;
        fputs("| ", f);
        step_name(h, k - 1, k, f);
        for (size_t i = 0; i < sizeof shown / sizeof *shown; i++) {
            fprintf(f, r->count[shown[i]] && i < 2 ? " | **%zu**" : " | %zu", r->count[shown[i]]);
            other -= r->count[shown[i]];
        }
        fprintf(f, " | %zu | %zu | %zu | ", other, r->count[KBI_VERDICT_ONLY_RESULTS],
                r->count[KBI_VERDICT_ONLY_BASELINE]);
        for (size_t i = 0; i < r->warnings.n; i++) {
            if (every_step_says(h, r->warnings.s[i]))
                continue;
            fputs(said++ ? "; " : "", f);
            kbi_md_cell(f, r->warnings.s[i]);
        }
        fputs(" |\n", f);
    }
    fputs("\n*other*: not measured (skipped, or failing on both sides) or not comparable "
          "(host times on different CPUs, device times on different GPU models: a step to "
          "another GPU is not a regression); *new*: in this run, in none before; *missing*: "
          "measured before, not in this run (judged where it comes back).\n\n",
          f);
}

/* The newest step as compare's headline says it. */
static void newest_headline(const kbi_history *h, FILE *f, int markdown)
{
    const kbi_history_run *r = &h->runs[h->n_runs - 1];
    const char *b = markdown ? "**" : "";
    if (h->exit_code == KBI_EXIT_USAGE)
        fprintf(f, "%sNOT TIMINGS%s (a --sanitize run)", b, b);
    else if (r->regressed)
        fprintf(f, "%sREGRESSION%s: %zu slower, %zu failed", b, b, r->count[KBI_VERDICT_SLOWER],
                r->count[KBI_VERDICT_FAILED]);
    else if (r->unjudged)
        fprintf(f, "%sUNSURE%s: %zu of %zu cases could not be judged", b, b, r->unjudged,
                r->matched);
    else
        fprintf(f, "%sOK%s: %zu cases judged", b, b, r->matched);
}

/* One table per plugin: a row per case, a column per run; with the chart of each case. */
static void write_plugin(const kbi_history *h, const char *plugin, const char *charts, FILE *f)
{
    char stem[256];
    fputs("## ", f);
    kbi_md_cell(f, plugin);
    fputs("\n\n", f);
    if (charts && kbi_history_plugin_changed(h, plugin)) {
        kbi_file_safe(plugin, stem, sizeof stem);
        fprintf(f,
                "![%s: the cases with a slower or faster step, each relative to its first "
                "run](%s/history-%s-changed.png)\n\n",
                plugin, charts, stem);
    }
    fputs("| case", f);
    for (size_t k = 0; k < h->n_runs; k++)
        fprintf(f, " | r%zu `%s`", k + 1, h->runs[k].label);
    fputs(charts ? " | chart |\n|---" : " |\n|---", f);
    for (size_t k = 0; k < h->n_runs; k++)
        fputs("|---:", f);
    fputs(charts ? "|---|\n" : "|\n", f);
    for (size_t t = 0; t < h->n_tracks; t++) {
        const kbi_history_track *tr = &h->tracks[t];
        if (strcmp(tr->plugin, plugin) != 0)
            continue;
        fputs("| `", f);
        kbi_md_cell(f, tr->id);
        fputs("`", f);
        for (size_t k = 0; k < h->n_runs; k++) {
            fputs(" | ", f);
            cell_text(&tr->cells[k], k, f);
        }
        if (charts) {
            kbi_history_chart_stem(h, t, stem, sizeof stem);
            fprintf(f, " | [png](%s/%s.png)", charts, stem);
        }
        fputs(" |\n", f);
    }
    fputc('\n', f);
}

int kbi_history_write_markdown(const kbi_history *h, const char *charts, FILE *f)
{
    kbi_strlist plugins = {0};
    fputs("# kbench history\n\n", f);
    fprintf(f,
            "%zu runs, ordered by %s (oldest first), %zu cases. Each step compares a run with "
            "the run before by `kbench compare`'s rule (threshold %.3g%%, alpha %g): a case is "
            "**slower** or **faster** only when its change is larger than the threshold, than "
            "the runs' noise (or, with rounds, than what the runs' drift can explain) and the "
            "test agrees; **same** when it is within the threshold and the runs could have "
            "seen it; otherwise **unsure**. A case missing from a run is judged, where it "
            "comes back, against the last run that measured it (*since rK*). The ratio is the "
            "case's time over its previous time (above 1: slower).\n\n",
            h->n_runs, order_names[h->order], h->n_tracks, 100 * h->opt.threshold, h->opt.alpha);
    for (size_t i = 0; i < h->warnings.n; i++) {
        fputs("> **Warning:** ", f);
        kbi_md_cell(f, h->warnings.s[i]);
        fputs("\n\n", f);
    }
    fputs("Newest step: ", f);
    newest_headline(h, f, 1);
    fputs(".\n\n", f);
    write_runs(h, f);
    write_steps(h, f);
    for (size_t t = 0; t < h->n_tracks; t++) {
        int seen = 0;
        for (size_t i = 0; i < plugins.n && !seen; i++)
            seen = strcmp(plugins.s[i], h->tracks[t].plugin) == 0;
        if (!seen) {
            kbi_strlist_add(&plugins, h->tracks[t].plugin);
            write_plugin(h, h->tracks[t].plugin, charts, f);
        }
    }
    kbi_strlist_free(&plugins);
    return ferror(f) ? KBI_ERR_IO : KBI_OK;
}

/* ---- history.csv ---- */

static void csv_num(FILE *f, double v)
{
    fputc(',', f);
    if (isfinite(v))
        fprintf(f, "%.10g", v);
}

static void csv_next(FILE *f, const char *s)
{
    fputc(',', f);
    kbi_csv_field(f, s);
}

int kbi_history_write_csv(const kbi_history *h, FILE *f)
{
    fputs("plugin,case,id_in_run,run,label,revision,time,run_id,status,median_s,ci_low_s,"
          "ci_high_s,noise,samples,rounds,from_run,from_label,verdict,ratio,detectable,why\n",
          f);
    for (size_t t = 0; t < h->n_tracks; t++)
        for (size_t k = 0; k < h->n_runs; k++) {
            const kbi_history_cell *cell = &h->tracks[t].cells[k];
            const kbi_history_run *r = &h->runs[k];
            int ok;
            if (!cell->c)
                continue;
            ok = cell->c->status == KBI_ST_OK && cell->c->stats.median > 0;
            kbi_csv_field(f, h->tracks[t].plugin);
            csv_next(f, h->tracks[t].id);
            csv_next(f, cell->c->id);
            fprintf(f, ",%zu", k + 1);
            csv_next(f, r->label);
            csv_next(f, r->revision);
            csv_next(f, r->time);
            csv_next(f, r->env->run_id);
            csv_next(f, kbi_status_name(cell->c->status));
            csv_num(f, ok ? cell->c->stats.median : NAN);
            csv_num(f, ok ? cell->c->stats.ci_low : NAN);
            csv_num(f, ok ? cell->c->stats.ci_high : NAN);
            csv_num(f, ok ? cell->c->stats.noise : NAN);
            fprintf(f, ",%zu,%zu", cell->c->n_samples, cell->c->n_rounds);
            if (cell->judged) {
                fprintf(f, ",%zu", cell->from + 1);
                csv_next(f, h->runs[cell->from].label);
                csv_next(f, kbi_verdict_name(cell->out.verdict));
            } else {
                fputs(",,,", f);
            }
            csv_num(f, cell->judged ? cell->out.ratio : NAN);
            csv_num(f, cell->judged ? cell->out.detectable : NAN);
            csv_next(f, cell->judged ? cell->out.why : "");
            fputc('\n', f);
        }
    return ferror(f) ? KBI_ERR_IO : KBI_OK;
}

/* ---- stdout ---- */

void kbi_history_write_summary(const kbi_history *h, FILE *f)
{
    size_t n = 0;
    for (size_t t = 0; t < h->n_tracks; t++)
        for (size_t k = 1; k < h->n_runs; k++) {
            const kbi_history_cell *cell = &h->tracks[t].cells[k];
            kbi_verdict v = cell->out.verdict;
            if (!cell->judged || (v != KBI_VERDICT_SLOWER && v != KBI_VERDICT_FAILED))
                continue;
            fprintf(f, "%s: %s: %s -> %s (run %zu -> %zu): ", kbi_verdict_name(v), h->tracks[t].id,
                    h->runs[cell->from].label, h->runs[k].label, cell->from + 1, k + 1);
            if (v == KBI_VERDICT_SLOWER)
                fprintf(f, "x%.3f\n", cell->out.ratio);
            else
                fprintf(f, "%s\n", kbi_status_name(cell->c->status));
            n++;
        }
    if (n == 0)
        fprintf(f, "no case got slower or failed at any of the %zu steps\n", h->n_runs - 1);
    fprintf(f, "newest step %s -> %s: ", h->runs[h->n_runs - 2].label,
            h->runs[h->n_runs - 1].label);
    newest_headline(h, f, 0);
    fputc('\n', f);
}
