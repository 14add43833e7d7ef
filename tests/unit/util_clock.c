/* Unit tests for lb_now_ns (src/util/clock.h): the TSC-scaled clock,
 * where this machine allows it, agrees with CLOCK_MONOTONIC; elsewhere
 * it is CLOCK_MONOTONIC. Either way it never runs backwards on one
 * thread by more than the TSC's reordering allows for (none here: one
 * thread, dependent reads). */
#include "check.h"

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

CHECK_MAIN(test_agrees_with_monotonic_after_calibration, test_monotonic_on_one_thread)
