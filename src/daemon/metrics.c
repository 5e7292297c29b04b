/* htad's metrics: a sample every --interval-ms of the host (CPU from /proc/stat, memory from
 * /proc/meminfo) and of each GPU, through NVML (utilisation, memory, power, clocks) and DCGM's
 * profiling fields (SM activity, tensor-core activity) when their libraries load.  Both are opened
 * with dlopen and declared here by hand: nothing of CUDA is needed to build htad, and a host without
 * GPUs samples its CPU alone.  The last HTAD_WINDOW samples stay in memory for the captures' metrics
 * files and for GET /metrics. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/dcgm_abi.h"
#include "daemon/htad.h"

/* ---- NVML, as nvml.h declares it (the few calls used) ---- */
typedef void *nvml_dev;
typedef struct { unsigned gpu, memory; } nvml_util;
typedef struct { unsigned long long total, free, used; } nvml_mem;
static struct {
    void *lib;
    int (*init)(void);
    int (*shutdown)(void);
    int (*count)(unsigned *);
    int (*handle)(unsigned, nvml_dev *);
    int (*util)(nvml_dev, nvml_util *);
    int (*mem)(nvml_dev, nvml_mem *);
    int (*power)(nvml_dev, unsigned *);
    int (*clock)(nvml_dev, int, unsigned *);
    unsigned n;
    nvml_dev dev[HTA_METRICS_MAX_GPUS];
} nv;

/* ---- DCGM, as dcgm_structs.h / dcgm_agent.h declare it ---- */
#define DCGM_FI_PROF_SM_ACTIVE 1002
#define DCGM_FI_PROF_PIPE_TENSOR_ACTIVE 1004
#define DCGM_GROUP_ALL_GPUS 0x7fffffff
#define DCGM_VALUE_VERSION ((unsigned)sizeof(dcgm_value) | (1u << 24))
static struct {
    void *lib;
    uintptr_t h;
    int (*latest)(uintptr_t, int, unsigned short *, unsigned, dcgm_value *);
    int (*update)(uintptr_t, int);
    int (*shutdown)(void);
} dc;

static void *sym(void *lib, const char *name, int *ok) {
    void *p = dlsym(lib, name);
    if (!p) *ok = 0;
    return p;
}

static void nvml_open(void) {
    const char *name = g_opt.nvml_lib ? g_opt.nvml_lib : "libnvidia-ml.so.1";
    nv.lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!nv.lib) {
        if (g_opt.nvml_lib) htad_log("NVML: %s", dlerror());
        return;
    }
    int ok = 1;
    nv.init = (int (*)(void))sym(nv.lib, "nvmlInit_v2", &ok);
    nv.shutdown = (int (*)(void))sym(nv.lib, "nvmlShutdown", &ok);
    nv.count = (int (*)(unsigned *))sym(nv.lib, "nvmlDeviceGetCount_v2", &ok);
    nv.handle = (int (*)(unsigned, nvml_dev *))sym(nv.lib, "nvmlDeviceGetHandleByIndex_v2", &ok);
    nv.util = (int (*)(nvml_dev, nvml_util *))sym(nv.lib, "nvmlDeviceGetUtilizationRates", &ok);
    nv.mem = (int (*)(nvml_dev, nvml_mem *))sym(nv.lib, "nvmlDeviceGetMemoryInfo", &ok);
    nv.power = (int (*)(nvml_dev, unsigned *))sym(nv.lib, "nvmlDeviceGetPowerUsage", &ok);
    nv.clock = (int (*)(nvml_dev, int, unsigned *))sym(nv.lib, "nvmlDeviceGetClockInfo", &ok);
    if (!ok || nv.init() != 0 || nv.count(&nv.n) != 0) {
        htad_log("NVML: %s does not initialise; no GPU metrics", name);
        dlclose(nv.lib);
        memset(&nv, 0, sizeof nv);
        return;
    }
    if (nv.n > HTA_METRICS_MAX_GPUS) nv.n = HTA_METRICS_MAX_GPUS;
    for (unsigned k = 0; k < nv.n; k++)
        if (nv.handle(k, &nv.dev[k])) nv.dev[k] = NULL;
    htad_log("NVML: %u GPUs", nv.n);
}

