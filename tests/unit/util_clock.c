/* Unit tests for lb_now_ns (src/util/clock.h): the TSC-scaled clock,
 * where this machine allows it, agrees with CLOCK_MONOTONIC; elsewhere
 * it is CLOCK_MONOTONIC. Either way it never runs backwards on one
 * thread by more than the TSC's reordering allows for (none here: one
 * thread, dependent reads), nor from one thread to another (a time one
 * thread read, then handed to another that reads after it, where the
 * scheduler puts them: on different CPUs where it has several), by more
 * than a microsecond. */
#include "check.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>

#include "util/clock.h"

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
    nanosleep(&ts, NULL);
}

static void test_agrees_with_monotonic_after_calibration(void)
{
    lb_clock_setup();
    sleep_ms(60);      /* past the 50 ms calibration */
    (void)lb_now_ns(); /* finishes it */
    printf("# tsc state %d, mult %llu\n", lb_tsc.ready, (unsigned long long)lb_tsc.mult);
    ASSERT_TRUE(lb_tsc.ready == 1 || lb_tsc.ready == -1);
    for (int round = 0; round < 5; round++) {
        uint64_t before = lb_monotonic_ns();
        uint64_t now = lb_now_ns();
        uint64_t after = lb_monotonic_ns();
        /* within the bracketing reads, give or take the scale's error
         * over this run (1e-6 x elapsed) plus 2 us */
        uint64_t slack = 2000 + (after - lb_tsc.base_ns) / 100000;
        ASSERT_GE(now + slack, before);
        ASSERT_GE(after + slack, now);
        sleep_ms(20);
    }
}

static void test_monotonic_on_one_thread(void)
{
    uint64_t last = lb_now_ns();
    for (int i = 0; i < 1000000; i++) {
        uint64_t now = lb_now_ns();
        ASSERT_GE(now, last);
        last = now;
    }
}

/* Two threads take turns: each reads the clock after it sees the time
 * the other read last, and must not find it earlier. The acquire load
 * does not order the TSC read after it (RDTSC is not serializing): a
 * microsecond of slack covers that, and a TSC whose count differs from
 * CPU to CPU (what "tsc" and kvm-clock's stable TSC rule out) shows as
 * more. */
#define HANDOVERS 20000
static uint64_t handed_ns;
static int turn;
static uint64_t worst_backwards_ns;

static void *take_turns(void *arg)
{
    int me = (int)(intptr_t)arg;
    for (int i = 0; i < HANDOVERS; i++) {
        while (__atomic_load_n(&turn, __ATOMIC_ACQUIRE) != me)
            sched_yield();
        uint64_t other = __atomic_load_n(&handed_ns, __ATOMIC_RELAXED);
        uint64_t now = lb_now_ns();
        if (other > now && other - now > worst_backwards_ns)
            worst_backwards_ns = other - now; /* (one thread at a time writes it) */
        __atomic_store_n(&handed_ns, lb_now_ns(), __ATOMIC_RELAXED);
        __atomic_store_n(&turn, 1 - me, __ATOMIC_RELEASE);
    }
    return NULL;
}

static void test_monotonic_from_thread_to_thread(void)
{
    lb_clock_setup();
    sleep_ms(60);
    (void)lb_now_ns(); /* the calibration made */
    printf("# tsc state %d\n", lb_tsc.ready);
    pthread_t other;
    ASSERT_EQ(pthread_create(&other, NULL, take_turns, (void *)(intptr_t)1), 0);
    take_turns((void *)(intptr_t)0);
    ASSERT_EQ(pthread_join(other, NULL), 0);
    printf("# worst step back from thread to thread: %llu ns\n",
           (unsigned long long)worst_backwards_ns);
    ASSERT_LE(worst_backwards_ns, 1000);
}

/* The calibration made; false (and said) where the TSC is not used here. */
static bool tsc_calibrated(void)
{
    lb_clock_setup();
    sleep_ms(60);
    (void)lb_now_ns();
    if (lb_tsc.ready != 1) {
        printf("# the TSC is not used here: nothing to verify\n");
        return false;
    }
    return true;
}

