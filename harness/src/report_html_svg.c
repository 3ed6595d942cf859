/* A gnuplot SVG inlined into report.html.  Several charts share one page,
 * so each one's ids (point shapes, clip paths, filters) are prefixed with
 * its stem; the XML prolog, the namespace declarations (the HTML parser
 * puts <svg> in SVG's namespace itself) and anything that would run code
 * (scripts, on* attributes such as gnuplot's hypertext handlers, which call
 * a gnuplot_svg.js the page does not have) are left out.  gnuplot draws
 * each plot clause in a <g id="gnuplot_plot_N"> whose title is that id: it
 * gets the clause's values instead (report_html_tips.c), and so does each
 * point or bar where the shapes in the group match the rows drawn. */
#define _XOPEN_SOURCE 700
#include "report_html_svg.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "format.h"
#include "report_html_md.h"
#include "report_html_tips.h"

typedef struct svg_tag {
    const char *s, *name;             /* its '<'; its name */
    size_t n, name_n;                 /* through its '>' */
    int closing, self_closing, other; /* </x>, <x/>, <!...> or <?...?> */
} svg_tag;

typedef struct svg_attr {
    const char *name, *value;
    size_t name_n, value_n;
} svg_attr;

/* Where a walk through the SVG is: the plot group it is in. */
typedef struct svg_walk {
    int depth;      /* of <g> */
    int plot;       /* clause (0-based) of the plot group it is in, -1 outside */
    int plot_depth; /* depth of that group */
} svg_walk;

/* The tag at or after s; returns 0 when there is none. */
static int next_tag(const char *s, svg_tag *t)
{
    const char *lt = strchr(s, '<'), *p;
    char quote = 0;
    if (!lt)
        return 0;
    memset(t, 0, sizeof *t);
    t->s = lt;
    if (strncmp(lt, "<!--", 4) == 0) {
        if (!(p = strstr(lt, "-->")))
            return 0;
        t->n = (size_t)(p + 3 - lt);
        t->other = 1;
        return 1;
    }
    for (p = lt + 1; *p && (quote || *p != '>'); p++)
        quote = quote ? (*p == quote ? 0 : quote) : (*p == '\'' || *p == '"') ? *p : 0;
    if (!*p)
        return 0;
    t->n = (size_t)(p + 1 - lt);
    t->other = lt[1] == '!' || lt[1] == '?';
    t->closing = lt[1] == '/';
    t->self_closing = p[-1] == '/';
    t->name = lt + 1 + t->closing;
    t->name_n = strcspn(t->name, " \t\r\n/>");
    return 1;
}

static int tag_is(const svg_tag *t, const char *name)
{
    return !t->other && t->name_n == strlen(name) && strncmp(t->name, name, t->name_n) == 0;
}

/* The attribute at *p within t (name="value" or name='value'); moves *p
 * past it.  Returns 0 at the end of the tag. */
static int next_attr(const svg_tag *t, const char **p, svg_attr *a)
{
    const char *end = t->s + t->n - (t->self_closing ? 2 : 1), *s = *p;
    char quote;
    while (s < end && (isspace((unsigned char)*s) || *s == '='))
        s++;
    if (s >= end)
        return 0;
    a->name = s;
    while (s < end && !isspace((unsigned char)*s) && *s != '=')
        s++;
    a->name_n = (size_t)(s - a->name);
    while (s < end && isspace((unsigned char)*s))
        s++;
    a->value = s;
    a->value_n = 0;
    if (s < end && *s == '=') {
        for (s++; s < end && isspace((unsigned char)*s);)
            s++;
        quote = s < end ? *s : 0;
        if (quote == '\'' || quote == '"') {
            a->value = ++s;
            while (s < end && *s != quote)
                s++;
            a->value_n = (size_t)(s - a->value);
            s += s < end;
        }
    }
    *p = s;
    return 1;
}

static int attr_is(const svg_attr *a, const char *name)
{
    return a->name_n == strlen(name) && strncmp(a->name, name, a->name_n) == 0;
}

/* The value of attribute name of t; 0 when t has none. */
static int find_attr(const svg_tag *t, const char *name, svg_attr *a)
{
    const char *p = t->name + t->name_n;
    while (next_attr(t, &p, a))
        if (attr_is(a, name))
            return 1;
    return 0;
}

