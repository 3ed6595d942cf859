/* Plugin loading: dlopen, the one ABI check, discovery in directories. */
#define _XOPEN_SOURCE 700
#include "loader.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common.h"
#include "profile.h"

/* Nonzero when s is non-empty and made of letters, digits, '_' and the characters of
 * `extra`. */
static int is_word(const char *s, const char *extra)
{
    if (!s || !*s)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_' || strchr(extra, *s)))
            return 0;
    return 1;
}

/* A plugin or variant name: the characters that survive in a case id
 * (plugin/variant/name=value,...) and in a file name. */
static int is_name(const char *s)
{
    return is_word(s, "-.");
}

/* A metric or parameter name. */
static int is_identifier(const char *s)
{
    return is_word(s, "");
}

/* The fields ABI 1.1 appended: all of them must be there (a 1.1 plugin
 * with a short descriptor was built against a broken header), and what
 * they declare must be well formed. */
static int check_abi_1_1(const kb_plugin *d, uint32_t minor, char *err)
{
    size_t want = offsetof(kb_plugin, size_param) + sizeof d->size_param;
    if (d->struct_size < want) {
        kbi_errf(err, "descriptor of %u bytes is shorter than ABI 1.%u's %zu bytes",
                 d->struct_size, minor, want);
        return KBI_ERR;
    }
    if (!d->prepare != !d->release) {
        kbi_errf(err, "descriptor has %s without %s: both or neither",
                 d->prepare ? "prepare" : "release", d->prepare ? "release" : "prepare");
        return KBI_ERR;
    }
    if (d->n_metrics < 0 || (d->n_metrics && !d->metrics)) {
        kbi_errf(err, "descriptor has a bad metrics table (%d entries)", d->n_metrics);
        return KBI_ERR;
    }
    for (int i = 0; i < d->n_metrics; i++) {
        const kb_metric_def *m = &d->metrics[i];
        if (!is_identifier(m->name) || (unsigned)m->better > KB_BETTER_LOWER ||
            (m->bounds & ~(KB_BOUND_LOW | KB_BOUND_HIGH | (minor >= 2 ? KB_METRIC_TIMING : 0))) ||
            ((m->bounds & KB_BOUND_LOW) && (m->bounds & KB_BOUND_HIGH) && m->low > m->high)) {
            kbi_errf(err, "metric %d (%s) needs a name of letters, digits and '_', a known "
                          "better direction and a bound with low <= high",
                     i, m->name ? m->name : "no name");
            return KBI_ERR;
        }
        for (int j = 0; j < i; j++)
            if (strcmp(d->metrics[j].name, m->name) == 0) {
                kbi_errf(err, "metric '%s' is declared twice", m->name);
                return KBI_ERR;
            }
    }
    if (d->size_param) {
        int found = 0;
        for (int i = 0; i < d->n_params; i++)
            found |= d->params[i].name && strcmp(d->params[i].name, d->size_param) == 0;
        if (!found) {
            kbi_errf(err, "size_param '%s' is not one of the plugin's parameters", d->size_param);
            return KBI_ERR;
        }
    }
    return KBI_OK;
}

