/* report.html in a real browser: headless Chromium (Debian's `chromium`, or
 * $KBENCH_CHROMIUM) opens the report of the committed sgemm reference with
 * its comparison, logs no console message (an uncaught error, a refused
 * load), runs the page's script to its end (data-kb-ready), sorts and
 * filters a table as a user's clicks would, and draws the charts: a
 * screenshot holds the charts' colours, which the same page without charts
 * does not.  Skips with the reason where Chromium, gnuplot or libpng is
 * absent, unless KBENCH_REQUIRE_BROWSER is set (CI: .ci/run installs them
 * with `scripts/deps.sh browser`). */
#define _GNU_SOURCE /* memmem */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "chart.h"
#include "report.h"
#include "resultset.h"
#include "helpers.h"

#if KBENCH_TEST_HAVE_PNG
#include <png.h>
#endif

/* Colourful pixels (largest minus smallest channel at least this): the charts' palette; the
 * rest of the page is grey, black and white but for links and a warning's border. */
#define COLOURFUL 100
/* Measured on the sgemm reference's page at 1280x2400: 101,068 colourful pixels with its
 * charts, 464 without (--no-charts).  The bounds sit an order of magnitude inside both. */
#define CHART_PIXELS_AT_LEAST 10000
#define PAGE_PIXELS_AT_MOST 5000

static char chromium[4096];

static void make_tmp(void)
{
    make_tmp_named("report-browser");
}

/* Skips with why, or fails where the browser test must run (KBENCH_REQUIRE_BROWSER). */
static void cannot_run(const char *why)
{
    const char *required = getenv("KBENCH_REQUIRE_BROWSER");
    if (required && *required)
        cr_assert_fail("KBENCH_REQUIRE_BROWSER is set but %s", why);
    cr_skip_test("%s", why);
}

static void need_browser(void)
{
    char err[KBI_ERR_SIZE], why[KBI_ERR_SIZE + 200], gnuplot[4096];
    if (kbi_find_tool("chromium", "KBENCH_CHROMIUM", chromium, sizeof chromium, err) != KBI_OK) {
        snprintf(why, sizeof why,
                 "no browser: %s; apt-get install chromium, or set "
                 "KBENCH_CHROMIUM to a Chrome",
                 err);
        cannot_run(why);
    }
    if (kbi_gnuplot_find(gnuplot, sizeof gnuplot) != KBI_OK)
        cannot_run("gnuplot is not on PATH (install gnuplot-nox): no charts to look at");
}

/* kbench report of the sgemm reference (with its comparison) into tmp/name. */
static void write_report(const char *name, int no_charts)
{
    kbi_result_set set = {0};
    char err[KBI_ERR_SIZE] = "", out[512], ref[4096], compare[4200];
    const char *inputs[] = {ref};
    kbi_report_options opt = {.no_charts = no_charts, .compare = compare};
    snprintf(ref, sizeof ref, "%s/baselines/h200/sgemm", KBENCH_TEST_SOURCE_DIR);
    snprintf(compare, sizeof compare, "%s/compare-previous.md", ref);
    cr_assert_eq(kbi_results_load_inputs(&set, inputs, 1, err), KBI_OK, "%s", err);
    snprintf(out, sizeof out, "%s/%s", tmp, name);
    cr_assert_eq(kbi_report_write(&set, out, &opt, err), KBI_OK, "%s", err);
    kbi_results_free(&set);
}

/* Runs headless Chromium on tmp/page with the action (--dump-dom, --screenshot=...); returns
 * its stdout (caller frees).  Fails on a console message: the page logs none. */
