/* The worker: executes cases inside a child process and reports each as a
 * JSON record.  The parent never runs this code itself (it never touches
 * CUDA); a crash or hang here costs one case, not the run. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* on_exit */
#include "worker.h"

#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>
#include <errno.h>
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "env.h"
#include "results.h"
#include "stats.h"
#include "timer.h"

/* Sample batches in hot mode grow until one takes at least this long, well
 * above a launch's few microseconds of overhead. */
#define HOT_BATCH_SECONDS 1e-3
#define MAX_BATCH (1 << 20)

/* The case being run, for the host services. */
static struct {
    const kbi_case *c;
    json_t *metrics;
} current;

static void host_metric(const char *name, double value, const char *unit)
{
    json_t *m;
    if (!current.metrics || !name)
        return;
    m = json_object();
    json_object_set_new(m, "value", json_real(value));
    json_object_set_new(m, "unit", json_string(unit ? unit : ""));
    json_object_set_new(current.metrics, name, m);
}

static void host_log(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "  [%s] ", current.c ? current.c->id : "kbench");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

const kb_host kbi_host_services = {
    .abi_version = KB_ABI_CURRENT,
    .struct_size = sizeof(kb_host),
    .param_int = kbi_param_int,
    .param_float = kbi_param_float,
    .param_string = kbi_param_string,
    .param_dims = kbi_param_dims,
    .metric = host_metric,
    .log = host_log,
};

static const char *target_name(kb_target t)
{
    return t == KB_DEVICE ? "device" : "host";
}

json_t *kbi_case_record_base(const kbi_run_ctx *ctx, const kbi_case *c)
{
    const kbi_section *sec = c->section;
    const kb_plugin *d = sec->plugin->desc;
    const kb_variant *v = &d->variants[c->variant];
    json_t *rec = json_object(), *params = json_object();
    kbi_buf text = {0};
    char now[32];
    for (size_t i = 0; i < sec->n_axes; i++) {
        const kbi_value *val = c->values[i];
        const char *name = sec->axes[i].param->name;
        switch (val->type) {
        case KB_PARAM_INT:
            json_object_set_new(params, name, json_integer(val->i));
            break;
        case KB_PARAM_FLOAT:
            json_object_set_new(params, name, json_real(val->f));
            break;
        default:
            json_object_set_new(params, name, json_string(val->text));
        }
        kbi_buf_printf(&text, "%s%s=%s", i ? "," : "", name, val->text);
    }
    kbi_env_time(now, sizeof now);
    json_object_set_new(rec, "index", json_integer((json_int_t)c->index));
    json_object_set_new(rec, "id", json_string(c->id));
    json_object_set_new(rec, "plugin", json_string(d->name));
    json_object_set_new(rec, "variant", json_string(v->name));
    json_object_set_new(rec, "target", json_string(target_name(v->target)));
    json_object_set_new(rec, "is_baseline", json_boolean(v->flags & KB_VARIANT_BASELINE));
    json_object_set_new(rec, "baseline",
                        json_string(sec->baseline >= 0 ? d->variants[sec->baseline].name : ""));
    json_object_set_new(rec, "params", params);
    json_object_set_new(rec, "params_text", json_string(text.data ? text.data : ""));
    json_object_set_new(rec, "cache",
                        json_string(ctx->profile->run.cache == KBI_CACHE_HOT ? "hot" : "cold"));
    json_object_set_new(rec, "time", json_string(now));
    kbi_buf_free(&text);
    return rec;
}

static void set_status(json_t *rec, kbi_status st, const char *message)
{
    json_object_set_new(rec, "status", json_string(kbi_status_name(st)));
    json_object_set_new(rec, "message", json_string(message ? message : ""));
}

/* Status of a case whose plugin call returned rc. */
static kbi_status status_of(int rc)
{
    return rc == KB_SKIP ? KBI_ST_SKIPPED : KBI_ST_ERROR;
}

