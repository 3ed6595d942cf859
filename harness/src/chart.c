/* gnuplot charts: writes each chart's data (.dat) and script (.gp) into the
 * chart folder and runs gnuplot on the script, with a timeout and its stderr
 * captured, to draw a PNG and an SVG.  The scripts draw from the .dat files
 * by relative names, so `cd charts && gnuplot NAME.gp` redraws a chart a
 * user has restyled. */
#define _POSIX_C_SOURCE 200809L
#include "chart.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "format.h"

#define DEFAULT_TIMEOUT 60.0

/* tab10, then two darker ones: distinct on white, and in this order the
 * first variants of a plugin get the most distinct colours. */
static const char *const palette[] = {
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
    "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#ad494a",
};
#define N_PALETTE (sizeof palette / sizeof palette[0])

/* Point shapes for the roofline, so series stay apart without colour. */
static const int point_types[] = {7, 5, 9, 11, 13, 15, 4, 6, 8, 10, 12, 14};
#define N_POINT_TYPES (sizeof point_types / sizeof point_types[0])

const char *kbi_chart_color(int i)
{
    if (i < 0)
        i = -i;
    return palette[(size_t)i % N_PALETTE];
}

/* ---- finding and running gnuplot ---- */

static int is_executable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

int kbi_gnuplot_find(char *out, size_t n)
{
    const char *path = getenv("PATH");
    const char *p;
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    p = path;
    for (;;) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char cand[PATH_MAX];
        /* An empty PATH element means the current directory. */
        int w = len ? snprintf(cand, sizeof cand, "%.*s/gnuplot", (int)len, p)
                    : snprintf(cand, sizeof cand, "./gnuplot");
        if (w > 0 && (size_t)w < sizeof cand && is_executable(cand)) {
            if ((size_t)snprintf(out, n, "%s", cand) >= n)
                return KBI_ERR;
            return KBI_OK;
        }
        if (!end)
            break;
        p = end + 1;
    }
    return KBI_ERR;
}

int kbi_chart_init(kbi_chart_ctx *ctx, const char *dir, const char *gnuplot, double timeout,
                   char *err)
{
    char found[PATH_MAX];
    char why[KBI_ERR_SIZE] = "";
    int rc;
    memset(ctx, 0, sizeof *ctx);
    rc = kbi_mkdirs(dir, err);
    if (rc != KBI_OK)
        return rc;
    ctx->dir = kbi_strdup(dir);
    ctx->timeout = timeout > 0 ? timeout : DEFAULT_TIMEOUT;
    if (!gnuplot) {
        const char *env = getenv("KBENCH_GNUPLOT");
        if (env && !*env)
            snprintf(why, sizeof why, "KBENCH_GNUPLOT is set and empty");
        else if (env)
            gnuplot = env;
    } else if (!*gnuplot) {
        snprintf(why, sizeof why, "charts were turned off");
    }
    if (gnuplot && *gnuplot) {
        if (is_executable(gnuplot))
            ctx->gnuplot = kbi_strdup(gnuplot);
        else
            snprintf(why, sizeof why, "%s is not an executable file", gnuplot);
    } else if (!why[0]) {
        if (kbi_gnuplot_find(found, sizeof found) == KBI_OK)
            ctx->gnuplot = kbi_strdup(found);
        else
            snprintf(why, sizeof why,
                     "gnuplot was not found on PATH (install it, e.g. apt-get install "
                     "gnuplot-nox)");
    }
    ctx->why_not = kbi_strdup(why);
    return KBI_OK;
}

void kbi_chart_free(kbi_chart_ctx *ctx)
{
    free(ctx->dir);
    free(ctx->gnuplot);
    free(ctx->why_not);
    for (size_t i = 0; i < ctx->n_warnings; i++)
        free(ctx->warnings[i]);
    free(ctx->warnings);
    memset(ctx, 0, sizeof *ctx);
}

static void add_warning(kbi_chart_ctx *ctx, const char *stem, const char *text)
{
    kbi_buf b = {0};
    kbi_buf_printf(&b, "chart %s: %s", stem, text);
    ctx->warnings = kbi_xrealloc(ctx->warnings, (ctx->n_warnings + 1) * sizeof *ctx->warnings);
    ctx->warnings[ctx->n_warnings++] = b.data;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Reads the captured stderr back as one line: its last ~600 characters,
 * newlines turned into " / ". */
static void read_log_tail(int fd, char *out, size_t n)
{
    char buf[8192];
    off_t size = lseek(fd, 0, SEEK_END);
    off_t start = size > 600 ? size - 600 : 0;
    ssize_t got;
    size_t o = 0;
    out[0] = '\0';
    if (size <= 0 || lseek(fd, start, SEEK_SET) < 0)
        return;
    got = read(fd, buf, sizeof buf - 1);
    if (got <= 0)
        return;
    buf[got] = '\0';
    for (ssize_t i = 0; i < got && o + 4 < n; i++) {
        if (buf[i] == '\n') {
            if (o > 0 && i + 1 < got) {
                memcpy(out + o, " / ", 3);
                o += 3;
            }
        } else if (buf[i] != '\r') {
            out[o++] = buf[i];
        }
    }
    out[o] = '\0';
}

int kbi_chart_run_gnuplot(const kbi_chart_ctx *ctx, const char *script, char *err)
{
    char log_path[PATH_MAX], tail[KBI_ERR_SIZE / 2];
    char *argv[3];
    int log_fd = -1, status = 0, rc = KBI_ERR, timed_out = 0;
    pid_t pid;
    double start;
    kbi_errf(err, "%s", "");
    if (!ctx->gnuplot) {
        kbi_errf(err, "gnuplot is not available: %s", ctx->why_not);
        return KBI_ERR;
    }
    if ((size_t)snprintf(log_path, sizeof log_path, "%s/.gnuplot-XXXXXX", ctx->dir) >=
        sizeof log_path) {
        kbi_errf(err, "%s: path too long", ctx->dir);
        return KBI_ERR;
    }
    log_fd = mkstemp(log_path);
    if (log_fd < 0) {
        kbi_errf(err, "%s: cannot create a file for gnuplot's messages: %s", log_path,
                 strerror(errno));
        return KBI_ERR;
    }
    /* The file is only a buffer for stderr: gone as soon as it is read. */
    unlink(log_path);
    argv[0] = ctx->gnuplot;
    argv[1] = (char *)script;
    argv[2] = NULL;
    pid = fork();
    if (pid < 0) {
        kbi_errf(err, "cannot start gnuplot: fork: %s", strerror(errno));
        goto done;
    }
    if (pid == 0) {
        /* Child: only async-signal-safe calls until exec. */
        int devnull = open("/dev/null", O_RDWR);
        if (chdir(ctx->dir) != 0)
            _exit(126);
        if (devnull >= 0) {
            dup2(devnull, STDIN_FILENO);
            dup2(devnull, STDOUT_FILENO);
        }
        dup2(log_fd, STDERR_FILENO);
        execv(ctx->gnuplot, argv);
        _exit(127);
    }
    start = kbi_now();
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid)
            break;
        if (w < 0 && errno != EINTR) {
            kbi_errf(err, "waiting for gnuplot: %s", strerror(errno));
            goto done;
        }
        if (kbi_now() - start > ctx->timeout) {
            kill(pid, SIGKILL);
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
            timed_out = 1;
            break;
        }
        sleep_ms(5);
    }
    read_log_tail(log_fd, tail, sizeof tail);
    if (timed_out) {
        kbi_errf(err, "gnuplot %s took more than %g s and was stopped%s%s", script, ctx->timeout,
                 tail[0] ? ": " : "", tail);
    } else if (WIFSIGNALED(status)) {
        kbi_errf(err, "gnuplot %s was killed by signal %d%s%s", script, WTERMSIG(status),
                 tail[0] ? ": " : "", tail);
    } else if (WEXITSTATUS(status) == 126 || WEXITSTATUS(status) == 127) {
        kbi_errf(err, "cannot run %s in %s (exit status %d)%s%s", ctx->gnuplot, ctx->dir,
                 WEXITSTATUS(status), tail[0] ? ": " : "", tail);
    } else if (WEXITSTATUS(status) != 0) {
        kbi_errf(err, "gnuplot %s failed (exit status %d): %s", script, WEXITSTATUS(status),
                 tail[0] ? tail : "no message");
    } else {
        /* Success; anything gnuplot printed is a warning worth passing on. */
        kbi_errf(err, "%s", tail);
        rc = KBI_OK;
    }
