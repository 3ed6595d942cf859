/* Markdown to HTML for report.html: the subset report.md and compare's
 * Markdown are written in (see report_html_md.h).  The page is made from
 * report.md itself rather than from the report model a second time, so the
 * two always hold the same tables, notes and charts. */
#define _XOPEN_SOURCE 700
#include "report_html_md.h"

#include <ctype.h>
#include <string.h>

#include "common.h"
#include "format.h"

#define MAX_COLUMNS 64

typedef struct md_line {
    const char *s;
    size_t n;
} md_line;

typedef struct md_writer {
    FILE *f;
    kbi_md_image_fn image;
    void *ctx;
    int in_section;
    int fresh_section; /* opened by an anchor, no heading yet: its h2 stays in it */
} md_writer;

/* Length of the character reference at s (s[0] == '&'): &name; &#123; or
 * &#x1F; ; 0 when it is none. */
static size_t reference_len(const char *s, size_t n)
{
    size_t i = 1, digits = 0;
    int hex = 0;
    if (i < n && s[i] == '#') {
        i++;
        if (i < n && (s[i] == 'x' || s[i] == 'X')) {
            hex = 1;
            i++;
        }
    }
    for (; i < n && i < 32; i++, digits++) {
        int ok = s[1] != '#' ? isalnum((unsigned char)s[i])
                 : hex       ? isxdigit((unsigned char)s[i])
                             : isdigit((unsigned char)s[i]);
        if (!ok)
            break;
    }
    return digits && i < n && s[i] == ';' ? i + 1 : 0;
}

void kbi_md_html_text(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t k = s[i] == '&' ? reference_len(s + i, n - i) : 0;
        if (k) {
            fwrite(s + i, 1, k, f);
            i += k - 1;
        } else if (s[i] == '\\' && i + 1 < n && s[i + 1] == '|') {
            fputc('|', f);
            i++;
        } else {
            kbi_html_text(f, s + i, 1);
        }
    }
}

/* The first occurrence of the k bytes of what in s[0, n), or NULL. */
static const char *find(const char *s, size_t n, const char *what, size_t k)
{
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(s + i, what, k) == 0)
            return s + i;
    return NULL;
}

/* A link target the page may point to: within the report's folder or the
 * page itself (no scheme, not absolute), so that nothing leads off it. */
static int relative_target(const char *s, size_t n)
{
    if (n == 0 || s[0] == '/')
        return 0;
    for (size_t i = 0; i < n && s[i] != '/' && s[i] != '#'; i++)
        if (s[i] == ':')
            return 0;
    return 1;
}

/* [text](target) at s: writes the link and returns the bytes it took, or 0
 * when s holds none (the text may hold no bracket, so "[R2] x [a](b)" is
 * text, then a link); parentheses in the target pair up. */
static size_t link_out(FILE *f, const char *s, size_t n)
{
    const char *close = find(s, n, "](", 2), *end;
    int depth;
    if (!close || memchr(s + 1, '[', (size_t)(close - s - 1)) ||
        memchr(s + 1, ']', (size_t)(close - s - 1)))
        return 0;
    for (end = close + 2, depth = 0; end < s + n && (*end != ')' || depth); end++)
        depth += *end == '(' ? 1 : *end == ')' ? -1 : 0;
    if (end == s + n)
        return 0;
    if (relative_target(close + 2, (size_t)(end - close - 2))) {
        fputs("<a href=\"", f);
        kbi_html_text(f, close + 2, (size_t)(end - close - 2));
        fputs("\">", f);
        kbi_md_html_inline(f, s + 1, (size_t)(close - s - 1));
        fputs("</a>", f);
    } else {
        kbi_md_html_inline(f, s + 1, (size_t)(close - s - 1));
    }
    return (size_t)(end - s) + 1;
}

/* The markup that starts at s: writes it and returns the bytes it took, or
 * 0 when s starts plain text. */
