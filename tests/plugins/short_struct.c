/* Fixture: a descriptor that claims to be shorter than ABI 1.0's (an old
 * or corrupt build); the loader must refuse it without reading past it. */
#include <stdint.h>

#include "kbench/plugin.h"

static const struct {
    uint32_t abi_version, struct_size;
    const char *name;
} plugin = {KB_ABI_CURRENT, 16, "short_struct"};

KB_EXPORT const kb_plugin *kb_plugin_entry(void) { return (const kb_plugin *)(const void *)&plugin; }
