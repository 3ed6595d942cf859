/* INI profiles: parsing with inih, validation against the loaded plugins'
 * descriptors, axis expansion, and the case list.  Every error is collected
 * as "FILE:LINE: what was wrong, expected what" before anything runs. */
#define _POSIX_C_SOURCE 200809L
#include "profile.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <ini.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knob_variants.h"

/* inih's line buffer (INI_MAX_LINE in Debian's build); longer lines are
 * refused by our reader rather than silently split. */
#define LINE_MAX_CHARS 200
#define MAX_LIST_ITEMS 100000

void kbi_run_opts_default(kbi_run_opts *o)
{
    memset(o, 0, sizeof *o);
    o->warmup = 3;
    o->min_samples = 10;
    o->max_samples = 1000;
    o->min_time = 0.5;
    o->max_time = 0.0; /* timeout / 2 */
    o->max_noise = 0.02;
    o->timeout = 60.0;
    o->cache = KBI_CACHE_COLD;
    o->device = 0;
    o->seed = 1;
    o->rounds = 1;
    o->energy = 0;
    o->energy_window = 2.0;
    o->energy_windows = 3;
}

/* ---- values ---- */

void kbi_value_free(kbi_value *v)
{
    free(v->text);
    free(v->ints);
    v->text = NULL;
    v->ints = NULL;
}

/* Parses a whole-string integer with an optional size suffix: k M G T
 * (powers of 1000) or Ki Mi Gi Ti (powers of 1024). */
static int parse_int(const char *s, int64_t *out)
{
    char *end;
    long long v;
    int64_t mult = 1;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (end == s || errno == ERANGE)
        return -1;
    if (*end) {
        static const struct {
            const char *sfx;
            int64_t mult;
        } sfx[] = {{"k", 1000LL},      {"K", 1000LL},         {"M", 1000000LL},
                   {"G", 1000000000LL}, {"T", 1000000000000LL}, {"Ki", 1LL << 10},
                   {"Mi", 1LL << 20},  {"Gi", 1LL << 30},     {"Ti", 1LL << 40}};
        size_t i;
        for (i = 0; i < sizeof sfx / sizeof sfx[0]; i++)
            if (strcmp(end, sfx[i].sfx) == 0)
                break;
        if (i == sizeof sfx / sizeof sfx[0])
            return -1;
        mult = sfx[i].mult;
        if (v > INT64_MAX / mult || v < INT64_MIN / mult)
            return -1;
    }
    *out = (int64_t)v * mult;
    return 0;
}

static int parse_float(const char *s, double *out)
{
    char *end;
    errno = 0;
    *out = strtod(s, &end);
    if (end == s || *end || errno == ERANGE || !isfinite(*out))
        return -1;
    return 0;
}

/* Shortest "%g" text that reads back as the same double. */
static char *float_text(double f)
{
    char buf[64];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, f);
        if (strtod(buf, NULL) == f)
            break;
    }
    return kbi_strdup(buf);
}

static int is_word(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr("_.+-", *s))
            return 0;
    return 1;
}

/* Is `s` one of the '|'-separated choices? */
static int in_choices(const char *choices, const char *s)
{
    size_t n = strlen(s);
    const char *p = choices;
    while (*p) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, s, n) == 0)
            return 1;
        if (!bar)
            break;
        p = bar + 1;
    }
    return 0;
}

/* Reads a plugin's count choices for DIMS and INTS: NULL (any count from
 * `min` to `max`), an exact count "3" or a range "2-8".  A malformed string
 * is the plugin's fault; the message says what it should be. */
static int count_choices(const kb_param *param, int min, int max, int *lo, int *hi, char *err)
{
    const char *c = param->choices;
    char *end;
    long a, b;
    *lo = min;
    *hi = max;
    if (!c)
        return KBI_OK;
    if (!isdigit((unsigned char)c[0]))
        goto bad;
    a = strtol(c, &end, 10);
    b = a;
    if (*end == '-') {
        const char *q = end + 1;
        if (!isdigit((unsigned char)*q))
            goto bad;
        b = strtol(q, &end, 10);
    }
    if (*end || a < min || b > max || a > b)
        goto bad;
    *lo = (int)a;
    *hi = (int)b;
    return KBI_OK;
bad:
    kbi_errf(err,
             "parameter %s declares the counts '%s', expected a count such as 3 or a range "
             "such as 2-8, within %d to %d",
             param->name, c, min, max);
    return KBI_ERR_INPUT;
}

/* "'TEXT' has N WHAT, expected LO[ to HI]SUFFIX". */
static void count_error(char *err, const char *text, int n, const char *what, int lo, int hi,
                        const char *suffix)
{
    if (lo == hi)
        kbi_errf(err, "'%s' has %d %s, expected %d%s", text, n, what, lo, suffix);
    else
        kbi_errf(err, "'%s' has %d %s, expected %d to %d%s", text, n, what, lo, hi, suffix);
}

/* A KB_PARAM_INTS value: "[0, 2,1,3]" (spaces allowed inside, "[]" is the
 * empty list), canonical text "[0,2,1,3]". */
static int parse_ints(const kb_param *param, const char *text, kbi_value *out, char *err)
{
    size_t len = strlen(text);
    char *inner = NULL, *p;
    kbi_buf canon = {0};
    int lo, hi;
    if (count_choices(param, 0, KB_MAX_INTS, &lo, &hi, err) != KBI_OK)
        return KBI_ERR_INPUT;
    if (len < 2 || text[0] != '[' || text[len - 1] != ']')
        goto bad;
    inner = kbi_strdup(text + 1);
    inner[len - 2] = '\0';
    if (strpbrk(inner, "[]"))
        goto bad; /* nested or unbalanced */
    out->ints = kbi_xcalloc(KB_MAX_INTS, sizeof *out->ints);
    kbi_buf_printf(&canon, "[");
    p = inner;
    if (*kbi_trim(inner)) {
        for (;;) {
            char *comma = strchr(p, ',');
            int64_t v;
            if (comma)
                *comma = '\0';
            if (parse_int(kbi_trim(p), &v) != 0)
                goto bad;
            if (out->n_ints == KB_MAX_INTS) {
                kbi_errf(err, "'%s' has more than %d integers, expected at most %d", text,
                         KB_MAX_INTS, hi);
                goto fail;
            }
            out->ints[out->n_ints++] = v;
            kbi_buf_printf(&canon, "%s%lld", out->n_ints > 1 ? "," : "", (long long)v);
            if (!comma)
                break;
            p = comma + 1;
        }
    }
    kbi_buf_printf(&canon, "]");
    /* Values of a long list are many: keep only what this one holds. */
    out->ints =
        kbi_xrealloc(out->ints, (size_t)(out->n_ints ? out->n_ints : 1) * sizeof *out->ints);
    if (out->n_ints < lo || out->n_ints > hi) {
        count_error(err, text, out->n_ints, "integers", lo, hi, " in brackets");
        goto fail;
    }
    free(inner);
    out->text = canon.data;
    return KBI_OK;
bad:
    kbi_errf(err, "'%s' is not a list of integers, expected e.g. [0,2,1,3]", text);
fail:
    free(inner);
    kbi_buf_free(&canon);
    free(out->ints);
    out->ints = NULL;
    out->n_ints = 0;
    return KBI_ERR_INPUT;
}

