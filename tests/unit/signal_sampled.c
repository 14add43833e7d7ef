/* Unit tests for the choice of N for hot conds and semaphores
 * (src/blame/signal_sampled.h, "How many"): a thread's countdowns have
 * mean LB_SIGNAL_SAMPLE_EVERY until it signals faster than
 * LB_SIGNAL_MARKS_PER_S * that a second; then N grows with the rate, a
 * power of two, so that the thread marks about LB_SIGNAL_MARKS_PER_S
 * intervals a second, up to LB_SIGNAL_SAMPLE_MAX. And the gap look's
 * reading of glibc's cond ("Their cost"): whether a signal wakes anyone. */
#include "check.h"

#include <pthread.h>
#include <sched.h>

#include "blame/signal_sampled.h"

#define MS UINT64_C(1000000)

/* The rate the thread marks at with the N chosen for `rate` signals a
 * second: rate / N. */
static double marks_per_s(uint32_t rate)
{
    uint32_t lg = lb_signal_every_log2(rate / 100, 10 * MS); /* 10 ms of it */
    return (double)rate / (double)(1u << lg);
}

static void test_slow_threads_keep_the_minimum(void)
{
    ASSERT_EQ(lb_signal_every_log2(16, 1 * MS), LB_SIGNAL_SAMPLE_EVERY_LOG2);   /* 16K/s */
    ASSERT_EQ(lb_signal_every_log2(16, 250 * MS), LB_SIGNAL_SAMPLE_EVERY_LOG2); /* 64/s */
    ASSERT_EQ(lb_signal_every_log2(0, 1 * MS), LB_SIGNAL_SAMPLE_EVERY_LOG2);
    /* just under LB_SIGNAL_MARKS_PER_S marks a second at twice the minimum N */
    uint32_t edge = LB_SIGNAL_MARKS_PER_S * LB_SIGNAL_SAMPLE_EVERY * 2;
    ASSERT_EQ(lb_signal_every_log2(edge / 1000 - 1, 1 * MS), LB_SIGNAL_SAMPLE_EVERY_LOG2);
    ASSERT_EQ(lb_signal_every_log2(edge / 1000, 1 * MS), LB_SIGNAL_SAMPLE_EVERY_LOG2 + 1);
}

static void test_fast_threads_mark_at_the_target_rate(void)
{
    /* from 2x the rate where N leaves the minimum to where it is capped,
     * the marks a second stay within a factor 2 of the target */
    uint32_t from = LB_SIGNAL_MARKS_PER_S * LB_SIGNAL_SAMPLE_EVERY * 2;
    uint32_t to = LB_SIGNAL_MARKS_PER_S * LB_SIGNAL_SAMPLE_MAX;
    for (uint32_t rate = from; rate <= to; rate += from / 2) {
        double m = marks_per_s(rate);
        ASSERT_TRUE(m >= LB_SIGNAL_MARKS_PER_S && m < 2.0 * LB_SIGNAL_MARKS_PER_S);
    }
    /* a producer at 250K signals a second: N 32 (7.8K marks a second);
     * at a million: the maximum */
    ASSERT_EQ(lb_signal_every_log2(250, 1 * MS), 5);
    ASSERT_EQ(lb_signal_every_log2(1000, 1 * MS), LB_SIGNAL_SAMPLE_MAX_LOG2);
}

static void test_the_maximum_and_odd_clocks(void)
{
    ASSERT_EQ(lb_signal_every_log2(2047, 1000), LB_SIGNAL_SAMPLE_MAX_LOG2); /* 2G/s */
    ASSERT_EQ(lb_signal_every_log2(2047, 0), LB_SIGNAL_SAMPLE_MAX_LOG2);    /* no time */
    ASSERT_EQ(lb_signal_every_log2(UINT32_MAX, 1), LB_SIGNAL_SAMPLE_MAX_LOG2);
    /* a countdown that took days (an idle thread): the minimum, no overflow */
    ASSERT_EQ(lb_signal_every_log2(2047, UINT64_C(1) << 60), LB_SIGNAL_SAMPLE_EVERY_LOG2);
    ASSERT_EQ(1u << LB_SIGNAL_SAMPLE_EVERY_LOG2, LB_SIGNAL_SAMPLE_EVERY);
    ASSERT_EQ(1u << LB_SIGNAL_SAMPLE_MAX_LOG2, LB_SIGNAL_SAMPLE_MAX);
}

