/* Fixture: a shared object without the entry symbol; refused. */
#include "kbench/plugin.h"

KB_EXPORT int kb_plugin_entry_misspelt(void) { return 0; }
