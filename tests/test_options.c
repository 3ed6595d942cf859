/* Tests of options.c, the one parser of every verb's options: values are
 * checked (integers in range, fractions, custom), errors name the verb and
 * end with its usage, repeated --plugins add up while another value option
 * given twice is refused, --help answers, operands
 * are counted, required options are required; and every verb of the binary
 * answers a bad option the same way. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <criterion/redirect.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "common.h"
#include "loader.h"
#include "options.h"

typedef struct parsed {
    const char *out, *mode;
    int flag, n;
    double frac;
    char plugins[KBI_PLUGIN_DIRS_MAX];
} parsed;

static int even(const char *value, void *target)
{
    int v = atoi(value);
    if (v % 2)
        return -1;
    *(int *)target = v;
    return 0;
}

static int parse(parsed *p, int argc, char **argv, int *first)
{
    int dummy;
    const kbi_option options[] = {
        {.name = "out",
         .short_name = 'o',
         .kind = KBI_OPT_STRING,
         .target = &p->out,
         .arg = "DIR",
         .help = "where to write\nits second line"},
        {.name = "flag", .kind = KBI_OPT_FLAG, .target = &p->flag, .help = "a flag"},
        {.name = "n",
         .kind = KBI_OPT_INT,
         .target = &p->n,
         .min = 1,
         .max = 8,
         .expected = "an integer from 1 to 8",
         .arg = "N"},
        {.name = "frac", .kind = KBI_OPT_FRACTION, .target = &p->frac, .expected = "a fraction"},
        {.name = "plugins", .kind = KBI_OPT_PLUGINS, .target = p->plugins, .arg = "DIR"},
        {.name = "mode",
         .kind = KBI_OPT_OPTIONAL,
         .target = &p->mode,
         .implicit = "dflt",
         .arg = "M"},
        {.name = "even",
         .kind = KBI_OPT_CUSTOM,
         .target = &dummy,
         .parse = even,
         .expected = "an even number",
         .required = 1,
         .arg = "E"},
        {.name = "secret", .kind = KBI_OPT_FLAG, .target = &p->flag, .hidden = 1, .help = "no"},
    };
    const kbi_verb_spec spec = {.verb = "demo",
                                .synopsis = "A [B]",
                                .help = "help text\n",
                                KBI_SPEC_OPTIONS(options),
                                .min_operands = 1,
                                .max_operands = 2,
                                .operands = "A and maybe B",
                                .summary = "a demonstration",
                                .notes = "notes\n",
                                .trailer = "[-- MORE]"};
    memset(p, 0, sizeof *p);
    return kbi_options_parse(&spec, argc, argv, first);
}

Test(options, values_reach_their_targets)
{
    parsed p;
    int first;
    char *argv[] = {"demo",  "-o",     "x",      "--flag",    "a",  "--n",
                    "8",     "--frac", "2%",     "--plugins", "d1", "--plugins",
                    "d2:d3", "--mode", "--even", "4",         "b",  NULL};
    cr_assert_eq(parse(&p, 17, argv, &first), KBI_OPTS_GO_ON);
    cr_assert_str_eq(p.out, "x");
    cr_assert_eq(p.flag, 1);
    cr_assert_eq(p.n, 8);
    cr_assert_float_eq(p.frac, 0.02, 1e-12);
    cr_assert_str_eq(p.mode, "dflt");
    /* Repeated --plugins add up (DIR:DIR too), none is lost. */
    cr_assert(strstr(p.plugins, "d1") && strstr(p.plugins, "d2") && strstr(p.plugins, "d3"), "%s",
              p.plugins);
    cr_assert_eq(17 - first, 2);
    cr_assert_str_eq(argv[first], "a");
    cr_assert_str_eq(argv[first + 1], "b");
}

Test(options, help_is_printed_on_stdout, .init = cr_redirect_stdout)
{
    parsed p;
    int first;
    char *argv[] = {"demo", "--help", NULL};
    cr_assert_eq(parse(&p, 2, argv, &first), KBI_EXIT_OK);
    fflush(stdout);
    /* Written from the table: every option but the hidden one, with its value, its help
     * and the help's further lines under the first. */
    cr_assert_stdout_eq_str("usage: kbench demo A [B] [--out DIR] [--flag] [--n N] [--frac VALUE]\n"
                            "       [--plugins DIR]... [--mode[=M]] --even E [-- MORE]\n"
                            "\n"
                            "help text\n"
                            "\n"
                            "options:\n"
                            "  -o, --out DIR      where to write\n"
                            "                     its second line\n"
                            "      --flag         a flag\n"
                            "      --n N\n"
                            "      --frac VALUE\n"
                            "      --plugins DIR\n"
                            "      --mode[=M]\n"
                            "      --even E\n"
                            "  -h, --help         this text\n"
                            "\n"
                            "notes\n");
}