static void dcgm_open(void) {
    const char *name = g_opt.dcgm_lib ? g_opt.dcgm_lib : "libdcgm.so.4";
    dc.lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!dc.lib && !g_opt.dcgm_lib) dc.lib = dlopen(name = "libdcgm.so.3", RTLD_NOW | RTLD_LOCAL);
    if (!dc.lib) return;
    int ok = 1;
    int (*init)(void) = (int (*)(void))sym(dc.lib, "dcgmInit", &ok);
    int (*connect)(const char *, uintptr_t *) = (int (*)(const char *, uintptr_t *))sym(dc.lib, "dcgmConnect", &ok);
    int (*embedded)(int, uintptr_t *) = (int (*)(int, uintptr_t *))sym(dc.lib, "dcgmStartEmbedded", &ok);
    int (*fgroup)(uintptr_t, int, unsigned short *, const char *, uintptr_t *) =
        (int (*)(uintptr_t, int, unsigned short *, const char *, uintptr_t *))sym(dc.lib, "dcgmFieldGroupCreate", &ok);
    int (*watch)(uintptr_t, uintptr_t, uintptr_t, long long, double, int) =
        (int (*)(uintptr_t, uintptr_t, uintptr_t, long long, double, int))sym(dc.lib, "dcgmWatchFields", &ok);
    dc.latest = (int (*)(uintptr_t, int, unsigned short *, unsigned, dcgm_value *))sym(
        dc.lib, "dcgmGetLatestValuesForFields", &ok);
    dc.update = (int (*)(uintptr_t, int))sym(dc.lib, "dcgmUpdateAllFields", &ok);
    dc.shutdown = (int (*)(void))sym(dc.lib, "dcgmShutdown", &ok);
    unsigned short f[2] = {DCGM_FI_PROF_SM_ACTIVE, DCGM_FI_PROF_PIPE_TENSOR_ACTIVE};
    uintptr_t fg = 0;
    /* the host engine when one runs (nv-hostengine, as dcgm-exporter uses it), else an embedded one */
    if (!ok || init() != 0 || (connect("127.0.0.1", &dc.h) != 0 && embedded(1, &dc.h) != 0) ||
        fgroup(dc.h, 2, f, "htad", &fg) != 0 ||
        watch(dc.h, DCGM_GROUP_ALL_GPUS, fg, (long long)g_opt.interval_ms * 1000, 60.0, 0) != 0) {
        htad_log("DCGM: %s does not initialise; no SM or tensor-core activity", name);
        if (ok && dc.shutdown) dc.shutdown();
        dlclose(dc.lib);
        memset(&dc, 0, sizeof dc);
        return;
    }
    htad_log("DCGM: watching SM and tensor-core activity");
}

static pthread_mutex_t g_mmu = PTHREAD_MUTEX_INITIALIZER;
static hta_metrics_sample g_win[HTAD_WINDOW];
static size_t g_head, g_n;
static unsigned long long g_prev[3]; /* total, idle, iowait jiffies */
static double g_sample_s;

void htad_metrics_init(void) {
    nvml_open();
    dcgm_open();
    htad_metrics_sample(); /* the first CPU figures need a previous sample */
}

void htad_metrics_close(void) {
    if (nv.lib) {
        nv.shutdown();
        dlclose(nv.lib);
    }
    if (dc.lib) {
        dc.shutdown();
        dlclose(dc.lib);
    }
    memset(&nv, 0, sizeof nv);
    memset(&dc, 0, sizeof dc);
}

static void read_cpu(hta_metrics_sample *s) {
    s->cpu_busy = s->cpu_iowait = NAN;
    FILE *f = fopen("/proc/stat", "re");
    if (!f) return;
    unsigned long long v[8] = {0};
    int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                   &v[6], &v[7]);
    fclose(f);
    if (n < 5) return;
    unsigned long long total = 0;
    for (int k = 0; k < 8; k++) total += v[k];
    unsigned long long dt = total - g_prev[0], di = v[3] - g_prev[1], dw = v[4] - g_prev[2];
    if (g_prev[0] && dt > 0) {
        s->cpu_busy = (double)(dt - di - dw) / (double)dt;
        s->cpu_iowait = (double)dw / (double)dt;
    }
    g_prev[0] = total, g_prev[1] = v[3], g_prev[2] = v[4];
}

static void read_mem(hta_metrics_sample *s) {
    s->mem_used = s->mem_total = -1;
    FILE *f = fopen("/proc/meminfo", "re");
    if (!f) return;
    char line[256];
    long long total = -1, avail = -1, x;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "MemTotal: %lld kB", &x) == 1) total = x * 1024;
        else if (sscanf(line, "MemAvailable: %lld kB", &x) == 1) avail = x * 1024;
    }
    fclose(f);
    if (total >= 0 && avail >= 0) s->mem_total = total, s->mem_used = total - avail;
}

