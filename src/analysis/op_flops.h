/* Internal to efficiency: the FLOPs and bytes of one operator call from its recorded arguments
 * (op_flops.c, docs/efficiency.md "Formulas"). */
#ifndef HTA_OP_FLOPS_H
#define HTA_OP_FLOPS_H

#include <stdint.h>

#include "hta/efficiency.h"
#include "hta/vocab.h"

typedef struct op_fig {
    int64_t flops, bytes; /* one call's; -1: none (bytes-only operators have bytes and no FLOPs) */
    hta_peak_dtype pdt;   /* whose peak applies */
    int vector;           /* 1: its FLOPs run on the vector units (norms, softmax), 0: the tensor cores */
    char extra[96];       /* arguments the formula read, appended to the shape */
    const char *note;     /* why a figure is missing (static text), NULL when none is */
    char shape[512];      /* op_roofline's shape: tensor dims and extra */
    char dtype[64];       /* op_roofline's dtype: the tensor inputs' dtypes */
} op_fig;

/* The figures of formula k (arg: hta_op_formula_of's position) for the JSON texts of Input Dims, Input type,
 * Input Strides and Concrete Inputs (each but dims NULL when not recorded). */
void op_flops(hta_op_formula k, int arg, const char *dims, const char *types, const char *strides,
              const char *concrete, op_fig *f);

/* The largest plain tensor among Input Dims / Input type (JSON texts): its elements, element size and dtype
 * as recorded (copied into dtype[cap]).  0: none, or not understood. */
int op_largest_tensor(const char *dims, const char *types, int64_t *elems, int *elsize, char *dtype, size_t cap);

/* A pointwise operator's functional arguments (aten::mul: 2), for op_flops' arg of HTA_OPF_ELTWISE: a call
 * with more, the last a tensor, is the out= overload.  0: not known. */
int op_eltwise_nargs(const char *name);

/* p past JSON white space. */
const char *op_skip_ws(const char *p);

#endif
