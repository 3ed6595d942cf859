/* Named baselines: see baseline.h. */
#define _GNU_SOURCE
#include "baseline.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "manifest.h"
#include "options.h"
#include "resultset.h"

/* How deep under ROOT/<gpu>/ baselines are looked for (labeling/2d is two). */
#define LIST_DEPTH 4

const char *kbi_baselines_root(const char *dir)
{
    const char *env = getenv(KBI_BASELINES_ENV);
    return dir && dir[0] ? dir : env && env[0] ? env : KBI_BASELINES_DIR;
}

void kbi_gpu_slug(const char *gpu, char *out, size_t n)
{
    size_t len = 0;
    int dash = 0;
    while (*gpu && !isalnum((unsigned char)*gpu))
        gpu++;
    if (strncasecmp(gpu, "nvidia", 6) == 0 && !isalnum((unsigned char)gpu[6]))
        gpu += 6;
    for (; *gpu && len + 1 < n; gpu++) {
        unsigned char ch = (unsigned char)*gpu;
        if (!isalnum(ch)) {
            dash = len > 0;
            continue;
        }
        if (dash && len + 2 >= n)
            break;
        if (dash)
            out[len++] = '-';
        dash = 0;
        out[len++] = (char)tolower(ch);
    }
    if (n)
        out[len] = '\0';
}

/* Whether s (len characters) is one good segment of a name. */
static int segment_ok(const char *s, size_t len)
{
    if (len == 0 || (len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.'))
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr("._-", s[i]))
            return 0;
    return 1;
}

int kbi_baseline_name_ok(const char *name)
{
    const char *p = name;
    if (strlen(name) > 200)
        return 0;
    for (;;) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        if (!segment_ok(p, len))
            return 0;
        if (!slash)
            return 1;
        p = slash + 1;
    }
}

int kbi_baseline_is_name(const char *arg)
{
    struct stat st;
    return stat(arg, &st) != 0 && errno == ENOENT && kbi_baseline_name_ok(arg);
}

/* The GPU every run of set was measured on, into gpu (size n).  Returns KBI_OK, or
 * KBI_ERR_INPUT with err when they name none or several. */
static int gpu_of(const kbi_result_set *set, char *gpu, size_t n, char *err)
{
    gpu[0] = '\0';
    for (size_t i = 0; i < set->n_envs; i++) {
        const char *g = set->envs[i].device_name;
        if (!g[0]) {
            kbi_errf(err,
                     "%.300s: the run names no GPU (its env record has no device), so it "
                     "belongs to no GPU's baselines",
                     set->envs[i].source);
            return KBI_ERR_INPUT;
        }
        if (gpu[0] && strcmp(gpu, g) != 0) {
            kbi_errf(err,
                     "the results come from two GPUs (%.200s and %.200s); a baseline "
                     "belongs to one",
                     gpu, g);
            return KBI_ERR_INPUT;
        }
        snprintf(gpu, n, "%s", g);
    }
    if (!gpu[0]) {
        kbi_errf(err, "the results hold no env record, so no GPU");
        return KBI_ERR_INPUT;
    }
    return KBI_OK;
}

/* ---- what exists ---- */

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The subfolders of dir, by name (not hidden ones). */
static void subfolders(const char *dir, kbi_strlist *out)
{
    DIR *d = opendir(dir);
    struct dirent *ent;
    while (d && (ent = readdir(d)) != NULL) {
        kbi_buf path = {0};
        if (ent->d_name[0] == '.')
            continue;
        kbi_buf_printf(&path, "%s/%s", dir, ent->d_name);
        if (is_dir(path.data))
            kbi_strlist_add(out, ent->d_name);
        kbi_buf_free(&path);
    }
    if (d)
        closedir(d);
    if (out->n > 1)
        qsort(out->s, out->n, sizeof *out->s, cmp_str);
}

/* Appends to names every baseline under base/rel (rel "" at the top): a folder with a
 * manifest.json, named by its path below base. */
static void collect(const char *base, const char *rel, int depth, kbi_strlist *names)
{
    kbi_strlist subs = {0};
    kbi_buf dir = {0}, manifest = {0};
    kbi_buf_printf(&dir, "%s%s%s", base, rel[0] ? "/" : "", rel);
    kbi_buf_printf(&manifest, "%s/" KBI_MANIFEST_FILE, dir.data);
    if (rel[0] && access(manifest.data, F_OK) == 0)
        kbi_strlist_add(names, rel);
    if (depth > 0)
        subfolders(dir.data, &subs);
    for (size_t i = 0; i < subs.n; i++) {
        kbi_buf sub = {0};
        kbi_buf_printf(&sub, "%s%s%s", rel, rel[0] ? "/" : "", subs.s[i]);
        collect(base, sub.data, depth - 1, names);
        kbi_buf_free(&sub);
    }
    kbi_strlist_free(&subs);
    kbi_buf_free(&dir);
    kbi_buf_free(&manifest);
}

