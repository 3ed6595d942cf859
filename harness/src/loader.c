/* Plugin loading: dlopen, the one ABI check, discovery in directories, the probe that loads
 * each file in a child first (so a file that crashes, hangs or exits while loading is refused
 * instead of taking kbench down), and the guard that keeps plugin output off kbench's stdout. */
#define _GNU_SOURCE
#include "loader.h"

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "knob_variants.h"
#include "profile.h"
#include "roofs.h"

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

/* Nonzero when s is NULL or longer than max characters; reads at most max + 1 of them, so
 * an unterminated string is found without running off its end. */
static int too_long(const char *s, size_t max)
{
    return s && strnlen(s, max + 1) > max;
}

/* How many items of list ("name|name|...", NULL: none) are `name`; with name NULL, how many
 * items it has. */
static int list_count(const char *list, const char *name)
{
    int n = 0;
    size_t len = name ? strlen(name) : 0;
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, '|');
        size_t item = end ? (size_t)(end - p) : strlen(p);
        n += !name || (item == len && strncmp(p, name, len) == 0);
        p = end ? end + 1 : p + item;
    }
    return n;
}

/* ABI 1.3's lists of what case ids leave out: each item a parameter of the plugin, no
 * parameter named twice or in both lists. */
static int check_abi_1_3(const kb_plugin *d, char *err)
{
    static const char *const what[] = {"knobs", "implicit"};
    size_t want = offsetof(kb_plugin, implicit) + sizeof d->implicit;
    const char *lists[2];
    int listed = 0;
    if (d->struct_size < want) {
        kbi_errf(err, "descriptor of %u bytes is shorter than ABI 1.3's %zu bytes", d->struct_size,
                 want);
        return KBI_ERR;
    }
    lists[0] = d->knobs;
    lists[1] = d->implicit;
    for (int l = 0; l < 2; l++)
        if (too_long(lists[l], KBI_DESC_MAX_TEXT)) {
            kbi_errf(err, "%s is longer than %d characters", what[l], KBI_DESC_MAX_TEXT);
            return KBI_ERR;
        }
    for (int i = 0; i < d->n_params; i++) {
        int n =
            list_count(d->knobs, d->params[i].name) + list_count(d->implicit, d->params[i].name);
        if (n > 1) {
            kbi_errf(err, "parameter '%s' is listed %d times in knobs and implicit: once at most",
                     d->params[i].name, n);
            return KBI_ERR;
        }
        listed += n;
    }
    if (listed != list_count(d->knobs, NULL) + list_count(d->implicit, NULL)) {
        kbi_errf(err,
                 "knobs '%s' and implicit '%s' name something that is not a parameter "
                 "(expected \"name|name\" of the plugin's parameters)",
                 d->knobs ? d->knobs : "", d->implicit ? d->implicit : "");
        return KBI_ERR;
    }
    return KBI_OK;
}

/* ABI 1.4's descriptor is whole: its fields are read only once the size says they are there.
 * knob_variants must name the plugin's own knobs and variants (knob_variants.c); what the
 * others hold is checked by the harness module that reads them. */
static int check_abi_1_4(const kb_plugin *d, char *err)
{
    static const char *const what[] = {"knob_variants", "roofs", "headline"};
    size_t want = offsetof(kb_plugin, headline) + sizeof d->headline;
    const char *texts[3];
    if (d->struct_size < want) {
        kbi_errf(err, "descriptor of %u bytes is shorter than ABI 1.4's %zu bytes", d->struct_size,
                 want);
        return KBI_ERR;
    }
    texts[0] = d->knob_variants;
    texts[1] = d->roofs;
    texts[2] = d->headline;
    for (int l = 0; l < 3; l++)
        if (too_long(texts[l], KBI_DESC_MAX_TEXT)) {
            kbi_errf(err, "%s is longer than %d characters", what[l], KBI_DESC_MAX_TEXT);
            return KBI_ERR;
        }
    return kbi_knob_variants_check(d, err);
}

kbi_param_role kbi_param_role_of(const kbi_plugin *p, const char *name)
{
    const kb_plugin *d = p->desc;
    if (p->minor < 3 || !KBI_DESC_HAS(d, implicit))
        return KBI_ROLE_PROBLEM;
    if (list_count(d->knobs, name))
        return KBI_ROLE_KNOB;
    return list_count(d->implicit, name) ? KBI_ROLE_IMPLICIT : KBI_ROLE_PROBLEM;
}

