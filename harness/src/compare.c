/* `kbench compare`: per-case verdicts between a baseline and new results,
 * for people and for CI gates.  The rules are at the top of compare.h; this
 * file applies them, warns when the two sides were not measured alike, and
 * prints the table. */
#define _POSIX_C_SOURCE 200809L
#include "compare.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "baseline.h"
#include "format.h"
#include "hostspeed.h"
#include "manifest.h"
#include "options.h"
#include "resultset.h"

static const char *const verdict_names[KBI_VERDICT_COUNT] = {
    "same",         "faster",           "slower",          "unsure",         "failed",
    "not measured", "only in baseline", "only in results", "not comparable",
};

const char *kbi_verdict_name(kbi_verdict v)
{
    return (unsigned)v < KBI_VERDICT_COUNT ? verdict_names[v] : "unknown";
}

static const char *const metric_verdict_names[KBI_MV_COUNT] = {
    "same", "better", "worse", "changed", "unsure", "new", "gone",
};

const char *kbi_metric_verdict_name(kbi_metric_verdict v)
{
    return (unsigned)v < KBI_MV_COUNT ? metric_verdict_names[v] : "unknown";
}

/* Whether m's value lies outside its bound, as the record says or as its
 * bound says (a record may predate the in_bound field). */
static int metric_out_of_bound(const kbi_metric *m)
{
    return !m->in_bound || !kbi_metric_within(m, m->value);
}

/* The direction verdict of a move d of a metric whose better direction is `better`. */
static kbi_metric_verdict direction_verdict(double d, kb_better better)
{
    if (better == KB_BETTER_NONE)
        return KBI_MV_CHANGED;
    return (d > 0) == (better == KB_BETTER_HIGHER) ? KBI_MV_BETTER : KBI_MV_WORSE;
}

/* A timing-derived metric, both values known (see the top of compare.h): judged like a
 * time, against the threshold t and the case's allowance (relative changes). */
static void judge_timing_metric(double a, double b, kb_better better, double t, double allowance,
                                kbi_metric_outcome *out)
{
    double d = b - a, x;
    int say = !out->why[0]; /* an out-of-bound note stays first */
    /* The log ratio where both are positive; else the size of the move against a. */
    x = a > 0 && b > 0 ? fabs(log(b / a)) : a != 0 ? log1p(fabs(d / a)) : INFINITY;
    if (!(x > log1p(t))) {
        out->verdict = KBI_MV_SAME;
        if (say)
            snprintf(out->why, sizeof out->why,
                     "a timing: change %+.2f%% is within the %.3g%% threshold", 100 * d / a,
                     100 * t);
        return;
    }
    if (!(x > log1p(allowance))) {
        out->verdict = KBI_MV_UNSURE;
        if (say)
            snprintf(out->why, sizeof out->why,
                     "a timing: change %+.2f%% is within the %.3g%% the runs' drift and load can "
                     "explain",
                     100 * d / a, 100 * allowance);
        return;
    }
    if (!isfinite(out->sigma) || !(fabs(d) > KBI_COMPARE_METRIC_SIGMAS * out->sigma)) {
        out->verdict = KBI_MV_UNSURE;
        if (say)
            snprintf(out->why, sizeof out->why,
                     isfinite(out->sigma)
                         ? "a timing: change %+.3g is within %g combined uncertainties"
                         : "a timing: change %+.3g, with an uncertainty unknown",
                     d, KBI_COMPARE_METRIC_SIGMAS);
        return;
    }
    out->verdict = direction_verdict(d, better);
    if (say)
        snprintf(out->why, sizeof out->why,
                 "a timing: change %+.2f%% is beyond the %.3g%% a time may move between runs, "
                 "and %.1f combined uncertainties%s",
                 a != 0 ? 100 * d / a : INFINITY, 100 * allowance,
                 out->sigma > 0 ? fabs(d) / out->sigma : INFINITY,
                 better == KB_BETTER_NONE ? " (neither direction is better)" : "");
}

void kbi_compare_metric(const kbi_metric *base, const kbi_metric *res, kbi_metric_outcome *out)
{
    kbi_compare_metric_in_case(base, res, KBI_COMPARE_THRESHOLD, KBI_COMPARE_THRESHOLD, out);
}

void kbi_compare_metric_in_case(const kbi_metric *base, const kbi_metric *res, double threshold,
                                double allowance, kbi_metric_outcome *out)
{
    const kbi_metric *decl = res ? res : base;
    double a, b, d, limit;
    kb_better better;
    int timing;
    memset(out, 0, sizeof *out);
    out->name = decl ? decl->name : "";
    out->base = base;
    out->res = res;
    out->change = out->sigma = NAN;
    if (res && metric_out_of_bound(res)) {
        out->out_of_bound = 1;
        if (isnan(res->value))
            snprintf(out->why, sizeof out->why, "no value, and the bound needs one");
        else if ((res->bounds & KB_BOUND_LOW) && res->value < res->low)
            snprintf(out->why, sizeof out->why, "%.4g is below its bound %.4g", res->value,
                     res->low);
        else if ((res->bounds & KB_BOUND_HIGH) && res->value > res->high)
            snprintf(out->why, sizeof out->why, "%.4g is above its bound %.4g", res->value,
                     res->high);
        else
            snprintf(out->why, sizeof out->why, "outside its bound (as the results say)");
    }
    if (!base || !res) {
        out->verdict = base ? KBI_MV_GONE : KBI_MV_NEW;
        return;
    }
    a = base->value;
    b = res->value;
    /* The results' declaration rules; an older baseline may not declare. */
    better = res->declared || base->better == KB_BETTER_NONE ? res->better : base->better;
    timing = res->declared ? res->timing : base->timing;
    if (!(threshold > 0))
        threshold = KBI_COMPARE_THRESHOLD;
    if (a == b || (isnan(a) && isnan(b))) {
        out->verdict = KBI_MV_SAME;
        out->change = 0;
        return;
    }
    if (isnan(a) || isnan(b)) {
        out->verdict = KBI_MV_UNSURE;
        if (!out->why[0])
            snprintf(out->why, sizeof out->why, "no value on the %s side",
                     isnan(a) ? "baseline" : "results");
        return;
    }
    d = out->change = b - a;
    if (timing) {
        if (!isnan(base->uncertainty) && !isnan(res->uncertainty))
            out->sigma =
                sqrt(base->uncertainty * base->uncertainty + res->uncertainty * res->uncertainty);
        judge_timing_metric(a, b, better, threshold, fmax(allowance, threshold), out);
        return;
    }
    if (isnan(base->uncertainty) || isnan(res->uncertainty)) {
        /* With no better direction a move is only ever "changed" (a tuned configuration's
         * index, say): an unknown uncertainty cannot make that worse or better. */
        out->verdict = better == KB_BETTER_NONE ? KBI_MV_CHANGED : KBI_MV_UNSURE;
        if (!out->why[0] && better == KB_BETTER_NONE)
            snprintf(out->why, sizeof out->why, "neither direction is better");
        else if (!out->why[0])
            snprintf(out->why, sizeof out->why, "uncertainty unknown on the %s side",
                     isnan(base->uncertainty) ? "baseline" : "results");
        return;
    }
    out->sigma = sqrt(base->uncertainty * base->uncertainty + res->uncertainty * res->uncertainty);
    limit = KBI_COMPARE_METRIC_SIGMAS * out->sigma;
    if (!(fabs(d) > limit)) {
        out->verdict = KBI_MV_SAME;
        if (!out->why[0])
            snprintf(out->why, sizeof out->why, "change within %g combined uncertainties",
                     KBI_COMPARE_METRIC_SIGMAS);
        return;
    }
    out->verdict = direction_verdict(d, better);
    if (!out->why[0]) {
        if (out->sigma > 0)
            snprintf(out->why, sizeof out->why, "change %+.3g is %.1f combined uncertainties%s", d,
                     fabs(d) / out->sigma,
                     better == KB_BETTER_NONE ? " (neither direction is better)" : "");
        else
            snprintf(out->why, sizeof out->why, "exact values differ by %+.3g%s", d,
                     better == KB_BETTER_NONE ? " (neither direction is better)" : "");
    }
}

/* Judges every metric of row (the baseline's, then those new in the
 * results) and counts the verdicts into c. */
/* The energy per run of row's two sides as metrics in row->energy, when both measured it;
 * returns nonzero when they did. */
static int energy_metrics(kbi_compare_row *row)
{
    const kbi_case_result *side[2] = {row->base, row->res};
    for (int k = 0; k < 2; k++) {
        if (!side[k] || !side[k]->has_energy || !side[k]->energy.measured)
            return 0;
        row->energy[k] = (kbi_metric){.name = (char *)KBI_COMPARE_ENERGY_NAME,
                                      .unit = (char *)"J",
                                      .value = side[k]->energy.j_per_run,
                                      .uncertainty = side[k]->energy.j_per_run_u,
                                      .better = KB_BETTER_LOWER,
                                      .declared = 1,
                                      .in_bound = 1,
                                      .timing = 1};
    }
    return 1;
}

static void compare_row_metrics(kbi_comparison *c, kbi_compare_row *row)
{
    size_t nb = row->base ? row->base->n_metrics : 0, nr = row->res ? row->res->n_metrics : 0;
    double t = c->opt.threshold, allowance = row->out.timing_allowance;
    int energy = energy_metrics(row);
    if (!row->res || nb + nr + (size_t)energy == 0)
        return; /* only in the baseline: nothing new to judge */
    row->metrics = kbi_xcalloc(nb + nr + 1, sizeof *row->metrics);
    if (energy) /* a timing times a power: judged like a timing */
        kbi_compare_metric_in_case(&row->energy[0], &row->energy[1], t,
                                   isfinite(allowance) ? allowance : t,
                                   &row->metrics[row->n_metrics++]);
    for (size_t i = 0; i < nb; i++) {
        const kbi_metric *b = &row->base->metrics[i], *r = NULL;
        kbi_metric_outcome *o = &row->metrics[row->n_metrics++];
        for (size_t k = 0; k < nr && !r; k++)
            if (strcmp(row->res->metrics[k].name, b->name) == 0)
                r = &row->res->metrics[k];
        kbi_compare_metric_in_case(b, r, t, isfinite(allowance) ? allowance : t, o);
    }
    for (size_t i = 0; i < row->n_metrics; i++) {
        kbi_metric_outcome *o = &row->metrics[i];
        if (o->base && o->res && row->out.verdict == KBI_VERDICT_NOT_COMPARABLE &&
            (o->res->declared ? o->res->timing : o->base->timing) && o->change != 0) {
            /* A timing follows the CPU or the GPU as the case's time does. */
            o->verdict = KBI_MV_UNSURE;
            if (!o->out_of_bound)
                snprintf(o->why, sizeof o->why, "a timing, measured on different %s",
                         row->out.differs ? row->out.differs : "CPUs");
        }
    }
    for (size_t k = 0; k < nr; k++) {
        const kbi_metric *r = &row->res->metrics[k];
        int seen = 0;
        for (size_t i = 0; i < nb && !seen; i++)
            seen = strcmp(row->base->metrics[i].name, r->name) == 0;
        if (!seen)
            kbi_compare_metric(NULL, r, &row->metrics[row->n_metrics++]);
    }
    for (size_t i = 0; i < row->n_metrics; i++) {
        c->metric_count[row->metrics[i].verdict]++;
        c->out_of_bound += row->metrics[i].out_of_bound;
    }
}

