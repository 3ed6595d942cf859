/* One parser for every verb's options (options.h): getopt_long driven by
 * the verb's table, so that every verb checks values, reports errors and
 * answers --help the same way. */
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

/* The one-line usage and where the rest is, after an error. */
static int usage_error(const kbi_verb_spec *spec)
{
    fprintf(stderr, "usage: kbench %s %s (see kbench %s --help)\n", spec->verb, spec->synopsis,
            spec->verb);
    return KBI_EXIT_USAGE;
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
    unsigned char *seen = kbi_xcalloc(spec->n_options + 1, 1);
    const kbi_option *o;
    int c, rc = KBI_OPTS_GO_ON;
    build_tables(spec, &longopts, &shortopts);
    /* 0 restarts getopt: a verb may run more than once in a process. */
    optind = 0;
    opterr = 0;
    while (rc == KBI_OPTS_GO_ON && (c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        if (c == 'h') {
            fputs(spec->help, stdout);
            rc = KBI_EXIT_OK;
        } else if (c == ':') {
            o = option_of(spec, optopt);
            fprintf(stderr, "kbench %s: option --%s needs a value\n", spec->verb,
                    o ? o->name : "?");
            rc = usage_error(spec);
        } else if ((o = option_of(spec, c)) == NULL) {
            fprintf(stderr, "kbench %s: unknown option '%s'\n", spec->verb, argv[optind - 1]);
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
