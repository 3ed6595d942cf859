/* The command line of every verb, parsed one way: a verb declares its
 * options in a table (name, value kind, where the value goes, its help) and
 * its operands; kbi_options_parse checks them all and says what is wrong as
 * "kbench VERB: ..." followed by the verb's one-line usage, or prints the
 * verb's --help.  The usage lines, the options of --help and the verbs of
 * `kbench --help` (which README.md's usage block repeats, checked by
 * tests/test_docs.c) are all written from the table, so they cannot
 * disagree with what the parser accepts. */
#ifndef KBENCH_OPTIONS_H
#define KBENCH_OPTIONS_H

#include <stddef.h>

#include "common.h"

typedef enum kbi_opt_kind {
    KBI_OPT_FLAG,     /* no value; *(int *)target = 1 */
    KBI_OPT_STRING,   /* *(const char **)target = value; repeated: a usage error (as the
                       * OPTIONAL, INT and FRACTION kinds) */
    KBI_OPT_OPTIONAL, /* --name or --name=VALUE; *(const char **)target = value or implicit */
    KBI_OPT_INT,      /* *(int *)target, an integer in [min, max] */
    KBI_OPT_FRACTION, /* *(double *)target, above 0 and below 1: 0.02 or 2% */
    KBI_OPT_PLUGINS,  /* appended to the folder list (char[KBI_PLUGIN_DIRS_MAX]) target */
    KBI_OPT_CUSTOM,   /* parse(value, target) returns 0 when value is good */
} kbi_opt_kind;

typedef struct kbi_option {
    const char *name; /* long name without "--" */
    char short_name;  /* -X, or 0 */
    kbi_opt_kind kind;
    void *target;                                  /* where the value goes (see the kinds) */
    const char *expected;                          /* for a bad value: "expected ..." */
    long min, max;                                 /* KBI_OPT_INT's range */
    const char *implicit;                          /* KBI_OPT_OPTIONAL's value when none is given */
    int (*parse)(const char *value, void *target); /* KBI_OPT_CUSTOM */
    int required;                                  /* the verb cannot run without it */
    const char *arg;  /* the value in usage and --help: "DIR"; NULL for a flag */
    const char *help; /* --help's text for it; lines joined by '\n' */
    int hidden;       /* kbench's own use (one kbench starting another): not listed */
} kbi_option;

typedef struct kbi_verb_spec {
    const char *verb;     /* "run" */
    const char *synopsis; /* the operands as usage shows them: "PROFILE.ini", "RESULTS..." */
    const char *help;     /* --help's text between the usage line and the options */
    const kbi_option *options;
    size_t n_options;
    size_t min_operands, max_operands; /* max SIZE_MAX: any number */
    const char *operands;              /* what they are, for errors: "BASELINE and RESULTS" */
    const char *summary;               /* one line for `kbench --help` */
    const char *notes;                 /* --help's text after the options, or NULL */
    const char *trailer;               /* usage after the options ("[-- NCU-ARGS]"), or NULL */
} kbi_verb_spec;

/* The options and their count of a spec, from the verb's option array. */
#define KBI_SPEC_OPTIONS(array) .options = array, .n_options = sizeof array / sizeof *array

/* kbi_options_parse's answer when the verb is to go on. */
#define KBI_OPTS_GO_ON (-1)

/* Parses argv (argv[0] the verb's name) by spec into the options' targets.
 * Returns KBI_OPTS_GO_ON with *first the index of the first operand, or the
 * verb's exit code: KBI_EXIT_OK after printing --help, KBI_EXIT_USAGE after
 * saying what is wrong.  May run more than once in a process. */
int kbi_options_parse(const kbi_verb_spec *spec, int argc, char **argv, int *first);

/* Appends the verb's full usage to out: "kbench VERB OPERANDS --required ARG
 * [--option ARG] [--flag] [--plugins DIR]... [TRAILER]", wrapped under 80
 * columns, continuation lines indented by indent + 7 spaces (under "kbench"). */
void kbi_options_synopsis(const kbi_verb_spec *spec, size_t indent, kbi_buf *out);

/* While out is not NULL, kbi_options_parse parses nothing: it appends the
 * verb's synopsis (indented by 2) and its summary (by 6) to out and returns
 * KBI_EXIT_OK, so that `kbench --help` lists each verb from its own table by
 * calling the verb.  kbi_options_collect(NULL) ends it. */
void kbi_options_collect(kbi_buf *out);

/* value as a fraction above 0 and below 1: "0.02" or "2%".  Returns 0 or -1. */
int kbi_parse_fraction(const char *value, double *out);

#endif
