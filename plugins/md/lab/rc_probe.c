/* md: why ljstd failed verify on the H200 (HISTORY.md, "Verification").  Equilibrates the
 * standard LJ liquid on the host (N_e, equil steps), then evaluates every pair's cutoff test in
 * float as the device does (minimum image with rintf, r2 by FMAs) and in double as the
 * reference does, and reports the pairs decided differently and the largest force error with
 * and without them.  Build and run from the repository root:
 *   gcc -O2 -ffp-contract=off -I plugins/md -I harness/include -o /tmp/rc_probe \
 *       plugins/md/lab/rc_probe.c plugins/md/{system,host,point,reference,summary,eos}.c \
 *       -lm -lpthread && /tmp/rc_probe 40 60 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "md.h"
static float img(float d, float L, float invL)
{
    return d - L * rintf(d * invL);
}
int main(int argc, char **argv)
{
    md_config c = {0};
    char msg[512];
    md_point_state ps;
    int ne = argc > 1 ? atoi(argv[1]) : 24, equil = argc > 2 ? atoi(argv[2]) : 200;
    c.system = MD_SYS_LJSTD;
    c.ne = ne;
    c.rho = 0.8442;
    c.temp = 1.0;
    c.rc = 2.5;
    c.delta = 0.4;
    c.shift = 0;
    c.dt = 0.005;
    c.steps = 1;
    c.threads = 128;
    c.equil = equil;
    c.rescale_every = 20;
    if (md_config_derive(&c, msg)) {
        puts(msg);
        return 1;
    }
    if (md_prepare_host(&c, 1, &ps, msg)) {
        puts(msg);
        return 1;
    }
    int n = c.n;
    double *ref = malloc(3 * (size_t)n * sizeof(double)), u, vir, rms = 0;
    md_ref_cells(&c, ps.r, n, ref, &u, &vir);
    for (int i = 0; i < 3 * n; i++)
        rms += ref[i] * ref[i];
    rms = sqrt(rms / n);
    /* device-like float forces over all pairs within rc + 0.1 found in double via cells */
    float L = (float)c.L, invL = 1.0f / L, rc2 = (float)(c.rc * c.rc);
    double worst = 0, worst_clean = 0, L2 = c.L;
    long long mism = 0, near = 0;
    int G = (int)floor(c.L / 2.6);
    if (G < 3)
        G = 3;
    int *head = malloc(sizeof(int) * G * G * G), *next = malloc(sizeof(int) * n);
    for (int k = 0; k < G * G * G; k++)
        head[k] = -1;
    for (int i = 0; i < n; i++) {
        int cc[3];
        for (int k = 0; k < 3; k++) {
            cc[k] = (int)((ps.r[4 * i + k] + 0.5 * L2) * G / L2);
            if (cc[k] >= G)
                cc[k] = G - 1;
            if (cc[k] < 0)
                cc[k] = 0;
        }
        int id = (cc[2] * G + cc[1]) * G + cc[0];
        next[i] = head[id];
        head[id] = i;
    }
    double minmiss = 1e9;
    for (int i = 0; i < n; i++) {
        float ax = 0, ay = 0, az = 0;
        double ex = 0, ey = 0, ez = 0; /* ex: forces of mismatched pairs (double) */
        int cc[3];
        for (int k = 0; k < 3; k++) {
            cc[k] = (int)((ps.r[4 * i + k] + 0.5 * L2) * G / L2);
            if (cc[k] >= G)
                cc[k] = G - 1;
            if (cc[k] < 0)
                cc[k] = 0;
        }
        for (int dz = -1; dz <= 1; dz++)
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    int id = (((cc[2] + dz + G) % G) * G + (cc[1] + dy + G) % G) * G +
                             (cc[0] + dx + G) % G;
                    for (int j = head[id]; j >= 0; j = next[j]) {
                        if (j == i)
                            continue;
                        float fx = img(ps.r[4 * i] - ps.r[4 * j], L, invL),
                              fy = img(ps.r[4 * i + 1] - ps.r[4 * j + 1], L, invL),
                              fz = img(ps.r[4 * i + 2] - ps.r[4 * j + 2], L, invL);
                        float r2f = fmaf(fz, fz, fmaf(fy, fy, fx * fx));
                        double d[3];
                        for (int k = 0; k < 3; k++) {
                            d[k] = (double)ps.r[4 * i + k] - ps.r[4 * j + k];
                            if (d[k] >= 0.5 * L2)
                                d[k] -= L2;
                            else if (d[k] < -0.5 * L2)
                                d[k] += L2;
                        }
                        double r2d = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
                        int inf = r2f < rc2, ind = r2d < c.rc * c.rc;
                        if (fabs(sqrt(r2d) - c.rc) < 1e-5)
                            near++;
                        if (inf) {
                            float ri2 = 1.0f / r2f, ri6 = ri2 * ri2 * ri2,
                                  fr = 48.0f * ri6 * (ri6 - 0.5f) * ri2;
                            ax += fr * fx;
                            ay += fr * fy;
                            az += fr * fz;
                        }
                        if (inf != ind) {
                            double pu, fr;
                            md_pair(r2d, 0, &pu, &fr);
                            double sg = inf ? 1 : -1;
                            ex += sg * fr * d[0];
                            ey += sg * fr * d[1];
                            ez += sg * fr * d[2];
                            mism++;
                            if (mism <= 5)
                                printf("mismatch i=%d j=%d r-rc=%.3e float_in=%d |F|=%.4f "
                                       "wrapped=%d\n",
                                       i, j, sqrt(r2d) - c.rc, inf, fabs(fr) * sqrt(r2d),
                                       fabs(ps.r[4 * i] - ps.r[4 * j]) > L2 / 2 ||
                                           fabs(ps.r[4 * i + 1] - ps.r[4 * j + 1]) > L2 / 2 ||
                                           fabs(ps.r[4 * i + 2] - ps.r[4 * j + 2]) > L2 / 2);
                        }
                    }
                }
        double e1 = sqrt((ax - ref[3 * i]) * (ax - ref[3 * i]) +
                         (ay - ref[3 * i + 1]) * (ay - ref[3 * i + 1]) +
                         (az - ref[3 * i + 2]) * (az - ref[3 * i + 2]));
        double e2 = sqrt((ax - ex - ref[3 * i]) * (ax - ex - ref[3 * i]) +
                         (ay - ey - ref[3 * i + 1]) * (ay - ey - ref[3 * i + 1]) +
                         (az - ez - ref[3 * i + 2]) * (az - ez - ref[3 * i + 2]));
        if (e1 > worst)
            worst = e1;
        if (e2 > worst_clean)
            worst_clean = e2;
    }
    double fc = 24.0 / c.rc * (2 * pow(c.rc, -12) - pow(c.rc, -6));
    printf("N=%d L=%.4f rms|F|=%.3f |F(rc)|=%.5f |F(rc)|/rms=%.3e U/N=%.4f\n", n, c.L, rms,
           fabs(fc), fabs(fc) / rms, u);
    printf("pairs within 1e-5 of rc (both dirs): %lld; float/double cutoff mismatches (both dirs): "
           "%lld\n",
           near, mism);
    printf("max |F-Fref|/rms: %.3e ; without the mismatched pairs: %.3e\n", worst / rms,
           worst_clean / rms);
    return 0;
}
