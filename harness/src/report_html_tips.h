/* Hover text for a gnuplot chart of a report (report_html_tips.c), read
 * back from the files chart.c writes: the script (which data block each
 * plot clause draws, the axis labels, the x tic labels) and the data
 * ("# series I: NAME" blocks of x, value, low, high and an optional quoted
 * group label). */
#ifndef KBENCH_REPORT_HTML_TIPS_H
#define KBENCH_REPORT_HTML_TIPS_H

#include <stddef.h>

typedef struct kbi_clause_tips {
    char *series; /* its series' name or its own title; NULL: none */
    char *group;  /* every row it draws, in short; NULL: none */
    char **point; /* one per row drawn (x and value numbers), in the data's order */
    size_t n_points;
    int keyed; /* the clause has a key entry, which gnuplot draws a sample for */
} kbi_clause_tips;

typedef struct kbi_chart_tips {
    kbi_clause_tips *clause; /* [k]: the k-th plot clause, gnuplot's "gnuplot_plot_<k+1>" */
    size_t n_clauses;
} kbi_chart_tips;

/* Reads dir/stem.gp and dir/stem.dat into t; a file that cannot be read or
 * parsed leaves t with fewer clauses or texts (a chart without hover text,
 * never an error). */
void kbi_chart_tips_read(kbi_chart_tips *t, const char *dir, const char *stem);
void kbi_chart_tips_free(kbi_chart_tips *t);

#endif
