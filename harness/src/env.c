/* Environment facts for the results' env record, and NVML via dlopen. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "env.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "hostspeed.h"
#include "energy.h"
#include "build_info.h"
#include "revision.h"

void kbi_env_time(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The value of the first "key : value" line of /proc/cpuinfo whose key is `key` (the whole
 * key: "model" is not "model name"), into out ("" when there is none). */
static void cpuinfo_value(const char *text, const char *key, char *out, size_t n)
{
    size_t len = strlen(key);
    const char *line = text;
    out[0] = '\0';
    while (*line) {
        const char *end = strchr(line, '\n'), *p;
        if (!end)
            end = line + strlen(line);
        if (strncmp(line, key, len) == 0) {
            p = line + len;
            while (p < end && (*p == ' ' || *p == '\t'))
                p++;
            if (p < end && *p == ':') {
                for (p++; p < end && (*p == ' ' || *p == '\t'); p++)
                    ;
                snprintf(out, n, "%.*s", (int)(end - p), p);
                return;
            }
        }
        line = *end ? end + 1 : end;
    }
}

/* The first line of a small file, without its newline, into out ("" when unreadable). */
static void read_first_line(const char *path, char *out, size_t n)
{
    FILE *f = fopen(path, "r");
    out[0] = '\0';
    if (!f)
        return;
    if (!fgets(out, (int)n, f))
        out[0] = '\0';
    out[strcspn(out, "\n")] = '\0';
    fclose(f);
}

/* What decides a host case's speed, read cheaply: the model and its family/model/stepping
 * (two VMs may both say "AMD EPYC" over different generations), the cores, the highest
 * clock cpufreq allows, the governor, a cgroup's CPU quota, and whether a hypervisor sits
 * below, and the host's measured speed (hostspeed.h).  `compare` reports host-timed cases
 * measured on different CPUs, or on hosts whose speeds differ, as not comparable. */
static json_t *cpu_json(void)
{
    json_t *cpu = json_object();
    char *text = NULL, model[256], a[64], b[64], c[64], d[64], sig[256] = "", line[256];
    size_t len = 0;
    int arm = 0;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        /* The first processor's block is what is read: every core of a host reads alike. */
        char buf[4096];
        size_t got;
        while (len < 65536 && (got = fread(buf, 1, sizeof buf, f)) > 0) {
            text = kbi_xrealloc(text, len + got + 1);
            memcpy(text + len, buf, got);
            len += got;
        }
        fclose(f);
    }
    if (text)
        text[len] = '\0';
    cpuinfo_value(text ? text : "", "model name", model, sizeof model);
    cpuinfo_value(text ? text : "", "cpu family", a, sizeof a);
    cpuinfo_value(text ? text : "", "model", b, sizeof b);
    cpuinfo_value(text ? text : "", "stepping", c, sizeof c);
    if (a[0])
        snprintf(sig, sizeof sig, "family %.40s model %.40s stepping %.40s", a, b, c);
    else {
        /* Arm: no model name; the implementer and part name the core. */
        cpuinfo_value(text ? text : "", "CPU implementer", a, sizeof a);
        cpuinfo_value(text ? text : "", "CPU part", b, sizeof b);
        cpuinfo_value(text ? text : "", "CPU variant", c, sizeof c);
        cpuinfo_value(text ? text : "", "CPU revision", d, sizeof d);
        arm = a[0] != '\0';
        if (arm)
            snprintf(sig, sizeof sig, "implementer %.40s part %.40s variant %.40s revision %.40s",
                     a, b, c, d);
    }
    if (!model[0]) {
        struct utsname u;
        if (arm)
            snprintf(model, sizeof model, "Arm implementer %.40s part %.40s", a, b);
        else if (uname(&u) == 0)
            snprintf(model, sizeof model, "%s", u.machine);
    }
    json_object_set_new(cpu, "model", json_string(model));
    json_object_set_new(cpu, "signature", json_string(sig));
    json_object_set_new(cpu, "logical_cores", json_integer(online > 0 ? online : 0));
    CPU_ZERO(&set);
    json_object_set_new(cpu, "usable_cores",
                        json_integer(sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set)
                                                                                 : 0));
    read_first_line("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", line, sizeof line);
    json_object_set_new(cpu, "max_mhz", json_real(line[0] ? atof(line) / 1000.0 : 0.0));
    read_first_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", line, sizeof line);
    json_object_set_new(cpu, "governor", json_string(line));
    /* cgroup v2: "max 100000" (no quota) or "QUOTA PERIOD" in microseconds. */
    read_first_line("/sys/fs/cgroup/cpu.max", line, sizeof line);
    {
        double quota = 0, period = 0;
        json_object_set_new(cpu, "quota_cores",
                            json_real(sscanf(line, "%lf %lf", &quota, &period) == 2 && period > 0
                                          ? quota / period
                                          : 0.0));
    }
    if (text && strstr(text, "\nflags"))
        json_object_set_new(cpu, "hypervisor", json_boolean(strstr(text, " hypervisor") != NULL));
    free(text);
    {
        json_t *speed = kbi_host_speed_probe();
        if (speed)
            json_object_set_new(cpu, "speed", speed);
    }
    return cpu;
}

