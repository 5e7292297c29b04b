/* A fake DCGM (libdcgm) for htad's tests: the calls htad makes, with the structure layout of DCGM's
 * dcgm_structs.h (dcgmFieldValue_v1, src/daemon/dcgm_abi.h).  SM activity FAKE_DCGM_SM_ACTIVE (0.09)
 * and tensor-core activity FAKE_DCGM_TENSOR_ACTIVE (0.0) on every GPU, as in MAIProf's case study. */
#include <stdint.h>
#include <stdlib.h>

/* built with -fvisibility=hidden like the tracer (mk/tracer.mk): the API must be exported */
#pragma GCC visibility push(default)

#include "daemon/dcgm_abi.h"

static double env(const char *name, double def) {
    const char *v = getenv(name);
    return v && *v ? atof(v) : def;
}

int dcgmInit(void);
int dcgmShutdown(void);
int dcgmConnect(const char *ip, uintptr_t *h);
int dcgmStartEmbedded(int mode, uintptr_t *h);
int dcgmFieldGroupCreate(uintptr_t h, int n, unsigned short *ids, const char *name, uintptr_t *g);
int dcgmWatchFields(uintptr_t h, uintptr_t grp, uintptr_t fg, long long freq, double age, int samples);
int dcgmUpdateAllFields(uintptr_t h, int wait);
int dcgmGetLatestValuesForFields(uintptr_t h, int gpu, unsigned short *f, unsigned n, dcgm_value *v);

int dcgmInit(void) { return 0; }
int dcgmShutdown(void) { return 0; }
int dcgmConnect(const char *ip, uintptr_t *h) { return -2; } /* no host engine: embedded */
int dcgmStartEmbedded(int mode, uintptr_t *h) { return *h = 1, 0; }
int dcgmFieldGroupCreate(uintptr_t h, int n, unsigned short *ids, const char *name, uintptr_t *g) {
    return *g = 7, 0;
}
int dcgmWatchFields(uintptr_t h, uintptr_t grp, uintptr_t fg, long long freq, double age, int samples) { return 0; }
int dcgmUpdateAllFields(uintptr_t h, int wait) { return 0; }
int dcgmGetLatestValuesForFields(uintptr_t h, int gpu, unsigned short *f, unsigned n, dcgm_value *v) {
    if ((v[0].version & 0xffffff) != sizeof(dcgm_value)) return -5; /* DCGM_ST_VER_MISMATCH */
    for (unsigned k = 0; k < n; k++) {
        v[k].fieldId = f[k];
        v[k].fieldType = 'd';
        v[k].status = 0;
        v[k].value.dbl = f[k] == 1002 ? env("FAKE_DCGM_SM_ACTIVE", 0.09) : env("FAKE_DCGM_TENSOR_ACTIVE", 0.0);
    }
    return 0;
}
