/* md plugin, host side: the summary of a run's history (means with block-average errors) and
 * its comparison with the equation of state. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eos.h"
#include "md.h"

static void mean_err(const double *x, int n, int stride, double *mean, double *err)
{
    int nb = n >= 10 ? 10 : n, per = n / (nb > 0 ? nb : 1);
    double s = 0.0, bm[10], bs = 0.0, bss = 0.0;
    for (int i = 0; i < n; i++)
        s += x[(size_t)i * stride];
    *mean = n > 0 ? s / n : 0.0;
    *err = 0.0;
    if (nb < 2 || per < 1)
        return;
    for (int b = 0; b < nb; b++) {
        bm[b] = 0.0;
        for (int i = b * per; i < (b + 1) * per; i++)
            bm[b] += x[(size_t)i * stride];
        bm[b] /= per;
        bs += bm[b];
    }
    bs /= nb;
    for (int b = 0; b < nb; b++)
        bss += (bm[b] - bs) * (bm[b] - bs);
    *err = sqrt(bss / (nb - 1) / nb);
}

void md_summarize(const md_config *cfg, const double *hist, int steps, md_summary *s)
{
    double *e = malloc((size_t)(steps > 0 ? steps : 1) * 2 * sizeof(double));
    int w = steps / 20 > 0 ? steps / 20 : 1;
    double first = 0.0, last = 0.0, scale;
    memset(s, 0, sizeof *s);
    if (!e || steps < 1) {
        free(e);
        return;
    }
    for (int t = 0; t < steps; t++) {
        e[2 * t] = hist[3 * t] + hist[3 * t + 1];
        e[2 * t + 1] = cfg->rho * (2.0 * hist[3 * t] + hist[3 * t + 2]) / 3.0;
    }
    mean_err(e, steps, 2, &s->e_mean, &s->e_err);
    mean_err(e + 1, steps, 2, &s->p_mean, &s->p_err);
    mean_err(hist, steps, 3, &s->ke_mean, &s->ke_err);
    mean_err(hist + 1, steps, 3, &s->pe_mean, &s->pe_err);
    for (int t = 0; t < w; t++) {
        first += e[2 * t];
        last += e[2 * (steps - 1 - t)];
    }
    scale = fabs(s->e_mean) > s->ke_mean ? fabs(s->e_mean) : s->ke_mean;
    /* NaN energies (a blown-up run) give a NaN drift, which fails every bound. */
    s->drift = scale > 0 || isnan(scale) ? fabs(last - first) / w / scale : 0.0;
    free(e);
}

int md_eos_compare(const md_config *cfg, const double *hist, int steps, md_eos_cmp *c)
{
    double kn = 2.0 * cfg->n / (3.0 * (cfg->n - 1.0)), h = 1e-4, ke, ke_err;
    double *d = NULL;
    md_ljts e, lo, hi;
    memset(c, 0, sizeof *c);
    if (steps < 1)
        return 0;
    mean_err(hist, steps, 3, &ke, &ke_err);
    c->T = kn * ke;
    c->T_err = kn * ke_err;
    if (cfg->system == MD_SYS_SP || fabs(cfg->rc - MD_LJTS_RC) > 1e-9 ||
        !md_ljts_applies(c->T, cfg->rho))
        return 0;
    if (!(d = malloc(2 * (size_t)steps * sizeof(double))))
        return -1;
    c->applies = 1;
    c->energy = cfg->shift != 0;
    md_ljts_eval(c->T, cfg->rho, &e);
    md_ljts_eval(c->T - h, cfg->rho, &lo);
    md_ljts_eval(c->T + h, cfg->rho, &hi);
    c->p_ref = e.p;
    c->u_ref = e.u_res;
    c->p_ref_err = fabs(hi.p - lo.p) / (2 * h) * c->T_err;
    c->u_ref_err = fabs(hi.u_res - lo.u_res) / (2 * h) * c->T_err;
    for (int t = 0; t < steps; t++) {
        double p = cfg->rho * (2.0 * hist[3 * t] + hist[3 * t + 2]) / 3.0;
        md_ljts_eval(kn * hist[3 * t], cfg->rho, &e);
        d[2 * t] = p - e.p;
        d[2 * t + 1] = hist[3 * t + 1] - e.u_res;
    }
    mean_err(d, steps, 2, &c->dp, &c->dp_err);
    mean_err(d + 1, steps, 2, &c->du, &c->du_err);
    free(d);
    return 0;
}
