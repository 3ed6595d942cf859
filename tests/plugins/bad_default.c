/* Fixture: a parameter whose default does not parse; refused when it loads, not when a profile
 * first leaves the parameter out. */
#include "nop.h"

static const kb_param params[] = {{"n", KB_PARAM_INT, "lots", "an integer", NULL}};

static const kb_plugin plugin = {
    .abi_version = KB_ABI_CURRENT,
    .struct_size = sizeof(kb_plugin),
    .name = "bad_default",
    .params = params,
    .n_params = 1,
    NOP_ENTRY_POINTS,
};

KB_EXPORT const kb_plugin *kb_plugin_entry(void) { return &plugin; }
