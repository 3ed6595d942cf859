/* The energy module: windows between the counter's steps (wrap, too short, a counter that
 * does not step, one that jumps), NVML through dlopen with a fake library (a GPU without the
 * counter, no library), the idle power, and a case's figures from several windows. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "energy.h"

/* Feeds w a counter that steps every `period` s by watts x period from `start`, read every
 * `poll` s from t = 0 while the work runs until `ends` (s); returns the state it ended in and
 * the time in *at. */
static kbi_window_state drive(kbi_energy_window *w, double min_s, unsigned long long start,
                              double watts, double period, double poll, double ends, double *at)
{
    unsigned long long step = (unsigned long long)llround(watts * period * 1000.0);
    kbi_window_state st = KBI_WINDOW_OPEN;
    double t = 0.0;
    kbi_energy_window_begin(w, min_s, 0, t, start);
    while (st == KBI_WINDOW_OPEN && t < 100) {
        t += poll;
        st = kbi_energy_window_feed(w, t, start + (unsigned long long)floor(t / period) * step,
                                    t <= ends);
    }
    *at = t;
    return st;
}

Test(energy_window, opens_and_closes_on_steps)
{
    kbi_energy_window w;
    double at;
    /* Polled every ms, a 100 ms counter at 500 W: the window spans whole periods. */
    cr_assert_eq(drive(&w, 2.0, 1000, 500, 0.1, 1e-3, 10, &at), KBI_WINDOW_DONE);
    cr_expect(fabs(w.watts - 500) < 500 * 2e-3, "watts %g", w.watts);
    cr_expect(w.seconds >= 2.0 && w.seconds < 2.0 + 0.1 + 2e-3, "seconds %g", w.seconds);
    cr_expect(fabs(w.period_s - 0.1) < 1e-3, "period %g", w.period_s);
    /* Read at a random moment, the same counter would be up to a period off at each end. */
    cr_expect(fabs(w.joules - 500 * w.seconds) < 1.0, "joules %g", w.joules);
}

Test(energy_window, counter_wrap)
{
    kbi_energy_window w;
    double at;
    /* 120 J before 2^64: the 2 s window at 500 W (1000 J) runs across the wrap. */
    unsigned long long start = 18446744073709551615ull - 120000ull;
    cr_assert_eq(drive(&w, 2.0, start, 500, 0.1, 1e-3, 10, &at), KBI_WINDOW_DONE);
    cr_expect(fabs(w.watts - 500) < 1, "watts %g across the wrap", w.watts);
}

Test(energy_window, work_that_ends_first_is_too_short)
{
    kbi_energy_window w;
    char why[256];
    double at;
    cr_assert_eq(drive(&w, 2.0, 1000, 500, 0.1, 1e-3, 1.5, &at), KBI_WINDOW_SHORT);
    cr_expect(isnan(w.watts));
    kbi_energy_window_why(&w, KBI_WINDOW_SHORT, at, why, sizeof why);
    cr_expect(strstr(why, "too short") && strstr(why, "before a step 2 s later"), "%s", why);
    /* Later feeds keep the verdict. */
    cr_expect_eq(kbi_energy_window_feed(&w, at + 5, 1u << 30, 1), KBI_WINDOW_SHORT);
}

Test(energy_window, no_step_while_the_work_ran)
{
    kbi_energy_window w;
    char why[256];
    double at;
    /* A 1 s counter and 0.3 s of work: the window never opened. */
    cr_assert_eq(drive(&w, 2.0, 1000, 500, 1.0, 1e-3, 0.3, &at), KBI_WINDOW_SHORT);
    kbi_energy_window_why(&w, KBI_WINDOW_SHORT, at, why, sizeof why);
    cr_expect(strstr(why, "did not step"), "%s", why);
}

Test(energy_window, a_step_after_the_work_ended_does_not_close)
{
    kbi_energy_window w;
    kbi_energy_window_begin(&w, 1.0, 0, 0.0, 100);
    cr_assert_eq(kbi_energy_window_feed(&w, 0.1, 200, 1), KBI_WINDOW_OPEN);
    cr_assert_eq(kbi_energy_window_feed(&w, 1.2, 200 + 110000, 0), KBI_WINDOW_SHORT);
    cr_expect(isnan(w.watts));
}

