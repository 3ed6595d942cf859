/* md plugin, host side: a system's configuration (the presets lj, sp and ljstd, and what follows
 * from N_e, rho and the cutoff: the region's edge and its cells) and its initial lattice with
 * random velocities of the set temperature and no net momentum. */
#include <math.h>
#include <string.h>

#include "kbench/plugin.h"
#include "draws.h"
#include "md.h"

int md_config_system(md_config *cfg, const char *sys)
{
    if (strcmp(sys, "lj") == 0) {
        cfg->system = MD_SYS_LJ;
        cfg->temp = 1.2, cfg->rho = 0.38, cfg->rc = 3.0, cfg->delta = 0.8;
    } else if (strcmp(sys, "sp") == 0) {
        cfg->system = MD_SYS_SP;
        cfg->temp = 1.0, cfg->rho = 0.8, cfg->rc = pow(2.0, 1.0 / 6.0), cfg->delta = 0.6;
        cfg->shift = 1.0;
    } else if (strcmp(sys, "ljstd") == 0) {
        cfg->system = MD_SYS_LJSTD;
        cfg->temp = 1.0, cfg->rho = 0.8442, cfg->rc = 2.5, cfg->delta = 0.4;
    } else {
        return -1;
    }
    cfg->dt = 0.005;
    cfg->rescale_every = 20;
    return 0;
}

int md_config_derive(md_config *cfg, char *msg)
{
    double rn = cfg->rc + cfg->delta;
    if (cfg->ne < 1 || cfg->ne > 1290) {
        kb_msgf(msg, "N_e = %d out of range 1..1290 (atom indices are 32-bit)", cfg->ne);
        return -1;
    }
    if (!(cfg->rho > 0) || !(cfg->rc > 0) || !(cfg->delta > 0) || !(cfg->temp > 0) ||
        !(cfg->dt > 0)) {
        kb_msgf(msg, "rho, T, rc, delta and dt must be positive");
        return -1;
    }
    cfg->n = cfg->ne * cfg->ne * cfg->ne;
    /* Rounded to float: the device's region edge, so host, device and references agree. */
    cfg->L = (double)(float)(cfg->ne / cbrt(cfg->rho));
    cfg->G = (int)floor(cfg->L / rn);
    if (cfg->G < 3) {
        kb_msgf(msg, "region edge %.3f holds %d cells of rc+delta = %.3f: need 3 (larger N_e)",
                cfg->L, cfg->G, rn);
        return -1;
    }
    if (cfg->G > 1024)
        cfg->G = 1024;
    cfg->ncell = cfg->G * cfg->G * cfg->G;
    return 0;
}

void md_lattice(const md_config *cfg, uint64_t seed, double *r, double *v)
{
    int ne = cfg->ne, n = cfg->n, i = 0;
    double gap = cfg->L / ne, speed = sqrt(3.0 * cfg->temp), sum[3] = {0, 0, 0};
    for (int z = 0; z < ne; z++)
        for (int y = 0; y < ne; y++)
            for (int x = 0; x < ne; x++, i++) {
                double cz = 2.0 * uniform01(seed, 2 * (uint64_t)i) - 1.0;
                double ph = 2.0 * 3.14159265358979323846 * uniform01(seed, 2 * (uint64_t)i + 1);
                double s = sqrt(1.0 - cz * cz);
                r[3 * i] = (x + 0.5) * gap - 0.5 * cfg->L;
                r[3 * i + 1] = (y + 0.5) * gap - 0.5 * cfg->L;
                r[3 * i + 2] = (z + 0.5) * gap - 0.5 * cfg->L;
                v[3 * i] = speed * s * cos(ph);
                v[3 * i + 1] = speed * s * sin(ph);
                v[3 * i + 2] = speed * cz;
                for (int d = 0; d < 3; d++)
                    sum[d] += v[3 * i + d];
            }
    for (i = 0; i < n; i++)
        for (int d = 0; d < 3; d++)
            v[3 * i + d] -= sum[d] / n;
}
