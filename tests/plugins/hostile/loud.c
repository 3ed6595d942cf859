/* Fixture: a plugin that prints to stdout from a constructor and from its entry point (which
 * the ABI forbids: scripts read kbench's stdout).  Refused, quoting what it printed. */
#include <stdio.h>

#include "../nop.h"

__attribute__((constructor)) static void hello(void)
{
    printf("loud: hello from a constructor\n");
}

static const kb_plugin plugin = {
    .abi_version = KB_ABI_CURRENT,
    .struct_size = sizeof(kb_plugin),
    .name = "loud",
    NOP_ENTRY_POINTS,
};

KB_EXPORT const kb_plugin *kb_plugin_entry(void)
{
    printf("loud: hello from kb_plugin_entry\n");
    return &plugin;
}