int kbi_check_abi(const kb_plugin *d, char *err)
{
    uint32_t major, minor;
    if (!d) {
        kbi_errf(err, "entry point returned no descriptor");
        return KBI_ERR;
    }
    major = KB_ABI_MAJOR_OF(d->abi_version);
    minor = KB_ABI_MINOR_OF(d->abi_version);
    if (major != KB_ABI_MAJOR) {
        kbi_errf(err, "ABI version %u.%u, wanted %u.x (at most %u.%u): rebuild it against "
                      "this kbench's plugin.h",
                 major, minor, KB_ABI_MAJOR, KB_ABI_MAJOR, KB_ABI_MINOR);
        return KBI_ERR;
    }
    if (minor > KB_ABI_MINOR) {
        kbi_errf(err, "ABI version %u.%u is newer than this kbench's %u.%u: update kbench",
                 major, minor, KB_ABI_MAJOR, KB_ABI_MINOR);
        return KBI_ERR;
    }
    /* Every 1.0 field must be present; later minors only append. */
    if (d->struct_size < offsetof(kb_plugin, teardown) + sizeof d->teardown) {
        kbi_errf(err, "descriptor of %u bytes is shorter than ABI 1.0's %zu bytes", d->struct_size,
                 offsetof(kb_plugin, teardown) + sizeof d->teardown);
        return KBI_ERR;
    }
    if (!d->name || !*d->name || !d->init || !d->run || !d->verify || !d->teardown ||
        !d->counts) {
        kbi_errf(err, "descriptor lacks a name or one of init, counts, run, verify, teardown");
        return KBI_ERR;
    }
    if (!is_name(d->name)) {
        kbi_errf(err, "plugin name '%s' has characters other than letters, digits, '_', '-' and "
                      "'.'",
                 d->name);
        return KBI_ERR;
    }
    if (d->n_variants <= 0 || !d->variants || d->n_params < 0 || (d->n_params && !d->params)) {
        kbi_errf(err, "descriptor declares no variants (or a bad parameter table)");
        return KBI_ERR;
    }
    for (int i = 0; i < d->n_variants; i++) {
        if (!d->variants[i].name || !*d->variants[i].name ||
            (d->variants[i].target != KB_HOST && d->variants[i].target != KB_DEVICE)) {
            kbi_errf(err, "variant %d has no name or an unknown target", i);
            return KBI_ERR;
        }
        if (!is_name(d->variants[i].name)) {
            kbi_errf(err, "variant name '%s' has characters other than letters, digits, '_', '-' "
                          "and '.' (case ids could not be told apart)",
                     d->variants[i].name);
            return KBI_ERR;
        }
        for (int j = 0; j < i; j++)
            if (strcmp(d->variants[j].name, d->variants[i].name) == 0) {
                kbi_errf(err, "variant '%s' is declared twice (their case ids would collide)",
                         d->variants[i].name);
                return KBI_ERR;
            }
    }
    for (int i = 0; i < d->n_params; i++) {
        if (!d->params[i].name || !*d->params[i].name || d->params[i].type < KB_PARAM_INT ||
            d->params[i].type > (minor >= 1 ? KB_PARAM_INTS : KB_PARAM_DIMS) ||
            strcmp(d->params[i].name, "variants") == 0 ||
            strcmp(d->params[i].name, "baseline") == 0 || strcmp(d->params[i].name, "zip") == 0) {
            kbi_errf(err, "parameter %d has no name, a reserved name or an unknown type", i);
            return KBI_ERR;
        }
        if (!is_identifier(d->params[i].name)) {
            kbi_errf(err, "parameter name '%s' is not letters, digits and '_'", d->params[i].name);
            return KBI_ERR;
        }
        for (int j = 0; j < i; j++)
            if (strcmp(d->params[j].name, d->params[i].name) == 0) {
                kbi_errf(err, "parameter '%s' is declared twice", d->params[i].name);
                return KBI_ERR;
            }
    }
    return minor >= 1 ? check_abi_1_1(d, minor, err) : KBI_OK;
}

/* A plugin's file must be named after it (libkbench_NAME.so), so that the file a user sees is
 * the plugin a profile names; and every parameter default must parse, so a bad one is found
 * when the plugin loads rather than when a profile first leaves it out. */
