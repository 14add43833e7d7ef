/* Unit tests for an OpenMP share's weighted samples (src/sampler/omp_share.c):
 * a sample weighs periods x idle / working teammates, nothing while no
 * teammate idles, one slot per context, the overflow kept as unplaced
 * weight, and forget starts over. */
#include "check.h"

#include "sampler/omp_share.h"

static lb_cct_node_t nodes[LB_OMP_SHARE_SLOTS + 2];

static void test_weight_is_idle_over_working(void)
{
    uint32_t ended = 0, waiting = 0;
    lb_omp_share_t share;
    lb_omp_share_init(&share, &ended, &waiting, 4, 1);
    lb_omp_share_sample(&share, &nodes[0], 1); /* nobody idles: not recorded */
    ASSERT_EQ(share.used, 0);
    ended = 1;
    lb_omp_share_sample(&share, &nodes[0], 2); /* 2 x 1/3 */
    waiting = 1;
    lb_omp_share_sample(&share, &nodes[0], 1); /* 1 x 2/2 */
    ASSERT_EQ(share.used, 1);
    ASSERT_PTR_EQ(share.slot[0].node, &nodes[0]);
    ASSERT_NEAR(share.slot[0].weight, 2.0 / 3.0 + 1.0, 1e-12);
    ended = 3;
    waiting = 1; /* the whole team idle: not a working thread's sample */
    lb_omp_share_sample(&share, &nodes[1], 1);
    ASSERT_EQ(share.used, 1);
}

static void test_without_barrier_waiters(void)
{
    uint32_t ended = 2;
    lb_omp_share_t share;
    lb_omp_share_init(&share, &ended, NULL, 3, 1);
    lb_omp_share_sample(&share, &nodes[3], 1);
    ASSERT_NEAR(share.slot[0].weight, 2.0, 1e-12);
}

static void test_overflow_is_unplaced_and_forget_clears(void)
{
    uint32_t ended = 1;
    lb_omp_share_t share;
    lb_omp_share_init(&share, &ended, NULL, 2, 1);
    for (int i = 0; i < LB_OMP_SHARE_SLOTS + 2; i++)
        lb_omp_share_sample(&share, &nodes[i], 1);
    ASSERT_EQ(share.used, LB_OMP_SHARE_SLOTS);
    ASSERT_NEAR(share.unplaced, 2.0, 1e-12);
    lb_omp_share_forget(&share);
    ASSERT_EQ(share.used, 0);
    ASSERT_NEAR(share.unplaced, 0.0, 1e-12);
}

CHECK_MAIN(test_weight_is_idle_over_working, test_without_barrier_waiters,
           test_overflow_is_unplaced_and_forget_clears)
