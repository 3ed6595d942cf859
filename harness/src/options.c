/* One parser for every verb's options (options.h): getopt_long driven by
 * the verb's table, so that every verb checks values, reports errors and
 * answers --help the same way, and its usage and --help are written from
 * the same table. */
#define _GNU_SOURCE
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "loader.h"

/* getopt's value for option i of the table (above any character). */
#define OPT_VAL(i) (256 + (int)(i))

int kbi_parse_fraction(const char *value, double *out)
{
    char *end;
    double v;
    errno = 0;
    v = strtod(value, &end);
    if (end == value || errno)
        return -1;
    if (*end == '%') {
        v /= 100.0;
        end++;
    }
    if (*end != '\0' || !(v > 0) || !(v < 1))
        return -1;
    *out = v;
    return 0;
}

static int parse_int(const char *value, long min, long max, int *out)
{
    char *end;
    long v;
    errno = 0;
    v = strtol(value, &end, 10);
    if (end == value || *end || errno || v < min || v > max)
        return -1;
    *out = (int)v;
    return 0;
}

/* Where kbi_options_collect sends the verbs' synopses, or NULL. */
static kbi_buf *collecting;

void kbi_options_collect(kbi_buf *out)
{
    collecting = out;
}

/* The option as usage shows it: "--out DIR", "--sanitize[=TOOL]", "--force". */
static void option_usage(const kbi_option *o, kbi_buf *b)
{
    kbi_buf_printf(b, "--%s", o->name);
    if (o->kind == KBI_OPT_OPTIONAL)
        kbi_buf_printf(b, "[=%s]", o->arg ? o->arg : "VALUE");
    else if (o->kind != KBI_OPT_FLAG)
        kbi_buf_printf(b, " %s", o->arg ? o->arg : "VALUE");
}

/* Appends word to out, first breaking the line when it would pass 80 columns. */
static void wrap_word(kbi_buf *out, size_t *col, size_t indent, const char *word)
{
    size_t len = strlen(word);
    if (*col + 1 + len > 80 && *col > indent + 7) {
        kbi_buf_printf(out, "\n%*s%s", (int)(indent + 7), "", word);
        *col = indent + 7 + len;
    } else {
        kbi_buf_printf(out, " %s", word);
        *col += 1 + len;
    }
}

/* The synopsis after prefix ("usage: "), which counts in the first line's width. */
static void synopsis_at(const kbi_verb_spec *spec, const char *prefix, size_t indent, kbi_buf *out)
{
    size_t col = indent + strlen(prefix) + strlen("kbench ") + strlen(spec->verb);
    kbi_buf_printf(out, "%*s%skbench %s", (int)indent, "", prefix, spec->verb);
    if (spec->synopsis && *spec->synopsis)
        wrap_word(out, &col, indent, spec->synopsis);
    for (size_t i = 0; i < spec->n_options; i++) {
        const kbi_option *o = &spec->options[i];
        kbi_buf w = {0};
        if (o->hidden)
            continue;
        if (!o->required)
            kbi_buf_printf(&w, "[");
        option_usage(o, &w);
        if (!o->required)
            kbi_buf_printf(&w, "]");
        if (o->kind == KBI_OPT_PLUGINS)
            kbi_buf_printf(&w, "...");
        wrap_word(out, &col, indent, w.data);
        kbi_buf_free(&w);
    }
    if (spec->trailer)
        wrap_word(out, &col, indent, spec->trailer);
    kbi_buf_printf(out, "\n");
}

void kbi_options_synopsis(const kbi_verb_spec *spec, size_t indent, kbi_buf *out)
{
    synopsis_at(spec, "", indent, out);
}

/* The one-line usage and where the rest is, after an error: the operands,
 * the required options, and [OPTIONS] for the rest. */
static int usage_error(const kbi_verb_spec *spec)
{
    int optional = 0;
    fprintf(stderr, "usage: kbench %s", spec->verb);
    if (spec->synopsis && *spec->synopsis)
        fprintf(stderr, " %s", spec->synopsis);
    for (size_t i = 0; i < spec->n_options; i++) {
        const kbi_option *o = &spec->options[i];
        kbi_buf w = {0};
        optional |= !o->required && !o->hidden;
        if (!o->required)
            continue;
        option_usage(o, &w);
        fprintf(stderr, " %s", w.data);
        kbi_buf_free(&w);
    }
    fprintf(stderr, "%s%s%s (see kbench %s --help)\n", optional ? " [OPTIONS]" : "",
            spec->trailer ? " " : "", spec->trailer ? spec->trailer : "", spec->verb);
    return KBI_EXIT_USAGE;
}