static void resolve_options(const kbi_compare_options *opt, double *t, double *alpha)
{
    *t = opt && opt->threshold > 0 ? opt->threshold : KBI_COMPARE_THRESHOLD;
    *alpha = opt && opt->alpha > 0 ? opt->alpha : KBI_COMPARE_ALPHA;
}

/* Whether a case's times follow the host CPU: host-timed on both sides, or a device case
 * whose run holds a host pass or more launches than the GPU hides (host_paced, ABI 1.2) on
 * either side.  Such a case gets the drift allowance of a shared CPU and is not comparable
 * across CPUs. */
static int follows_cpu(const kbi_case_result *base, const kbi_case_result *res)
{
    return (base->timing && res->timing && strcmp(base->timing, "host") == 0 &&
            strcmp(res->timing, "host") == 0) ||
           base->host_paced || res->host_paced;
}

static double host_drift(const kbi_compare_options *opt, const kbi_case_result *base,
                         const kbi_case_result *res)
{
    double d = opt && opt->host_drift != 0 ? opt->host_drift : KBI_COMPARE_HOST_DRIFT;
    return follows_cpu(base, res) && d > 0 ? d : 0.0;
}

/* What the workers' waits for a CPU and the SM clocks can explain (see compare.h).  A share
 * w of its time spent runnable but not running stretches a side's times by up to
 * 1 / (1 - w): a results side that waited may read slow (the interval's lower edge moves
 * down by `down`), a baseline that waited may make the results read fast (the upper edge
 * moves up by `up`).  Where the SM clock dropped during a case on either side (a power or
 * thermal cap), the clock it settled at, read at the case's end, sets the speed of most of
 * its samples: a results side that ended at a lower clock than the baseline may read slow
 * by their ratio, and the other way round. */
typedef struct allowances {
    double base, res;            /* the shares, 0 where a side did not wait or does not say */
    double clock_up, clock_down; /* what the clocks explain, log units; 0 where they held */
    double clocks[2]; /* the SM clock at the end of the case: baseline's, results', MHz */
    double up, down;  /* what all of it explains, log units */
} allowances;

static double stretch(double w)
{
    return w >= 1 ? INFINITY : -log1p(-w);
}

static allowances allowances_of(const kbi_case_result *base, const kbi_case_result *res)
{
    allowances w;
    w.base = base->cpu_wait > 0 ? base->cpu_wait : 0; /* NAN: unknown, taken as none */
    w.res = res->cpu_wait > 0 ? res->cpu_wait : 0;
    w.clock_up = w.clock_down = 0;
    w.clocks[0] = w.clocks[1] = 0;
    if (base->has_clocks && res->has_clocks && (base->clock_drop || res->clock_drop) &&
        base->clock_end_mhz > 0 && res->clock_end_mhz > 0) {
        w.clocks[0] = base->clock_end_mhz;
        w.clocks[1] = res->clock_end_mhz;
        w.clock_down = fmax(0.0, log(w.clocks[0] / w.clocks[1]));
        w.clock_up = fmax(0.0, log(w.clocks[1] / w.clocks[0]));
    }
    w.up = stretch(w.base) + w.clock_up;
    w.down = stretch(w.res) + w.clock_down;
    return w;
}

/* "the results' worker waited for a core 12% of its time (it may read up to 13.6% slow)" or
 * the like for the sides that waited, then what a dropped clock explains, into buf ("" when
 * neither). */
static void allowance_text(const allowances *w, char *buf, size_t n)
{
    char waits[200] = "", clock[200] = "";
    /* A wait under 0.05% explains under 0.05%: it would print as "0%" and says nothing. */
    int base = w->base >= 5e-4, res = w->res >= 5e-4;
    if (base && res)
        snprintf(waits, sizeof waits,
                 "the workers waited for a core %.2g%% (baseline) and %.2g%% (results) of "
                 "their time (each may read up to %.1f%% / %.1f%% slow)",
                 100 * w->base, 100 * w->res, 100 * expm1(stretch(w->base)),
                 100 * expm1(stretch(w->res)));
    else if (base || res)
        snprintf(waits, sizeof waits,
                 "the %s worker waited for a core %.2g%% of its time (it may read up to %.1f%% "
                 "slow)",
                 res ? "results'" : "baseline's", 100 * (res ? w->res : w->base),
                 100 * expm1(stretch(res ? w->res : w->base)));
    if (w->clock_up > 0 || w->clock_down > 0)
        snprintf(clock, sizeof clock,
                 "the SM clock dropped and ended at %.0f MHz (baseline) and %.0f MHz (results): "
                 "the results may read %.1f%% %s for it",
                 w->clocks[0], w->clocks[1], 100 * expm1(fmax(w->clock_down, w->clock_up)),
                 w->clock_down > 0 ? "slow" : "fast");
    snprintf(buf, n, "%s%s%s", waits, waits[0] && clock[0] ? "; " : "", clock);
}

/* Whether base and res were measured on different CPUs, as their env records say (both must
 * say); a and b get each side's CPU in words. */
static int different_cpus(const kbi_case_result *base, const kbi_case_result *res, char *a, char *b,
                          size_t n)
{
    const kbi_env_record *x = base->env, *y = res->env;
    int model, sig, mhz;
    if (!x || !y || !x->cpu_model || !y->cpu_model || !x->cpu_model[0] || !y->cpu_model[0])
        return 0;
    model = strcmp(x->cpu_model, y->cpu_model) != 0;
    sig = x->cpu_signature && y->cpu_signature && x->cpu_signature[0] && y->cpu_signature[0] &&
          strcmp(x->cpu_signature, y->cpu_signature) != 0;
    mhz = x->cpu_max_mhz > 0 && y->cpu_max_mhz > 0 && fabs(x->cpu_max_mhz - y->cpu_max_mhz) >= 1;
    if (!model && !sig && !mhz)
        return 0;
    /* Name what differs: the model, else the signature, else the clock; and the cores. */
    for (int k = 0; k < 2; k++) {
        const kbi_env_record *e = k ? y : x;
        char *to = k ? b : a, clock[32] = "";
        if (e->cpu_max_mhz > 0)
            snprintf(clock, sizeof clock, ", %.0f MHz", e->cpu_max_mhz);
        snprintf(to, n, "%.60s%s%.48s, %zu cores%s", e->cpu_model, model ? "" : " ",
                 model ? "" : e->cpu_signature, e->cpu_cores, clock);
    }
    return 1;
}

/* Whether base and res ran on hosts whose speed probes say different hosts (hostspeed.h; both
 * must have one); why says how far.  Two leases of one VM type name the same CPU and can run
 * host code 1.3-4.8x apart. */
static int different_speeds(const kbi_case_result *base, const kbi_case_result *res, char *why,
                            size_t n)
{
    const kbi_env_record *x = base->env, *y = res->env;
    double compute, memory;
    if (!x || !y ||
        !kbi_host_speeds_differ(x->cpu_compute_ms, x->cpu_memory_gbs, y->cpu_compute_ms,
                                y->cpu_memory_gbs, &compute, &memory))
        return 0;
    snprintf(why, n,
             "measured on hosts of different speed (the host probe: %.2f vs %.2f ms of compute, "
             "%.2fx; %.1f vs %.1f GB/s of memory, %.2fx)",
             x->cpu_compute_ms, y->cpu_compute_ms, compute, x->cpu_memory_gbs, y->cpu_memory_gbs,
             memory);
    return 1;
}

/* Whether the case's time is the GPU's: every case but one host-timed on both sides (its
 * target or its timing says host). */
static int device_timed(const kbi_case_result *base, const kbi_case_result *res)
{
    const kbi_case_result *side[2] = {base, res};
    int host = 0;
    for (int k = 0; k < 2; k++)
        host += (side[k]->target && strcmp(side[k]->target, "host") == 0) ||
                (side[k]->timing && strcmp(side[k]->timing, "host") == 0);
    return host < 2;
}

/* Whether base and res were measured on different GPU models, as their env records' device
 * names say (both must name one): the model, not the board, so two boards of one model (their
 * UUIDs and PCI bus ids differ) are the same GPU.  a and b get each side's name. */
static int different_gpus(const kbi_case_result *base, const kbi_case_result *res, char *a, char *b,
                          size_t n)
{
    const kbi_env_record *x = base->env, *y = res->env;
    if (!x || !y || !x->device_name || !y->device_name || !x->device_name[0] ||
        !y->device_name[0] || strcmp(x->device_name, y->device_name) == 0)
        return 0;
    snprintf(a, n, "%s", x->device_name);
    snprintf(b, n, "%s", y->device_name);
    return 1;
}

/* Whether the rule of different GPUs applies to base and res: a device-timed case measured on
 * different GPU models (a and b get their names), unless --across-gpus. */
static int gpu_rule_applies(const kbi_case_result *base, const kbi_case_result *res,
                            const kbi_compare_options *opt, char *a, char *b, size_t n)
{
    return !(opt && opt->across_gpus) && device_timed(base, res) &&
           different_gpus(base, res, a, b, n);
}

/* out for a case not comparable because its sides' `differs` ("CPUs", "GPUs") differ: the
 * ratio and noise still shown (people compare machines on purpose), no verdict on them. */
