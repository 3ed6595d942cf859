/* The worker: executes cases inside a child process and reports each as a
 * case record (results.h: kbi_case_result, written by kbi_case_record_json).
 * The parent never runs this code itself (it never touches
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
#include <math.h>

#include "common.h"
#include "energy_case.h"
#include "env.h"
#include "loader.h"
#include "results.h"
#include "roofs.h"
#include "stats.h"
#include "timer.h"

/* Sample batches in hot mode grow until one takes at least this long, well
 * above a launch's few microseconds of overhead. */
#define HOT_BATCH_SECONDS 1e-3
#define MAX_BATCH (1 << 20)

/* The case being run, for the 1.0 host service `metric` (which names no
 * case); ABI 1.1's `report` reaches its case through a handle instead. */
static struct {
    const kbi_case *c;
    kbi_case_result *rec;
    const struct kb_case_handle *handle;
} current;

/* What host->report needs: the case's plugin and its record, and whether the plugin's
 * instrument entry (ABI 1.4) is running, so the metrics it reports are marked as its. */
struct kb_case_handle {
    const kb_plugin *p;
    kbi_case_result *rec;
    int instrumenting;
};

static void host_metric(const char *name, double value, const char *unit)
{
    kbi_metric m = {.name = (char *)name,
                    .unit = (char *)(unit ? unit : ""),
                    .value = value,
                    .uncertainty = NAN,
                    .better = KB_BETTER_NONE,
                    .in_bound = 1,
                    .instrumented = current.handle && current.handle->instrumenting};
    if (!current.rec || !name)
        return;
    kbi_case_result_set_metric(current.rec, &m);
}

static int host_report(kb_case_handle *h, const char *name, double value, double uncertainty)
{
    const kb_metric_def *d = NULL;
    kbi_metric m;
    if (!h || !name)
        return KB_BAD_PARAM;
    for (int i = 0; i < KBI_DESC_GET(h->p, n_metrics, 0); i++)
        if (strcmp(h->p->metrics[i].name, name) == 0)
            d = &h->p->metrics[i];
    if (!d)
        return KB_BAD_PARAM;
    m = (kbi_metric){.name = (char *)name,
                     .unit = (char *)(d->unit ? d->unit : ""),
                     .value = isfinite(value) ? value : NAN,
                     .uncertainty = isfinite(uncertainty) ? fabs(uncertainty) : NAN,
                     .better = d->better,
                     .bounds = d->bounds & (KB_BOUND_LOW | KB_BOUND_HIGH),
                     .low = d->low,
                     .high = d->high,
                     .declared = 1,
                     .timing = (d->bounds & KB_METRIC_TIMING) != 0,
                     .instrumented = h->instrumenting};
    m.in_bound = kbi_metric_within(&m, m.value);
    kbi_case_result_set_metric(h->rec, &m);
    return KB_OK;
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
    .param_dims_cap = kbi_param_dims_cap,
    .param_ints = kbi_param_ints,
    .report = host_report,
};

static const char *target_name(kb_target t)
{
    return t == KB_DEVICE ? "device" : "host";
}