/* One option of --help: "  -o, --out DIR      what it does", its further
 * lines under the first. */
static void help_option(kbi_buf *b, char short_name, const kbi_option *o, const char *help)
{
    enum { COLUMN = 21 };
    kbi_buf label = {0};
    const char *line = help, *nl;
    if (short_name)
        kbi_buf_printf(&label, "  -%c, ", short_name);
    else
        kbi_buf_printf(&label, "      ");
    if (o)
        option_usage(o, &label);
    else
        kbi_buf_printf(&label, "--help");
    if (!*help)
        kbi_buf_printf(b, "%s", label.data);
    else if (label.len + 2 <= COLUMN)
        kbi_buf_printf(b, "%-*s", COLUMN, label.data);
    else
        kbi_buf_printf(b, "%s  ", label.data);
    for (int first = 1; line; first = 0) {
        nl = strchr(line, '\n');
        kbi_buf_printf(b, "%*s%.*s\n", first ? 0 : COLUMN, "",
                       (int)(nl ? (size_t)(nl - line) : strlen(line)), line);
        line = nl ? nl + 1 : NULL;
    }
    kbi_buf_free(&label);
}

/* The verb's --help: usage, text, options (from the table), notes. */
static void print_help(const kbi_verb_spec *spec)
{
    kbi_buf b = {0};
    synopsis_at(spec, "usage: ", 0, &b);
    if (spec->help)
        kbi_buf_printf(&b, "\n%s", spec->help);
    kbi_buf_printf(&b, "\noptions:\n");
    for (size_t i = 0; i < spec->n_options; i++)
        if (!spec->options[i].hidden)
            help_option(&b, spec->options[i].short_name, &spec->options[i],
                        spec->options[i].help ? spec->options[i].help : "");
    help_option(&b, 'h', NULL, "this text");
    if (spec->notes)
        kbi_buf_printf(&b, "\n%s", spec->notes);
    fputs(b.data, stdout);
    kbi_buf_free(&b);
}

/* Whether a second occurrence of o is an error: every option with a value but --plugins,
 * which adds folders, and custom ones, whose parser decides. */
static int takes_one_value(const kbi_option *o)
{
    return o->kind == KBI_OPT_STRING || o->kind == KBI_OPT_OPTIONAL || o->kind == KBI_OPT_INT ||
           o->kind == KBI_OPT_FRACTION;
}

/* Stores value into option o's target; says why not on stderr. */
static int store(const kbi_verb_spec *spec, const kbi_option *o, const char *value)
{
    int bad = 0;
    switch (o->kind) {
    case KBI_OPT_FLAG:
        *(int *)o->target = 1;
        break;
    case KBI_OPT_STRING:
        *(const char **)o->target = value;
        break;
    case KBI_OPT_OPTIONAL:
        *(const char **)o->target = value ? value : o->implicit;
        break;
    case KBI_OPT_INT:
        bad = parse_int(value, o->min, o->max, (int *)o->target) != 0;
        break;
    case KBI_OPT_FRACTION:
        bad = kbi_parse_fraction(value, (double *)o->target) != 0;
        break;
    case KBI_OPT_PLUGINS:
        if (kbi_plugin_dirs_add((char *)o->target, KBI_PLUGIN_DIRS_MAX, value) != KBI_OK) {
            fprintf(stderr, "kbench %s: --%s: too many folders\n", spec->verb, o->name);
            return -1;
        }
        break;
    case KBI_OPT_CUSTOM:
        bad = o->parse(value, o->target) != 0;
        break;
    }
    if (bad) {
        fprintf(stderr, "kbench %s: --%s '%s': expected %s\n", spec->verb, o->name, value,
                o->expected ? o->expected : "another value");
        return -1;
    }
    return 0;
}

