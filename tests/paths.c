/* Where the tests find the build and the source tree, resolved when they run (see paths.h). */
#define _XOPEN_SOURCE 700
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "paths.h"

/* kbt_exe_up(0) is the folder holding this executable, 1 its parent, 2 the one above ("" if
 * /proc is not there). */
static const char *kbt_exe_up(int levels)
{
    static char dirs[3][PATH_MAX];
    static int done[3];
    if (!done[levels]) {
        ssize_t n = readlink("/proc/self/exe", dirs[levels], sizeof dirs[levels] - 1);
        dirs[levels][n > 0 ? n : 0] = '\0';
        for (int i = 0; i <= levels; i++) {
            char *slash = strrchr(dirs[levels], '/');
            if (slash)
                *slash = '\0';
        }
        done[levels] = 1;
    }
    return dirs[levels];
}

/* Nonzero when dir holds the kbench sources. */
static int kbt_is_source(const char *dir)
{
    char probe[PATH_MAX + 64];
    snprintf(probe, sizeof probe, "%s/harness/include/kbench/plugin.h", dir);
    return access(probe, R_OK) == 0;
}

const char *kbt_source_dir(void)
{
    static char dir[PATH_MAX];
    if (!dir[0]) {
        const char *env = getenv("KBENCH_SOURCE_DIR");
        const char *parent = kbt_exe_up(2); /* BUILD/tests/test_x -> BUILD/.. */
        snprintf(dir, sizeof dir, "%s",
                 env && *env             ? env
                 : kbt_is_source(parent) ? parent
                                         : KBENCH_TEST_CONFIGURED_SOURCE_DIR);
    }
    return dir;
}

/* `rel` under the build folder, in buf. */
static char *kbt_path(const char *rel, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%s", kbt_exe_up(1), rel);
    return buf;
}

#define KBT_DEFINE_PATH(fn, rel)                                                                   \
    char *fn(void)                                                                                 \
    {                                                                                              \
        static char buf[PATH_MAX + 64];                                                            \
        return kbt_path(rel, buf, sizeof buf);                                                     \
    }
KBT_DEFINE_PATH(kbt_fixtures, "tests/plugins")
KBT_DEFINE_PATH(kbt_plugins, "plugins")
KBT_DEFINE_PATH(kbt_binary, "kbench")
KBT_DEFINE_PATH(kbt_graph_replay, "tests/graph_replay")
KBT_DEFINE_PATH(kbt_fake_nvml, "tests/nvml/libnvidia-ml.so.1")
