/* md plugin: what the glue (md.c), the host code and the CPU tests share: the
 * configuration of a system, the equilibrated state prepare() builds, the double-precision
 * host engine (host_pairlist, host_layer) and the host references used by verify.
 *
 * Reduced MD units (sigma = epsilon = mass = 1).  The region is a cube of edge L centred at the
 * origin; positions are kept in [-L/2, L/2) and pairs use the minimum image, which is exact
 * because L >= 3 (rc + delta) (md_config_derive refuses smaller systems).
 */
#ifndef KBENCH_MD_H
#define KBENCH_MD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { MD_SYS_LJ = 0, MD_SYS_SP = 1, MD_SYS_LJSTD = 2 };

/* One system and how it is run. */
typedef struct md_config {
    int system;        /* MD_SYS_* */
    int ne;            /* edge of the initial cubic lattice */
    int n;             /* atoms: ne^3 */
    double rho, temp;  /* density, temperature (initial speed sqrt(3T), rescaling target) */
    double rc, delta;  /* cutoff and neighbor-shell thickness */
    double shift;      /* constant added to u(r) below rc: 1 for SP (continuity), else 0 */
    double dt;         /* time step */
    int steps;         /* MD steps of one run */
    int threads;       /* threads per block of the per-atom kernels */
    int reorder;       /* steps between reorderings (at the next rebuild), 0 = never */
    int ldg;           /* read-only-cache loads of coordinates (and H) in the build and force
                          kernels */
    int l1;            /* with ldg 0: 1 plain loads (L1-cached), 0 loads past L1 (L2 only) */
    int shuffle;       /* the prepared state's atoms in a random order (long-run limit) */
    int equil;         /* equilibration steps in prepare */
    int rescale_every; /* velocity rescaling interval during equilibration */
    /* derived by md_config_derive */
    double L;  /* region edge: ne / rho^(1/3) */
    int G;     /* cells per edge: floor(L / (rc + delta)) */
    int ncell; /* G^3 */
} md_config;

/* The system `sys` (lj, sp, ljstd) into cfg as the plugin's parameters default it: its T,
 * rho, rc, delta and shift (sp's +1), the time step 0.005 and rescaling every 20 steps.
 * Returns 0, or -1 for an unknown name. */
int md_config_system(md_config *cfg, const char *sys);

/* Fills L, G, ncell, n.  Returns 0, or -1 with msg when the system is too small for 27
 * distinct neighbour cells (G < 3) or too large for 32-bit atom indices. */
int md_config_derive(md_config *cfg, char *msg);

/* The equilibrated state of a point, shared by its variants (what prepare makes). */
typedef struct md_point_state {
    md_config cfg;
    float *r;        /* 4 floats per atom (x, y, z, 0), positions wrapped into the region */
    float *v;        /* 4 floats per atom */
    double u0, vir0; /* potential energy per atom and virial sum of r.f per atom, in double,
                        of that state (the reference for the first-step energies) */
    double ke0;      /* kinetic energy per atom of that state */
    long long np0;   /* pairs with r < rc + delta in that state (brute force) */
    int max_occ;     /* most atoms in one cell, in that state */
    int max_nbr;     /* most neighbours (r < rc + delta) of one atom, in that state */
    int on_device;   /* equilibrated on the device (1) or on the host (0) */
} md_point_state;

/* The initial lattice: ne^3 atoms at cell centres, speeds sqrt(3T) in random directions from
 * the seed, zero total momentum.  r and v hold 3 doubles per atom. */
void md_lattice(const md_config *cfg, uint64_t seed, double *r, double *v);

/* Pair potential: u(r) and f(r) with force vector f(r) * dr; r2 < rc^2 assumed. */
static inline void md_pair(double r2, double shift, double *u, double *fr)
{
    double ri2 = 1.0 / r2, ri6 = ri2 * ri2 * ri2;
    *u = 4.0 * ri6 * (ri6 - 1.0) + shift;
    *fr = 48.0 * ri6 * (ri6 - 0.5) * ri2;
}

/* ---- host engine (double precision): host_pairlist and host_layer ---------------------- */

enum { MD_HOST_PAIRLIST = 0, MD_HOST_LAYER = 1 };

typedef struct md_host {
    md_config cfg;
    int kind; /* MD_HOST_* */
    int n;
    double *r, *v, *a; /* 3 per atom */
    double *u;         /* per-atom energy (layer: each pair counted on both atoms) */
    /* linked-list cells (both kinds): q[n + c] heads cell c, q[i] the next atom or -1 */
    int *q;
    /* pair list (pairlist kind) */
    int *pi, *pj;
    size_t npairs, pair_cap;
    /* layer matrix (layer kind) */
    int *cell_of, *layer_of, *kc, *H, *W, *nn;
    int lcap, mcap, nl;
    /* neighbour-list bookkeeping */
    double disp;  /* cumulative max displacement since the last rebuild */
    int rebuild;  /* rebuild due at the next step */
    int overflow; /* a capacity (pairs, layers, neighbours) was exceeded: results invalid */
    long long steps_done, builds, rebuilds, steps_since_rebuild;
    /* sums over builds: neighbour entries per atom (both directions), layers; over rebuilds
     * due to displacement: the steps since the previous one */
    double sum_np, sum_nl, sum_nu;
    /* energies of the latest step, per atom */
    double ke, pe, vir, vmax2;
    /* per-step history of the latest run: ke, pe, vir per atom (3 per step) */
    double *hist;
    int hist_cap;
    /* time spent, seconds: neighbour building, forces, total */
    double t_nbr, t_force, t_total;
} md_host;