void kbi_case_record_init(const kbi_run_ctx *ctx, const kbi_case *c, kbi_case_result *out)
{
    const kbi_section *sec = c->section;
    const kb_plugin *d = sec->plugin->desc;
    const kb_variant *v = &d->variants[c->variant];
    const char *size_param = KBI_DESC_GET(d, size_param, NULL);
    kbi_buf text = {0};
    char now[32];
    memset(out, 0, sizeof *out);
    out->params = json_object();
    for (size_t i = 0; i < sec->n_axes; i++) {
        const kbi_value *val = c->values[i];
        const char *name = sec->axes[i].param->name;
        json_t *arr;
        switch (val->type) {
        case KB_PARAM_INT:
            json_object_set_new(out->params, name, json_integer(val->i));
            break;
        case KB_PARAM_FLOAT:
            json_object_set_new(out->params, name, json_real(val->f));
            break;
        case KB_PARAM_DIMS:
        case KB_PARAM_INTS:
            /* Results version 2: dims and integer lists as arrays of integers (params_text
             * tells one from the other). */
            arr = json_array();
            for (int k = 0; k < (val->type == KB_PARAM_DIMS ? val->n_dims : val->n_ints); k++)
                json_array_append_new(
                    arr, json_integer(val->type == KB_PARAM_DIMS ? val->dims[k] : val->ints[k]));
            json_object_set_new(out->params, name, arr);
            break;
        default:
            json_object_set_new(out->params, name, json_string(val->text));
        }
        kbi_buf_printf(&text, "%s%s=%s", i ? "," : "", name, val->text);
    }
    kbi_env_time(now, sizeof now);
    out->version = KBI_RESULTS_VERSION;
    out->index = (long)c->index;
    out->source = kbi_strdup("");
    out->run_id = kbi_strdup("");
    out->id = kbi_strdup(c->id);
    out->plugin = kbi_strdup(d->name);
    out->variant = kbi_strdup(v->name);
    out->target = kbi_strdup(target_name(v->target));
    out->is_baseline = (v->flags & KB_VARIANT_BASELINE) != 0;
    out->baseline = kbi_strdup(sec->baseline >= 0 ? d->variants[sec->baseline].name : "");
    out->params_text = kbi_strdup(text.data ? text.data : "");
    out->full_id = kbi_strdup(c->full_id);
    out->size_param = kbi_strdup(size_param ? size_param : "");
    {
        char roof[128];
        kbi_roof_of(d, v->name, roof, sizeof roof);
        out->roof = kbi_strdup(roof);
        out->headline = kbi_strdup(kbi_headline_of(d));
    }
    out->status = KBI_ST_ERROR;
    out->message = kbi_strdup("internal: no status");
    out->cache = kbi_strdup(ctx->profile->run.cache == KBI_CACHE_HOT ? "hot" : "cold");
    out->timing = kbi_strdup("");
    out->time = kbi_strdup(now);
    out->prepare_s = NAN;
    out->wall_s = out->cpu_wait = NAN;
    out->samples = kbi_xcalloc(1, sizeof *out->samples);
    out->item_unit = kbi_strdup("");
    out->verify_metric = kbi_strdup("");
    kbi_buf_free(&text);
}

void kbi_case_record_set_status(kbi_case_result *rec, kbi_status st, const char *message)
{
    rec->status = st;
    free(rec->message);
    rec->message = kbi_strdup(message ? message : "");
}

static void set_status(kbi_case_result *rec, kbi_status st, const char *message)
{
    kbi_case_record_set_status(rec, st, message);
}

static void set_verdict(kbi_case_result *rec, const kb_verdict *v)
{
    rec->has_verify = 1;
    rec->verify_passed = v->passed != 0;
    rec->verify_error = v->error;
    rec->verify_tolerance = v->tolerance;
    free(rec->verify_metric);
    rec->verify_metric = kbi_strdup(v->metric ? v->metric : "");
}

static void set_counts(kbi_case_result *rec, const kb_counts *k)
{
    rec->has_counts = 1;
    rec->flops = k->flops;
    rec->bytes = k->bytes;
    rec->items = k->items;
    free(rec->item_unit);
    rec->item_unit = kbi_strdup(k->item_unit ? k->item_unit : "");
}

