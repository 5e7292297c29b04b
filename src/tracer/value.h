/* A value's check, inline for the hot path (scope.c's args) and for the context's values (context.c).
 * Its own header: inline in internal.h it would tie every file to jsonval.c, which includes internal.h. */
#ifndef HTAT_VALUE_H
#define HTAT_VALUE_H

#include <string.h>

#include "internal.h"

/* A value of a known type; JSON text that parses and is not cut. */
static inline int htat_value_valid(const hta_tracer_value *v)
{
    switch (v->type) {
    case HTA_TRACER_INT:
    case HTA_TRACER_DOUBLE:
    case HTA_TRACER_STR:
    case HTA_TRACER_BOOL:
    case HTA_TRACER_NULL:
        return 1;
    case HTA_TRACER_JSON: {
        /* written verbatim: it must parse, and must not be cut */
        size_t n = v->u.s ? strnlen(v->u.s, HTAT_MAX_STR + 1) : 0;
        return n > 0 && n <= HTAT_MAX_STR && htat_json_valid(v->u.s, n);
    }
    default:
        return 0;
    }
}

#endif
