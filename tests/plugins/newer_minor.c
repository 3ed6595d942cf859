/* Fixture: built for a minor version newer than the harness; refused. */
#include "nop.h"

static const kb_plugin plugin = {
    .abi_version = KB_ABI_VERSION(KB_ABI_MAJOR, KB_ABI_MINOR + 1),
    .struct_size = sizeof(kb_plugin),
    .name = "newer_minor",
    NOP_ENTRY_POINTS,
};

KB_EXPORT const kb_plugin *kb_plugin_entry(void) { return &plugin; }
