/* md: how much of the `eos` case's offset from the LJTS equation of state is the time step
 * (HISTORY.md, "Standard LJ liquid").  Leapfrog/velocity Verlet samples a shadow Hamiltonian
 * that differs from H by O(dt^2), so the averages at a given kinetic T move by O(dt^2).  This
 * prepares the standard liquid (rho 0.8442, rc 2.5, u shifted to 0 at rc) on the host in
 * double, equilibrates it at T 1 (rescaled every 20 steps), then from that one state runs NVE
 * for the same simulated time at each time step given and prints U/N - EOS and P - EOS
 * (md_eos_compare: per-step differences at each step's kinetic T, 10-block errors).  dt 0.01
 * and 0.0025 bracket the plugin's 0.005; with the dt^2 law the three points give the slope.
 * Build and run from the repository root (one dt per process runs them in parallel):
 *   gcc -O2 -I plugins/md -I harness/include -o /tmp/dt_probe plugins/md/lab/dt_probe.c \
 *       plugins/md/{system,host,point,reference,summary,eos}.c -lm -lpthread
 *   /tmp/dt_probe NE TIME EQUIL SEED DT...   e.g. /tmp/dt_probe 10 200 3000 7 0.01 0.005 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "md.h"

int main(int argc, char **argv)
{
    int ne = argc > 1 ? atoi(argv[1]) : 10, equil = argc > 3 ? atoi(argv[3]) : 3000;
    double tsim = argc > 2 ? atof(argv[2]) : 100.0;
    unsigned long long seed = argc > 4 ? strtoull(argv[4], NULL, 10) : 7;
    md_config c = {.ne = ne, .steps = equil, .threads = 128, .equil = 500};
    md_config_system(&c, "ljstd"); /* the plugin's ljstd: rho 0.8442, T 1, rc 2.5, dt 0.005 */
    double ri6 = pow(c.rc, -6.0);
    md_point_state ps;
    md_host h;
    float *r4, *v4;
    char msg[512];
    c.shift = -4.0 * ri6 * (ri6 - 1.0);
    if (md_config_derive(&c, msg) || md_prepare_host(&c, seed, &ps, msg) ||
        md_host_create(&h, &c, MD_HOST_PAIRLIST, ps.r, ps.v, 0, 0, msg)) {
        fprintf(stderr, "%s\n", msg);
        return 1;
    }
    /* the eos case's preparation: more steps rescaled to T 1 at dt 0.005 */
    for (int k = 1; k <= equil; k++) {
        md_host_step(&h);
        if (k % 20 == 0)
            md_host_rescale(&h);
    }
    r4 = calloc(4 * (size_t)c.n, sizeof(float));
    v4 = calloc(4 * (size_t)c.n, sizeof(float));
    if (!r4 || !v4)
        return 1;
    for (int i = 0; i < c.n; i++)
        for (int d = 0; d < 3; d++) {
            r4[4 * i + d] = (float)h.r[3 * i + d];
            v4[4 * i + d] = (float)h.v[3 * i + d];
        }
    md_host_destroy(&h);
    printf("ljstd shifted, %d atoms, equilibrated %d + %d steps at T 1, NVE for t = %g\n", c.n,
           c.equil, equil, tsim);
    for (int a = 5; a < argc; a++) {
        md_config cd = c;
        md_eos_cmp e;
        md_summary s;
        cd.dt = atof(argv[a]);
        cd.steps = (int)lround(tsim / cd.dt);
        if (md_host_create(&h, &cd, MD_HOST_PAIRLIST, r4, v4, 0, 0, msg)) {
            fprintf(stderr, "%s\n", msg);
            return 1;
        }
        for (int k = 0; k < cd.steps; k++)
            md_host_step(&h);
        md_summarize(&cd, h.hist, cd.steps, &s);
        if (md_eos_compare(&cd, h.hist, cd.steps, &e) || !e.applies) {
            fprintf(stderr, "no EOS comparison\n");
            return 1;
        }
        printf("dt %.4f steps %7d  T %.5f  U %.5f (+- %.5f)  P %.4f (+- %.4f)  U-EOS %+.5f +- "
               "%.5f  P-EOS %+.5f +- %.5f  E %.6f drift %.1e\n",
               cd.dt, cd.steps, e.T, s.pe_mean, s.pe_err, s.p_mean, s.p_err, e.du, e.du_err, e.dp,
               e.dp_err, s.e_mean, s.drift);
        fflush(stdout);
        md_host_destroy(&h);
    }
    free(r4);
    free(v4);
    md_point_free(&ps);
    return 0;
}
