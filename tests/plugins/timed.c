/* Fixture: an ABI 1.2 host plugin whose declared metrics include one derived from a timing
 * (KB_METRIC_TIMING), so tests can check that compare judges it like a time while a physics
 * metric keeps the 3-uncertainty rule.  It reports self_us = 1.0832 us x (1 + shift) (timing,
 * better lower) and energy = 1.0832 x (1 + shift) (a result, better lower), both with
 * uncertainty 0.0031 x |value| / 1.0832: the figures of permute's self_us in issue 23, where a
 * 1.9% move was 5.6 combined uncertainties.  run() sleeps a fixed time, so the case's own
 * time stays steady.  KBENCH_FIXTURE_TIMED_SHIFT adds to shift without changing the case id. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <time.h>

#include "kbench/plugin.h"

static const kb_variant variants[] = {
    {"report", "reports a timing-derived and a physics metric", KB_HOST, 0},
};

static const kb_param params[] = {
    {"shift", KB_PARAM_FLOAT, "0", "relative move of both metrics", NULL},
};

static const kb_metric_def metrics[] = {
    {"self_us", "us", KB_BETTER_LOWER, KB_METRIC_TIMING, 0, 0, "a time per call: a timing"},
    {"energy", "J", KB_BETTER_LOWER, 0, 0, 0, "a physics result"},
};

typedef struct state {
    const kb_host *host;
    kb_case_handle *handle;
    double shift;
} state;

static int init(const kb_case *c, void **out, char *msg)
{
    state *s = calloc(1, sizeof *s);
    const char *extra = getenv("KBENCH_FIXTURE_TIMED_SHIFT");
    if (!s)
        return KB_NOMEM;
    if (c->host->param_float(c->params, "shift", &s->shift)) {
        kb_msgf(msg, "parameter shift not delivered");
        free(s);
        return KB_BAD_PARAM;
    }
    if (extra && *extra)
        s->shift += strtod(extra, NULL);
    s->host = c->host;
    s->handle = c->handle;
    *out = s;
    return KB_OK;
}

static int counts(void *p, kb_counts *k, char *msg)
{
    (void)p;
    (void)msg;
    k->items = 1;
    k->item_unit = "calls";
    return KB_OK;
}

static int run(void *p, void *stream, char *msg)
{
    struct timespec ts = {0, 200000};
    (void)p;
    (void)stream;
    (void)msg;
    nanosleep(&ts, NULL);
    return KB_OK;
}

static int verify(void *p, kb_verdict *v, char *msg)
{
    state *s = p;
    double us = 1.0832 * (1.0 + s->shift), u = 0.0031 * (1.0 + s->shift);
    v->metric = "ran";
    v->passed = 1;
    v->error = 0;
    v->tolerance = 0;
    if (s->host->report(s->handle, "self_us", us, u) != KB_OK ||
        s->host->report(s->handle, "energy", us, u) != KB_OK) {
        kb_msgf(msg, "host refused a metric");
        return KB_ERROR;
    }
    return KB_OK;
}

static int teardown(void *p, char *msg)
{
    (void)msg;
    free(p);
    return KB_OK;
}

static const kb_plugin plugin = {
    .abi_version = KB_ABI_CURRENT,
    .struct_size = sizeof(kb_plugin),
    .name = "timed",
    .description = "fixture: a timing-derived metric beside a physics one",
    .variants = variants,
    .n_variants = 1,
    .params = params,
    .n_params = 1,
    .init = init,
    .counts = counts,
    .run = run,
    .verify = verify,
    .teardown = teardown,
    .metrics = metrics,
    .n_metrics = 2,
    .size_param = "shift",
};

KB_EXPORT const kb_plugin *kb_plugin_entry(void)
{
    return &plugin;
}
