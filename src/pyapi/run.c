/* Analyses by name for the Python C API: each reads its keys from the option text into the analysis's
 * own options (library defaults first, HTA's where HTA has the option), runs it on the session's
 * context and hands the tables back.  Unknown keys are errors that name them. */
#include <stdlib.h>
#include <string.h>

#include "hta/breakdown.h"
#include "hta/comms.h"
#include "hta/counters.h"
#include "hta/cpuops.h"
#include "hta/efficiency.h"
#include "hta/launch.h"
#include "hta/report.h"
#include "hta/sim.h"
#include "pyapi/internal.h"

typedef hta_status (*run_fn)(hta_ctx *ctx, const py_opts *o, hta_result *out, hta_error *err);

static hta_status run_temporal(hta_ctx *ctx, const py_opts *o, hta_result *out, hta_error *err) {
    hta_temporal_opts t;
    hta_temporal_opts_default(&t);
    return hta_temporal_breakdown(ctx, &t, out, err);
}

static hta_status run_idle(hta_ctx *ctx, const py_opts *o, hta_result *out, hta_error *err) {
    hta_idle_opts io;
    hta_idle_opts_default(&io);
    long long delay = io.consecutive_kernel_delay_ns;
    int64_t *streams = NULL;
    size_t ns = 0;
    HTA_TRY(py_opt_int(o, "consecutive_kernel_delay_ns", &delay, err));
    HTA_TRY(py_opt_flag(o, "interval_stats", &io.interval_stats, err));
    if (py_opt(o, "streams")) HTA_TRY(py_parse_int_list("streams", py_opt(o, "streams"), &streams, &ns, err));
    io.consecutive_kernel_delay_ns = delay;
    io.streams = streams;
    io.nstreams = ns;
    hta_status st = hta_idle_breakdown(ctx, &io, out, err);
    free(streams);
    return st;
}

static hta_status run_kernels(hta_ctx *ctx, const py_opts *o, hta_result *out, hta_error *err) {
    hta_kernel_opts k;
    hta_kernel_opts_default(&k);
    HTA_TRY(py_opt_int_in(o, "top", "num_kernels", 0, 1000000000, &k.top, err));
    HTA_TRY(py_opt_double(o, "duration_ratio", &k.duration_ratio, err));
    HTA_TRY(py_opt_flag(o, "include_memory", &k.include_memory, err));
    return hta_kernel_breakdown(ctx, &k, out, err);
}

static hta_status run_overlap(hta_ctx *ctx, const py_opts *o, hta_result *out, hta_error *err) {
    hta_overlap_opts v;
    hta_overlap_opts_default(&v);
    return hta_overlap(ctx, &v, out, err);
}

static hta_status run_launch(hta_ctx *ctx, const py_opts *o, hta_result *out, hta_error *err) {
    hta_launch_opts l;
    hta_launch_opts_default(&l);
    HTA_TRY(py_opt_double(o, "runtime_cutoff", &l.runtime_cutoff_us, err));
    HTA_TRY(py_opt_double(o, "launch_delay_cutoff", &l.launch_delay_cutoff_us, err));
    HTA_TRY(py_opt_flag(o, "include_memory_events", &l.include_memory_events, err));
    return hta_launch_stats(ctx, &l, out, err);
}

static hta_status run_annotations(hta_ctx *ctx, const py_opts *o, hta_result *out, hta_error *err) {
    hta_annotation_opts a;
    hta_annotation_opts_default(&a);
    HTA_TRY(py_opt_flag(o, "cpu", &a.use_cpu_annotation, err));
    HTA_TRY(py_opt_int_in(o, "num_kernels", "num_kernels", 0, 1000000000, &a.num_kernels, err));
    HTA_TRY(py_opt_double(o, "duration_ratio", &a.duration_ratio, err));
    const char **allow;
    HTA_TRY(py_opt_list(o, "allow", &allow, &a.nallow, err));
    a.allowlist = allow;
    hta_status st = hta_annotation_breakdown(ctx, &a, out, err);
    free(allow);
    return st;
}