Test(energy_window, counter_that_does_not_advance)
{
    kbi_energy_window w;
    char why[256];
    double at;
    /* A step every 10 s, past the 1 s + min_s/2 a window waits for one. */
    cr_assert_eq(drive(&w, 0.5, 1000, 300, 10.0, 1e-3, 100, &at), KBI_WINDOW_STUCK);
    cr_expect(at > 1.25 && at < 1.3, "stuck after %g s", at);
    kbi_energy_window_why(&w, KBI_WINDOW_STUCK, at, why, sizeof why);
    cr_expect(strstr(why, "did not change"), "%s", why);
}

Test(energy_window, counter_that_jumps_is_not_believed)
{
    kbi_energy_window w;
    kbi_energy_window_begin(&w, 1.0, 0, 0.0, 5000);
    cr_assert_eq(kbi_energy_window_feed(&w, 0.1, 6000, 1), KBI_WINDOW_OPEN);
    /* Backwards by 1 J: modulo 2^64, an absurd draw (a counter reset). */
    cr_assert_eq(kbi_energy_window_feed(&w, 1.2, 5000, 1), KBI_WINDOW_BAD);
}

/* ---- NVML through dlopen, the fake library ---- */

static void use_fake_nvml(const char *mode)
{
    setenv("KBENCH_NVML", kbt_fake_nvml(), 1);
    setenv("FAKE_NVML_MODE", mode, 1);
}

Test(energy_nvml, reads_the_counter_and_the_limit)
{
    kbi_energy_meter m;
    unsigned long long a, b;
    char why[KBI_ERR_SIZE];
    struct timespec ts = {0, 50 * 1000 * 1000};
    use_fake_nvml("ok");
    cr_assert(kbi_energy_open(&m, "00000000:01:00.0"), "%s", m.why);
    cr_assert_eq(kbi_energy_read(&m, &a, why), KBI_OK, "%s", why);
    nanosleep(&ts, NULL);
    cr_assert_eq(kbi_energy_read(&m, &b, why), KBI_OK, "%s", why);
    cr_expect_gt(b, a);
    cr_expect_eq(kbi_energy_power_limit(&m), 700.0);
}

Test(energy_nvml, unsupported_device)
{
    kbi_energy_meter m;
    unsigned long long mj;
    char why[KBI_ERR_SIZE];
    use_fake_nvml("unsupported");
    cr_assert_not(kbi_energy_open(&m, "00000000:01:00.0"));
    cr_expect(strstr(m.why, "no energy counter") && strstr(m.why, "not supported"), "%s", m.why);
    cr_expect_eq(kbi_energy_read(&m, &mj, why), KBI_ERR);
    cr_expect_eq(kbi_energy_power_limit(&m), 0.0);
}

Test(energy_nvml, no_gpu_at_the_bus_id)
{
    kbi_energy_meter m;
    use_fake_nvml("no_device");
    cr_assert_not(kbi_energy_open(&m, "00000000:99:00.0"));
    cr_expect(strstr(m.why, "00000000:99:00.0") && strstr(m.why, "fake NVML error 6"), "%s", m.why);
}

Test(energy_nvml, no_library)
{
    kbi_energy_meter m;
    setenv("KBENCH_NVML", "/nonexistent/libnvidia-ml.so.1", 1);
    cr_assert_not(kbi_energy_open(&m, "00000000:01:00.0"));
    cr_expect(strstr(m.why, "no NVML"), "%s", m.why);
}

Test(energy_nvml, idle_power_across_a_wrap)
{
    kbi_energy_meter m;
    double watts = 0, period = 0;
    char why[KBI_ERR_SIZE];
    use_fake_nvml("ok");
    setenv("FAKE_NVML_WATTS", "80", 1);
    setenv("FAKE_NVML_PERIOD_MS", "20", 1);
    /* 10 J before the wrap: 0.5 s at 80 W is 40 J. */
    setenv("FAKE_NVML_START_MJ", "18446744073709541615", 1);
    cr_assert(kbi_energy_open(&m, "00000000:01:00.0"), "%s", m.why);
    cr_assert_eq(kbi_energy_idle(&m, 0.5, &watts, &period, why), KBI_OK, "%s", why);
    /* Each end is seen a poll (or a busy machine's scheduling delay) late. */
    cr_expect(fabs(watts - 80) < 8, "idle %g W", watts);
    /* A poll delayed past a step (a busy machine) sees two as one: the period reads long. */
    cr_expect(period > 0.019 && period < 0.05, "period %g s", period);
}