static void read_gpus(hta_metrics_sample *s) {
    s->ngpus = (int)nv.n;
    if (dc.lib) dc.update(dc.h, 0);
    for (unsigned k = 0; k < nv.n; k++) {
        hta_gpu_sample *g = &s->gpus[k];
        g->gpu = (int32_t)k;
        g->util = g->power_w = g->sm_active = g->tensor_active = NAN;
        g->mem_used = g->mem_total = g->sm_clock_mhz = g->mem_clock_mhz = -1;
        if (!nv.dev[k]) continue;
        nvml_util u;
        nvml_mem m;
        unsigned x;
        if (!nv.util(nv.dev[k], &u)) g->util = u.gpu / 100.0;
        if (!nv.mem(nv.dev[k], &m)) g->mem_used = (int64_t)m.used, g->mem_total = (int64_t)m.total;
        if (!nv.power(nv.dev[k], &x)) g->power_w = x / 1000.0;
        if (!nv.clock(nv.dev[k], 1, &x)) g->sm_clock_mhz = x;
        if (!nv.clock(nv.dev[k], 2, &x)) g->mem_clock_mhz = x;
        if (dc.lib) {
            unsigned short f[2] = {DCGM_FI_PROF_SM_ACTIVE, DCGM_FI_PROF_PIPE_TENSOR_ACTIVE};
            dcgm_value v[2];
            memset(v, 0, sizeof v);
            v[0].version = v[1].version = DCGM_VALUE_VERSION;
            if (!dc.latest(dc.h, (int)k, f, 2, v)) {
                if (!v[0].status && v[0].value.dbl >= 0 && v[0].value.dbl <= 1) g->sm_active = v[0].value.dbl;
                if (!v[1].status && v[1].value.dbl >= 0 && v[1].value.dbl <= 1) g->tensor_active = v[1].value.dbl;
            }
        }
    }
}

void htad_metrics_sample(void) {
    int64_t t0 = htad_mono_ms();
    hta_metrics_sample s;
    memset(&s, 0, sizeof s);
    s.t_ms = htad_now_ms();
    read_cpu(&s);
    read_mem(&s);
    read_gpus(&s);
    pthread_mutex_lock(&g_mmu);
    g_win[(g_head + g_n) % HTAD_WINDOW] = s;
    if (g_n < HTAD_WINDOW) g_n++;
    else g_head = (g_head + 1) % HTAD_WINDOW;
    g_sample_s = (htad_mono_ms() - t0) / 1000.0;
    pthread_mutex_unlock(&g_mmu);
}

void htad_metrics_jsonl(int64_t since, int64_t until, hta_sbuf *b) {
    pthread_mutex_lock(&g_mmu);
    for (size_t k = 0; k < g_n; k++) {
        const hta_metrics_sample *s = &g_win[(g_head + k) % HTAD_WINDOW];
        /* the first sample has no CPU figures yet (they are differences): left out */
        if (s->t_ms >= since && s->t_ms <= until && !isnan(s->cpu_busy)) hta_metrics_line(b, g_opt.host, s);
    }
    pthread_mutex_unlock(&g_mmu);
}

