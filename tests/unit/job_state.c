/* Unit tests of what the job engine keeps per rank between its passes (src/job/internal.h): a kept label in
 * 8 bytes and the ones that do not fit, rank:R=median's totals by the job's key table as variable-length
 * integers, and a scenario's skeleton shared with scenario 0's, then given copies of its own.  The outputs
 * these feed are checked byte for byte against the whole engine in tests/cpath and tests/scale. */
#include <stdlib.h>

#include "job/internal.h"
#include "unit.h"

/* Labels at the edges of the 8-byte form read back as given, the wide ones through their list. */
static void labels_round_trip(void) {
    const sj_label v[] = {{-1, 0},
                          {-1, 123456789},
                          {0, -5},
                          {65533, (INT64_C(1) << 47) - 1},
                          {7, -(INT64_C(1) << 47)},
                          {65534, 1},                 /* the source beyond 16 bits */
                          {3, INT64_C(1) << 47},      /* d beyond 48 bits */
                          {-1, -(INT64_C(1) << 47) - 1},
                          {2, HTA_TIME_MAX_NS}};
    size_t n = sizeof v / sizeof *v;
    sj_skel k;
    memset(&k, 0, sizeof k);
    CHECK(!sj_lab_set(&k, v, n));
    CHECK_EQ_I64(k.nlab, n);
    CHECK_EQ_I64(k.nwide, 4);
    for (size_t i = 0; i < n; i++) {
        sj_label x = sj_lab(&k, i);
        CHECK_EQ_I64(x.src, v[i].src);
        CHECK_EQ_I64(x.d, v[i].d);
    }
    sj_skel_free(&k);
}

/* Two ranks' totals by one key table: the second's new key is added once, its missing ones read 0, and every
 * value (negative, 0, both ends of an int64) reads back in the table's order. */
static void totals_by_key(void) {
    struct hta_job j;
    memset(&j, 0, sizeof j);
    pthread_mutex_init(&j.lock, NULL);
    sj_rank r[2];
    memset(r, 0, sizeof r);
    const sj_tot a[] = {{10, 5}, {20, -1}, {30, INT64_MAX}, {40, INT64_MIN}, {50, 0}, {60, 128}};
    const sj_tot b[] = {{30, 64}, {70, -65}, {10, 1}};
    CHECK_EQ_I64(sj_tot_set(&j, &r[0], a, 6), 0);
    CHECK_EQ_I64(sj_tot_set(&j, &r[1], b, 3), 0);
    CHECK_EQ_I64(j.ntkey, 7);
    CHECK_EQ_I64(j.tkey[6], 70);
    const unsigned char *p = r[0].tv;
    CHECK_EQ_I64(r[0].ntv, 6);
    for (size_t k = 0; k < 6; k++) CHECK_EQ_I64(sj_tot_next(&p), a[k].ns);
    /* rank 1 by the table: 10 20 30 40 50 60 70 */
    const int64_t want[] = {1, 0, 64, 0, 0, 0, -65};
    CHECK_EQ_I64(r[1].ntv, 7);
    p = r[1].tv;
    for (size_t k = 0; k < 7; k++) CHECK_EQ_I64(sj_tot_next(&p), want[k]);
    /* a key twice with a time is a damaged list; a zero first is overwritten, as adding it would give */
    const sj_tot twice[] = {{10, 3}, {10, 4}}, zero_first[] = {{20, 0}, {20, 9}};
    CHECK_EQ_I64(sj_tot_set(&j, &r[1], twice, 2), 1);
    CHECK_EQ_I64(sj_tot_set(&j, &r[1], zero_first, 2), 0);
    p = r[1].tv;
    CHECK_EQ_I64(sj_tot_next(&p), 0);
    CHECK_EQ_I64(sj_tot_next(&p), 9);
    sj_tot_free(&r[0]);
    sj_tot_free(&r[1]);
    free(j.tkey);
    free(j.tslot);
    pthread_mutex_destroy(&j.lock);
}

/* A scenario sharing scenario 0's arrays gets copies of its own before either changes: scenario 0's own
 * change (q = 0) gives every sharer its copies, which then outlive scenario 0's arrays. */
static void shared_then_owned(void) {
    sj_skel sk[3];
    memset(sk, 0, sizeof sk);
    sj_rank R;
    memset(&R, 0, sizeof R);
    R.skel = sk, R.ncoll = 1, R.nsteps = 0;
    const sj_label v[] = {{-1, 10}, {0, INT64_C(1) << 50}};
    CHECK(!sj_lab_set(&sk[0], v, 2));
    sk[0].a_off = calloc(2, sizeof *sk[0].a_off), sk[0].s_off = calloc(2, sizeof *sk[0].s_off);
    sk[0].ref = calloc(1, sizeof *sk[0].ref), sk[0].ref[0] = 77;
    sk[0].a_off[1] = 2, sk[0].s_off[1] = 2;
    sj_skel_share(&sk[1], &sk[0]);
    sj_skel_share(&sk[2], &sk[0]);
    CHECK(sk[1].same && sk[1].lab == sk[0].lab && sk[1].ref == sk[0].ref);
    CHECK_EQ_I64(sj_skel_own(&R, 3, 0), 0);
    CHECK(!sk[1].same && !sk[2].same);
    CHECK(sk[1].lab != sk[0].lab && sk[2].ref != sk[0].ref && sk[1].wide != sk[0].wide);
    sj_skel_free(&sk[0]);
    memset(&sk[0], 0, sizeof sk[0]);
    for (int q = 1; q < 3; q++) {
        CHECK_EQ_I64(sk[q].nlab, 2);
        CHECK_EQ_I64(sj_lab(&sk[q], 1).d, INT64_C(1) << 50);
        CHECK_EQ_I64(sk[q].ref[0], 77);
        CHECK_EQ_I64(sk[q].a_off[1], 2);
        sj_skel_free(&sk[q]);
    }
}

UNIT_MAIN(T(labels_round_trip), T(totals_by_key), T(shared_then_owned))