void kbi_env_host(json_t *env, int argc, char **argv)
{
    char host[256] = "", now[32];
    kbi_buf cmd = {0};
    gethostname(host, sizeof host - 1);
    kbi_env_time(now, sizeof now);
    for (int i = 0; i < argc; i++)
        kbi_buf_printf(&cmd, "%s%s", i ? " " : "", argv[i]);
    json_object_set_new(env, "time", json_string(now));
    json_object_set_new(env, "host", json_string(host));
    json_object_set_new(env, "cpu", cpu_json());
    json_object_set_new(env, "kbench_version", json_string(KBENCH_VERSION));
    json_object_set_new(env, "git_revision", json_string(KBENCH_GIT_REVISION));
    json_object_set_new(env, "compiler", json_string(KBENCH_COMPILER));
    json_object_set_new(env, "build_type", json_string(KBENCH_BUILD_TYPE));
    json_object_set_new(env, "c_flags", json_string(KBENCH_C_FLAGS));
    json_object_set_new(env, "cuda_architectures", json_string(KBENCH_CUDA_ARCHITECTURES));
    json_object_set_new(env, "argv", json_string(cmd.data ? cmd.data : ""));
    kbi_buf_free(&cmd);
}

/* ---- NVML through dlopen ---- */

typedef int nvml_ret;
typedef void *nvml_device;
static struct {
    int tried, ok;
    void *lib;
    nvml_device dev;
    nvml_ret (*init)(void);
    nvml_ret (*by_pci)(const char *, nvml_device *);
    nvml_ret (*clock)(nvml_device, int, unsigned int *);
    nvml_ret (*throttle)(nvml_device, unsigned long long *);
    nvml_ret (*driver)(char *, unsigned int);
    char driver_version[96];
} nvml;

enum { NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };

int kbi_nvml_open(int cuda_device)
{
    char bus[64];
    if (nvml.tried)
        return nvml.ok;
    nvml.tried = 1;
    nvml.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!nvml.lib)
        return 0;
    *(void **)&nvml.init = dlsym(nvml.lib, "nvmlInit_v2");
    *(void **)&nvml.by_pci = dlsym(nvml.lib, "nvmlDeviceGetHandleByPciBusId_v2");
    *(void **)&nvml.clock = dlsym(nvml.lib, "nvmlDeviceGetClockInfo");
    *(void **)&nvml.throttle = dlsym(nvml.lib, "nvmlDeviceGetCurrentClocksEventReasons");
    if (!nvml.throttle)
        *(void **)&nvml.throttle = dlsym(nvml.lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
    *(void **)&nvml.driver = dlsym(nvml.lib, "nvmlSystemGetDriverVersion");
    if (!nvml.init || !nvml.by_pci || !nvml.clock || nvml.init() != 0)
        return 0;
    if (nvml.driver)
        nvml.driver(nvml.driver_version, sizeof nvml.driver_version);
    /* Match the CUDA ordinal to NVML's device by PCI bus id: the two
     * numberings can differ. */
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, cuda_device) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    if (nvml.by_pci(bus, &nvml.dev) != 0)
        return 0;
    nvml.ok = 1;
    return 1;
}

static double nvml_clock(int which)
{
    unsigned int mhz = 0;
    if (!nvml.ok || nvml.clock(nvml.dev, which, &mhz) != 0)
        return 0.0;
    return (double)mhz;
}

double kbi_nvml_sm_clock(void) { return nvml_clock(NVML_CLOCK_SM); }
double kbi_nvml_mem_clock(void) { return nvml_clock(NVML_CLOCK_MEM); }