static hta_status run_stragglers(hta_ctx *ctx, const py_opts *o, hta_result *out, hta_error *err) {
    hta_straggler_opts s;
    hta_straggler_opts_default(&s);
    int64_t *steps = NULL;
    HTA_TRY(py_opt_int_in(o, "candidates", "num_candidates", 0, 1000000, &s.num_candidates, err));
    if (py_opt(o, "steps")) HTA_TRY(py_parse_int_list("steps", py_opt(o, "steps"), &steps, &s.nsteps, err));
    s.steps = steps;
    hta_status st = hta_potential_stragglers(ctx, &s, out, err);
    free(steps);
    return st;
}

static hta_status run_ops(hta_ctx *ctx, const py_opts *o, hta_result *out, hta_error *err) {
    hta_aten_opts a;
    hta_aten_opts_default(&a);
    const char **keys;
    size_t n;
    HTA_TRY(py_opt_list(o, "sort_by", &keys, &n, err));
    if (n) a.sort_by = keys, a.nsort = n;
    hta_status st = hta_aten_op_kernels(ctx, &a, out, err);
    free(keys);
    return st;
}

static hta_status counters_opts(const py_opts *o, hta_counters_opts *c, hta_error *err) {
    hta_counters_opts_default(c);
    long long mq = c->max_queue_length;
    HTA_TRY(py_opt_int(o, "max_queue_length", &mq, err));
    HTA_TRY(py_opt_flag(o, "series", &c->series, err));
    if (mq < 0) return hta_fail(err, HTA_EINVAL, "max_queue_length: %lld (>= 0)", mq);
    c->max_queue_length = mq;
    return HTA_OK;
}

static hta_status run_counters(hta_ctx *ctx, const py_opts *o, hta_result *out, hta_error *err) {
    hta_counters_opts c;
    HTA_TRY(counters_opts(o, &c, err));
    return hta_counters(ctx, &c, out, err);
}

/* A derived trace rewrites a rank's own file: refused for the ranks of a merged trace, which share one. */
static hta_status derivable(const hta_ctx *ctx, const char *what, hta_error *err) {
    for (size_t k = 0; k < hta_ctx_nranks(ctx); k++)
        if (hta_ctx_rank(ctx, k)->merged)
            return hta_fail(err, HTA_EINVAL, "%s: a merged trace (hta merge): %s writes derived traces from the "
                            "per-rank files", hta_ctx_rank(ctx, k)->path, what);
    return HTA_OK;
}

static hta_status run_augment(hta_ctx *ctx, const py_opts *o, hta_result *out, hta_error *err) {
    hta_counters_opts c;
    HTA_TRY(counters_opts(o, &c, err));
    const char *dir = py_opt(o, "outdir");
    if (!dir || !*dir) return hta_fail(err, HTA_EINVAL, "generate_trace_with_counters: no output folder");
    HTA_TRY(derivable(ctx, "generate_trace_with_counters", err));
    return hta_counters_augment(ctx, &c, dir, out, err);
}

static hta_status run_patterns(hta_ctx *ctx, const py_opts *o, hta_result *out, hta_error *err) {
    hta_patterns_opts p;
    hta_patterns_opts_default(&p);
    long long ml = p.min_len, tk = p.top_k;
    HTA_TRY(py_opt_int(o, "min_len", &ml, err));
    HTA_TRY(py_opt_int(o, "top_k", &tk, err));
    if (ml < 1 || ml > 1000000 || tk < 0 || tk > 1000000)
        return hta_fail(err, HTA_EINVAL, "min_pattern_len %lld (>= 1) or top_k %lld (>= 0) out of range", ml, tk);
    p.min_len = (int)ml;
    p.top_k = (int)tk;
    p.op = py_opt(o, "op");
    p.overlay = py_opt(o, "overlay");
    if (!p.op || !*p.op) return hta_fail(err, HTA_EINVAL, "get_frequent_cuda_kernel_sequences: no operator_name");
    if (p.overlay) HTA_TRY(derivable(ctx, "get_frequent_cuda_kernel_sequences", err));
    return hta_patterns(ctx, &p, out, err);
}

