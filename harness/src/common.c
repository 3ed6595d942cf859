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
    if (!err)
        return;
    va_start(ap, fmt);
    vsnprintf(err, KBI_ERR_SIZE, fmt, ap);
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
