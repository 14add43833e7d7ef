/* Unit tests for src/common/idle_cpu.h: /proc/stat's first line parsed,
 * and the idle CPUs between two looks, as `lockblame run`'s merger reads
 * them to add pending profiles while CPU goes unused. */
#include "check.h"

#include "common/idle_cpu.h"

static void test_parse(void)
{
    lb_cpu_times_t t = { 0 };
    /* user nice system idle iowait irq softirq steal guest guest_nice */
    ASSERT_TRUE(lb_cpu_times_parse("cpu  100 2 30 400 5 6 7 8 50 1\n", &t));
    ASSERT_EQ(t.idle, 405u);  /* idle + iowait */
    ASSERT_EQ(t.total, 558u); /* the first eight: guest time is in user's */
    ASSERT_TRUE(lb_cpu_times_parse("cpu 1 2 3 4", &t)); /* an old kernel's four fields */
    ASSERT_EQ(t.idle, 4u);
    ASSERT_EQ(t.total, 10u);
    ASSERT_FALSE(lb_cpu_times_parse("cpu0 1 2 3 4 5 6 7 8\n", &t)); /* one CPU's line */
    ASSERT_FALSE(lb_cpu_times_parse("cpu  1 2 3\n", &t));
    ASSERT_FALSE(lb_cpu_times_parse("intr 1 2 3 4\n", &t));
    ASSERT_FALSE(lb_cpu_times_parse(NULL, &t));
}

static void test_idle_between(void)
{
    lb_cpu_times_t a = { .idle = 1000, .total = 5000 };
    lb_cpu_times_t b = { .idle = 1100, .total = 5200 }; /* half the time idle */
    ASSERT_TRUE(lb_cpu_idle_between(&a, &b, 2) == 1.0); /* one CPU of two */
    ASSERT_TRUE(lb_cpu_idle_between(&a, &b, 16) == 8.0);
    lb_cpu_times_t busy = { .idle = 1000, .total = 5200 };
    ASSERT_TRUE(lb_cpu_idle_between(&a, &busy, 2) == 0.0);
    ASSERT_TRUE(lb_cpu_idle_between(&a, &a, 2) == 0.0); /* no time passed */
    ASSERT_TRUE(lb_cpu_idle_between(&b, &a, 2) == 0.0); /* counters back */
    ASSERT_TRUE(lb_cpu_idle_between(&a, &b, 0) == 0.0);
}

static void test_read(void)
{
    lb_cpu_times_t t = { 0 };
    ASSERT_TRUE(lb_cpu_times_read(&t)); /* Linux: /proc/stat is there */
    ASSERT_TRUE(t.total > 0 && t.idle <= t.total);
}

CHECK_MAIN(test_parse, test_idle_between, test_read)
