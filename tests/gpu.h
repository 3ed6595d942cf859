/* For the tests that need a GPU (test_*_gpu.c): whether this machine has a CUDA device, asked
 * in a child so the test process never holds a CUDA context (the runner forks workers that
 * must start without one).  Include after the feature-test macro and criterion.h. */
#ifndef KBENCH_TEST_GPU_H
#define KBENCH_TEST_GPU_H

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Nonzero when a device is there; otherwise `why` says what cudaGetDeviceCount answered. */
static inline int have_gpu(char *why, size_t n)
{
    int fd[2], count = 0, status;
    char buf[256] = "0 unknown";
    pid_t pid;
    if (pipe(fd) != 0)
        return 0;
    pid = fork();
    if (pid == 0) {
        cudaError_t e = cudaGetDeviceCount(&count);
        char msg[256];
        snprintf(msg, sizeof msg, "%d %s", e == cudaSuccess ? count : 0,
                 e == cudaSuccess ? "no devices" : cudaGetErrorName(e));
        (void)!write(fd[1], msg, strlen(msg) + 1);
        _exit(0);
    }
    close(fd[1]);
    (void)!read(fd[0], buf, sizeof buf - 1);
    close(fd[0]);
    waitpid(pid, &status, 0);
    sscanf(buf, "%d", &count);
    snprintf(why, n, "no CUDA device here (%s); this test runs on the GPU machine",
             strchr(buf, ' ') ? strchr(buf, ' ') + 1 : buf);
    return count > 0;
}

/* Skips the current test, printing why, where there is no device. */
static inline void need_gpu(void)
{
    char why[512];
    if (!have_gpu(why, sizeof why))
        cr_skip_test("%s", why);
}

#endif /* KBENCH_TEST_GPU_H */