static void gauge(hta_sbuf *b, const char *name, const char *help) {
    hta_sb_printf(b, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

static void counter(hta_sbuf *b, const char *name, const char *help, uint64_t v) {
    hta_sb_printf(b, "# HELP %s %s\n# TYPE %s counter\n%s %llu\n", name, help, name, name, (unsigned long long)v);
}

/* one GPU gauge: a line per GPU that has the value */
#define GPU_GAUGE(name, help, field, cond, scale)                                                            \
    do {                                                                                                     \
        int any_ = 0;                                                                                        \
        for (int k = 0; k < s->ngpus; k++) {                                                                 \
            const hta_gpu_sample *g = &s->gpus[k];                                                           \
            if (!(cond)) continue;                                                                           \
            if (!any_++) gauge(b, name, help);                                                               \
            hta_sb_printf(b, "%s{gpu=\"%d\"} %.15g\n", name, (int)g->gpu, (double)(g->field) * (scale));     \
        }                                                                                                    \
    } while (0)

void htad_metrics_prometheus(hta_sbuf *b) {
    pthread_mutex_lock(&g_mmu);
    const hta_metrics_sample *s = g_n ? &g_win[(g_head + g_n - 1) % HTAD_WINDOW] : NULL;
    if (s && !isnan(s->cpu_busy)) {
        gauge(b, "hta_host_cpu_busy_ratio", "Fraction of all CPU time busy (not idle, not iowait) in the last interval.");
        hta_sb_printf(b, "hta_host_cpu_busy_ratio %.6g\n", s->cpu_busy);
        gauge(b, "hta_host_cpu_iowait_ratio", "Fraction of all CPU time waiting for I/O in the last interval.");
        hta_sb_printf(b, "hta_host_cpu_iowait_ratio %.6g\n", s->cpu_iowait);
    }
    if (s && s->mem_total >= 0) {
        gauge(b, "hta_host_memory_used_bytes", "Host memory in use (MemTotal - MemAvailable).");
        hta_sb_printf(b, "hta_host_memory_used_bytes %lld\n", (long long)s->mem_used);
        gauge(b, "hta_host_memory_total_bytes", "Host memory (MemTotal).");
        hta_sb_printf(b, "hta_host_memory_total_bytes %lld\n", (long long)s->mem_total);
    }
    if (s) {
        GPU_GAUGE("hta_gpu_utilization_ratio", "Fraction of the last sample period a kernel ran (NVML).", util,
                  !isnan(g->util), 1);
        GPU_GAUGE("hta_gpu_memory_used_bytes", "GPU memory in use (NVML).", mem_used, g->mem_used >= 0, 1);
        GPU_GAUGE("hta_gpu_memory_total_bytes", "GPU memory (NVML).", mem_total, g->mem_total >= 0, 1);
        GPU_GAUGE("hta_gpu_power_watts", "GPU power draw (NVML).", power_w, !isnan(g->power_w), 1);
        GPU_GAUGE("hta_gpu_sm_clock_hertz", "SM clock (NVML).", sm_clock_mhz, g->sm_clock_mhz >= 0, 1e6);
        GPU_GAUGE("hta_gpu_memory_clock_hertz", "Memory clock (NVML).", mem_clock_mhz, g->mem_clock_mhz >= 0, 1e6);
        GPU_GAUGE("hta_gpu_sm_active_ratio", "Fraction of time at least one warp was active on an SM (DCGM).",
                  sm_active, !isnan(g->sm_active), 1);
        GPU_GAUGE("hta_gpu_tensor_active_ratio", "Fraction of cycles the tensor pipes were active (DCGM).",
                  tensor_active, !isnan(g->tensor_active), 1);
    }
    gauge(b, "htad_sample_duration_seconds", "Time the last metrics sample took.");
    hta_sb_printf(b, "htad_sample_duration_seconds %.6f\n", g_sample_s);
    pthread_mutex_unlock(&g_mmu);
    pthread_mutex_lock(&mu);
    gauge(b, "htad_processes", "Processes registered by polling (libkineto with KINETO_USE_DAEMON).");
    hta_sb_printf(b, "htad_processes %zu\n", htad_nprocs());
    counter(b, "htad_captures_total", "Capture requests that triggered a trace or matched nothing.", g_captures_total);
    counter(b, "htad_traces_stored_total", "Trace files put into the store.", g_traces_stored_total);
    counter(b, "htad_traces_lost_total", "Traces never written: the process stopped polling first, or timed out.",
            g_traces_lost_total);
    counter(b, "htad_requests_total", "TCP requests received.", g_requests_total);
    counter(b, "htad_requests_refused_total", "TCP requests answered with an error, or connections refused.",
            g_requests_refused_total);
    counter(b, "htad_processes_refused_total", "Processes not registered: the table or their user's share full.",
            g_procs_refused_total);
    counter(b, "htad_retention_passes_total", "Retention passes of a folder store done (one after each capture).",
            g_retention_passes_total);
    counter(b, "htad_captures_removed_total", "Fetched captures the retention of a folder store removed.",
            g_captures_removed_total);
    counter(b, "htad_polls_dropped_total", "Datagrams dropped: malformed, or in another process's name.",
            g_polls_dropped_total);
    gauge(b, "htad_connections", "TCP connections open on both ports.");
    hta_sb_printf(b, "htad_connections %zu\n", htad_conn_count());
    pthread_mutex_unlock(&mu);
}