done:
    close(log_fd);
    return rc;
}

/* ---- writing scripts and data ---- */

/* Appends s as a gnuplot single-quoted string (a quote is doubled). */
static void gp_quote(kbi_buf *b, const char *s)
{
    kbi_buf_printf(b, "'");
    for (; *s; s++) {
        if (*s == '\'')
            kbi_buf_printf(b, "''");
        else if (*s == '\n' || *s == '\r')
            kbi_buf_printf(b, " ");
        else
            kbi_buf_printf(b, "%c", *s);
    }
    kbi_buf_printf(b, "'");
}

/* Appends s as a double-quoted column of a data file (gnuplot has no escape
 * inside them, so a double quote becomes a single one). */
static void dat_quote(kbi_buf *b, const char *s)
{
    kbi_buf_printf(b, "\"");
    for (; *s; s++)
        kbi_buf_printf(b, "%c", (*s == '"' || *s == '\n' || *s == '\r') ? '\'' : *s);
    kbi_buf_printf(b, "\"");
}

static int write_file(const char *dir, const char *stem, const char *ext, const kbi_buf *b,
                      char *err)
{
    char path[PATH_MAX];
    FILE *f;
    int rc = KBI_OK;
    if ((size_t)snprintf(path, sizeof path, "%s/%s.%s", dir, stem, ext) >= sizeof path) {
        kbi_errf(err, "%s/%s.%s: path too long", dir, stem, ext);
        return KBI_ERR_IO;
    }
    f = fopen(path, "w");
    if (!f) {
        kbi_errf(err, "%s: cannot create: %s", path, strerror(errno));
        return KBI_ERR_IO;
    }
    if (b->len && fwrite(b->data, 1, b->len, f) != b->len)
        rc = KBI_ERR_IO;
    if (fclose(f) != 0)
        rc = KBI_ERR_IO;
    if (rc != KBI_OK)
        kbi_errf(err, "%s: cannot write: %s", path, strerror(errno));
    return rc;
}

/* A title as a gnuplot string expression, broken into lines after ", " or ": " where it
 * would not fit width pixels (under 10 px per character at 13 pt). */
static void gp_title(kbi_buf *gp, const char *title, int width)
{
    size_t fit = (width - 40) / 10 > 20 ? (size_t)((width - 40) / 10) : 20;
    const char *p = title;
    int first = 1;
    while (*p) {
        size_t len = strlen(p), cut = len;
        char part[1024];
        if (len > fit) {
            /* the last break at or before fit, else the first after it */
            cut = 0;
            for (size_t i = 1; i + 1 < len; i++)
                if ((p[i] == ',' || p[i] == ':') && p[i + 1] == ' ' && (i < fit || !cut))
                    cut = i + 2;
            if (!cut)
                cut = len;
        }
        snprintf(part, sizeof part, "%.*s", (int)(cut < sizeof part ? cut : sizeof part - 1), p);
        if (!first)
            kbi_buf_printf(gp, ".\"\\n\".");
        gp_quote(gp, part);
        first = 0;
        p += cut;
    }
    if (first)
        gp_quote(gp, "");
}

/* Script preamble: what the file is, and the PNG terminal. */
static void gp_begin(kbi_buf *gp, const char *stem, const char *title, int width, int height)
{
    kbi_buf_printf(gp, "# kbench chart: ");
    kbi_buf_printf(gp, "%s\n", title);
    kbi_buf_printf(gp,
                   "# Data: %s.dat (blocks selected with 'index', one per series).\n"
                   "# Redraw after editing: gnuplot %s.gp (run it in this folder).\n",
                   stem, stem);
    kbi_buf_printf(gp, "set encoding utf8\n");
    kbi_buf_printf(gp, "set terminal pngcairo size %d,%d noenhanced font 'DejaVu Sans,11'\n", width,
                   height);
    kbi_buf_printf(gp, "set output '%s.png'\n", stem);
    kbi_buf_printf(gp, "set title ");
    gp_title(gp, title, width);
    kbi_buf_printf(gp, " font ',13'\n");
    kbi_buf_printf(gp, "set border 3 lc rgb '#444444'\n"
                       "set tics nomirror\n"
                       "set grid ytics mytics lc rgb '#e4e4e4' lt 1, lc rgb '#f2f2f2' lt 1\n"
                       "set datafile missing 'NaN'\n");
}

