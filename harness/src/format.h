/* Formatting shared by report and compare (format.c): figures as a person
 * reads them, and small lookups into the JSON of a record. */
#ifndef KBENCH_FORMAT_H
#define KBENCH_FORMAT_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "results.h"

/* A unit for a duration: seconds times scale, shown with name. */
typedef struct kbi_time_unit {
    double scale;
    const char *name;
} kbi_time_unit;

/* ns, µs, ms or s, whichever shows seconds with 1 to 3 digits before the point. */
kbi_time_unit kbi_time_unit_for(double seconds);

/* Formats seconds in ns, µs, ms or s with four significant digits. */
void kbi_format_duration(double seconds, char *out, size_t n);

/* Four significant digits without an exponent for the usual magnitudes. */
void kbi_fmt_sig4(double v, char *out, size_t n);
/* Joules in J, mJ, µJ or nJ with four significant digits: "1.234 mJ". */
void kbi_format_joules(double joules, char *out, size_t n);
/* Items per second with an SI prefix: "1.234 G". */
void kbi_fmt_si(double v, char *out, size_t n);
/* A tic label for an axis value: 16777216 -> "16Mi", 1000 -> "1000". */
void kbi_fmt_axis(double v, char *out, size_t n);
/* A tic label for a measured value v on an axis whose tics are step apart and whose largest
 * magnitude is top (one prefix for every tic of an axis): a decimal prefix when top is 10^4 or
 * more ("20k", "1.5M", "100G"), as many decimals as the step needs ("0.25", "1200"), a short
 * exponent under 10^-3 ("2e-5"); never "1.04858e+06". */
void kbi_fmt_tic(double v, double step, double top, char *out, size_t n);
/* Parameter key of case c as text ("4096x4096", "1Gi"); "" when absent. */
void kbi_param_text(const kbi_case_result *c, const char *key, char *out, size_t n);
/* A metric's value with its uncertainty and unit, as a table shows it. */
void kbi_fmt_metric(const kbi_metric *m, char *out, size_t n);
/* The metric of case c named name, or NULL. */
const kbi_metric *kbi_find_metric(const kbi_case_result *c, const char *name);
/* File-name-safe form of s: letters, digits, '.', '-', '_' only. */
void kbi_file_safe(const char *s, char *out, size_t n);
/* A CUDA version number (13000) as "13.0". */
void kbi_fmt_cuda_version(double v, char *out, size_t n);

/* Writes s into a Markdown table cell: pipes escaped, line breaks
 * flattened, < as &lt;. */
void kbi_md_cell(FILE *f, const char *s);

/* Writes s as one CSV field (RFC 4180 quoting when needed; NULL is empty). */
void kbi_csv_field(FILE *f, const char *s);

/* Writes the first n bytes of s as HTML text or a quoted attribute value:
 * & < > " ' as character references. */
void kbi_html_text(FILE *f, const char *s, size_t n);

/* obj.a or obj.a.b (b NULL: one level), as JSON, string or number; NULL,
 * NULL and 0 when absent (*present, when given, says which). */
json_t *kbi_jpath(json_t *obj, const char *a, const char *b);
const char *kbi_jstr(json_t *obj, const char *a, const char *b);
double kbi_jnum(json_t *obj, const char *a, const char *b, int *present);

#endif