static void not_comparable(const kbi_case_result *base, const kbi_case_result *res,
                           const char *differs, kbi_compare_outcome *out)
{
    out->verdict = KBI_VERDICT_NOT_COMPARABLE;
    out->differs = differs;
    out->ratio = res->stats.median / base->stats.median;
    out->noise_base = base->stats.noise;
    out->noise_results = res->stats.noise;
    out->rounds_base = base->n_rounds;
    out->rounds_results = res->n_rounds;
}

void kbi_compare_samples(const kbi_stats *base, const double *base_samples, size_t n_base,
                         const kbi_stats *res, const double *res_samples, size_t n_res,
                         const kbi_compare_options *opt, kbi_compare_outcome *out)
{
    double t, alpha, d, nb, nr;
    int big, beyond_noise, significant;
    resolve_options(opt, &t, &alpha);
    memset(out, 0, sizeof *out);
    out->ratio = out->noise_base = out->noise_results = out->p = out->detectable = NAN;
    out->timing_allowance = t;
    if (!(base->median > 0) || !(res->median > 0)) {
        out->verdict = KBI_VERDICT_UNSURE;
        snprintf(out->why, sizeof out->why, "no median time on the %s side",
                 base->median > 0 ? "results" : "baseline");
        return;
    }
    nb = base->noise > 0 ? base->noise : 0;
    nr = res->noise > 0 ? res->noise : 0;
    out->ratio = res->median / base->median;
    out->noise_base = nb;
    out->noise_results = nr;
    out->p = kbi_mann_whitney_p(base_samples, n_base, res_samples, n_res);
    d = out->ratio - 1.0;
    if (n_base > 0 && n_base == n_res &&
        memcmp(base_samples, res_samples, n_base * sizeof *base_samples) == 0) {
        /* The very same measurement on both sides (a file compared with
         * itself, e.g. to check a CI gate): no change, however noisy. */
        out->verdict = KBI_VERDICT_SAME;
        snprintf(out->why, sizeof out->why, "identical samples");
        return;
    }
    big = fabs(d) > t;
    beyond_noise = fabs(d) > nb + nr;
    significant = out->p < alpha;
    if (big && beyond_noise && significant) {
        out->verdict = d > 0 ? KBI_VERDICT_SLOWER : KBI_VERDICT_FASTER;
    } else if (!big && nb <= t && nr <= t) {
        out->verdict = KBI_VERDICT_SAME;
    } else {
        out->verdict = KBI_VERDICT_UNSURE;
        if (!big)
            snprintf(out->why, sizeof out->why,
                     "noise (±%.2g%% / ±%.2g%%) exceeds the %.2g%% threshold: more samples "
                     "needed",
                     100 * nb, 100 * nr, 100 * t);
        else if (!beyond_noise)
            snprintf(out->why, sizeof out->why,
                     "change %+.2g%% is within the runs' noise (±%.2g%% + ±%.2g%%)", 100 * d,
                     100 * nb, 100 * nr);
        else if (n_base < 2 || n_res < 2)
            snprintf(out->why, sizeof out->why, "too few samples for the test (%zu and %zu)",
                     n_base, n_res);
        else
            snprintf(out->why, sizeof out->why, "the test does not confirm it (p = %.2g >= %g)",
                     out->p, alpha);
    }
}

/* Both sides measured in rounds: the verdict from the round medians (see compare.h). */
static void compare_rounds(const kbi_case_result *base, const kbi_case_result *res, double t,
                           double alpha, double drift, const allowances *w, const kbi_shift *s,
                           kbi_compare_outcome *out)
{
    double lim = log1p(t), z = kbi_normal_quantile(1.0 - alpha / 2.0), random, half, lo, hi;
    double wait = fmax(w->up, w->down);
    size_t nb = base->n_rounds, nr = res->n_rounds;
    char waited[336] = "";
    /* Each run is one draw of the machine's state, which moves the whole run as much as the
     * rounds show it moving one round: 2 spread^2, plus the estimate's own variance. */
    random = z * s->spread * sqrt(2.0 + 1.0 / (double)nb + 1.0 / (double)nr);
    half = random + log1p(drift);
    lo = s->est - half - w->down;
    hi = s->est + half + w->up;
    out->ratio = exp(s->est);
    out->noise_base = base->stats.noise;
    out->noise_results = res->stats.noise;
    out->p = NAN;
    out->detectable = expm1(lim + log1p(drift) + wait + KBI_COMPARE_DETECT_WIDTHS * 2.0 * random);
    /* One round's figure on each side: sqrt(2 + 1 + 1) spreads. */
    out->timing_allowance = expm1(lim + log1p(drift) + wait + z * 2.0 * s->spread);
    out->rounds_base = nb;
    out->rounds_results = nr;
    if (lo > lim || hi < -lim)
        out->verdict = lo > lim ? KBI_VERDICT_SLOWER : KBI_VERDICT_FASTER;
    else if (lo >= -lim && hi <= lim)
        out->verdict = KBI_VERDICT_SAME;
    else
        out->verdict = KBI_VERDICT_UNSURE;
    if (wait > 0) {
        char who[320];
        allowance_text(w, who, sizeof who);
        snprintf(waited, sizeof waited, "; %s", who);
    }
    snprintf(out->why, sizeof out->why,
             "rounds %zu/%zu: change %+.2f%%, %+.2f%% to %+.2f%% allowing for the runs' "
             "drift%s%s%s",
             nb, nr, 100 * expm1(s->est), 100 * expm1(lo), 100 * expm1(hi),
             drift > 0 ? " (host: a shared CPU)" : "", waited,
             out->verdict == KBI_VERDICT_UNSURE ? ", across the threshold" : "");
}

/* Both sides ok: by rounds where both have them, else by the samples. */
static void compare_measured(const kbi_case_result *base, const kbi_case_result *res,
                             const kbi_compare_options *opt, kbi_compare_outcome *out)
{
    kbi_shift s;
    double t, alpha, drift;
    allowances w;
    char cpu_a[128], cpu_b[128], speeds[240] = "", gpu_a[112], gpu_b[112];
    if (kbi_case_not_timing(base) || kbi_case_not_timing(res)) {
        out->verdict = KBI_VERDICT_NOT_MEASURED;
        snprintf(out->why, sizeof out->why,
                 "the %s side is a --sanitize run: its times are not timings",
                 kbi_case_not_timing(base) ? (kbi_case_not_timing(res) ? "either" : "baseline")
                                           : "results");
        return;
    }
    resolve_options(opt, &t, &alpha);
    drift = host_drift(opt, base, res);
    w = allowances_of(base, res);
    if (gpu_rule_applies(base, res, opt, gpu_a, gpu_b, sizeof gpu_a)) {
        /* A device time follows the GPU: another GPU is not a change in the code. */
        not_comparable(base, res, "GPUs", out);
        snprintf(out->why, sizeof out->why, "measured on different GPUs (%.100s vs %.100s)", gpu_a,
                 gpu_b);
        return;
    }
    if (follows_cpu(base, res) && (different_cpus(base, res, cpu_a, cpu_b, sizeof cpu_a) ||
                                   different_speeds(base, res, speeds, sizeof speeds))) {
        /* A host time follows the CPU; how far, nothing in the two runs can say. */
        not_comparable(base, res, "CPUs", out);
        if (speeds[0])
            snprintf(out->why, sizeof out->why, "%s", speeds);
        else
            snprintf(out->why, sizeof out->why, "measured on different CPUs (%.110s vs %.110s)",
                     cpu_a, cpu_b);
        return;
    }
    if (base->n_rounds >= 2 && res->n_rounds >= 2 &&
        kbi_log_shift(base->round_medians, base->n_rounds, res->round_medians, res->n_rounds,
                      1.0 - alpha, &s) == 0 &&
        !(base->n_samples == res->n_samples &&
          memcmp(base->samples, res->samples, base->n_samples * sizeof *base->samples) == 0)) {
        compare_rounds(base, res, t, alpha, drift, &w, &s, out);
        return;
    }
    if (drift > 0 || w.up > 0 || w.down > 0) {
        /* One round of a shared CPU: a change must clear the drift, and the wait that could
         * have made it (the results' for a slowdown, the baseline's for a speedup). */
        double d = res->stats.median / base->stats.median - 1.0, hide;
        kbi_compare_options wide = {t + drift + expm1(d > 0 ? w.down : w.up), alpha, 0, 0, 0};
        kbi_compare_samples(&base->stats, base->samples, base->n_samples, &res->stats, res->samples,
                            res->n_samples, &wide, out);
        out->detectable =
            fmax(t + drift + expm1(fmax(w.up, w.down)), out->noise_base + out->noise_results);
        out->timing_allowance = t + drift + expm1(fmax(w.up, w.down));
        /* The other side's wait may hide a larger change behind one that looks the same. */
        hide = expm1(d >= 0 ? w.up : w.down);
        if (out->verdict == KBI_VERDICT_SAME && fabs(d) + hide > t + drift)
            out->verdict = KBI_VERDICT_UNSURE;
        if (out->verdict == KBI_VERDICT_UNSURE && (w.up > 0 || w.down > 0)) {
            char who[320];
            size_t len = strlen(out->why);
            allowance_text(&w, who, sizeof who);
            snprintf(out->why + len, sizeof out->why - len, "%s%s", len ? "; " : "", who);
        }
        return;
    }
    kbi_compare_samples(&base->stats, base->samples, base->n_samples, &res->stats, res->samples,
                        res->n_samples, opt, out);
    out->detectable = isnan(out->noise_base) ? NAN : fmax(t, out->noise_base + out->noise_results);
}

