/* md plugin: the equation of state of the Lennard-Jones truncated and shifted fluid at
 * rc = 2.5 (LJTS), the published reference for what an MD run with forces truncated at 2.5
 * samples (the shift changes no force).  Reduced units (sigma = epsilon = k_B = 1).
 *
 * M. Thol, G. Rutkai, R. Span, J. Vrabec, R. Lustig, "Equation of State for the Lennard-Jones
 * Truncated and Shifted Model Fluid", Int. J. Thermophys. 36, 25-43 (2015), Table 1: residual
 * Helmholtz energy a(tau, delta) / T of 21 terms (6 power, 6 exponential, 9 Gaussian),
 * tau = Tc / T, delta = rho / rhoc, Tc = 1.086, rhoc = 0.319.  Stated range (abstract):
 * 0.6 < T/Tc < 10, p/pc < 70, homogeneous fluid (not the solid).
 */
#ifndef KBENCH_MD_EOS_H
#define KBENCH_MD_EOS_H

#ifdef __cplusplus
extern "C" {
#endif

#define MD_LJTS_RC 2.5
#define MD_LJTS_TC 1.086
#define MD_LJTS_RHOC 0.319

/* Properties of the LJTS fluid at (T, rho). */
typedef struct md_ljts {
    double p;      /* pressure: rho T (1 + delta da/ddelta) */
    double u_res;  /* residual (potential) energy per atom, shifted potential: T tau da/dtau */
    double dpdrho; /* (dp/drho)_T: T (1 + 2 delta da/ddelta + delta^2 d2a/ddelta2) */
    double a_res;  /* residual Helmholtz energy per atom / T */
} md_ljts;

/* Evaluates the equation of state; T > 0, rho > 0. */
void md_ljts_eval(double T, double rho, md_ljts *out);

/* 1 when (T, rho) lies in the equation's stated range (0.6 < T/Tc < 10, p < 70 pc with
 * pc = p(Tc, rhoc)) and is a fluid: rho at most the liquid's freezing density, taken from the
 * full LJ's melting line (M. A. Mastny, J. J. de Pablo, J. Chem. Phys. 127, 104504 (2007),
 * Eq. 21; an approximation for the LJTS, whose freezing line is not given by the EOS); else 0
 * (the solid, or beyond the data the equation was fitted to). */
int md_ljts_applies(double T, double rho);

#ifdef __cplusplus
}
#endif

#endif /* KBENCH_MD_EOS_H */