int kbi_value_parse(const kb_param *param, const char *text, kbi_value *out, char *err)
{
    char buf[64];
    memset(out, 0, sizeof *out);
    out->type = param->type;
    switch (param->type) {
    case KB_PARAM_INT:
        if (parse_int(text, &out->i) != 0) {
            kbi_errf(err, "'%s' is not an integer, expected digits with an optional k/M/G/T or "
                          "Ki/Mi/Gi/Ti suffix",
                     text);
            return KBI_ERR_INPUT;
        }
        snprintf(buf, sizeof buf, "%lld", (long long)out->i);
        out->text = kbi_strdup(buf);
        out->f = (double)out->i;
        return KBI_OK;
    case KB_PARAM_FLOAT:
        if (parse_float(text, &out->f) != 0) {
            kbi_errf(err, "'%s' is not a number, expected a finite decimal such as 0.5 or 2e-3",
                     text);
            return KBI_ERR_INPUT;
        }
        out->text = float_text(out->f);
        return KBI_OK;
    case KB_PARAM_STRING:
        if (!is_word(text)) {
            kbi_errf(err, "'%s' is not a word, expected letters, digits, '_', '.', '+' or '-'",
                     text);
            return KBI_ERR_INPUT;
        }
        if (param->choices && !in_choices(param->choices, text)) {
            kbi_errf(err, "'%s' is not a choice of %s, expected one of %s", text, param->name,
                     param->choices);
            return KBI_ERR_INPUT;
        }
        out->text = kbi_strdup(text);
        return KBI_OK;
    case KB_PARAM_DIMS: {
        kbi_buf canon = {0};
        const char *p = text;
        int lo, hi;
        if (count_choices(param, 1, KB_MAX_RANK, &lo, &hi, err) != KBI_OK)
            return KBI_ERR_INPUT;
        while (*p) {
            char *end;
            long long v;
            errno = 0;
            v = strtoll(p, &end, 10);
            if (end == p || errno == ERANGE || v <= 0 || out->n_dims == KB_MAX_RANK ||
                (*end && *end != 'x')) {
                kbi_errf(err,
                         "'%s' is not a shape, expected up to %d positive integers joined by "
                         "'x', such as 4096x4096x256",
                         text, KB_MAX_RANK);
                kbi_buf_free(&canon);
                return KBI_ERR_INPUT;
            }
            out->dims[out->n_dims++] = v;
            kbi_buf_printf(&canon, "%s%lld", out->n_dims > 1 ? "x" : "", v);
            p = *end ? end + 1 : end;
            if (*end == 'x' && !*p)
                out->n_dims = KB_MAX_RANK + 1; /* trailing 'x' */
        }
        if (out->n_dims == 0 || out->n_dims > KB_MAX_RANK) {
            kbi_errf(err,
                     "'%s' is not a shape, expected positive integers joined by 'x', such "
                     "as 4096x4096x256",
                     text);
            kbi_buf_free(&canon);
            return KBI_ERR_INPUT;
        }
        if (out->n_dims < lo || out->n_dims > hi) {
            count_error(err, text, out->n_dims, "dimensions", lo, hi, " joined by 'x'");
            kbi_buf_free(&canon);
            return KBI_ERR_INPUT;
        }
        out->text = canon.data;
        return KBI_OK;
    }
    case KB_PARAM_INTS:
        return parse_ints(param, text, out, err);
    }
    kbi_errf(err, "parameter %s has an unknown type %d", param->name, (int)param->type);
    return KBI_ERR_INPUT;
}

/* ---- lists and ranges ---- */

void kbi_strv_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* Appends a copy of s; the array doubles when its count reaches a power
 * of two, so a range of 100000 values is not 100000 reallocations. */
static void strv_push(char ***v, size_t *n, const char *s)
{
    if ((*n & (*n - 1)) == 0)
        *v = kbi_xrealloc(*v, (*n ? 2 * *n : 1) * sizeof **v);
    (*v)[(*n)++] = kbi_strdup(s);
}

/* Expands "a:b:*k" or "a:b:+k" into *v. */
static int expand_range(const char *item, kb_param_type type, char ***v, size_t *n, char *err)
{
    char a[128], b[128], step[128], op;
    double fa, fb, fk;
    int64_t ia, ib, ik;
    if (strlen(item) >= sizeof a ||
        sscanf(item, "%127[^:]:%127[^:]:%c%127s", a, b, &op, step) != 4 ||
        (op != '*' && op != '+')) {
        kbi_errf(err, "'%s' is not a range, expected START:END:*FACTOR or START:END:+STEP", item);
        return KBI_ERR_INPUT;
    }
    if (type == KB_PARAM_INT) {
        if (parse_int(a, &ia) || parse_int(b, &ib) || parse_int(step, &ik)) {
            kbi_errf(err, "'%s' is not an integer range, expected integers in START:END:*K", item);
            return KBI_ERR_INPUT;
        }
        if ((op == '*' && (ik < 2 || ia <= 0)) || (op == '+' && ik <= 0) || ib < ia) {
            kbi_errf(err,
                     "'%s' never reaches its end, expected START <= END with a factor >= 2 "
                     "(and START > 0) or a step > 0",
                     item);
            return KBI_ERR_INPUT;
        }
        for (int64_t x = ia; x <= ib;) {
            char buf[32];
            if (*n >= MAX_LIST_ITEMS) {
                kbi_errf(err, "'%s' expands to more than %d values", item, MAX_LIST_ITEMS);
                return KBI_ERR_INPUT;
            }
            snprintf(buf, sizeof buf, "%lld", (long long)x);
            strv_push(v, n, buf);
            if (op == '*' ? x > INT64_MAX / ik : x > INT64_MAX - ik)
                break;
            x = op == '*' ? x * ik : x + ik;
        }
        return KBI_OK;
    }
    if (parse_float(a, &fa) || parse_float(b, &fb) || parse_float(step, &fk)) {
        kbi_errf(err, "'%s' is not a numeric range, expected numbers in START:END:+STEP", item);
        return KBI_ERR_INPUT;
    }
    if ((op == '*' && (fk <= 1.0 || fa <= 0.0)) || (op == '+' && fk <= 0.0) || fb < fa) {
        kbi_errf(err,
                 "'%s' never reaches its end, expected START <= END with a factor > 1 (and "
                 "START > 0) or a step > 0",
                 item);
        return KBI_ERR_INPUT;
    }
    /* Count steps from the start so rounding does not accumulate; include the
     * end when it is reached within rounding. */
    for (long i = 0;; i++) {
        double x = op == '*' ? fa * pow(fk, (double)i) : fa + (double)i * fk;
        char *t;
        if (x > fb * (1.0 + 1e-12) + (op == '+' ? 1e-12 * fk : 0.0))
            break;
        if (*n >= MAX_LIST_ITEMS) {
            kbi_errf(err, "'%s' expands to more than %d values", item, MAX_LIST_ITEMS);
            return KBI_ERR_INPUT;
        }
        t = float_text(x);
        strv_push(v, n, t);
        free(t);
    }
    return KBI_OK;
}

