/* Which variants each knob applies to (knob_variants.h): ABI 1.4's "knob=variant|variant;..."
 * checked when a plugin loads and read when a profile is. */
#include "knob_variants.h"

#include <string.h>

#include "common.h"

/* Longest piece of a descriptor's text quoted in a refusal (the line stays one line). */
#define QUOTE_MAX 120

/* Whether the items of [p, end), separated by sep, include the len characters at name. */
static int has_item(const char *p, const char *end, char sep, const char *name, size_t len)
{
    while (p <= end) {
        const char *stop = memchr(p, sep, (size_t)(end - p));
        if (!stop)
            stop = end;
        if ((size_t)(stop - p) == len && strncmp(p, name, len) == 0)
            return 1;
        p = stop + 1;
    }
    return 0;
}

/* The knob_variants text of p's descriptor, or NULL where it has none (or predates 1.4). */
static const char *text_of(const kbi_plugin *p)
{
    return p->minor >= 4 ? KBI_DESC_GET(p->desc, knob_variants, NULL) : NULL;
}

/* The variant list of `knob` in text ([*list, *end)), or 0 when text does not name the knob. */
static int entry_of(const char *text, const char *knob, const char **list, const char **end)
{
    size_t len = strlen(knob);
    for (const char *p = text; p && *p;) {
        const char *stop = strchr(p, ';');
        if (!stop)
            stop = p + strlen(p);
        if (strncmp(p, knob, len) == 0 && p[len] == '=') {
            *list = p + len + 1;
            *end = stop;
            return 1;
        }
        p = *stop ? stop + 1 : stop;
    }
    return 0;
}

/* Checks the variant list [p, end) of knob [knob, knob + klen). */
static int check_variants(const kb_plugin *d, const char *knob, int klen, const char *p,
                          const char *end, char *err)
{
    for (const char *v = p; v <= end;) {
        const char *stop = memchr(v, '|', (size_t)(end - v));
        int len, known = 0;
        if (!stop)
            stop = end;
        len = (int)(stop - v);
        for (int i = 0; i < d->n_variants && !known; i++)
            known = (int)strlen(d->variants[i].name) == len &&
                    strncmp(d->variants[i].name, v, (size_t)len) == 0;
        if (!known) {
            kbi_errf(err,
                     "knob_variants: '%.*s' (for knob %.*s) is not a variant of the plugin, "
                     "expected knob=variant|variant of its variants",
                     len < QUOTE_MAX ? len : QUOTE_MAX, v, klen, knob);
            return KBI_ERR;
        }
        if (v > p && has_item(p, v - 1, '|', v, (size_t)len)) {
            kbi_errf(err, "knob_variants: variant %.*s is listed twice for knob %.*s: once at most",
                     len, v, klen, knob);
            return KBI_ERR;
        }
        v = stop + 1;
    }
    return KBI_OK;
}

int kbi_knob_variants_check(const kb_plugin *d, char *err)
{
    const char *text = d->knob_variants, *knobs = d->knobs ? d->knobs : "";
    char knob[KBI_DESC_MAX_NAME + 1];
    for (const char *p = text; p && *p;) {
        const char *stop = strchr(p, ';'), *eq, *first, *end;
        int len;
        if (!stop)
            stop = p + strlen(p);
        len = (int)(stop - p);
        eq = memchr(p, '=', (size_t)len);
        if (!eq || eq == p || eq + 1 == stop || memchr(eq + 1, '=', (size_t)(stop - eq - 1))) {
            kbi_errf(err,
                     "knob_variants: item '%.*s' is not knob=variant|variant (expected "
                     "\"knob=variant|variant;knob=variant|...\")",
                     len < QUOTE_MAX ? len : QUOTE_MAX, p);
            return KBI_ERR;
        }
        if (!has_item(knobs, knobs + strlen(knobs), '|', p, (size_t)(eq - p))) {
            kbi_errf(err,
                     "knob_variants: '%.*s' is not one of the plugin's knobs (knobs: %s), "
                     "expected knob=variant|variant of its knobs",
                     (int)(eq - p) < QUOTE_MAX ? (int)(eq - p) : QUOTE_MAX, p,
                     *knobs ? knobs : "none");
            return KBI_ERR;
        }
        memcpy(knob, p, (size_t)(eq - p)); /* a knob of the plugin: at most KBI_DESC_MAX_NAME */
        knob[eq - p] = '\0';
        if (entry_of(text, knob, &first, &end) && first != eq + 1) {
            kbi_errf(err, "knob_variants: knob %s is named twice: once at most", knob);
            return KBI_ERR;
        }
        if (check_variants(d, p, (int)(eq - p), eq + 1, stop, err) != KBI_OK)
            return KBI_ERR;
        p = *stop ? stop + 1 : stop;
        if (!*p && *stop) {
            kbi_errf(err, "knob_variants ends in ';', expected \"knob=variant|variant\" after it");
            return KBI_ERR;
        }
    }
    return KBI_OK;
}

int kbi_knob_applies(const kbi_plugin *p, const char *knob, int variant)
{
    const char *list, *end, *name = p->desc->variants[variant].name;
    if (!entry_of(text_of(p), knob, &list, &end))
        return 1;
    return has_item(list, end, '|', name, strlen(name));
}

size_t kbi_knob_variants_of(const kbi_plugin *p, const char *knob, int *out)
{
    size_t n = 0;
    for (int i = 0; i < p->desc->n_variants; i++)
        if (kbi_knob_applies(p, knob, i))
            out[n++] = i;
    return n;
}