/* getopt_long's tables for spec; freed by the caller. */
static void build_tables(const kbi_verb_spec *spec, struct option **longopts, char **shortopts)
{
    struct option *lo = kbi_xcalloc(spec->n_options + 2, sizeof *lo);
    char *so = kbi_xcalloc(3 * spec->n_options + 4, 1), *s = so;
    /* ':' first: a missing value is told apart from an unknown option. */
    *s++ = ':';
    *s++ = 'h';
    for (size_t i = 0; i < spec->n_options; i++) {
        const kbi_option *o = &spec->options[i];
        lo[i].name = o->name;
        lo[i].has_arg = o->kind == KBI_OPT_FLAG       ? no_argument
                        : o->kind == KBI_OPT_OPTIONAL ? optional_argument
                                                      : required_argument;
        lo[i].val = OPT_VAL(i);
        if (o->short_name) {
            *s++ = o->short_name;
            if (o->kind != KBI_OPT_FLAG)
                *s++ = ':';
        }
    }
    lo[spec->n_options] = (struct option){"help", no_argument, NULL, 'h'};
    *longopts = lo;
    *shortopts = so;
}

/* The option getopt returned as c, or NULL. */
static const kbi_option *option_of(const kbi_verb_spec *spec, int c)
{
    for (size_t i = 0; i < spec->n_options; i++)
        if (c == OPT_VAL(i) || (c < 256 && c == spec->options[i].short_name))
            return &spec->options[i];
    return NULL;
}

/* A required option that was not given, or NULL. */
static const kbi_option *missing_required(const kbi_verb_spec *spec, const unsigned char *seen)
{
    for (size_t i = 0; i < spec->n_options; i++)
        if (spec->options[i].required && !seen[i])
            return &spec->options[i];
    return NULL;
}

static int check_operands(const kbi_verb_spec *spec, int argc, char **argv, int first)
{
    size_t n = (size_t)(argc - first);
    if (n < spec->min_operands) {
        if (n == 0)
            fprintf(stderr, "kbench %s: missing %s\n", spec->verb, spec->operands);
        else
            fprintf(stderr, "kbench %s: too few arguments, expected %s\n", spec->verb,
                    spec->operands);
        return usage_error(spec);
    }
    if (n > spec->max_operands) {
        fprintf(stderr, "kbench %s: unexpected argument '%s', expected %s\n", spec->verb,
                argv[first + (int)spec->max_operands], spec->operands);
        return usage_error(spec);
    }
    return KBI_OPTS_GO_ON;
}

int kbi_options_parse(const kbi_verb_spec *spec, int argc, char **argv, int *first)
{
    struct option *longopts;
    char *shortopts;
    unsigned char *seen;
    const kbi_option *o;
    int c, rc = KBI_OPTS_GO_ON;
    if (collecting) {
        kbi_options_synopsis(spec, 2, collecting);
        kbi_buf_printf(collecting, "      %s\n", spec->summary ? spec->summary : "");
        *first = argc;
        return KBI_EXIT_OK;
    }
    seen = kbi_xcalloc(spec->n_options + 1, 1);
    build_tables(spec, &longopts, &shortopts);
    /* 0 restarts getopt: a verb may run more than once in a process. */
    optind = 0;
    opterr = 0;
    while (rc == KBI_OPTS_GO_ON && (c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        if (c == 'h') {
            print_help(spec);
            rc = KBI_EXIT_OK;
        } else if (c == ':') {
            o = option_of(spec, optopt);
            fprintf(stderr, "kbench %s: option --%s needs a value\n", spec->verb,
                    o ? o->name : "?");
            rc = usage_error(spec);
        } else if ((o = option_of(spec, c)) == NULL) {
            fprintf(stderr, "kbench %s: unknown option '%s'\n", spec->verb, argv[optind - 1]);
            rc = usage_error(spec);
        } else if (seen[o - spec->options] && takes_one_value(o)) {
            /* The last one winning would drop the first without a word (two --filter
             * globs run only the second's cases). */
            fprintf(stderr, "kbench %s: --%s given twice (again as '%s'); it takes one value\n",
                    spec->verb, o->name, optarg ? optarg : "");
            rc = usage_error(spec);
        } else if (store(spec, o, optarg) != 0) {
            rc = usage_error(spec);
        } else {
            seen[o - spec->options] = 1;
        }
    }
    if (rc == KBI_OPTS_GO_ON)
        rc = check_operands(spec, argc, argv, optind);
    if (rc == KBI_OPTS_GO_ON && (o = missing_required(spec, seen)) != NULL) {
        fprintf(stderr, "kbench %s: missing --%s, expected %s\n", spec->verb, o->name,
                o->expected ? o->expected : "it");
        rc = usage_error(spec);
    }
    *first = optind;
    free(longopts);
    free(shortopts);
    free(seen);
    return rc;
}
