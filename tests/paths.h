/* Where the tests find the build and the source tree, resolved when they run rather than
 * baked in when they were compiled: a build folder carried to another machine (the lent GPU)
 * or a checkout moved elsewhere still finds its fixtures, plugins, data and the kbench binary.
 *
 * The build folder is the one holding this test binary (BUILD/tests/test_x).  The source tree
 * is $KBENCH_SOURCE_DIR if set, else the build folder's parent when that is a kbench checkout
 * (build/ and build-h200/ inside the repository), else the path CMake configured.  Every test
 * executable gets this header through `-include` (tests/CMakeLists.txt) and paths.c, so the names
 * below read like the constants they replace (without string-literal concatenation). */
#ifndef KBENCH_TEST_PATHS_H
#define KBENCH_TEST_PATHS_H

/* No system header here: this is included before the test's own feature-test macros. */
const char *kbt_source_dir(void);
char *kbt_fixtures(void);
char *kbt_plugins(void);
char *kbt_binary(void);
char *kbt_graph_replay(void);
char *kbt_fake_nvml(void);

#define KBENCH_TEST_FIXTURES kbt_fixtures()
#define KBENCH_TEST_PLUGINS kbt_plugins()
#define KBENCH_TEST_BINARY kbt_binary()
#define KBENCH_TEST_GRAPH_REPLAY kbt_graph_replay()
#define KBENCH_TEST_SOURCE_DIR kbt_source_dir()
/* Test data and fuzz corpora are read only by the CPU tests, which run where the build was
 * configured; they stay string literals (KBENCH_TEST_DATA "/x.jsonl"), set by CMake. */

#endif