static char *browse(const char *page, const char *action)
{
    char cmd[16384], log[600], *out, *logged;
    kbi_buf b = {0};
    size_t n;
    FILE *p;
    snprintf(log, sizeof log, "%s/chromium.log", tmp);
    snprintf(cmd, sizeof cmd,
             "timeout 120 '%s' --headless --disable-gpu --no-sandbox --disable-dev-shm-usage "
             "--no-first-run --user-data-dir='%s/profile' --hide-scrollbars "
             "--window-size=1280,2400 --enable-logging=stderr --v=0 %s 'file://%s/%s' 2>'%s'",
             chromium, tmp, action, tmp, page, log);
    cr_assert_not_null(p = popen(cmd, "r"), "%s", cmd);
    kbi_buf_printf(&b, "%s", "");
    char chunk[65536];
    while ((n = fread(chunk, 1, sizeof chunk, p)) > 0)
        kbi_buf_printf(&b, "%.*s", (int)n, chunk);
    out = b.data;
    int status = pclose(p);
    logged = slurp(log);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s exited %d:\n%s", cmd,
              WIFEXITED(status) ? WEXITSTATUS(status) : -1, logged);
    /* Console messages go to stderr as "...:CONSOLE:LINE] "message", source: URL". */
    const char *console = strstr(logged, ":CONSOLE");
    cr_assert_null(console, "the page logged to the console: %.*s", (int)strcspn(console, "\n"),
                   console);
    free(logged);
    return out;
}

/* The page with a probe after its script: as a user would, it picks variant cublas and
 * counts the rows left in the first point's table, then sorts that table by its median,
 * twice, and writes what it saw into <body data-probe="...">. */
static void write_probe(void)
{
    static const char probe[] =
        "<script>\n"
        "(function () {\n"
        "  var sel = document.querySelector('select[data-key=\"variant\"]'), out = [];\n"
        "  var h = [].find.call(document.querySelectorAll('#plugin-sgemm h3'),\n"
        "    function (x) { return x.textContent === 'shape=1024x1024x1024'; });\n"
        "  var table = h.nextElementSibling.querySelector('table');\n"
        "  var th = [].find.call(table.tHead.rows[0].cells,\n"
        "    function (c) { return c.textContent === 'median'; });\n"
        "  function visible() { return [].filter.call(table.tBodies[0].rows,\n"
        "    function (r) { return !r.hidden; }).length; }\n"
        "  function order() { return [].map.call(table.tBodies[0].rows,\n"
        "    function (r) { return r.cells[0].textContent.split(' ')[0]; }).join(','); }\n"
        "  sel.value = 'cublas';\n"
        "  sel.dispatchEvent(new Event('change'));\n"
        "  out.push(visible());\n"
        "  document.getElementById('kb-clear').click();\n"
        "  out.push(visible());\n"
        "  th.click();\n"
        "  out.push(order());\n"
        "  th.click();\n"
        "  out.push(order());\n"
        "  document.body.setAttribute('data-probe', out.join('|'));\n"
        "})();\n"
        "</script>\n</body>";
    char path[600], *html, *end;
    FILE *f;
    snprintf(path, sizeof path, "%s/rep/report.html", tmp);
    html = slurp(path);
    cr_assert_not_null(end = strstr(html, "</body>"));
    snprintf(path, sizeof path, "%s/rep/probe.html", tmp);
    cr_assert_not_null(f = fopen(path, "w"));
    fprintf(f, "%.*s%s%s", (int)(end - html), html, probe, end + 7);
    fclose(f);
    free(html);
}

/* The variants of the reference at shape=1024x1024x1024, fastest first; returns how many. */
static size_t fastest_first(char *out, size_t n)
{
    kbi_result_set set = {0};
    char err[KBI_ERR_SIZE], ref[4096];
    const char *inputs[] = {ref};
    const kbi_case_result *at[64];
    size_t k = 0;
    snprintf(ref, sizeof ref, "%s/baselines/h200/sgemm", KBENCH_TEST_SOURCE_DIR);
    cr_assert_eq(kbi_results_load_inputs(&set, inputs, 1, err), KBI_OK, "%s", err);
    for (size_t i = 0; i < set.n_cases && k < 64; i++)
        if (strstr(set.cases[i].id, "/shape=1024x1024x1024,"))
            at[k++] = &set.cases[i];
    for (size_t i = 1; i < k; i++) /* insertion sort by median */
        for (size_t j = i; j > 0 && at[j]->stats.median < at[j - 1]->stats.median; j--) {
            const kbi_case_result *t = at[j];
            at[j] = at[j - 1];
            at[j - 1] = t;
        }
    out[0] = '\0';
    for (size_t i = 0; i < k; i++)
        snprintf(out + strlen(out), n - strlen(out), "%s%s", i ? "," : "", at[i]->variant);
    kbi_results_free(&set);
    return k;
}