Test(energy_nvml, idle_with_a_stuck_counter)
{
    kbi_energy_meter m;
    double watts, period;
    char why[KBI_ERR_SIZE];
    use_fake_nvml("stuck");
    cr_assert(kbi_energy_open(&m, "00000000:01:00.0"), "%s", m.why);
    cr_assert_eq(kbi_energy_idle(&m, 0.2, &watts, &period, why), KBI_ERR);
    cr_expect(strstr(why, "idle power") && strstr(why, "did not change"), "%s", why);
}

Test(energy_nvml, env_record)
{
    json_t *o;
    use_fake_nvml("ok");
    setenv("FAKE_NVML_WATTS", "120", 1);
    o = kbi_energy_env_json("00000000:01:00.0", 0.3);
    cr_expect(json_is_true(json_object_get(o, "counter")));
    cr_expect(fabs(json_number_value(json_object_get(o, "idle_w")) - 120) < 12, "%g",
              json_number_value(json_object_get(o, "idle_w")));
    cr_expect_eq(json_number_value(json_object_get(o, "power_limit_w")), 700.0);
    cr_expect_null(json_object_get(o, "why"));
    json_decref(o);
    setenv("FAKE_NVML_MODE", "unsupported", 1);
    o = kbi_energy_env_json("00000000:01:00.0", 0.3);
    cr_expect(json_is_false(json_object_get(o, "counter")));
    cr_expect(json_is_null(json_object_get(o, "idle_w")));
    cr_expect(strstr(json_string_value(json_object_get(o, "why")), "not supported"));
    json_decref(o);
}

/* ---- a case's figures ---- */

Test(energy_figures, mean_and_uncertainty_of_windows)
{
    kbi_case_energy e = {0};
    const double j[] = {1.0, 1.1, 0.9}, w[] = {500, 550, 450}, s[] = {2, 2, 2},
                 run[] = {2e-3, 2e-3, 2e-3};
    kbi_energy_summarise(&e, j, w, s, run, 3);
    cr_assert(e.measured);
    cr_expect(fabs(e.j_per_run - 1.0) < 1e-12);
    /* Standard error 0.1/sqrt(3), and the polls' 2 x 0.5 ms over 2 s. */
    cr_expect(fabs(e.j_per_run_u - sqrt(0.01 / 3 + pow(5e-4, 2))) < 1e-9, "%g", e.j_per_run_u);
    cr_expect(fabs(e.watts - 500) < 1e-9);
    cr_expect_eq(e.windows, 3);
    kbi_energy_summarise(&e, j, w, s, run, 1);
    cr_expect(isnan(e.j_per_run_u), "one window: no uncertainty");
    kbi_energy_summarise(&e, j, w, s, run, 0);
    cr_expect_not(e.measured);
}

Test(energy_figures, cold_flush_taken_off)
{
    kbi_case_energy e = {0};
    const double j[] = {1.0, 1.0, 1.0}, w[] = {500, 500, 500}, s[] = {2, 2, 2},
                 run[] = {2e-3, 2e-3, 2e-3};
    kbi_energy_summarise(&e, j, w, s, run, 3);
    kbi_energy_subtract_flush(&e, 0.25, 0.01);
    cr_assert(e.measured, "%s", e.why);
    cr_expect(fabs(e.j_per_run - 0.75) < 1e-12);
    cr_expect_eq(e.flush_j, 0.25);
    /* A run whose energy is lost in the flush's. */
    kbi_energy_summarise(&e, j, w, s, run, 3);
    kbi_energy_subtract_flush(&e, 0.99, 0.01);
    cr_assert_not(e.measured);
    cr_expect(strstr(e.why, "cannot be told from the flush"), "%s", e.why);
    cr_expect(isnan(e.j_per_run));
}

Test(energy_figures, work_per_joule)
{
    kbi_case_energy e = {0};
    const double j[] = {2.0, 2.0}, w[] = {400, 400}, s[] = {2, 2}, run[] = {5e-3, 5e-3};
    kbi_energy_summarise(&e, j, w, s, run, 2);
    kbi_case_energy_derive(&e, 4e12, 1e9);
    cr_expect(fabs(e.gflop_per_j - 2000) < 1e-9);
    cr_expect(fabs(e.gb_per_j - 0.5) < 1e-12);
    kbi_energy_not_measured(&e, "no counter");
    kbi_case_energy_derive(&e, 4e12, 1e9);
    cr_expect_eq(e.gflop_per_j, 0);
}
