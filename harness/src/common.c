/* Small utilities shared by the harness modules. */
#define _POSIX_C_SOURCE 200809L
#include "common.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void kbi_errf(char *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err)
        vsnprintf(err, KBI_ERR_SIZE, fmt, ap);
    va_end(ap);
}

void kbi_free_all(int n, ...)
{
    va_list ap;
    va_start(ap, n);
    while (n-- > 0)
        free(va_arg(ap, void *));
    va_end(ap);
}

static void *oom(void)
{
    fputs("kbench: out of memory\n", stderr);
    abort();
}

void *kbi_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    return p ? p : oom();
}

void *kbi_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    return p ? p : oom();
}

void *kbi_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    return q ? q : oom();
}

char *kbi_strdup(const char *s)
{
    size_t n = strlen(s ? s : "") + 1;
    char *p = kbi_xmalloc(n);
    memcpy(p, s ? s : "", n);
    return p;
}

void kbi_buf_printf(kbi_buf *b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        size_t room = b->cap - b->len;
        va_start(ap, fmt);
        int n = vsnprintf(b->data ? b->data + b->len : NULL, room, fmt, ap);
        va_end(ap);
        if (n < 0)
            return;
        if ((size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        b->cap = (b->cap + (size_t)n + 1) * 2;
        b->data = kbi_xrealloc(b->data, b->cap);
    }
}

void kbi_buf_free(kbi_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

char *kbi_trim(char *s)
{
    char *e;
    while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
        s++;
    e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
        *--e = '\0';
    return s;
}

double kbi_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int kbi_exe_dir(char *out, size_t n)
{
    char path[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", path, sizeof path - 1);
    char *slash;
    if (len <= 0)
        return KBI_ERR;
    path[len] = '\0';
    slash = strrchr(path, '/');
    if (!slash)
        return KBI_ERR;
    *slash = '\0';
    if ((size_t)snprintf(out, n, "%s", path) >= n)
        return KBI_ERR;
    return KBI_OK;
}

char *kbi_read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    kbi_buf b = {0};
    char chunk[8192];
    size_t n;
    int failed;
    if (!f)
        return NULL;
    kbi_buf_printf(&b, "%s", "");
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        kbi_buf_printf(&b, "%.*s", (int)n, chunk);
    failed = ferror(f);
    fclose(f);
    if (failed) {
        kbi_buf_free(&b);
        errno = EIO;
    }
    return b.data;
}

int kbi_mkdirs(const char *path, char *err)
{
    char tmp[PATH_MAX];
    size_t len = strlen(path);
    if (len == 0 || len >= sizeof tmp) {
        kbi_errf(err, "%s: bad directory name", path);
        return KBI_ERR_IO;
    }
    memcpy(tmp, path, len + 1);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(tmp, 0777) != 0 && errno != EEXIST) {
            kbi_errf(err, "%s: cannot create directory: %s", tmp, strerror(errno));
            return KBI_ERR_IO;
        }
        *p = '/';
    }
    if (mkdir(tmp, 0777) != 0 && errno != EEXIST) {
        kbi_errf(err, "%s: cannot create directory: %s", tmp, strerror(errno));
        return KBI_ERR_IO;
    }
    return KBI_OK;
}

static int executable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

int kbi_find_tool(const char *name, const char *env_var, char *out, size_t n, char *err)
{
    const char *env = env_var ? getenv(env_var) : NULL, *path = getenv("PATH");
    const char *cuda_home = getenv("CUDA_HOME");
    if (env && *env) {
        if (executable(env) && (size_t)snprintf(out, n, "%s", env) < n)
            return KBI_OK;
        kbi_errf(err, "%s=%s is not an executable file", env_var, env);
        return KBI_ERR;
    }
    if (path) {
        char *copy = kbi_strdup(path), *save = NULL;
        for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
            if ((size_t)snprintf(out, n, "%s/%s", dir, name) < n && executable(out)) {
                free(copy);
                return KBI_OK;
            }
        }
        free(copy);
    }
    if (cuda_home && (size_t)snprintf(out, n, "%s/bin/%s", cuda_home, name) < n && executable(out))
        return KBI_OK;
    if ((size_t)snprintf(out, n, "/usr/local/cuda/bin/%s", name) < n && executable(out))
        return KBI_OK;
    kbi_errf(err,
             "%s not found: looked in $%s, PATH, $CUDA_HOME/bin and /usr/local/cuda/bin "
             "(install the CUDA toolkit's %s, or set %s to its path)",
             name, env_var ? env_var : "-", name, env_var ? env_var : "PATH");
    return KBI_ERR;
}

char *kbi_glob_escape(const char *s)
{
    kbi_buf b = {0};
    kbi_buf_printf(&b, "%s", "");
    for (; *s; s++) {
        if (strchr("*?[]\\", *s))
            kbi_buf_printf(&b, "\\");
        kbi_buf_printf(&b, "%c", *s);
    }
    return b.data;
}

void kbi_strlist_add(kbi_strlist *l, const char *s)
{
    l->s = kbi_xrealloc(l->s, (l->n + 1) * sizeof *l->s);
    l->s[l->n++] = kbi_strdup(s);
}

void kbi_strlist_free(kbi_strlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->s[i]);
    free(l->s);
    l->s = NULL;
    l->n = 0;
}

int kbi_strlist_has(const kbi_strlist *l, const char *s)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->s[i], s) == 0)
            return 1;
    return 0;
}
