/* Plugin discovery and loading: dlopen every libkbench_*.so in the plugin
 * directories, check the ABI in one place, keep the good ones, and report
 * each refused one in a single line.  Each file is loaded in a child process
 * first, so one that crashes, hangs, exits or prints while loading is refused
 * without harm to kbench or to the other plugins. */
#ifndef KBENCH_LOADER_H
#define KBENCH_LOADER_H

#include <stddef.h>
#include <stdio.h>

#include "common.h"
#include "kbench/plugin.h"

/* Environment variable naming extra plugin directories (colon-separated). */
#define KBI_PLUGIN_PATH_ENV "KBENCH_PLUGIN_PATH"

/* Seconds a plugin file may take to load in its probe (its constructors and entry point; a
 * CUDA plugin takes well under one), and the variable that sets another. */
#define KBI_PLUGIN_LOAD_TIMEOUT 10.0
#define KBI_PLUGIN_LOAD_TIMEOUT_ENV "KBENCH_PLUGIN_LOAD_TIMEOUT"

/* What a descriptor may declare: far above any real plugin, low enough that a corrupt count
 * (a million variants) is refused before its table is read. */
#define KBI_DESC_MAX_VARIANTS 1024
#define KBI_DESC_MAX_PARAMS 256
#define KBI_DESC_MAX_METRICS 256
#define KBI_DESC_MAX_NAME 64   /* plugin, variant, parameter and metric names; units */
#define KBI_DESC_MAX_TEXT 4096 /* descriptions, help, defaults, choices */

typedef struct kbi_plugin {
    char *path;             /* the .so it came from */
    void *handle;           /* dlopen handle */
    const kb_plugin *desc;  /* the plugin's descriptor */
    uint32_t minor;         /* the plugin's ABI minor version */
} kbi_plugin;

typedef struct kbi_plugin_set {
    kbi_plugin *items;
    size_t n;
    char **refused;  /* one line per refused plugin: path and reason */
    size_t n_refused;
} kbi_plugin_set;

/* Nonzero when the descriptor is long enough to hold `field` (a field of a
 * later minor version): read such fields only behind this check. */
#define KBI_DESC_HAS(d, field)                                                                  \
    ((d)->struct_size >= offsetof(kb_plugin, field) + sizeof((d)->field))

/* The entry points and tables of ABI 1.1, NULL/0 for a 1.0 plugin. */
#define KBI_DESC_GET(d, field, fallback) (KBI_DESC_HAS(d, field) ? (d)->field : (fallback))

/* What a parameter is to a case id (ABI 1.3's knobs and implicit lists): a problem parameter
 * is always named; a knob or an implicit one only where the case sets it away from its
 * default.  Every parameter of a plugin before 1.3 is a problem parameter. */
typedef enum kbi_param_role {
    KBI_ROLE_PROBLEM = 0,
    KBI_ROLE_KNOB,
    KBI_ROLE_IMPLICIT
} kbi_param_role;
kbi_param_role kbi_param_role_of(const kbi_plugin *p, const char *name);

/* Points descriptor 1 at stderr for the rest of the process and keeps the real stdout for
 * kbi_stdout(), so nothing plugin code prints (a constructor, an entry point, a destructor, a
 * thread; workers inherit it) lands in kbench's stdout, which scripts read.  Call before any
 * plugin is loaded.  Returns KBI_OK, or KBI_ERR with err saying why. */
int kbi_stdout_guard(char *err);

/* Where kbench's own output goes: the real stdout kept by kbi_stdout_guard, else stdout. */
FILE *kbi_stdout(void);

/* Checks a descriptor against this harness's ABI.  Returns KBI_OK, or
 * KBI_ERR with err naming what was found and what was wanted. */
int kbi_check_abi(const kb_plugin *desc, char *err);

/* Loads one plugin file.  On failure closes the handle, leaves *out zeroed
 * and writes "PATH: reason" into err. */
int kbi_plugin_open(const char *path, kbi_plugin *out, char *err);

/* Scans each directory in dirs (NULL-terminated) for libkbench_*.so, in name
 * order, loading every plugin once by name (the first directory wins); a
 * missing directory is an error only when `required` is set for it.  Each file
 * is first loaded in a child (all at once, each within KBI_PLUGIN_LOAD_TIMEOUT)
 * and loaded here only when the child came back with a good descriptor and
 * printed nothing to stdout.  Refused plugins are listed in set->refused and
 * do not stop the others.  Returns KBI_OK, or KBI_ERR_INPUT when a required
 * directory cannot be read. */
int kbi_plugins_load(const char *const *dirs, const int *required, kbi_plugin_set *set, char *err);

/* The directory list, first match by plugin name wins: each folder of --plugins (as many
 * as given, each may be a colon-separated list; required), then each entry of
 * $KBENCH_PLUGIN_PATH (required), then the plugins/ folder next to the kbench binary
 * (optional), each folder once.  Writes at most max entries; returns the count. */
size_t kbi_plugin_dirs(const char *cli_dirs, char **dirs, int *required, size_t max);

/* Appends `more` to the colon-separated list in list (size bytes, "" to start): a repeated
 * --plugins.  Returns KBI_OK, or KBI_ERR when it does not fit (list unchanged). */
#define KBI_PLUGIN_DIRS_MAX 8192
int kbi_plugin_dirs_add(char *list, size_t size, const char *more);

const kbi_plugin *kbi_plugins_find(const kbi_plugin_set *set, const char *name);
int kbi_variant_index(const kb_plugin *desc, const char *name);
const kb_param *kbi_param_find(const kb_plugin *desc, const char *name, int *index);

void kbi_plugins_free(kbi_plugin_set *set);

#endif
