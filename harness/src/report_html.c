/* report.html: the page of a report.  Its body is report.md turned into
 * HTML (report_html_md.c), with each chart's SVG inlined where report.md
 * shows its PNG (report_html_svg.c); a style sheet and a small script ride
 * along in the page itself, so that the file can be mailed, attached to a
 * CI run or opened from disk and look the same, with nothing fetched. */
#define _XOPEN_SOURCE 700
#include "report_html.h"

#include <string.h>

#include "common.h"
#include "format.h"
#include "report_html_md.h"
#include "report_html_svg.h"

static const char style[] =
    "body{margin:0;color:#1b1b1b;background:#fff;font:14px/1.45 system-ui,-apple-system,"
    "'Segoe UI','DejaVu Sans',sans-serif}\n"
    "main{padding:0 24px 48px}\n"
    "h1{font-size:1.6em;margin:.8em 0 .4em}\n"
    "h2{font-size:1.3em;margin:1.6em 0 .5em;padding-bottom:.2em;border-bottom:1px solid #ddd}\n"
    "h3{font-size:1.05em;margin:1.4em 0 .4em}\n"
    "code{font:12.5px/1.3 ui-monospace,'DejaVu Sans Mono',monospace;background:#f2f2f2;"
    "padding:0 .25em;border-radius:3px}\n"
    "a{color:#0b4f8a}\n"
    "blockquote{margin:.8em 0;padding:.4em .8em;border-left:4px solid #d9a400;"
    "background:#fff8e3}\n"
    "blockquote p{margin:0}\n"
    ".kb-table{overflow-x:auto;margin:.5em 0 1em}\n"
    "table{border-collapse:collapse;font-size:13px}\n"
    "th,td{border:1px solid #d6d6d6;padding:3px 8px;text-align:left;vertical-align:top}\n"
    "th{background:#eef1f5;white-space:nowrap;cursor:pointer;user-select:none}\n"
    "th[aria-sort=ascending]::after{content:' \\25B2'}\n"
    "th[aria-sort=descending]::after{content:' \\25BC'}\n"
    "td.r,th.r{text-align:right;font-variant-numeric:tabular-nums}\n"
    "td.c,th.c{text-align:center}\n"
    "tbody tr:nth-child(even){background:#fafafa}\n"
    "tbody tr:hover{background:#edf3fa}\n"
    "figure{margin:1em 0}\n"
    "svg.kb-chart{display:block;max-width:100%;height:auto}\n"
    ".kb-missing{color:#8a1c1c}\n"
    ".kb-tools{position:sticky;top:0;z-index:1;background:#f6f6f6;border-bottom:1px solid #ddd;"
    "padding:6px 24px;font-size:13px}\n"
    ".kb-tools label{margin-right:14px;white-space:nowrap}\n"
    ".kb-tools select{max-width:18em}\n";

/* Sorting and filtering.  It never fetches anything; when it has run it
 * marks the page (data-kb-ready: how many table rows it can filter), which
 * is what the browser test looks for. */