static size_t markup_out(FILE *f, const char *s, size_t n)
{
    static const char *const raw[] = {"<sub>", "</sub>", "<br>"};
    const char *end;
    size_t k = 0;
    if (s[0] == '\\' && n > 1 && ispunct((unsigned char)s[1])) {
        kbi_html_text(f, s + 1, 1);
        return 2;
    }
    if (s[0] == '`') {
        while (k < n && s[k] == '`')
            k++;
        for (end = find(s + k, n - k, s, k); end && end + k < s + n && end[k] == '`';)
            end = find(end + k + 1, n - (size_t)(end + k + 1 - s), s, k);
        if (!end)
            return 0;
        fputs("<code>", f);
        kbi_md_html_text(f, s + k, (size_t)(end - s) - k);
        fputs("</code>", f);
        return (size_t)(end - s) + k;
    }
    if (s[0] == '*' && n > 4 && s[1] == '*' && (end = find(s + 3, n - 3, "**", 2)) != NULL) {
        fputs("<strong>", f);
        kbi_md_html_inline(f, s + 2, (size_t)(end - s) - 2);
        fputs("</strong>", f);
        return (size_t)(end - s) + 2;
    }
    if (s[0] == '[')
        return link_out(f, s, n);
    if (s[0] == '!' && n > 1 && s[1] == '[') /* an image within text: its link */
        return (k = link_out(f, s + 1, n - 1)) != 0 ? k + 1 : 0;
    for (size_t i = 0; s[0] == '<' && i < sizeof raw / sizeof raw[0]; i++)
        if (strlen(raw[i]) <= n && memcmp(s, raw[i], strlen(raw[i])) == 0) {
            fputs(raw[i], f);
            return strlen(raw[i]);
        }
    return 0;
}

void kbi_md_html_inline(FILE *f, const char *s, size_t n)
{
    size_t i = 0, text = 0;
    while (i < n) {
        size_t used;
        if (!strchr("\\`*[!<", s[i])) {
            i++;
            continue;
        }
        kbi_md_html_text(f, s + text, i - text);
        used = markup_out(f, s + i, n - i);
        if (!used) {
            kbi_md_html_text(f, s + i, 1);
            used = 1;
        }
        i += used;
        text = i;
    }
    kbi_md_html_text(f, s + text, n - text);
}

static int blank(md_line l)
{
    for (size_t i = 0; i < l.n; i++)
        if (!isspace((unsigned char)l.s[i]))
            return 0;
    return 1;
}

static int starts(md_line l, const char *prefix)
{
    size_t k = strlen(prefix);
    return l.n >= k && memcmp(l.s, prefix, k) == 0;
}

/* The level of an ATX heading ("## text"), 0 if l is none. */
static int heading_level(md_line l)
{
    size_t k = 0;
    while (k < l.n && k < 7 && l.s[k] == '#')
        k++;
    return k >= 1 && k <= 6 && k < l.n && l.s[k] == ' ' ? (int)k : 0;
}

/* The X of a line <a id="X"></a>; returns its length, 0 if l is none. */
static size_t anchor_id(md_line l, const char **id)
{
    const char *q;
    if (!starts(l, "<a id=\"") || l.n < 13 || memcmp(l.s + l.n - 6, "\"></a>", 6) != 0)
        return 0;
    *id = l.s + 7;
    q = memchr(*id, '"', l.n - 7);
    return q == l.s + l.n - 6 ? (size_t)(q - *id) : 0;
}

/* A table's delimiter row: |---|---:| */
static int delimiter_row(md_line l)
{
    int dash = 0;
    if (!starts(l, "|"))
        return 0;
    for (size_t i = 0; i < l.n; i++) {
        if (!strchr("|-: \t", l.s[i]))
            return 0;
        dash |= l.s[i] == '-';
    }
    return dash;
}

