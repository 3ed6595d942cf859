/* report.html (report_html.c): report.md as one page a browser opens with
 * nothing beside it. */
#ifndef KBENCH_REPORT_HTML_H
#define KBENCH_REPORT_HTML_H

#include <stdio.h>

/* Writes the page for the report whose Markdown is markdown (report.md's
 * text) into f: the same headings, notes and tables, the charts drawn from
 * charts_dir's SVG files inline (charts_dir NULL: none, the charts' titles
 * stand in), a style sheet and a script of its own (tables sorted by a
 * click on a heading, rows filtered by plugin, variant, status and
 * verdict), and no reference to any other file or server.  A chart whose
 * SVG cannot be read is a note on the page.  Returns KBI_OK or
 * KBI_ERR_IO. */
int kbi_report_write_html(FILE *f, const char *markdown, const char *title, const char *charts_dir);

#endif
