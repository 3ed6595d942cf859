/* A results folder's manifest (DIR/manifest.json): what the folder holds, run by run, as
 * a reference baseline needs it said (profile, filter, shard, revision, command, date, GPU,
 * driver, CUDA runtime, kbench version, case count, complete), taken from each run's env and
 * end records.  `kbench run` writes one into its --out folder; `kbench manifest DIR` writes
 * one for a folder of several runs (a profile run in parts).  `compare` reads the baseline's
 * and says which reference it used, and warns when the profile a run was measured from has
 * gained or lost cases since (the reference is stale).
 *
 *   {"schema": "kbench-manifest", "version": 1, "runs": [{"file": "results.jsonl",
 *    "run_id": ..., "profile": "profiles/sgemm.ini", "filter": null, "shard": "1/1",
 *    "git_revision": ..., "command": "kbench run ...", "date": ..., "gpu": "NVIDIA H200",
 *    "driver": "580.159.04", "cuda_runtime": 13000, "kbench_version": "0.1.0",
 *    "cases": 72, "complete": true}, ...]} */
#ifndef KBENCH_MANIFEST_H
#define KBENCH_MANIFEST_H

#include <jansson.h>

#include "common.h"
#include "results.h"

#define KBI_MANIFEST_FILE "manifest.json"

/* The manifest of dir from the runs of set (read from files under dir).  New reference. */
json_t *kbi_manifest_of(const kbi_result_set *set, const char *dir);

/* Writes dir/manifest.json for the results read from inputs (files or folders, as report
 * and compare read them: dir itself for a folder of runs, the run's own file for
 * `kbench run`).  Returns KBI_OK, or an error code with err set. */
int kbi_manifest_write(const char *dir, const char *const *inputs, size_t n_inputs, char *err);

/* The manifest of the results folder dir, or NULL when it has none or it does not read as
 * one (a warning in *why then; NULL when simply absent).  New reference. */
json_t *kbi_manifest_read(const char *dir, char *why, size_t n);

/* What a baseline's manifest says about the reference ref (read from the same folder): one
 * line naming each run ("profiles/sgemm.ini at 262878e6e24e, 2026-12-02T14:01:30Z, NVIDIA
 * H200, driver 580.159.04") into about, and a warning into warnings for each run whose
 * profile (found from the current folder) now expands to cases the reference lacks or no
 * longer has cases it holds; plugin_dirs as for kbi_plugin_dirs (NULL: the defaults). */
void kbi_manifest_check(const json_t *manifest, const kbi_result_set *ref, const char *plugin_dirs,
                        kbi_strlist *about, kbi_strlist *warnings);

/* `kbench manifest DIR` */
int kbi_cmd_manifest(int argc, char **argv);

#endif
