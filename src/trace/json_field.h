/* Internal to src/trace/: one field of a small JSON object's text (json_field.c), for the parser,
 * load.c's probe of a file's distributedInfo.rank, and merged traces. */
#ifndef HTA_TRACE_JSON_FIELD_H
#define HTA_TRACE_JSON_FIELD_H

#include <stdint.h>

#include "trace/json_lex.h"

/* An integer member of obj (the text of an object already checked by lex_skip_value, in a buffer with
 * the lexer's sentinel and padding): 0 and *v, -1 when absent or no number, -2 (*at at the value) when a
 * number that is no exact int64 integer. */
int json_int_member(lex *L, const char *obj, const char *key, int64_t *v, const char **at);

/* The integer value of "key" in a small JSON object's text (distributedInfo), or -1. */
int64_t hta_json_int_field(const char *json, const char *key);

#endif
