/* md: why LJ's N_l (largest cell occupancy) is 36.6-40.7 here and 40-50 in the paper (HISTORY.md,
 * "LJ N_l").  Prepares the LJ system on the host as prepare does (lattice, `equil` steps
 * rescaled every 20), then keeps running it, rescaled every 20 steps to hold T, and every
 * `every` steps bins the atoms into the G^3 cells the strategies use and prints the largest
 * occupancy, the occupancy's variance over its mean (1 for an ideal gas: Poisson; a
 * compressible fluid near its critical point is well above 1, a lattice 0) and the largest
 * occupancy an ideal gas of the same mean would give over as many cells.  Build and run from
 * the repository root:
 *   gcc -O2 -I plugins/md -I harness/include -o /tmp/nl_probe plugins/md/lab/nl_probe.c \
 *       plugins/md/{system,host,point,reference,summary,eos}.c -lm -lpthread &&
 *   /tmp/nl_probe 24 500 6000 500 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "md.h"

/* Expected maximum of ncell independent Poisson(lam) counts. */
static double poisson_max(double lam, int ncell)
{
    double pk = exp(-lam), cdf = 0, e = 0;
    for (int k = 0; k < 400; k++) {
        cdf += pk;
        e += 1 - pow(cdf, ncell);
        pk *= lam / (k + 1);
    }
    return e;
}

static void occupancy(const md_config *c, const double *r, int *cnt, int step)
{
    double w = c->L / c->G, mean = (double)c->n / c->ncell, var = 0;
    int mx = 0;
    memset(cnt, 0, (size_t)c->ncell * sizeof(int));
    for (int i = 0; i < c->n; i++) {
        int g[3];
        for (int d = 0; d < 3; d++) {
            g[d] = (int)((r[3 * i + d] + 0.5 * c->L) / w);
            g[d] = g[d] < 0 ? 0 : (g[d] >= c->G ? c->G - 1 : g[d]);
        }
        cnt[(g[2] * c->G + g[1]) * c->G + g[0]]++;
    }
    for (int k = 0; k < c->ncell; k++) {
        var += (cnt[k] - mean) * (cnt[k] - mean);
        mx = cnt[k] > mx ? cnt[k] : mx;
    }
    var /= c->ncell;
    printf("step %6d  N_l %3d  var/mean %.3f  (mean %.2f, ideal-gas max %.1f)\n", step, mx,
           var / mean, mean, poisson_max(mean, c->ncell));
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int ne = argc > 1 ? atoi(argv[1]) : 24, steps = argc > 3 ? atoi(argv[3]) : 6000;
    int every = argc > 4 ? atoi(argv[4]) : 500, *cnt;
    md_config c = {
        .ne = ne, .steps = steps, .threads = 128, .equil = argc > 2 ? atoi(argv[2]) : 500};
    md_config_system(&c, "lj"); /* the lj system as the plugin configures it */
    md_point_state ps;
    md_host h;
    char msg[512];
    if (md_config_derive(&c, msg) || md_prepare_host(&c, 1, &ps, msg) ||
        md_host_create(&h, &c, MD_HOST_PAIRLIST, ps.r, ps.v, 0, 0, msg)) {
        fprintf(stderr, "%s\n", msg);
        return 1;
    }
    printf("LJ N_e %d: %d atoms, L %.3f, G %d, cell %.3f, %d cells\n", ne, c.n, c.L, c.G, c.L / c.G,
           c.ncell);
    cnt = malloc((size_t)c.ncell * sizeof(int));
    if (!cnt)
        return 1;
    occupancy(&c, h.r, cnt, 0);
    for (int k = 1; k <= steps; k++) {
        md_host_step(&h);
        if (k % 20 == 0)
            md_host_rescale(&h);
        if (k % every == 0)
            occupancy(&c, h.r, cnt, k);
    }
    free(cnt);
    md_host_destroy(&h);
    md_point_free(&ps);
    return 0;
}