static hta_status run_cupti(hta_ctx *ctx, const py_opts *o, hta_result *out, hta_error *err) {
    return hta_cupti_counters(ctx, out, err);
}

static hta_status run_info(hta_ctx *ctx, const py_opts *o, hta_result *out, hta_error *err) {
    return hta_info(ctx, out, err);
}

static hta_status run_events(hta_ctx *ctx, const py_opts *o, hta_result *out, hta_error *err) {
    hta_events_opts e;
    hta_events_opts_default(&e);
    long long lim = e.limit;
    e.cat = py_opt(o, "cat");
    e.name = py_opt(o, "name");
    HTA_TRY(py_opt_flag(o, "hta_table", &e.hta_table, err));
    HTA_TRY(py_opt_int(o, "limit", &lim, err));
    e.limit = (long)lim;
    return hta_events(ctx, &e, out, err);
}

static hta_status run_cpu_ops(hta_ctx *ctx, const py_opts *o, hta_result *out, hta_error *err) {
    hta_cpu_ops_opts c;
    hta_cpu_ops_opts_default(&c);
    long long top = c.top, st = c.step_top;
    HTA_TRY(py_opt_int(o, "top", &top, err));
    HTA_TRY(py_opt_int(o, "step_top", &st, err));
    if (top > 1000000000 || st > 1000000000) return hta_fail(err, HTA_EINVAL, "top: too large");
    c.top = top < 0 ? 0 : (int)top;
    c.step_top = st < 0 ? 0 : (int)st;
    return hta_cpu_ops(ctx, &c, out, err);
}

static hta_status run_report(hta_ctx *ctx, const py_opts *o, hta_result *out, hta_error *err) {
    hta_report_opts r;
    hta_report_opts_default(&r);
    HTA_TRY(py_opt_int_in(o, "top", "top", 1, 1000000, &r.top_kernels, err));
    HTA_TRY(py_opt_flag(o, "critical_path", &r.critical_path, err));
    r.html = py_opt(o, "html");
    return hta_report(ctx, &r, out, err);
}

/* what_if: rules on one rank's simulation graph each (ranks=LIST, default the first loaded), or on the
 * job's (all_ranks=1): tables what_if, what_if_steps, what_if_summary, then the path's (summary, stats,
 * steps), as `hta critical-path --what-if` gives them; trace_out: the simulated trace (all_ranks: a folder
 * the ranks' traces are written into). */
static hta_status run_what_if(hta_ctx *ctx, const py_opts *o, hta_result *out, hta_error *err) {
    const char **texts = NULL, **dl = NULL;
    size_t nr = 0, ndl = 0, nk = 0;
    int all = 0;
    int64_t *ranks = NULL;
    hta_cpath_rule *rules = NULL;
    hta_status st = py_opt_list(o, "rule", &texts, &nr, err);
    if (!st) st = py_opt_list(o, "data_load", &dl, &ndl, err);
    if (!st) st = py_opt_flag(o, "all_ranks", &all, err);
    if (!st && py_opt(o, "ranks")) st = py_parse_int_list("ranks", py_opt(o, "ranks"), &ranks, &nk, err);
    if (!st && !nr) st = hta_fail(err, HTA_EINVAL, "what_if: no rule given (e.g. 'kernel:nccl*=x0.5')");
    if (!st && !(rules = calloc(nr, sizeof *rules))) st = hta_oom(err);
    size_t parsed = 0;
    for (; !st && parsed < nr; parsed++)
        if ((st = hta_cpath_rule_parse(texts[parsed], &rules[parsed], err))) break;
    const char *trace_out = py_opt(o, "trace_out");
    if (!st && trace_out) st = derivable(ctx, "what_if trace_out", err);
    if (!st && all) {
        hta_job_scenario sc = {rules, nr, NULL, 0};
        /* trace_out: a folder, each rank's simulated trace written into it */
        hta_job_opts jo = {.scn = &sc, .nscn = 1, .data_load = dl, .ndata_load = ndl, .paths = 1, .trace_dir = trace_out};
        hta_job *job = NULL;
        st = hta_job_run_ctx(ctx, &jo, &job, out, err);
        hta_job_free(job);
    } else if (!st) {
        size_t first = 0, n = nk ? nk : 1;
        for (size_t i = 0; !st && i < n; i++) {
            long k = nk ? hta_ctx_find_rank(ctx, (int32_t)ranks[i]) : (long)first;
            if (k < 0) {
                st = hta_fail(err, HTA_EINVAL, "what_if: rank %lld is not loaded", (long long)ranks[i]);
                break;
            }
            hta_sim *sim = NULL;
            hta_result one;
            hta_result_init(&one);
            /* the command's answer for one rank: the what-if tables first, then the path's own */
            hta_sim_opts so = {rules, nr, dl, ndl, INT64_MIN, INT64_MAX, 0, 0, n == 1 ? trace_out : NULL};
            st = hta_sim_build(ctx, (size_t)k, &sim, err);
            if (!st) st = hta_sim_answer(ctx, sim, &so, &one, NULL, err);
            if (!st) st = hta_result_append(out, &one, err);
            hta_result_free(&one);
            hta_sim_free(sim);
        }
    }
    for (size_t i = 0; rules && i < parsed; i++) hta_cpath_rule_free(&rules[i]);
    free(rules);
    free(texts);
    free(dl);
    free(ranks);
    return st;
}