int kbi_baseline_find(const char *root, const char *name, const kbi_result_set *results, char *dir,
                      size_t n, char *gpu, size_t n_gpu, char *err)
{
    char slug[128], why[KBI_ERR_SIZE];
    kbi_strlist names = {0};
    kbi_buf base = {0}, known = {0};
    int rc = gpu_of(results, gpu, n_gpu, why);
    if (rc != KBI_OK) {
        kbi_errf(err, "no file or folder '%.200s', and as a baseline's name: %.700s", name, why);
        return rc;
    }
    kbi_gpu_slug(gpu, slug, sizeof slug);
    snprintf(dir, n, "%s/%s/%s", root, slug, name);
    if (is_dir(dir))
        return KBI_OK;
    kbi_buf_printf(&base, "%s/%s", root, slug);
    collect(base.data, "", LIST_DEPTH, &names);
    for (size_t i = 0; i < names.n; i++)
        kbi_buf_printf(&known, "%s%s", i ? ", " : "", names.s[i]);
    kbi_errf(err,
             "no file or folder '%.200s', and no baseline of that name for the results' GPU "
             "(%.100s): %.300s does not exist; %.60s has %.300s (kbench baseline list)",
             name, gpu, dir, base.data, names.n ? known.data : "none");
    kbi_strlist_free(&names);
    kbi_buf_free(&base);
    kbi_buf_free(&known);
    return KBI_ERR_INPUT;
}

/* The distinct values of key over a manifest's runs (at most width characters of each), as
 * the first one and how many more ("a.ini +5"), into b: the manifest keeps them all. */
static void run_values(const json_t *runs, const char *key, int width, kbi_buf *b)
{
    kbi_strlist seen = {0};
    size_t i;
    json_t *run;
    json_array_foreach(runs, i, run)
    {
        const char *v = json_string_value(json_object_get(run, key));
        char text[256];
        snprintf(text, sizeof text, "%.*s", width, v ? v : "-");
        if (!kbi_strlist_has(&seen, text))
            kbi_strlist_add(&seen, text);
    }
    if (seen.n)
        kbi_buf_printf(b, "%s", seen.s[0]);
    if (seen.n > 1)
        kbi_buf_printf(b, " +%zu", seen.n - 1);
    kbi_strlist_free(&seen);
}

/* `baseline list`'s table: one row of kListColumns cells per baseline, printed with each
 * column as wide as its widest cell, so long GPU slugs and profile lists stay aligned. */
enum { kListColumns = 7 };
static const char *const list_heading[kListColumns] = {"gpu",  "name",  "profile", "revision",
                                                       "date", "cases", "runs"};

/* The row of baseline name of gpu slug, read from its manifest, appended to cells. */
static void list_row(kbi_strlist *cells, const char *slug, const char *name, const json_t *m)
{
    const json_t *runs = json_object_get(m, "runs");
    kbi_buf profiles = {0}, revisions = {0};
    const char *date = "-";
    long long cases = 0;
    char num[32];
    size_t i;
    json_t *run;
    run_values(runs, "profile", 200, &profiles);
    run_values(runs, "git_revision", 12, &revisions);
    json_array_foreach(runs, i, run)
    {
        const char *d = json_string_value(json_object_get(run, "date"));
        if (d && (strcmp(date, "-") == 0 || strcmp(d, date) > 0))
            date = d; /* ISO 8601 times sort as text: the latest run's */
        cases += (long long)json_integer_value(json_object_get(run, "cases"));
    }
    kbi_strlist_add(cells, slug);
    kbi_strlist_add(cells, name);
    kbi_strlist_add(cells, profiles.data ? profiles.data : "-");
    kbi_strlist_add(cells, revisions.data ? revisions.data : "-");
    kbi_strlist_add(cells, date);
    snprintf(num, sizeof num, "%lld", cases);
    kbi_strlist_add(cells, num);
    snprintf(num, sizeof num, "%zu", json_array_size(runs));
    kbi_strlist_add(cells, num);
    kbi_buf_free(&profiles);
    kbi_buf_free(&revisions);
}