void kbi_compare_case(const kbi_case_result *base, const kbi_case_result *res,
                      const kbi_compare_options *opt, kbi_compare_outcome *out)
{
    memset(out, 0, sizeof *out);
    out->ratio = out->noise_base = out->noise_results = out->p = out->detectable = NAN;
    out->timing_allowance = NAN;
    if (!res) {
        out->verdict = KBI_VERDICT_ONLY_BASELINE;
        return;
    }
    if (!base) {
        out->verdict = KBI_VERDICT_ONLY_RESULTS;
        return;
    }
    if (base->status == KBI_ST_OK && res->status == KBI_ST_OK) {
        compare_measured(base, res, opt, out);
        return;
    }
    if (base->status == KBI_ST_OK && kbi_status_is_failure(res->status)) {
        /* It ran and passed before; now it does not: worse than slow. */
        out->verdict = KBI_VERDICT_FAILED;
        snprintf(out->why, sizeof out->why, "%s in the results: %.150s",
                 kbi_status_name(res->status), res->message[0] ? res->message : "no message");
        return;
    }
    out->verdict = KBI_VERDICT_NOT_MEASURED;
    if (base->status == KBI_ST_OK)
        snprintf(out->why, sizeof out->why, "%s in the results: %.150s",
                 kbi_status_name(res->status), res->message[0] ? res->message : "no message");
    else
        snprintf(out->why, sizeof out->why, "%s in the baseline, %s in the results",
                 kbi_status_name(base->status), kbi_status_name(res->status));
}

/* ---- matching ---- */

static void add_warning(kbi_comparison *c, const char *text)
{
    c->warnings = kbi_xrealloc(c->warnings, (c->n_warnings + 1) * sizeof *c->warnings);
    c->warnings[c->n_warnings++] = kbi_strdup(text);
}

/* A warning about n cases: the singular or the plural form of the sentence, n filled in. */
static void add_count_warning(kbi_comparison *c, size_t n, const char *one, const char *many)
{
    char w[KBI_ERR_SIZE];
    snprintf(w, sizeof w, n == 1 ? one : many, n);
    add_warning(c, w);
}

/* Maps case full id -> index of its last record in set; warns on repeats. */
static json_t *index_cases(const kbi_result_set *set, const char *side, kbi_comparison *c)
{
    json_t *map = json_object();
    for (size_t i = 0; i < set->n_cases; i++) {
        json_t *prev = json_object_get(map, kbi_case_full_id(&set->cases[i]));
        if (prev) {
            char w[KBI_ERR_SIZE];
            snprintf(w, sizeof w,
                     "the %s holds case %s twice (%s and %s); comparing the later record", side,
                     set->cases[i].id, set->cases[json_integer_value(prev)].source,
                     set->cases[i].source);
            add_warning(c, w);
        }
        json_object_set_new(map, kbi_case_full_id(&set->cases[i]), json_integer((json_int_t)i));
    }
    return map;
}

/* Maps case id -> index of its last record in set (ids name the problem: two records of one
 * id whose full ids differ are one problem at each run's default knobs). */
static json_t *index_ids(const kbi_result_set *set)
{
    json_t *map = json_object();
    for (size_t i = 0; i < set->n_cases; i++)
        json_object_set_new(map, set->cases[i].id, json_integer((json_int_t)i));
    return map;
}

/* The distinct values of one environment field over a side's runs, joined
 * by ", " (caller frees). */
static char *env_values(const kbi_result_set *set, const char *a, const char *b)
{
    kbi_buf out = {0};
    for (size_t i = 0; i < set->n_envs; i++) {
        json_t *v = json_object_get(set->envs[i].json, a);
        char text[256];
        if (b)
            v = json_object_get(v, b);
        if (json_is_string(v))
            snprintf(text, sizeof text, "%s", json_string_value(v));
        else if (json_is_number(v) && json_number_value(v) > 0) /* 0: not known */
            snprintf(text, sizeof text, "%.10g", json_number_value(v));
        else
            continue;
        /* Skip a value already listed. */
        if (out.data) {
            const char *p = out.data;
            size_t len = strlen(text);
            int seen = 0;
            while (!seen && (p = strstr(p, text)) != NULL) {
                seen = (p == out.data || p[-1] == ' ') && (p[len] == ',' || p[len] == '\0');
                p += len;
            }
            if (seen)
                continue;
        }
        kbi_buf_printf(&out, "%s%s", out.len ? ", " : "", text);
    }
    return out.data ? out.data : kbi_strdup("");
}

static void warn_if_differs(kbi_comparison *c, const kbi_result_set *base,
                            const kbi_result_set *res, const char *what, const char *a,
                            const char *b, const char *unit)
{
    char *x = env_values(base, a, b), *y = env_values(res, a, b);
    if (x[0] && y[0] && strcmp(x, y) != 0) {
        char w[KBI_ERR_SIZE];
        snprintf(w, sizeof w, "different %s: baseline %s%s, results %s%s", what, x, unit, y, unit);
        add_warning(c, w);
    }
    free(x);
    free(y);
}

/* The n-th plugin file record of a side (its env records' "plugins", in order), or NULL. */
static json_t *plugin_record(const kbi_result_set *set, size_t n)
{
    for (size_t e = 0; e < set->n_envs; e++) {
        json_t *list = json_object_get(set->envs[e].json, "plugins");
        if (n < json_array_size(list))
            return json_array_get(list, n);
        n -= json_array_size(list);
    }
    return NULL;
}

/* The first plugin file record of a side that names plugin `name`, or NULL. */
static json_t *plugin_named(const kbi_result_set *set, const char *name)
{
    json_t *p;
    for (size_t n = 0; (p = plugin_record(set, n)) != NULL; n++) {
        const char *x = json_string_value(json_object_get(p, "name"));
        if (x && strcmp(x, name) == 0)
            return p;
    }
    return NULL;
}

/* Same revision of kbench, another file of a plugin (a build loaded through --plugins, or one
 * rebuilt from changed sources): the revision alone would pass the two off as the same code.
 * One warning per plugin, naming both files' sizes and hashes. */
static void warn_plugin_files(kbi_comparison *c, const kbi_result_set *base,
                              const kbi_result_set *res)
{
    char *x = env_values(base, "git_revision", NULL), *y = env_values(res, "git_revision", NULL);
    const int same_revision = x[0] && strcmp(x, y) == 0;
    json_t *p;
    free(x);
    free(y);
    if (!same_revision)
        return; /* "different revisions" says it */
    for (size_t n = 0; (p = plugin_record(base, n)) != NULL; n++) {
        const char *name = json_string_value(json_object_get(p, "name"));
        json_t *r = name ? plugin_named(res, name) : NULL;
        const char *hb = json_string_value(json_object_get(p, "fnv1a64"));
        const char *hr = json_string_value(json_object_get(r, "fnv1a64"));
        char w[KBI_ERR_SIZE];
        if (!hb || !hr || plugin_named(base, name) != p || strcmp(hb, hr) == 0)
            continue;
        snprintf(w, sizeof w,
                 "different builds of plugin %s under one kbench revision: baseline's file "
                 "%lld bytes (FNV-1a %s), results' %lld bytes (FNV-1a %s)",
                 name, (long long)json_integer_value(json_object_get(p, "bytes")), hb,
                 (long long)json_integer_value(json_object_get(r, "bytes")), hr);
        add_warning(c, w);
    }
}

/* Index of the record of c (at self) that is compared: the last one of its full id in the
 * map, or self when the map could not hold the id (jansson keys must be UTF-8). */
static size_t compared_index(json_t *map, const kbi_case_result *c, size_t self)
{
    json_t *v = json_object_get(map, kbi_case_full_id(c));
    return v ? (size_t)json_integer_value(v) : self;
}

/* Whether two parameter values are equal, taking dims written as a string
 * ("4x4", results version 1) and as an array ([4,4], version 2) alike. */
static int same_value(json_t *a, json_t *b)
{
    json_t *arr = json_is_array(a) ? a : b, *str = json_is_array(a) ? b : a;
    kbi_buf text = {0};
    int same;
    if (json_equal(a, b))
        return 1;
    if (!json_is_array(arr) || !json_is_string(str))
        return 0;
    for (size_t i = 0; i < json_array_size(arr); i++)
        kbi_buf_printf(&text, "%s%lld", i ? "x" : "",
                       (long long)json_integer_value(json_array_get(arr, i)));
    same = text.data && strcmp(text.data, json_string_value(str)) == 0;
    kbi_buf_free(&text);
    return same;
}

/* Whether a and b are the same measurement but for parameters that only one of them has (a
 * plugin gained or lost a parameter between the two runs): same plugin and variant, and every
 * parameter both have is equal.  Sets *extra when the parameter sets differ. */
static int same_but_new_params(const kbi_case_result *a, const kbi_case_result *b, int *extra)
{
    const char *key;
    json_t *va;
    *extra = json_object_size(a->params) != json_object_size(b->params);
    if (strcmp(a->plugin, b->plugin) != 0 || strcmp(a->variant, b->variant) != 0)
        return 0;
    json_object_foreach(a->params, key, va)
    {
        json_t *vb = json_object_get(b->params, key);
        if (!vb)
            *extra = 1;
        else if (!same_value(va, vb))
            return 0;
    }
    return *extra;
}

/* For a case b of one side with no full id or id on the other: the one case of the other
 * side, not yet paired and without a full id of b's side, that measures the same thing but for
 * parameters only one of them has; NULL when there is none or more than one (then it stays
 * unpaired). */
static const kbi_case_result *pair_across_params(const kbi_case_result *b,
                                                 const kbi_result_set *other, json_t *own_map,
                                                 const unsigned char *taken, size_t *index)
{
    const kbi_case_result *found = NULL;
    for (size_t i = 0; i < other->n_cases; i++) {
        const kbi_case_result *r = &other->cases[i];
        int extra;
        if (taken[i] || json_object_get(own_map, kbi_case_full_id(r)) ||
            !same_but_new_params(b, r, &extra))
            continue;
        if (found)
            return NULL;
        found = r;
        *index = i;
    }
    return found;
}

/* Whether row, matched on both sides, could not be judged: unsure, not comparable, or measured
 * in the baseline but not in the results. */
static int unjudged(const kbi_compare_row *row)
{
    kbi_verdict v = row->out.verdict;
    if (!row->base || !row->res)
        return 0;
    return v == KBI_VERDICT_UNSURE || v == KBI_VERDICT_NOT_COMPARABLE ||
           (v == KBI_VERDICT_NOT_MEASURED && row->base->status == KBI_ST_OK);
}

/* Whether row, both sides measured, is a device-timed case measured on different GPU models
 * that got a timing verdict all the same (--across-gpus). */
static int judged_across_gpus(const kbi_compare_row *row)
{
    char a[8], b[8];
    kbi_verdict v = row->out.verdict;
    if (row->base->status != KBI_ST_OK || row->res->status != KBI_ST_OK ||
        (v != KBI_VERDICT_SAME && v != KBI_VERDICT_FASTER && v != KBI_VERDICT_SLOWER &&
         v != KBI_VERDICT_UNSURE))
        return 0;
    return device_timed(row->base, row->res) && different_gpus(row->base, row->res, a, b, sizeof a);
}

