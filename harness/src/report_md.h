/* report.md from the report model (report_md.c). */
#ifndef KBENCH_REPORT_MD_H
#define KBENCH_REPORT_MD_H

#include <stdio.h>

#include "chart.h"
#include "report_model.h"

/* Writes report.md for m to f, title as its heading; ctx says which charts
 * were drawn, charts_requested whether any were asked for.  Returns KBI_OK
 * or KBI_ERR_IO. */
int kbi_report_write_markdown(FILE *f, const kbi_rep_model *m, const char *title,
                              const kbi_chart_ctx *ctx, int charts_requested);

/* The verdicts of a `kbench compare --out` file (its Markdown text, read
 * from path) as the report's last section, its headings one level down. */
void kbi_report_write_comparison(FILE *f, const char *path, const char *text);

#endif
