/* Fixture: a plugin named "run", the profile's own [run] section: no profile could configure
 * it, so it is refused at load. */
#include "../nop.h"

static const kb_plugin plugin = {
    .abi_version = KB_ABI_CURRENT,
    .struct_size = sizeof(kb_plugin),
    .name = "run",
    NOP_ENTRY_POINTS,
};

KB_EXPORT const kb_plugin *kb_plugin_entry(void)
{
    return &plugin;
}