/* Whether a side's env record for c does not say on which CPU it ran. */
static int cpu_unknown(const kbi_case_result *c)
{
    return !c->env || !c->env->cpu_model || !c->env->cpu_model[0];
}

/* Whether row got a timing verdict from its samples, not its rounds (a file compared with
 * itself aside). */
static int judged_by_one_round(const kbi_compare_row *row)
{
    const kbi_compare_outcome *o = &row->out;
    if (!row->base || !row->res || o->rounds_base || isnan(o->ratio))
        return 0;
    if (o->verdict != KBI_VERDICT_SAME && o->verdict != KBI_VERDICT_SLOWER &&
        o->verdict != KBI_VERDICT_FASTER && o->verdict != KBI_VERDICT_UNSURE)
        return 0;
    return !(row->base->n_samples == row->res->n_samples &&
             memcmp(row->base->samples, row->res->samples,
                    row->base->n_samples * sizeof *row->base->samples) == 0);
}

/* The case of the results with b's id that is still free to pair (not taken, so not paired
 * by its full id either, and the compared record of its full id), or KBI_NO_CASE. */
static size_t free_by_id(const kbi_case_result *b, const kbi_result_set *res, json_t *ids,
                         json_t *rmap, const unsigned char *taken)
{
    json_t *ri = json_object_get(ids, b->id);
    size_t k = ri ? (size_t)json_integer_value(ri) : KBI_NO_CASE;
    if (k == KBI_NO_CASE || taken[k] || compared_index(rmap, &res->cases[k], k) != k)
        return KBI_NO_CASE;
    return k;
}

/* Pairs each compared case of the baseline with its case of the results into match[i]
 * (KBI_NO_CASE: none), marking the results taken, in three passes: by full id (every
 * parameter, so a record written before ids named only the problem pairs with one written
 * after), then by id among those left (the same problem, where a knob came or went at its
 * default), then across a parameter only one side has (a heuristic: counted in *paired). */
static void match_cases(const kbi_result_set *base, const kbi_result_set *res, json_t *bmap,
                        json_t *rmap, size_t *match, unsigned char *taken, size_t *paired)
{
    json_t *ids = index_ids(res);
    for (size_t i = 0; i < base->n_cases; i++) {
        json_t *ri = json_object_get(rmap, kbi_case_full_id(&base->cases[i]));
        match[i] = ri && compared_index(bmap, &base->cases[i], i) == i
                       ? (size_t)json_integer_value(ri)
                       : KBI_NO_CASE;
        if (match[i] != KBI_NO_CASE)
            taken[match[i]] = 1;
    }
    for (int pass = 1; pass <= 2; pass++)
        for (size_t i = 0; i < base->n_cases; i++) {
            const kbi_case_result *b = &base->cases[i];
            size_t k = KBI_NO_CASE;
            if (match[i] != KBI_NO_CASE || compared_index(bmap, b, i) != i)
                continue;
            if (pass == 1)
                k = free_by_id(b, res, ids, rmap, taken);
            else if (pair_across_params(b, res, bmap, taken, &k))
                (*paired)++;
            else
                k = KBI_NO_CASE;
            if (k != KBI_NO_CASE)
                taken[match[i] = k] = 1;
        }
    json_decref(ids);
}

/* Counts the matched and unjudged rows of out, and warns of the cases not comparable, judged
 * across GPUs (--across-gpus), judged as if on the same CPU, or judged from one round. */
static void tally_rows(kbi_comparison *out)
{
    size_t one_round = 0, other_cpu = 0, unknown_cpu = 0, other_gpu = 0, judged_across = 0;
    for (size_t i = 0; i < out->n_rows; i++) {
        const kbi_compare_row *row = &out->rows[i];
        one_round += judged_by_one_round(row);
        if (!row->base || !row->res)
            continue;
        out->matched++;
        out->unjudged += unjudged(row);
        other_cpu +=
            row->out.verdict == KBI_VERDICT_NOT_COMPARABLE && strcmp(row->out.differs, "CPUs") == 0;
        other_gpu +=
            row->out.verdict == KBI_VERDICT_NOT_COMPARABLE && strcmp(row->out.differs, "GPUs") == 0;
        judged_across += out->opt.across_gpus && judged_across_gpus(row);
        unknown_cpu += row->base->status == KBI_ST_OK && row->res->status == KBI_ST_OK &&
                       follows_cpu(row->base, row->res) &&
                       (cpu_unknown(row->base) || cpu_unknown(row->res));
    }
    if (other_cpu)
        add_count_warning(out, other_cpu,
                          "%zu case whose time follows the CPU (host-timed, or host_paced: its "
                          "run holds a host pass or many small launches) was measured on "
                          "different CPUs: not comparable",
                          "%zu cases whose times follow the CPU (host-timed, or host_paced: their "
                          "runs hold a host pass or many small launches) were measured on "
                          "different CPUs: not comparable");
    if (other_gpu)
        add_count_warning(out, other_gpu,
                          "%zu device-timed case was measured on different GPUs: not "
                          "comparable, as another GPU is not a change in the code "
                          "(--across-gpus judges it anyway)",
                          "%zu device-timed cases were measured on different GPUs: not "
                          "comparable, as another GPU is not a change in the code "
                          "(--across-gpus judges them anyway)");
    if (judged_across)
        add_count_warning(out, judged_across,
                          "--across-gpus: %zu device-timed case measured on different GPUs was "
                          "judged; a change in it may be the GPU's, not the code's",
                          "--across-gpus: %zu device-timed cases measured on different GPUs "
                          "were judged; a change in them may be the GPU's, not the code's");
    if (unknown_cpu)
        add_count_warning(out, unknown_cpu,
                          "%zu case whose time follows the CPU has a side whose run does not "
                          "record its CPU (kbench before 1.2): judged as if on the same CPU",
                          "%zu cases whose times follow the CPU have a side whose run does not "
                          "record its CPU (kbench before 1.2): judged as if on the same CPU");
    if (one_round)
        add_count_warning(out, one_round,
                          "%zu case was judged from one round per side: its verdict cannot see "
                          "drift between runs or worker processes (on a shared machine, "
                          "measure with [run] rounds = 5 or more)",
                          "%zu cases were judged from one round per side: their verdicts cannot "
                          "see drift between runs or worker processes (on a shared machine, "
                          "measure with [run] rounds = 5 or more)");
}

int kbi_compare_sets(const kbi_result_set *base, const kbi_result_set *res,
                     const kbi_compare_options *opt, kbi_comparison *out, char *err)
{
    json_t *bmap, *rmap;
    size_t drops = 0, paired = 0;
    int cache_differs = 0;
    unsigned char *taken = kbi_xcalloc(res->n_cases + 1, 1); /* results matched */
    size_t *match = kbi_xcalloc(base->n_cases + 1, sizeof *match);
    memset(out, 0, sizeof *out);
    resolve_options(opt, &out->opt.threshold, &out->opt.alpha);
    out->opt.host_drift = opt ? opt->host_drift : 0;
    out->opt.fail_on_unsure = opt ? opt->fail_on_unsure : 0;
    out->opt.across_gpus = opt ? opt->across_gpus : 0;
    warn_if_differs(out, base, res, "GPUs", "device", "name", "");
    warn_if_differs(out, base, res, "CPUs", "cpu", "model", "");
    warn_if_differs(out, base, res, "SM clocks", "device", "sm_clock_mhz", " MHz");
    warn_if_differs(out, base, res, "memory clocks", "device", "mem_clock_mhz", " MHz");
    warn_if_differs(out, base, res, "NVIDIA drivers", "driver_version", NULL, "");
    warn_if_differs(out, base, res, "CUDA drivers", "cuda_driver_version", NULL, "");
    warn_if_differs(out, base, res, "CUDA runtimes", "cuda_runtime_version", NULL, "");
    warn_if_differs(out, base, res, "revisions", "git_revision", NULL, "");
    warn_plugin_files(out, base, res);
    warn_if_differs(out, base, res, "build types", "build_type", NULL, "");
    warn_if_differs(out, base, res, "cache modes", "run", "cache", "");
    bmap = index_cases(base, "baseline", out);
    rmap = index_cases(res, "results", out);
    match_cases(base, res, bmap, rmap, match, taken, &paired);
    out->rows = kbi_xcalloc(base->n_cases + res->n_cases + 1, sizeof *out->rows);
    for (size_t i = 0; i < base->n_cases; i++) {
        const kbi_case_result *b = &base->cases[i];
        const kbi_case_result *r = match[i] != KBI_NO_CASE ? &res->cases[match[i]] : NULL;
        kbi_compare_row *row;
        /* A repeated case is compared once, with its last record. */
        if (compared_index(bmap, b, i) != i)
            continue;
        out->not_timing_base += kbi_case_not_timing(b);
        row = &out->rows[out->n_rows++];
        row->base = b;
        row->res = r;
        kbi_compare_case(b, r, &out->opt, &row->out);
        out->count[row->out.verdict]++;
        compare_row_metrics(out, row);
        if (r) {
            const char *cb = json_string_value(json_object_get(b->json, "cache"));
            const char *cr = json_string_value(json_object_get(r->json, "cache"));
            drops += (b->clock_drop || r->clock_drop);
            cache_differs |= cb && cr && strcmp(cb, cr) != 0;
        }
    }
    for (size_t i = 0; i < res->n_cases; i++)
        out->not_timing_results += kbi_case_not_timing(&res->cases[i]);
    for (size_t i = 0; i < res->n_cases; i++) {
        const kbi_case_result *r = &res->cases[i];
        kbi_compare_row *row;
        if (compared_index(rmap, r, i) != i || taken[i])
            continue;
        row = &out->rows[out->n_rows++];
        row->res = r;
        kbi_compare_case(NULL, r, &out->opt, &row->out);
        out->count[row->out.verdict]++;
        compare_row_metrics(out, row);
    }
    tally_rows(out);
    if (drops)
        add_count_warning(out, drops,
                          "the SM clock dropped during %zu compared case (on either side); its "
                          "times may reflect throttling, not the code",
                          "the SM clock dropped during %zu compared cases (on either side); "
                          "their times may reflect throttling, not the code");
    if (paired)
        add_count_warning(out, paired,
                          "%zu case was paired across a parameter that only one side has (the "
                          "plugin gained or lost one between the runs); its row shows both ids",
                          "%zu cases were paired across a parameter that only one side has (the "
                          "plugin gained or lost one between the runs); each row shows both ids");
    if (cache_differs)
        add_warning(out, "some cases were measured with another cache mode (cold/hot) on each "
                         "side; their times are not comparable");
    json_decref(bmap);
    json_decref(rmap);
    free(taken);
    free(match);
    (void)err;
    return KBI_OK;
}

