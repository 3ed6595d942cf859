/* Fixture: kb_plugin_entry never returns.  The probe must give up at its time limit and
 * refuse the file; kbench must not hang. */
#define _POSIX_C_SOURCE 200809L
#include <unistd.h>

#include "kbench/plugin.h"

KB_EXPORT const kb_plugin *kb_plugin_entry(void)
{
    for (;;)
        sleep(1);
    return NULL;
}
