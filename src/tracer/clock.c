/* The CPU clock.  Scopes read a raw counter: the TSC where it is invariant
 * (about 10 ns a read; clock_gettime costs 25+ ns in many VMs), else
 * CLOCK_MONOTONIC in ns.  Raw TSC values become CLOCK_MONOTONIC ns at flush,
 * by a line through two (tsc, monotonic) points: one at init, one at flush.
 * HTA_TRACE_CLOCK=monotonic forces the portable clock.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

#ifdef HTAT_HAVE_TSC
#include <cpuid.h>
#endif

int htat_clock_tsc;
static uint64_t calib_raw0;
static int64_t calib_ns0;

int64_t htat_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t htat_unix_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#ifdef HTAT_HAVE_TSC
static int tsc_invariant(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
        return 0;
    __get_cpuid(0x80000007u, &a, &b, &c, &d);
    return (d >> 8) & 1; /* invariant TSC */
}

/* A (tsc, monotonic ns) pair read as close together as the machine allows. */
static void tsc_pair(uint64_t *raw, int64_t *ns)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 7; i++) {
        uint64_t a = __rdtsc();
        int64_t n = htat_mono_ns();
        uint64_t b = __rdtsc();
        if (b - a < best) {
            best = b - a;
            *raw = a + (b - a) / 2;
            *ns = n;
        }
    }
}
#endif

void htat_clock_setup(void)
{
    htat_clock_tsc = 0;
#ifdef HTAT_HAVE_TSC
    const char *e = getenv("HTA_TRACE_CLOCK");
    if (!(e && strcmp(e, "monotonic") == 0) && (tsc_invariant() || (e && strcmp(e, "tsc") == 0))) {
        tsc_pair(&calib_raw0, &calib_ns0);
        htat_clock_tsc = 1;
        return;
    }
#endif
    calib_ns0 = htat_mono_ns();
    calib_raw0 = (uint64_t)calib_ns0;
}

const char *htat_clock_name(void)
{
    return htat_clock_tsc ? "tsc" : "monotonic";
}

void htat_clock_map_now(htat_clock_map *m)
{
    if (!htat_clock_tsc) {
        m->raw0 = 0;
        m->ns0 = 0;
        m->ns_per_raw = 1.0;
        return;
    }
#ifdef HTAT_HAVE_TSC
    uint64_t raw1 = 0; /* gcc -O3 cannot see tsc_pair always sets them */
    int64_t ns1 = 0;
    tsc_pair(&raw1, &ns1);
    int64_t span = ns1 - calib_ns0;
    if (span < 20000000) { /* a short baseline gives a poor slope: widen it */
        struct timespec w = {0, (long)(20000000 - span)};
        nanosleep(&w, NULL);
        tsc_pair(&raw1, &ns1);
    }
    m->raw0 = calib_raw0;
    m->ns0 = calib_ns0;
    m->ns_per_raw = raw1 > calib_raw0 ? (double)(ns1 - calib_ns0) / (double)(raw1 - calib_raw0) : 1.0;
#endif
}
