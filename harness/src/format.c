/* Formatting shared by report and compare: durations, rates, numbers,
 * parameter values and metrics as a person reads them, file-name-safe
 * names, and small lookups into JSON records. */
#define _XOPEN_SOURCE 700
#include "format.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

kbi_time_unit kbi_time_unit_for(double seconds)
{
    double a = fabs(seconds);
    if (a < 1e-6)
        return (kbi_time_unit){1e9, "ns"};
    if (a < 1e-3)
        return (kbi_time_unit){1e6, "µs"};
    if (a < 1.0)
        return (kbi_time_unit){1e3, "ms"};
    return (kbi_time_unit){1.0, "s"};
}

/* Four significant digits without an exponent for the usual magnitudes;
 * beyond them (a figure no run gives: a damaged file) an exponent, never a
 * 300-digit number. */
void kbi_fmt_sig4(double v, char *out, size_t n)
{
    double a = fabs(v);
    if (!isfinite(v) || a >= 1e7)
        snprintf(out, n, "%.3g", v);
    else if (a >= 1000)
        snprintf(out, n, "%.0f", v);
    else if (a >= 100)
        snprintf(out, n, "%.1f", v);
    else if (a >= 10)
        snprintf(out, n, "%.2f", v);
    else if (a >= 0.01 || a == 0)
        snprintf(out, n, "%.3f", v);
    else
        snprintf(out, n, "%.3g", v);
}

void kbi_format_duration(double seconds, char *out, size_t n)
{
    kbi_time_unit u = kbi_time_unit_for(seconds);
    char num[64];
    if (!isfinite(seconds)) {
        snprintf(out, n, "—");
        return;
    }
    kbi_fmt_sig4(seconds * u.scale, num, sizeof num);
    snprintf(out, n, "%s %s", num, u.name);
}

/* Items per second with an SI prefix: "1.234 G". */
void kbi_format_joules(double joules, char *out, size_t n)
{
    static const struct {
        double scale;
        const char *name;
    } units[] = {{1, "J"}, {1e3, "mJ"}, {1e6, "µJ"}, {1e9, "nJ"}};
    size_t i = 0;
    char num[64];
    while (i + 1 < sizeof units / sizeof *units && fabs(joules) * units[i].scale < 1)
        i++;
    kbi_fmt_sig4(joules * units[i].scale, num, sizeof num);
    snprintf(out, n, "%s %s", num, units[i].name);
}

void kbi_fmt_si(double v, char *out, size_t n)
{
    static const char *const prefix[] = {"", "k", "M", "G", "T", "P", "E"};
    int p = 0;
    char num[64];
    while (fabs(v) >= 1000 && p < 6) {
        v /= 1000;
        p++;
    }
    kbi_fmt_sig4(v, num, sizeof num);
    snprintf(out, n, "%s%s%s", num, p ? " " : "", prefix[p]);
}

/* A number as a parameter value: integers without a decimal point. */
static void fmt_number(double v, char *out, size_t n)
{
    if (fabs(v) < 1e15 && v == floor(v))
        snprintf(out, n, "%.0f", v);
    else
        snprintf(out, n, "%.10g", v);
}