static int check_file_and_defaults(const char *path, const kb_plugin *d, char *err)
{
    const char *base = strrchr(path, '/');
    size_t n;
    base = base ? base + 1 : path;
    n = strlen(base);
    if (strncmp(base, "libkbench_", 10) == 0 && n > 13 && strcmp(base + n - 3, ".so") == 0 &&
        (n - 13 != strlen(d->name) || strncmp(base + 10, d->name, n - 13) != 0)) {
        kbi_errf(err, "the file holds plugin '%s': rename it libkbench_%s.so", d->name, d->name);
        return KBI_ERR;
    }
    for (int i = 0; i < d->n_params; i++) {
        kbi_value v;
        char why[KBI_ERR_SIZE];
        const char *def = d->params[i].default_value ? d->params[i].default_value : "";
        if (kbi_value_parse(&d->params[i], def, &v, why) != KBI_OK) {
            kbi_errf(err, "parameter %s: default '%s' does not parse: %s", d->params[i].name, def,
                     why);
            return KBI_ERR;
        }
        kbi_value_free(&v);
    }
    return KBI_OK;
}

int kbi_plugin_open(const char *path, kbi_plugin *out, char *err)
{
    char why[KBI_ERR_SIZE];
    void *h;
    kb_entry_fn entry;
    const kb_plugin *d;
    memset(out, 0, sizeof *out);
#ifdef KBI_ASAN
    /* Kept mapped after dlclose, so LeakSanitizer's report at exit can
     * name the plugin's function and line that leaked. */
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
#else
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
#endif
    if (!h) {
        kbi_errf(err, "%s: cannot load: %s", path, dlerror());
        return KBI_ERR;
    }
    dlerror();
    *(void **)&entry = dlsym(h, KB_ENTRY_SYMBOL);
    if (!entry) {
        const char *e = dlerror();
        kbi_errf(err, "%s: no entry symbol %s: %s", path, KB_ENTRY_SYMBOL,
                 e ? e : "symbol is NULL");
        dlclose(h);
        return KBI_ERR;
    }
    d = entry();
    if (kbi_check_abi(d, why) != KBI_OK || check_file_and_defaults(path, d, why) != KBI_OK) {
        kbi_errf(err, "%s: refused: %s", path, why);
        dlclose(h);
        return KBI_ERR;
    }
    out->path = kbi_strdup(path);
    out->handle = h;
    out->desc = d;
    out->minor = KB_ABI_MINOR_OF(d->abi_version);
    return KBI_OK;
}

static int is_plugin_file(const char *name)
{
    size_t n = strlen(name);
    return strncmp(name, "libkbench_", 10) == 0 && n > 13 && strcmp(name + n - 3, ".so") == 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void add_refused(kbi_plugin_set *set, const char *line)
{
    set->refused = kbi_xrealloc(set->refused, (set->n_refused + 1) * sizeof *set->refused);
    set->refused[set->n_refused++] = kbi_strdup(line);
}

static void load_dir(const char *dir, kbi_plugin_set *set, DIR *d)
{
    struct dirent *ent;
    char **names = NULL;
    size_t n = 0;
    struct stat st;
    /* The sticky bit (/tmp) does not help: it stops others deleting files
     * here, not adding a libkbench_*.so of their own. */
    if (stat(dir, &st) == 0 && (st.st_mode & S_IWOTH)) {
        char line[KBI_ERR_SIZE];
        snprintf(line, sizeof line,
                 "%s: warning: plugin directory is world-writable; anyone can plant code here",
                 dir);
        add_refused(set, line);
    }
    while ((ent = readdir(d)) != NULL)
        if (is_plugin_file(ent->d_name)) {
            names = kbi_xrealloc(names, (n + 1) * sizeof *names);
            names[n++] = kbi_strdup(ent->d_name);
        }
    if (n > 1)
        qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        char path[4096], err[KBI_ERR_SIZE];
        kbi_plugin p;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (kbi_plugin_open(path, &p, err) != KBI_OK) {
            add_refused(set, err);
        } else if (kbi_plugins_find(set, p.desc->name)) {
            kbi_buf line = {0};
            kbi_buf_printf(&line, "%s: plugin '%s' already loaded from %s; this copy ignored",
                           path, p.desc->name, kbi_plugins_find(set, p.desc->name)->path);
            add_refused(set, line.data);
            kbi_buf_free(&line);
            dlclose(p.handle);
            free(p.path);
        } else {
            set->items = kbi_xrealloc(set->items, (set->n + 1) * sizeof *set->items);
            set->items[set->n++] = p;
        }
        free(names[i]);
    }
    free(names);
}

