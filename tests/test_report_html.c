/* Tests of report.html (report_html.c, report_html_md.c, report_html_svg.c,
 * report_html_tips.c) on the committed sgemm reference (baselines/h200/sgemm,
 * with the comparison beside it) and on tests/data: every heading, table row
 * and chart of report.md is in the page, in order; the page stands alone
 * (nothing fetched, no link off it); its elements are closed in order and
 * its ids unique (several charts in one page); text from results is
 * escaped; the charts carry their values as hover text; --no-charts still
 * writes it.  tests/test_report_browser.c opens it in Chromium. */
#define _XOPEN_SOURCE 700
#include <criterion/criterion.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chart.h"
#include "format.h"
#include "report.h"
#include "report_html_md.h"
#include "resultset.h"
#include "helpers.h"

#define DATA KBENCH_TEST_DATA
#define SEP "\x1f" /* between the cells of a row, as the tests below join them */

static void make_tmp(void)
{
    make_tmp_named("report-html");
}

static void need_gnuplot(void)
{
    char path[4096];
    if (kbi_gnuplot_find(path, sizeof path) != KBI_OK)
        cr_skip_test("gnuplot is not on PATH (install gnuplot-nox to test the charts)");
}

/* kbench report of input into tmp/rep; report.md and report.html into *md, *html. */
static void write_report(const char *input, kbi_report_options *opt, char **md, char **html)
{
    kbi_result_set set = {0};
    char err[KBI_ERR_SIZE] = "", out[512], path[600];
    const char *inputs[] = {input};
    cr_assert_eq(kbi_results_load_inputs(&set, inputs, 1, err), KBI_OK, "%s", err);
    snprintf(out, sizeof out, "%s/rep", tmp);
    cr_assert_eq(kbi_report_write(&set, out, opt, err), KBI_OK, "%s", err);
    kbi_results_free(&set);
    snprintf(path, sizeof path, "%s/report.md", out);
    *md = slurp(path);
    snprintf(path, sizeof path, "%s/report.html", out);
    *html = slurp(path);
}

/* b's text trimmed, as a string of its own (b is freed). */
static char *trimmed(kbi_buf *b)
{
    char *t = kbi_strdup(kbi_trim(b->data));
    kbi_buf_free(b);
    return t;
}

/* The text of HTML s[0, n): tags dropped, the references the page uses decoded, trimmed. */
static char *html_text(const char *s, size_t n)
{
    static const char *const refs[][2] = {
        {"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}, {"&quot;", "\""}, {"&#39;", "'"}};
    kbi_buf b = {0};
    kbi_buf_printf(&b, "%s", "");
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        if (s[i] == '<') {
            while (i < n && s[i] != '>')
                i++;
            continue;
        }
        for (; k < 5 && strncmp(s + i, refs[k][0], strlen(refs[k][0])) != 0; k++)
            ;
        if (k < 5) {
            kbi_buf_printf(&b, "%s", refs[k][1]);
            i += strlen(refs[k][0]) - 1;
        } else {
            kbi_buf_printf(&b, "%c", s[i]);
        }
    }
    return trimmed(&b);
}

/* The text a reader sees of Markdown s[0, n): code ticks, ** and link targets dropped, \| a
 * pipe, &lt; a <, trimmed. */
static char *md_text(const char *s, size_t n)
{
    kbi_buf b = {0};
    const char *link_end = NULL;
    kbi_buf_printf(&b, "%s", "");
    for (size_t i = 0; i < n; i++) {
        const char *close;
        if (link_end && s + i == link_end) { /* "](target)" */
            i = (size_t)(strchr(link_end, ')') - s);
            link_end = NULL;
        } else if (s[i] == '[' && !link_end && (close = strstr(s + i, "](")) != NULL &&
                   close < s + n && !memchr(s + i + 1, ']', (size_t)(close - s - i - 1)) &&
                   !memchr(s + i + 1, '[', (size_t)(close - s - i - 1))) {
            link_end = close;
        } else if (s[i] == '`' || (s[i] == '*' && i + 1 < n && s[i + 1] == '*')) {
            i += s[i] == '*';
        } else if (s[i] == '\\' && i + 1 < n && s[i + 1] == '|') {
            kbi_buf_printf(&b, "|");
            i++;
        } else if (strncmp(s + i, "&lt;", 4) == 0) {
            kbi_buf_printf(&b, "<");
            i += 3;
        } else {
            kbi_buf_printf(&b, "%c", s[i]);
        }
    }
    return trimmed(&b);
}

