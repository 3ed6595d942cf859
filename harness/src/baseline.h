/* Named baselines: the reference results of a profile measured on one GPU, kept under
 * ROOT/<gpu>/<NAME>/ (ROOT: --baselines DIR, else $KBENCH_BASELINES, else ./baselines) with
 * their manifest (manifest.h).  `kbench baseline save NAME RESULTS...` files a run there,
 * `kbench baseline list` shows what exists for which GPU, and `kbench compare NAME RESULTS`
 * finds NAME for the GPU the results ran on.
 *
 * <gpu> is the slug of the GPU's name as the results' env record gives it (kbi_gpu_slug):
 * lowercased, a leading "NVIDIA" dropped, every run of other characters than letters and
 * digits made one '-': "NVIDIA H200" -> h200, "NVIDIA H100 80GB HBM3" -> h100-80gb-hbm3,
 * "NVIDIA GeForce RTX 4090" -> geforce-rtx-4090. */
#ifndef KBENCH_BASELINE_H
#define KBENCH_BASELINE_H

#include <stddef.h>

#include "results.h"

#define KBI_BASELINES_DIR "baselines"
#define KBI_BASELINES_ENV "KBENCH_BASELINES"

/* The folder baselines live under: dir when given, else $KBENCH_BASELINES, else baselines. */
const char *kbi_baselines_root(const char *dir);

/* The slug of GPU name gpu into out (size n); "" when it holds no letter or digit. */
void kbi_gpu_slug(const char *gpu, char *out, size_t n);

/* Whether name can name a baseline: segments of letters, digits, '.', '_' and '-' joined by
 * '/' (labeling/2d), none of them "." or "..", at most 200 characters. */
int kbi_baseline_name_ok(const char *name);

/* Whether compare's BASELINE argument arg is a baseline's name rather than a path: there is no
 * file or folder arg, and it is a good name. */
int kbi_baseline_is_name(const char *arg);

/* The folder of baseline name for the GPU of results (every run of it on one GPU):
 * root/<slug>/name, into dir (size n), with the GPU's name into gpu (size n_gpu).  Returns
 * KBI_OK, or KBI_ERR_INPUT with err saying what was looked for and what there is instead. */
int kbi_baseline_find(const char *root, const char *name, const kbi_result_set *results, char *dir,
                      size_t n, char *gpu, size_t n_gpu, char *err);

/* `kbench baseline save|list` */
int kbi_cmd_baseline(int argc, char **argv);

#endif