unsigned long long kbi_nvml_throttle(void)
{
    unsigned long long r = 0;
    if (!nvml.ok || !nvml.throttle || nvml.throttle(nvml.dev, &r) != 0)
        return 0;
    return r;
}

const char *kbi_nvml_driver(void) { return nvml.driver_version; }

/* ---- device probe (child) ---- */

/* The device's UUID the way nvidia-smi prints it (GPU-8-4-4-4-12 hex digits), which is also
 * what CUDA_VISIBLE_DEVICES accepts, so a record names the same GPU in every numbering. */
static void format_uuid(const struct cudaDeviceProp *prop, char *buf, size_t n)
{
    const unsigned char *b = (const unsigned char *)prop->uuid.bytes;
    snprintf(buf, n, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
}

/* NVML's index of the GPU at a PCI bus id, or -1.  NVML numbers every GPU of the node in
 * its own order and ignores CUDA_VISIBLE_DEVICES; the bus id is what both agree on. */
static int nvml_index_of(const char *bus)
{
    static void *lib;
    static nvml_ret (*init)(void), (*by_pci)(const char *, nvml_device *),
        (*get_index)(nvml_device, unsigned int *);
    static int ready = -1;
    nvml_device dev;
    unsigned int index;
    if (ready < 0) {
        ready = 0;
        lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
        if (lib) {
            *(void **)&init = dlsym(lib, "nvmlInit_v2");
            *(void **)&by_pci = dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2");
            *(void **)&get_index = dlsym(lib, "nvmlDeviceGetIndex");
            ready = init && by_pci && get_index && init() == 0;
        }
    }
    if (!ready || by_pci(bus, &dev) != 0 || get_index(dev, &index) != 0)
        return -1;
    return (int)index;
}

json_t *kbi_env_devices(void)
{
    json_t *out = json_object(), *list = json_array();
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    json_object_set_new(out, "devices", list);
    if (e != cudaSuccess || count == 0) {
        char why[KBI_ERR_SIZE];
        snprintf(why, sizeof why, "no CUDA device: %s (%s)",
                 e != cudaSuccess ? cudaGetErrorName(e) : "cudaGetDeviceCount returned 0",
                 e != cudaSuccess ? cudaGetErrorString(e) : "no devices");
        json_object_set_new(out, "device_error", json_string(why));
        return out;
    }
    for (int d = 0; d < count; d++) {
        struct cudaDeviceProp prop;
        char bus[64] = "", uuid[48] = "";
        json_t *dev = json_object();
        int nvml_index;
        json_object_set_new(dev, "index", json_integer(d));
        if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) {
            (void)cudaGetLastError();
            json_object_set_new(dev, "name", json_string("unusable"));
            json_array_append_new(list, dev);
            continue;
        }
        if (cudaDeviceGetPCIBusId(bus, sizeof bus, d) != cudaSuccess)
            (void)cudaGetLastError();
        format_uuid(&prop, uuid, sizeof uuid);
        nvml_index = bus[0] ? nvml_index_of(bus) : -1;
        json_object_set_new(dev, "name", json_string(prop.name));
        json_object_set_new(dev, "uuid", json_string(uuid));
        json_object_set_new(dev, "pci_bus_id", json_string(bus));
        json_object_set_new(dev, "nvml_index",
                            nvml_index >= 0 ? json_integer(nvml_index) : json_null());
        json_array_append_new(list, dev);
    }
    return out;
}