/* The next comma not inside brackets, so "[0,1], [1,0]" is two items; an
 * unbalanced bracket leaves the rest as one item for the value parser to
 * refuse. */
static char *comma_outside_brackets(char *p)
{
    int depth = 0;
    for (; *p; p++) {
        if (*p == '[')
            depth++;
        else if (*p == ']' && depth > 0)
            depth--;
        else if (*p == ',' && depth == 0)
            return p;
    }
    return NULL;
}

int kbi_expand_list(const char *text, kb_param_type type, char ***items, size_t *n, char *err)
{
    char *copy = kbi_strdup(text), *p = copy;
    int rc = KBI_OK;
    *items = NULL;
    *n = 0;
    if (kbi_trim(copy)[0] == '\0') {
        kbi_errf(err, "empty list, expected at least one value");
        free(copy);
        return KBI_ERR_INPUT;
    }
    for (;;) {
        char *comma = type == KB_PARAM_INTS ? comma_outside_brackets(p) : strchr(p, ',');
        char *item;
        if (comma)
            *comma = '\0';
        item = kbi_trim(p);
        if (!*item) {
            kbi_errf(err, "empty item in list '%s', expected values separated by single commas",
                     text);
            rc = KBI_ERR_INPUT;
            break;
        }
        if ((type == KB_PARAM_INT || type == KB_PARAM_FLOAT) && strchr(item, ':')) {
            rc = expand_range(item, type, items, n, err);
            if (rc != KBI_OK)
                break;
        } else {
            if (*n >= MAX_LIST_ITEMS) {
                kbi_errf(err, "list has more than %d values, expected at most %d",
                         MAX_LIST_ITEMS, MAX_LIST_ITEMS);
                rc = KBI_ERR_INPUT;
                break;
            }
            strv_push(items, n, item);
        }
        if (!comma)
            break;
        p = comma + 1;
    }
    free(copy);
    if (rc != KBI_OK) {
        kbi_strv_free(*items, *n);
        *items = NULL;
        *n = 0;
    }
    return rc;
}

/* ---- reading the INI file ---- */

typedef struct entry {
    char *section, *key, *value;
    int line;
} entry;

typedef struct section_seen {
    char *name;
    int line;
} section_seen;

typedef struct parse_state {
    const char *name; /* file name for messages */
    const char *text; /* whole file */
    const char *pos;
    int line;          /* line most recently handed to inih */
    int line_indented; /* it began with white space (a continuation) */
    int key_in_section; /* a key was read since the last [section]: inih then takes an
                           indented line, "    [1,0]" too, as a continuation */
    entry *entries;
    size_t n_entries;
    section_seen *sections;
    size_t n_sections;
    kbi_buf *errors;
    int n_errors;
} parse_state;

