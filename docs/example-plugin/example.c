/* A complete kbench plugin: y = a*x + y over n floats, on the host.
 * docs/plugin.md quotes this file and tests/test_docs.c builds it with the
 * command written there, lists it and runs docs/example-plugin/example.ini. */
#include <float.h>
#include <stdlib.h>

#include "kbench/plugin.h"

static const kb_variant variants[] = {
    {"loop", "a plain C loop", KB_HOST, KB_VARIANT_BASELINE},
};

static const kb_param params[] = {
    {"n", KB_PARAM_INT, "1000000", "number of floats", NULL},
    {"a", KB_PARAM_FLOAT, "2.0", "the factor", NULL},
};

typedef struct state {
    int64_t n;
    float a, *x, *y, *y0; /* y0: y as init made it, for the reference */
    int runs;             /* runs since init: y = y0 + runs * a * x */
} state;

static int init(const kb_case *c, void **out, char *msg)
{
    state *s = calloc(1, sizeof *s);
    double a;
    if (!s)
        return KB_NOMEM;
    if (c->host->param_int(c->params, "n", &s->n) != KB_OK ||
        c->host->param_float(c->params, "a", &a) != KB_OK || s->n < 1) {
        kb_msgf(msg, "n must be a positive integer");
        free(s);
        return KB_BAD_PARAM;
    }
    s->a = (float)a;
    s->x = malloc((size_t)s->n * sizeof *s->x);
    s->y = malloc((size_t)s->n * sizeof *s->y);
    s->y0 = malloc((size_t)s->n * sizeof *s->y0);
    if (!s->x || !s->y || !s->y0) {
        free(s->x), free(s->y), free(s->y0), free(s);
        return KB_NOMEM;
    }
    srand((unsigned)c->seed); /* seeded, never all zeros */
    for (int64_t i = 0; i < s->n; i++) {
        s->x[i] = 1.0f + (float)(rand() % 1000) / 1000.0f;
        s->y[i] = s->y0[i] = (float)(rand() % 1000) / 1000.0f;
    }
    *out = s;
    return KB_OK;
}

static int counts(void *p, kb_counts *k, char *msg)
{
    state *s = p;
    k->flops = 2.0 * (double)s->n;
    k->bytes = 12.0 * (double)s->n; /* read x and y, write y */
    k->items = (double)s->n;
    k->item_unit = "elements";
    return KB_OK;
}

static int run(void *p, void *stream, char *msg)
{
    state *s = p;
    for (int64_t i = 0; i < s->n; i++)
        s->y[i] += s->a * s->x[i];
    s->runs++;
    return KB_OK;
}

/* Every run adds a*x once more: y must be y0 + runs * a * x, to within the
 * rounding of one float multiply-add per run. */
static int verify(void *p, kb_verdict *v, char *msg)
{
    state *s = p;
    double worst = 0;
    for (int64_t i = 0; i < s->n; i++) {
        double ax = (double)s->a * s->x[i], want = s->y0[i] + s->runs * ax;
        double err = (s->y[i] - want) / (s->y0[i] + s->runs * (ax < 0 ? -ax : ax));
        err = err < 0 ? -err : err;
        worst = err > worst ? err : worst;
    }
    v->metric = "max_rel_error";
    v->error = worst;
    v->tolerance = FLT_EPSILON * (s->runs > 0 ? s->runs : 1);
    v->passed = worst <= v->tolerance;
    return KB_OK;
}

static int teardown(void *p, char *msg)
{
    state *s = p;
    free(s->x);
    free(s->y);
    free(s->y0);
    free(s);
    return KB_OK;
}

static const kb_plugin plugin = {
    .abi_version = KB_ABI_CURRENT,
    .struct_size = sizeof(kb_plugin),
    .name = "example",
    .description = "y = a*x + y on the host (the plugin of docs/plugin.md)",
    .variants = variants,
    .n_variants = sizeof variants / sizeof *variants,
    .params = params,
    .n_params = sizeof params / sizeof *params,
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