/* comms: collectives, alltoallv_bytes, comm_link, as `hta comms` gives them */
static hta_status run_comms(hta_ctx *ctx, const py_opts *o, hta_result *out, hta_error *err) {
    hta_comms_opts c;
    hta_comms_opts_default(&c);
    long long scale = c.scale_up;
    HTA_TRY(py_opt_double(o, "peak_link_gbps", &c.peak_link_gbps, err));
    HTA_TRY(py_opt_int(o, "scale_up", &scale, err));
    if (c.peak_link_gbps < 0 || scale < 1 || scale > 1000000)
        return hta_fail(err, HTA_EINVAL, "peak_link_gbps must be > 0 and scale_up >= 1");
    c.scale_up = (int)scale;
    return hta_comms(ctx, &c, out, err);
}

/* efficiency: op_roofline and device, as `hta efficiency` gives them */
static hta_status run_efficiency(hta_ctx *ctx, const py_opts *o, hta_result *out, hta_error *err) {
    hta_efficiency_opts e;
    hta_efficiency_opts_default(&e);
    HTA_TRY(py_opt_double(o, "peak_tflops", &e.peak_tflops, err));
    HTA_TRY(py_opt_double(o, "peak_tbps", &e.peak_tbps, err));
    HTA_TRY(py_opt_double(o, "peak_vector_tflops", &e.peak_vector_tflops, err));
    if (e.peak_tflops < 0 || e.peak_tbps < 0 || e.peak_vector_tflops < 0)
        return hta_fail(err, HTA_EINVAL, "peaks must be > 0");
    return hta_efficiency(ctx, &e, out, err);
}

static const struct {
    const char *name;
    run_fn fn;
    const char *keys[8];
} analyses[] = {
    {"temporal", run_temporal, {NULL}},
    {"idle", run_idle, {"consecutive_kernel_delay_ns", "interval_stats", "streams", NULL}},
    {"kernels", run_kernels, {"top", "duration_ratio", "include_memory", NULL}},
    {"overlap", run_overlap, {NULL}},
    {"launch", run_launch, {"runtime_cutoff", "launch_delay_cutoff", "include_memory_events", NULL}},
    {"annotations", run_annotations, {"cpu", "num_kernels", "duration_ratio", "allow", NULL}},
    {"stragglers", run_stragglers, {"candidates", "steps", NULL}},
    {"ops", run_ops, {"sort_by", NULL}},
    {"counters", run_counters, {"max_queue_length", "series", NULL}},
    {"augment", run_augment, {"max_queue_length", "series", "outdir", NULL}},
    {"patterns", run_patterns, {"op", "min_len", "top_k", "overlay", NULL}},
    {"cupti", run_cupti, {NULL}},
    {"info", run_info, {NULL}},
    {"events", run_events, {"cat", "name", "hta_table", "limit", NULL}},
    {"cpu_ops", run_cpu_ops, {"top", "step_top", NULL}},
    {"report", run_report, {"top", "critical_path", "html", NULL}},
    {"comms", run_comms, {"peak_link_gbps", "scale_up", NULL}},
    {"efficiency", run_efficiency, {"peak_tflops", "peak_tbps", "peak_vector_tflops", NULL}},
    {"what_if", run_what_if, {"rule", "data_load", "all_ranks", "ranks", "trace_out", NULL}},
};

