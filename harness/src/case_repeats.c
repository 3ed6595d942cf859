/* A profile whose sections overlap expands to the same case more than once (md.ini's system-S
 * sections repeat points of its Table 1 section): the repeat would run again, and its results
 * record would carry an id that compare and report read once and warn about.  Each case runs
 * once, where it first appears; the profile's reader is told where the repeats are. */
#include <stdlib.h>
#include <string.h>

#include "profile.h"

/* Sort order: by full id (every parameter: equal only for the same case), then by position. */
static int cmp_full_id(const void *pa, const void *pb)
{
    const kbi_case *a = *(const kbi_case *const *)pa, *b = *(const kbi_case *const *)pb;
    int c = strcmp(a->full_id, b->full_id);
    if (c)
        return c;
    return a->index < b->index ? -1 : a->index > b->index;
}

size_t kbi_cases_drop_repeats(kbi_case *cases, size_t n, const char *path, kbi_strlist *notes)
{
    kbi_case **order = kbi_xcalloc(n ? n : 1, sizeof *order);
    const kbi_case **first = kbi_xcalloc(n ? n : 1, sizeof *first); /* per repeat: the kept one */
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        order[i] = &cases[i];
    qsort(order, n, sizeof *order, cmp_full_id);
    for (size_t i = 1, run = 0; i < n; i++) {
        if (strcmp(order[run]->full_id, order[i]->full_id) != 0)
            run = i; /* order[run]: the first case of a run of equal full ids */
        else
            first[order[i]->index] = order[run];
    }
    for (size_t i = 0; i < n; i++) { /* in profile order */
        const kbi_case *c = &cases[i];
        if (first[i] && notes) {
            kbi_buf b = {0};
            kbi_buf_printf(&b,
                           "%s:%d: [%s] repeats %s, a case of [%s] (line %d): it runs once, there",
                           path, c->section->line, c->section->name, c->id, first[i]->section->name,
                           first[i]->section->line);
            kbi_strlist_add(notes, b.data);
            kbi_buf_free(&b);
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (first[i]) {
            kbi_case_clear(&cases[i]);
            continue;
        }
        cases[kept] = cases[i];
        cases[kept].index = kept;
        kept++;
    }
    free(order);
    free(first);
    return kept;
}
