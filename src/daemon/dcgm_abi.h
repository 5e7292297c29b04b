/* The one structure of DCGM's ABI that htad reads (dcgmFieldValue_v1, as dcgm_structs.h lays it out),
 * declared by hand so that nothing of CUDA or DCGM is needed to build htad; the fake libdcgm of the
 * tests (tests/daemon/fake_dcgm.c) hands out the same layout. */
#ifndef HTA_DAEMON_DCGM_ABI_H
#define HTA_DAEMON_DCGM_ABI_H

#include <stdint.h>

typedef struct {
    unsigned version;
    unsigned short fieldId, fieldType;
    int status;
    int64_t ts;
    union { int64_t i64; double dbl; char str[256]; char blob[4096]; } value;
} dcgm_value;

#endif
