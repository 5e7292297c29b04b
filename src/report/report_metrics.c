/* The report's findings from host and GPU metrics (docs/capture.md, "What the report says"): when the
 * traces' folder holds metrics files (DIR/metrics/HOST.metrics.jsonl, fetched by `hta capture` from htad),
 * what the traces cannot show -- how busy the SMs and tensor cores were, how much GPU memory was left,
 * whether the CPU kept up -- as MAIProf's case study reads it: SM activity low with tensor cores unused
 * -> mixed precision; half the GPU memory unused -> a larger batch; the GPU idle every few samples while
 * the CPU works -> more data-loader workers.  A table per host and GPU (gpu_metrics) holds the figures. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hta/capture.h"
#include "report/internal.h"

HTA_TABLE_DEFINE(HTA_GPU_METRICS);

#define IDLE_UTIL 0.10   /* a sample with less utilisation is an idle one */
#define SM_LOW 0.30      /* SM activity under this: the GPU does little */
#define TENSOR_UNUSED 0.01
#define MEM_HEADROOM 0.5 /* at most half the memory used: room for a larger batch */
#define CPU_SATURATED 0.90

/* Runs of idle samples and whether they recur at a steady period: the starts' gaps vary by less than
 * 35% of their mean.  *period_ms: that mean. */
static int periodic_idle(const hta_metrics_sample *s, size_t n, int g, double *period_ms) {
    double *gap = malloc(n * sizeof *gap);
    if (!gap) return 0;
    size_t ng = 0;
    int64_t last = -1;
    int prev_idle = 0;
    for (size_t k = 0; k < n; k++) {
        int idle = g < s[k].ngpus && !isnan(s[k].gpus[g].util) && s[k].gpus[g].util < IDLE_UTIL;
        if (idle && !prev_idle) {
            if (last >= 0) gap[ng++] = (double)(s[k].t_ms - last);
            last = s[k].t_ms;
        }
        prev_idle = idle;
    }
    int yes = 0;
    if (ng >= 2) {
        double mean = 0, var = 0;
        for (size_t k = 0; k < ng; k++) mean += gap[k];
        mean /= (double)ng;
        for (size_t k = 0; k < ng; k++) var += (gap[k] - mean) * (gap[k] - mean);
        yes = sqrt(var / (double)ng) < 0.35 * mean;
        *period_ms = mean;
    }
    free(gap);
    return yes;
}

typedef struct gstat {
    size_t n, n_util, n_sm, n_tensor, n_power, idle, n_cpu, n_cpu_idle, n_cpu_busy;
    double util, sm, tensor, power, cpu, cpu_idle, cpu_busy;
    int64_t mem_max, mem_total;
} gstat;

static gstat gpu_stats(const hta_metrics_sample *s, size_t n, int g) {
    gstat x;
    memset(&x, 0, sizeof x);
    x.mem_max = x.mem_total = -1;
    for (size_t k = 0; k < n; k++) {
        int has = g >= 0 && g < s[k].ngpus;
        const hta_gpu_sample *y = has ? &s[k].gpus[g] : NULL;
        int idle = has && !isnan(y->util) && y->util < IDLE_UTIL;
        x.n++;
        if (!isnan(s[k].cpu_busy)) {
            x.cpu += s[k].cpu_busy, x.n_cpu++;
            if (idle) x.cpu_idle += s[k].cpu_busy, x.n_cpu_idle++;
            else x.cpu_busy += s[k].cpu_busy, x.n_cpu_busy++;
        }
        if (!has) continue;
        if (!isnan(y->util)) x.util += y->util, x.n_util++;
        if (!isnan(y->sm_active)) x.sm += y->sm_active, x.n_sm++;
        if (!isnan(y->tensor_active)) x.tensor += y->tensor_active, x.n_tensor++;
        if (!isnan(y->power_w)) x.power += y->power_w, x.n_power++;
        if (y->mem_used > x.mem_max) x.mem_max = y->mem_used;
        if (y->mem_total > 0) x.mem_total = y->mem_total;
        x.idle += idle;
    }
    return x;
}

static double mean_or_nan(double sum, size_t n) { return n ? sum / (double)n : NAN; }

static void set_f(hta_table *t, long r, int col, double v) {
    if (isnan(v)) hta_table_set_null(t, (size_t)r, col);
    else hta_table_set_float(t, (size_t)r, col, v);
}

