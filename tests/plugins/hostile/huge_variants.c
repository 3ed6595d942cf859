/* Fixture: a descriptor that claims a million variants over a table of one (a corrupt count).
 * Refused by the descriptor limits before the table is read. */
#include "../nop.h"

static const kb_plugin plugin = {
    .abi_version = KB_ABI_CURRENT,
    .struct_size = sizeof(kb_plugin),
    .name = "huge_variants",
    .variants = nop_variants,
    .n_variants = 1000000,
    .init = nop_init,
    .counts = nop_counts,
    .run = nop_run,
    .verify = nop_verify,
    .teardown = nop_teardown,
};

KB_EXPORT const kb_plugin *kb_plugin_entry(void)
{
    return &plugin;
}
