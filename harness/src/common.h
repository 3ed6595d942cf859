/* Internal helpers shared by every harness module: status codes, error
 * buffers, exit codes and small string utilities.  Internal names use the
 * kbi_ prefix; plugin-visible ones (plugin.h) use kb_. */
#ifndef KBENCH_COMMON_H
#define KBENCH_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* Internal statuses: 0 ok, negative on failure. */
enum {
    KBI_OK = 0,
    KBI_ERR = -1,    /* failure; the error buffer says what */
    KBI_ERR_IO = -2, /* a file could not be read or written */
    KBI_ERR_INPUT = -3 /* bad profile, results or command-line input */
};

/* Exit codes of the kbench program (documented in README.md). */
enum {
    KBI_EXIT_OK = 0,      /* every case ok or skipped; no regression */
    KBI_EXIT_FAILED = 1,  /* a case failed, did not verify, crashed, timed out, or regressed */
    KBI_EXIT_USAGE = 2,   /* bad usage or input; nothing (more) was run */
    KBI_EXIT_INTERRUPTED = 130 /* stopped by SIGINT/SIGTERM; finished cases kept */
};

/* KBI_ASAN: built with AddressSanitizer (KBENCH_SANITIZE, or the fuzzers). */
#if defined(__SANITIZE_ADDRESS__)
#define KBI_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KBI_ASAN 1
#endif
#endif

/* Size of every error buffer the harness passes around. */
#define KBI_ERR_SIZE 1024

/* printf into an error buffer of KBI_ERR_SIZE bytes (NULL is allowed). */
void kbi_errf(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* strdup that never returns NULL (aborts the harness on out-of-memory:
 * the harness cannot report anything useful without memory). */
char *kbi_strdup(const char *s);
void *kbi_xmalloc(size_t n);
void *kbi_xcalloc(size_t n, size_t size);
void *kbi_xrealloc(void *p, size_t n);

/* free() of each of the n pointers that follow (for the end of a function that took many). */
void kbi_free_all(int n, ...);

/* Growable string. */
typedef struct kbi_buf {
    char *data;
    size_t len, cap;
} kbi_buf;
void kbi_buf_printf(kbi_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void kbi_buf_free(kbi_buf *b);

/* Trim ASCII white space in place; returns s. */
char *kbi_trim(char *s);

/* Seconds of CLOCK_MONOTONIC. */
double kbi_now(void);

/* Directory holding the running executable (for the default plugin folder);
 * returns KBI_OK and writes into out (size n). */
int kbi_exe_dir(char *out, size_t n);

/* Finds an executable: $env_var if set, else `name` on PATH, else in
 * $CUDA_HOME/bin and /usr/local/cuda/bin.  Returns KBI_OK with its path in
 * out (size n), or KBI_ERR with err listing where it looked. */
int kbi_find_tool(const char *name, const char *env_var, char *out, size_t n, char *err);

/* Escapes glob metacharacters so fnmatch matches `s` literally. */
char *kbi_glob_escape(const char *s);

/* The whole file at path, NUL-terminated (caller frees), or NULL with errno set. */
char *kbi_read_text(const char *path);

/* mkdir -p; returns KBI_OK or KBI_ERR_IO with err set. */
int kbi_mkdirs(const char *path, char *err);

/* A growing list of owned strings. */
typedef struct kbi_strlist {
    char **s;
    size_t n;
} kbi_strlist;
void kbi_strlist_add(kbi_strlist *l, const char *s); /* appends a copy of s */
void kbi_strlist_free(kbi_strlist *l);               /* frees all; l is empty again */
int kbi_strlist_has(const kbi_strlist *l, const char *s); /* s is one of l's strings */

#endif