static json_t *verdict_json(const kb_verdict *v)
{
    json_t *o = json_object();
    json_object_set_new(o, "passed", json_boolean(v->passed));
    json_object_set_new(o, "error", json_real(v->error));
    json_object_set_new(o, "tolerance", json_real(v->tolerance));
    json_object_set_new(o, "metric", json_string(v->metric ? v->metric : ""));
    return o;
}

static json_t *stats_json(const kbi_stats *s)
{
    json_t *o = json_object();
    json_object_set_new(o, "n", json_integer((json_int_t)s->n));
    json_object_set_new(o, "median", json_real(s->median));
    json_object_set_new(o, "min", json_real(s->min));
    json_object_set_new(o, "max", json_real(s->max));
    json_object_set_new(o, "mean", json_real(s->mean));
    json_object_set_new(o, "stddev", json_real(s->stddev));
    json_object_set_new(o, "ci_low", json_real(s->ci_low));
    json_object_set_new(o, "ci_high", json_real(s->ci_high));
    json_object_set_new(o, "noise", json_real(s->noise));
    return o;
}

static json_t *counts_json(const kb_counts *k)
{
    json_t *o = json_object();
    json_object_set_new(o, "flops", json_real(k->flops));
    json_object_set_new(o, "bytes", json_real(k->bytes));
    json_object_set_new(o, "items", json_real(k->items));
    json_object_set_new(o, "item_unit", k->item_unit ? json_string(k->item_unit) : json_null());
    return o;
}

static json_t *rates_json(const kbi_run_ctx *ctx, const kb_counts *k, double t)
{
    json_t *o = json_object();
    double gflops = t > 0 ? k->flops / t / 1e9 : 0, gbs = t > 0 ? k->bytes / t / 1e9 : 0;
    json_object_set_new(o, "gflops", json_real(gflops));
    json_object_set_new(o, "gbs", json_real(gbs));
    json_object_set_new(o, "items_per_s", json_real(t > 0 ? k->items / t : 0));
    json_object_set_new(o, "frac_bandwidth",
                        json_real(ctx->bandwidth_gbs > 0 ? gbs / ctx->bandwidth_gbs : 0));
    json_object_set_new(o, "frac_peak",
                        json_real(ctx->peak_gflops > 0 ? gflops / ctx->peak_gflops : 0));
    return o;
}

/* Pushes the case's NVTX ranges; returns how many. */
static int nvtx_push_case(const kbi_case *c)
{
    const kb_plugin *p = c->section->plugin->desc;
    const char *params = strchr(strchr(c->id, '/') + 1, '/');
    nvtxRangePushA("kbench");
    nvtxRangePushA(p->name);
    nvtxRangePushA(p->variants[c->variant].name);
    if (params && params[1]) {
        nvtxRangePushA(params + 1);
        return 4;
    }
    return 3;
}

/* One case, inside the worker. */
typedef struct case_run {
    const kbi_run_ctx *ctx;
    const kbi_case *c;
    const kb_plugin *p;
    int device;
    kbi_device *dev; /* NULL for host variants */
    void *state;
    char msg[KB_MSG_SIZE];
} case_run;

static int run_once(case_run *r)
{
    if (r->dev) {
        int rc = r->p->run(r->state, r->dev->stream, r->msg);
        return rc != KB_OK ? rc : kbi_device_sync(r->dev, r->msg);
    }
    return r->p->run(r->state, NULL, r->msg);
}

static int sample(case_run *r, int batch, int flush, double *t)
{
    return r->dev ? kbi_time_device(r->dev, r->p, r->state, batch, flush, t, r->msg)
                  : kbi_time_host(r->p, r->state, batch, flush, t, r->msg);
}

static int verify(case_run *r, kb_verdict *v)
{
    memset(v, 0, sizeof *v);
    if (r->dev) {
        int rc = kbi_device_sync(r->dev, r->msg);
        if (rc != KB_OK)
            return rc;
    }
    return r->p->verify(r->state, v, r->msg);
}

