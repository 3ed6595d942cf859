/* Which variants each knob applies to (ABI 1.4's knob_variants, "knob=variant|variant;..."):
 * the text is checked once when a plugin loads, and the profile reads it to refuse a section
 * that sets a knob away from its default for a variant the knob does not apply to (that case
 * would run under a name claiming a setting it ignores). */
#ifndef KBENCH_KNOB_VARIANTS_H
#define KBENCH_KNOB_VARIANTS_H

#include <stddef.h>

#include "kbench/plugin.h"
#include "loader.h"

/* Checks a 1.4 descriptor's knob_variants (NULL or "": none): each ';'-separated item is
 * "knob=variant|variant", the knob one of the plugin's knobs (ABI 1.3) and named once, each
 * variant one of the plugin's and listed once for its knob.  Returns KBI_OK, or KBI_ERR with
 * err saying, in one line, which item is wrong and what was expected. */
int kbi_knob_variants_check(const kb_plugin *d, char *err);

/* Nonzero when `knob` applies to variant index `variant` of p: the plugin does not name the
 * knob in knob_variants (or predates ABI 1.4), or names that variant for it. */
int kbi_knob_applies(const kbi_plugin *p, const char *knob, int variant);

/* Writes into out (room for the plugin's n_variants) the indices of the variants `knob`
 * applies to, in descriptor order; returns how many. */
size_t kbi_knob_variants_of(const kbi_plugin *p, const char *knob, int *out);

#endif