/* report.md's headings and table rows (cells joined by SEP, delimiter rows left out), in
 * order, and the stems of the charts it shows. */
static void md_parts(const char *md, kbi_strlist *headings, kbi_strlist *rows, kbi_strlist *charts)
{
    for (const char *line = md; *line;) {
        size_t n = strcspn(line, "\n");
        if (line[0] == '#') {
            size_t k = strspn(line, "#");
            char *t = md_text(line + k, n - k);
            kbi_strlist_add(headings, t);
            free(t);
        } else if (line[0] == '|' && strspn(line, "|-: ") < n) {
            kbi_buf row = {0};
            kbi_buf_printf(&row, "%s", "");
            for (size_t i = 1, start = 1; i < n; i++) {
                if (line[i] != '|' || line[i - 1] == '\\')
                    continue;
                char *t = md_text(line + start, i - start);
                kbi_buf_printf(&row, "%s%s", start > 1 ? SEP : "", t);
                free(t);
                start = i + 1;
            }
            kbi_strlist_add(rows, row.data);
            kbi_buf_free(&row);
        } else if (strncmp(line, "![", 2) == 0) {
            const char *src = strstr(line, "](charts/");
            cr_assert_not_null(src, "%.*s", (int)n, line);
            src += 9;
            char stem[512];
            snprintf(stem, sizeof stem, "%.*s", (int)(strstr(src, ".png)") - src), src);
            kbi_strlist_add(charts, stem);
        }
        line += n + (line[n] == '\n');
    }
}

/* The same of report.html's <main>: <hN> texts, <tr> rows, <figure id="chart-STEM"> stems
 * (each holding an <svg>). */
static void html_parts(const char *html, kbi_strlist *headings, kbi_strlist *rows,
                       kbi_strlist *charts)
{
    const char *p = strstr(html, "<main>"), *end = strstr(html, "</main>");
    cr_assert(p && end && p < end, "report.html has one <main>");
    while (p < end && (p = strchr(p + 1, '<')) != NULL && p < end) {
        char close[8];
        if (p[1] == 'h' && isdigit((unsigned char)p[2]) && p[3] == '>') {
            const char *stop;
            snprintf(close, sizeof close, "</h%c>", p[2]);
            stop = strstr(p, close);
            char *t = html_text(p + 4, (size_t)(stop - p - 4));
            kbi_strlist_add(headings, t);
            free(t);
        } else if (strncmp(p, "<tr>", 4) == 0) {
            const char *stop = strstr(p, "</tr>"), *c = p;
            kbi_buf row = {0};
            kbi_buf_printf(&row, "%s", "");
            for (int first = 1; (c = strstr(c + 1, "<t")) != NULL && c < stop; first = 0) {
                const char *open_end = strchr(c, '>') + 1, *cell_end = strstr(open_end, "</t");
                char *t = html_text(open_end, (size_t)(cell_end - open_end));
                kbi_buf_printf(&row, "%s%s", first ? "" : SEP, t);
                free(t);
                c = cell_end;
            }
            kbi_strlist_add(rows, row.data);
            kbi_buf_free(&row);
        } else if (strncmp(p, "<figure id=\"chart-", 18) == 0) {
            const char *q = strchr(p + 18, '"'), *fig_end = strstr(p, "</figure>");
            char stem[512];
            snprintf(stem, sizeof stem, "%.*s", (int)(q - p - 18), p + 18);
            cr_assert(strstr(p, "<svg") && strstr(p, "<svg") < fig_end, "chart %s has its SVG",
                      stem);
            kbi_strlist_add(charts, stem);
        }
    }
}

static void expect_same(const kbi_strlist *md, const kbi_strlist *html, const char *what)
{
    for (size_t i = 0; i < md->n && i < html->n; i++)
        cr_assert_str_eq(html->s[i], md->s[i], "%s %zu of report.html differs from report.md's",
                         what, i + 1);
    cr_assert_eq(html->n, md->n, "report.md has %zu %s, report.html %zu", md->n, what, html->n);
}

