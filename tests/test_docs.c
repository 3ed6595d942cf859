/* The docs cannot rot: docs/plugin.md's plugin is built with the page's own
 * command and run; the page quotes its files as they are and lists the
 * descriptor's fields in plugin.h's order; README.md's usage block is what
 * `kbench --help` writes from the verbs' option tables; every option has its
 * help; and the profile line limit README states is the parser's. */
#define _XOPEN_SOURCE 700
#include <ctype.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

/* SOURCE/rel as text (caller frees). */
static char *source_file(const char *rel)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", KBENCH_TEST_SOURCE_DIR, rel);
    return slurp(path);
}

/* Runs cmd; its stdout and stderr into *out (caller frees); returns its exit status. */
static int run_cmd(const char *cmd, char **out)
{
    kbi_buf b = {0};
    char chunk[4096];
    size_t n;
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p, "%s", cmd);
    kbi_buf_printf(&b, "%s", "");
    while ((n = fread(chunk, 1, sizeof chunk, p)) > 0)
        kbi_buf_printf(&b, "%.*s", (int)n, chunk);
    *out = b.data;
    return WEXITSTATUS(pclose(p));
}

static size_t count(const char *text, const char *what)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, what)) != NULL; p += strlen(what))
        n++;
    return n;
}

/* The fenced block of kind (```c) in md whose body is text, or NULL. */
static const char *quoted(const char *md, const char *kind, const char *text)
{
    kbi_buf fence = {0};
    const char *hit;
    kbi_buf_printf(&fence, "```%s\n%s```\n", kind, text);
    hit = strstr(md, fence.data);
    kbi_buf_free(&fence);
    return hit;
}

Test(docs, plugin_page_quotes_its_files_as_they_are)
{
    char *md = source_file("docs/plugin.md"), *c = source_file("docs/example-plugin/example.c");
    char *ini = source_file("docs/example-plugin/example.ini");
    cr_expect_not_null(quoted(md, "c", c), "docs/plugin.md quotes example.c verbatim");
    cr_expect_not_null(quoted(md, "ini", ini), "docs/plugin.md quotes example.ini verbatim");
    kbi_free_all(3, md, c, ini);
}

/* The page's build command (its one line that starts with "cc "), run as the page says: in
 * a folder holding example.c, with KBENCH the checkout.  The plugin it builds is listed and
 * runs the page's profile, every case ok: no GPU needed. */
Test(docs, the_documented_command_builds_a_plugin_that_lists_and_runs, .fini = remove_tmp)
{
    char *md = source_file("docs/plugin.md"), *c = source_file("docs/example-plugin/example.c");
    char path[4400], cmd[9000], *out, *results;
    const char *line = strstr(md, "\ncc ");
    FILE *f;
    cr_assert_not_null(line, "docs/plugin.md has a build command starting with \"cc \"");
    line++;
    make_tmp_named("docs");
    snprintf(path, sizeof path, "%s/example.c", tmp);
    cr_assert_not_null(f = fopen(path, "w"));
    fputs(c, f);
    fclose(f);
    snprintf(path, sizeof path, "%s/build.sh", tmp);
    cr_assert_not_null(f = fopen(path, "w"));
    fprintf(f, "%.*s\n", (int)strcspn(line, "\n"), line);
    fclose(f);
    snprintf(cmd, sizeof cmd, "cd '%s' && KBENCH='%s' sh build.sh 2>&1", tmp,
             KBENCH_TEST_SOURCE_DIR);
    cr_assert_eq(run_cmd(cmd, &out), 0, "the documented build failed:\n%s", out);
    free(out);

    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' list --plugins . 2>&1", tmp, KBENCH_TEST_BINARY);
    cr_assert_eq(run_cmd(cmd, &out), 0, "%s", out);
    cr_expect(strstr(out, "example  (ABI ") != NULL, "kbench list shows the plugin:\n%s", out);
    cr_expect(strstr(out, "    loop ") != NULL, "and its variant:\n%s", out);
    free(out);

    snprintf(cmd, sizeof cmd,
             "cd '%s' && '%s' run '%s/docs/example-plugin/example.ini' --plugins . --out out 2>&1",
             tmp, KBENCH_TEST_BINARY, KBENCH_TEST_SOURCE_DIR);
    cr_assert_eq(run_cmd(cmd, &out), 0, "%s", out);
    free(out);
    snprintf(path, sizeof path, "%s/out/results.jsonl", tmp);
    results = slurp(path);
    cr_expect_eq(count(results, "\"id\":\"example/loop/"), 2, "%s", results);
    cr_expect_eq(count(results, "\"status\":\"ok\""), 2, "every case verified and timed");
    kbi_free_all(3, md, c, results);
}

