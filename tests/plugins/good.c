/* Fixture: a well-behaved host-only plugin with one parameter of each type.
 * "sum" adds n seeded numbers; "sleep" sleeps usec microseconds (a known
 * duration for timing tests).  $KBENCH_FIXTURE_EXTRA_WORK=P makes "sum" do
 * P% more work, the same case id: a real slowdown for compare's tests. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kbench/plugin.h"

static const kb_variant variants[] = {
    {"sum", "adds n numbers", KB_HOST, KB_VARIANT_BASELINE},
    {"sleep", "sleeps usec microseconds", KB_HOST, 0},
};

static const kb_param params[] = {
    {"n", KB_PARAM_INT, "1000", "how many numbers", NULL},
    {"scale", KB_PARAM_FLOAT, "1.5", "a factor", NULL},
    {"mode", KB_PARAM_STRING, "fast", "a word", "fast|slow"},
    {"shape", KB_PARAM_DIMS, "2x3x4", "a shape", "3"},
    {"usec", KB_PARAM_INT, "200", "sleep length of the sleep variant", NULL},
};

typedef struct state {
    int variant;
    int64_t n, usec, extra; /* extra: numbers added once more, into sink */
    double *x, sum, want, sink;
} state;

static int init(const kb_case *c, void **out, char *msg)
{
    state *s = calloc(1, sizeof *s);
    double scale;
    const char *mode;
    int64_t dims[KB_MAX_DIMS];
    int nd;
    if (!s)
        return KB_NOMEM;
    if (c->host->param_int(c->params, "n", &s->n) || c->host->param_float(c->params, "scale", &scale) ||
        c->host->param_string(c->params, "mode", &mode) ||
        c->host->param_dims(c->params, "shape", dims, &nd) ||
        c->host->param_int(c->params, "usec", &s->usec) || nd != 3) {
        kb_msgf(msg, "parameters not delivered");
        free(s);
        return KB_BAD_PARAM;
    }
    s->variant = c->variant;
    s->x = malloc((size_t)(s->n > 0 ? s->n : 1) * sizeof *s->x);
    srand((unsigned)c->seed);
    for (int64_t i = 0; i < s->n; i++) {
        s->x[i] = scale * (1.0 + rand() % 100);
        s->want += s->x[i];
    }
    s->sum = -1.0; /* poison */
    if (getenv("KBENCH_FIXTURE_EXTRA_WORK"))
        s->extra = s->n * atoi(getenv("KBENCH_FIXTURE_EXTRA_WORK")) / 100;
    if (s->extra < 0 || s->extra > s->n)
        s->extra = 0;
    c->host->metric("fixture_metric", 42.0, "units");
    *out = s;
    return KB_OK;
}

static int counts(void *p, kb_counts *k, char *msg)
{
    state *s = p;
    k->flops = (double)s->n;
    k->bytes = 8.0 * (double)s->n;
    k->items = (double)s->n;
    k->item_unit = "numbers";
    return KB_OK;
}

static int run(void *p, void *stream, char *msg)
{
    state *s = p;
    if (s->variant == 1) {
        struct timespec ts = {s->usec / 1000000, (s->usec % 1000000) * 1000};
        nanosleep(&ts, NULL);
        s->sum = s->want;
        return KB_OK;
    }
    double acc = 0;
    for (int64_t i = 0; i < s->n; i++)
        acc += s->x[i];
    s->sum = acc;
    acc = 0;
    for (int64_t i = 0; i < s->extra; i++)
        acc += s->x[i];
    s->sink = acc; /* kept, so the extra loop is not optimised away */
    return KB_OK;
}

static int verify(void *p, kb_verdict *v, char *msg)
{
    state *s = p;
    v->metric = "abs";
    v->error = s->sum > s->want ? s->sum - s->want : s->want - s->sum;
    v->tolerance = 1e-9 * s->want;
    v->passed = v->error <= v->tolerance;
    return KB_OK;
}

static int teardown(void *p, char *msg)
{
    state *s = p;
    free(s->x);
    free(s);
    return KB_OK;
}

static const kb_plugin plugin = {
    .abi_version = KB_ABI_CURRENT,
    .struct_size = sizeof(kb_plugin),
    .name = "good",
    .description = "fixture: a plugin that does everything right",
    .variants = variants,
    .n_variants = 2,
    .params = params,
    .n_params = 5,
    .init = init,
    .counts = counts,
    .run = run,
    .verify = verify,
    .teardown = teardown,
};

KB_EXPORT const kb_plugin *kb_plugin_entry(void)
{
    return &plugin;
}
