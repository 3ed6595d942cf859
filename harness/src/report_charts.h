/* The charts of a report (report_charts.c), recorded in the model so that
 * report.md can embed them and note why one is missing. */
#ifndef KBENCH_REPORT_CHARTS_H
#define KBENCH_REPORT_CHARTS_H

#include "chart.h"
#include "report_model.h"

/* Draws every chart of every plugin of m into ctx's folder.  A chart with
 * nothing to draw is a note in its plugin, not an error.  Returns KBI_OK,
 * or KBI_ERR_IO with err set when a file cannot be written. */
int kbi_report_draw_charts(kbi_rep_model *m, kbi_chart_ctx *ctx, char *err);

#endif
