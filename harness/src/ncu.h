/* `kbench profile`: one case under Nsight Compute. */
#ifndef KBENCH_NCU_H
#define KBENCH_NCU_H

/* argv[0] == "profile"; returns the process exit code. */
int kbi_cmd_profile(int argc, char **argv);

#endif
