/* For the tests that need a GPU (test_*_gpu.c): whether this machine has a CUDA device, asked
 * in a child so the test process never holds a CUDA context (the runner forks workers that
 * must start without one).  Include after the feature-test macro and criterion.h.
 *
 * Only "no device" and "no driver" are a skip.  Any other answer (a driver that does not
 * match the runtime, a device that fails to initialise, a child that dies) fails the test:
 * on the GPU machine a broken setup must not pass as a suite of skips.  With
 * KBENCH_REQUIRE_GPU=1 (the GPU machine's batch sets it) a missing GPU fails too. */
#ifndef KBENCH_TEST_GPU_H
#define KBENCH_TEST_GPU_H

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The environment variable under which a missing GPU fails instead of skipping. */
#define KBENCH_REQUIRE_GPU_ENV "KBENCH_REQUIRE_GPU"

/* What the child found. */
enum gpu_state { GPU_PRESENT, GPU_NONE, GPU_BROKEN };

/* Asks cudaGetDeviceCount in a child; `why` says what it answered when there is no usable
 * device. */
static inline enum gpu_state gpu_state(char *why, size_t n)
{
    int fd[2], count = 0, code = -1, driver = 0, status;
    char buf[256] = "", name[128] = "?";
    ssize_t got;
    pid_t pid;
    if (pipe(fd) != 0) {
        snprintf(why, n, "cannot ask for a device: pipe failed");
        return GPU_BROKEN;
    }
    pid = fork();
    if (pid == 0) {
        cudaError_t e = cudaGetDeviceCount(&count);
        /* The driver's library, looked for without initialising anything: its absence is
         * "no driver", while an installed driver that fails is a broken setup. */
        void *lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
        char msg[256];
        snprintf(msg, sizeof msg, "%d %d %d %s", e == cudaSuccess ? count : 0, (int)e, lib != NULL,
                 cudaGetErrorName(e));
        (void)!write(fd[1], msg, strlen(msg) + 1);
        _exit(0);
    }
    close(fd[1]);
    got = pid > 0 ? read(fd[0], buf, sizeof buf - 1) : -1;
    close(fd[0]);
    if (pid > 0)
        waitpid(pid, &status, 0);
    buf[got > 0 ? got : 0] = '\0';
    if (pid < 0 || sscanf(buf, "%d %d %d %127s", &count, &code, &driver, name) != 4) {
        snprintf(why, n, "cannot ask for a device: the child asking cudaGetDeviceCount %s",
                 pid < 0 ? "could not start" : "gave no answer (it crashed?)");
        return GPU_BROKEN;
    }
    if (code == cudaSuccess && count > 0)
        return GPU_PRESENT;
    if (code == cudaSuccess || code == cudaErrorNoDevice) {
        snprintf(why, n, "no CUDA device here (%s)", code == cudaSuccess ? "none found" : name);
        return GPU_NONE;
    }
    if (code == cudaErrorInsufficientDriver && !driver) {
        snprintf(why, n, "no CUDA driver here (%s, libcuda.so.1 not found)", name);
        return GPU_NONE;
    }
    snprintf(why, n,
             "cudaGetDeviceCount failed with %s although a driver is installed: a broken GPU "
             "setup (a driver that does not match the runtime?), not a machine without a GPU",
             name);
    return GPU_BROKEN;
}

/* Nonzero when a device is there; otherwise `why` says why not. */
static inline int have_gpu(char *why, size_t n)
{
    return gpu_state(why, n) == GPU_PRESENT;
}

/* Where there is no device, skips the current test saying why (fails it under
 * KBENCH_REQUIRE_GPU=1); where the device cannot be used, fails it. */
static inline void need_gpu(void)
{
    char why[512];
    const char *require = getenv(KBENCH_REQUIRE_GPU_ENV);
    switch (gpu_state(why, sizeof why)) {
    case GPU_PRESENT:
        return;
    case GPU_NONE:
        if (!require || strcmp(require, "1") != 0)
            cr_skip_test("%s; this test runs on the GPU machine", why);
        cr_assert_fail("%s, and " KBENCH_REQUIRE_GPU_ENV "=1 says there must be one", why);
        break;
    case GPU_BROKEN:
        cr_assert_fail("%s", why);
        break;
    }
}

/* The GPU the speed guards' references were measured on.  A speed guard is a regression guard
 * at a stated margin around a committed reference of that GPU (baselines/h200/): on another GPU
 * it says nothing about the code, so it is not applied there and the test says so; the test's
 * checks of correctness, and of timing against a separate program on the same GPU, still run. */
#define KBENCH_GUARD_GPU "NVIDIA H200"

/* Whether the speed guards apply to a run on `device_name`; prints why not when they do not. */
static inline int speed_guards_apply(const char *device_name)
{
    if (device_name && strcmp(device_name, KBENCH_GUARD_GPU) == 0)
        return 1;
    printf("[NOTE] speed guards not applied: their references were measured on an %s, this "
           "is %s\n",
           KBENCH_GUARD_GPU, device_name && device_name[0] ? device_name : "an unnamed GPU");
    return 0;
}

#endif /* KBENCH_TEST_GPU_H */
