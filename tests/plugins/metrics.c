/* Fixture: an ABI 1.1 host plugin with declared metrics, so tests can move
 * them at will.  It reports drift = 0.1 + shift (better lower, bound <= 1),
 * rate = 10 - shift (better higher), both with uncertainty `noise`, and
 * count = 3 exactly (no better direction).  run() sleeps a fixed time so
 * its samples are steady and timing verdicts stay out of the way.
 *
 * Every parameter is part of the case id, and `compare` matches cases by
 * id: to mimic a change of code between two runs of the same cases, a test
 * sets KBENCH_FIXTURE_METRICS_SHIFT, which adds to shift without changing
 * the id. */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include <stdlib.h>
#include <time.h>

#include "kbench/plugin.h"

static const kb_variant variants[] = {
    {"report", "reports its declared metrics", KB_HOST, 0},
};

static const kb_param params[] = {
    {"shift", KB_PARAM_FLOAT, "0", "moves drift up and rate down by this much", NULL},
    {"noise", KB_PARAM_FLOAT, "0.01", "uncertainty reported with drift and rate", NULL},
};

static const kb_metric_def metrics[] = {
    {"drift", "1", KB_BETTER_LOWER, KB_BOUND_HIGH, 0.0, 1.0, "0.1 + shift; must stay <= 1"},
    {"rate", "1/s", KB_BETTER_HIGHER, 0, 0.0, 0.0, "10 - shift"},
    {"count", "1", KB_BETTER_NONE, 0, 0.0, 0.0, "always 3, exact"},
};

typedef struct state {
    const kb_host *host;
    kb_case_handle *handle;
    double shift, noise;
    int ran;
} state;

/* Whether the host has the 1.1 report call and the case its handle: a 1.0
 * harness has neither, and the fixture then falls back to metric(). */
static int host_reports(const kb_case *c)
{
    return c->host->struct_size >= offsetof(kb_host, report) + sizeof c->host->report &&
           c->host->report && c->struct_size >= offsetof(kb_case, handle) + sizeof c->handle &&
           c->handle;
}

static int init(const kb_case *c, void **out, char *msg)
{
    state *s = calloc(1, sizeof *s);
    if (!s)
        return KB_NOMEM;
    if (c->host->param_float(c->params, "shift", &s->shift) ||
        c->host->param_float(c->params, "noise", &s->noise)) {
        kb_msgf(msg, "parameters shift and noise not delivered");
        free(s);
        return KB_BAD_PARAM;
    }
    {
        const char *extra = getenv("KBENCH_FIXTURE_METRICS_SHIFT");
        if (extra && *extra)
            s->shift += strtod(extra, NULL);
    }
    s->host = c->host;
    s->handle = host_reports(c) ? c->handle : NULL;
    *out = s;
    return KB_OK;
}

static int counts(void *p, kb_counts *k, char *msg)
{
    (void)p;
    (void)msg;
    k->items = 1;
    k->item_unit = "reports";
    return KB_OK;
}

static int run(void *p, void *stream, char *msg)
{
    state *s = p;
    struct timespec ts = {0, 200000};
    (void)stream;
    (void)msg;
    nanosleep(&ts, NULL);
    s->ran = 1;
    return KB_OK;
}

/* Reports one metric through whichever call the host has. */
static int put(state *s, const char *name, double value, double uncertainty, const char *unit,
               char *msg)
{
    if (!s->handle) {
        s->host->metric(name, value, unit);
        return KB_OK;
    }
    if (s->host->report(s->handle, name, value, uncertainty) != KB_OK) {
        kb_msgf(msg, "host refused metric %s", name);
        return KB_ERROR;
    }
    return KB_OK;
}

static int verify(void *p, kb_verdict *v, char *msg)
{
    state *s = p;
    int rc;
    v->metric = "ran";
    v->passed = s->ran;
    v->error = s->ran ? 0 : 1;
    v->tolerance = 0;
    rc = put(s, "drift", 0.1 + s->shift, s->noise, "1", msg);
    if (rc == KB_OK)
        rc = put(s, "rate", 10.0 - s->shift, s->noise, "1/s", msg);
    if (rc == KB_OK)
        rc = put(s, "count", 3.0, 0.0, "1", msg);
    return rc;
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
    .name = "metrics",
    .description = "fixture: declared metrics moved by parameters",
    .variants = variants,
    .n_variants = 1,
    .params = params,
    .n_params = 2,
    .init = init,
    .counts = counts,
    .run = run,
    .verify = verify,
    .teardown = teardown,
    .metrics = metrics,
    .n_metrics = 3,
    .size_param = "shift",
};

KB_EXPORT const kb_plugin *kb_plugin_entry(void)
{
    return &plugin;
}