/* `kbench --help` asks each verb for its usage: parse then parses nothing. */
Test(options, collecting_gives_the_usage_and_summary)
{
    parsed p;
    int first;
    kbi_buf b = {0};
    char *argv[] = {"demo", "--bogus", NULL};
    kbi_options_collect(&b);
    cr_assert_eq(parse(&p, 2, argv, &first), KBI_EXIT_OK);
    kbi_options_collect(NULL);
    cr_assert_str_eq(b.data, "  kbench demo A [B] [--out DIR] [--flag] [--n N] [--frac VALUE]\n"
                             "         [--plugins DIR]... [--mode[=M]] --even E [-- MORE]\n"
                             "      a demonstration\n");
    kbi_buf_free(&b);
}

/* Each bad command line and the first line said about it. */
static void expect_usage(int argc, char **argv, const char *want)
{
    parsed p;
    int first;
    char line[512] = "";
    FILE *err = tmpfile(), *saved = stderr;
    cr_assert_not_null(err);
    stderr = err;
    cr_assert_eq(parse(&p, argc, argv, &first), KBI_EXIT_USAGE, "%s", want);
    stderr = saved;
    rewind(err);
    cr_assert_not_null(fgets(line, sizeof line, err));
    cr_assert_str_eq(line, want);
    cr_assert_not_null(fgets(line, sizeof line, err));
    cr_assert_str_eq(
        line, "usage: kbench demo A [B] --even E [OPTIONS] [-- MORE] (see kbench demo --help)\n");
    fclose(err);
}

Test(options, bad_command_lines_say_why_then_the_usage)
{
    char *a[] = {"demo", "--even", "2", "--bogus", "a", NULL};
    char *b[] = {"demo", "a", "--even", "2", "--out", NULL};
    char *c[] = {"demo", "--n", "9", "--even", "2", "a", NULL};
    char *d[] = {"demo", "--n", "3x", "a", NULL};
    char *e[] = {"demo", "--frac", "5", "a", NULL};
    char *f[] = {"demo", "--even", "3", "a", NULL};
    char *g[] = {"demo", "--even", "2", NULL};
    char *h[] = {"demo", "--even", "2", "a", "b", "c", NULL};
    char *i[] = {"demo", "a", NULL};
    char *j[] = {"demo", "--even", "2", "-o", "x", "a", "--out", "y", NULL};
    char *k[] = {"demo", "--even", "2", "--n", "1", "--n", "2", "a", NULL};
    char *l[] = {"demo", "--even", "2", "--mode", "--mode=z", "a", NULL};
    expect_usage(5, a, "kbench demo: unknown option '--bogus'\n");
    expect_usage(5, b, "kbench demo: option --out needs a value\n");
    expect_usage(6, c, "kbench demo: --n '9': expected an integer from 1 to 8\n");
    expect_usage(4, d, "kbench demo: --n '3x': expected an integer from 1 to 8\n");
    expect_usage(4, e, "kbench demo: --frac '5': expected a fraction\n");
    expect_usage(4, f, "kbench demo: --even '3': expected an even number\n");
    expect_usage(3, g, "kbench demo: missing A and maybe B\n");
    expect_usage(6, h, "kbench demo: unexpected argument 'c', expected A and maybe B\n");
    expect_usage(2, i, "kbench demo: missing --even, expected an even number\n");
    /* A value option given twice is refused, not silently replaced by the second. */
    expect_usage(8, j, "kbench demo: --out given twice (again as 'y'); it takes one value\n");
    expect_usage(8, k, "kbench demo: --n given twice (again as '2'); it takes one value\n");
    expect_usage(6, l, "kbench demo: --mode given twice (again as 'z'); it takes one value\n");
}

Test(options, fractions)
{
    double v = 0;
    cr_assert_eq(kbi_parse_fraction("0.05", &v), 0);
    cr_assert_float_eq(v, 0.05, 1e-12);
    cr_assert_eq(kbi_parse_fraction("60%", &v), 0);
    cr_assert_float_eq(v, 0.6, 1e-12);
    cr_assert_neq(kbi_parse_fraction("1", &v), 0);
    cr_assert_neq(kbi_parse_fraction("0", &v), 0);
    cr_assert_neq(kbi_parse_fraction("2%x", &v), 0);
    cr_assert_neq(kbi_parse_fraction("", &v), 0);
}

/* Every verb of the binary answers an unknown option alike, with exit 2. */
Test(options, every_verb_says_it_the_same_way)
{
    const char *verbs[] = {"list", "run", "report", "compare", "profile"};
    for (size_t k = 0; k < sizeof verbs / sizeof *verbs; k++) {
        char cmd[4600], line[512] = "", want[128];
        FILE *p;
        int status;
        snprintf(cmd, sizeof cmd, "%s %s --bogus 2>&1", KBENCH_TEST_BINARY, verbs[k]);
        p = popen(cmd, "r");
        cr_assert_not_null(p);
        cr_assert_not_null(fgets(line, sizeof line, p));
        snprintf(want, sizeof want, "kbench %s: unknown option '--bogus'\n", verbs[k]);
        cr_expect_str_eq(line, want);
        cr_assert_not_null(fgets(line, sizeof line, p));
        snprintf(want, sizeof want, "usage: kbench %s ", verbs[k]);
        cr_expect(strncmp(line, want, strlen(want)) == 0, "%s", line);
        while (fgets(line, sizeof line, p))
            ;
        status = pclose(p);
        cr_expect_eq(WEXITSTATUS(status), 2, "%s", verbs[k]);
    }
}