/* Script epilogue: the same plot again as SVG. */
static void gp_end(kbi_buf *gp, const char *stem, int width, int height)
{
    kbi_buf_printf(gp,
                   "set terminal svg size %d,%d dynamic noenhanced font 'DejaVu Sans,11' "
                   "background rgb 'white'\n"
                   "set output '%s.svg'\n"
                   "replot\n"
                   "unset output\n",
                   width, height, stem);
}

static void gp_reference(kbi_buf *gp, double y, const char *label)
{
    kbi_buf_printf(gp,
                   "set arrow from graph 0, first %.9g to graph 1, first %.9g nohead dt 2 lw "
                   "1.5 lc rgb '#555555' front\n",
                   y, y);
    if (label && *label) {
        kbi_buf_printf(gp, "set label ");
        gp_quote(gp, label);
        kbi_buf_printf(gp,
                       " at graph 1, first %.9g right offset -0.5,0.6 tc rgb '#555555' "
                       "front\n",
                       y);
    }
}

/* Draws (when it can) after the files are written; see the header. */
static int finish(kbi_chart_ctx *ctx, const char *stem, const kbi_buf *dat, const kbi_buf *gp,
                  char *err)
{
    char script[PATH_MAX], msg[KBI_ERR_SIZE];
    int rc = write_file(ctx->dir, stem, "dat", dat, err);
    if (rc == KBI_OK)
        rc = write_file(ctx->dir, stem, "gp", gp, err);
    if (rc != KBI_OK)
        return rc;
    if (!ctx->gnuplot)
        return KBI_CHART_NOT_DRAWN;
    snprintf(script, sizeof script, "%s.gp", stem);
    if (kbi_chart_run_gnuplot(ctx, script, msg) != KBI_OK) {
        add_warning(ctx, stem, msg);
        return KBI_CHART_NOT_DRAWN;
    }
    if (msg[0]) {
        char w[KBI_ERR_SIZE + 32];
        snprintf(w, sizeof w, "gnuplot warned: %s", msg);
        add_warning(ctx, stem, w);
    }
    {
        /* gnuplot can exit 0 without drawing (e.g. no valid points). */
        char png[PATH_MAX];
        struct stat st;
        snprintf(png, sizeof png, "%s/%s.png", ctx->dir, stem);
        if (stat(png, &st) != 0 || st.st_size == 0) {
            add_warning(ctx, stem, "gnuplot ran but wrote no PNG");
            return KBI_CHART_NOT_DRAWN;
        }
    }
    ctx->n_drawn++;
    return KBI_OK;
}

/* Range of an axis over the finite positive values of v (and of lo/hi). */
typedef struct range {
    double min_pos, min, max; /* smallest positive, smallest, largest */
    int any;
} range;

static void range_add(range *r, double v)
{
    if (!isfinite(v))
        return;
    if (!r->any || v > r->max)
        r->max = v;
    if (!r->any || v < r->min)
        r->min = v;
    if (v > 0 && (r->min_pos == 0 || v < r->min_pos))
        r->min_pos = v;
    r->any = 1;
}

/* Log scale when the positive values span more than `ratio`. */
static int wants_log(const range *r, double ratio)
{
    return r->any && r->min_pos > 0 && r->max / r->min_pos > ratio;
}

static double floor_decade(double v)
{
    return pow(10.0, floor(log10(v)));
}

static double ceil_decade(double v)
{
    return pow(10.0, ceil(log10(v)));
}

static size_t max_len(const char *const *s, size_t n)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] && strlen(s[i]) > m)
            m = strlen(s[i]);
    return m;
}

/* ---- tics ---- */

/* About 7 px per character of an 11 pt label, and a label's height. */
#define CHAR_PX 7.0
#define LINE_PX 15.0

/* Where v lands along an axis from lo to hi that is plot_px long (log: logarithmic). */
static double axis_px(double v, double lo, double hi, int log, double plot_px)
{
    double f = log ? (log2(v) - log2(lo)) / (log2(hi) - log2(lo)) : (v - lo) / (hi - lo);
    return f * plot_px;
}

