/* Statistics as pandas computes them: round half to even, describe(), linear
 * quantiles.  HTA's tables are pandas output, so these decide its digits. */
#include "hta/util.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


double hta_round(double x, int d) {
    double p = pow(10.0, d);
    return rint(x * p) / p;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double hta_quantile_sorted(const double *v, size_t n, double q) {
    if (!n) return NAN;
    double h = (double)(n - 1) * q;
    size_t lo = (size_t)floor(h);
    if (lo + 1 >= n) return v[n - 1];
    return v[lo] + (h - (double)lo) * (v[lo + 1] - v[lo]);
}

void hta_describe_values(double *v, size_t n, hta_describe *o) {
    o->count = (double)n;
    if (!n) {
        o->mean = o->std = o->min = o->p25 = o->p50 = o->p75 = o->max = NAN;
        return;
    }
    qsort(v, n, sizeof *v, cmp_d);
    double s = 0;
    for (size_t i = 0; i < n; i++) s += v[i];
    o->mean = s / (double)n;
    if (n > 1) {
        double ss = 0;
        for (size_t i = 0; i < n; i++) ss += (v[i] - o->mean) * (v[i] - o->mean);
        o->std = sqrt(ss / (double)(n - 1));
    } else {
        o->std = NAN;
    }
    o->min = v[0];
    o->max = v[n - 1];
    o->p25 = hta_quantile_sorted(v, n, 0.25);
    o->p50 = hta_quantile_sorted(v, n, 0.5);
    o->p75 = hta_quantile_sorted(v, n, 0.75);
}