static void host_findings(findings *f, const char *host, const hta_metrics_sample *s, size_t n, int g,
                          const gstat *x) {
    char who[300];
    snprintf(who, sizeof who, "host %s GPU %d", host, g);
    double sm = mean_or_nan(x->sm, x->n_sm), tensor = mean_or_nan(x->tensor, x->n_tensor);
    if (!isnan(sm) && sm < SM_LOW && !isnan(tensor) && tensor < TENSOR_UNUSED)
        rp_add_finding(f, -1, "metrics",
                       "the SMs are mostly idle and no math runs on the tensor cores: train in mixed precision "
                       "(torch.autocast with bf16 or fp16, TF32 matmuls) so that matmuls and convolutions use "
                       "the tensor cores, and give each kernel more work (a larger batch)",
                       "%s: SM activity %.1f%%, tensor cores active %.1f%% of the time (DCGM, %zu samples)", who,
                       100 * sm, 100 * tensor, x->n);
    else if (!isnan(sm) && sm < SM_LOW)
        rp_add_finding(f, -1, "metrics",
                       "the kernels keep few SMs busy: small kernels or a small batch; fuse kernels "
                       "(torch.compile) or raise the batch size; see `hta kernels`",
                       "%s: SM activity %.1f%% (DCGM, %zu samples)", who, 100 * sm, x->n);
    if (x->mem_total > 0 && x->mem_max >= 0 && (double)x->mem_max <= MEM_HEADROOM * (double)x->mem_total)
        rp_add_finding(f, -1, "metrics",
                       "more than half the GPU memory is never used: a larger batch (or fewer activation "
                       "checkpoints) puts it to work and raises throughput; raise it until about 85% is used, "
                       "and scale the learning rate with it",
                       "%s: at most %.1f of %.1f GB GPU memory used (%.0f%%)", who, x->mem_max / 1e9,
                       x->mem_total / 1e9, 100.0 * (double)x->mem_max / (double)x->mem_total);
    double period = 0, cpu_idle = mean_or_nan(x->cpu_idle, x->n_cpu_idle),
           cpu_busy = mean_or_nan(x->cpu_busy, x->n_cpu_busy);
    if (x->idle >= 2 && x->idle * 20 >= x->n && x->idle < x->n && periodic_idle(s, n, g, &period) &&
        !isnan(cpu_idle) && (isnan(cpu_busy) || cpu_idle >= cpu_busy + 0.1 || cpu_idle >= CPU_SATURATED))
        rp_add_finding(f, -1, "metrics",
                       "the GPU waits for the next batch while the CPU prepares it: more DataLoader workers "
                       "(num_workers), pin_memory=True, a larger prefetch_factor, or faster decoding and "
                       "storage; `hta idle` shows the host waits in the traces",
                       "%s idle in %zu of %zu samples, every %.1f s, while the host CPU is %.0f%% busy "
                       "(%.0f%% otherwise)",
                       who, x->idle, x->n, period / 1000, 100 * cpu_idle, isnan(cpu_busy) ? 0 : 100 * cpu_busy);
}

