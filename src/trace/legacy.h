/* PyTorch <= 1.9's trace schema read as today's (legacy.c); internal to the trace layer. */
#ifndef HTA_TRACE_LEGACY_H
#define HTA_TRACE_LEGACY_H

#include "hta/trace.h"

/* After the symbols are global and before the derivations: the old categories become today's names
 * (rows moved to today's category where the file has both), and the runtime calls' and kernels'
 * "external id" fills the external_id column where "External id" left it -1.  Sets *legacy when the
 * trace had any of it. */
hta_status hta_legacy_names(hta_trace *t, int *legacy, hta_error *err);

#endif
