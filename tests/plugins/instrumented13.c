/* Fixture: instrumented.c built as an ABI 1.3 plugin.  Its descriptor ends before
 * `instrument` (struct_size), though the function is there in memory: the harness must run
 * the plugin as before 1.4, never calling it and writing no "instrumented" record. */
#define FIXTURE_ABI_1_3 1
#define FIXTURE_NAME "instrumented13"
#include "instrumented.c"
