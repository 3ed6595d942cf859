/* Markdown to HTML for report.html (report_html_md.c).  It reads the subset
 * kbench's own Markdown writers produce (report_md.c, compare.c): ATX
 * headings, paragraphs with hard breaks, "> " quotes, "- " lists, pipe
 * tables, code spans, **strong**, [links](relative), an image alone on a
 * line, and the two raw tags report.md writes (<a id="..."></a> before a
 * heading, <sub>).  Everything else is text, escaped, so no text of a
 * results file can become markup. */
#ifndef KBENCH_REPORT_HTML_MD_H
#define KBENCH_REPORT_HTML_MD_H

#include <stddef.h>
#include <stdio.h>

/* Draws an image that stands alone on a line: alt is Markdown inline text
 * (alt_len bytes), src its target (src_len bytes).  Returns nonzero when it
 * wrote nothing; the image's alt text then stands in. */
typedef int (*kbi_md_image_fn)(FILE *f, const char *alt, size_t alt_len, const char *src,
                               size_t src_len, void *ctx);

/* Writes the NUL-terminated Markdown md as HTML body content into f.  Each
 * level-1 or level-2 heading starts a <section>; a line <a id="X"></a> does
 * too, the section taking the id X (report.md's "plugin-NAME" anchors).
 * image (may be NULL) draws images alone on a line. */
void kbi_md_html(FILE *f, const char *md, kbi_md_image_fn image, void *ctx);

/* Markdown inline text s[0, n) as HTML: code spans, **strong**, links to
 * relative targets, <sub>; the rest escaped (character references such as
 * &lt; kept). */
void kbi_md_html_inline(FILE *f, const char *s, size_t n);

/* Markdown text without markup as HTML: escaped, its character references
 * kept (report.md writes < as &lt;), \| a pipe (table cells escape them). */
void kbi_md_html_text(FILE *f, const char *s, size_t n);

#endif
