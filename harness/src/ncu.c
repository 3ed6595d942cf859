/* `kbench profile`: one case under Nsight Compute (issue 5 in progress). */
#include "ncu.h"

#include <stdio.h>

#include "common.h"

int kbi_cmd_profile(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fputs("kbench profile: not available in this build yet\n", stderr);
    return KBI_EXIT_USAGE;
}