/* ![alt](src) alone on the line: sets alt and src and returns 1. */
static int image_line(md_line l, md_line *alt, md_line *src)
{
    const char *mid;
    if (!starts(l, "![") || l.s[l.n - 1] != ')' || !(mid = find(l.s, l.n, "](", 2)))
        return 0;
    *alt = (md_line){l.s + 2, (size_t)(mid - l.s) - 2};
    *src = (md_line){mid + 2, l.n - (size_t)(mid + 2 - l.s) - 1};
    return !memchr(src->s, ')', src->n) && !memchr(alt->s, ']', alt->n);
}

static void section_close(md_writer *w)
{
    if (w->in_section)
        fputs("</section>\n", w->f);
    w->in_section = w->fresh_section = 0;
}

static void section_open(md_writer *w, const char *id, size_t n)
{
    section_close(w);
    fputs("<section", w->f);
    if (n) {
        fputs(" id=\"", w->f);
        kbi_html_text(w->f, id, n);
        fputc('"', w->f);
    }
    fputs(">\n", w->f);
    w->in_section = 1;
    w->fresh_section = n > 0;
}

/* The cells of a table row, without its outer pipes; returns how many (at
 * most MAX_COLUMNS). */
static size_t split_cells(md_line l, md_line *cell)
{
    size_t n = 0, start;
    const char *s = l.s;
    size_t len = l.n;
    while (len && isspace((unsigned char)s[len - 1]))
        len--;
    start = s[0] == '|' ? 1 : 0;
    for (size_t i = start; i <= len && n < MAX_COLUMNS; i++) {
        if (i < len && !(s[i] == '|' && s[i - 1] != '\\'))
            continue;
        if (i == len && i == start)
            break; /* the row ended with its pipe */
        cell[n] = (md_line){s + start, i - start};
        while (cell[n].n && isspace((unsigned char)cell[n].s[0]))
            cell[n].s++, cell[n].n--;
        while (cell[n].n && isspace((unsigned char)cell[n].s[cell[n].n - 1]))
            cell[n].n--;
        n++;
        start = i + 1;
    }
    return n;
}

static void table_row(FILE *f, md_line l, const char *tag, const char *const *align, size_t cols)
{
    md_line cell[MAX_COLUMNS];
    size_t n = split_cells(l, cell);
    fputs("<tr>", f);
    for (size_t k = 0; k < cols; k++) {
        fprintf(f, "<%s%s>", tag, align[k]);
        if (k < n)
            kbi_md_html_inline(f, cell[k].s, cell[k].n);
        fprintf(f, "</%s>", tag);
    }
    fputs("</tr>\n", f);
}

/* The table at lines[i] (its header, then its delimiter row); returns the
 * first line after it. */
static size_t table_out(FILE *f, const md_line *lines, size_t i, size_t n)
{
    md_line cell[MAX_COLUMNS];
    const char *align[MAX_COLUMNS];
    size_t cols = split_cells(lines[i + 1], cell);
    for (size_t k = 0; k < cols; k++) {
        int left = cell[k].n && cell[k].s[0] == ':';
        int right = cell[k].n && cell[k].s[cell[k].n - 1] == ':';
        align[k] = left && right ? " class=\"c\"" : right ? " class=\"r\"" : "";
    }
    fputs("<div class=\"kb-table\"><table>\n<thead>", f);
    table_row(f, lines[i], "th", align, cols);
    fputs("</thead>\n<tbody>\n", f);
    for (i += 2; i < n && starts(lines[i], "|"); i++)
        table_row(f, lines[i], "td", align, cols);
    fputs("</tbody></table></div>\n", f);
    return i;
}

/* Whether lines[i] starts a block other than a paragraph. */
static int block_start(const md_line *lines, size_t i, size_t n)
{
    md_line l = lines[i], a, b;
    const char *id;
    return blank(l) || heading_level(l) || anchor_id(l, &id) || starts(l, ">") || starts(l, "- ") ||
           starts(l, "```") || image_line(l, &a, &b) ||
           (starts(l, "|") && i + 1 < n && delimiter_row(lines[i + 1]));
}

/* Lines of inline text, a hard break after those that end in two spaces;
 * strip: the prefix each line has ("> " in a quote).  Returns the first
 * line after them. */