/* Every heading, table row and chart of report.md is in report.html, in the same order. */
static void expect_same_content(const char *md, const char *html)
{
    kbi_strlist mh = {0}, mr = {0}, mc = {0}, hh = {0}, hr = {0}, hc = {0};
    md_parts(md, &mh, &mr, &mc);
    html_parts(html, &hh, &hr, &hc);
    expect_same(&mh, &hh, "headings");
    expect_same(&mr, &hr, "table rows");
    expect_same(&mc, &hc, "charts");
    kbi_strlist *all[] = {&mh, &mr, &mc, &hh, &hr, &hc};
    for (size_t i = 0; i < 6; i++)
        kbi_strlist_free(all[i]);
}

static int is_void(const char *name, size_t n)
{
    static const char *const names[] = {"meta", "br", "img", "input", "link", "hr", "wbr"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (n == strlen(names[i]) && strncmp(name, names[i], n) == 0)
            return 1;
    return 0;
}

/* Fails unless every element of html is closed in the order it was opened (void elements and
 * <x/> aside; <script> and <style> hold text) and no two elements share an id. */
static void expect_well_formed(const char *html)
{
    const char *stack[512], *p = html, *counted = html;
    size_t len[512], depth = 0, line = 1;
    kbi_strlist ids = {0};
    while ((p = strchr(p, '<')) != NULL) {
        const char *gt, *name, *at;
        size_t n;
        char quote = 0;
        for (; counted < p; counted++)
            line += *counted == '\n';
        if (strncmp(p, "<!", 2) == 0) {
            p = strncmp(p, "<!--", 4) == 0 ? strstr(p, "-->") : strchr(p, '>');
            cr_assert_not_null(p, "line %zu: <! never ends", line);
            continue;
        }
        for (gt = p + 1; *gt && (quote || *gt != '>'); gt++)
            quote = quote ? (*gt == quote ? 0 : quote) : (*gt == '"' || *gt == '\'') ? *gt : 0;
        cr_assert(*gt, "line %zu: a tag never ends", line);
        name = p + 1 + (p[1] == '/');
        n = strcspn(name, " \t\n/>");
        if (p[1] == '/') {
            cr_assert(depth > 0 && len[depth - 1] == n && strncmp(stack[depth - 1], name, n) == 0,
                      "line %zu: </%.*s> closes <%.*s>", line, (int)n, name,
                      depth ? (int)len[depth - 1] : 0, depth ? stack[depth - 1] : "");
            depth--;
        } else if (gt[-1] != '/' && !is_void(name, n)) {
            cr_assert_lt(depth, 512);
            stack[depth] = name;
            len[depth++] = n;
        }
        for (at = p; (at = strstr(at, " id=\"")) != NULL && at < gt; at++) {
            char id[512];
            snprintf(id, sizeof id, "%.*s", (int)strcspn(at + 5, "\""), at + 5);
            for (size_t i = 0; i < ids.n; i++)
                cr_assert_str_neq(ids.s[i], id, "line %zu: id \"%s\" twice", line, id);
            kbi_strlist_add(&ids, id);
        }
        p = gt + 1;
        if ((n == 6 && strncmp(name, "script", 6) == 0) ||
            (n == 5 && strncmp(name, "style", 5) == 0))
            if (p[-2] != '/' && name[-1] != '/')
                p = strstr(p, n == 6 ? "</script>" : "</style>");
        cr_assert_not_null(p, "line %zu: <%.*s> never ends", line, (int)n, name);
    }
    cr_assert_eq(depth, 0, "<%.*s> is never closed", depth ? (int)len[depth - 1] : 0,
                 depth ? stack[depth - 1] : "");
    kbi_strlist_free(&ids);
}

/* Nothing is fetched and no link leads off the page. */
static void expect_self_contained(const char *html)
{
    static const char *const never[] = {"http://", "https://", "src=",   "<link", "@import",
                                        "<iframe", "<object",  "<embed", "//cdn"};
    for (size_t i = 0; i < sizeof never / sizeof never[0]; i++)
        cr_assert_null(strstr(html, never[i]), "report.html holds %s", never[i]);
    for (const char *u = html; (u = strstr(u, "url(")) != NULL; u++)
        cr_assert_eq(u[4], '#', "a url() to something other than the page: %.40s", u);
    for (const char *h = html; (h = strstr(h, "href=\"")) != NULL; h++) {
        size_t n = strcspn(h + 6, "\"");
        cr_assert(h[6] == '#' || (h[6] != '/' && !memchr(h + 6, ':', n)),
                  "a link off the page: %.*s", (int)n + 6, h);
    }
}

static const char *sgemm_reference(void)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/baselines/h200/sgemm", KBENCH_TEST_SOURCE_DIR);
    return path;
}