/* Follows t: the plot group (gnuplot_plot_N) the walk is in. */
static void walk(svg_walk *w, const svg_tag *t)
{
    svg_attr a;
    if (!tag_is(t, "g") || t->self_closing)
        return;
    if (t->closing) {
        if (w->plot >= 0 && w->depth == w->plot_depth)
            w->plot = -1;
        w->depth--;
        return;
    }
    w->depth++;
    if (w->plot < 0 && find_attr(t, "id", &a) && a.value_n > 13 &&
        strncmp(a.value, "gnuplot_plot_", 13) == 0 && atoi(a.value + 13) > 0) {
        w->plot = atoi(a.value + 13) - 1;
        w->plot_depth = w->depth;
    }
}

/* A shape gnuplot draws one of per point (a mark) or per bar. */
static int is_shape(const svg_tag *t)
{
    return !t->closing && t->self_closing && (tag_is(t, "use") || tag_is(t, "polygon"));
}

/* For each clause with point texts: the shape its first row is drawn as
 * (1 when gnuplot draws the key's sample box before the bars), -1 when the
 * shapes of its group do not match its rows one to one, -2 when the SVG
 * has not one plot group per clause of the script (its texts would land on
 * other plots). */
static void match_points(const char *svg, const kbi_chart_tips *tips, int *first)
{
    size_t *count = kbi_xcalloc(tips->n_clauses, sizeof *count);
    int *bars = kbi_xcalloc(tips->n_clauses, sizeof *bars);
    svg_walk w = {0, -1, 0};
    svg_tag t;
    size_t groups = 0;
    for (const char *s = svg; next_tag(s, &t); s = t.s + t.n) {
        int outside = w.plot < 0;
        walk(&w, &t);
        groups += outside && w.plot >= 0;
        if (w.plot >= 0 && (size_t)w.plot < tips->n_clauses && is_shape(&t)) {
            count[w.plot]++;
            bars[w.plot] |= tag_is(&t, "polygon");
        }
    }
    for (size_t k = 0; k < tips->n_clauses; k++) {
        const kbi_clause_tips *c = &tips->clause[k];
        first[k] = -2; /* gnuplot drew another plot than the script says: no text at all */
        if (groups != tips->n_clauses)
            continue;
        first[k] = -1;
        if (c->n_points && count[k] == c->n_points)
            first[k] = 0;
        else if (c->n_points && c->keyed && count[k] == c->n_points + 1)
            first[k] = bars[k]; /* the key's sample: before bars, after marks */
    }
    kbi_free_all(2, count, bars);
}

/* An attribute value, double-quoted, with stem- before the ids it names. */
static void value_out(FILE *f, const svg_attr *a, const char *stem, int is_id)
{
    const char *v = a->value, *end = a->value + a->value_n;
    fputc('"', f);
    if (is_id || (a->value_n && v[0] == '#' && a->name_n >= 4 &&
                  strncmp(a->name + a->name_n - 4, "href", 4) == 0)) {
        v += !is_id;
        fprintf(f, "%s%s-", is_id ? "" : "#", stem);
    }
    for (; v < end; v++) {
        if (end - v >= 5 && strncmp(v, "url(#", 5) == 0) {
            fprintf(f, "url(#%s-", stem);
            v += 4;
        } else if (*v == '"') {
            fputs("&quot;", f);
        } else {
            fputc(*v, f);
        }
    }
    fputc('"', f);
}

/* t again, without namespace declarations or event handlers, with its
 * references prefixed; open: written as an open tag even if it closed
 * itself (a title goes in).  The root gets the page's class and a size from
 * its viewBox. */
static void tag_out(FILE *f, const svg_tag *t, const char *stem, int open, int root)
{
    const char *p = t->name + t->name_n;
    svg_attr a;
    int sized = 0;
    double box[4];
    fprintf(f, "<%s%.*s", t->closing ? "/" : "", (int)t->name_n, t->name);
    while (next_attr(t, &p, &a)) {
        if (a.name_n == 0 || (a.name_n >= 5 && strncmp(a.name, "xmlns", 5) == 0) ||
            (a.name_n > 2 && strncmp(a.name, "on", 2) == 0))
            continue;
        sized |= attr_is(&a, "width");
        fprintf(f, " %.*s=", (int)a.name_n, a.name);
        value_out(f, &a, stem, attr_is(&a, "id"));
    }
    if (root) {
        fputs(" class=\"kb-chart\" role=\"img\"", f);
        if (!sized && find_attr(t, "viewBox", &a) &&
            sscanf(a.value, "%lf %lf %lf %lf", &box[0], &box[1], &box[2], &box[3]) == 4)
            fprintf(f, " width=\"%g\" height=\"%g\"", box[2], box[3]);
    }
    fputs(t->self_closing && !open ? "/>" : ">", f);
}