void kbi_comparison_free(kbi_comparison *c)
{
    for (size_t i = 0; i < c->n_warnings; i++)
        free(c->warnings[i]);
    free(c->warnings);
    for (size_t i = 0; i < c->n_rows; i++)
        free(c->rows[i].metrics);
    free(c->rows);
    kbi_strlist_free(&c->reference);
    memset(c, 0, sizeof *c);
}

void kbi_compare_use_manifest(kbi_comparison *c, const char *base_path, const kbi_result_set *base)
{
    struct stat st;
    char why[KBI_ERR_SIZE];
    kbi_strlist warnings = {0};
    json_t *m;
    if (stat(base_path, &st) != 0 || !S_ISDIR(st.st_mode))
        return;
    m = kbi_manifest_read(base_path, why, sizeof why);
    if (!m) {
        if (why[0])
            add_warning(c, why);
        return;
    }
    kbi_manifest_check(m, base, NULL, &c->reference, &warnings);
    for (size_t i = 0; i < warnings.n; i++)
        add_warning(c, warnings.s[i]);
    kbi_strlist_free(&warnings);
    json_decref(m);
}

/* Whether c found a regression: a case slower or failed, a metric worse or out of bound. */
static int regressed(const kbi_comparison *c)
{
    return c->count[KBI_VERDICT_SLOWER] || c->count[KBI_VERDICT_FAILED] ||
           c->metric_count[KBI_MV_WORSE] || c->out_of_bound;
}

int kbi_comparison_regressed(const kbi_comparison *c)
{
    return regressed(c);
}

int kbi_comparison_exit_code(const kbi_comparison *c)
{
    if (c->not_timing_base || c->not_timing_results)
        return KBI_EXIT_USAGE; /* not timing evidence, whatever the statuses say */
    return regressed(c) || (c->opt.fail_on_unsure && c->unjudged) ? KBI_EXIT_FAILED : KBI_EXIT_OK;
}

/* ---- output ---- */

static void side_cell(FILE *f, const kbi_case_result *c)
{
    char buf[64];
    if (!c) {
        fputs("—", f);
        return;
    }
    if (c->status != KBI_ST_OK || !(c->stats.median > 0)) {
        fprintf(f, "%s", kbi_status_name(c->status));
        return;
    }
    kbi_format_duration(c->stats.median, buf, sizeof buf);
    if (kbi_case_not_timing(c))
        fprintf(f, "%s under a sanitizer, not a timing", buf);
    else if (c->n_rounds > 1)
        fprintf(f, "%s (n=%zu, %zu rounds)", buf, c->n_samples, c->n_rounds);
    else
        fprintf(f, "%s (n=%zu)", buf, c->n_samples);
}

/* "value ± uncertainty unit" of one side of a metric. */
static void metric_cell(FILE *f, const kbi_metric *m)
{
    if (!m) {
        fputs("—", f);
        return;
    }
    if (isnan(m->value))
        fputs("no value", f);
    else
        fprintf(f, "%.6g", m->value);
    if (!isnan(m->value) && isnan(m->uncertainty))
        fputs(" ± ?", f);
    else if (!isnan(m->value) && m->uncertainty > 0)
        fprintf(f, " ± %.2g", m->uncertainty);
    if (m->unit[0] && strcmp(m->unit, "1") != 0) {
        fputc(' ', f);
        kbi_md_cell(f, m->unit);
    }
}

/* The bound of m as text ("<= 1", "in [0, 1]"), "" when none. */
static void bound_text(const kbi_metric *m, char *out, size_t n)
{
    if ((m->bounds & KB_BOUND_LOW) && (m->bounds & KB_BOUND_HIGH))
        snprintf(out, n, "in [%.4g, %.4g]", m->low, m->high);
    else if (m->bounds & KB_BOUND_LOW)
        snprintf(out, n, "≥ %.4g", m->low);
    else if (m->bounds & KB_BOUND_HIGH)
        snprintf(out, n, "≤ %.4g", m->high);
    else
        snprintf(out, n, "%s", "");
}

/* The "| `id`" cell that starts a row: the results' id (the baseline's where the results lack
 * the case), and the baseline's before it when the two were paired across a parameter one side
 * lacks (neither their full ids nor their ids agree). */
static void id_cell(FILE *f, const kbi_case_result *base, const kbi_case_result *res)
{
    fputs("| `", f);
    if (base && res && strcmp(kbi_case_full_id(base), kbi_case_full_id(res)) != 0 &&
        strcmp(base->id, res->id) != 0) {
        kbi_md_cell(f, base->id);
        fputs("` → `", f);
    }
    kbi_md_cell(f, res ? res->id : base->id);
    fputs("` | ", f);
}

/* The metrics section: the worse and out-of-bound ones named first, then
 * one row per metric of every case that has metrics. */
static void write_metrics(const kbi_comparison *c, FILE *f)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n_rows; i++)
        n += c->rows[i].n_metrics;
    if (n == 0)
        return;
    fprintf(f,
            "## Metrics\n\nA metric is **worse** or **better** when it moved, in the direction "
            "its plugin declares bad or good, by more than %g times the two runs' uncertainties "
            "combined (sqrt(u_baseline² + u_results²)); any move of an exact value (uncertainty "
            "0) counts. A metric with no better direction is **changed**, never a regression, "
            "whether or not its uncertainty is known. "
            "**unsure**: the values differ and an uncertainty is unknown. A metric its plugin "
            "declares a timing (KB_METRIC_TIMING: a time per call, a ratio of times) is judged "
            "like a time: **same** within the threshold, **unsure** within what the runs' drift "
            "and CPU wait can explain (or on different CPUs or GPUs), worse/better only beyond "
            "both that and the uncertainties. A value outside the metric's declared bound fails "
            "the comparison. `" KBI_COMPARE_ENERGY_NAME "` is the case's energy per run, which "
            "kbench measures itself where both runs have it (lower is better), judged like a "
            "timing.\n\n",
            KBI_COMPARE_METRIC_SIGMAS);
    for (int k = 0; k < 2; k++) {
        int first = 1;
        if (k ? !c->out_of_bound : !c->metric_count[KBI_MV_WORSE])
            continue;
        fputs(k ? "Out of bound:" : "Worse:", f);
        for (size_t i = 0; i < c->n_rows; i++) {
            const kbi_compare_row *r = &c->rows[i];
            for (size_t j = 0; j < r->n_metrics; j++) {
                const kbi_metric_outcome *o = &r->metrics[j];
                if (k ? !o->out_of_bound : o->verdict != KBI_MV_WORSE)
                    continue;
                fprintf(f, "%s `", first ? "" : ",");
                kbi_md_cell(f, r->res->id);
                fputs("` ", f);
                kbi_md_cell(f, o->name);
                first = 0;
            }
        }
        fputs("\n\n", f);
    }
    fprintf(f,
            "| case | metric | baseline | results | change | %g × combined uncertainty | bound "
            "| verdict | why |\n|---|---|---:|---:|---:|---:|---|---|---|\n",
            KBI_COMPARE_METRIC_SIGMAS);
    for (size_t i = 0; i < c->n_rows; i++) {
        const kbi_compare_row *r = &c->rows[i];
        for (size_t j = 0; j < r->n_metrics; j++) {
            const kbi_metric_outcome *o = &r->metrics[j];
            const kbi_metric *decl = o->res ? o->res : o->base;
            int strong = o->verdict == KBI_MV_WORSE || o->out_of_bound;
            char bound[96];
            bound_text(decl, bound, sizeof bound);
            id_cell(f, NULL, r->res);
            kbi_md_cell(f, o->name);
            fputs(" | ", f);
            metric_cell(f, o->base);
            fputs(o->out_of_bound ? " | **" : " | ", f);
            metric_cell(f, o->res);
            fputs(o->out_of_bound ? "**" : "", f);
            if (isfinite(o->change))
                fprintf(f, " | %+.3g", o->change);
            else
                fputs(" | —", f);
            if (isfinite(o->sigma))
                fprintf(f, " | %.3g", KBI_COMPARE_METRIC_SIGMAS * o->sigma);
            else
                fputs(" | —", f);
            fprintf(f, " | %s", bound[0] ? bound : "—");
            fprintf(f, strong ? " | **%s%s** | " : " | %s%s | ",
                    kbi_metric_verdict_name(o->verdict), o->out_of_bound ? ", out of bound" : "");
            kbi_md_cell(f, o->why);
            fputs(" |\n", f);
        }
    }
    fputc('\n', f);
}

