/* The command line of every verb, parsed one way: a verb declares its
 * options in a table (name, value kind, where the value goes) and its
 * operands; kbi_options_parse checks them all and says what is wrong as
 * "kbench VERB: ..." followed by the verb's one-line usage, or prints the
 * verb's --help. */
#ifndef KBENCH_OPTIONS_H
#define KBENCH_OPTIONS_H

#include <stddef.h>

typedef enum kbi_opt_kind {
    KBI_OPT_FLAG,     /* no value; *(int *)target = 1 */
    KBI_OPT_STRING,   /* *(const char **)target = value; repeated: the last wins */
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
} kbi_option;

typedef struct kbi_verb_spec {
    const char *verb;     /* "run" */
    const char *synopsis; /* the short usage after "kbench VERB ": "PROFILE.ini [OPTIONS]" */
    const char *help;     /* the whole --help text, printed on stdout */
    const kbi_option *options;
    size_t n_options;
    size_t min_operands, max_operands; /* max SIZE_MAX: any number */
    const char *operands;              /* what they are, for errors: "BASELINE and RESULTS" */
} kbi_verb_spec;

/* A verb's spec from its option array (whose count it takes). */
#define KBI_VERB_SPEC(verb, synopsis, help, options, min_ops, max_ops, operands)                   \
    {                                                                                              \
        verb, synopsis, help, options, sizeof options / sizeof *options, min_ops, max_ops,         \
            operands                                                                               \
    }

/* kbi_options_parse's answer when the verb is to go on. */
#define KBI_OPTS_GO_ON (-1)

/* Parses argv (argv[0] the verb's name) by spec into the options' targets.
 * Returns KBI_OPTS_GO_ON with *first the index of the first operand, or the
 * verb's exit code: KBI_EXIT_OK after printing --help, KBI_EXIT_USAGE after
 * saying what is wrong.  May run more than once in a process. */
int kbi_options_parse(const kbi_verb_spec *spec, int argc, char **argv, int *first);

/* value as a fraction above 0 and below 1: "0.02" or "2%".  Returns 0 or -1. */
int kbi_parse_fraction(const char *value, double *out);

#endif