/* Characters of a UTF-8 label (a µ is one). */
static size_t label_chars(const char *s)
{
    size_t n = 0;
    for (; s && *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

static int cmp_double_at(const void *a, const void *b)
{
    double d = ((const double *)a)[0] - ((const double *)b)[0];
    return (d > 0) - (d < 0);
}

/* x tics at pos with their labels, laid out so that no two labels overlap: level when they fit
 * side by side, else rotated by 45 degrees when neighbours are far enough apart for slanted
 * text, else by 90; where even upright labels would touch (two sizes a few pixels apart),
 * every label too close to the last one kept is left blank (its tic stays, and the table
 * names every point).  The axis runs from lo to hi (log: logarithmic) over plot_px. */
static void gp_xtics(kbi_buf *gp, const double *pos, const char *const *labels, size_t n,
                     double plot_px, double lo, double hi, int log)
{
    double *at = kbi_xcalloc(n ? 2 * n : 1, sizeof *at), min_gap = INFINITY, last = -INFINITY;
    int level = 1, angle = 0;
    char *keep = kbi_xcalloc(n ? n : 1, 1);
    /* at[2k] = pixel position, at[2k+1] = index: sorted by position */
    for (size_t i = 0; i < n; i++) {
        at[2 * i] = hi > lo ? axis_px(pos[i], lo, hi, log, plot_px) : (double)i;
        at[2 * i + 1] = (double)i;
        keep[i] = 1;
    }
    qsort(at, n, 2 * sizeof *at, cmp_double_at);
    for (size_t k = 1; k < n; k++) {
        size_t i = (size_t)at[2 * k + 1], j = (size_t)at[2 * k - 1];
        double gap = at[2 * k] - at[2 * k - 2];
        double need = (double)(label_chars(labels[i]) + label_chars(labels[j])) / 2 * CHAR_PX + 12;
        if (gap < min_gap)
            min_gap = gap;
        if (gap < need)
            level = 0;
    }
    if (!level)
        angle = min_gap >= LINE_PX * 1.45 ? 45 : 90;
    if (!level && min_gap < LINE_PX)
        for (size_t k = 0; k < n; k++) {
            size_t i = (size_t)at[2 * k + 1];
            keep[i] = at[2 * k] - last >= LINE_PX;
            if (keep[i])
                last = at[2 * k];
        }
    kbi_buf_printf(gp, "set xtics (");
    for (size_t i = 0; i < n; i++) {
        if (i)
            kbi_buf_printf(gp, ", ");
        gp_quote(gp, keep[i] ? labels[i] : "");
        kbi_buf_printf(gp, " %.9g", pos[i]);
    }
    kbi_buf_printf(gp, ")");
    if (angle)
        kbi_buf_printf(gp, " rotate by %d right", angle);
    kbi_buf_printf(gp, "\n");
    if (angle == 45 && n > 0) {
        /* A slanted label ends at its tic and runs left: room for the leftmost one. */
        size_t i = (size_t)at[1];
        double reach = (double)label_chars(keep[i] ? labels[i] : "") * CHAR_PX * 0.71 - at[0];
        if (reach > 3 * CHAR_PX)
            kbi_buf_printf(gp, "set lmargin %d\n", (int)fmax(12, ceil(reach / CHAR_PX) + 3));
    }
    free(at);
    free(keep);
}

/* A step of 1, 2 or 5 times a power of ten near span / 6. */
static double nice_step(double span)
{
    double raw = span / 6, p = pow(10, floor(log10(raw))), m = raw / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

/* The range of an axis ("x" or "y") from lo to hi (log_base nonzero: logarithmic), a hair
 * wider so that gnuplot keeps a tic at either end. */
static void gp_range(kbi_buf *gp, const char *axis, double lo, double hi, int log_base)
{
    if (log_base)
        kbi_buf_printf(gp, "set %srange [%.9g:%.9g]\n", axis, lo * (1 - 1e-6), hi * (1 + 1e-6));
    else
        kbi_buf_printf(gp, "set %srange [%.9g:%.9g]\n", axis, lo - (hi - lo) * 1e-6,
                       hi + (hi - lo) * 1e-6);
}

/* The range of an axis (gp_range) and explicit tics labelled readably, because gnuplot's own
 * print 1.04858e+06: a logarithmic axis (log_base 10) gets a labelled tic at each decade (and at 2
 * and 5 times it when it spans under two decades) and minor tics between; a base-2 axis (parameter
 * sizes) labelled powers of two such as 1Mi; a linear one a step of 1, 2 or 5 times a power of ten.
 * Nothing is written when the range is empty. */
static void gp_axis(kbi_buf *gp, const char *axis, double lo, double hi, int log_base)
{
    double v[96], top = 0;
    int minor[96], n = 0;
    double step = 0;
    if (!(hi > lo) || !isfinite(lo) || !isfinite(hi) || (log_base && lo <= 0))
        return;
    gp_range(gp, axis, lo, hi, log_base);
    if (log_base == 10) {
        int e0 = (int)floor(log10(lo)), e1 = (int)ceil(log10(hi)), labelled = 0;
        int few = e1 - e0 <= 2;
        for (int e = e0; e <= e1 && n < 90; e++)
            for (int m = 1; m <= 9 && n < 90; m++) {
                double t = m * pow(10, e);
                if (t < lo * (1 - 1e-9) || t > hi * (1 + 1e-9))
                    continue;
                v[n] = t;
                minor[n] = !(m == 1 || (few && (m == 2 || m == 5)));
                labelled += !minor[n++];
            }
        for (int i = 0; labelled < 2 && i < n; i++)
            minor[i] = 0; /* under a decade: label every tic */
    } else if (log_base == 2) {
        int e0 = (int)ceil(log2(lo) - 1e-9), e1 = (int)floor(log2(hi) + 1e-9);
        int every = (e1 - e0) / 12 + 1;
        for (int e = e0; e <= e1 && n < 90; e++) {
            v[n] = ldexp(1.0, e);
            minor[n++] = (e - e0) % every != 0;
        }
    } else {
        long k0, k1;
        step = nice_step(hi - lo);
        k0 = (long)ceil(lo / step - 1e-9);
        k1 = (long)floor(hi / step + 1e-9);
        for (long k = k0; k <= k1 && n < 90; k++) {
            v[n] = (double)k * step;
            minor[n++] = 0;
        }
    }
    for (int i = 0; i < n; i++)
        if (!minor[i] && fabs(v[i]) > top)
            top = fabs(v[i]);
    kbi_buf_printf(gp, "set %stics (", axis);
    for (int i = 0; i < n; i++) {
        char t[64] = "";
        if (!minor[i] && log_base == 2)
            kbi_fmt_axis(v[i], t, sizeof t);
        else if (!minor[i])
            kbi_fmt_tic(v[i], log_base ? v[i] : step, log_base ? v[i] : top, t, sizeof t);
        kbi_buf_printf(gp, "%s", i ? ", " : "");
        gp_quote(gp, t);
        kbi_buf_printf(gp, " %.9g %d", v[i], minor[i]);
    }
    kbi_buf_printf(gp, ")\n");
}

/* Starts the next element of the plot command: "plot " for the first, a
 * continued line for the others. */
static void gp_next(kbi_buf *gp, int *n_clauses)
{
    kbi_buf_printf(gp, *n_clauses ? ", \\\n     " : "plot ");
    (*n_clauses)++;
}

static void gp_key(kbi_buf *gp, size_t n_series)
{
    /* Right of the plot: "below" collides with the x label in gnuplot 5.4,
     * and above it sits over the title. */
    (void)n_series;
    kbi_buf_printf(gp, "set key outside right top vertical Left reverse\n");
}

/* ---- bars ---- */

/* Ends the script, then writes and draws the chart; a chart with nothing
 * drawn (n_drawn 0: every `what` is missing) is KBI_ERR_INPUT.  Frees dat
 * and gp. */
static int end_chart(kbi_chart_ctx *ctx, const char *stem, size_t n_drawn, const char *what,
                     kbi_buf *dat, kbi_buf *gp, int width, int height, char *err)
{
    int rc;
    kbi_buf_printf(gp, "\n");
    gp_end(gp, stem, width, height);
    if (n_drawn == 0) {
        kbi_errf(err, "chart %s: every %s is missing", stem, what);
        rc = KBI_ERR_INPUT;
    } else {
        rc = finish(ctx, stem, dat, gp, err);
    }
    kbi_buf_free(dat);
    kbi_buf_free(gp);
    return rc;
}

/* The y range of every bar with its interval and the reference; returns
 * how many bars have a value. */
static size_t bars_range(const kbi_bar_chart *c, range *yr)
{
    size_t n_bars = 0;
    for (size_t k = 0; k < c->n_groups * c->n_series; k++) {
        if (!isfinite(c->value[k]))
            continue;
        n_bars++;
        range_add(yr, c->value[k]);
        if (c->low)
            range_add(yr, c->low[k]);
        if (c->high)
            range_add(yr, c->high[k]);
    }
    if (c->reference > 0)
        range_add(yr, c->reference);
    for (size_t k = 0; c->roof && k < c->n_groups * c->n_series; k++)
        if (isfinite(c->value[k]) && c->roof[k].value > 0)
            range_add(yr, c->roof[k].value);
    return n_bars;
}

/* Pixels wide: room for every bar and, with many series, the key. */
static int bars_width(const kbi_bar_chart *c, int single)
{
    size_t S = c->n_series, G = c->n_groups;
    int width = single ? (int)(220 + 70 * S) : (int)(260 + 18 * G * S + 30 * G);
    if (!single && S > 4)
        width += 40 + 7 * (int)max_len(c->series, S);
    if (width < 800)
        width = 800;
    if (width > 2400)
        width = 2400;
    return width;
}

/* The x of bar (g, s): one group's bars side by side around g. */
static double bar_x(const kbi_bar_chart *c, size_t g, size_t s, double bar_w, int single)
{
    return single ? (double)s : (double)g + ((double)s - (double)(c->n_series - 1) / 2.0) * bar_w;
}

static int same_roof(const kbi_roof *a, const kbi_roof *b)
{
    return a->value == b->value && strcmp(a->label ? a->label : "", b->label ? b->label : "") == 0;
}

/* The bars' roofs: a dashed segment over each run of neighbouring bars of a group under one
 * roof, and each roof's label once, over its first segment: from its left end, or up to its
 * right end when the segment starts right of the middle (so it stays inside the plot). */
static void bars_roofs(kbi_buf *gp, const kbi_bar_chart *c, double bar_w, int single, double x_mid)
{
    size_t S = c->n_series;
    kbi_strlist labelled = {0};
    for (size_t g = 0; c->roof && g < c->n_groups; g++)
        for (size_t s = 0; s < S;) {
            const kbi_roof *r = &c->roof[g * S + s];
            size_t e = s;
            double x0, x1;
            if (!(r->value > 0) || !isfinite(c->value[g * S + s])) {
                s++;
                continue;
            }
            while (e + 1 < S && isfinite(c->value[g * S + e + 1]) &&
                   same_roof(&c->roof[g * S + e + 1], r))
                e++;
            x0 = bar_x(c, g, s, bar_w, single) - bar_w * 0.5;
            x1 = bar_x(c, g, e, bar_w, single) + bar_w * 0.5;
            kbi_buf_printf(gp,
                           "set arrow from first %.6f, first %.9g to first %.6f, first %.9g "
                           "nohead dt 2 lw 1.5 lc rgb '#555555' front\n",
                           x0, r->value, x1, r->value);
            if (r->label && *r->label && !kbi_strlist_has(&labelled, r->label)) {
                kbi_strlist_add(&labelled, r->label);
                kbi_buf_printf(gp, "set label ");
                gp_quote(gp, r->label);
                if (x0 < x_mid)
                    kbi_buf_printf(gp, " at first %.6f, first %.9g left offset 0.3,0.6", x0,
                                   r->value);
                else
                    kbi_buf_printf(gp, " at first %.6f, first %.9g right offset -0.3,0.6", x1,
                                   r->value);
                kbi_buf_printf(gp, " tc rgb '#444444' front\n");
            }
            s = e + 1;
        }
    kbi_strlist_free(&labelled);
}

/* The plot clauses of one series' block: its bars, their intervals, their labels. */
static void bars_clauses(kbi_buf *gp, const kbi_bar_chart *c, size_t s, size_t block, double bar_w,
                         int single, int *n_clauses)
{
    int color = c->color ? c->color[s] : (int)s;
    gp_next(gp, n_clauses);
    /* Past the palette's length colours repeat: hatch the repeats. */
    kbi_buf_printf(gp,
                   "'%s.dat' index %zu using 1:2:($1-%.6f):($1+%.6f):(bar_base):2 "
                   "with boxxyerror %s lc rgb '%s' title ",
                   c->stem, block, bar_w * 0.46, bar_w * 0.46,
                   (size_t)color < N_PALETTE ? "fs solid 0.85 noborder" : "fs pattern 4 border",
                   kbi_chart_color(color));
    gp_quote(gp, single ? "" : c->series[s]);
    if (c->low || c->high) {
        /* Error bars as plain vectors: gnuplot's yerrorbars leave a gap
         * around the (invisible) point at the bar's top. */
        double cap = bar_w * 0.12;
        gp_next(gp, n_clauses);
        kbi_buf_printf(gp,
                       "'' index %zu using 1:3:(0):($4-$3) with vectors nohead lc rgb "
                       "'#222222' lw 1.2 notitle",
                       block);
        for (int col = 3; col <= 4; col++) {
            gp_next(gp, n_clauses);
            kbi_buf_printf(gp,
                           "'' index %zu using ($1-%.6f):%d:(%.6f):(0) with vectors nohead lc "
                           "rgb '#222222' lw 1.2 notitle",
                           block, cap, col, 2 * cap);
        }
    }
    if (c->value_labels) {
        gp_next(gp, n_clauses);
        kbi_buf_printf(gp,
                       "'' index %zu using 1:4:(abs($2) >= 100 ? sprintf('%%.0f', $2) : "
                       "sprintf('%%.3g', $2)) with labels offset 0,0.8 font ',9' notitle",
                       block);
    }
}

/* The data block of series s (one line per bar); returns 0 when it has no bar. */
static int bars_block(kbi_buf *dat, const kbi_bar_chart *c, size_t s, size_t block, double bar_w,
                      int single)
{
    size_t S = c->n_series;
    int any = 0;
    for (size_t g = 0; g < c->n_groups; g++) {
        size_t k = g * S + s;
        double x = bar_x(c, g, s, bar_w, single);
        if (!isfinite(c->value[k]))
            continue;
        if (!any) {
            kbi_buf_printf(dat, "# series %zu: %s\n", block, c->series[s]);
            any = 1;
        }
        kbi_buf_printf(dat, "%.6f %.9g %.9g %.9g ", x, c->value[k],
                       c->low && isfinite(c->low[k]) ? c->low[k] : c->value[k],
                       c->high && isfinite(c->high[k]) ? c->high[k] : c->value[k]);
        dat_quote(dat, c->groups[g]);
        kbi_buf_printf(dat, "\n");
    }
    if (any)
        kbi_buf_printf(dat, "\n\n");
    return any;
}

int kbi_chart_bars(kbi_chart_ctx *ctx, const kbi_bar_chart *c, char *err)
{
    kbi_buf dat = {0}, gp = {0};
    range yr = {0};
    size_t S = c->n_series, G = c->n_groups, n_bars, block = 0;
    int single = G == 1, logy, width, height = 620, rc, n_clauses = 0;
    double bar_w, ylo, yhi, *tic_pos = NULL;
    const char *const *tic_labels;
    size_t n_tics;
    if (S == 0 || G == 0) {
        kbi_errf(err, "chart %s: nothing to draw, expected at least one series and group", c->stem);
        return KBI_ERR_INPUT;
    }
    n_bars = bars_range(c, &yr);
    logy = wants_log(&yr, 100.0);
    if (logy) {
        ylo = floor_decade(yr.min_pos / 1.2);
        yhi = yr.max * (c->value_labels ? 2.5 : 1.6);
    } else {
        ylo = 0;
        yhi = yr.any && yr.max > 0 ? yr.max * (c->value_labels ? 1.18 : 1.08) : 1.0;
    }
    width = bars_width(c, single);
    bar_w = single ? 0.7 : 0.8 / (double)S;
    n_tics = single ? S : G;
    tic_labels = single ? c->series : c->groups;
    tic_pos = kbi_xmalloc(n_tics * sizeof *tic_pos);
    for (size_t i = 0; i < n_tics; i++)
        tic_pos[i] = (double)i;

    /* Data: one block per series that has a bar. */
    kbi_buf_printf(&dat, "# %s\n# x value low high group\n", c->title);
    gp_begin(&gp, c->stem, c->title, width, height);
    kbi_buf_printf(&gp, "set ylabel ");
    gp_quote(&gp, c->ylabel ? c->ylabel : "");
    kbi_buf_printf(&gp, "\n");
    if (c->xlabel) {
        kbi_buf_printf(&gp, "set xlabel ");
        gp_quote(&gp, c->xlabel);
        kbi_buf_printf(&gp, "\n");
    }
    if (logy)
        kbi_buf_printf(&gp, "set logscale y 10\n");
    gp_axis(&gp, "y", ylo, yhi, logy ? 10 : 0);
    kbi_buf_printf(&gp, "set xrange [%.9g:%.9g]\n", -0.6, (double)n_tics - 0.4);
    gp_xtics(&gp, tic_pos, tic_labels, n_tics,
             width - 200 - (single ? 0 : 40 + 7 * (double)max_len(c->series, S)), -0.6,
             (double)n_tics - 0.4, 0);
    kbi_buf_printf(&gp, "set xtics scale 0\n");
    if (single)
        kbi_buf_printf(&gp, "unset key\n");
    else
        gp_key(&gp, S);
    if (c->reference > 0)
        gp_reference(&gp, c->reference, c->reference_label);
    bars_roofs(&gp, c, bar_w, single, ((double)n_tics - 1) / 2.0);
    kbi_buf_printf(&gp, "bar_base = %.9g  # bars start here (the bottom of a log axis)\n", ylo);
    for (size_t s = 0; s < S; s++)
        if (bars_block(&dat, c, s, block, bar_w, single))
            bars_clauses(&gp, c, s, block++, bar_w, single, &n_clauses);
    rc = end_chart(ctx, c->stem, n_bars, "value", &dat, &gp, width, height, err);
    free(tic_pos);
    return rc;
}

/* ---- lines ---- */

static void line_ranges(const kbi_line_series *series, size_t n, range *xr, range *yr)
{
    for (size_t s = 0; s < n; s++)
        for (size_t i = 0; i < series[s].n; i++) {
            if (!isfinite(series[s].y[i]) || !isfinite(series[s].x[i]))
                continue;
            range_add(xr, series[s].x[i]);
            range_add(yr, series[s].y[i]);
            if (series[s].low)
                range_add(yr, series[s].low[i]);
            if (series[s].high)
                range_add(yr, series[s].high[i]);
        }
}

/* Writes one block per series with points; returns how many. */
static size_t line_data(kbi_buf *dat, const kbi_line_series *series, size_t n, size_t *block_of)
{
    size_t block = 0;
    for (size_t s = 0; s < n; s++) {
        int any = 0;
        block_of[s] = (size_t)-1;
        for (size_t i = 0; i < series[s].n; i++) {
            const kbi_line_series *L = &series[s];
            if (!isfinite(L->y[i]) || !isfinite(L->x[i]))
                continue;
            if (!any)
                kbi_buf_printf(dat, "# series %zu: %s\n", block, L->name);
            any = 1;
            kbi_buf_printf(dat, "%.9g %.9g %.9g %.9g\n", L->x[i], L->y[i],
                           L->low && isfinite(L->low[i]) ? L->low[i] : L->y[i],
                           L->high && isfinite(L->high[i]) ? L->high[i] : L->y[i]);
        }
        if (any) {
            kbi_buf_printf(dat, "\n\n");
            block_of[s] = block++;
        }
    }
    return block;
}

/* Dash type: 2 (dashed) for the baseline; past the palette's length, where
 * colours repeat, dash-dot and dotted so the lines stay apart. */
static int line_dash(const kbi_line_series *L)
{
    static const int cycle[] = {1, 4, 3, 5};
    if (L->dashed)
        return 2;
    return cycle[((size_t)(L->color < 0 ? 0 : L->color) / N_PALETTE) % 4];
}

/* The plot clause of series L drawn from data block `block` in `style`
 * ("using ... with ..."); none when it has no block (no point). */
static void series_clause(kbi_buf *gp, int *n_clauses, const char *stem, size_t block,
                          const char *style, const kbi_line_series *L)
{
    if (block == (size_t)-1)
        return;
    gp_next(gp, n_clauses);
    kbi_buf_printf(gp, "'%s.dat' index %zu %s lc rgb '%s' title ", stem, block, style,
                   kbi_chart_color(L->color));
    gp_quote(gp, L->name);
}

/* Dashed horizontal lines across the plot, each labelled at its right end. */
static void gp_roofs(kbi_buf *gp, const kbi_roof *roofs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (roofs[i].value > 0)
            gp_reference(gp, roofs[i].value, roofs[i].label);
}

/* The axes of a line chart: x and y ranges and scales, with readable tics. */
static void lines_axes(kbi_buf *gp, const kbi_line_chart *c, const range *xr, const range *yr,
                       int width)
{
    int logx = wants_log(xr, 10.0) && xr->min > 0;
    int logy = wants_log(yr, 10.0) && (!c->fit_y || yr->min > 0);
    double xlo = 0, xhi = 0, ylo = 0, yhi = 0;
    if (logx) {
        xlo = xr->min_pos / 1.4;
        xhi = xr->max * 1.4;
        kbi_buf_printf(gp, "set logscale x 2\n");
    } else if (xr->any) {
        double lo = xr->min < 0 ? xr->min : xr->min_pos;
        double pad = (xr->max - lo) * 0.05 + (xr->max == lo ? 1 : 0);
        xlo = lo - pad;
        xhi = xr->max + pad;
    }
    if (logy) {
        ylo = floor_decade(yr->min_pos / 1.2);
        yhi = yr->max * 1.6;
        kbi_buf_printf(gp, "set logscale y 10\n");
    } else if (yr->any && c->fit_y) {
        /* A figure such as a moment ratio or an energy: the data's own
         * range, which may lie far from 0 or below it. */
        double span = yr->max - yr->min;
        double pad = span > 0 ? span * 0.08 : fabs(yr->max) * 0.1 + 1e-12;
        ylo = yr->min - pad;
        yhi = yr->max + pad;
    } else if (yr->any) {
        yhi = yr->max > 0 ? yr->max * 1.1 : 1.0;
    }
    if (yr->any)
        gp_axis(gp, "y", ylo, yhi, logy ? 10 : 0);
    if (xr->any && c->n_xtics && c->xtic_values && c->xtic_labels) {
        /* the data's own values as tics */
        gp_range(gp, "x", xlo, xhi, logx);
        gp_xtics(gp, c->xtic_values, c->xtic_labels, c->n_xtics, width - 260, xlo, xhi, logx);
    } else if (xr->any) {
        gp_axis(gp, "x", xlo, xhi, logx ? 2 : 0);
    }
}

int kbi_chart_lines(kbi_chart_ctx *ctx, const kbi_line_chart *c, char *err)
{
    kbi_buf dat = {0}, gp = {0};
    range xr = {0}, yr = {0};
    size_t *block_of = NULL, n_blocks;
    int width = 1100, height = 640, rc, n_clauses = 0;
    if (c->n_series == 0) {
        kbi_errf(err, "chart %s: nothing to draw, expected at least one series", c->stem);
        return KBI_ERR_INPUT;
    }
    if (c->n_series > 4) {
        size_t longest = 0;
        for (size_t s = 0; s < c->n_series; s++)
            if (strlen(c->series[s].name) > longest)
                longest = strlen(c->series[s].name);
        width += 80 + 8 * (int)longest;
    }
    line_ranges(c->series, c->n_series, &xr, &yr);
    if (c->reference > 0)
        range_add(&yr, c->reference);
    for (size_t i = 0; i < c->n_roofs; i++)
        if (c->roofs[i].value > 0)
            range_add(&yr, c->roofs[i].value);
    block_of = kbi_xcalloc(c->n_series, sizeof *block_of);
    kbi_buf_printf(&dat, "# %s\n# x y low high\n", c->title);
    n_blocks = line_data(&dat, c->series, c->n_series, block_of);
    gp_begin(&gp, c->stem, c->title, width, height);
    kbi_buf_printf(&gp, "set xlabel ");
    gp_quote(&gp, c->xlabel ? c->xlabel : "");
    kbi_buf_printf(&gp, "\nset ylabel ");
    gp_quote(&gp, c->ylabel ? c->ylabel : "");
    kbi_buf_printf(&gp, "\n");
    lines_axes(&gp, c, &xr, &yr, width);
    gp_key(&gp, c->n_series);
    if (c->reference > 0)
        gp_reference(&gp, c->reference, c->reference_label);
    gp_roofs(&gp, c->roofs, c->n_roofs);
    for (size_t s = 0; s < c->n_series; s++) {
        char style[96];
        if (c->points_only)
            snprintf(style, sizeof style, "using 1:2:3:4 with yerrorbars lw 1.5 pt 7 ps 1.3");
        else
            snprintf(style, sizeof style, "using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.1 dt %d",
                     line_dash(&c->series[s]));
        series_clause(&gp, &n_clauses, c->stem, block_of[s], style, &c->series[s]);
    }
    rc = end_chart(ctx, c->stem, n_blocks, "point", &dat, &gp, width, height, err);
    free(block_of);
    return rc;
}

/* ---- roofline ---- */

/* The roofline's ceilings, set before the plot: the bandwidth and each compute peak as
 * variables, each peak's label above its roof and a dotted ridge, and the memory roof's label
 * left of the lowest ridge, where its slope is under every roof. */
static void roofline_labels(kbi_buf *gp, const kbi_roofline *c, double xlo, double xhi)
{
    double bw = c->bandwidth_gbs > 0 ? c->bandwidth_gbs : 0, low_ridge = 0;
    kbi_buf_printf(gp, "bandwidth_gbs = %.9g  # memory ceiling (GB/s)\n", bw);
    for (size_t i = 0; i < c->n_peaks; i++) {
        double peak = c->peaks[i].value, ridge = bw > 0 ? peak / bw : 0;
        if (!(peak > 0))
            continue;
        kbi_buf_printf(gp, "peak_%zu = %.9g  # compute ceiling (GFLOP/s)\n", i, peak);
        /* Written on the chart, above the roof where no point can be, so the key stays
         * short. */
        kbi_buf_printf(gp, "set label ");
        gp_quote(gp, c->peaks[i].label ? c->peaks[i].label : "compute");
        kbi_buf_printf(gp, " at graph 0.98, first %.9g right offset 0,0.7 tc rgb '#333333'\n",
                       peak);
        if (ridge > 0) {
            kbi_buf_printf(gp,
                           "set arrow from %.9g, graph 0 to %.9g, first %.9g nohead dt 3 lc rgb "
                           "'#777777'\n",
                           ridge, ridge, peak);
            kbi_buf_printf(gp,
                           "set label sprintf('ridge %%.3g FLOP/byte', peak_%zu/bandwidth_gbs) "
                           "at %.9g, graph %.2f left offset 0.5,0 tc rgb '#555555'\n",
                           i, ridge, 0.04 + 0.05 * (double)i);
            if (low_ridge == 0 || ridge < low_ridge)
                low_ridge = ridge;
        }
    }
    if (bw > 0) {
        double xm = low_ridge > 0 ? sqrt(xlo * low_ridge) : sqrt(xlo * xhi);
        kbi_buf_printf(gp,
                       "set label sprintf('memory %%.0f GB/s', bandwidth_gbs) at %.9g, first "
                       "%.9g right offset -0.5,0.7 tc rgb '#333333'\n",
                       xm, bw * xm);
    }
}

/* The roofs' plot clauses: each compute roof min(bandwidth * x, peak) in its own dash, only
 * the memory roof when there is no peak; the first is titled in the key. */
static void roofline_clauses(kbi_buf *gp, const kbi_roofline *c, int *n_clauses)
{
    static const int dash[] = {1, 4, 5, 3};
    const char *src = c->ceiling_source && *c->ceiling_source ? c->ceiling_source : "";
    char title[256];
    int titled = 0, bw = c->bandwidth_gbs > 0;
    snprintf(title, sizeof title, "%s%s%s%s", c->n_peaks > 1 ? "roofs" : "roof", *src ? " (" : "",
             src, *src ? ")" : "");
    for (size_t i = 0; i < c->n_peaks; i++) {
        if (!(c->peaks[i].value > 0))
            continue;
        gp_next(gp, n_clauses);
        if (bw)
            kbi_buf_printf(gp, "(bandwidth_gbs*x < peak_%zu ? bandwidth_gbs*x : peak_%zu)", i, i);
        else
            kbi_buf_printf(gp, "peak_%zu", i);
        kbi_buf_printf(gp, " lw 2.5 dt %d lc rgb '#333333' ", dash[i % 4]);
        if (titled) {
            kbi_buf_printf(gp, "notitle");
        } else {
            kbi_buf_printf(gp, "title ");
            gp_quote(gp, title);
        }
        titled = 1;
    }
    if (bw && !titled) {
        gp_next(gp, n_clauses);
        kbi_buf_printf(gp, "bandwidth_gbs*x lw 2.5 lc rgb '#333333' title ");
        gp_quote(gp, title);
    }
}

int kbi_chart_roofline(kbi_chart_ctx *ctx, const kbi_roofline *c, char *err)
{
    kbi_buf dat = {0}, gp = {0};
    range xr = {0}, yr = {0};
    size_t *block_of = NULL, n_blocks;
    int width = 1100, height = 680, rc, n_clauses = 0;
    double bw = c->bandwidth_gbs > 0 ? c->bandwidth_gbs : 0;
    double xlo, xhi, ylo, yhi;
    if (c->n_series == 0) {
        kbi_errf(err, "chart %s: nothing to draw, expected at least one series", c->stem);
        return KBI_ERR_INPUT;
    }
    line_ranges(c->series, c->n_series, &xr, &yr);
    for (size_t i = 0; i < c->n_peaks; i++)
        if (c->peaks[i].value > 0) {
            range_add(&yr, c->peaks[i].value);
            if (bw > 0)
                range_add(&xr, c->peaks[i].value / bw);
        }
    if (!xr.any || xr.min_pos <= 0 || !yr.any || yr.min_pos <= 0) {
        kbi_errf(err, "chart %s: no point with positive intensity and rate", c->stem);
        return KBI_ERR_INPUT;
    }
    xlo = floor_decade(xr.min_pos / 2.0);
    xhi = ceil_decade(xr.max * 2.0);
    ylo = floor_decade(yr.min_pos / 2.0);
    yhi = yr.max * 2.5;
    block_of = kbi_xcalloc(c->n_series, sizeof *block_of);
    kbi_buf_printf(&dat, "# %s\n# intensity_flop_per_byte gflops low high\n", c->title);
    n_blocks = line_data(&dat, c->series, c->n_series, block_of);
    gp_begin(&gp, c->stem, c->title, width, height);
    kbi_buf_printf(&gp, "set xlabel 'arithmetic intensity (FLOP/byte)'\n"
                        "set ylabel 'achieved GFLOP/s'\n"
                        "set logscale xy 10\n"
                        "set grid xtics mxtics lc rgb '#e4e4e4' lt 1, lc rgb '#f2f2f2' lt 1\n"
                        "set samples 600\n");
    gp_axis(&gp, "x", xlo, xhi, 10);
    gp_axis(&gp, "y", ylo, yhi, 10);
    gp_key(&gp, c->n_series + 1);
    roofline_labels(&gp, c, xlo, xhi);
    roofline_clauses(&gp, c, &n_clauses);
    for (size_t s = 0; s < c->n_series; s++) {
        char style[96];
        snprintf(style, sizeof style, "using 1:2 with points pt %d ps 1.6",
                 point_types[s % N_POINT_TYPES]);
        series_clause(&gp, &n_clauses, c->stem, block_of[s], style, &c->series[s]);
    }
    rc = end_chart(ctx, c->stem, n_blocks, "point", &dat, &gp, width, height, err);
    free(block_of);
    return rc;
}
