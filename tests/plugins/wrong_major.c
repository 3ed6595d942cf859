/* Fixture: built for ABI major version 2; the loader must refuse it. */
#include "nop.h"

static const kb_plugin plugin = {
    .abi_version = KB_ABI_VERSION(2, 0),
    .struct_size = sizeof(kb_plugin),
    .name = "wrong_major",
    NOP_ENTRY_POINTS,
};

KB_EXPORT const kb_plugin *kb_plugin_entry(void) { return &plugin; }