Test(report_browser, the_page_runs_without_errors_sorts_and_filters, .init = make_tmp,
     .fini = remove_tmp)
{
    char want[2048], reversed[2048] = "", probe[4096], *dom, *attr;
    need_browser();
    write_report("rep", 0);
    dom = browse("rep/report.html", "--dump-dom");
    cr_assert_not_null(attr = strstr(dom, "data-kb-ready=\""), "the page's script ran to its end");
    cr_assert_gt(atoi(attr + 15), 100, "its tables' rows are filterable");
    cr_assert(strstr(dom, "<option value=\"same\">same</option>") != NULL, "a verdict to pick");
    cr_assert(strstr(dom, "<option value=\"tf32x3\">tf32x3</option>") != NULL, "a variant to pick");
    cr_assert_not_null(attr = strstr(dom, "id=\"kb-tools\""));
    cr_assert_null(memmem(attr, strcspn(attr, ">"), "hidden", 6), "the filter bar is shown");
    free(dom);

    write_probe();
    dom = browse("rep/probe.html", "--dump-dom");
    cr_assert_not_null(attr = strstr(dom, "data-probe=\""), "the probe ran");
    snprintf(probe, sizeof probe, "%.*s", (int)strcspn(attr + 12, "\""), attr + 12);
    size_t variants = fastest_first(want, sizeof want);
    for (char *v = want + strlen(want);; v--) { /* the order reversed: the second click */
        if (v == want || v[-1] == ',') {
            snprintf(reversed + strlen(reversed), sizeof reversed - strlen(reversed), "%s%.*s",
                     reversed[0] ? "," : "", (int)strcspn(v, ","), v);
            if (v == want)
                break;
        }
    }
    char expected[8192];
    snprintf(expected, sizeof expected, "1|%zu|%s|%s", variants, want, reversed);
    cr_assert_str_eq(probe, expected,
                     "variant cublas leaves 1 row, showing all brings back %zu, "
                     "median sorts fastest first then slowest first",
                     variants);
    free(dom);
}

#if KBENCH_TEST_HAVE_PNG
/* Colourful pixels of the PNG at path (and its size). */
static size_t colourful_pixels(const char *path, png_uint_32 *width, png_uint_32 *height)
{
    png_image image = {.version = PNG_IMAGE_VERSION};
    png_bytep px;
    size_t count = 0;
    cr_assert(png_image_begin_read_from_file(&image, path), "%s: %s", path, image.message);
    image.format = PNG_FORMAT_RGB;
    px = malloc(PNG_IMAGE_SIZE(image));
    cr_assert(png_image_finish_read(&image, NULL, px, 0, NULL), "%s: %s", path, image.message);
    for (size_t i = 0; i < (size_t)image.width * image.height; i++) {
        int r = px[3 * i], g = px[3 * i + 1], b = px[3 * i + 2];
        int hi = r > g ? (r > b ? r : b) : (g > b ? g : b),
            lo = r < g ? (r < b ? r : b) : (g < b ? g : b);
        count += hi - lo >= COLOURFUL;
    }
    *width = image.width;
    *height = image.height;
    free(px);
    return count;
}
#endif

Test(report_browser, a_screenshot_shows_the_charts, .init = make_tmp, .fini = remove_tmp)
{
#if KBENCH_TEST_HAVE_PNG
    char action[700], path[600];
    png_uint_32 w, h;
    size_t with, without;
    need_browser();
    write_report("rep", 0);
    write_report("plain", 1);
    snprintf(path, sizeof path, "%s/charts.png", tmp);
    snprintf(action, sizeof action, "--screenshot='%s'", path);
    free(browse("rep/report.html", action));
    with = colourful_pixels(path, &w, &h);
    cr_assert(w == 1280 && h == 2400, "screenshot of %ux%u", (unsigned)w, (unsigned)h);
    snprintf(path, sizeof path, "%s/plain.png", tmp);
    snprintf(action, sizeof action, "--screenshot='%s'", path);
    free(browse("plain/report.html", action));
    without = colourful_pixels(path, &w, &h);
    cr_assert_geq(with, CHART_PIXELS_AT_LEAST, "the charts are drawn: %zu colourful pixels", with);
    cr_assert_leq(without, PAGE_PIXELS_AT_MOST,
                  "without charts the page is grey and white: %zu colourful pixels", without);
#else
    cannot_run("libpng was not found when the tests were configured (apt-get install "
               "libpng-dev): the screenshot cannot be read");
#endif
}