/* The heading and how verdicts are reached. */
static void write_intro(const kbi_comparison *c, const char *base_name, const char *res_name,
                        FILE *f)
{
    fputs("# kbench compare\n\n", f);
    fputs("Baseline: `", f);
    kbi_md_cell(f, base_name);
    fputs("`  \n", f);
    for (size_t i = 0; i < c->reference.n; i++) {
        fputs("Reference run: ", f);
        kbi_md_cell(f, c->reference.s[i]);
        fputs("  \n", f);
    }
    fputs("Results: `", f);
    kbi_md_cell(f, res_name);
    fputs("`\n\n", f);
    fprintf(f,
            "A case is **slower** or **faster** only when its median time changed by more "
            "than the threshold (%.3g%%), by more than the two runs' noise together, and a "
            "Mann-Whitney U test on the samples agrees (p < %g). It is **same** when the change "
            "is within the threshold and each run's noise is too; otherwise **unsure**. "
            "Ratio = results median / baseline median (above 1: slower). Noise = half the 95%% "
            "confidence interval of the median, relative to it.\n\n",
            100 * c->opt.threshold, c->opt.alpha);
    fprintf(f,
            "A case measured in rounds on both sides (`[run] rounds`) is judged by its round "
            "medians instead: the change is their typical ratio (Hodges-Lehmann), and its %g%% "
            "interval allows each run to sit off by as much as the rounds show the machine "
            "drifting; **slower** or **faster** when the whole interval lies beyond the "
            "threshold, **same** when it lies within, else **unsure**. Detectable = the "
            "smallest change these runs would call nearly always; where it is above the change "
            "that matters, the machine was too noisy to tell. Host-timed cases, and device "
            "cases whose run holds a host pass or more launches than the GPU hides (the record "
            "says `host_paced`), share the CPU with the machine's other users: their interval "
            "also allows a whole run to sit off by %g%% (--host-drift), and without rounds "
            "their threshold grows by as much. A case whose worker waited for a core a share w "
            "of its time may read up to 1/(1 - w) slow: the wait widens its interval (or "
            "threshold) by as much, and a change beyond that is still called; so does an SM "
            "clock that dropped during a case (a power or thermal cap), by the ratio of the "
            "clocks the two sides ended at. Such cases measured on different CPUs are **not "
            "comparable**. So are device-timed cases measured on different GPU models (the env "
            "records' device names; two boards of one model are the same GPU)%s: their times "
            "and ratio are shown, not judged. The headline is OK only when every matched case "
            "was judged; UNSURE counts those that were not (unsure, not comparable, or not "
            "measured in the results).\n\n",
            100 * (1 - c->opt.alpha),
            100 * (c->opt.host_drift < 0   ? 0
                   : c->opt.host_drift > 0 ? c->opt.host_drift
                                           : KBI_COMPARE_HOST_DRIFT),
            c->opt.across_gpus ? ", but here --across-gpus judges them as above" : "");
}

/* Warnings, the headline and the lists of failing cases; returns how many cases matched. */
static size_t write_summary(const kbi_comparison *c, FILE *f)
{
    size_t compared = 0;
    static const kbi_verdict order[] = {
        KBI_VERDICT_SLOWER,       KBI_VERDICT_FAILED,        KBI_VERDICT_FASTER,
        KBI_VERDICT_SAME,         KBI_VERDICT_UNSURE,        KBI_VERDICT_NOT_COMPARABLE,
        KBI_VERDICT_NOT_MEASURED, KBI_VERDICT_ONLY_BASELINE, KBI_VERDICT_ONLY_RESULTS,
    };
    for (size_t i = 0; i < c->n_warnings; i++) {
        fputs("> **Warning:** ", f);
        kbi_md_cell(f, c->warnings[i]);
        fputs("\n\n", f);
    }
    for (size_t i = 0; i < c->n_rows; i++)
        compared += c->rows[i].base && c->rows[i].res;
    if (c->not_timing_base || c->not_timing_results)
        fprintf(f,
                "> **Not timings:** the %s a `--sanitize` run; its times say nothing about "
                "speed, so no case gets a timing verdict (statuses are still compared).\n\n",
                c->not_timing_base && c->not_timing_results ? "baseline and the results are"
                : c->not_timing_base                        ? "baseline is"
                                                            : "results are");
    /* The headline names what is known: OK only when every case was judged. */
    if (kbi_comparison_exit_code(c) == KBI_EXIT_USAGE)
        fputs("**NOT TIMINGS**", f);
    else if (regressed(c))
        fputs("**REGRESSION**", f);
    else if (c->unjudged)
        fprintf(f, "**UNSURE: %zu of %zu cases could not be judged**", c->unjudged, c->matched);
    else
        fputs("**OK**", f);
    fprintf(f, ": %zu cases matched", compared);
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++)
        if (c->count[order[k]])
            fprintf(f, ", %zu %s", c->count[order[k]], kbi_verdict_name(order[k]));
    if (c->metric_count[KBI_MV_WORSE])
        fprintf(f, "; %zu metric%s worse", c->metric_count[KBI_MV_WORSE],
                c->metric_count[KBI_MV_WORSE] == 1 ? "" : "s");

    if (c->out_of_bound)
        fprintf(f, "; %zu metric%s out of bound", c->out_of_bound, c->out_of_bound == 1 ? "" : "s");
    fputs(".\n\n", f);
    for (int k = 0; k < 2; k++) {
        /* Name the regressions up front: a CI log shows the head first. */
        kbi_verdict v = k ? KBI_VERDICT_FAILED : KBI_VERDICT_SLOWER;
        int first = 1;
        if (!c->count[v])
            continue;
        fprintf(f, "%s:", k ? "Failed" : "Slower");
        for (size_t i = 0; i < c->n_rows; i++) {
            if (c->rows[i].out.verdict != v)
                continue;
            fprintf(f, "%s `", first ? "" : ",");
            kbi_md_cell(f, c->rows[i].res ? c->rows[i].res->id : c->rows[i].base->id);
            fputs("`", f);
            first = 0;
        }
        fputs("\n\n", f);
    }
    return compared;
}

/* One row per matched case. */
static void write_time_table(const kbi_comparison *c, size_t compared, FILE *f)
{
    if (compared) {
        fputs("| case | baseline | results | ratio | change | noise (baseline / results) | p "
              "| detectable | verdict | why |\n|---|---:|---:|---:|---:|---:|---:|---:|---|---|\n",
              f);
        for (size_t i = 0; i < c->n_rows; i++) {
            const kbi_compare_row *r = &c->rows[i];
            const kbi_compare_outcome *o = &r->out;
            int strong = o->verdict == KBI_VERDICT_SLOWER || o->verdict == KBI_VERDICT_FAILED;
            if (!r->base || !r->res)
                continue;
            id_cell(f, r->base, r->res);
            side_cell(f, r->base);
            fputs(" | ", f);
            side_cell(f, r->res);
            if (isfinite(o->ratio))
                fprintf(f, " | %.3f | %+.2f%% | ±%.2f%% / ±%.2f%%", o->ratio, 100 * (o->ratio - 1),
                        100 * o->noise_base, 100 * o->noise_results);
            else
                fputs(" | — | — | —", f);
            if (isfinite(o->p))
                fprintf(f, o->p < 1e-3 ? " | %.1e" : " | %.3f", o->p);
            else
                fputs(" | —", f);
            if (isfinite(o->detectable))
                fprintf(f, o->detectable < 10 ? " | %.1f%%" : " | >1000%%", 100 * o->detectable);
            else
                fputs(" | —", f);
            fprintf(f, strong ? " | **%s** | " : " | %s | ", kbi_verdict_name(o->verdict));
            kbi_md_cell(f, o->why);
            fputs(" |\n", f);
        }
        fputc('\n', f);
    }
}

/* The cases only one side has. */
static void write_unmatched(const kbi_comparison *c, FILE *f)
{
    for (int side = 0; side < 2; side++) {
        kbi_verdict v = side ? KBI_VERDICT_ONLY_RESULTS : KBI_VERDICT_ONLY_BASELINE;
        if (!c->count[v])
            continue;
        fprintf(f, "%s (%zu):\n\n", side ? "Only in the results" : "Only in the baseline",
                c->count[v]);
        for (size_t i = 0; i < c->n_rows; i++) {
            const kbi_case_result *x = side ? c->rows[i].res : c->rows[i].base;
            if (c->rows[i].out.verdict != v)
                continue;
            fputs("- `", f);
            kbi_md_cell(f, x->id);
            fprintf(f, "` (%s)\n", kbi_status_name(x->status));
        }
        fputc('\n', f);
    }
}

int kbi_compare_write_markdown(const kbi_comparison *c, const char *base_name, const char *res_name,
                               FILE *f)
{
    size_t compared;
    write_intro(c, base_name, res_name, f);
    compared = write_summary(c, f);
    write_time_table(c, compared, f);
    write_metrics(c, f);
    write_unmatched(c, f);
    return ferror(f) ? KBI_ERR_IO : KBI_OK;
}

/* ---- command line ---- */

static const char compare_help[] =
    "Matches the cases of BASELINE and RESULTS by id (plugin/variant/parameters) and\n"
    "calls each one slower, faster, same or unsure.  Each side is a results file or a\n"
    "folder holding results*.jsonl files (shards are merged).  A case whose id has\n"
    "no match is paired with the one case of the other side that differs from it\n"
    "only by parameters one side lacks (a plugin gained a parameter), with a warning.\n"
    "A BASELINE folder with a manifest.json (kbench run and kbench manifest write\n"
    "one) is named run by run, and compare warns when a run's profile, read from the\n"
    "current folder, now expands to cases the reference lacks or no longer holds.\n"
    "BASELINE may also be a baseline's NAME (no file or folder of that name): the one\n"
    "for the GPU RESULTS ran on, DIR/<gpu>/NAME (kbench baseline --help), named on stderr.\n";

static const char compare_notes[] =
    "slower/faster: |change| > threshold, > both runs' noise together, and p < alpha.\n"
    "same: |change| <= threshold and each run's noise <= threshold.  unsure: otherwise.\n"
    "Cases measured in rounds ([run] rounds) on both sides: judged by their round\n"
    "medians; slower/faster only when the whole interval of the change, allowing each\n"
    "run to sit off as far as its rounds drift, lies beyond the threshold.  The\n"
    "detectable column: the smallest change those runs would call nearly always.\n"
    "A host case whose worker waited for a core a share w of its time: the interval\n"
    "widens by up to 1/(1 - w) (12%: 13.6%); a change beyond it is still called.\n"
    "An SM clock that dropped in a case: the interval widens by the ratio of the\n"
    "clocks the two sides ended at.  Host-timed and host_paced cases measured on\n"
    "different CPUs (the env records say): not comparable.  Device-timed cases\n"
    "measured on different GPU models (the env records' device names; two boards of\n"
    "one model are the same GPU): not comparable, unless --across-gpus.  Their\n"
    "times and ratio are shown either way.\n"
    "Metrics declared as timings (KB_METRIC_TIMING) are judged like a time.\n"
    "A --sanitize run on either side is not timings: no timing verdict, exit 2.\n"
    "failed: ok in the baseline, failing (verify_failed, error, crashed, timeout) now.\n"
    "Metrics: worse/better when a move in the declared bad/good direction exceeds 3\n"
    "times both runs' uncertainties combined; a value outside its bound fails.\n"
    "\n"
    "Headline: REGRESSION, or UNSURE: n of m cases could not be judged, or OK when\n"
    "every matched case was judged.\n"
    "Exit status: 0 nothing slower or failed, 1 a case slower or failed or a metric\n"
    "worse or out of bound (with --fail-on-unsure: or a case not judged), 2 bad\n"
    "usage, a --sanitize side or input (including no case common to both sides).\n"
    "Warns when the sides differ in GPU, CPU, clocks, driver or revision.\n";