static void title_out(FILE *f, const char *text)
{
    fputs("<title>", f);
    kbi_html_text(f, text, strlen(text));
    fputs("</title>", f);
}

/* The title of the chart, of a plot group, or any other as it is; returns
 * where the SVG goes on after it. */
static const char *title_swap(FILE *f, const svg_tag *t, const svg_walk *w, int *root_done,
                              const char *title_md, const kbi_chart_tips *tips, const int *first)
{
    const char *end = strstr(t->s + t->n, "</title>");
    const kbi_clause_tips *c =
        w->plot >= 0 && (size_t)w->plot < tips->n_clauses ? &tips->clause[w->plot] : NULL;
    if (!end)
        return t->s + t->n;
    if (!*root_done) {
        fputs("<title>", f);
        kbi_md_html_text(f, title_md, strlen(title_md));
        fputs("</title>", f);
        *root_done = 1;
    } else if (c && first[w->plot] > -2 && (c->group || c->series)) {
        /* Each point has its own text: the group needs only its name. */
        title_out(f, first[w->plot] >= 0 || !c->group ? c->series : c->group);
    } else if (w->plot < 0) {
        fwrite(t->s, 1, (size_t)(end + 8 - t->s), f);
    } /* else gnuplot's "gnuplot_plot_N" says nothing to a reader: left out */
    return end + 8;
}

/* The SVG text svg into f (see the header). */
static void svg_out(FILE *f, const char *svg, const char *stem, const char *title_md,
                    const kbi_chart_tips *tips)
{
    int *first = kbi_xcalloc(tips->n_clauses, sizeof *first), root_done = 0, in_root = 0;
    size_t *drawn = kbi_xcalloc(tips->n_clauses, sizeof *drawn);
    svg_walk w = {0, -1, 0};
    svg_tag t;
    const char *s = svg, *end;
    match_points(svg, tips, first);
    while (next_tag(s, &t)) {
        if (in_root)
            fwrite(s, 1, (size_t)(t.s - s), f);
        s = t.s + t.n;
        if (t.other)
            continue;
        if (tag_is(&t, "script") && !t.closing && !t.self_closing) {
            s = (end = strstr(s, "</script>")) != NULL ? end + 9 : s + strlen(s);
            continue;
        }
        if (tag_is(&t, "title") && !t.closing && !t.self_closing) {
            s = title_swap(f, &t, &w, &root_done, title_md, tips, first);
            continue;
        }
        walk(&w, &t);
        if (!in_root && !tag_is(&t, "svg"))
            continue;
        if (!in_root || (tag_is(&t, "svg") && t.closing)) {
            tag_out(f, &t, stem, 0, !in_root);
            if ((in_root = !in_root) == 0)
                break;
            continue;
        }
        if (is_shape(&t) && w.plot >= 0 && (size_t)w.plot < tips->n_clauses && first[w.plot] >= 0) {
            const kbi_clause_tips *c = &tips->clause[w.plot];
            size_t ord = drawn[w.plot]++, skip = (size_t)first[w.plot];
            if (ord >= skip && ord - skip < c->n_points) {
                tag_out(f, &t, stem, 1, 0);
                title_out(f, c->point[ord - skip]);
                fprintf(f, "</%.*s>", (int)t.name_n, t.name);
                continue;
            }
        }
        tag_out(f, &t, stem, 0, 0);
    }
    fputc('\n', f);
    kbi_free_all(2, first, drawn);
}

int kbi_svg_inline(FILE *f, const char *dir, const char *stem, const char *title_md, char *err)
{
    char path[PATH_MAX], *svg;
    kbi_chart_tips tips;
    snprintf(path, sizeof path, "%s/%s.svg", dir, stem);
    if ((svg = kbi_read_text(path)) == NULL) {
        kbi_errf(err, "%s: cannot read: %s", path, strerror(errno));
        return KBI_ERR_IO;
    }
    kbi_chart_tips_read(&tips, dir, stem);
    svg_out(f, svg, stem, title_md, &tips);
    kbi_chart_tips_free(&tips);
    free(svg);
    return KBI_OK;
}
