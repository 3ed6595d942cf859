/* Fixture: knob_variants (ABI 1.4) naming a variant the plugin does not have: refused at load
 * in one line, as a profile's check against it could not be trusted. */
#include "../nop.h"

static const kb_param params[] = {{"block", KB_PARAM_INT, "64", "a knob", NULL}};

static const kb_plugin plugin = {
    .abi_version = KB_ABI_CURRENT,
    .struct_size = sizeof(kb_plugin),
    .name = "bad_knob_variants",
    .params = params,
    .n_params = 1,
    NOP_ENTRY_POINTS,
    .knobs = "block",
    .knob_variants = "block=v|w",
};

KB_EXPORT const kb_plugin *kb_plugin_entry(void)
{
    return &plugin;
}
