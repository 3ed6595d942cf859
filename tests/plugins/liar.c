/* Fixture: a verify that says "passed" while its own figures say otherwise (error 10 over a
 * tolerance of 1).  kbench judges the figures too, so the case must be verify_failed. */
#include <stdlib.h>

#include "kbench/plugin.h"

static const kb_variant variants[] = {
    {"passes", "claims a pass its error contradicts", KB_HOST, 0}};

static int init(const kb_case *c, void **out, char *msg)
{
    *out = calloc(1, sizeof(int));
    return *out ? KB_OK : KB_NOMEM;
}

static int counts(void *p, kb_counts *k, char *msg)
{
    k->items = 1;
    return KB_OK;
}

static int run(void *p, void *stream, char *msg)
{
    ++*(int *)p;
    return KB_OK;
}

static int verify(void *p, kb_verdict *v, char *msg)
{
    v->passed = 1;
    v->error = 10;
    v->tolerance = 1;
    v->metric = "abs";
    return KB_OK;
}

static int teardown(void *p, char *msg)
{
    free(p);
    return KB_OK;
}

static const kb_plugin plugin = {
    .abi_version = KB_ABI_CURRENT,
    .struct_size = sizeof(kb_plugin),
    .name = "liar",
    .description = "fixture: verify passes an error over its tolerance",
    .variants = variants,
    .n_variants = 1,
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