hta_status hta_py_run(hta_py_ctx *c, const char *name, const char *opts, hta_py_result **out, hta_error *err) {
    *out = NULL;
    HTA_TRY(py_need(c, err));
    size_t i = 0, n = sizeof analyses / sizeof *analyses;
    while (i < n && name && strcmp(analyses[i].name, name)) i++;
    if (i == n) return hta_fail(err, HTA_EINVAL, "no analysis named '%s'", name ? name : "(null)");
    py_opts o;
    HTA_TRY(py_opts_parse(opts, &o, err));
    hta_result res;
    hta_result_init(&res);
    hta_status st = py_opts_check(&o, name, analyses[i].keys, err);
    if (!st) st = analyses[i].fn(c->ctx, &o, &res, err);
    py_opts_free(&o);
    return py_result_out(st, &res, out, err);
}

hta_status hta_py_diff(hta_py_ctx *control, hta_py_ctx *test, const char *opts, hta_py_result **out,
                       hta_error *err) {
    *out = NULL;
    HTA_TRY(py_need(control, err));
    HTA_TRY(py_need(test, err));
    py_opts o;
    HTA_TRY(py_opts_parse(opts, &o, err));
    static const char *const keys[] = {"short_names", "device", "control_rank", "test_rank", "control_iteration",
                                       "test_iteration", "control_label", "test_label", NULL};
    hta_diff_opts d;
    hta_diff_opts_default(&d);
    long long cr = d.control_rank, tr = d.test_rank, ci = d.control_iteration, ti = d.test_iteration;
    hta_status st = py_opts_check(&o, "compare_traces", keys, err);
    if (!st) st = py_opt_flag(&o, "short_names", &d.short_names, err);
    if (!st) st = py_opt_int(&o, "control_rank", &cr, err);
    if (!st) st = py_opt_int(&o, "test_rank", &tr, err);
    if (!st) st = py_opt_int(&o, "control_iteration", &ci, err);
    if (!st) st = py_opt_int(&o, "test_iteration", &ti, err);
    const char *dev = py_opt(&o, "device");
    if (!st && dev) {
        if (!strcmp(dev, "gpu")) d.device = HTA_DIFF_GPU;
        else if (!strcmp(dev, "cpu")) d.device = HTA_DIFF_CPU;
        else if (!strcmp(dev, "all")) d.device = HTA_DIFF_ALL;
        else st = hta_fail(err, HTA_EINVAL, "device: '%s' (gpu, cpu or all)", dev);
    }
    if (!st && (cr < -1 || cr > INT32_MAX || tr < -1 || tr > INT32_MAX))
        st = hta_fail(err, HTA_EINVAL, "control_rank / test_rank out of range");
    d.control_rank = (int32_t)cr, d.test_rank = (int32_t)tr, d.control_iteration = ci, d.test_iteration = ti;
    if (py_opt(&o, "control_label")) d.control_label = py_opt(&o, "control_label");
    if (py_opt(&o, "test_label")) d.test_label = py_opt(&o, "test_label");
    hta_result res;
    hta_result_init(&res);
    if (!st) st = hta_trace_diff(control->ctx, test->ctx, &d, &res, err);
    py_opts_free(&o);
    return py_result_out(st, &res, out, err);
}
