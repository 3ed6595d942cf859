/* Running cases: what happens inside the child process that executes a
 * plugin's cases (init, verify before timing, warm-up, samples, verify
 * again, teardown), and the record it sends back. */
#ifndef KBENCH_WORKER_H
#define KBENCH_WORKER_H

#include <jansson.h>

#include "profile.h"
#include "results.h"

/* What every case of a run shares; built by the parent before forking. */
typedef struct kbi_run_ctx {
    const kbi_profile *profile;
    kbi_case *const *cases; /* the selected cases, in run order */
    size_t n_cases;
    double bandwidth_gbs; /* ceilings for the fractions in rates; 0 unknown */
    double peak_gflops;
    int device_ok;            /* the env probe found a usable device */
    const char *device_error; /* why not, when !device_ok */
    int profile_run;          /* ncu mode: cudaProfilerStart/Stop around one run */
} kbi_run_ctx;

/* Fills out (which the caller frees with kbi_case_result_free) with the
 * identifying fields of a case's record (id, plugin, variant, params with
 * dims as arrays, baseline, size_param...), no samples, and status error
 * "internal: no status" until a status is set: for records the parent
 * writes itself (skipped, crashed, timeout) and the start of every other. */
void kbi_case_record_init(const kbi_run_ctx *ctx, const kbi_case *c, kbi_case_result *out);

/* Sets rec's status and message (copied). */
void kbi_case_record_set_status(kbi_case_result *rec, kbi_status st, const char *message);

/* Runs one case in this process and fills rec (kbi_case_record_init first)
 * with its full record, status included.  Initialises CUDA for device
 * variants. */
void kbi_case_execute(const kbi_run_ctx *ctx, const kbi_case *c, kbi_case_result *rec);

/* Releases the point the worker prepared last (ABI 1.1 prepare/release);
 * called when the worker ends, and by an in-process run at its end. */
void kbi_worker_release_point(void);

/* The child's loop: reads "case K\n" (K indexes ctx->cases) from cmd_fd,
 * answers with one JSON line per case on res_fd, stops at EOF or "quit".
 * Before and after a point's prepare it sends the lines "prepare" and
 * "prepared", so the parent does not count prepare against the timeout.
 * Returns the process exit code. */
int kbi_worker_main(const kbi_run_ctx *ctx, int cmd_fd, int res_fd);

/* The host services handed to plugins (param getters, metric, log). */
extern const kb_host kbi_host_services;

#endif
