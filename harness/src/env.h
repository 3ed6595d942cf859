/* The environment record of a run: host, build and device facts, clocks
 * through NVML (loaded with dlopen, absent NVML is not an error), and the
 * device's measured ceilings. */
#ifndef KBENCH_ENV_H
#define KBENCH_ENV_H

#include <jansson.h>

/* Parent side: host name, CPU ("cpu": model, signature, logical and usable
 * cores, max_mhz, governor, quota_cores, hypervisor, speed), time, kbench version,
 * git revision, compiler and flags, command line.  Adds fields to env. */
void kbi_env_host(json_t *env, int argc, char **argv);

/* ISO-8601 UTC time now, into buf (at least 32 bytes). */
void kbi_env_time(char *buf, size_t n);

/* Child side (initialises CUDA): runtime and driver versions, the device's
 * properties and clocks, and its ceilings (memory bandwidth with a
 * device-to-device copy, fp32 peak with an FMA kernel, the TF32 tensor-core
 * peak with an MMA kernel, "tf32_method" naming it) unless the profile gives
 * them (nonzero arguments).  With energy_window > 0, first the board's
 * idle power over a window that long ("energy", energy.h: before the
 * ceilings load the device).  With no usable device, "device" is null
 * and "device_error" says why.  Returns the object (caller owns it). */
json_t *kbi_env_probe(int device, double bandwidth_gbs, double peak_gflops, double tf32_gflops,
                      double energy_window);

/* Child side (initialises CUDA, measures nothing): every visible device as
 * {"devices": [{"index" (CUDA ordinal), "name", "uuid", "pci_bus_id", "nvml_index"}]}, with
 * "device_error" when there is none.  nvml_index is NVML's number of the GPU, matched by PCI
 * bus id (null without NVML): CUDA's ordinals follow CUDA_VISIBLE_DEVICES, NVML's do not. */
json_t *kbi_env_devices(void);

/* NVML clocks for the per-case record; every function is a no-op returning
 * 0 when NVML is absent. */
int kbi_nvml_open(int cuda_device); /* 1 if clocks can be read */
double kbi_nvml_sm_clock(void);     /* MHz, 0 if unknown */
double kbi_nvml_mem_clock(void);
unsigned long long kbi_nvml_throttle(void); /* NVML clock event reasons bitmask */
const char *kbi_nvml_driver(void);          /* driver version string, "" if unknown */

/* Measured ceilings (ceiling.cu).  Return 0 on success. */
int kbi_measure_bandwidth(int device, double *gbs, char *err);
int kbi_measure_peak_fp32(int device, double *gflops, char *err);
/* The TF32 tensor-core peak (dense, fp32 accumulation), with the instruction that measured
 * it in *method ("wgmma m64n128k8" on sm_90, "mma.sync m16n8k8" elsewhere from sm_80); an
 * error on a device without TF32 tensor cores, or when the kernel's sums come out wrong. */
int kbi_measure_peak_tf32(int device, double *gflops, const char **method, char *err);

#endif
