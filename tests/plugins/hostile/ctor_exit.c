/* Fixture: a constructor that calls exit(3), run by dlopen before any kbench code sees the
 * plugin.  The probe must refuse the file, naming the exit status; kbench must not exit. */
#include <stdlib.h>

#include "../nop.h"

__attribute__((constructor)) static void leave(void)
{
    exit(3);
}

static const kb_plugin plugin = {
    .abi_version = KB_ABI_CURRENT,
    .struct_size = sizeof(kb_plugin),
    .name = "ctor_exit",
    NOP_ENTRY_POINTS,
};

KB_EXPORT const kb_plugin *kb_plugin_entry(void)
{
    return &plugin;
}