/* Identifiers of the fields of `typedef struct NAME {...}` in header text, in order. */
static void struct_fields(const char *header, const char *name, kbi_strlist *fields)
{
    kbi_buf open = {0};
    const char *p, *end;
    kbi_buf body = {0};
    kbi_buf_printf(&open, "typedef struct %s {", name);
    p = strstr(header, open.data);
    cr_assert_not_null(p, "%s", open.data);
    p += open.len;
    end = strstr(p, "\n}");
    cr_assert_not_null(end);
    kbi_buf_printf(&body, "%s", "");
    while (p < end) { /* the body without its comments */
        if (p[0] == '/' && p[1] == '*') {
            const char *close = strstr(p + 2, "*/");
            p = close ? close + 2 : end;
        } else {
            kbi_buf_printf(&body, "%c", *p++);
        }
    }
    for (char *decl = strtok(body.data, ";"); decl; decl = strtok(NULL, ";")) {
        char *fn = strstr(decl, "(*"), *e;
        if (fn) { /* a function pointer: (*name)(...) */
            fn += 2;
            e = strchr(fn, ')');
        } else { /* the last identifier of the declaration */
            for (e = decl + strlen(decl);
                 e > decl && !isalnum((unsigned char)e[-1]) && e[-1] != '_'; e--)
                ;
            for (fn = e; fn > decl && (isalnum((unsigned char)fn[-1]) || fn[-1] == '_'); fn--)
                ;
        }
        if (e && e > fn) {
            *e = '\0';
            kbi_strlist_add(fields, fn);
        }
    }
    kbi_buf_free(&open);
    kbi_buf_free(&body);
}

Test(docs, plugin_page_lists_the_descriptor_fields_in_the_header_order)
{
    char *h = source_file("harness/include/kbench/plugin.h"), *md = source_file("docs/plugin.md");
    const char *table = strstr(md, "| field | type | what it is |"), *p;
    kbi_strlist header = {0}, page = {0};
    struct_fields(h, "kb_plugin", &header);
    cr_assert_geq(header.n, 13, "kb_plugin has its 1.0 fields at least");
    cr_assert_str_eq(header.s[0], "abi_version");
    cr_assert_not_null(table, "docs/plugin.md has the descriptor's table");
    for (p = strstr(table, "\n| `"); p && p[1] == '|'; p = strstr(p + 1, "\n")) {
        char field[64];
        if (sscanf(p, "\n| `%63[^`]`", field) == 1)
            kbi_strlist_add(&page, field);
    }
    cr_assert_eq(page.n, header.n, "the page lists %zu fields, plugin.h declares %zu", page.n,
                 header.n);
    for (size_t i = 0; i < header.n; i++)
        cr_expect_str_eq(page.s[i], header.s[i], "field %zu", i + 1);
    kbi_strlist_free(&header);
    kbi_strlist_free(&page);
    kbi_free_all(2, h, md);
}

