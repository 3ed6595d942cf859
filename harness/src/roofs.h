/* ABI 1.4's roofs and headline (plugin.h): the ceiling each variant's rate is drawn against
 * (the hardware path it uses) and the figure a plugin's rate chart shows.  The loader checks
 * a descriptor's; the worker records each case's ("roof", "headline" in its record), so a
 * report made where the plugin cannot be loaded still knows them; a record without them
 * (older kbench, a plugin before 1.4) means the defaults: the rate, against the roof its
 * counts imply. */
#ifndef KBENCH_ROOFS_H
#define KBENCH_ROOFS_H

#include <stddef.h>

#include "kbench/plugin.h"

/* The headline values: a rate (GFLOP/s, GB/s, items/s), or the median time over the items
 * (ns per spin flip), lower being better. */
#define KBI_HEADLINE_RATE "rate"
#define KBI_HEADLINE_TIME_PER_ITEM "time_per_item"

/* Whether roof names a roof: "fp32", "tf32", "tf32x3" or "memory". */
int kbi_roof_known(const char *roof);

/* The words for a roof on a chart ("FP32 FMA peak"); "" for an unknown one. */
const char *kbi_roof_label(const char *roof);

/* Checks d's headline (NULL, "rate" or "time_per_item") and roofs ("variant=roof;...",
 * each variant one of d's and named once, each roof known).  Returns 0, or -1 with err
 * (KBI_ERR_SIZE) saying what was found and what was expected. */
int kbi_roofs_check(const kb_plugin *d, char *err);

/* The roof d's roofs names for variant, copied into out (n bytes); "" when it names none
 * (or d is older than 1.4). */
void kbi_roof_of(const kb_plugin *d, const char *variant, char *out, size_t n);

/* d's headline: "time_per_item", or "" for the rate (NULL, "rate", or d older than 1.4). */
const char *kbi_headline_of(const kb_plugin *d);

#endif