/* A tic label for an axis value: 16777216 -> "16Mi", 1000 -> "1000". */
void kbi_fmt_axis(double v, char *out, size_t n)
{
    static const char *const bin[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi"};
    int p = 0;
    if (v == floor(v) && v >= 1024) {
        double w = v;
        while (w >= 1024 && fmod(w, 1024) == 0 && p < 5) {
            w /= 1024;
            p++;
        }
        if (p > 0) {
            snprintf(out, n, "%.0f%s", w, bin[p]);
            return;
        }
    }
    if (v == floor(v) && fabs(v) < 1e7)
        snprintf(out, n, "%.0f", v);
    else
        snprintf(out, n, "%.3g", v);
}

/* Decimals that show multiples of step exactly: 0 for 1, 10, ...; 1 for 0.5; 2 for 0.25. */
static int decimals_for(double step)
{
    int d = 0;
    step = fabs(step);
    if (step == 0 || !isfinite(step))
        return 0;
    while (d < 9 &&
           fabs(step * pow(10, d) - nearbyint(step * pow(10, d))) > 1e-6 * step * pow(10, d))
        d++;
    return d;
}

void kbi_fmt_tic(double v, double step, double top, char *out, size_t n)
{
    static const char *const prefix[] = {"", "k", "M", "G", "T", "P", "E"};
    double a = fabs(v), scale = 1;
    int p = 0;
    step = fabs(step);
    top = fabs(top) > a ? fabs(top) : a;
    if (!isfinite(v)) {
        snprintf(out, n, "%g", v);
        return;
    }
    if (a == 0 || (step > 0 && a < 1e-9 * step)) {
        snprintf(out, n, "0"); /* never "-0" or "1e-17" where a tic sits at zero */
        return;
    }
    if (a < 1e-3) {
        char mant[32];
        int e = (int)floor(log10(a));
        double m = v / pow(10, e);
        if (fabs(m) >= 9.9995) { /* 9.9999e-5 is 1e-4, not 10e-5 */
            m /= 10;
            e++;
        }
        snprintf(mant, sizeof mant, "%.3g", m);
        snprintf(out, n, "%se%d", mant, e);
        return;
    }
    if (top >= 1e4)
        while (p < 6 && top / scale >= 1000) {
            scale *= 1000;
            p++;
        }
    if (step <= 0) /* v alone: three significant digits */
        step = pow(10, floor(log10(a / scale)) - 2) * scale;
    snprintf(out, n, "%.*f%s", decimals_for(step / scale), v / scale, prefix[p]);
}

/* The text of one parameter value as it appears in a case id.  An array
 * (dims or an integer list, results version 2) is taken from the case's
 * params_text, which spells it as the profile did ("2x3x4", "[0,2,1]");
 * without one it is written as dims. */

static void param_text(json_t *v, char *out, size_t n)
{
    if (json_is_array(v)) {
        size_t len = 0;
        out[0] = '\0';
        for (size_t i = 0; i < json_array_size(v) && len < n; i++) {
            int k = snprintf(out + len, n - len, "%s%lld", i ? "x" : "",
                             (long long)json_integer_value(json_array_get(v, i)));
            len += k > 0 ? (size_t)k : 0;
        }
    } else if (json_is_string(v))
        snprintf(out, n, "%s", json_string_value(v));
    else if (json_is_number(v))
        fmt_number(json_number_value(v), out, n);
    else if (json_is_true(v) || json_is_false(v))
        snprintf(out, n, "%s", json_is_true(v) ? "true" : "false");
    else
        snprintf(out, n, "%s", "");
}

void kbi_param_text(const kbi_case_result *c, const char *key, char *out, size_t n)
{
    json_t *v = json_object_get(c->params, key);
    size_t klen = strlen(key);
    if (json_is_array(v)) {
        /* "name=value" at the top level of params_text: commas inside
         * brackets belong to an integer list. */
        const char *t = c->params_text;
        int depth = 0, at_start = 1;
        for (; *t; t++) {
            if (at_start && strncmp(t, key, klen) == 0 && t[klen] == '=') {
                const char *e = t + klen + 1, *v0 = e;
                int d = 0;
                for (; *e && !(d == 0 && *e == ','); e++)
                    d += *e == '[' ? 1 : *e == ']' ? -1 : 0;
                snprintf(out, n, "%.*s", (int)(e - v0), v0);
                return;
            }
            depth += *t == '[' ? 1 : *t == ']' ? -1 : 0;
            at_start = depth == 0 && *t == ',';
        }
    }
    param_text(v, out, n);
}

/* "value ± uncertainty" of a metric, the uncertainty when known and not 0. */
void kbi_fmt_metric(const kbi_metric *m, char *out, size_t n)
{
    if (isnan(m->value))
        snprintf(out, n, "no value");
    else if (isfinite(m->uncertainty) && m->uncertainty > 0)
        snprintf(out, n, "%.6g ± %.2g", m->value, m->uncertainty);
    else
        snprintf(out, n, "%.6g", m->value);
}

/* The metric of case c named name, or NULL. */
const kbi_metric *kbi_find_metric(const kbi_case_result *c, const char *name)
{
    for (size_t k = 0; k < c->n_metrics; k++)
        if (strcmp(c->metrics[k].name, name) == 0)
            return &c->metrics[k];
    return NULL;
}

/* File-name-safe form of s: letters, digits, '.', '-', '_' only. */
void kbi_file_safe(const char *s, char *out, size_t n)
{
    size_t o = 0;
    int last_us = 0;
    for (; *s && o + 1 < n && o < 80; s++) {
        char c = *s;
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '-';
        if (ok) {
            out[o++] = c;
            last_us = 0;
        } else if (!last_us && o > 0) {
            out[o++] = '_';
            last_us = 1;
        }
    }
    while (o > 0 && out[o - 1] == '_')
        o--;
    out[o] = '\0';
}

json_t *kbi_jpath(json_t *obj, const char *a, const char *b)
{
    json_t *v = json_object_get(obj, a);
    return b ? json_object_get(v, b) : v;
}

const char *kbi_jstr(json_t *obj, const char *a, const char *b)
{
    const char *s = json_string_value(kbi_jpath(obj, a, b));
    return s ? s : "";
}

double kbi_jnum(json_t *obj, const char *a, const char *b, int *present)
{
    json_t *v = kbi_jpath(obj, a, b);
    if (present)
        *present = json_is_number(v);
    return json_is_number(v) ? json_number_value(v) : 0.0;
}

/* 13000 -> "13.0", 12040 -> "12.4". */
void kbi_fmt_cuda_version(double v, char *out, size_t n)
{
    long x = (long)v;
    if (x <= 0)
        snprintf(out, n, "?");
    else
        snprintf(out, n, "%ld.%ld", x / 1000, (x % 1000) / 10);
}

/* Writes s into a Markdown table cell: pipes escaped, line breaks flattened, and
 * < written &lt; so that no text becomes HTML. */
void kbi_md_cell(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '|')
            fputs("\\|", f);
        else if (*s == '\n' || *s == '\r')
            fputc(' ', f);
        else if (*s == '<')
            fputs("&lt;", f);
        else
            fputc(*s, f);
    }
}

/* Writes s as one CSV field (RFC 4180 quoting when needed). */
void kbi_csv_field(FILE *f, const char *s)
{
    if (!s)
        s = "";
    if (strpbrk(s, ",\"\n\r") == NULL) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* Writes the first n bytes of s as HTML text or a quoted attribute value. */
void kbi_html_text(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n && s[i]; i++) {
        const char *ref = s[i] == '&'    ? "&amp;"
                          : s[i] == '<'  ? "&lt;"
                          : s[i] == '>'  ? "&gt;"
                          : s[i] == '"'  ? "&quot;"
                          : s[i] == '\'' ? "&#39;"
                                         : NULL;
        if (ref)
            fputs(ref, f);
        else
            fputc(s[i], f);
    }
}