static const char script[] =
    "(function () {\n"
    "  'use strict';\n"
    "  var SCALE = {ns: 1e-9, '\\u00b5s': 1e-6, us: 1e-6, ms: 1e-3, s: 1, k: 1e3, M: 1e6,\n"
    "               G: 1e9, T: 1e12, P: 1e15, Ki: 1024, Mi: 1048576, Gi: 1073741824};\n"
    "  var NUMBER = /^[<>~\\u2264\\u2265]?\\s*([-+]?(?:\\d+\\.?\\d*|\\.\\d+)(?:[eE][-+]?\\d+)?)"
    "\\s*(ns|\\u00b5s|us|ms|s|Ki|Mi|Gi|k|M|G|T|P)?(?![A-Za-z])/;\n"
    "  var ID = /^([^\\/\\s]+)\\/([^\\/\\s]+)\\//;\n"
    "  var KEYS = ['plugin', 'variant', 'status', 'verdict'];\n"
    "  var rows = [], filters = {}, values = {};\n"
    "  function each(list, fn) { Array.prototype.forEach.call(list, fn); }\n"
    "  function text(cell) { return cell ? cell.textContent.trim() : ''; }\n"
    "  function blank(t) { return t === '' || t === '\\u2014'; }\n"
    "  function number(t) {\n"
    "    var m = NUMBER.exec(t.replace('\\u2212', '-'));\n"
    "    return m ? parseFloat(m[1]) * (m[2] ? SCALE[m[2]] : 1) : NaN;\n"
    "  }\n"
    "  function sortTable(table, col, th) {\n"
    "    var body = table.tBodies[0], list = Array.prototype.slice.call(body.rows);\n"
    "    var dir = th.getAttribute('aria-sort') === 'ascending' ? -1 : 1;\n"
    "    var keys = list.map(function (r) { return text(r.cells[col]); });\n"
    "    var numeric = keys.every(function (k) { return blank(k) || !isNaN(number(k)); });\n"
    "    var order = keys.map(function (k, i) { return i; });\n"
    "    order.sort(function (a, b) {\n"
    "      var x = keys[a], y = keys[b];\n"
    "      if (blank(x) !== blank(y)) return blank(x) ? 1 : -1;\n"
    "      return dir * (numeric ? number(x) - number(y)\n"
    "                            : x.localeCompare(y, undefined, {numeric: true})) || a - b;\n"
    "    });\n"
    "    order.forEach(function (i) { body.appendChild(list[i]); });\n"
    "    each(th.parentNode.cells, function (c) { c.removeAttribute('aria-sort'); });\n"
    "    th.setAttribute('aria-sort', dir > 0 ? 'ascending' : 'descending');\n"
    "  }\n"
    /* A row's plugin, variant, status and verdict, from the columns its
     * table has (a case id names the first two), else its plugin section. */
    "  function rowKeys(names, row, section) {\n"
    "    var keys = {};\n"
    "    names.forEach(function (name, i) {\n"
    "      var t = text(row.cells[i]), m;\n"
    "      if (name === 'plugin' || name === 'status' || name === 'verdict') keys[name] = t;\n"
    "      else if (name === 'variant') keys.variant = t.split(' ')[0];\n"
    "      else if (name === 'case' && (m = ID.exec(t))) {\n"
    "        keys.plugin = m[1];\n"
    "        keys.variant = m[2];\n"
    "      }\n"
    "    });\n"
    "    if (!keys.plugin && section && section.id.indexOf('plugin-') === 0)\n"
    "      keys.plugin = section.id.slice(7);\n"
    "    return keys;\n"
    "  }\n"
    "  function apply() {\n"
    "    var shown = 0;\n"
    "    each(document.querySelectorAll('section[id^=\"plugin-\"]'), function (s) {\n"
    "      s.hidden = !!filters.plugin && s.id !== 'plugin-' + filters.plugin;\n"
    "    });\n"
    "    rows.forEach(function (r) {\n"
    "      r.row.hidden = !KEYS.every(function (k) {\n"
    "        return !filters[k] || r.keys[k] === undefined || r.keys[k] === filters[k];\n"
    "      });\n"
    "      shown += !r.row.hidden;\n"
    "    });\n"
    "    document.getElementById('kb-count').textContent = shown + ' of ' + rows.length +\n"
    "      ' table rows shown; click a column heading to sort';\n"
    "  }\n"
    "  KEYS.forEach(function (k) { values[k] = {}; });\n"
    "  each(document.querySelectorAll('main table'), function (table) {\n"
    "    var names = [], section = table.closest('section');\n"
    "    if (!table.tHead || !table.tBodies.length) return;\n"
    "    each(table.tHead.rows[0].cells, function (th, i) {\n"
    "      names.push(text(th).toLowerCase());\n"
    "      th.tabIndex = 0;\n"
    "      th.addEventListener('click', function () { sortTable(table, i, th); });\n"
    "      th.addEventListener('keydown', function (e) {\n"
    "        if (e.key !== 'Enter') return;\n"
    "        e.preventDefault();\n"
    "        sortTable(table, i, th);\n"
    "      });\n"
    "    });\n"
    "    each(table.tBodies[0].rows, function (row) {\n"
    "      var keys = rowKeys(names, row, section);\n"
    "      KEYS.forEach(function (k) { if (keys[k]) values[k][keys[k]] = 1; });\n"
    "      rows.push({row: row, keys: keys});\n"
    "    });\n"
    "  });\n"
    "  each(document.querySelectorAll('#kb-tools select'), function (sel) {\n"
    "    var k = sel.getAttribute('data-key');\n"
    "    Object.keys(values[k]).sort().forEach(function (v) {\n"
    "      var o = document.createElement('option');\n"
    "      o.value = o.textContent = v;\n"
    "      sel.appendChild(o);\n"
    "    });\n"
    "    sel.disabled = sel.options.length < 2;\n"
    "    sel.addEventListener('change', function () {\n"
    "      filters[k] = sel.value;\n"
    "      apply();\n"
    "    });\n"
    "  });\n"
    "  document.getElementById('kb-clear').addEventListener('click', function () {\n"
    "    each(document.querySelectorAll('#kb-tools select'), function (s) { s.value = ''; });\n"
    "    filters = {};\n"
    "    apply();\n"
    "  });\n"
    "  document.getElementById('kb-tools').hidden = false;\n"
    "  apply();\n"
    "  document.documentElement.setAttribute('data-kb-ready', String(rows.length));\n"
    "})();\n";

