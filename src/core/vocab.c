/* The Kineto vocabulary: which names are kernels of which type, communication,
 * memory operations; HTA's name shortening.  One place for every name rule. */
#include "hta/vocab.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int starts(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

hta_kernel_type hta_kernel_type_of(const char *n) {
    if (starts(n, "nccl") || starts(n, "hip") || starts(n, "hccl") || strstr(n, "ncclKernel"))
        return HTA_KT_COMMUNICATION;
    if (starts(n, "Memcpy") || starts(n, "Memset") || starts(n, "dma")) return HTA_KT_MEMORY;
    static const char *const pre[] = {"nccl", "Stream Wait Event", "runFunction", "hip", "job_exe", "packet",
                                      "pe_exe", "cpum_exe_subgraph", "hccl", "collective_subgraph_execution"};
    static const char *const sub[] = {"Memcpy", "Memset", "dma", "Sync"};
    for (size_t i = 0; i < sizeof pre / sizeof *pre; i++)
        if (starts(n, pre[i])) return HTA_KT_OTHER;
    for (size_t i = 0; i < sizeof sub / sizeof *sub; i++)
        if (strstr(n, sub[i])) return HTA_KT_OTHER;
    if (starts(n, "cuda") && strstr(n + 4, "LaunchKernel")) return HTA_KT_OTHER;
    return HTA_KT_COMPUTATION;
}

const char *hta_kernel_type_name(hta_kernel_type k) {
    switch (k) {
    case HTA_KT_COMMUNICATION: return "COMMUNICATION";
    case HTA_KT_MEMORY: return "MEMORY";
    case HTA_KT_COMPUTATION: return "COMPUTATION";
    case HTA_KT_OTHER: return "OTHER";
    }
    return "OTHER";
}

const char *hta_memory_kernel_type(const char *name, char *buf) {
    if (starts(name, "Memset")) return "Memset";
    if (!starts(name, "Memcpy")) return "Memcpy Unknown";
    memcpy(buf, name, 11);
    buf[11] = 0;
    return buf;
}

int hta_is_nccl_kernel_name(const char *n) {
    return starts(n, "nccl") || strstr(n, "ncclKernel") || strstr(n, "ncclDevKernel") || starts(n, "rccl") ||
           strstr(n, "rcclKernel") || starts(n, "hccl");
}

char *hta_shorten_name(const char *name) {
    if (starts(name, "Memcpy") || starts(name, "Memset") || starts(name, "hipMemcpy") ||
        starts(name, "hipMemset") || starts(name, "dma") || (!strchr(name, '<') && !strchr(name, '(')))
        return strdup(name);
    size_t n = strlen(name);
    char *st = malloc(n + 1);
    if (!st) return NULL;
    size_t sp = 0;
    for (size_t i = 0; i < n; i++) {
        if (name[i] == '-' && name[i + 1] == '>') {
            i++;
            continue;
        }
        char c = name[i];
        if (c == '>' || c == ')') {
            char open = c == '>' ? '<' : '(';
            while (sp && st[sp - 1] != open) sp--;
            if (sp) sp--;
            continue;
        }
        st[sp++] = c;
    }
    st[sp] = 0;
    char *last = strrchr(st, ' ');
    char *res = strdup(last ? last + 1 : st);
    free(st);
    return res;
}
