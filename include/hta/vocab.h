/* The Kineto vocabulary: how names tell kernel types, communication and
 * memory operations apart, and HTA's name shortening (analyses.md §0.4, §1).
 * Every name rule of the project lives here (src/core/vocab.c). */
#ifndef HTA_VOCAB_H
#define HTA_VOCAB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* HTA's kernel types (analyses.md §1), from the full kernel name. */
typedef enum hta_kernel_type {
    HTA_KT_COMMUNICATION,
    HTA_KT_MEMORY,
    HTA_KT_COMPUTATION,
    HTA_KT_OTHER,
} hta_kernel_type;
hta_kernel_type hta_kernel_type_of(const char *name);
const char *hta_kernel_type_name(hta_kernel_type k); /* "COMMUNICATION", ... */
/* "Memset", "Memcpy Unknown" or the first 11 characters ("Memcpy DtoH"); buf >= 12 bytes. */
const char *hta_memory_kernel_type(const char *name, char *buf);
/* Communication under any NCCL/RCCL naming (ncclKernel_*, ncclDevKernel_*, RCCL's), by name. */
int hta_is_nccl_kernel_name(const char *name);

/* HTA's shorten_name (analyses.md §0.4) into a malloc'ed string (NULL when out of memory). */
char *hta_shorten_name(const char *name);

#ifdef __cplusplus
}
#endif
#endif