/* The counts and string lengths of a descriptor against KBI_DESC_MAX_*: a count of a million
 * is a corrupt descriptor, not a plugin, and is refused before any table is walked. */
static int check_limits(const kb_plugin *d, uint32_t minor, char *err)
{
    int n_metrics = minor >= 1 && KBI_DESC_HAS(d, n_metrics) ? d->n_metrics : 0;
    if (d->n_variants > KBI_DESC_MAX_VARIANTS || d->n_params > KBI_DESC_MAX_PARAMS ||
        n_metrics > KBI_DESC_MAX_METRICS) {
        kbi_errf(err,
                 "descriptor declares %d variants, %d parameters and %d metrics; at most %d, "
                 "%d and %d (a corrupt descriptor?)",
                 d->n_variants, d->n_params, n_metrics, KBI_DESC_MAX_VARIANTS, KBI_DESC_MAX_PARAMS,
                 KBI_DESC_MAX_METRICS);
        return KBI_ERR;
    }
    if (too_long(d->name, KBI_DESC_MAX_NAME) || too_long(d->description, KBI_DESC_MAX_TEXT)) {
        kbi_errf(err, "plugin name or description is longer than %d or %d characters",
                 KBI_DESC_MAX_NAME, KBI_DESC_MAX_TEXT);
        return KBI_ERR;
    }
    for (int i = 0; d->variants && i < d->n_variants; i++)
        if (too_long(d->variants[i].name, KBI_DESC_MAX_NAME) ||
            too_long(d->variants[i].description, KBI_DESC_MAX_TEXT)) {
            kbi_errf(err, "variant %d: name or description longer than %d or %d characters", i,
                     KBI_DESC_MAX_NAME, KBI_DESC_MAX_TEXT);
            return KBI_ERR;
        }
    for (int i = 0; d->params && i < d->n_params; i++) {
        const kb_param *p = &d->params[i];
        if (too_long(p->name, KBI_DESC_MAX_NAME) || too_long(p->default_value, KBI_DESC_MAX_TEXT) ||
            too_long(p->help, KBI_DESC_MAX_TEXT) || too_long(p->choices, KBI_DESC_MAX_TEXT)) {
            kbi_errf(err,
                     "parameter %d: name longer than %d characters, or a default, help or "
                     "choices longer than %d",
                     i, KBI_DESC_MAX_NAME, KBI_DESC_MAX_TEXT);
            return KBI_ERR;
        }
    }
    for (int i = 0; i < n_metrics && d->metrics; i++) {
        const kb_metric_def *m = &d->metrics[i];
        if (too_long(m->name, KBI_DESC_MAX_NAME) || too_long(m->unit, KBI_DESC_MAX_NAME) ||
            too_long(m->help, KBI_DESC_MAX_TEXT)) {
            kbi_errf(err,
                     "metric %d: name or unit longer than %d characters, or help longer "
                     "than %d",
                     i, KBI_DESC_MAX_NAME, KBI_DESC_MAX_TEXT);
            return KBI_ERR;
        }
    }
    if (minor >= 1 && too_long(KBI_DESC_GET(d, size_param, NULL), KBI_DESC_MAX_NAME)) {
        kbi_errf(err, "size_param is longer than %d characters", KBI_DESC_MAX_NAME);
        return KBI_ERR;
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
    if (check_limits(d, minor, err) != KBI_OK)
        return KBI_ERR;
    if (!is_name(d->name)) {
        kbi_errf(err, "plugin name '%s' has characters other than letters, digits, '_', '-' and "
                      "'.'",
                 d->name);
        return KBI_ERR;
    }
    if (strcmp(d->name, "run") == 0) {
        /* [run] is the profile's own section: a plugin of that name could not be configured. */
        kbi_errf(err, "plugin name 'run' is the profile's [run] section: rename the plugin");
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
    if (minor >= 1 && check_abi_1_1(d, minor, err) != KBI_OK)
        return KBI_ERR;
    if (minor >= 3 && check_abi_1_3(d, err) != KBI_OK)
        return KBI_ERR;
    if (minor >= 4 && check_abi_1_4(d, err) != KBI_OK)
        return KBI_ERR;
    return minor >= 4 && kbi_roofs_check(d, err) != 0 ? KBI_ERR : KBI_OK;
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

/* ---- kbench's stdout, kept from plugins ---- */

/* The descriptor kbench's own output goes to once kbi_stdout_guard ran; -1 before. */
static int real_stdout_fd = -1;
static FILE *real_stdout;

int kbi_stdout_guard(char *err)
{
    int fd;
    if (real_stdout)
        return KBI_OK;
    fflush(stdout);
    fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    if (fd < 0 || !(real_stdout = fdopen(fd, "w"))) {
        kbi_errf(err, "cannot keep stdout apart from plugin output: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return KBI_ERR;
    }
    real_stdout_fd = fd;
    if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
        kbi_errf(err, "cannot point descriptor 1 at stderr: %s", strerror(errno));
        return KBI_ERR;
    }
    /* Line by line, so a worker that dies mid-case has still logged what its plugin said. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    return KBI_OK;
}

FILE *kbi_stdout(void)
{
    return real_stdout ? real_stdout : stdout;
}

/* ---- opening one file ---- */

/* The name of ELF machine m into buf: the common ones by name, others by number. */
static void machine_name(unsigned m, char *buf, size_t n)
{
    static const struct {
        unsigned machine;
        const char *name;
    } known[] = {{EM_386, "i386"},        {EM_X86_64, "x86-64"}, {EM_ARM, "arm"},
                 {EM_AARCH64, "aarch64"}, {EM_PPC64, "ppc64"},   {EM_RISCV, "riscv"}};
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        if (known[i].machine == m) {
            snprintf(buf, n, "%s", known[i].name);
            return;
        }
    snprintf(buf, n, "ELF machine %u", m);
}

/* Reads the ELF identification and machine of path; returns 0, or -1 when it is not an ELF
 * file. */
static int elf_header(const char *path, unsigned char ident[EI_NIDENT], unsigned *machine)
{
    unsigned char h[20];
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(h, 1, sizeof h, f) : 0;
    if (f)
        fclose(f);
    if (n < sizeof h || memcmp(h, ELFMAG, SELFMAG) != 0)
        return -1;
    memcpy(ident, h, EI_NIDENT);
    /* e_machine sits at byte 18 in both classes, in the file's byte order. */
    *machine =
        h[EI_DATA] == ELFDATA2MSB ? (unsigned)h[18] << 8 | h[19] : (unsigned)h[19] << 8 | h[18];
    return 0;
}

/* When dlopen failed because path was built for another machine (glibc then says "No such
 * file or directory"), writes what the file is for and what this kbench is; returns 1, else 0. */
static int wrong_architecture(const char *path, char *why, size_t size)
{
    unsigned char mine[EI_NIDENT], its[EI_NIDENT];
    unsigned my_machine, its_machine;
    char its_name[32], my_name[32];
    if (elf_header(path, its, &its_machine) != 0 ||
        elf_header("/proc/self/exe", mine, &my_machine) != 0)
        return 0;
    if (its_machine == my_machine && its[EI_CLASS] == mine[EI_CLASS] &&
        its[EI_DATA] == mine[EI_DATA])
        return 0;
    machine_name(its_machine, its_name, sizeof its_name);
    machine_name(my_machine, my_name, sizeof my_name);
    snprintf(why, size,
             "wrong architecture: the file is built for %s (%d-bit), this kbench for %s "
             "(%d-bit); rebuild the plugin on this machine",
             its_name, its[EI_CLASS] == ELFCLASS64 ? 64 : 32, my_name,
             mine[EI_CLASS] == ELFCLASS64 ? 64 : 32);
    return 1;
}

/* Where the probe is: a letter written to stage_fd (when >= 0) before each step that runs
 * plugin code or reads its memory, so the parent can say where a child that died was. */
enum { STAGE_CONSTRUCTOR = 'L', STAGE_ENTRY = 'E', STAGE_DESCRIPTOR = 'C' };

static void stage(int fd, char what)
{
    if (fd >= 0)
        (void)!write(fd, &what, 1);
}

/* kbi_plugin_open, reporting its steps to stage_fd. */
static int open_plugin(const char *path, kbi_plugin *out, char *err, int stage_fd)
{
    char why[KBI_ERR_SIZE];
    void *h;
    kb_entry_fn entry;
    const kb_plugin *d;
    memset(out, 0, sizeof *out);
    stage(stage_fd, STAGE_CONSTRUCTOR);
#ifdef KBI_ASAN
    /* Kept mapped after dlclose, so LeakSanitizer's report at exit can
     * name the plugin's function and line that leaked. */
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
#else
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
#endif
    if (!h) {
        const char *e = dlerror();
        if (wrong_architecture(path, why, sizeof why))
            kbi_errf(err, "%s: cannot load: %s", path, why);
        else
            kbi_errf(err, "%s: cannot load: %s", path, e ? e : "dlopen failed");
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
    stage(stage_fd, STAGE_ENTRY);
    d = entry();
    stage(stage_fd, STAGE_DESCRIPTOR);
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

int kbi_plugin_open(const char *path, kbi_plugin *out, char *err)
{
    return open_plugin(path, out, err, -1);
}

/* ---- the probe: each file loaded in a child first ---- */

/* Files probed at once. */
#define PROBES_AT_ONCE 16

typedef struct probe {
    const char *path;
    pid_t pid;    /* 0 once reaped */
    int fd;       /* the child's report; -1 once at its end */
    kbi_buf said; /* stage letters, then '=' and "ok" or the refusal line */
    int status;   /* its wait status */
    int timed_out;
    int start_errno; /* why it could not be started; 0 when it was */
} probe;

/* A plugin that calls exit() in the probe leaves as it asked, but without the host's
 * exit handlers (a sanitizer's leak check would run in a copy of a multithreaded
 * process and report on threads that are not there). */
static void probe_exit_now(int status, void *arg)
{
    (void)arg;
    _exit(status);
}

/* In the child: loads path with stdout into a scratch file, reports each step and the
 * verdict on fd, and leaves without running any destructor. */
static void probe_child(const char *path, int fd)
{
    char err[KBI_ERR_SIZE], first[160];
    FILE *scratch = tmpfile();
    kbi_plugin p;
    int rc;
    /* Own process group, so a hung probe is killed with whatever it started; dies with
     * kbench. */
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    /* A crash must end the child by its signal, for the parent to name it: a handler
     * inherited from the host (a sanitizer's, a crash reporter's) would turn it into an
     * exit status or a report of its own. */
    {
        static const int crashes[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP};
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        for (size_t i = 0; i < sizeof crashes / sizeof crashes[0]; i++)
            sigaction(crashes[i], &dfl, NULL);
    }
    on_exit(probe_exit_now, NULL);
    if (real_stdout_fd >= 0)
        close(real_stdout_fd);
    fflush(stdout);
    if (scratch)
        dup2(fileno(scratch), STDOUT_FILENO);
    else
        dup2(STDERR_FILENO, STDOUT_FILENO);
    rc = open_plugin(path, &p, err, fd);
    fflush(stdout);
    if (rc == KBI_OK && scratch && lseek(STDOUT_FILENO, 0, SEEK_END) > 0) {
        size_t n;
        lseek(STDOUT_FILENO, 0, SEEK_SET);
        n = (size_t)read(STDOUT_FILENO, first, sizeof first - 1);
        first[n < sizeof first ? n : 0] = '\0';
        first[strcspn(first, "\r\n")] = '\0';
        kbi_errf(err,
                 "%s: refused: printed to stdout while loading (\"%s\"); a plugin never "
                 "prints to stdout",
                 path, first);
        rc = KBI_ERR;
    }
    (void)!write(fd, "=", 1);
    (void)!write(fd, rc == KBI_OK ? "ok" : err, strlen(rc == KBI_OK ? "ok" : err));
    _exit(0);
}

static const char *stage_name(char s)
{
    switch (s) {
    case STAGE_CONSTRUCTOR:
        return "a constructor (while dlopen ran it)";
    case STAGE_ENTRY:
        return KB_ENTRY_SYMBOL;
    case STAGE_DESCRIPTOR:
        return "reading its descriptor (a pointer in it is bad)";
    default:
        return "starting the probe";
    }
}

/* The refusal line for a probe that gave no verdict, or NULL for one that passed (caller
 * frees). */
static char *probe_verdict(const probe *pr, double timeout)
{
    const char *s = pr->said.data ? pr->said.data : "";
    const char *eq = strchr(s, '=');
    char where = eq && eq > s ? eq[-1] : (*s ? s[strlen(s) - 1] : 0);
    kbi_buf line = {0};
    if (eq && !pr->timed_out && WIFEXITED(pr->status) && WEXITSTATUS(pr->status) == 0)
        return strcmp(eq + 1, "ok") == 0 ? NULL : kbi_strdup(eq + 1);
    if (pr->timed_out)
        kbi_buf_printf(&line,
                       "%s: refused: still loading after %g s, in %s (a loop that never "
                       "ends?); set " KBI_PLUGIN_LOAD_TIMEOUT_ENV " to wait longer",
                       pr->path, timeout, stage_name(where));
    else if (WIFSIGNALED(pr->status))
        kbi_buf_printf(&line, "%s: refused: crashed (%s) in %s", pr->path,
                       strsignal(WTERMSIG(pr->status)), stage_name(where));
    else
        kbi_buf_printf(&line, "%s: refused: called exit(%d) in %s; a plugin never exits", pr->path,
                       WIFEXITED(pr->status) ? WEXITSTATUS(pr->status) : -1, stage_name(where));
    return line.data;
}

/* Seconds a probe may take: $KBENCH_PLUGIN_LOAD_TIMEOUT, else KBI_PLUGIN_LOAD_TIMEOUT. */
static double probe_timeout(void)
{
    const char *env = getenv(KBI_PLUGIN_LOAD_TIMEOUT_ENV);
    char *end;
    double t = env ? strtod(env, &end) : 0;
    return env && end != env && *end == '\0' && t > 0 ? t : KBI_PLUGIN_LOAD_TIMEOUT;
}

static void probe_start(probe *pr)
{
    int fd[2];
    pr->pid = 0;
    pr->fd = -1;
    if (pipe2(fd, O_CLOEXEC) != 0) {
        pr->start_errno = errno;
        return;
    }
    fflush(NULL);
    pr->pid = fork();
    if (pr->pid == 0) {
        close(fd[0]);
        probe_child(pr->path, fd[1]);
    }
    if (pr->pid < 0) {
        pr->start_errno = errno;
        pr->pid = 0;
        close(fd[0]);
    } else {
        pr->fd = fd[0];
    }
    close(fd[1]);
}

/* Reads what the running probes said until each has ended or the deadline passed; kills
 * and reaps the rest. */
static void probe_wait(probe *prs, size_t n, double deadline)
{
    for (;;) {
        struct pollfd fds[PROBES_AT_ONCE];
        size_t idx[PROBES_AT_ONCE], k = 0, running = 0;
        double left = deadline - kbi_now();
        for (size_t i = 0; i < n; i++) {
            if (prs[i].pid > 0 && prs[i].fd < 0 &&
                waitpid(prs[i].pid, &prs[i].status, WNOHANG) == prs[i].pid)
                prs[i].pid = 0;
            running += prs[i].pid > 0;
            if (prs[i].fd >= 0) {
                fds[k] = (struct pollfd){.fd = prs[i].fd, .events = POLLIN};
                idx[k++] = i;
            }
        }
        if (!running || left <= 0)
            break;
        /* A child that closed its report but has not exited yet is looked at again soon. */
        if (poll(fds, k, k < running ? 5 : (int)(left * 1000) + 1) <= 0)
            continue;
        for (size_t j = 0; j < k; j++) {
            char buf[KBI_ERR_SIZE];
            ssize_t got;
            if (!(fds[j].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            got = read(fds[j].fd, buf, sizeof buf);
            if (got > 0) {
                kbi_buf_printf(&prs[idx[j]].said, "%.*s", (int)got, buf);
            } else if (got == 0 || errno != EINTR) {
                close(fds[j].fd);
                prs[idx[j]].fd = -1;
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (prs[i].pid > 0) {
            prs[i].timed_out = 1;
            kill(-prs[i].pid, SIGKILL);
            kill(prs[i].pid, SIGKILL);
            while (waitpid(prs[i].pid, &prs[i].status, 0) < 0 && errno == EINTR)
                ;
            prs[i].pid = 0;
        }
        if (prs[i].fd >= 0)
            close(prs[i].fd);
        prs[i].fd = -1;
    }
}

/* Loads each of paths[0..n) in a child first, PROBES_AT_ONCE at a time, each within the
 * probe timeout.  verdict[i] is NULL for a file the parent may load, else its refusal line
 * (caller frees). */
static void probe_all(char *const *paths, size_t n, char **verdict)
{
    double timeout = probe_timeout();
    for (size_t first = 0; first < n; first += PROBES_AT_ONCE) {
        probe prs[PROBES_AT_ONCE];
        size_t m = n - first < PROBES_AT_ONCE ? n - first : PROBES_AT_ONCE;
        memset(prs, 0, sizeof prs);
        for (size_t i = 0; i < m; i++) {
            prs[i].path = paths[first + i];
            probe_start(&prs[i]);
        }
        probe_wait(prs, m, kbi_now() + timeout);
        for (size_t i = 0; i < m; i++) {
            if (prs[i].start_errno) {
                kbi_buf line = {0};
                kbi_buf_printf(&line, "%s: refused: cannot start a process to load it in: %s",
                               prs[i].path, strerror(prs[i].start_errno));
                verdict[first + i] = line.data;
            } else {
                verdict[first + i] = probe_verdict(&prs[i], timeout);
            }
            kbi_buf_free(&prs[i].said);
        }
    }
}

/* ---- discovery ---- */

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

/* The plugin files of one directory, in name order (caller frees). */
static char **dir_files(const char *dir, DIR *d, size_t *count)
{
    struct dirent *ent;
    char **paths = NULL;
    size_t n = 0;
    while ((ent = readdir(d)) != NULL)
        if (is_plugin_file(ent->d_name)) {
            kbi_buf path = {0};
            kbi_buf_printf(&path, "%s/%s", dir, ent->d_name);
            paths = kbi_xrealloc(paths, (n + 1) * sizeof *paths);
            paths[n++] = path.data;
        }
    if (n > 1)
        qsort(paths, n, sizeof *paths, cmp_str);
    *count = n;
    return paths;
}

/* Loads the files of one directory that passed the probe (verdict[i] NULL) in the parent. */
static void load_files(const char *dir, kbi_plugin_set *set, char **paths, char **verdict, size_t n)
{
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
    for (size_t i = 0; i < n; i++) {
        char err[KBI_ERR_SIZE];
        kbi_plugin p;
        if (verdict[i]) {
            add_refused(set, verdict[i]);
        } else if (kbi_plugin_open(paths[i], &p, err) != KBI_OK) {
            add_refused(set, err);
        } else if (kbi_plugins_find(set, p.desc->name)) {
            kbi_buf line = {0};
            kbi_buf_printf(&line, "%s: plugin '%s' already loaded from %s; this copy ignored",
                           paths[i], p.desc->name, kbi_plugins_find(set, p.desc->name)->path);
            add_refused(set, line.data);
            kbi_buf_free(&line);
            dlclose(p.handle);
            free(p.path);
        } else {
            set->items = kbi_xrealloc(set->items, (set->n + 1) * sizeof *set->items);
            set->items[set->n++] = p;
        }
    }
}

int kbi_plugins_load(const char *const *dirs, const int *required, kbi_plugin_set *set,
                     char *err)
{
    size_t n_dirs = 0, n = 0, *per_dir, at = 0;
    char **paths = NULL, **verdict;
    int rc = KBI_OK;
    memset(set, 0, sizeof *set);
    while (dirs[n_dirs])
        n_dirs++;
    per_dir = kbi_xcalloc(n_dirs + 1, sizeof *per_dir);
    for (size_t i = 0; i < n_dirs; i++) {
        DIR *d = opendir(dirs[i]);
        char **more;
        if (!d) {
            if (required && required[i]) {
                kbi_errf(err, "%s: cannot read plugin directory: %s", dirs[i], strerror(errno));
                rc = KBI_ERR_INPUT;
                break;
            }
            continue;
        }
        more = dir_files(dirs[i], d, &per_dir[i]);
        closedir(d);
        paths = kbi_xrealloc(paths, (n + per_dir[i] + 1) * sizeof *paths);
        if (per_dir[i])
            memcpy(paths + n, more, per_dir[i] * sizeof *more);
        n += per_dir[i];
        free(more);
    }
    verdict = kbi_xcalloc(n + 1, sizeof *verdict);
    /* Every file of every folder at once: a hung one costs one timeout, not one each. */
    if (rc == KBI_OK)
        probe_all(paths, n, verdict);
    for (size_t i = 0; rc == KBI_OK && i < n_dirs; i++) {
        load_files(dirs[i], set, paths + at, verdict + at, per_dir[i]);
        at += per_dir[i];
    }
    for (size_t i = 0; i < n; i++) {
        free(paths[i]);
        free(verdict[i]);
    }
    free(paths);
    free(verdict);
    free(per_dir);
    if (rc != KBI_OK)
        kbi_plugins_free(set);
    return rc;
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