/* The folders of the loaded rank files, each once. */
static size_t trace_dirs(const rp_rank *pr, size_t n, char (*dirs)[4096], size_t cap) {
    size_t nd = 0;
    for (size_t k = 0; k < n && nd < cap; k++) {
        const char *p = pr[k].path ? pr[k].path : "", *sl = strrchr(p, '/');
        char d[4096];
        snprintf(d, sizeof d, "%.*s", sl ? (int)(sl - p) : 1, sl ? p : ".");
        size_t j = 0;
        while (j < nd && strcmp(dirs[j], d)) j++;
        if (j == nd) memcpy(dirs[nd++], d, sizeof d);
    }
    return nd;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

hta_status rp_metrics(const rp_rank *pr, size_t npr, findings *f, hta_result *out, hta_error *err) {
    char dirs[8][4096];
    size_t nd = trace_dirs(pr, npr, dirs, 8);
    hta_table *t = NULL;
    hta_status st = HTA_OK;
    for (size_t d = 0; d < nd && !st; d++) {
        char mdir[4200];
        snprintf(mdir, sizeof mdir, "%s/metrics", dirs[d]);
        DIR *dp = opendir(mdir);
        if (!dp) continue;
        char **names = NULL;
        size_t nn = 0, cap = 0;
        struct dirent *de;
        while ((de = readdir(dp))) {
            size_t l = strlen(de->d_name);
            if (de->d_name[0] == '.' || l < 14 || strcmp(de->d_name + l - 14, ".metrics.jsonl")) continue;
            if (nn == cap) {
                char **nv = realloc(names, (cap = cap ? 2 * cap : 8) * sizeof *names);
                if (!nv) break;
                names = nv;
            }
            if (!(names[nn] = strdup(de->d_name))) break;
            nn++;
        }
        closedir(dp);
        if (nn) qsort(names, nn, sizeof *names, cmp_str);
        for (size_t k = 0; k < nn && !st; k++) {
            char path[4500], host[256];
            snprintf(path, sizeof path, "%s/%s", mdir, names[k]);
            snprintf(host, sizeof host, "%.*s", (int)(strlen(names[k]) - 14), names[k]);
            hta_metrics_sample *s = NULL;
            size_t n = 0;
            char h2[256];
            if (hta_metrics_read(path, &s, &n, h2, sizeof h2, NULL) || !n) {
                free(s);
                continue; /* unreadable or empty: the traces still make the report */
            }
            if (!t && !(t = hta_table_from_def(&HTA_GPU_METRICS_TABLE))) st = hta_oom(err);
            int ng = 0;
            for (size_t q = 0; q < n; q++) ng = s[q].ngpus > ng ? s[q].ngpus : ng;
            for (int g = ng ? 0 : -1; !st && g < ng; g++) {
                gstat x = gpu_stats(s, n, g);
                long r = hta_table_add_row(t);
                if (r < 0 || hta_table_set_str(t, (size_t)r, HTA_GPU_METRICS_HOST, host)) {
                    st = hta_oom(err);
                    break;
                }
                if (g < 0) hta_table_set_null(t, (size_t)r, HTA_GPU_METRICS_GPU);
                else hta_table_set_int(t, (size_t)r, HTA_GPU_METRICS_GPU, g);
                hta_table_set_int(t, (size_t)r, HTA_GPU_METRICS_SAMPLES, (int64_t)x.n);
                set_f(t, r, HTA_GPU_METRICS_UTIL, 100 * mean_or_nan(x.util, x.n_util));
                set_f(t, r, HTA_GPU_METRICS_SM, 100 * mean_or_nan(x.sm, x.n_sm));
                set_f(t, r, HTA_GPU_METRICS_TENSOR, 100 * mean_or_nan(x.tensor, x.n_tensor));
                set_f(t, r, HTA_GPU_METRICS_MEM_USED, x.mem_max >= 0 ? x.mem_max / 1e9 : NAN);
                set_f(t, r, HTA_GPU_METRICS_MEM_TOTAL, x.mem_total > 0 ? x.mem_total / 1e9 : NAN);
                set_f(t, r, HTA_GPU_METRICS_POWER, mean_or_nan(x.power, x.n_power));
                if (g < 0) hta_table_set_null(t, (size_t)r, HTA_GPU_METRICS_IDLE);
                else hta_table_set_int(t, (size_t)r, HTA_GPU_METRICS_IDLE, (int64_t)x.idle);
                set_f(t, r, HTA_GPU_METRICS_CPU, 100 * mean_or_nan(x.cpu, x.n_cpu));
                set_f(t, r, HTA_GPU_METRICS_CPU_IDLE, 100 * mean_or_nan(x.cpu_idle, x.n_cpu_idle));
                if (g >= 0) host_findings(f, host, s, n, g, &x);
                if (g <= 0 && x.n_cpu && x.cpu / (double)x.n_cpu >= CPU_SATURATED) /* once per host */
                    rp_add_finding(f, -1, "metrics",
                                   "the host's CPUs are saturated: an input pipeline or too many threads per "
                                   "core (OMP_NUM_THREADS, DataLoader workers) slow the job",
                                   "host %s: CPU busy %.0f%% on average over %zu samples", host,
                                   100 * x.cpu / (double)x.n_cpu, x.n);
            }
            free(s);
        }
        for (size_t k = 0; k < nn; k++) free(names[k]);
        free(names);
    }
    if (!st && t) {
        if (hta_result_add(out, t)) st = hta_oom(err);
        t = NULL;
    }
    hta_table_free(t);
    return st;
}