static size_t text_lines(FILE *f, const md_line *lines, size_t i, size_t n, const char *strip)
{
    size_t first = i, k = strlen(strip);
    for (; i < n; i++) {
        md_line l = lines[i];
        int hard = l.n >= 2 && l.s[l.n - 1] == ' ' && l.s[l.n - 2] == ' ';
        if (k ? !starts(l, strip) : i > first && block_start(lines, i, n))
            break;
        if (i > first)
            fputs("\n", f);
        kbi_md_html_inline(f, l.s + k, l.n - k);
        if (hard)
            fputs("<br>", f);
    }
    return i;
}

/* Code between ``` fences, as it is; returns the first line after it. */
static size_t fence_out(FILE *f, const md_line *lines, size_t i, size_t n)
{
    fputs("<pre><code>", f);
    for (i++; i < n && !starts(lines[i], "```"); i++) {
        kbi_html_text(f, lines[i].s, lines[i].n);
        fputc('\n', f);
    }
    fputs("</code></pre>\n", f);
    return i < n ? i + 1 : i;
}

/* The block at lines[i]; returns the first line after it. */
static size_t block_out(md_writer *w, const md_line *lines, size_t i, size_t n)
{
    md_line l = lines[i], alt, src;
    const char *id;
    size_t k;
    int level = heading_level(l);
    if (level) {
        if (level <= 2 && !w->fresh_section)
            section_open(w, NULL, 0);
        w->fresh_section = 0;
        fprintf(w->f, "<h%d>", level);
        kbi_md_html_inline(w->f, l.s + level + 1, l.n - (size_t)level - 1);
        fprintf(w->f, "</h%d>\n", level);
        return i + 1;
    }
    if ((k = anchor_id(l, &id)) != 0) {
        section_open(w, id, k);
        return i + 1;
    }
    if (starts(l, "```"))
        return fence_out(w->f, lines, i, n);
    if (starts(l, "|") && i + 1 < n && delimiter_row(lines[i + 1]))
        return table_out(w->f, lines, i, n);
    if (image_line(l, &alt, &src)) {
        if (!w->image || w->image(w->f, alt.s, alt.n, src.s, src.n, w->ctx) != 0) {
            fputs("<p>", w->f);
            kbi_md_html_inline(w->f, alt.s, alt.n);
            fputs("</p>\n", w->f);
        }
        return i + 1;
    }
    if (starts(l, "- ")) {
        fputs("<ul>\n", w->f);
        for (; i < n && starts(lines[i], "- "); i++) {
            fputs("<li>", w->f);
            kbi_md_html_inline(w->f, lines[i].s + 2, lines[i].n - 2);
            fputs("</li>\n", w->f);
        }
        fputs("</ul>\n", w->f);
        return i;
    }
    fputs(starts(l, ">") ? "<blockquote><p>" : "<p>", w->f);
    i = text_lines(w->f, lines, i, n, starts(l, "> ") ? "> " : "");
    fputs(starts(l, ">") ? "</p></blockquote>\n" : "</p>\n", w->f);
    return i;
}

void kbi_md_html(FILE *f, const char *md, kbi_md_image_fn image, void *ctx)
{
    md_writer w = {.f = f, .image = image, .ctx = ctx};
    md_line *lines = NULL;
    size_t n = 0, cap = 0;
    for (const char *s = md; *s;) {
        const char *nl = strchr(s, '\n');
        size_t len = nl ? (size_t)(nl - s) : strlen(s);
        if (n == cap)
            lines = kbi_xrealloc(lines, (cap = cap ? 2 * cap : 256) * sizeof *lines);
        /* A \r before the newline is not part of the line. */
        lines[n++] = (md_line){s, len && s[len - 1] == '\r' ? len - 1 : len};
        s += len + (nl != NULL);
    }
    for (size_t i = 0; i < n;)
        i = blank(lines[i]) ? i + 1 : block_out(&w, lines, i, n);
    section_close(&w);
    free(lines);
}
