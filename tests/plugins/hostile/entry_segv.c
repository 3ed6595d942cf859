/* Fixture: kb_plugin_entry writes through a NULL pointer.  The probe must refuse the file,
 * saying it crashed in the entry point; kbench and the other plugins go on. */
#include "kbench/plugin.h"

KB_EXPORT const kb_plugin *kb_plugin_entry(void)
{
    /* Both volatile: the compiler may neither see that p is NULL nor drop the store. */
    volatile int *volatile p = NULL;
    *p = 1;
    return NULL;
}