/* The heading and the rows (cells, kListColumns a row): text left-aligned, counts right. */
static void list_print(FILE *out, const kbi_strlist *cells)
{
    int width[kListColumns];
    for (int c = 0; c < kListColumns; c++)
        width[c] = (int)strlen(list_heading[c]);
    for (size_t i = 0; i < cells->n; i++) {
        int len = (int)strlen(cells->s[i]);
        if (len > width[i % kListColumns])
            width[i % kListColumns] = len;
    }
    for (size_t i = 0; i < cells->n + kListColumns; i++) {
        const int c = (int)(i % kListColumns);
        const char *text = i < kListColumns ? list_heading[c] : cells->s[i - kListColumns];
        fprintf(out, c >= 5 ? "%*s" : "%-*s", width[c], text);
        fputs(c == kListColumns - 1 ? "\n" : " ", out);
    }
}

static int cmd_list(const char *root)
{
    kbi_strlist gpus = {0}, cells = {0};
    subfolders(root, &gpus);
    for (size_t g = 0; g < gpus.n; g++) {
        kbi_strlist names = {0};
        kbi_buf base = {0};
        kbi_buf_printf(&base, "%s/%s", root, gpus.s[g]);
        collect(base.data, "", LIST_DEPTH, &names);
        for (size_t i = 0; i < names.n; i++) {
            kbi_buf dir = {0};
            char why[KBI_ERR_SIZE];
            json_t *m;
            kbi_buf_printf(&dir, "%s/%s", base.data, names.s[i]);
            m = kbi_manifest_read(dir.data, why, sizeof why);
            if (!m)
                fprintf(stderr, "kbench baseline list: warning: %s\n", why);
            else
                list_row(&cells, gpus.s[g], names.s[i], m);
            json_decref(m);
            kbi_buf_free(&dir);
        }
        kbi_strlist_free(&names);
        kbi_buf_free(&base);
    }
    kbi_strlist_free(&gpus);
    if (cells.n == 0)
        fprintf(stderr,
                "kbench baseline list: no baselines (folders with a " KBI_MANIFEST_FILE
                ") under %s/<gpu>/\n",
                root);
    else
        list_print(stdout, &cells);
    kbi_strlist_free(&cells);
    return fflush(stdout) == 0 ? KBI_EXIT_OK : KBI_EXIT_USAGE;
}

/* ---- saving one ---- */

/* The results files set was read from ("FILE:LINE" sources), each once, in read order. */
static void source_files(const kbi_result_set *set, kbi_strlist *files)
{
    for (size_t i = 0; i < set->n_envs + set->n_cases; i++) {
        const char *src =
            i < set->n_envs ? set->envs[i].source : set->cases[i - set->n_envs].source;
        const char *colon = strrchr(src, ':');
        size_t len = colon ? (size_t)(colon - src) : strlen(src);
        int seen = 0;
        char *file = strndup(src, len);
        for (size_t k = 0; k < files->n && !seen; k++)
            seen = strcmp(files->s[k], file) == 0;
        if (!seen && file[0])
            kbi_strlist_add(files, file);
        free(file);
    }
}

/* Whether path lies in folder dir (both exist). */
static int inside(const char *path, const char *dir)
{
    char p[PATH_MAX], d[PATH_MAX];
    size_t n;
    if (!realpath(path, p) || !realpath(dir, d))
        return 0;
    n = strlen(d);
    return strncmp(p, d, n) == 0 && p[n] == '/';
}

/* Copies file from to to, byte for byte, through to.tmp.  Returns KBI_OK or KBI_ERR_IO. */
static int copy_file(const char *from, const char *to, char *err)
{
    kbi_buf tmp = {0};
    FILE *in = fopen(from, "rb"), *out = NULL;
    char buf[1 << 16];
    size_t got;
    int rc = KBI_OK;
    kbi_buf_printf(&tmp, "%s.tmp", to);
    if (!in) {
        kbi_errf(err, "%s: cannot read: %s", from, strerror(errno));
        kbi_buf_free(&tmp);
        return KBI_ERR_IO;
    }
    out = fopen(tmp.data, "wb");
    while (out && rc == KBI_OK && (got = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, got, out) != got)
            rc = KBI_ERR_IO;
    if (!out || ferror(in) || fclose(out) != 0 || rename(tmp.data, to) != 0)
        rc = KBI_ERR_IO;
    if (rc != KBI_OK) {
        kbi_errf(err, "%s: cannot write: %s", to, strerror(errno));
        unlink(tmp.data);
    }
    fclose(in);
    kbi_buf_free(&tmp);
    return rc;
}