/* Creates the engine from a state of 4 floats per atom (x, y, z, pad); computes the first
 * neighbour list and forces.  Returns 0, or -1 with msg (allocation failure). */
int md_host_create(md_host *h, const md_config *cfg, int kind, const float *r4, const float *v4,
                   int lcap, int mcap, char *msg);
void md_host_destroy(md_host *h);
/* One MD step (leapfrog halves, rebuild when due, forces, properties). */
void md_host_step(md_host *h);
/* Rescales velocities to temperature cfg.temp. */
void md_host_rescale(md_host *h);
/* Rebuilds the neighbour structures and forces from the current positions now. */
void md_host_rebuild_now(md_host *h);
/* The full neighbour set of atom i (r < rc + delta, both directions) from the engine's
 * structures, into out (cap entries); returns the count (may exceed cap: truncated). */
int md_host_neighbors(const md_host *h, int i, int *out, int cap);

/* Equilibrates on the host: lattice, cfg.equil steps rescaled every cfg.rescale_every, in
 * double (host_pairlist); fills ps (r, v allocated).  Returns 0 or -1 with msg. */
int md_prepare_host(const md_config *cfg, uint64_t seed, md_point_state *ps, char *msg);
/* The point's start, shared by both preparations: ps->cfg, and ps->r, ps->v (float4 an atom,
 * allocated) from the seeded lattice (md_lattice); the rest of ps zeroed.  Returns 0, or -1
 * with msg and nothing allocated. */
int md_point_lattice(const md_config *cfg, uint64_t seed, md_point_state *ps, char *msg);
/* Fills u0, vir0, ke0, np0, max_occ, max_nbr of ps from its r, v (double, cell-based). */
int md_point_reference(md_point_state *ps, char *msg);
void md_point_free(md_point_state *ps);
/* Permutes the atoms of ps (r and v together) in a random order from the seed: the storage
 * order of a long run without reordering, where atoms have diffused far from their lattice
 * neighbours in memory (the paper's Table 8 limit).  The reference figures are unchanged. */
void md_point_shuffle(md_point_state *ps, uint64_t seed);

/* ---- references (double precision, from float positions of stride 4) ------------------- */

/* Forces (3 per atom), energy per atom and virial per atom of all pairs with r < rc, by all
 * pairs (O(n^2): small n) ... */
void md_ref_allpairs(const md_config *cfg, const float *r4, int n, double *f, double *u,
                     double *vir);
/* ... and the same through cells (O(n)); the same pair set, for any n.  Returns 0 or -1. */
int md_ref_cells(const md_config *cfg, const float *r4, int n, double *f, double *u, double *vir);
/* Pairs whose distance lies within `slack` of rc, where a float cutoff test may decide either
 * way: per atom the sum of their force magnitudes |f(r)| r into fa (n entries), the sum of
 * their |u(r)| per atom into ua, their count into pairs.  Returns 0 or -1 (allocation). */
int md_ref_cutoff_slack(const md_config *cfg, const float *r4, int n, double slack, double *fa,
                        double *ua, long long *pairs);
/* Brute-force neighbour counts (r < rc + delta, both directions) per atom into cnt; returns the
 * pair total or -1 (allocation failure).  Cell-based, exact. */
long long md_ref_neighbor_counts(const md_config *cfg, const float *r4, int n, int *cnt);
/* Compares a neighbour matrix (W[m * stride + i], nn[i] entries for atom i) with the brute
 * force set within rc + delta.  Pairs whose distance is within `slack` of rc + delta may go
 * either way (float rounding of the builder).  Returns the number of atoms whose set differs,
 * or -1 (allocation failure). */
long long md_check_neighbor_matrix(const md_config *cfg, const float *r4, int n, const int *W,
                                   size_t stride, const int *nn, int mcap, double slack);

/* Per-step (ke, pe, vir) history of one run -> summary. */
typedef struct md_summary {
    double e_mean, e_err; /* total energy per atom and its standard error (10 blocks) */
    double ke_mean, ke_err;
    double pe_mean, pe_err;
    double p_mean, p_err; /* pressure */
    double drift;         /* |<E>_last - <E>_first| / |<E>| over windows of 5% of the run */
} md_summary;
void md_summarize(const md_config *cfg, const double *hist, int steps, md_summary *s);

/* A run against the LJTS equation of state (eos.h) at its kinetic temperature
 * T = 2 K / (3 (N - 1)) and density.  `applies`: an LJ system cut at 2.5 (the pressure is the
 * LJTS one with or without the shift, which changes no force) in the equation's range;
 * `energy`: also shifted to 0 at rc, so the potential energy is the LJTS one.  The
 * differences are per-step P - p_ref(T_t) and U - u_ref(T_t), with the block error of
 * md_summarize: their error holds the reference's through T's fluctuations, with the
 * correlation of U and T (exact in NVE) included. */
typedef struct md_eos_cmp {
    int applies, energy;
    double T, T_err;             /* kinetic temperature and its block error */
    double p_ref, u_ref;         /* the equation at the mean T */
    double p_ref_err, u_ref_err; /* their error through T_err */
    double dp, dp_err, du, du_err;
} md_eos_cmp;
/* Returns 0, or -1 (allocation failure: c->applies 0). */
int md_eos_compare(const md_config *cfg, const double *hist, int steps, md_eos_cmp *c);

#ifdef __cplusplus
}
#endif

#endif /* KBENCH_MD_H */
