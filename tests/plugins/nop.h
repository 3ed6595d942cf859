/* Typed do-nothing entry points for the fixtures the loader must refuse
 * (they are never called). */
#ifndef KBENCH_FIXTURE_NOP_H
#define KBENCH_FIXTURE_NOP_H

#include "kbench/plugin.h"

static int nop_init(const kb_case *c, void **s, char *m) { return KB_ERROR; }
static int nop_counts(void *s, kb_counts *k, char *m) { return KB_ERROR; }
static int nop_run(void *s, void *st, char *m) { return KB_ERROR; }
static int nop_verify(void *s, kb_verdict *v, char *m) { return KB_ERROR; }
static int nop_teardown(void *s, char *m) { return KB_OK; }
static const kb_variant nop_variants[] = {{"v", "a variant", KB_HOST, 0}};

#define NOP_ENTRY_POINTS                                                                  \
    .variants = nop_variants, .n_variants = 1, .init = nop_init, .counts = nop_counts,    \
    .run = nop_run, .verify = nop_verify, .teardown = nop_teardown

#endif
