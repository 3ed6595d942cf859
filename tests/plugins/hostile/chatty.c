/* Fixture: a working plugin that prints where it should not, in ways the load probe cannot
 * see: to stdout from init and run without a newline (buffered: it must still reach
 * OUT/worker.log when the case ends), to stderr from run, and to stdout from its destructor
 * (run in kbench's own process when the plugin is closed, after the results path was
 * printed).  It loads; kbench's stdout must stay clean. */
#include <stdio.h>
#include <stdlib.h>

#include "kbench/plugin.h"

static const kb_variant variants[] = {{"talk", "prints in init, run and at unload", KB_HOST, 0}};

__attribute__((destructor)) static void goodbye(void)
{
    printf("chatty: unloaded\n");
}

static int init(const kb_case *c, void **out, char *msg)
{
    int *s = calloc(1, sizeof *s);
    if (!s)
        return KB_NOMEM;
    printf("chatty: init of %s;", c->id); /* no newline: stays in stdio's buffer */
    *out = s;
    return KB_OK;
}

static int counts(void *p, kb_counts *k, char *msg)
{
    k->items = 1.0;
    return KB_OK;
}

static int run(void *p, void *stream, char *msg)
{
    printf(" run;");
    *(int *)p = 1;
    return KB_OK;
}

static int verify(void *p, kb_verdict *v, char *msg)
{
    v->metric = "wrong";
    v->error = *(int *)p == 1 ? 0.0 : 1.0;
    v->tolerance = 0.0;
    v->passed = v->error == 0.0;
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
    .name = "chatty",
    .description = "fixture: prints from init, run and its destructor",
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
