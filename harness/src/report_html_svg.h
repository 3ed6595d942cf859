/* A gnuplot chart inlined into report.html (report_html_svg.c): the SVG
 * gnuplot drew (chart.c), made fit to live in a page beside others, with
 * the values of its data file as tooltips. */
#ifndef KBENCH_REPORT_HTML_SVG_H
#define KBENCH_REPORT_HTML_SVG_H

#include <stdio.h>

/* Writes dir/stem.svg into f as an inline <svg>: no XML prolog, no
 * namespace declarations (the HTML parser knows SVG's), its ids prefixed
 * with stem so that charts do not take each other's clip paths, no script
 * or event attribute, title_md (Markdown text) as its title, and hover
 * text on each series and, where its points can be told apart, on each
 * point: the values of dir/stem.dat as dir/stem.gp plots them.  Returns
 * KBI_OK, or KBI_ERR_IO with err set when the SVG cannot be read (nothing
 * written). */
int kbi_svg_inline(FILE *f, const char *dir, const char *stem, const char *title_md, char *err);

#endif
