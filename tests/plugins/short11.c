/* Fixture: claims ABI 1.1 but its descriptor stops where 1.0's did (built
 * against a broken header); the loader must refuse it. */
#include <stddef.h>

#include "nop.h"

static const kb_plugin plugin = {
    .abi_version = KB_ABI_VERSION(1, 1),
    .struct_size = offsetof(kb_plugin, prepare),
    .name = "short11",
    NOP_ENTRY_POINTS,
};

KB_EXPORT const kb_plugin *kb_plugin_entry(void) { return &plugin; }