/* --host-drift: a fraction, or 0 for none (stored as -1: 0 means the default). */
static int parse_host_drift(const char *value, void *target)
{
    double *out = target;
    if (strcmp(value, "0") == 0 || strcmp(value, "0%") == 0) {
        *out = -1;
        return 0;
    }
    return kbi_parse_fraction(value, out);
}

size_t kbi_compare_rule_options(kbi_compare_options *opt, kbi_option *out)
{
    const kbi_option rule[KBI_COMPARE_RULE_OPTIONS] = {
        {.name = "threshold",
         .short_name = 't',
         .kind = KBI_OPT_FRACTION,
         .target = &opt->threshold,
         .expected = "a fraction such as 0.02 or a percentage such as 2%, above 0 and below 1",
         .arg = "X",
         .help = "smallest change that matters: a fraction (0.02) or a\n"
                 "percentage (2%); default 2%"},
        {.name = "alpha",
         .short_name = 'a',
         .kind = KBI_OPT_FRACTION,
         .target = &opt->alpha,
         .expected = "a probability such as 0.05, above 0 and below 1",
         .arg = "A",
         .help = "significance level of the Mann-Whitney U test; default 0.05"},
        {.name = "host-drift",
         .short_name = 'd',
         .kind = KBI_OPT_CUSTOM,
         .target = &opt->host_drift,
         .expected = "a fraction such as 0.1 or a percentage such as 10%, from 0 to below 1",
         .parse = parse_host_drift,
         .arg = "X",
         .help = "how far a whole run of cases that follow the CPU (host-\n"
                 "timed, or host_paced device cases) may sit off on a\n"
                 "shared CPU, unseen by its rounds; default 25%, 0 on a\n"
                 "machine of your own"},
        {.name = "fail-on-unsure",
         .short_name = 'u',
         .kind = KBI_OPT_FLAG,
         .target = &opt->fail_on_unsure,
         .help = "exit 1 when a case could not be judged (unsure, not\n"
                 "comparable, or not measured in the results)"},
        {.name = "across-gpus",
         .kind = KBI_OPT_FLAG,
         .target = &opt->across_gpus,
         .help = "judge device-timed cases measured on different GPU models\n"
                 "(not comparable without it), to compare GPUs on purpose;\n"
                 "a change may then be the GPU's, not the code's"},
    };
    memcpy(out, rule, sizeof rule);
    return KBI_COMPARE_RULE_OPTIONS;
}

/* Parses "0.02" or "2%" into a fraction in (0, 1).  Returns 0 on success. */
static int load_side(const char *what, const char *path, kbi_result_set *set)
{
    char err[KBI_ERR_SIZE] = "";
    int rc = kbi_results_load_inputs(set, &path, 1, err);
    if (rc != KBI_OK) {
        fprintf(stderr, "kbench compare: %s\n", err);
        return rc;
    }
    if (set->n_cases == 0) {
        fprintf(stderr,
                "kbench compare: %s: no case records in the %s, expected the results "
                "of a run\n",
                path, what);
        return KBI_ERR_INPUT;
    }
    for (size_t i = 0; i < set->n_warnings; i++)
        fprintf(stderr, "kbench compare: warning: %s: %s\n", what, set->warnings[i]);
    return KBI_OK;
}

/* Loads both sides.  *base_path may be a baseline's name (baseline.h): the baseline of the
 * GPU the results ran on is loaded, its folder (in base_dir, size n) named on stderr and put
 * in *base_path.  Returns KBI_OK, or an error said on stderr. */
static int load_sides(const char **base_path, const char *res_path, const char *baselines,
                      kbi_result_set *base, kbi_result_set *res, char *base_dir, size_t n)
{
    char gpu[256], err[KBI_ERR_SIZE];
    int rc;
    if (!kbi_baseline_is_name(*base_path)) {
        rc = load_side("baseline", *base_path, base);
        return rc == KBI_OK ? load_side("results", res_path, res) : rc;
    }
    if ((rc = load_side("results", res_path, res)) != KBI_OK)
        return rc;
    rc = kbi_baseline_find(kbi_baselines_root(baselines), *base_path, res, base_dir, n, gpu,
                           sizeof gpu, err);
    if (rc != KBI_OK) {
        fprintf(stderr, "kbench compare: %s\n", err);
        return rc;
    }
    fprintf(stderr, "kbench compare: baseline %s for the results' GPU (%s): %s\n", *base_path,
            gpu, base_dir);
    *base_path = base_dir;
    return load_side("baseline", base_dir, base);
}

/* compare --out FILE: the Markdown table into out too.  Returns KBI_OK, or an error
 * said on stderr. */
static int write_markdown_file(const kbi_comparison *cmp, const char *base_path,
                               const char *res_path, const char *out)
{
    FILE *f = fopen(out, "w");
    int rc;
    if (!f) {
        fprintf(stderr, "kbench compare: %s: cannot create: %s\n", out, strerror(errno));
        return KBI_ERR_IO;
    }
    rc = kbi_compare_write_markdown(cmp, base_path, res_path, f);
    if (fclose(f) != 0 || rc != KBI_OK) {
        fprintf(stderr, "kbench compare: %s: cannot write: %s\n", out, strerror(errno));
        return KBI_ERR_IO;
    }
    return KBI_OK;
}

/* The outcome's line on stderr: not timings, a regression, or cases not judged. */
static void say_outcome(const kbi_comparison *c, int fail_on_unsure)
{
    if (c->not_timing_base || c->not_timing_results)
        fprintf(stderr,
                "kbench compare: the %s a --sanitize run: its times are not timings, so no "
                "timing verdict is given (statuses are compared above); compare runs "
                "without --sanitize\n",
                c->not_timing_base && c->not_timing_results ? "baseline and the results are"
                : c->not_timing_base                        ? "baseline is"
                                                            : "results are");
    else if (regressed(c))
        fprintf(stderr,
                "kbench compare: regression: %zu slower, %zu failed, %zu metrics worse, %zu "
                "metrics out of bound\n",
                c->count[KBI_VERDICT_SLOWER], c->count[KBI_VERDICT_FAILED],
                c->metric_count[KBI_MV_WORSE], c->out_of_bound);
    else if (c->unjudged)
        fprintf(stderr,
                "kbench compare: unsure: %zu of %zu cases could not be judged (the why column "
                "says why)%s\n",
                c->unjudged, c->matched,
                fail_on_unsure ? "; --fail-on-unsure: exit 1"
                               : "; --fail-on-unsure makes that exit 1");
}

int kbi_cmd_compare(int argc, char **argv)
{
    kbi_compare_options opt = {KBI_COMPARE_THRESHOLD, KBI_COMPARE_ALPHA, KBI_COMPARE_HOST_DRIFT, 0,
                               0};
    kbi_result_set base = {0}, res = {0};
    kbi_comparison cmp = {0};
    const char *out = NULL, *baselines = NULL, *base_path;
    char base_dir[PATH_MAX];
    /* compare's rule's own options first (kbi_compare_rule_options), then these. */
    const kbi_option own[] = {
        {.name = "out",
         .short_name = 'o',
         .kind = KBI_OPT_STRING,
         .target = &out,
         .arg = "FILE",
         .help = "also write the Markdown table to FILE"},
        {.name = "baselines",
         .short_name = 'b',
         .kind = KBI_OPT_STRING,
         .target = &baselines,
         .arg = "DIR",
         .help = "where named baselines live (default $KBENCH_BASELINES, else\n"
                 "./baselines)"},
    };
    kbi_option options[KBI_COMPARE_RULE_OPTIONS + sizeof own / sizeof *own];
    const kbi_verb_spec spec = {.verb = "compare",
                                .synopsis = "BASELINE RESULTS",
                                .help = compare_help,
                                KBI_SPEC_OPTIONS(options),
                                .min_operands = 2,
                                .max_operands = 2,
                                .operands = "BASELINE and RESULTS (each a results file or folder)",
                                .summary = "per-case verdicts; exit 1 on regression (BASELINE: "
                                           "a folder, file or NAME)",
                                .notes = compare_notes};
    char err[KBI_ERR_SIZE] = "";
    int first, parsed, code = KBI_EXIT_USAGE, have_cmp = 0;
    kbi_compare_rule_options(&opt, options);
    memcpy(options + KBI_COMPARE_RULE_OPTIONS, own, sizeof own);
    if ((parsed = kbi_options_parse(&spec, argc, argv, &first)) != KBI_OPTS_GO_ON)
        return parsed;
    base_path = argv[first];
    if (load_sides(&base_path, argv[first + 1], baselines, &base, &res, base_dir,
                   sizeof base_dir) != KBI_OK)
        goto done;
    if (kbi_compare_sets(&base, &res, &opt, &cmp, err) != KBI_OK) {
        fprintf(stderr, "kbench compare: %s\n", err);
        goto done;
    }
    have_cmp = 1;
    kbi_compare_use_manifest(&cmp, base_path, &base);
    {
        size_t matched = 0;
        for (size_t i = 0; i < cmp.n_rows; i++)
            matched += cmp.rows[i].base && cmp.rows[i].res;
        if (matched == 0) {
            /* A gate that compares nothing must not pass quietly. */
            fprintf(stderr, "kbench compare: no case id is on both sides, expected results of "
                            "the same profile (see the ids in each results file)\n");
            goto done;
        }
    }
    for (size_t i = 0; i < cmp.n_warnings; i++)
        fprintf(stderr, "kbench compare: warning: %s\n", cmp.warnings[i]);
    kbi_compare_write_markdown(&cmp, base_path, argv[first + 1], stdout);
    fflush(stdout);
    if (out && write_markdown_file(&cmp, base_path, argv[first + 1], out) != KBI_OK)
        goto done;
    code = kbi_comparison_exit_code(&cmp);
    say_outcome(&cmp, opt.fail_on_unsure);
done:
    if (have_cmp)
        kbi_comparison_free(&cmp);
    kbi_results_free(&base);
    kbi_results_free(&res);
    return code;
}