/* The verification keeps a scaled TSC that keeps pace, and drops one
 * whose scale is 1% off (a host's new TSC rate): lb_now_ns then goes on
 * at clock_gettime's pace, from no earlier than the scaled time it gave
 * last (its callers difference its values unchecked). */
static void test_verification_drops_a_tsc_off_pace(void)
{
    if (!tsc_calibrated())
        return;
    sleep_ms(110);
    lb_clock_verify();
    ASSERT_EQ(lb_tsc.ready, 1);
    lb_tsc.mult += lb_tsc.mult / 100;
    sleep_ms(110);
    uint64_t last_scaled = lb_now_ns();
    lb_clock_verify();
    ASSERT_EQ(lb_tsc.ready, -1);
    uint64_t first = lb_now_ns();
    ASSERT_GE(first, last_scaled);
    uint64_t mono_before = lb_monotonic_ns();
    sleep_ms(20);
    uint64_t later = lb_now_ns();
    uint64_t mono_after = lb_monotonic_ns();
    /* clock_gettime's pace: within the bracketing reads' span, give or
     * take the scale change's 1% of the whole run so far */
    ASSERT_LE(later - first, mono_after - mono_before + 200000);
    ASSERT_GE(later - first + 200000, mono_after - mono_before - (later - first) / 100);
}

/* A process that only reads the clock (no samples, no thread starting
 * or ending: LOCKBLAME_EVENT=none, long-lived threads) verifies it too:
 * the first read after the interval drops a scale 1% off. */
static void test_clock_reads_verify_the_tsc(void)
{
    if (!tsc_calibrated())
        return;
    sleep_ms(110);
    uint64_t kept = lb_now_ns();
    ASSERT_EQ(lb_tsc.ready, 1);
    lb_tsc.mult += lb_tsc.mult / 100;
    uint64_t until = lb_monotonic_ns() + 110000000u;
    uint64_t last = kept, reads = 0;
    while (lb_tsc.ready == 1 && lb_monotonic_ns() < until + 50000000u) {
        uint64_t now = lb_now_ns();
        ASSERT_GE(now, last);
        last = now;
        reads++;
    }
    printf("# %llu reads until the verification\n", (unsigned long long)reads);
    ASSERT_EQ(lb_tsc.ready, -1);
    ASSERT_GE(lb_now_ns(), last);
}

/* A forking parent makes a verification due before the fork, so that
 * its children inherit a fresh one (each child's first clock read would
 * otherwise make it, writing a page the child shares). */
static void test_fork_settle_verifies(void)
{
    if (!tsc_calibrated())
        return;
    sleep_ms(110);
    uint64_t before = lb_tsc.verified_tsc;
    lb_clock_settle();
    ASSERT_EQ(lb_tsc.ready, 1);
    ASSERT_GT(lb_tsc.verified_tsc - before, lb_tsc.verify_ticks);
}

/* A TSC that went back since the last verification (here: the last
 * verification's reading moved 1 s ahead of the TSC now, as if the TSC
 * had since jumped back by that much, its readers given up to there): the
 * fallback goes on from no earlier than that reading's scaled time. */
static void test_tsc_gone_back_never_steps_back(void)
{
    if (!tsc_calibrated())
        return;
    sleep_ms(110);
    uint64_t ahead = __rdtsc() + (uint64_t)((1000000000ull << 32) / lb_tsc.mult);
    uint64_t given = lb_tsc_scaled_ns(ahead);
    lb_tsc.verified_tsc = ahead;
    uint64_t after = lb_now_ns();
    ASSERT_EQ(lb_tsc.ready, -1);
    ASSERT_GE(after, given);
    ASSERT_GE(lb_now_ns(), after);
}

CHECK_MAIN(test_agrees_with_monotonic_after_calibration, test_monotonic_on_one_thread,
           test_monotonic_from_thread_to_thread, test_verification_drops_a_tsc_off_pace,
           test_clock_reads_verify_the_tsc, test_fork_settle_verifies,
           test_tsc_gone_back_never_steps_back)
