/* md plugin: the LJTS (rc = 2.5) equation of state of Thol, Rutkai, Span, Vrabec and Lustig,
 * Int. J. Thermophys. 36, 25-43 (2015) (eos.h).  Each of the 21 terms of Table 1 is
 * n tau^t delta^d E(delta) G(tau); the derivatives the properties need are the term times a
 * factor (tau d/dtau, delta d/ddelta, delta^2 d2/ddelta2), written out per kind of term. */
#include <math.h>

#include "eos.h"

/* Table 1: n, t, d; l for the exponential terms (exp(-delta^l)); eta, beta, gamma, epsilon
 * for the Gaussian terms (exp(-eta (delta - epsilon)^2 - beta (tau - gamma)^2)). */
static const double pw[6][3] = {
    {0.015606084, 1.000, 4}, {1.7917527, 0.304, 1},  {-1.9613228, 0.583, 1},
    {1.3045604, 0.662, 2},   {-1.8117673, 0.870, 2}, {0.15483997, 0.870, 3},
};
static const double ex[6][4] = {
    {-0.094885204, 1.250, 5, 1}, {-0.20092412, 3.000, 2, 2}, {0.11639644, 1.700, 2, 1},
    {-0.50607364, 2.400, 3, 2},  {-0.58422807, 1.960, 1, 2}, {-0.47510982, 1.286, 1, 1},
};
static const double ga[9][7] = {
    {0.0094333106, 3.600, 1, 4.70, 20.0, 1.0, 0.55}, {0.30444628, 2.080, 1, 1.92, 0.77, 0.5, 0.7},
    {-0.0010820946, 5.240, 2, 2.70, 0.5, 0.8, 2.0},  {-0.099693391, 0.960, 3, 1.49, 0.8, 1.5, 1.14},
    {0.0091193522, 1.360, 3, 0.65, 0.4, 0.7, 1.2},   {0.12970543, 1.655, 2, 1.73, 0.43, 1.6, 1.31},
    {0.023036030, 0.900, 1, 3.70, 8.0, 1.3, 1.14},   {-0.082671073, 0.860, 2, 1.90, 3.3, 0.6, 0.53},
    {-2.2497821, 3.950, 3, 13.2, 114.0, 1.3, 0.96},
};

/* Sums of the term values (a), tau da/dtau (at), delta da/ddelta (ad), delta^2 d2a/ddelta2 (add).
 * For a term f = n tau^t delta^d E(delta) G(tau) with delta f_delta = f b(delta):
 * delta^2 f_deltadelta = f (b^2 - b + delta b'). */
static void terms(double tau, double delta, double *a, double *at, double *ad, double *add)
{
    *a = *at = *ad = *add = 0;
    for (int k = 0; k < 6; k++) {
        double n = pw[k][0], t = pw[k][1], d = pw[k][2];
        double f = n * pow(tau, t) * pow(delta, d);
        *a += f;
        *at += f * t;
        *ad += f * d;
        *add += f * d * (d - 1);
    }
    for (int k = 0; k < 6; k++) {
        double n = ex[k][0], t = ex[k][1], d = ex[k][2], l = ex[k][3];
        double dl = pow(delta, l);
        double f = n * pow(tau, t) * pow(delta, d) * exp(-dl);
        double b = d - l * dl; /* delta b' = -l^2 delta^l */
        *a += f;
        *at += f * t;
        *ad += f * b;
        *add += f * (b * b - b - l * l * dl);
    }
    for (int k = 0; k < 9; k++) {
        double n = ga[k][0], t = ga[k][1], d = ga[k][2], eta = ga[k][3], beta = ga[k][4];
        double gam = ga[k][5], eps = ga[k][6];
        double f = n * pow(tau, t) * pow(delta, d) *
                   exp(-eta * (delta - eps) * (delta - eps) - beta * (tau - gam) * (tau - gam));
        double b =
            d - 2 * eta * delta * (delta - eps); /* delta b' = -4 eta delta^2 + 2 eta eps delta */
        *a += f;
        *at += f * (t - 2 * beta * tau * (tau - gam));
        *ad += f * b;
        *add += f * (b * b - b - 4 * eta * delta * delta + 2 * eta * eps * delta);
    }
}

void md_ljts_eval(double T, double rho, md_ljts *out)
{
    double a, at, ad, add;
    terms(MD_LJTS_TC / T, rho / MD_LJTS_RHOC, &a, &at, &ad, &add);
    out->a_res = a;
    out->p = rho * T * (1 + ad);
    out->u_res = T * at;
    out->dpdrho = T * (1 + 2 * ad + add);
}

int md_ljts_applies(double T, double rho)
{
    md_ljts s, c;
    double b = 1 / T, rho_freeze;
    if (!(T > 0.6 * MD_LJTS_TC && T < 10 * MD_LJTS_TC && rho > 0))
        return 0;
    md_ljts_eval(T, rho, &s);
    md_ljts_eval(MD_LJTS_TC, MD_LJTS_RHOC, &c);
    rho_freeze =
        pow(b, -0.25) *
        (0.90735 + b * (-0.27120 + b * (0.91784 + b * (-1.16270 + b * (0.68012 + b * -0.15284)))));
    return s.p < 70 * c.p && rho <= rho_freeze;
}