static void describe_failed_verdict(char *msg, const kb_verdict *v, const char *when)
{
    kb_msgf(msg, "verification failed %s: %s %.3g exceeds tolerance %.3g", when,
            v->metric ? v->metric : "error", v->error, v->tolerance);
}

/* The sampling loop: returns KB_OK and fills samples, or a plugin/CUDA
 * status with r->msg set. */
static int take_samples(case_run *r, double hard_stop, double **samples, size_t *n, int *batch_out,
                        char *note, size_t note_size)
{
    const kbi_run_opts *o = &r->ctx->profile->run;
    int hot = o->cache == KBI_CACHE_HOT, batch = 1, rc;
    double t, timed = 0.0, start;
    size_t cap = 64;
    *samples = kbi_xmalloc(cap * sizeof **samples);
    *n = 0;
    for (int i = 0; i < o->warmup; i++)
        if ((rc = sample(r, 1, 0, &t)) != KB_OK)
            return rc;
    if (hot) {
        /* Grow the batch until one sample is well above launch overhead;
         * these runs are warm-up too. */
        for (;;) {
            if ((rc = sample(r, batch, 0, &t)) != KB_OK)
                return rc;
            if (t * batch >= HOT_BATCH_SECONDS || batch >= MAX_BATCH)
                break;
            batch = t > 0 ? (int)(HOT_BATCH_SECONDS / t * 1.2) + 1 : batch * 16;
            if (batch > MAX_BATCH)
                batch = MAX_BATCH;
        }
    }
    start = kbi_now();
    for (;;) {
        kbi_stats st;
        if ((rc = sample(r, batch, !hot, &t)) != KB_OK)
            return rc;
        if (*n == cap)
            *samples = kbi_xrealloc(*samples, (cap *= 2) * sizeof **samples);
        (*samples)[(*n)++] = t;
        timed += t * batch;
        if (*n >= (size_t)o->max_samples)
            break;
        if (*n >= (size_t)o->min_samples && timed >= o->min_time) {
            kbi_stats_compute(*samples, *n, &st);
            if (st.noise <= o->max_noise)
                break;
        }
        /* max_time ends sampling once min_samples are in; only the case's
         * timeout drawing near ends it earlier (a slow kernel then keeps
         * the samples it has rather than losing them all to the kill). */
        double now = kbi_now();
        if ((now - start >= o->max_time && *n >= (size_t)o->min_samples) ||
            (now >= hard_stop && *n >= 1)) {
            kbi_stats_compute(*samples, *n, &st);
            snprintf(note, note_size,
                     "stopped at %s with %zu samples, noise %.2g%% (max_noise %.2g%%)",
                     now >= hard_stop ? "80% of the timeout" : "max_time", *n, 100.0 * st.noise,
                     100.0 * o->max_noise);
            break;
        }
    }
    *batch_out = batch;
    return KB_OK;
}

