/* Host side of the labeling plugin: the model setup, the Swendsen-Wang step on the CPU with
 * union-find labeling (the reference and the host_uf variant), an independent flood-fill
 * labeler (the reference's own check), random bond sets for the partition check, the
 * integer sums of a configuration, and the observables with binning/jackknife errors. */
#ifndef LABELING_HOST_H
#define LABELING_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "labeling.h"

/* Clock tables for the sums: cos and sin of 2 pi j / q in fixed point (LB_FIX_SCALE). */
typedef struct lb_tables {
    double proj[2 * LB_MAX_Q];
    int64_t cos_fix[LB_MAX_Q];
    int64_t sin_fix[LB_MAX_Q];
} lb_tables;

/* The critical temperature this plugin takes for T = 0: 2-D Ising 2/ln(1+sqrt 2), 3-D Ising
 * 4.5115, 2-D q-Potts 1/ln(1+sqrt q), 3-D 3-Potts 1/0.550565, 2-D XY (BKT) 0.8935, 3-D XY
 * 2.2018.  Returns 0 where none is known (3-D Potts q != 3). */
double lb_critical_T(int kind, int dim, int q);

/* Fills m (pointing m->proj at t->proj) and the tables for model kind at q, T. */
void lb_model_setup(lb_model *m, lb_tables *t, int kind, int q, double T);

void lb_host_init_spins(const lb_lattice *lat, const lb_model *m, uint64_t seed, uint16_t *spins);
void lb_host_bonds(const lb_lattice *lat, const lb_model *m, uint64_t seed, uint64_t step,
                   const uint16_t *spins, uint8_t *bonds);
/* Union-find (link to the smaller root, path halving), then every label set to its root,
 * the smallest site of the cluster.  Returns the number of clusters. */
uint32_t lb_host_label_uf(const lb_lattice *lat, const uint8_t *bonds, uint32_t *labels);
/* The same labels as lb_host_label_uf, on up to `threads` threads (at most
 * LB_UF_MAX_THREADS, one slab of whole rows or planes each, the border bonds joined by one
 * thread between): the partition check's reference at large L.  parent: n scratch entries.
 * A thread that cannot start leaves its slab to the caller's.  Returns the clusters. */
#define LB_UF_MAX_THREADS 64
uint32_t lb_host_label_uf_threads(const lb_lattice *lat, const uint8_t *bonds, uint32_t *labels,
                                  uint32_t *parent, int threads);
/* Flood fill with an explicit stack of n entries: the same labels by another route. */
uint32_t lb_host_label_bfs(const lb_lattice *lat, const uint8_t *bonds, uint32_t *labels,
                           uint32_t *stack);
void lb_host_flip(const lb_lattice *lat, const lb_model *m, uint64_t seed, uint64_t step,
                  uint16_t *spins, const uint32_t *labels);
/* One SW step at `step` (bonds, union-find, new values). */
void lb_host_sweep(const lb_lattice *lat, const lb_model *m, uint64_t seed, uint64_t step,
                   uint16_t *spins, uint8_t *bonds, uint32_t *labels);
/* Bond d of site i active with probability p, from (seed, tag): a bond set for the
 * partition check, independent of any spin. */
void lb_random_bonds(const lb_lattice *lat, double p, uint64_t seed, uint64_t tag, uint8_t *bonds);
/* The same bonds on up to `threads` threads (each site's bonds depend on the site only). */
void lb_random_bonds_threads(const lb_lattice *lat, double p, uint64_t seed, uint64_t tag,
                             uint8_t *bonds, int threads);
void lb_host_sums(const lb_lattice *lat, const lb_model *m, const lb_tables *t,
                  const uint16_t *spins, const uint32_t *labels, lb_sums *s);

/* Number of sites whose labels disagree with the reference partition, up to renaming: a
 * and b are label arrays of n sites with labels < n; map and rev are n scratch entries. */
uint64_t lb_partition_mismatches(uint32_t n, const uint32_t *a, const uint32_t *b, uint32_t *map,
                                 uint32_t *rev);

/* Observables of one measured step. */
enum { LB_OBS_M2, LB_OBS_M4, LB_OBS_E, LB_OBS_E2, LB_OBS_CLUSTERS, LB_OBS_COUNT };
void lb_observe(const lb_lattice *lat, const lb_model *m, const lb_sums *s,
                double obs[LB_OBS_COUNT]);

/* Averages with their standard errors from n per-step records (obs[i*LB_OBS_COUNT + k]),
 * by binning (at most LB_BINS bins) and jackknife over the bins for the ratios. */
#define LB_BINS 32
typedef struct lb_estimate {
    double value, error;
} lb_estimate;
typedef struct lb_results {
    lb_estimate m2, m4, energy, specific_heat, moment_ratio, clusters;
} lb_results;
void lb_analyse(const lb_lattice *lat, const lb_model *m, const double *obs, size_t n,
                lb_results *r);
/* Mean and standard error (over bins) of n values x[i]. */
lb_estimate lb_mean_error(const double *x, size_t n);

#endif /* LABELING_HOST_H */