/* What target holds that a saved baseline is made of (its manifest and results*.jsonl), into
 * held; they are removed when `remove` is set.  Returns KBI_OK, or KBI_ERR_IO when one cannot
 * be removed. */
static int held_files(const char *target, int remove, kbi_strlist *held, char *err)
{
    DIR *d = opendir(target);
    struct dirent *ent;
    int rc = KBI_OK;
    while (d && rc == KBI_OK && (ent = readdir(d)) != NULL) {
        kbi_buf path = {0};
        if (strcmp(ent->d_name, KBI_MANIFEST_FILE) != 0 && !kbi_is_results_name(ent->d_name))
            continue;
        kbi_buf_printf(&path, "%s/%s", target, ent->d_name);
        kbi_strlist_add(held, ent->d_name);
        if (remove && unlink(path.data) != 0) {
            kbi_errf(err, "%s: cannot remove: %s", path.data, strerror(errno));
            rc = KBI_ERR_IO;
        }
        kbi_buf_free(&path);
    }
    if (d)
        closedir(d);
    return rc;
}

typedef struct save_args {
    const char *name, *gpu_slug, *root;
    int force;
} save_args;

/* Checks that target may take the baseline (nothing there, or --force: what was there is
 * removed) and that no input lies in it.  Returns KBI_OK or an error with err set. */
static int make_room(const save_args *a, const char *target, const kbi_strlist *files, char *err)
{
    kbi_strlist held = {0};
    int rc;
    for (size_t i = 0; i < files->n; i++)
        if (inside(files->s[i], target)) {
            kbi_errf(err,
                     "%.300s lies in %.300s already: the baseline is there (kbench "
                     "manifest %.300s rewrites its manifest)",
                     files->s[i], target, target);
            return KBI_ERR_INPUT;
        }
    rc = held_files(target, 0, &held, err);
    if (held.n && !a->force) {
        kbi_errf(err, "%.300s holds a baseline already (%.100s%s); --force replaces it", target,
                 held.s[0], held.n > 1 ? ", ..." : "");
        rc = KBI_ERR_INPUT;
    } else if (held.n) {
        kbi_strlist_free(&held);
        rc = held_files(target, 1, &held, err);
    }
    kbi_strlist_free(&held);
    return rc;
}

/* Files set's results as baseline a.name; its folder into target (size n). */
static int save(const save_args *a, const kbi_result_set *set, char *target, size_t n, char *err)
{
    char gpu[256], slug[128];
    kbi_strlist files = {0};
    int rc = KBI_OK;
    if (a->gpu_slug) {
        snprintf(slug, sizeof slug, "%s", a->gpu_slug);
    } else {
        if ((rc = gpu_of(set, gpu, sizeof gpu, err)) != KBI_OK)
            return rc;
        kbi_gpu_slug(gpu, slug, sizeof slug);
    }
    snprintf(target, n, "%s/%s/%s", a->root, slug, a->name);
    source_files(set, &files);
    if ((rc = make_room(a, target, &files, err)) != KBI_OK ||
        (rc = kbi_mkdirs(target, err)) != KBI_OK)
        goto done;
    for (size_t i = 0; i < files.n && rc == KBI_OK; i++) {
        kbi_buf to = {0};
        if (files.n == 1)
            kbi_buf_printf(&to, "%s/results.jsonl", target);
        else
            kbi_buf_printf(&to, "%s/results-%03zu.jsonl", target, i + 1);
        rc = copy_file(files.s[i], to.data, err);
        kbi_buf_free(&to);
    }
    if (rc == KBI_OK)
        rc = kbi_manifest_write(target, (const char *const *)&target, 1, err);
done:
    kbi_strlist_free(&files);
    return rc;
}

/* ---- the verb ---- */

static const char baseline_help[] =
    "Named baselines: the reference results of a profile on one GPU, in DIR/<gpu>/<NAME>/\n"
    "with their manifest.json.  DIR is --baselines, else $" KBI_BASELINES_ENV ", else\n"
    "./" KBI_BASELINES_DIR " (the repository's references: baselines/h200/sgemm).\n"
    "\n"
    "  save NAME RESULTS...  copy the results files read from RESULTS (files or folders,\n"
    "                     as report and compare read them) unchanged into DIR/<gpu>/NAME/\n"
    "                     (results.jsonl; results-001.jsonl, ... for several) and write its\n"
    "                     manifest; prints the folder.  <gpu> is the slug of the GPU the\n"
    "                     runs name: lowercased, a leading NVIDIA dropped, each run of other\n"
    "                     characters than letters and digits one '-' (NVIDIA H200: h200;\n"
    "                     NVIDIA H100 80GB HBM3: h100-80gb-hbm3).  NAME: letters, digits,\n"
    "                     '.', '_', '-', segments joined by '/' (labeling/2d).\n"
    "  list               every baseline under DIR (a folder with a manifest.json), by GPU:\n"
    "                     name, profile, revision, date of the latest run, cases, runs\n";

