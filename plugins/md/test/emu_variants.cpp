/* Drives the md plugin's device variants through its ABI entry points on the emulated device
 * (md_emu, tests/emu): prepare (device equilibration), init, counts, reset, runs, verify,
 * instrument, teardown, release, on small SP, LJ and standard-LJ systems, with reordering every
 * 5 steps.  Prints each verdict and metric; exits 1 when a case fails or does not verify.
 *   md_emu [variant] */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "kbench/plugin.h"

extern "C" const kb_plugin *kb_plugin_entry(void);

static const kb_plugin *P;
static std::map<std::string, std::string> values;

static const char *value_of(const char *name)
{
    auto it = values.find(name);
    if (it != values.end())
        return it->second.c_str();
    for (int i = 0; i < P->n_params; i++)
        if (std::strcmp(P->params[i].name, name) == 0)
            return P->params[i].default_value;
    return nullptr;
}
static int p_int(const kb_params *, const char *name, int64_t *out)
{
    const char *v = value_of(name);
    if (!v)
        return KB_BAD_PARAM;
    *out = std::strtoll(v, nullptr, 10);
    return KB_OK;
}
static int p_float(const kb_params *, const char *name, double *out)
{
    const char *v = value_of(name);
    if (!v)
        return KB_BAD_PARAM;
    *out = std::strtod(v, nullptr);
    return KB_OK;
}
static int p_string(const kb_params *, const char *name, const char **out)
{
    const char *v = value_of(name);
    if (!v)
        return KB_BAD_PARAM;
    *out = v;
    return KB_OK;
}
static void metric(const char *name, double value, const char *unit)
{
    std::printf("    metric %s = %g %s\n", name, value, unit);
}
static void logf(const char *fmt, ...)
{
    (void)fmt;
}
static int report(kb_case_handle *, const char *name, double value, double err)
{
    std::printf("    %-20s %12.6g +- %.2g\n", name, value, err);
    return KB_OK;
}

int main(int argc, char **argv)
{
    const char *only = argc > 1 ? argv[1] : nullptr;
    kb_host host = {};
    int failures = 0;
    char msg[KB_MSG_SIZE];
    P = kb_plugin_entry();
    host.abi_version = KB_ABI_CURRENT;
    host.struct_size = sizeof host;
    host.param_int = p_int;
    host.param_float = p_float;
    host.param_string = p_string;
    host.metric = metric;
    host.log = logf;
    host.report = report;
    const char *systems[][2] = {{"sp", "8"}, {"lj", "9"}, {"ljstd", "9"}};
    for (auto &sys : systems) {
        values.clear();
        values["system"] = sys[0];
        values["N_e"] = sys[1];
        values["steps"] = "30";
        values["equil"] = "60";
        values["threads"] = "64";
        values["reorder"] = "5";
        /* the standard liquid starts from a shuffled order (the reordering sorts it back) */
        values["shuffle"] = std::strcmp(sys[0], "ljstd") == 0 ? "1" : "0";
        /* the three gather loads (ldg 1; ldg 0 with l1 1 and 0) and the shifted LJ energy */
        values["ldg"] = sys[0][0] == 's' ? "1" : "0";
        values["l1"] = std::strcmp(sys[0], "lj") == 0 ? "1" : "0";
        values["shifted"] = std::strcmp(sys[0], "ljstd") == 0 ? "1" : "0";
        kb_point pt = {};
        pt.struct_size = sizeof pt;
        pt.host = &host;
        pt.seed = 1;
        pt.device = 0;
        pt.id = sys[0];
        void *shared = nullptr;
        msg[0] = 0;
        if (P->prepare(&pt, &shared, msg) != KB_OK) {
            std::printf("%s: prepare failed: %s\n", sys[0], msg);
            failures++;
            continue;
        }
        for (int v = 0; v < P->n_variants; v++) {
            if (P->variants[v].target != KB_DEVICE)
                continue;
            if (only && std::strcmp(only, P->variants[v].name) != 0)
                continue;
            kb_case c = {};
            int dummy = 0;
            void *state = nullptr;
            kb_counts counts = {};
            kb_verdict verdict = {};
            c.struct_size = sizeof c;
            c.host = &host;
            c.variant = v;
            c.seed = 1;
            c.device = 0;
            c.id = P->variants[v].name;
            c.shared = shared;
            c.handle = (kb_case_handle *)&dummy;
            std::printf("%s/%s\n", sys[0], P->variants[v].name);
            msg[0] = 0;
            int rc = P->init(&c, &state, msg);
            if (rc == KB_SKIP) {
                std::printf("  skipped: %s\n", msg);
                continue;
            }
            if (rc == KB_OK)
                rc = P->counts(state, &counts, msg);
            if (rc == KB_OK)
                rc = P->reset(state, nullptr, msg);
            for (int k = 0; rc == KB_OK && k < 3; k++)
                rc = P->run(state, nullptr, msg);
            for (int k = 0; rc == KB_OK && k < 2; k++) {
                rc = P->verify(state, &verdict, msg);
                std::printf("  verify %d: %s error %.3g (%s) %s\n", k,
                            verdict.passed ? "passed" : "FAILED", verdict.error, verdict.metric,
                            msg);
                if (rc == KB_OK && !verdict.passed)
                    failures++;
                if (rc == KB_OK)
                    rc = P->run(state, nullptr, msg);
            }
            /* ABI 1.4: the instrumented run, as the harness calls it after the last verify. */
            if (rc == KB_OK && (rc = P->verify(state, &verdict, msg)) == KB_OK && verdict.passed)
                rc = P->instrument(state, nullptr, msg);
            if (rc != KB_OK) {
                std::printf("  status %d: %s\n", rc, msg);
                failures++;
            }
            std::printf("  run_flags %u, items %g\n", counts.run_flags, counts.items);
            if (state)
                P->teardown(state, msg);
        }
        P->release(shared, msg);
    }
    std::printf("%d failures\n", failures);
    return failures ? 1 : 0;
}
