/* Result sets read from several inputs (resultset.c): what `report` and
 * `compare` both read, on top of results.c's reader of one file. */
#ifndef KBENCH_RESULTSET_H
#define KBENCH_RESULTSET_H

#include <stddef.h>
#include <stdint.h>

#include "results.h"

/* No case (an empty cell of a table, a row of no particular run). */
#define KBI_NO_CASE SIZE_MAX

/* Loads every input into set: a results file, or a directory searched
 * for files named results*.jsonl, in name order: its own, or when it has
 * none, those of its subfolders (three levels deep, same rule).  A file
 * named twice is read once; a case read twice (same run and id) is kept once,
 * with a warning.  Returns KBI_OK, or KBI_ERR_IO / KBI_ERR_INPUT with err
 * "FILE:LINE: what, expected what" (the set keeps what was read before). */
int kbi_results_load_inputs(kbi_result_set *set, const char *const *inputs, size_t n_inputs,
                            char *err);

/* Whether a file name is results*.jsonl (what a folder is searched for). */
int kbi_is_results_name(const char *name);

/* The index in set->envs of env record e, KBI_NO_CASE for NULL. */
size_t kbi_results_env_index(const kbi_result_set *set, const kbi_env_record *e);

/* The sweep of run env: the index of the first run of the same sweep
 * (shards of one sweep are one run for a report); KBI_NO_CASE for none. */
size_t kbi_results_sweep_of(const kbi_result_set *set, size_t env);

#endif