static const char baseline_notes[] =
    "`kbench compare NAME RESULTS` finds NAME for the GPU the results ran on.\n"
    "Exit status: 0 done; 2 bad usage, unreadable results, results of no GPU or two GPUs\n"
    "without --gpu, a baseline there already without --force, or a file not written.\n";

int kbi_cmd_baseline(int argc, char **argv)
{
    save_args a = {0};
    const char *dir = NULL;
    const kbi_option options[] = {
        {.name = "force",
         .short_name = 'f',
         .kind = KBI_OPT_FLAG,
         .target = &a.force,
         .help = "save: over a baseline of that name (its results*.jsonl and\n"
                 "manifest.json are removed first; other files stay)"},
        {.name = "gpu",
         .short_name = 'g',
         .kind = KBI_OPT_STRING,
         .target = &a.gpu_slug,
         .arg = "SLUG",
         .help = "save: file the baseline under SLUG instead of the runs' GPU\n"
                 "(for runs that name no GPU, or two)"},
        {.name = "baselines",
         .short_name = 'b',
         .kind = KBI_OPT_STRING,
         .target = &dir,
         .arg = "DIR",
         .help = "where baselines live"},
    };
    const kbi_verb_spec spec = {.verb = "baseline",
                                .synopsis = "save NAME RESULTS... | list",
                                .help = baseline_help,
                                KBI_SPEC_OPTIONS(options),
                                .min_operands = 1,
                                .max_operands = SIZE_MAX,
                                .operands = "save NAME RESULTS... or list",
                                .summary = "named baselines: baselines/<gpu>/NAME/",
                                .notes = baseline_notes};
    kbi_result_set set = {0};
    char err[KBI_ERR_SIZE] = "", target[PATH_MAX];
    int first, parsed, code = KBI_EXIT_USAGE, n_ops;
    const char *action;
    if ((parsed = kbi_options_parse(&spec, argc, argv, &first)) != KBI_OPTS_GO_ON)
        return parsed;
    action = argv[first];
    n_ops = argc - first - 1;
    a.root = kbi_baselines_root(dir);
    if (strcmp(action, "list") == 0 && n_ops == 0)
        return cmd_list(a.root);
    if (strcmp(action, "save") != 0 || n_ops < 2) {
        fprintf(stderr, "kbench baseline: expected save NAME RESULTS... or list, not '%s'%s\n",
                action, strcmp(action, "save") == 0 ? " without NAME and RESULTS" : "");
        return KBI_EXIT_USAGE;
    }
    a.name = argv[first + 1];
    if (!kbi_baseline_name_ok(a.name)) {
        fprintf(stderr,
                "kbench baseline: bad NAME '%s': expected segments of letters, digits, "
                "'.', '_' and '-' joined by '/'\n",
                a.name);
        return KBI_EXIT_USAGE;
    }
    if (a.gpu_slug && (strchr(a.gpu_slug, '/') || !kbi_baseline_name_ok(a.gpu_slug))) {
        fprintf(stderr, "kbench baseline: --gpu '%s': expected letters, digits, '.', '_' and '-'\n",
                a.gpu_slug);
        return KBI_EXIT_USAGE;
    }
    if (kbi_results_load_inputs(&set, (const char *const *)&argv[first + 2], (size_t)n_ops - 1,
                                err) != KBI_OK)
        goto fail;
    for (size_t i = 0; i < set.n_warnings; i++)
        fprintf(stderr, "kbench baseline: warning: %s\n", set.warnings[i]);
    if (set.n_cases == 0) {
        kbi_errf(err, "%s: no case records, expected the results of a run", argv[first + 2]);
        goto fail;
    }
    if (save(&a, &set, target, sizeof target, err) != KBI_OK)
        goto fail;
    fprintf(stderr, "kbench baseline: saved %zu case%s of %zu run%s as %s\n", set.n_cases,
            set.n_cases == 1 ? "" : "s", set.n_envs, set.n_envs == 1 ? "" : "s", target);
    printf("%s\n", target);
    code = KBI_EXIT_OK;
    goto done;
fail:
    fprintf(stderr, "kbench baseline: %s\n", err);
done:
    kbi_results_free(&set);
    return code;
}
