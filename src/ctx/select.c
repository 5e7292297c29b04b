#include <stdlib.h>

#include "hta/context.h"

size_t hta_select_ranks(const hta_trace *t, const hta_common_opts *o, size_t **idx) {
    *idx = malloc((t->nranks ? t->nranks : 1) * sizeof **idx);
    if (!*idx) return 0;
    size_t n = 0;
    for (size_t i = 0; i < t->nranks; i++) {
        int want = !o || !o->ranks;
        for (size_t k = 0; !want && k < o->nranks; k++) want = o->ranks[k] == t->ranks[i]->rank;
        if (want) (*idx)[n++] = i;
    }
    return n;
}