/* `kbench --help`'s verbs, their indent of 2 removed: the block README.md must hold. */
static char *help_verbs(void)
{
    char cmd[4200], *out, *start, *end;
    kbi_buf b = {0};
    snprintf(cmd, sizeof cmd, "'%s' --help", KBENCH_TEST_BINARY);
    cr_assert_eq(run_cmd(cmd, &out), 0);
    start = strstr(out, "verbs:\n");
    cr_assert_not_null(start, "%s", out);
    start += strlen("verbs:\n");
    end = strstr(start, "\n\n");
    cr_assert_not_null(end);
    kbi_buf_printf(&b, "%s", "");
    for (char *line = start; line <= end; line = strchr(line, '\n') + 1) {
        size_t len = strcspn(line, "\n");
        cr_assert(len > 2 && line[0] == ' ' && line[1] == ' ', "%.*s", (int)len, line);
        kbi_buf_printf(&b, "%.*s\n", (int)len - 2, line + 2);
    }
    free(out);
    return b.data;
}

/* README's usage block is what `kbench --help` writes from the option tables, so README
 * names every option of every verb (an option added to a table and not to README fails
 * here). */
Test(docs, readme_usage_block_is_kbench_help)
{
    char *readme = source_file("README.md"), *want = help_verbs();
    const char *block = strstr(readme, "## Using kbench\n\n```\n"), *end;
    cr_assert_not_null(block, "README.md has a usage block under \"## Using kbench\"");
    block += strlen("## Using kbench\n\n```\n");
    end = strstr(block, "```");
    cr_assert_not_null(end);
    cr_expect(strlen(want) == (size_t)(end - block) && strncmp(block, want, strlen(want)) == 0,
              "README.md's usage block differs from `kbench --help`; it should read:\n%s", want);
    kbi_free_all(2, readme, want);
}

/* Each verb's --help explains each of its options (an option without .help in its table
 * prints a bare name). */
Test(docs, every_option_of_every_verb_has_its_help)
{
    char *verbs = help_verbs();
    size_t n_verbs = 0;
    for (char *line = verbs; *line; line = strchr(line, '\n') + 1) {
        char verb[32], cmd[4300], *out, *opts;
        if (sscanf(line, "kbench %31s", verb) != 1)
            continue;
        n_verbs++;
        snprintf(cmd, sizeof cmd, "'%s' %s --help", KBENCH_TEST_BINARY, verb);
        cr_assert_eq(run_cmd(cmd, &out), 0, "%s", cmd);
        opts = strstr(out, "\noptions:\n");
        cr_assert_not_null(opts, "kbench %s --help lists its options", verb);
        opts += strlen("\noptions:\n");
        for (char *o = opts; *o && *o != '\n'; o = strchr(o, '\n') + 1) {
            size_t len = strcspn(o, "\n");
            char text[512];
            snprintf(text, sizeof text, "%.*s", (int)len, o);
            const char *label = text + strspn(text, " ");
            /* An option's line (indented 2 or 6; its help's further lines are indented
             * more): the label, then two spaces or more, then its help. */
            if (label[0] == '-' && label - text <= 6)
                cr_expect(strstr(label, "  ") != NULL, "kbench %s: '%s' has no help", verb, text);
        }
        free(out);
    }
    cr_expect_geq(n_verbs, 8, "%s", verbs);
    free(verbs);
}

/* The line limit README states is the one the profile parser enforces. */
Test(docs, readme_states_the_profile_line_limit, .fini = remove_tmp)
{
    char path[4300], cmd[9000], want[64], *out, *readme = source_file("README.md");
    const char *said;
    int limit = 0;
    FILE *f;
    make_tmp_named("docs-line");
    snprintf(path, sizeof path, "%s/long.ini", tmp);
    cr_assert_not_null(f = fopen(path, "w"));
    fprintf(f, "[run]\nwarmup = 1 ;");
    for (int i = 0; i < 300; i++)
        fputc('x', f);
    fputc('\n', f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "'%s' run '%s' --out '%s/out' 2>&1", KBENCH_TEST_BINARY, path, tmp);
    cr_expect_eq(run_cmd(cmd, &out), 2, "%s", out);
    said = strstr(out, "line is longer than ");
    cr_assert_not_null(said, "%s", out);
    cr_assert_eq(sscanf(said, "line is longer than %d characters", &limit), 1);
    snprintf(want, sizeof want, "at most %d characters", limit);
    cr_expect(strstr(readme, want) != NULL, "README.md says \"%s\"", want);
    kbi_free_all(2, out, readme);
}