/* The gap look's skips ("Gaps"): a run of signals with waiters that took
 * at most one grain (8.192 us) at the thread's rate, up to the cap. */
static void test_gap_skips_span_one_grain(void)
{
    const uint64_t grain = UINT64_C(1) << LB_SIGNAL_GAP_GRAIN_LOG2;
    /* one signal with waiters a grain or slower: every one looks */
    ASSERT_EQ(lb_signal_gap_skip_log2(1, grain), 0);
    ASSERT_EQ(lb_signal_gap_skip_log2(64, 64 * MS), 0);
    ASSERT_EQ(lb_signal_gap_skip_log2(0, 1 * MS), 0);
    /* 2 / 4 / 8 a grain: runs of 2 / 4 / 8, never longer than a grain */
    ASSERT_EQ(lb_signal_gap_skip_log2(2, grain), 1);
    ASSERT_EQ(lb_signal_gap_skip_log2(63, 16 * grain), 1);
    ASSERT_EQ(lb_signal_gap_skip_log2(64, 16 * grain), 2);
    ASSERT_EQ(lb_signal_gap_skip_log2(40, 5 * grain), 3);
    for (uint32_t n = 1; n < 200; n += 7) {
        uint64_t t = 3 * grain + 1001;
        uint32_t k = lb_signal_gap_skip_log2(n, t);
        ASSERT_TRUE((t << k) <= (uint64_t)n * grain || k == 0); /* a run takes <= a grain */
        ASSERT_TRUE(k == LB_SIGNAL_GAP_SKIP_MAX_LOG2 || (t << (k + 1)) > (uint64_t)n * grain);
    }
    /* a producer at 2M signals with waiters a second: the cap (16) */
    ASSERT_EQ(lb_signal_gap_skip_log2(64, 32000), LB_SIGNAL_GAP_SKIP_MAX_LOG2);
    ASSERT_EQ(lb_signal_gap_skip_log2(UINT32_MAX, 0), LB_SIGNAL_GAP_SKIP_MAX_LOG2);
    /* days: no overflow */
    ASSERT_EQ(lb_signal_gap_skip_log2(UINT32_MAX, UINT64_C(1) << 60), 0);
}

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t queue_cond = PTHREAD_COND_INITIALIZER;
static int released;

static void *waiter(void *arg)
{
    pthread_mutex_lock(&queue_lock);
    while (!released)
        pthread_cond_wait(&queue_cond, &queue_lock);
    pthread_mutex_unlock(&queue_lock);
    return arg;
}

/* Two threads wait; the main thread holds the mutex from then on, so no
 * wait begins or ends meanwhile. The first signal wakes one (G2 becomes
 * G1), the second the other; a third would wake nobody, although glibc
 * may still count both in __wrefs (they have not left their wait). */
static void test_cond_wakes_as_glibc_says(void)
{
    ASSERT_TRUE(!lb_signal_has_waiters(&queue_cond, LB_OBJ_COND));
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        ASSERT_EQ(pthread_create(&t[i], NULL, waiter, NULL), 0);
    while ((__atomic_load_n(&queue_cond.__data.__wrefs, __ATOMIC_ACQUIRE) >> 3) < 2)
        sched_yield();
    pthread_mutex_lock(&queue_lock);
    ASSERT_TRUE(lb_signal_has_waiters(&queue_cond, LB_OBJ_COND));
    ASSERT_TRUE(lb_cond_wakes(&queue_cond)); /* both in G2 */
    pthread_cond_signal(&queue_cond);
    ASSERT_TRUE(lb_cond_wakes(&queue_cond)); /* one left in G1 */
    pthread_cond_signal(&queue_cond);
    ASSERT_TRUE(!lb_cond_wakes(&queue_cond)); /* both signalled */
    released = 1;
    pthread_mutex_unlock(&queue_lock);
    for (int i = 0; i < 2; i++)
        ASSERT_EQ(pthread_join(t[i], NULL), 0);
}

CHECK_MAIN(test_slow_threads_keep_the_minimum, test_fast_threads_mark_at_the_target_rate,
           test_the_maximum_and_odd_clocks, test_gap_skips_span_one_grain,
           test_cond_wakes_as_glibc_says)