static void set_rates(kbi_case_result *rec, const kbi_run_ctx *ctx, double t)
{
    rec->gflops = t > 0 ? rec->flops / t / 1e9 : 0;
    rec->gbs = t > 0 ? rec->bytes / t / 1e9 : 0;
    rec->items_per_s = t > 0 ? rec->items / t : 0;
    rec->frac_bandwidth = ctx->bandwidth_gbs > 0 ? rec->gbs / ctx->bandwidth_gbs : 0;
    rec->frac_peak = ctx->peak_gflops > 0 ? rec->gflops / ctx->peak_gflops : 0;
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

/* ---- the parameter point: prepare once, share with every variant ---- */

/* The worker's device (one per process) and the point prepared last. */
static kbi_device worker_device;
static struct {
    const kbi_section *section; /* NULL: nothing prepared */
    const kbi_value **values;   /* the point's values, as the cases hold them */
    int rc;                     /* prepare's status */
    char msg[KB_MSG_SIZE];
    void *shared;
    double seconds;
    int charged; /* prepare_s already in a record */
} point;

/* Where the worker tells the parent that prepare starts and ends (its time
 * does not count against a case's timeout); -1 in-process. */
static int parent_fd = -1;

static int write_all(int fd, const char *s, size_t n);

static void tell_parent(const char *line)
{
    if (parent_fd >= 0)
        write_all(parent_fd, line, strlen(line));
}

static int same_point(const kbi_case *c)
{
    if (point.section != c->section)
        return 0;
    for (size_t i = 0; i < c->section->n_axes; i++)
        if (point.values[i] != c->values[i])
            return 0;
    return 1;
}

void kbi_worker_release_point(void)
{
    const kb_plugin *p;
    if (!point.section)
        return;
    p = point.section->plugin->desc;
    if (point.shared) {
        char msg[KB_MSG_SIZE] = "";
        if (p->release(point.shared, msg) != KB_OK)
            fprintf(stderr, "  [%s] release failed: %s\n", p->name, msg);
    }
    free(point.values);
    memset(&point, 0, sizeof point);
}

/* Nonzero when the section runs a device variant, so prepare gets the
 * device (and may build a device reference). */
static int section_uses_device(const kbi_section *sec)
{
    for (size_t i = 0; i < sec->n_variants; i++)
        if (sec->plugin->desc->variants[sec->variants[i]].target == KB_DEVICE)
            return 1;
    return 0;
}

/* Opens the worker's device once.  Returns KBI_OK or KBI_ERR with err set. */
static int open_device(const kbi_run_ctx *ctx, char *err)
{
    if (worker_device.ready)
        return KBI_OK;
    if (kbi_device_open(&worker_device, ctx->device, err) != KBI_OK)
        return KBI_ERR;
    kbi_nvml_open(ctx->device);
    return KBI_OK;
}

/* Makes sure the case's point is prepared (once per point per worker):
 * releases the previous point first.  Returns prepare's status with its
 * message in msg; KB_OK when the plugin has no prepare. */
static int ensure_point(const kbi_run_ctx *ctx, const kbi_case *c, char *msg)
{
    const kb_plugin *p = c->section->plugin->desc;
    char err[KBI_ERR_SIZE], id[1024];
    const char *params = strchr(strchr(c->id, '/') + 1, '/');
    kb_point pt;
    double t0;
    if (!KBI_DESC_GET(p, prepare, NULL))
        return KB_OK;
    if (point.section && same_point(c)) {
        snprintf(msg, KB_MSG_SIZE, "%s", point.msg);
        return point.rc;
    }
    kbi_worker_release_point();
    point.section = c->section;
    point.values = kbi_xmalloc((c->section->n_axes + 1) * sizeof *point.values);
    memcpy(point.values, c->values, c->section->n_axes * sizeof *point.values);
    pt = (kb_point){.struct_size = sizeof pt,
                    .host = &kbi_host_services,
                    .params = &c->params,
                    .seed = ctx->profile->run.seed,
                    .device = -1,
                    .id = id};
    snprintf(id, sizeof id, "%s%s", p->name, params ? params : "/");
    if (ctx->device_ok && section_uses_device(c->section)) {
        if (open_device(ctx, err) != KBI_OK) {
            point.rc = KB_CUDA_ERROR;
            snprintf(point.msg, sizeof point.msg, "prepare: %.480s", err);
            snprintf(msg, KB_MSG_SIZE, "%s", point.msg);
            return point.rc;
        }
        pt.device = ctx->device;
        pt.stream = worker_device.stream;
    }
    tell_parent("prepare\n");
    t0 = kbi_now();
    point.rc = p->prepare(&pt, &point.shared, point.msg);
    point.seconds = kbi_now() - t0;
    tell_parent("prepared\n");
    if (point.rc == KB_OK && pt.device >= 0)
        point.rc = kbi_device_sync(&worker_device, point.msg);
    if (point.rc != KB_OK) {
        if (!point.msg[0])
            snprintf(point.msg, sizeof point.msg, "prepare failed without a message");
        point.shared = NULL;
    }
    snprintf(msg, KB_MSG_SIZE, "%s", point.msg);
    return point.rc;
}

/* ---- one case ---- */

/* One case, inside the worker. */
typedef struct case_run {
    const kbi_run_ctx *ctx;
    const kbi_case *c;
    const kb_plugin *p;
    kbi_device *dev; /* NULL for host variants */
    void *state;
    kb_counts counts;
    kb_case_handle handle;
    kbi_hot hot;
    kbi_case_result *rec;
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

/* The plugin's untimed reset (ABI 1.1), finished before anything is timed. */
static int reset_state(case_run *r)
{
    int (*reset)(void *, void *, char *) = KBI_DESC_GET(r->p, reset, NULL);
    int rc;
    if (!reset)
        return KB_OK;
    rc = reset(r->state, r->dev ? r->dev->stream : NULL, r->msg);
    if (rc == KB_OK && r->dev)
        rc = kbi_device_sync(r->dev, r->msg);
    return rc;
}

/* The reset before each sample of kbi_hot_setup's trial. */
static int reset_trial(void *arg, char *msg)
{
    case_run *r = (case_run *)arg;
    int rc = reset_state(r);
    if (rc != KB_OK && msg != r->msg)
        snprintf(msg, KB_MSG_SIZE, "%s", r->msg);
    return rc;
}

/* One sample: reset (untimed), then `batch` runs timed the way the case
 * was set up for (plain launches while the batch is being sized). */
static int sample(case_run *r, int batch, int flush, int sizing, double *t)
{
    int rc = reset_state(r);
    if (rc != KB_OK)
        return rc;
    if (!r->dev)
        return kbi_time_host(r->p, r->state, batch, flush, t, r->msg);
    if (!sizing && r->hot.method != KBI_TIMING_EVENTS)
        return kbi_hot_sample(r->dev, r->p, r->state, &r->hot, t, r->msg);
    return kbi_time_device(r->dev, r->p, r->state, batch, flush, t, r->msg);
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

/* Hot mode: grows the batch until one sample is well above a launch's
 * overhead (these runs are warm-up too), within the plugin's max_batch,
 * then chooses how to time it.  Returns KB_OK or a plugin/CUDA status. */
static int size_batch(case_run *r, int *batch)
{
    kbi_reset reset = {reset_trial, r};
    int max = r->counts.max_batch > 0 ? r->counts.max_batch : MAX_BATCH, rc;
    double t;
    *batch = 1;
    while (*batch < max) {
        if ((rc = sample(r, *batch, 0, 1, &t)) != KB_OK)
            return rc;
        if (t * *batch >= HOT_BATCH_SECONDS)
            break;
        *batch = t > 0 ? (int)(HOT_BATCH_SECONDS / t * 1.2) + 1 : *batch * 16;
        if (*batch > max)
            *batch = max;
    }
    if (!r->dev) {
        r->hot.method = KBI_TIMING_HOST;
        r->hot.batch = *batch;
        return KB_OK;
    }
    if ((rc = reset_state(r)) != KB_OK)
        return rc;
    rc = kbi_hot_setup(r->dev, r->p, r->state, *batch, r->counts.run_flags, &reset, &r->hot,
                       r->msg);
    *batch = r->hot.batch;
    return rc;
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
    r->hot.method = r->dev ? KBI_TIMING_EVENTS : KBI_TIMING_HOST;
    r->hot.batch = 1;
    for (int i = 0; i < o->warmup; i++)
        if ((rc = sample(r, 1, 0, 1, &t)) != KB_OK)
            return rc;
    if (hot && (rc = size_batch(r, &batch)) != KB_OK)
        return rc;
    start = kbi_now();
    for (;;) {
        kbi_stats st;
        if ((rc = sample(r, batch, !hot, 0, &t)) != KB_OK)
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

/* Sets the record's status unless a worse one is there (the first failure
 * is the one a user needs to read). */
static void fail_case(case_run *r, kbi_status st, const char *message)
{
    set_status(r->rec, st, message && *message ? message : "failed without a message");
}

/* A declared metric out of its bound fails a case that was otherwise ok. */
static void check_metric_bounds(case_run *r)
{
    if (r->rec->status != KBI_ST_OK)
        return;
    for (size_t i = 0; i < r->rec->n_metrics; i++) {
        const kbi_metric *m = &r->rec->metrics[i];
        if (!m->in_bound) {
            char msg[KB_MSG_SIZE], vt[32] = "not a number", lt[32] = "-inf", ht[32] = "inf";
            if (isfinite(m->value))
                snprintf(vt, sizeof vt, "%.6g", m->value);
            if (m->bounds & KB_BOUND_LOW)
                snprintf(lt, sizeof lt, "%.6g", m->low);
            if (m->bounds & KB_BOUND_HIGH)
                snprintf(ht, sizeof ht, "%.6g", m->high);
            snprintf(msg, sizeof msg, "metric %s = %s is outside its bound [%s, %s]", m->name, vt,
                     lt, ht);
            set_status(r->rec, KBI_ST_VERIFY_FAILED, msg);
            return;
        }
    }
}

/* verify, its verdict into the record; a failed check or verdict fails the case (`when` says
 * which verification).  Returns nonzero when it passed. */
static int verified(case_run *r, kb_verdict *verdict, const char *when, int *verified_once)
{
    char disagreed[224];
    int rc = verify(r, verdict);
    if (rc != KB_OK) {
        fail_case(r, kbi_status_of_code(rc), r->msg);
        return 0;
    }
    *verified_once = 1;
    /* kbench judges the figures too: a plugin cannot pass an error over its tolerance. */
    verdict->passed = kbi_verdict_passed(verdict->passed, verdict->error, verdict->tolerance,
                                         disagreed, sizeof disagreed);
    set_verdict(r->rec, verdict);
    if (!verdict->passed) {
        describe_failed_verdict(r->msg, verdict, when);
        if (disagreed[0]) {
            size_t len = strlen(r->msg);
            snprintf(r->msg + len, KB_MSG_SIZE - len, " (the plugin said it passed)");
        }
        fail_case(r, KBI_ST_VERIFY_FAILED, r->msg);
        return 0;
    }
    return 1;
}

static void measure_energy(case_run *r, double deadline);

/* ABI 1.4: the plugin's instrumented measurements (a sub-phase's time, a measurement run),
 * once, after the verify that followed the timed runs and before energy and teardown: never in
 * a sample, and with verify() left to verify only.  The metrics it reports are marked as its;
 * its wall time (the device work it queued included) goes into the record.  KB_SKIP keeps the
 * case ok with the reason; any other failure makes the case an error, its samples,
 * statistics and verdict kept, and its message names instrument and the median. */
static void instrument_case(case_run *r)
{
    int (*instrument)(void *, void *, char *) =
        r->c->section->plugin->minor >= 4 ? KBI_DESC_GET(r->p, instrument, NULL) : NULL;
    kbi_case_instrumented *in = &r->rec->instrumented;
    char msg[KB_MSG_SIZE] = "", why[KBI_ERR_SIZE];
    double t0;
    int rc;
    if (!instrument || r->rec->status != KBI_ST_OK)
        return;
    r->handle.instrumenting = 1;
    t0 = kbi_now();
    rc = instrument(r->state, r->dev ? r->dev->stream : NULL, msg);
    if (rc == KB_OK && r->dev)
        rc = kbi_device_sync(r->dev, msg);
    in->wall_s = kbi_now() - t0;
    r->handle.instrumenting = 0;
    in->ran = 1;
    in->status = rc == KB_OK ? KBI_ST_OK : kbi_status_of_code(rc);
    snprintf(in->message, sizeof in->message, "%s",
             msg[0] || rc == KB_OK ? msg : "instrument failed without a message");
    if (in->status != KBI_ST_ERROR)
        return;
    snprintf(why, sizeof why,
             "instrument failed after the case verified and was timed (median %.6g s over %zu "
             "samples, kept in the record): %s",
             r->rec->stats.median, r->rec->stats.n, in->message);
    fail_case(r, KBI_ST_ERROR, why);
}

/* init .. verify before timing .. samples .. verify after .. instrument (ABI 1.4) .. energy,
 * for a case whose point is prepared; fills the record's status.  Returns the samples
 * (caller frees) in *samples and *n. */
static void measure_case(case_run *r, const kb_case *kc, double t0, double **samples, size_t *n,
                         int *batch, int *verified_once)
{
    const kbi_run_opts *o = &r->ctx->profile->run;
    kb_verdict verdict;
    char note[KB_MSG_SIZE] = "";
    int rc = r->p->init(kc, &r->state, r->msg);
    if (rc != KB_OK) {
        fail_case(r, kbi_status_of_code(rc), r->msg[0] ? r->msg : "init failed without a message");
        r->state = NULL;
        return;
    }
    if ((rc = r->p->counts(r->state, &r->counts, r->msg)) != KB_OK) {
        fail_case(r, kbi_status_of_code(rc), r->msg);
        return;
    }
    set_counts(r->rec, &r->counts);

    /* Correct first: one run, verified, before anything is timed. */
    if ((rc = reset_state(r)) != KB_OK || (rc = run_once(r)) != KB_OK) {
        fail_case(r, kbi_status_of_code(rc), r->msg);
        return;
    }
    if (!verified(r, &verdict, "before timing", verified_once))
        return;
    if (r->ctx->profile_run && r->dev) {
        /* Nsight Compute: the profiler sees exactly one run. */
        if ((rc = reset_state(r)) == KB_OK) {
            cudaProfilerStart();
            rc = run_once(r);
            cudaProfilerStop();
        }
        if (rc != KB_OK) {
            fail_case(r, kbi_status_of_code(rc), r->msg);
            return;
        }
    }
    rc = take_samples(r, t0 + 0.8 * o->timeout, samples, n, batch, note, sizeof note);
    if (rc != KB_OK) {
        fail_case(r, kbi_status_of_code(rc), r->msg);
        return;
    }
    /* Repeatable: the result after every timed run must still verify (for
     * an evolving state the plugin checks its invariants). */
    if (verified(r, &verdict, "after the timed runs (run() is not repeatable)", verified_once))
        set_status(r->rec, KBI_ST_OK, note[0] ? note : r->hot.note);
    else
        return;
    /* The record's stats are set here already for the energy windows' sizes (and the median
     * a failed instrument's message quotes). */
    r->rec->has_stats = *n > 0;
    if (*n > 0)
        kbi_stats_compute(*samples, *n, &r->rec->stats);
    instrument_case(r);
    measure_energy(r, t0 + 0.9 * o->timeout);
}

/* ---- energy (energy_case.h), after the timing ---- */

/* The worker's energy counter (opened at its first device case; ok -1: not tried yet) and,
 * in cold mode, the energy of one L2 flush, measured once per worker (the flush is the same
 * buffer for every case). */
static struct {
    int ok;
    kbi_energy_meter meter;
    int flush_done;
    kbi_case_energy flush;
} energy = {.ok = -1};

/* Opens the worker's energy counter once; nonzero when it can be read. */
static int energy_meter(const kbi_run_ctx *ctx)
{
    char bus[64];
    if (energy.ok >= 0)
        return energy.ok;
    energy.ok = 0;
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, ctx->device) != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(energy.meter.why, sizeof energy.meter.why,
                 "CUDA does not say the GPU's PCI bus id, which NVML needs");
        return 0;
    }
    energy.ok = kbi_energy_open(&energy.meter, bus);
    return energy.ok;
}

/* Cold mode: the energy of the L2 flush alone, once per worker.  Returns KB_OK or a CUDA
 * status with r->msg set. */
static int measure_flush(case_run *r, double deadline)
{
    const kbi_run_opts *o = &r->ctx->profile->run;
    kbi_energy_work w = {.dev = r->dev, .p = r->p, .state = r->state, .flush = 1, .runs = 0};
    int rc;
    if (energy.flush_done)
        return KB_OK;
    /* A guess that only sizes the chunks: the flush writes at about a TB/s or more. */
    w.unit_s = (double)r->dev->flush_bytes / 1e12;
    rc = kbi_energy_case(&energy.meter, &w, o->energy_window, o->energy_windows, deadline,
                         &energy.flush, r->msg);
    /* Measured once; one that was not (no time left, a counter that did not step) is tried
     * again by the next cold case. */
    energy.flush_done = rc == KB_OK && energy.flush.measured;
    return rc;
}

/* The energy of the case's timed work, into the record: windows of the same work replayed
 * back to back (hot: the timed batch; cold: each run after its L2 flush, whose own energy is
 * then taken off), after the last verify.  A case that cannot be measured gets the reason;
 * a run that fails in a window fails the case. */
static void measure_energy(case_run *r, double deadline)
{
    const kbi_run_opts *o = &r->ctx->profile->run;
    kbi_case_energy *e = &r->rec->energy;
    int hot = o->cache == KBI_CACHE_HOT, rc;
    kbi_energy_work w = {.dev = r->dev,
                         .p = r->p,
                         .state = r->state,
                         .hot = hot ? &r->hot : NULL,
                         .flush = !hot,
                         .runs = hot ? r->hot.batch : 1};
    double start = kbi_now();
    if (!o->energy || !r->dev || r->rec->status != KBI_ST_OK || !r->rec->has_stats)
        return;
    r->rec->has_energy = 1;
    e->extra_s = 0;
    if (!energy_meter(r->ctx)) {
        kbi_energy_not_measured(e, energy.meter.why);
        return;
    }
    if (KBI_DESC_GET(r->p, reset, NULL) && r->counts.max_batch == 1) {
        kbi_energy_not_measured(e, "each run needs the plugin's reset before it (max_batch 1): "
                                   "a window of back-to-back runs is not the timed work");
        return;
    }
    w.unit_s = r->rec->stats.median * w.runs;
    if ((rc = reset_state(r)) == KB_OK && !hot)
        rc = measure_flush(r, deadline);
    if (rc == KB_OK)
        rc = kbi_energy_case(&energy.meter, &w, o->energy_window, o->energy_windows, deadline, e,
                             r->msg);
    if (rc != KB_OK) {
        fail_case(r, kbi_status_of_code(rc), r->msg);
        r->rec->has_energy = 0;
        return;
    }
    if (!hot && !energy.flush.measured) {
        char why[sizeof e->why];
        snprintf(why, sizeof why,
                 "cold mode: the L2 flush's energy, to take off each run, "
                 "was not measured: %.180s",
                 energy.flush.why);
        kbi_energy_not_measured(e, why);
    } else if (!hot) {
        kbi_energy_subtract_flush(e, energy.flush.j_per_run, energy.flush.j_per_run_u);
    }
    kbi_case_energy_derive(e, r->rec->flops, r->rec->bytes);
    e->extra_s = kbi_now() - start;
}

/* teardown, and a last look for a sticky CUDA error. */
static void finish_case(case_run *r)
{
    if (r->state) {
        char tmsg[KB_MSG_SIZE] = "";
        int trc = r->p->teardown(r->state, tmsg);
        if (trc != KB_OK && r->rec->status == KBI_ST_OK)
            set_status(r->rec, KBI_ST_ERROR, tmsg[0] ? tmsg : "teardown failed");
    }
    kbi_hot_free(&r->hot);
    if (r->dev) {
        /* A sticky error (an illegal address) would poison the next case:
         * report it here; the parent replaces this worker. */
        char smsg[KB_MSG_SIZE];
        if (kbi_device_sync(r->dev, smsg) != KB_OK) {
            if (r->rec->status == KBI_ST_OK || r->rec->status == KBI_ST_VERIFY_FAILED)
                set_status(r->rec, KBI_ST_ERROR, smsg);
            r->rec->sticky_error = 1;
        }
    }
}

/* Samples, statistics, rates, clocks: the measured part of the record
 * (its metrics are there already, put by the host calls). */
static void record_measurements(case_run *r, const double *samples, size_t n, int batch,
                                double clock_start, double clock_end)
{
    kbi_case_result *rec = r->rec;
    free(rec->samples);
    rec->samples = kbi_xcalloc(n ? n : 1, sizeof *rec->samples);
    if (n)
        memcpy(rec->samples, samples, n * sizeof *samples);
    rec->n_samples = n;
    if (n > 0) {
        rec->has_stats = 1;
        kbi_stats_compute(samples, n, &rec->stats);
        rec->batch = batch;
        free(rec->timing);
        rec->timing = kbi_strdup(kbi_timing_name(r->hot.method));
        /* Plain launches in hot mode go at the CPU's launch rate. */
        rec->host_paced =
            r->dev != NULL && ((r->counts.run_flags & (KB_RUN_SYNCS | KB_RUN_HOST_PACED)) ||
                               r->hot.method == KBI_TIMING_LAUNCHES);
        rec->hot_trial_graph_s = r->hot.trial_graph_s;
        rec->hot_trial_stream_s = r->hot.trial_stream_s;
        set_rates(rec, r->ctx, rec->stats.median);
    }
    if (r->dev) {
        rec->has_clocks = 1;
        rec->clock_start_mhz = clock_start;
        rec->clock_end_mhz = clock_end;
        rec->throttle_reasons = (long long)kbi_nvml_throttle();
        rec->clock_drop = clock_start > 0 && clock_end > 0 && clock_end < 0.95 * clock_start;
    }
}

void kbi_case_execute(const kbi_run_ctx *ctx, const kbi_case *c, kbi_case_result *rec)
{
    const kb_plugin *p = c->section->plugin->desc;
    const kb_variant *v = &p->variants[c->variant];
    case_run r = {.ctx = ctx, .c = c, .p = p, .rec = rec};
    kb_case kc;
    double *samples = NULL, clock_start = 0, clock_end = 0, t0 = kbi_now();
    size_t n = 0;
    int batch = 1, verified_once = 0;
    char err[KBI_ERR_SIZE];

    kbi_case_record_init(ctx, c, rec);
    r.handle = (kb_case_handle){.p = p, .rec = rec};
    current.c = c;
    current.rec = rec;
    current.handle = &r.handle;
    /* Nested NVTX ranges kbench / plugin / variant / params: timelines show
     * the structure, and `ncu --nvtx-include "kbench/P/V/X/"` selects one
     * case. */
    int nvtx_depth = nvtx_push_case(c);

    if (v->target == KB_DEVICE && !ctx->device_ok) {
        set_status(r.rec, KBI_ST_SKIPPED, ctx->device_error ? ctx->device_error : "no CUDA device");
        goto done;
    }
    if (v->target == KB_DEVICE) {
        if (open_device(ctx, err) != KBI_OK) {
            set_status(r.rec, KBI_ST_ERROR, err);
            goto done;
        }
        r.dev = &worker_device;
    }
    {
        /* The point's prepare, once per worker; its time is recorded on
         * the first case that needed it, never in a sample. */
        int rc = ensure_point(ctx, c, r.msg);
        if (KBI_DESC_GET(p, prepare, NULL) && !point.charged) {
            rec->prepare_s = point.seconds;
            point.charged = 1;
        }
        if (rc != KB_OK) {
            set_status(r.rec, kbi_status_of_code(rc), r.msg);
            goto done;
        }
    }
    t0 = kbi_now(); /* the case's own time starts after prepare */
    kc = (kb_case){.struct_size = sizeof kc,
                   .host = &kbi_host_services,
                   .params = &c->params,
                   .variant = c->variant,
                   .seed = ctx->profile->run.seed,
                   .device = ctx->device,
                   .id = c->id,
                   .shared = point.shared,
                   .handle = &r.handle};
    clock_start = r.dev ? kbi_nvml_sm_clock() : 0;
    measure_case(&r, &kc, t0, &samples, &n, &batch, &verified_once);
    clock_end = r.dev ? kbi_nvml_sm_clock() : 0;
    finish_case(&r);
done:
    while (nvtx_depth-- > 0)
        nvtxRangePop();
    record_measurements(&r, samples, n, batch, clock_start, clock_end);
    check_metric_bounds(&r);
    if (!verified_once)
        rec->has_verify = 0;
    rec->wall_s = kbi_now() - t0;
    current.c = NULL;
    current.rec = NULL;
    current.handle = NULL;
    free(samples);
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
    parent_fd = res_fd;
    while (read_cmd(cmd_fd, cmd, sizeof cmd) >= 0) {
        unsigned long k;
        kbi_case_result rec;
        json_t *obj;
        char *text;
        int ok;
        if (strcmp(cmd, "quit") == 0)
            break;
        if (sscanf(cmd, "case %lu", &k) != 1 || k >= ctx->n_cases)
            return 3;
        kbi_case_execute(ctx, ctx->cases[k], &rec);
        /* What the plugin printed reaches worker.log as its case ends, not when the worker
         * exits (it leaves by _exit, or is killed, and a buffer would be lost). */
        fflush(stdout);
        fflush(stderr);
        obj = kbi_case_record_json(&rec);
        kbi_case_result_free(&rec);
        text = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
        json_decref(obj);
        if (!text)
            return 3;
        ok = write_all(res_fd, text, strlen(text)) == 0 && write_all(res_fd, "\n", 1) == 0;
        free(text);
        if (!ok)
            return 3;
    }
    kbi_worker_release_point();
    return 0;
}