Test(report_html, holds_every_heading_table_and_chart_of_report_md, .init = make_tmp,
     .fini = remove_tmp)
{
    char compare[4200], *md, *html;
    kbi_report_options opt = {.compare = compare};
    need_gnuplot();
    snprintf(compare, sizeof compare, "%s/compare-previous.md", sgemm_reference());
    write_report(sgemm_reference(), &opt, &md, &html);
    expect_same_content(md, html);
    /* The reference's nine charts, its tables and the comparison's verdicts are there. */
    cr_assert(strstr(md, "![") != NULL, "the reference's report shows charts");
    cr_assert(strstr(html, "<h2>Comparison</h2>") != NULL);
    cr_assert(strstr(html, "<th>verdict</th>") != NULL);
    cr_assert(strstr(html, "data-key=\"verdict\"") != NULL, "a verdict filter");
    cr_assert(strstr(html, "<section id=\"plugin-sgemm\">") != NULL, "the plugin filter's section");
    expect_well_formed(html);
    expect_self_contained(html);
    kbi_free_all(2, md, html);
}

/* The failed cases of tests/data/sgemm_h200.jsonl (crashed, timeout, skipped, verify_failed),
 * without charts: still every table, and the note that charts were turned off. */
Test(report_html, without_charts_still_holds_every_table, .init = make_tmp, .fini = remove_tmp)
{
    kbi_report_options opt = {.no_charts = 1};
    char *md, *html;
    write_report(DATA "/sgemm_h200.jsonl", &opt, &md, &html);
    expect_same_content(md, html);
    cr_assert_null(strstr(html, "<svg"));
    cr_assert_null(strstr(html, "<figure"));
    cr_assert(strstr(html, "turned off (--no-charts)") != NULL);
    cr_assert(strstr(html, "<strong>crashed</strong>") != NULL);
    expect_well_formed(html);
    expect_self_contained(html);
    kbi_free_all(2, md, html);
}

/* Text from a results file and the title reach the page as text, never as markup. */
Test(report_html, text_from_results_is_escaped, .init = make_tmp, .fini = remove_tmp)
{
    static const char from[] = "an illegal memory access was encountered";
    static const char to[] = "<img src=x onerror=alert(1)> & \\\"q\\\" </td></table>";
    char path[512], *text = slurp(DATA "/sgemm_h200.jsonl"), *hit, *md, *html;
    kbi_report_options opt = {.no_charts = 1, .title = "<b>bold</b> & co"};
    FILE *f;
    snprintf(path, sizeof path, "%s/hostile.jsonl", tmp);
    cr_assert_not_null(f = fopen(path, "w"));
    cr_assert_not_null(hit = strstr(text, from), "the fixture has the crash's message");
    fprintf(f, "%.*s%s%s", (int)(hit - text), text, to, hit + strlen(from));
    fclose(f);
    write_report(path, &opt, &md, &html);
    cr_assert_null(strstr(html, "<img"));
    cr_assert_null(strstr(html, "<b>"));
    cr_assert(strstr(html, "&lt;img src=x onerror=alert(1)&gt; &amp; &quot;q&quot; "
                           "&lt;/td&gt;&lt;/table&gt;") != NULL);
    cr_assert(strstr(html, "<title>kbench report: &lt;b&gt;bold&lt;/b&gt; &amp; co</title>"));
    cr_assert(strstr(html, "<h1>kbench report: &lt;b&gt;bold&lt;/b&gt; &amp; co</h1>"));
    expect_same_content(md, html);
    expect_well_formed(html);
    kbi_free_all(3, text, md, html);
}

/* Markdown as report.md writes it, turned into HTML: ids with [ ] , = / x . in code spans and
 * headings, escaped pipes, a raw <, &, a bracket that is no link, a relative link kept and
 * one with a scheme reduced to its text. */
Test(report_html, markdown_cells_keep_ids_and_escape_text)
{
    const char md[] =
        "### `sgemm/naive/shape=[4096,4096]x2.5,alpha=1` <x>\n\n"
        "| case | note |\n|---|---:|\n"
        "| `a\\|b` | <0.1% & R&D [R2] x [t](charts/a.svg) [u](javascript:alert(1)) |\n";
    char *out = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&out, &n);
    kbi_md_html(f, md, NULL, NULL);
    fclose(f);
    cr_assert(strstr(out, "<h3><code>sgemm/naive/shape=[4096,4096]x2.5,alpha=1</code> &lt;x&gt;"
                          "</h3>") != NULL,
              "%s", out);
    cr_assert(strstr(out, "<td><code>a|b</code></td>") != NULL, "%s", out);
    cr_assert(strstr(out, "<td class=\"r\">&lt;0.1% &amp; R&amp;D [R2] x "
                          "<a href=\"charts/a.svg\">t</a> u</td>") != NULL,
              "%s", out);
    free(out);
}