static void add_error(parse_state *st, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void add_error(parse_state *st, int line, const char *fmt, ...)
{
    char msg[KBI_ERR_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (line > 0)
        kbi_buf_printf(st->errors, "%s:%d: %s\n", st->name, line, msg);
    else /* not tied to a line (the file as a whole) */
        kbi_buf_printf(st->errors, "%s: %s\n", st->name, msg);
    st->n_errors++;
}

/* The line where `key` was set in [section], or 0. */
static int key_line(const parse_state *st, const char *section, const char *key)
{
    for (size_t i = 0; i < st->n_entries; i++)
        if (strcmp(st->entries[i].section, section) == 0 && strcmp(st->entries[i].key, key) == 0)
            return st->entries[i].line;
    return 0;
}

/* Cuts a continuation line at an inline comment (';' after white space), as inih does for
 * the first line of a key but not for the lines that continue it. */
static void strip_inline_comment(char *line)
{
    for (char *q = line + 1; *q; q++)
        if (*q == ';' && (q[-1] == ' ' || q[-1] == '\t')) {
            q[0] = '\n';
            q[1] = '\0';
            return;
        }
}

/* inih's reader: hands over one line at a time so the handler knows its
 * number, notes sections (inih does not report empty ones), and refuses
 * lines inih would split. */
static char *reader(char *str, int num, void *stream)
{
    parse_state *st = stream;
    const char *nl, *p;
    size_t len;
    if (!*st->pos)
        return NULL;
    /* A UTF-8 byte-order mark (editors on Windows write one) is not part of the first line:
     * left there it would hide a first section from the checks below. */
    if (st->line == 0 && strncmp(st->pos, "\xEF\xBB\xBF", 3) == 0)
        st->pos += 3;
    nl = strchr(st->pos, '\n');
    len = nl ? (size_t)(nl - st->pos) : strlen(st->pos);
    st->line++;
    st->line_indented = len > 0 && (st->pos[0] == ' ' || st->pos[0] == '\t');
    if (len + 2 > (size_t)num || len + 2 > LINE_MAX_CHARS) {
        add_error(st, st->line,
                  "line is longer than %d characters, expected a shorter line (continue a "
                  "list on the next line, indented)",
                  LINE_MAX_CHARS - 2);
        str[0] = '\n';
        str[1] = '\0';
    } else {
        memcpy(str, st->pos, len);
        str[len] = '\n';
        str[len + 1] = '\0';
        for (p = str; *p == ' ' || *p == '\t'; p++)
            ;
        if (st->line_indented && st->key_in_section)
            strip_inline_comment(str);
        if (*p == '[' && !(st->line_indented && st->key_in_section)) {
            const char *close = strchr(p, ']');
            if (close) {
                char name[LINE_MAX_CHARS];
                size_t n = (size_t)(close - p - 1);
                memcpy(name, p + 1, n);
                name[n] = '\0';
                st->sections = kbi_xrealloc(st->sections, (st->n_sections + 1) *
                                                              sizeof *st->sections);
                st->sections[st->n_sections].name = kbi_strdup(kbi_trim(name));
                st->sections[st->n_sections++].line = st->line;
                st->key_in_section = 0;
            }
        }
    }
    st->pos += nl ? len + 1 : len;
    return str;
}

static int handler(void *user, const char *section, const char *key, const char *value)
{
    parse_state *st = user;
    entry *last = st->n_entries ? &st->entries[st->n_entries - 1] : NULL;
    st->key_in_section = 1;
    if (st->line_indented && last && strcmp(last->section, section) == 0 &&
        strcmp(last->key, key) == 0) {
        /* A continuation line: part of the same list. */
        kbi_buf b = {0};
        kbi_buf_printf(&b, "%s %s", last->value, value);
        free(last->value);
        last->value = b.data;
        return 1;
    }
    st->entries = kbi_xrealloc(st->entries, (st->n_entries + 1) * sizeof *st->entries);
    st->entries[st->n_entries++] =
        (entry){kbi_strdup(section), kbi_strdup(key), kbi_strdup(value), st->line};
    return 1;
}

/* ---- validation ---- */

static const entry *find_dup(const parse_state *st, size_t upto, const entry *e)
{
    for (size_t i = 0; i < upto; i++)
        if (strcmp(st->entries[i].section, e->section) == 0 &&
            strcmp(st->entries[i].key, e->key) == 0)
            return &st->entries[i];
    return NULL;
}

/* Parses one [run] number into *out within [lo, hi]. */
static void run_number(parse_state *st, const entry *e, double lo, double hi, int integer,
                       double *out)
{
    double v;
    int64_t iv;
    if (integer ? parse_int(e->value, &iv) != 0 : parse_float(e->value, &v) != 0) {
        add_error(st, e->line, "%s = '%s' is not %s, expected %s", e->key, e->value,
                  integer ? "an integer" : "a number", integer ? "an integer" : "a number");
        return;
    }
    if (integer)
        v = (double)iv;
    if (v < lo || v > hi) {
        add_error(st, e->line, "%s = %s is out of range, expected %g to %g", e->key, e->value,
                  lo, hi);
        return;
    }
    *out = v;
}

static void parse_run_key(parse_state *st, const entry *e, kbi_run_opts *o)
{
    double v = 0.0;
    const char *k = e->key;
    if (strcmp(k, "warmup") == 0) {
        v = o->warmup;
        run_number(st, e, 0, 1e6, 1, &v);
        o->warmup = (int)v;
    } else if (strcmp(k, "min_samples") == 0) {
        v = o->min_samples;
        run_number(st, e, 1, 1e7, 1, &v);
        o->min_samples = (int)v;
    } else if (strcmp(k, "max_samples") == 0) {
        v = o->max_samples;
        run_number(st, e, 1, 1e7, 1, &v);
        o->max_samples = (int)v;
    } else if (strcmp(k, "min_time") == 0) {
        run_number(st, e, 0, 1e6, 0, &o->min_time);
    } else if (strcmp(k, "rounds") == 0) {
        v = o->rounds;
        run_number(st, e, 1, 1000, 1, &v);
        o->rounds = (int)v;
    } else if (strcmp(k, "max_time") == 0) {
        run_number(st, e, 1e-6, 1e6, 0, &o->max_time);
    } else if (strcmp(k, "max_noise") == 0) {
        run_number(st, e, 0, 1e3, 0, &o->max_noise);
    } else if (strcmp(k, "timeout") == 0) {
        run_number(st, e, 1e-3, 1e7, 0, &o->timeout);
    } else if (strcmp(k, "device") == 0) {
        v = o->device;
        run_number(st, e, 0, 1024, 1, &v);
        o->device = (int)v;
    } else if (strcmp(k, "seed") == 0) {
        int64_t s;
        if (parse_int(e->value, &s) != 0 || s < 0)
            add_error(st, e->line, "seed = '%s' is not a seed, expected an integer >= 0",
                      e->value);
        else
            o->seed = (uint64_t)s;
    } else if (strcmp(k, "bandwidth") == 0) {
        run_number(st, e, 1e-6, 1e9, 0, &o->bandwidth_gbs);
    } else if (strcmp(k, "peak_gflops") == 0) {
        run_number(st, e, 1e-6, 1e12, 0, &o->peak_gflops);
    } else if (strcmp(k, "peak_tf32_gflops") == 0) {
        run_number(st, e, 1e-6, 1e12, 0, &o->tf32_gflops);
    } else if (strcmp(k, "energy") == 0) {
        if (strcmp(e->value, "on") == 0 || strcmp(e->value, "off") == 0)
            o->energy = strcmp(e->value, "on") == 0;
        else
            add_error(st, e->line, "energy = '%s' is not a switch, expected on or off", e->value);
    } else if (strcmp(k, "energy_window") == 0) {
        run_number(st, e, 0.2, 600, 0, &o->energy_window);
    } else if (strcmp(k, "energy_windows") == 0) {
        v = o->energy_windows;
        run_number(st, e, 1, 100, 1, &v);
        o->energy_windows = (int)v;
    } else if (strcmp(k, "cache") == 0) {
        if (strcmp(e->value, "cold") == 0)
            o->cache = KBI_CACHE_COLD;
        else if (strcmp(e->value, "hot") == 0)
            o->cache = KBI_CACHE_HOT;
        else
            add_error(st, e->line, "cache = '%s' is not a cache mode, expected cold or hot",
                      e->value);
    } else {
        add_error(st, e->line,
                  "unknown key '%s' in [run], expected one of warmup, min_samples, max_samples, "
                  "min_time, max_time, max_noise, rounds, timeout, cache, device, seed, "
                  "bandwidth, peak_gflops, peak_tf32_gflops, energy, energy_window, "
                  "energy_windows",
                  k);
    }
}

static void variant_names(const kb_plugin *d, kbi_buf *b)
{
    for (int i = 0; i < d->n_variants; i++)
        kbi_buf_printf(b, "%s%s", i ? ", " : "", d->variants[i].name);
}

static void plugin_names(const kbi_plugin_set *set, kbi_buf *b)
{
    for (size_t i = 0; i < set->n; i++)
        kbi_buf_printf(b, "%s%s", i ? ", " : "", set->items[i].desc->name);
    if (set->n == 0)
        kbi_buf_printf(b, "none loaded");
}

static void parse_variants(parse_state *st, const entry *e, kbi_section *sec)
{
    const kb_plugin *d = sec->plugin->desc;
    char **items = NULL, err[KBI_ERR_SIZE];
    size_t n = 0;
    if (kbi_expand_list(e->value, KB_PARAM_STRING, &items, &n, err) != KBI_OK) {
        add_error(st, e->line, "variants: %s", err);
        return;
    }
    free(sec->variants);
    sec->variants = kbi_xcalloc(d->n_variants ? (size_t)d->n_variants : 1, sizeof(int));
    sec->n_variants = 0;
    for (size_t i = 0; i < n; i++) {
        int v;
        if (strcmp(items[i], "all") == 0 && n == 1) {
            for (int j = 0; j < d->n_variants; j++)
                sec->variants[sec->n_variants++] = j;
            break;
        }
        v = kbi_variant_index(d, items[i]);
        if (v < 0) {
            kbi_buf names = {0};
            variant_names(d, &names);
            add_error(st, e->line, "unknown variant '%s' of %s, expected one of: %s (or all)",
                      items[i], d->name, names.data);
            kbi_buf_free(&names);
            continue;
        }
        int dup = 0;
        for (size_t j = 0; j < sec->n_variants; j++)
            dup |= sec->variants[j] == v;
        if (dup) {
            add_error(st, e->line, "variant '%s' listed twice, expected each once", items[i]);
            continue;
        }
        sec->variants[sec->n_variants++] = v;
    }
    kbi_strv_free(items, n);
}

/* Orders values by canonical text, then by position. */
static int cmp_value_ref(const void *pa, const void *pb)
{
    const kbi_value *a = *(const kbi_value *const *)pa, *b = *(const kbi_value *const *)pb;
    int c = strcmp(a->text, b->text);
    return c ? c : (a > b) - (a < b);
}

/* `max_rank`: the highest dims rank the plugin can read (KB_MAX_DIMS for a
 * 1.0 plugin, whose getter fills a 4-array). */
static void parse_axis(parse_state *st, const entry *e, kbi_axis *axis, int max_rank)
{
    char **items = NULL, err[KBI_ERR_SIZE];
    size_t n = 0, ok = 0;
    if (kbi_expand_list(e->value, axis->param->type, &items, &n, err) != KBI_OK) {
        add_error(st, e->line, "%s: %s", e->key, err);
        return;
    }
    kbi_value *vals = kbi_xcalloc(n, sizeof *vals);
    for (size_t i = 0; i < n; i++) {
        if (kbi_value_parse(axis->param, items[i], &vals[ok], err) != KBI_OK) {
            add_error(st, e->line, "%s: %s", e->key, err);
            continue;
        }
        if (vals[ok].type == KB_PARAM_DIMS && vals[ok].n_dims > max_rank) {
            add_error(st, e->line,
                      "%s: '%s' has %d dimensions, expected at most %d (the plugin is built "
                      "for ABI 1.0)",
                      e->key, items[i], vals[ok].n_dims, max_rank);
            kbi_value_free(&vals[ok]);
            continue;
        }
        ok++;
    }
    kbi_strv_free(items, n);
    size_t n_dup = 0;
    if (ok > 1) {
        /* Duplicates, found by sorting (a range can give 100000 values),
         * reported in list order: each value equal to an earlier one. */
        const kbi_value **by_text = kbi_xcalloc(ok, sizeof *by_text);
        char *dup = kbi_xcalloc(ok, 1);
        for (size_t i = 0; i < ok; i++)
            by_text[i] = &vals[i];
        qsort(by_text, ok, sizeof *by_text, cmp_value_ref);
        for (size_t i = 1; i < ok; i++)
            if (strcmp(by_text[i - 1]->text, by_text[i]->text) == 0)
                dup[by_text[i] - vals] = 1;
        for (size_t i = 0; i < ok; i++)
            if (dup[i]) {
                add_error(st, e->line, "%s: value %s listed twice, expected each once", e->key,
                          vals[i].text);
                n_dup++;
            }
        free(by_text);
        free(dup);
    }
    if (ok < n || n_dup) {
        for (size_t i = 0; i < ok; i++)
            kbi_value_free(&vals[i]);
        free(vals);
        return;
    }
    for (size_t i = 0; i < axis->n; i++)
        kbi_value_free(&axis->values[i]);
    free(axis->values);
    axis->values = vals;
    axis->n = n;
    axis->line = e->line;
}

/* Is there an entry for `key` in the section (set, though perhaps refused)? */
static int key_written(const parse_state *st, const kbi_section *sec, const char *key)
{
    for (size_t i = 0; i < st->n_entries; i++)
        if (strcmp(st->entries[i].section, sec->name) == 0 &&
            strcmp(st->entries[i].key, key) == 0)
            return 1;
    return 0;
}

/* The section's `zip = a+b, c+d+e`: each group's keys step together as one
 * axis.  Every key must be a parameter set in the section, in one group
 * only, with as many values as the others of its group. */
static void parse_zip(parse_state *st, const entry *e, kbi_section *sec)
{
    const kb_plugin *d = sec->plugin->desc;
    char **groups = NULL, err[KBI_ERR_SIZE];
    size_t n_groups = 0;
    int *zip = kbi_xcalloc(sec->n_axes + 1, sizeof *zip);
    int n_errors = st->n_errors;
    for (size_t a = 0; a < sec->n_axes; a++)
        zip[a] = -1;
    if (kbi_expand_list(e->value, KB_PARAM_STRING, &groups, &n_groups, err) != KBI_OK) {
        add_error(st, e->line, "zip: %s", err);
        goto done;
    }
    for (size_t g = 0; g < n_groups; g++) {
        char *copy, *p;
        int *idx, n_keys = 0, all_set = 1, same = 1;
        if (!strchr(groups[g], '+')) {
            add_error(st, e->line,
                      "zip: group '%s' has one key, expected two or more parameters joined by "
                      "'+', such as shape+perm",
                      groups[g]);
            continue;
        }
        copy = kbi_strdup(groups[g]);
        p = copy;
        idx = kbi_xcalloc(sec->n_axes + 1, sizeof *idx);
        for (;;) {
            char *plus = strchr(p, '+');
            char *key;
            int k;
            if (plus)
                *plus = '\0';
            key = kbi_trim(p);
            if (!*key) {
                add_error(st, e->line,
                          "zip: group '%s' has an empty key, expected parameters joined by "
                          "single '+', such as shape+perm",
                          groups[g]);
                all_set = 0;
            } else if (!kbi_param_find(d, key, &k)) {
                kbi_buf names = {0};
                for (size_t j = 0; j < sec->n_axes; j++)
                    kbi_buf_printf(&names, "%s%s", j ? ", " : "", sec->axes[j].param->name);
                add_error(st, e->line,
                          "zip: unknown key '%s' in [%s], expected parameters of %s: %s", key,
                          sec->name, d->name, names.data ? names.data : "(none)");
                kbi_buf_free(&names);
                all_set = 0;
            } else if (zip[k] >= 0) {
                add_error(st, e->line,
                          "zip: '%s' is zipped twice, expected each key in one group only", key);
                all_set = 0;
            } else {
                zip[k] = (int)g;
                idx[n_keys++] = k;
                if (sec->axes[k].line == 0) {
                    /* A key written but refused has its own error already. */
                    if (!key_written(st, sec, key))
                        add_error(st, e->line,
                                  "zip: '%s' is not set in [%s], expected a list of values for "
                                  "every zipped key",
                                  key, sec->name);
                    all_set = 0;
                }
            }
            if (!plus)
                break;
            p = plus + 1;
        }
        free(copy);
        for (int j = 1; j < n_keys; j++)
            same &= sec->axes[idx[j]].n == sec->axes[idx[0]].n;
        if (all_set && !same) {
            kbi_buf counts = {0};
            for (int j = 0; j < n_keys; j++)
                kbi_buf_printf(&counts, "%s%s %zu", j ? ", " : "", sec->axes[idx[j]].param->name,
                               sec->axes[idx[j]].n);
            add_error(st, e->line,
                      "zip: the keys of '%s' have different numbers of values (%s), expected "
                      "the same number for each",
                      groups[g], counts.data);
            kbi_buf_free(&counts);
        }
        free(idx);
    }
done:
    kbi_strv_free(groups, n_groups);
    if (st->n_errors != n_errors) {
        free(zip);
        return;
    }
    free(sec->zip);
    sec->zip = zip;
    sec->n_zip = (int)n_groups;
}

/* Gives every section its plugin's defaults: all variants, default values. */
static int init_section(parse_state *st, kbi_section *sec, const kbi_plugin *plugin)
{
    const kb_plugin *d = plugin->desc;
    char err[KBI_ERR_SIZE];
    sec->plugin = plugin;
    sec->baseline = -1;
    sec->variants = kbi_xcalloc(d->n_variants ? (size_t)d->n_variants : 1, sizeof(int));
    for (int i = 0; i < d->n_variants; i++)
        sec->variants[sec->n_variants++] = i;
    sec->axes = kbi_xcalloc(d->n_params ? (size_t)d->n_params : 1, sizeof *sec->axes);
    sec->n_axes = (size_t)d->n_params;
    for (int i = 0; i < d->n_params; i++) {
        kbi_axis *a = &sec->axes[i];
        a->param = &d->params[i];
        a->values = kbi_xcalloc(1, sizeof *a->values);
        a->n = 1;
        if (kbi_value_parse(a->param, a->param->default_value ? a->param->default_value : "",
                            &a->values[0], err) != KBI_OK) {
            add_error(st, sec->line, "plugin %s (%s): default of parameter %s: %s", d->name,
                      plugin->path, a->param->name, err);
            return KBI_ERR_INPUT;
        }
        a->default_text = kbi_strdup(a->values[0].text);
        a->role = kbi_param_role_of(plugin, a->param->name);
    }
    return KBI_OK;
}

static void free_section(kbi_section *sec)
{
    free(sec->name);
    free(sec->variants);
    for (size_t i = 0; i < sec->n_axes; i++) {
        for (size_t j = 0; j < sec->axes[i].n; j++)
            kbi_value_free(&sec->axes[i].values[j]);
        free(sec->axes[i].values);
        free(sec->axes[i].default_text);
    }
    free(sec->axes);
    free(sec->zip);
}

void kbi_profile_free(kbi_profile *p)
{
    for (size_t i = 0; i < p->n_sections; i++)
        free_section(&p->sections[i]);
    free(p->sections);
    free(p->path);
    memset(p, 0, sizeof *p);
}

/* The sections read: each known and once; the plugin sections go into out. */
static void check_sections(parse_state *st, const kbi_plugin_set *plugins, kbi_profile *out)
{
    for (size_t i = 0; i < st->n_sections; i++) {
        const section_seen *s = &st->sections[i];
        for (size_t j = 0; j < i; j++)
            if (strcmp(st->sections[j].name, s->name) == 0) {
                add_error(st, s->line, "duplicate section [%s], first at line %d; expected "
                                        "each section once",
                          s->name, st->sections[j].line);
                break;
            }
        if (strcmp(s->name, "run") == 0)
            continue;
        /* [plugin] or [plugin.label]: several sections may measure one
         * plugin at different points (host variants at small sizes, device
         * variants at large ones). */
        char plugin_name[LINE_MAX_CHARS];
        snprintf(plugin_name, sizeof plugin_name, "%s", s->name);
        char *dot = strchr(plugin_name, '.');
        if (dot) {
            *dot = '\0';
            if (!is_word(dot + 1) || strchr(dot + 1, '.')) {
                add_error(st, s->line,
                          "section [%s] has a bad label, expected [plugin] or [plugin.label] "
                          "with a one-word label",
                          s->name);
                continue;
            }
        }
        const kbi_plugin *pl = kbi_plugins_find(plugins, plugin_name);
        if (!pl) {
            kbi_buf names = {0};
            plugin_names(plugins, &names);
            add_error(st, s->line,
                      "unknown section [%s]: no plugin of that name is loaded, expected [run] "
                      "or a plugin (%s)",
                      s->name, names.data);
            kbi_buf_free(&names);
            continue;
        }
        int seen = 0;
        for (size_t j = 0; j < out->n_sections; j++)
            seen |= strcmp(out->sections[j].name, s->name) == 0;
        if (seen)
            continue;
        out->sections =
            kbi_xrealloc(out->sections, (out->n_sections + 1) * sizeof *out->sections);
        kbi_section *sec = &out->sections[out->n_sections++];
        memset(sec, 0, sizeof *sec);
        sec->name = kbi_strdup(s->name);
        sec->line = s->line;
        init_section(st, sec, pl);
    }
}

/* Each key into [run] or its section; zips[section] gets its zip key. */
static void read_keys(parse_state *st, kbi_profile *out, const entry **zips)
{
    for (size_t i = 0; i < st->n_entries; i++) {
        const entry *e = &st->entries[i];
        const entry *dup = find_dup(st, i, e);
        kbi_section *sec = NULL;
        if (dup) {
            add_error(st, e->line, "duplicate key '%s' in [%s], first set at line %d; expected "
                                    "each key once (a list goes in one value)",
                      e->key, e->section, dup->line);
            continue;
        }
        if (!*e->section) {
            add_error(st, e->line, "key '%s' before any section, expected it under [run] or a "
                                    "plugin section",
                      e->key);
            continue;
        }
        if (strcmp(e->section, "run") == 0) {
            parse_run_key(st, e, &out->run);
            continue;
        }
        for (size_t j = 0; j < out->n_sections; j++)
            if (strcmp(out->sections[j].name, e->section) == 0) {
                sec = &out->sections[j];
                zips[j] = strcmp(e->key, "zip") == 0 ? e : zips[j];
            }
        if (!sec)
            continue; /* its section was already reported */
        if (strcmp(e->key, "variants") == 0) {
            parse_variants(st, e, sec);
        } else if (strcmp(e->key, "zip") == 0) {
            /* Checked once every key of the section is read. */
        } else if (strcmp(e->key, "baseline") == 0) {
            int v = kbi_variant_index(sec->plugin->desc, e->value);
            if (v < 0) {
                kbi_buf names = {0};
                variant_names(sec->plugin->desc, &names);
                add_error(st, e->line, "unknown baseline variant '%s' of %s, expected one of: %s",
                          e->value, sec->name, names.data);
                kbi_buf_free(&names);
            } else {
                sec->baseline = v;
            }
        } else {
            int idx;
            if (!kbi_param_find(sec->plugin->desc, e->key, &idx)) {
                kbi_buf names = {0};
                for (size_t j = 0; j < sec->n_axes; j++)
                    kbi_buf_printf(&names, "%s, ", sec->axes[j].param->name);
                add_error(st, e->line, "unknown key '%s' in [%s], expected one of: %svariants, "
                                        "baseline, zip",
                          e->key, sec->name, names.data ? names.data : "");
                kbi_buf_free(&names);
                continue;
            }
            parse_axis(st, e, &sec->axes[idx],
                       KB_ABI_MINOR_OF(sec->plugin->desc->abi_version) >= 1 ? KB_MAX_RANK
                                                                           : KB_MAX_DIMS);
        }
    }
}

/* "a", "a and b", "a, b and c": the names of variants idx[0..n) of d. */
static void join_variants(const kb_plugin *d, const int *idx, size_t n, kbi_buf *out)
{
    for (size_t i = 0; i < n; i++)
        kbi_buf_printf(out, "%s%s",
                       i == 0      ? ""
                       : i + 1 < n ? ", "
                                   : " and ",
                       d->variants[idx[i]].name);
}

/* Each knob the section sets away from its default (any value of its list) must apply to
 * every variant of the section (ABI 1.4's knob_variants): a variant the knob does not apply to
 * would run under an id claiming a setting it ignores, a duplicate of its default case.  The
 * section's baseline is the exception: report pairs each case with it at the same parameters
 * (its speedup), so it runs at the knob's values, ignored or not (memcpy beside copy on a
 * persistent grid). */
static void check_knob_variants(parse_state *st, const kbi_section *sec)
{
    const kb_plugin *d = sec->plugin->desc;
    int *idx = kbi_xcalloc((size_t)d->n_variants, sizeof *idx);
    for (size_t a = 0; a < sec->n_axes; a++) {
        const kbi_axis *ax = &sec->axes[a];
        const kbi_value *set = NULL;
        size_t n_not = 0, n_to;
        int vline;
        char where[64];
        kbi_buf to = {0}, not_to = {0};
        for (size_t i = 0; i < ax->n && !set && ax->line; i++)
            set = strcmp(ax->values[i].text, ax->default_text) != 0 ? &ax->values[i] : NULL;
        if (!set)
            continue;
        for (size_t j = 0; j < sec->n_variants; j++)
            if (sec->variants[j] != sec->baseline &&
                !kbi_knob_applies(sec->plugin, ax->param->name, sec->variants[j]))
                idx[n_not++] = sec->variants[j];
        if (!n_not)
            continue;
        join_variants(d, idx, n_not, &not_to);
        n_to = kbi_knob_variants_of(sec->plugin, ax->param->name, idx);
        join_variants(d, idx, n_to, &to);
        vline = key_line(st, sec->name, "variants");
        snprintf(where, sizeof where, vline ? "variants at line %d" : "variants: all, by default",
                 vline);
        add_error(st, ax->line,
                  "%s = %s applies to %s, not to %s (%s), expected only variants it applies to: "
                  "move %s to a section of %s own, where %s keeps its default (%s)",
                  ax->param->name, set->text, to.data, not_to.data, where, not_to.data,
                  n_not > 1 ? "their" : "its", ax->param->name, ax->default_text);
        kbi_buf_free(&to);
        kbi_buf_free(&not_to);
    }
    free(idx);
}

/* [run]'s samples, the number of cases, each knob against its section's variants, and each
 * baseline among its section's variants: what no one key shows. */
static void check_profile(parse_state *st, kbi_profile *out)
{
    if (out->run.max_samples < out->run.min_samples)
        add_error(st,
                  key_line(st, "run", "max_samples") ? key_line(st, "run", "max_samples")
                                                      : key_line(st, "run", "min_samples"),
                  "[run] max_samples %d is below min_samples %d, expected max >= min",
                  out->run.max_samples, out->run.min_samples);
    if (out->run.max_time == 0.0)
        out->run.max_time = out->run.timeout / 2.0;
    /* The product of the axes, counted without overflow: four ranges of
     * 100000 values would wrap a size_t. */
    size_t total = 0;
    for (size_t i = 0; i < out->n_sections; i++) {
        const kbi_section *sec = &out->sections[i];
        size_t points = kbi_section_points(sec);
        size_t cases = points > KBI_MAX_CASES ? KBI_MAX_CASES + 1 : points * sec->n_variants;
        total += cases <= KBI_MAX_CASES ? cases : KBI_MAX_CASES + 1;
        if (total > KBI_MAX_CASES) {
            add_error(st, sec->line,
                      "[%s] takes the profile past %d cases, expected fewer values in its "
                      "lists (or a --filter on a smaller profile)",
                      sec->name, KBI_MAX_CASES);
            break;
        }
    }
    for (size_t i = 0; i < out->n_sections; i++)
        check_knob_variants(st, &out->sections[i]);
    for (size_t i = 0; i < out->n_sections; i++) {
        kbi_section *sec = &out->sections[i];
        int found = sec->baseline < 0;
        for (size_t j = 0; j < sec->n_variants; j++)
            found |= sec->variants[j] == sec->baseline;
        if (!found) {
            const entry *b = NULL;
            for (size_t j = 0; j < st->n_entries; j++)
                if (strcmp(st->entries[j].section, sec->name) == 0 &&
                    strcmp(st->entries[j].key, "baseline") == 0)
                    b = &st->entries[j];
            add_error(st, b ? b->line : sec->line,
                      "baseline '%s' is not among the variants of [%s], expected it in the "
                      "variants list",
                      sec->plugin->desc->variants[sec->baseline].name, sec->name);
        }
    }
}

static void free_state(parse_state *st)
{
    for (size_t i = 0; i < st->n_entries; i++) {
        free(st->entries[i].section);
        free(st->entries[i].key);
        free(st->entries[i].value);
    }
    free(st->entries);
    for (size_t i = 0; i < st->n_sections; i++)
        free(st->sections[i].name);
    free(st->sections);
}

int kbi_profile_parse(const char *name, const char *text, const kbi_plugin_set *plugins,
                      kbi_profile *out, kbi_buf *errors)
{
    parse_state st = {0};
    const entry **zips; /* per section: its zip key, or NULL */
    int rc;
    memset(out, 0, sizeof *out);
    out->path = kbi_strdup(name);
    kbi_run_opts_default(&out->run);
    st.name = name;
    st.text = text;
    st.pos = text;
    st.errors = errors;

    rc = ini_parse_stream(reader, &st, handler, &st);
    if (rc > 0)
        add_error(&st, rc, "cannot read this line, expected [section], key = value, or a "
                           "comment starting with ; or #");
    else if (rc < 0)
        add_error(&st, 0, "out of memory reading the profile");
    check_sections(&st, plugins, out);
    zips = kbi_xcalloc(out->n_sections + 1, sizeof *zips);
    read_keys(&st, out, zips);
    /* Cross-key checks. */
    for (size_t i = 0; i < out->n_sections; i++)
        if (zips[i])
            parse_zip(&st, zips[i], &out->sections[i]);
    free(zips);
    check_profile(&st, out);
    free_state(&st);
    if (st.n_errors) {
        kbi_profile_free(out);
        return KBI_ERR_INPUT;
    }
    return KBI_OK;
}

int kbi_profile_load(const char *path, const kbi_plugin_set *plugins, kbi_profile *out,
                     kbi_buf *errors)
{
    FILE *f = fopen(path, "rb");
    kbi_buf text = {0};
    char chunk[4096];
    size_t n;
    int rc;
    memset(out, 0, sizeof *out);
    if (!f) {
        kbi_buf_printf(errors, "%s: cannot open profile: %s\n", path, strerror(errno));
        return KBI_ERR_IO;
    }
    kbi_buf_printf(&text, "%s", "");
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (memchr(chunk, '\0', n)) {
            kbi_buf_printf(errors, "%s: not a text file (it holds NUL bytes), expected an INI "
                                   "profile\n",
                           path);
            fclose(f);
            kbi_buf_free(&text);
            return KBI_ERR_INPUT;
        }
        kbi_buf_printf(&text, "%.*s", (int)n, chunk);
    }
    if (ferror(f)) {
        kbi_buf_printf(errors, "%s: cannot read profile: %s\n", path, strerror(errno));
        fclose(f);
        kbi_buf_free(&text);
        return KBI_ERR_IO;
    }
    fclose(f);
    rc = kbi_profile_parse(path, text.data, plugins, out, errors);
    kbi_buf_free(&text);
    return rc;
}

/* ---- cases ---- */

/* Which parameters a case's name shows. */
typedef enum which_params {
    ID_PARAMS,   /* its id: problem parameters, others where set away from their default */
    ALL_PARAMS,  /* its full id: every one */
    VARYING_AXES /* its label: those with more than one value in the section */
} which_params;

/* "head/variant[/name=value,...]" of a case, naming the parameters `which` says. */
static char *case_name(const kbi_section *sec, const char *head, int variant,
                       const kbi_value **values, which_params which)
{
    kbi_buf b = {0};
    size_t named = 0;
    kbi_buf_printf(&b, "%s/%s", head, sec->plugin->desc->variants[variant].name);
    for (size_t i = 0; i < sec->n_axes; i++) {
        const kbi_axis *a = &sec->axes[i];
        if (which == VARYING_AXES ? a->n < 2
                                  : which == ID_PARAMS && a->role != KBI_ROLE_PROBLEM &&
                                        strcmp(values[i]->text, a->default_text) == 0)
            continue;
        kbi_buf_printf(&b, "%c%s=%s", named++ ? ',' : '/', a->param->name, values[i]->text);
    }
    return b.data;
}

int kbi_case_selected(const kbi_case *c, const char *pattern)
{
    return strcmp(pattern, c->id) == 0 || strcmp(pattern, c->full_id) == 0 ||
           fnmatch(pattern, c->id, 0) == 0 || fnmatch(pattern, c->full_id, 0) == 0;
}

/* Does axis `a` step here: alone, or as the first key (descriptor order)
 * of its zip group?  The other keys of a group follow their first. */
static int steps_here(const kbi_section *sec, size_t a)
{
    if (!sec->zip || sec->zip[a] < 0)
        return 1;
    for (size_t b = 0; b < a; b++)
        if (sec->zip[b] == sec->zip[a])
            return 0;
    return 1;
}

size_t kbi_section_points(const kbi_section *sec)
{
    size_t points = 1;
    for (size_t a = 0; a < sec->n_axes; a++) {
        size_t n = sec->axes[a].n;
        if (!steps_here(sec, a) || n == 0)
            continue;
        if (n > KBI_MAX_CASES || points > KBI_MAX_CASES / n)
            return KBI_MAX_CASES + 1;
        points *= n;
    }
    return points;
}

static void expand_cases(const kbi_profile *p, kbi_case **cases, size_t *n);

int kbi_profile_cases(const kbi_profile *p, kbi_case **cases, size_t *n)
{
    return kbi_profile_cases_noting(p, cases, n, NULL);
}

int kbi_profile_cases_noting(const kbi_profile *p, kbi_case **cases, size_t *n, kbi_strlist *notes)
{
    expand_cases(p, cases, n);
    *n = kbi_cases_drop_repeats(*cases, *n, p->path, notes);
    return KBI_OK;
}

/* Every case of every section, repeats included. */
static void expand_cases(const kbi_profile *p, kbi_case **cases, size_t *n)
{
    size_t total = 0, k = 0;
    for (size_t s = 0; s < p->n_sections; s++)
        total += kbi_section_points(&p->sections[s]) * p->sections[s].n_variants;
    *cases = kbi_xcalloc(total ? total : 1, sizeof **cases);
    *n = total;
    for (size_t s = 0; s < p->n_sections; s++) {
        const kbi_section *sec = &p->sections[s];
        /* lead[a]: the axis whose index counter axis a reads (itself, or
         * the first key of its zip group); only leads are counted. */
        size_t *idx = kbi_xcalloc(sec->n_axes + 1, sizeof *idx);
        size_t *lead = kbi_xcalloc(sec->n_axes + 1, sizeof *lead);
        for (size_t a = 0; a < sec->n_axes; a++) {
            lead[a] = a;
            for (size_t b = 0; b < a && !steps_here(sec, a); b++)
                if (sec->zip[b] == sec->zip[a]) {
                    lead[a] = b;
                    break;
                }
        }
        for (;;) {
            for (size_t v = 0; v < sec->n_variants; v++) {
                kbi_case *c = &(*cases)[k];
                c->index = k++;
                c->section = sec;
                c->variant = sec->variants[v];
                c->values = kbi_xcalloc(sec->n_axes + 1, sizeof *c->values);
                for (size_t a = 0; a < sec->n_axes; a++)
                    c->values[a] = &sec->axes[a].values[idx[lead[a]]];
                c->params.defs = sec->plugin->desc->params;
                c->params.values = c->values;
                c->params.n = (int)sec->n_axes;
                c->id = case_name(sec, sec->plugin->desc->name, c->variant, c->values, ID_PARAMS);
                c->full_id =
                    case_name(sec, sec->plugin->desc->name, c->variant, c->values, ALL_PARAMS);
                c->label = case_name(sec, sec->name, c->variant, c->values, VARYING_AXES);
            }
            /* Next point: the last step varies fastest. */
            size_t a = sec->n_axes;
            int done = 1;
            while (a > 0) {
                a--;
                if (lead[a] != a)
                    continue;
                if (++idx[a] < sec->axes[a].n) {
                    done = 0;
                    break;
                }
                idx[a] = 0;
            }
            if (done)
                break;
        }
        free(idx);
        free(lead);
    }
}

void kbi_case_clear(kbi_case *c)
{
    free(c->values);
    free(c->id);
    free(c->full_id);
    free(c->label);
}

void kbi_cases_free(kbi_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++)
        kbi_case_clear(&cases[i]);
    free(cases);
}