json_t *kbi_env_probe(int device, double bandwidth_gbs, double peak_gflops, double tf32_gflops,
                      double energy_window)
{
    json_t *env = json_object(), *dev, *ceil = json_object();
    struct cudaDeviceProp prop;
    int rt = 0, drv = 0, count = 0;
    cudaError_t e;
    char err[KBI_ERR_SIZE] = "", cc[16];
    const char *source = "profile";

    cudaRuntimeGetVersion(&rt);
    json_object_set_new(env, "cuda_runtime_version", json_integer(rt));
    e = cudaDriverGetVersion(&drv);
    json_object_set_new(env, "cuda_driver_version", json_integer(e == cudaSuccess ? drv : 0));
    e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        char why[KBI_ERR_SIZE];
        snprintf(why, sizeof why, "no CUDA device: %s (%s)",
                 e != cudaSuccess ? cudaGetErrorName(e) : "cudaGetDeviceCount returned 0",
                 e != cudaSuccess ? cudaGetErrorString(e) : "no devices");
        json_object_set_new(env, "device", json_null());
        json_object_set_new(env, "device_error", json_string(why));
        goto ceilings;
    }
    if (device >= count) {
        char why[KBI_ERR_SIZE];
        snprintf(why, sizeof why, "no CUDA device %d: this machine has %d", device, count);
        json_object_set_new(env, "device", json_null());
        json_object_set_new(env, "device_error", json_string(why));
        goto ceilings;
    }
    e = cudaSetDevice(device);
    if (e == cudaSuccess)
        e = cudaGetDeviceProperties(&prop, device);
    if (e != cudaSuccess) {
        char why[KBI_ERR_SIZE];
        snprintf(why, sizeof why, "CUDA device %d unusable: %s (%s)", device, cudaGetErrorName(e),
                 cudaGetErrorString(e));
        json_object_set_new(env, "device", json_null());
        json_object_set_new(env, "device_error", json_string(why));
        goto ceilings;
    }
    dev = json_object();
    snprintf(cc, sizeof cc, "%d.%d", prop.major, prop.minor);
    json_object_set_new(dev, "index", json_integer(device));
    json_object_set_new(dev, "name", json_string(prop.name));
    json_object_set_new(dev, "sm_count", json_integer(prop.multiProcessorCount));
    json_object_set_new(dev, "cc", json_string(cc));
    json_object_set_new(dev, "memory_bytes", json_integer((json_int_t)prop.totalGlobalMem));
    json_object_set_new(dev, "l2_bytes", json_integer(prop.l2CacheSize));
    json_object_set_new(dev, "smem_per_sm_bytes",
                        json_integer((json_int_t)prop.sharedMemPerMultiprocessor));
    {
        char bus[64] = "", uuid[48];
        cudaDeviceGetPCIBusId(bus, sizeof bus, device);
        json_object_set_new(dev, "pci_bus_id", json_string(bus));
        format_uuid(&prop, uuid, sizeof uuid);
        json_object_set_new(dev, "uuid", json_string(uuid));
    }
    json_object_set_new(env, "nvml", json_boolean(kbi_nvml_open(device)));
    json_object_set_new(env, "driver_version", json_string(kbi_nvml_driver()));
    json_object_set_new(dev, "sm_clock_mhz", json_real(kbi_nvml_sm_clock()));
    json_object_set_new(dev, "mem_clock_mhz", json_real(kbi_nvml_mem_clock()));
    json_object_set_new(env, "device", dev);
    /* At rest, before the ceilings warm the board. */
    if (energy_window > 0)
        json_object_set_new(
            env, "energy",
            kbi_energy_env_json(json_string_value(json_object_get(dev, "pci_bus_id")),
                                energy_window));

    if (bandwidth_gbs <= 0.0) {
        source = "measured";
        if (kbi_measure_bandwidth(device, &bandwidth_gbs, err) != 0)
            json_object_set_new(ceil, "bandwidth_error", json_string(err));
    }
    if (peak_gflops <= 0.0) {
        source = "measured";
        if (kbi_measure_peak_fp32(device, &peak_gflops, err) != 0)
            json_object_set_new(ceil, "peak_error", json_string(err));
    }
    if (tf32_gflops <= 0.0) {
        const char *method = "";
        source = "measured";
        if (kbi_measure_peak_tf32(device, &tf32_gflops, &method, err) != 0)
            json_object_set_new(ceil, "tf32_error", json_string(err));
        else
            json_object_set_new(ceil, "tf32_method", json_string(method));
    }
    /* Clocks once the ceilings have loaded the device. */
    json_object_set_new(dev, "sm_clock_loaded_mhz", json_real(kbi_nvml_sm_clock()));
ceilings:
    if (bandwidth_gbs <= 0.0 && peak_gflops <= 0.0 && tf32_gflops <= 0.0)
        source = "none";
    json_object_set_new(ceil, "bandwidth_gbs", json_real(bandwidth_gbs > 0 ? bandwidth_gbs : 0));
    json_object_set_new(ceil, "peak_gflops", json_real(peak_gflops > 0 ? peak_gflops : 0));
    json_object_set_new(ceil, "tf32_gflops", json_real(tf32_gflops > 0 ? tf32_gflops : 0));
    json_object_set_new(ceil, "source", json_string(source));
    json_object_set_new(env, "ceilings", ceil);
    return env;
}
