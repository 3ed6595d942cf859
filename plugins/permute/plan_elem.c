/* The permute plugin's plan of the per-element kernels: one descriptor a block and the owner
 * block of each CTA. */
#include <stdlib.h>
#include <string.h>

#include "kbench/plugin.h"
#include "plan.h"

void pm_elem_of(const pm_block *b, pm_elem_block *e)
{
    int32_t st[PM_MAX_RANK], acc = 1;
    memset(e, 0, sizeof *e);
    e->src_off = b->src_off;
    e->dst_off = b->dst_off;
    e->u_off = b->u_off;
    e->n = (int32_t)b->n;
    e->rows = b->rows;
    e->cols = b->cols;
    e->rank = b->rank;
    for (int q = 0; q < b->rank; q++) {
        st[q] = acc;
        acc *= b->dims[q];
    }
    for (int k = 0; k < b->rank; k++) {
        e->ddim[k] = b->dims[b->perm[k]];
        e->sstr[k] = st[b->perm[k]];
    }
}

int pm_plan_elems(const pm_problem *p, int unique, pm_elem_plan *out, char *msg)
{
    int n = 0;
    int64_t ctas = 0;
    memset(out, 0, sizeof *out);
    out->blk = calloc((size_t)(p->n_blocks ? p->n_blocks : 1), sizeof *out->blk);
    out->begin = calloc((size_t)p->n_blocks + 1, sizeof *out->begin);
    if (!out->blk || !out->begin) {
        pm_elem_plan_free(out);
        kb_msgf(msg, "out of host memory planning the per-element kernels");
        return KB_NOMEM;
    }
    for (int i = 0; i < p->n_blocks; i++) {
        const pm_block *b = &p->blocks[i];
        if (pm_is_unique(b) != !!unique)
            continue;
        pm_elem_of(b, &out->blk[n]);
        out->begin[n] = (int32_t)ctas;
        ctas += (b->n * b->rows + PM_ELEM_THREADS - 1) / PM_ELEM_THREADS;
        if (ctas >= INT32_MAX) {
            pm_elem_plan_free(out);
            kb_msgf(msg, "over 2^31 CTAs in one launch");
            return KB_SKIP;
        }
        n++;
    }
    out->n_blocks = n;
    out->begin[n] = (int32_t)ctas;
    out->owner = malloc((size_t)(ctas ? ctas : 1) * sizeof *out->owner);
    if (!out->owner) {
        pm_elem_plan_free(out);
        kb_msgf(msg, "out of host memory planning the per-element kernels");
        return KB_NOMEM;
    }
    for (int i = 0; i < n; i++)
        for (int32_t t = out->begin[i]; t < out->begin[i + 1]; t++)
            out->owner[t] = i;
    return KB_OK;
}

void pm_elem_plan_free(pm_elem_plan *e)
{
    free(e->blk);
    free(e->begin);
    free(e->owner);
    memset(e, 0, sizeof *e);
}
