/* A fake NVML (libnvidia-ml) for htad's tests, as the tracer's tests have a fake CUDA runtime: the
 * few calls htad makes, with figures the tests choose through the environment:
 *   FAKE_NVML_GPUS (2), FAKE_NVML_UTIL (percent, 97), FAKE_NVML_MEM_USED_MB (40000) of 81920 MB,
 *   FAKE_NVML_IDLE_EVERY=N: every N-th utilisation read of a GPU says 0% (a GPU idle every N samples).
 * Power 250 W, SM clock 1410 MHz, memory clock 1593 MHz. */
#include <stdlib.h>

/* built with -fvisibility=hidden like the tracer (mk/tracer.mk): the API must be exported */
#pragma GCC visibility push(default)

typedef struct { unsigned gpu, memory; } nvml_util;
typedef struct { unsigned long long total, free, used; } nvml_mem;

static long env(const char *name, long def) {
    const char *v = getenv(name);
    return v && *v ? atol(v) : def;
}

static int g_init;
static unsigned g_reads[64];
static char g_dev[64]; /* handles are addresses in here */

int nvmlInit_v2(void);
int nvmlShutdown(void);
int nvmlDeviceGetCount_v2(unsigned *n);
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **h);
int nvmlDeviceGetUtilizationRates(void *h, nvml_util *u);
int nvmlDeviceGetMemoryInfo(void *h, nvml_mem *m);
int nvmlDeviceGetPowerUsage(void *h, unsigned *mw);
int nvmlDeviceGetClockInfo(void *h, int type, unsigned *mhz);

int nvmlInit_v2(void) { return g_init = 1, 0; }
int nvmlShutdown(void) { return g_init = 0, 0; }
int nvmlDeviceGetCount_v2(unsigned *n) {
    *n = (unsigned)env("FAKE_NVML_GPUS", 2);
    return g_init ? 0 : 1;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **h) {
    if (i >= 64) return 2;
    *h = &g_dev[i];
    return 0;
}
int nvmlDeviceGetUtilizationRates(void *h, nvml_util *u) {
    unsigned i = (unsigned)((char *)h - g_dev);
    long every = env("FAKE_NVML_IDLE_EVERY", 0);
    unsigned r = ++g_reads[i];
    u->gpu = every > 0 && r % (unsigned)every == 0 ? 0 : (unsigned)env("FAKE_NVML_UTIL", 97);
    u->memory = u->gpu / 2;
    return 0;
}
int nvmlDeviceGetMemoryInfo(void *h, nvml_mem *m) {
    m->total = 81920ull << 20;
    m->used = (unsigned long long)env("FAKE_NVML_MEM_USED_MB", 40000) << 20;
    m->free = m->total - m->used;
    return 0;
}
int nvmlDeviceGetPowerUsage(void *h, unsigned *mw) { return *mw = 250000, 0; }
int nvmlDeviceGetClockInfo(void *h, int type, unsigned *mhz) {
    *mhz = type == 2 ? 1593 : 1410;
    return 0;
}