/* The filter bar: hidden until the script has filled its lists. */
static const char tools[] =
    "<div class=\"kb-tools\" id=\"kb-tools\" hidden>\n"
    "<label>plugin <select data-key=\"plugin\"><option value=\"\">all</option></select></label>\n"
    "<label>variant <select data-key=\"variant\"><option value=\"\">all</option></select></label>\n"
    "<label>status <select data-key=\"status\"><option value=\"\">all</option></select></label>\n"
    "<label>verdict <select data-key=\"verdict\"><option value=\"\">all</option></select></label>\n"
    "<button type=\"button\" id=\"kb-clear\">show all</button>\n"
    "<span id=\"kb-count\"></span>\n"
    "</div>\n";

/* Draws report.md's ![title](charts/STEM.png) as charts/STEM.svg inline;
 * the title is the SVG's own (gnuplot draws it too). */
static int draw_chart(FILE *f, const char *alt, size_t alt_len, const char *src, size_t src_len,
                      void *ctx)
{
    const char *charts_dir = ctx;
    char stem[512], title[2048], err[KBI_ERR_SIZE];
    if (!charts_dir || src_len < 11 || strncmp(src, "charts/", 7) != 0 ||
        strncmp(src + src_len - 4, ".png", 4) != 0 || src_len - 11 >= sizeof stem)
        return 1;
    snprintf(stem, sizeof stem, "%.*s", (int)(src_len - 11), src + 7);
    snprintf(title, sizeof title, "%.*s", (int)alt_len, alt);
    fputs("<figure id=\"chart-", f);
    kbi_html_text(f, stem, strlen(stem));
    fputs("\">\n", f);
    if (kbi_svg_inline(f, charts_dir, stem, title, err) != KBI_OK) {
        fputs("<p class=\"kb-missing\">Chart not shown: ", f);
        kbi_html_text(f, err, strlen(err));
        fputs("</p>\n", f);
    }
    fputs("</figure>\n", f);
    return 0;
}

int kbi_report_write_html(FILE *f, const char *markdown, const char *title, const char *charts_dir)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta name=\"generator\" content=\"kbench report\">\n<title>kbench report: ",
          f);
    kbi_html_text(f, title, strlen(title));
    fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n%s<main>\n", style, tools);
    kbi_md_html(f, markdown, draw_chart, (void *)charts_dir);
    fprintf(f, "</main>\n<script>\n%s</script>\n</body>\n</html>\n", script);
    return ferror(f) ? KBI_ERR_IO : KBI_OK;
}