/* ---- parameter access for plugins (kb_host getters) ---- */

static const kbi_value *param_value(const kb_params *params, const char *name,
                                    kb_param_type type)
{
    if (!params || !name)
        return NULL;
    for (int i = 0; i < params->n; i++)
        if (strcmp(params->defs[i].name, name) == 0)
            return params->defs[i].type == type ? params->values[i] : NULL;
    return NULL;
}

int kbi_param_int(const kb_params *params, const char *name, int64_t *out)
{
    const kbi_value *v = param_value(params, name, KB_PARAM_INT);
    if (!v)
        return KB_BAD_PARAM;
    *out = v->i;
    return KB_OK;
}

int kbi_param_float(const kb_params *params, const char *name, double *out)
{
    const kbi_value *v = param_value(params, name, KB_PARAM_FLOAT);
    if (!v)
        return KB_BAD_PARAM;
    *out = v->f;
    return KB_OK;
}

int kbi_param_string(const kb_params *params, const char *name, const char **out)
{
    const kbi_value *v = param_value(params, name, KB_PARAM_STRING);
    if (!v)
        return KB_BAD_PARAM;
    *out = v->text;
    return KB_OK;
}

/* Copies a list value into a caller's array of `cap`; more than fits is
 * KB_BAD_PARAM with nothing written but the count. */
