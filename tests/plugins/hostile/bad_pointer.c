/* Fixture: kb_plugin_entry returns a pointer to nothing.  Reading the descriptor crashes the
 * probe, which must say so; the parent never reads it. */
#include <stdint.h>

#include "kbench/plugin.h"

KB_EXPORT const kb_plugin *kb_plugin_entry(void)
{
    return (const kb_plugin *)(uintptr_t)16;
}