json_t *kbi_case_execute(const kbi_run_ctx *ctx, const kbi_case *c)
{
    static kbi_device device; /* one per worker process */
    const kb_plugin *p = c->section->plugin->desc;
    const kb_variant *v = &p->variants[c->variant];
    json_t *rec = kbi_case_record_base(ctx, c);
    case_run r = {.ctx = ctx, .c = c, .p = p, .device = ctx->profile->run.device};
    kb_case kc;
    kb_counts counts = {0};
    kb_verdict verdict;
    double *samples = NULL, clock_start = 0, clock_end = 0, t0 = kbi_now();
    size_t n = 0;
    int rc, batch = 1, verified_once = 0;
    char note[KB_MSG_SIZE] = "", err[KBI_ERR_SIZE];

    current.c = c;
    current.metrics = json_object();
    /* Nested NVTX ranges kbench / plugin / variant / params: timelines show
     * the structure, and `ncu --nvtx-include "kbench/P/V/X/"` selects one
     * case. */
    int nvtx_depth = nvtx_push_case(c);

    if (v->target == KB_DEVICE) {
        if (!ctx->device_ok) {
            set_status(rec, KBI_ST_SKIPPED, ctx->device_error ? ctx->device_error
                                                               : "no CUDA device");
            goto done;
        }
        if (!device.ready && kbi_device_open(&device, r.device, err) != KBI_OK) {
            set_status(rec, KBI_ST_ERROR, err);
            goto done;
        }
        r.dev = &device;
        kbi_nvml_open(r.device);
    }

    kc = (kb_case){.struct_size = sizeof kc,
                   .host = &kbi_host_services,
                   .params = &c->params,
                   .variant = c->variant,
                   .seed = ctx->profile->run.seed,
                   .device = r.device,
                   .id = c->id};
    rc = p->init(&kc, &r.state, r.msg);
    if (rc != KB_OK) {
        set_status(rec, status_of(rc), r.msg[0] ? r.msg : "init failed without a message");
        r.state = NULL;
        goto done;
    }
    rc = p->counts(r.state, &counts, r.msg);
    if (rc != KB_OK) {
        set_status(rec, status_of(rc), r.msg);
        goto teardown;
    }
    json_object_set_new(rec, "counts", counts_json(&counts));

    /* Correct first: one run, verified, before anything is timed. */
    if ((rc = run_once(&r)) != KB_OK || (rc = verify(&r, &verdict)) != KB_OK) {
        set_status(rec, status_of(rc), r.msg);
        goto teardown;
    }
    verified_once = 1;
    json_object_set_new(rec, "verify", verdict_json(&verdict));
    if (!verdict.passed) {
        describe_failed_verdict(r.msg, &verdict, "before timing");
        set_status(rec, KBI_ST_VERIFY_FAILED, r.msg);
        goto teardown;
    }

    if (ctx->profile_run && r.dev) {
        /* Nsight Compute: the profiler sees exactly one run. */
        cudaProfilerStart();
        rc = run_once(&r);
        cudaProfilerStop();
        if (rc != KB_OK) {
            set_status(rec, status_of(rc), r.msg);
            goto teardown;
        }
    }

    clock_start = r.dev ? kbi_nvml_sm_clock() : 0;
    rc = take_samples(&r, t0 + 0.8 * ctx->profile->run.timeout, &samples, &n, &batch, note,
                      sizeof note);
    clock_end = r.dev ? kbi_nvml_sm_clock() : 0;
    if (rc != KB_OK) {
        set_status(rec, status_of(rc), r.msg);
        goto teardown;
    }

    /* Repeatable: the result after every timed run must still verify. */
    if ((rc = verify(&r, &verdict)) != KB_OK) {
        set_status(rec, status_of(rc), r.msg);
        goto teardown;
    }
    json_object_set_new(rec, "verify", verdict_json(&verdict));
    if (!verdict.passed) {
        describe_failed_verdict(r.msg, &verdict, "after the timed runs (run() is not repeatable)");
        set_status(rec, KBI_ST_VERIFY_FAILED, r.msg);
    } else {
        set_status(rec, KBI_ST_OK, note);
    }

teardown:
    if (r.state) {
        char tmsg[KB_MSG_SIZE] = "";
        int trc = p->teardown(r.state, tmsg);
        if (trc != KB_OK && kbi_status_parse(json_string_value(json_object_get(rec, "status"))) ==
                                KBI_ST_OK)
            set_status(rec, KBI_ST_ERROR, tmsg[0] ? tmsg : "teardown failed");
    }
    if (r.dev) {
        /* A sticky error (an illegal address) would poison the next case:
         * report it here; the parent replaces this worker. */
        char smsg[KB_MSG_SIZE];
        if (kbi_device_sync(r.dev, smsg) != KB_OK) {
            const char *st = json_string_value(json_object_get(rec, "status"));
            if (st && (strcmp(st, "ok") == 0 || strcmp(st, "verify_failed") == 0))
                set_status(rec, KBI_ST_ERROR, smsg);
            json_object_set_new(rec, "sticky_error", json_true());
        }
    }
done:
    while (nvtx_depth-- > 0)
        nvtxRangePop();
    if (!json_object_get(rec, "status"))
        set_status(rec, KBI_ST_ERROR, "internal: no status");
    {
        json_t *arr = json_array();
        for (size_t i = 0; i < n; i++)
            json_array_append_new(arr, json_real(samples[i]));
        json_object_set_new(rec, "samples", arr);
    }
    if (n > 0) {
        kbi_stats st;
        kbi_stats_compute(samples, n, &st);
        json_object_set_new(rec, "batch", json_integer(batch));
        json_object_set_new(rec, "stats", stats_json(&st));
        json_object_set_new(rec, "rates", rates_json(ctx, &counts, st.median));
    }
    if (!verified_once)
        json_object_set_new(rec, "verify", json_null());
    json_object_set_new(rec, "metrics", current.metrics);
    if (r.dev) {
        json_t *clk = json_object();
        json_object_set_new(clk, "sm_start_mhz", json_real(clock_start));
        json_object_set_new(clk, "sm_end_mhz", json_real(clock_end));
        json_object_set_new(clk, "throttle_reasons", json_integer((json_int_t)kbi_nvml_throttle()));
        json_object_set_new(clk, "drop", json_boolean(clock_start > 0 && clock_end > 0 &&
                                                      clock_end < 0.95 * clock_start));
        json_object_set_new(rec, "clocks", clk);
    }
    json_object_set_new(rec, "wall_s", json_real(kbi_now() - t0));
    current.c = NULL;
    current.metrics = NULL;
    free(samples);
    return rec;
}