static int copy_list(const int64_t *from, int count, int64_t *to, int cap, int *n)
{
    if (!n || cap < 0 || (cap > 0 && !to))
        return KB_BAD_PARAM;
    *n = count;
    if (count > cap)
        return KB_BAD_PARAM;
    for (int i = 0; i < count; i++)
        to[i] = from[i];
    return KB_OK;
}

int kbi_param_dims(const kb_params *params, const char *name, int64_t *dims, int *n)
{
    /* The 1.0 getter: a 1.0 plugin's array holds KB_MAX_DIMS. */
    return kbi_param_dims_cap(params, name, dims, KB_MAX_DIMS, n);
}

int kbi_param_dims_cap(const kb_params *params, const char *name, int64_t *dims, int cap, int *n)
{
    const kbi_value *v = param_value(params, name, KB_PARAM_DIMS);
    if (!v)
        return KB_BAD_PARAM;
    return copy_list(v->dims, v->n_dims, dims, cap, n);
}

int kbi_param_ints(const kb_params *params, const char *name, int64_t *values, int cap, int *n)
{
    const kbi_value *v = param_value(params, name, KB_PARAM_INTS);
    if (!v)
        return KB_BAD_PARAM;
    return copy_list(v->ints, v->n_ints, values, cap, n);
}