int kbi_plugins_load(const char *const *dirs, const int *required, kbi_plugin_set *set,
                     char *err)
{
    memset(set, 0, sizeof *set);
    for (size_t i = 0; dirs[i]; i++) {
        DIR *d = opendir(dirs[i]);
        if (!d) {
            if (required && required[i]) {
                kbi_errf(err, "%s: cannot read plugin directory: %s", dirs[i], strerror(errno));
                kbi_plugins_free(set);
                return KBI_ERR_INPUT;
            }
            continue;
        }
        load_dir(dirs[i], set, d);
        closedir(d);
    }
    return KBI_OK;
}

/* Adds each entry of a colon-separated list (empty entries skipped: an empty entry is not
 * the current folder) unless already listed. */
static void add_dirs(const char *list, int req, char **dirs, int *required, size_t *n, size_t max)
{
    char *copy = kbi_strdup(list), *save = NULL;
    for (char *tok = strtok_r(copy, ":", &save); tok && *n < max; tok = strtok_r(NULL, ":", &save)) {
        int seen = 0;
        for (size_t i = 0; i < *n; i++)
            seen |= strcmp(dirs[i], tok) == 0;
        if (!seen) {
            dirs[*n] = kbi_strdup(tok);
            required[(*n)++] = req;
        }
    }
    free(copy);
}

size_t kbi_plugin_dirs(const char *cli_dirs, char **dirs, int *required, size_t max)
{
    size_t n = 0;
    const char *env = getenv(KBI_PLUGIN_PATH_ENV);
    char exe[4096];
    if (cli_dirs)
        add_dirs(cli_dirs, 1, dirs, required, &n, max);
    if (env && *env)
        add_dirs(env, 1, dirs, required, &n, max);
    if (kbi_exe_dir(exe, sizeof exe - 16) == KBI_OK) {
        strcat(exe, "/plugins");
        add_dirs(exe, 0, dirs, required, &n, max);
    }
    return n;
}

int kbi_plugin_dirs_add(char *list, size_t size, const char *more)
{
    size_t len = strlen(list);
    int k = snprintf(list + len, size - len, "%s%s", len ? ":" : "", more);
    if (k < 0 || (size_t)k >= size - len) {
        list[len] = '\0';
        return KBI_ERR;
    }
    return KBI_OK;
}

const kbi_plugin *kbi_plugins_find(const kbi_plugin_set *set, const char *name)
{
    for (size_t i = 0; i < set->n; i++)
        if (strcmp(set->items[i].desc->name, name) == 0)
            return &set->items[i];
    return NULL;
}

int kbi_variant_index(const kb_plugin *desc, const char *name)
{
    for (int i = 0; i < desc->n_variants; i++)
        if (strcmp(desc->variants[i].name, name) == 0)
            return i;
    return -1;
}

const kb_param *kbi_param_find(const kb_plugin *desc, const char *name, int *index)
{
    for (int i = 0; i < desc->n_params; i++)
        if (strcmp(desc->params[i].name, name) == 0) {
            if (index)
                *index = i;
            return &desc->params[i];
        }
    return NULL;
}

void kbi_plugins_free(kbi_plugin_set *set)
{
    for (size_t i = 0; i < set->n; i++) {
        if (set->items[i].handle)
            dlclose(set->items[i].handle);
        free(set->items[i].path);
    }
    for (size_t i = 0; i < set->n_refused; i++)
        free(set->refused[i]);
    free(set->items);
    free(set->refused);
    memset(set, 0, sizeof *set);
}