/* Reads one line from fd into buf; returns its length, or -1 at EOF. */
static long read_cmd(int fd, char *buf, size_t size)
{
    size_t len = 0;
    while (len + 1 < size) {
        char ch;
        ssize_t k = read(fd, &ch, 1);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return len ? (long)len : -1;
        if (ch == '\n')
            break;
        buf[len++] = ch;
    }
    buf[len] = '\0';
    return (long)len;
}

static int write_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t k = write(fd, s, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        s += k;
        n -= (size_t)k;
    }
    return 0;
}

#ifdef KBI_ASAN
static void exit_at_once(int status, void *arg)
{
    (void)arg;
    fflush(NULL);
    _exit(status);
}
#endif

/* Under AddressSanitizer (KBENCH_SANITIZE) a worker must still end the
 * way it ends in a normal build: by the plugin's signal (ASan's handler
 * would turn a segfault into exit status 1), or with the status a plugin
 * passed to exit() (LeakSanitizer would check the heap of the half-run
 * worker and turn it into 1).  Plugins' leaks are checked in-process
 * (`kbench run --in-process`), where teardown has run. */
static void worker_sanitizer_setup(void)
{
#ifdef KBI_ASAN
    signal(SIGSEGV, SIG_DFL);
    signal(SIGBUS, SIG_DFL);
    signal(SIGFPE, SIG_DFL);
    signal(SIGILL, SIG_DFL);
    on_exit(exit_at_once, NULL);
#endif
}

int kbi_worker_main(const kbi_run_ctx *ctx, int cmd_fd, int res_fd)
{
    char cmd[64];
    worker_sanitizer_setup();
    while (read_cmd(cmd_fd, cmd, sizeof cmd) >= 0) {
        unsigned long k;
        json_t *rec;
        char *text;
        int ok;
        if (strcmp(cmd, "quit") == 0)
            break;
        if (sscanf(cmd, "case %lu", &k) != 1 || k >= ctx->n_cases)
            return 3;
        rec = kbi_case_execute(ctx, ctx->cases[k]);
        text = json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
        json_decref(rec);
        if (!text)
            return 3;
        ok = write_all(res_fd, text, strlen(text)) == 0 && write_all(res_fd, "\n", 1) == 0;
        free(text);
        if (!ok)
            return 3;
    }
    return 0;
}