/* Hover text: in each chart, a <title> per series with its value as the data file holds it;
 * in a rate chart of one point, one per bar. */
Test(report_html, charts_carry_their_values, .init = make_tmp, .fini = remove_tmp)
{
    kbi_report_options opt = {0};
    char *md, *html, path[600];
    size_t bars_checked = 0;
    need_gnuplot();
    write_report(sgemm_reference(), &opt, &md, &html);
    for (const char *fig = html; (fig = strstr(fig, "<figure id=\"chart-")) != NULL; fig++) {
        const char *end = strstr(fig, "</figure>");
        char stem[256], *dat, name[256] = "";
        int bars = 0;
        size_t rows = 0, titled = 0;
        snprintf(stem, sizeof stem, "%.*s", (int)strcspn(fig + 18, "\""), fig + 18);
        snprintf(path, sizeof path, "%s/rep/charts/%s.dat", tmp, stem);
        dat = slurp(path);
        for (char *line = strtok(dat, "\n"); line; line = strtok(NULL, "\n")) {
            char want[300], value[64];
            double x, y;
            if (sscanf(line, "# series %*u: %255[^\n]", name) == 1 || line[0] == '#' ||
                sscanf(line, "%lf %lf", &x, &y) != 2 || y != y)
                continue;
            bars |= strchr(line, '"') != NULL;
            rows++;
            kbi_fmt_sig4(y, value, sizeof value);
            snprintf(want, sizeof want, "<title>%s", name);
            const char *t = fig;
            while ((t = strstr(t + 1, want)) != NULL && t < end &&
                   !(strstr(t, value) && strstr(t, value) < strstr(t, "</title>")))
                ;
            cr_assert(t && t < end, "chart %s: no hover text for %s at %s", stem, name, value);
        }
        for (const char *t = fig; (t = strstr(t + 1, "<polygon")) != NULL && t < end;)
            titled += strncmp(strchr(t, '>') + 1, "<title>", 7) == 0;
        if (bars && strstr(stem, "-rate-") && !strstr(stem, "-vs-")) {
            cr_assert_eq(titled, rows, "chart %s: %zu of %zu bars carry their value", stem, titled,
                         rows);
            bars_checked++;
        }
        free(dat);
    }
    cr_assert_gt(bars_checked, 0, "a rate chart of one point was checked");
    kbi_free_all(2, md, html);
}

/* The Nsight Compute tables `kbench profile` left beside a results file. */
Test(report_html, holds_the_ncu_tables, .init = make_tmp, .fini = remove_tmp)
{
    kbi_report_options opt = {.no_charts = 1};
    char *md, *html;
    write_report(DATA "/profile-h200", &opt, &md, &html);
    cr_assert(strstr(md, "### Nsight Compute: ") != NULL, "the fixture has a profile");
    cr_assert(strstr(html, "<h3>Nsight Compute: ") != NULL);
    expect_same_content(md, html);
    expect_well_formed(html);
    kbi_free_all(2, md, html);
}

Test(report_html, a_file_that_is_no_comparison_is_refused, .init = make_tmp, .fini = remove_tmp)
{
    kbi_result_set set = {0};
    char err[KBI_ERR_SIZE] = "", out[512], readme[4200];
    const char *inputs[] = {DATA "/stream_h200.jsonl"};
    kbi_report_options opt = {.no_charts = 1, .compare = readme};
    snprintf(readme, sizeof readme, "%s/README.md", sgemm_reference());
    cr_assert_eq(kbi_results_load_inputs(&set, inputs, 1, err), KBI_OK, "%s", err);
    snprintf(out, sizeof out, "%s/rep", tmp);
    cr_assert_eq(kbi_report_write(&set, out, &opt, err), KBI_ERR_INPUT);
    cr_assert(strstr(err, "README.md:1: not what `kbench compare --out` writes") != NULL, "%s",
              err);
    kbi_results_free(&set);
}
