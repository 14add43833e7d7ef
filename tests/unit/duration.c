/* Unit tests for src/common/duration.h: the durations LOCKBLAME_INTERVAL
 * and `lockblame run --interval` accept, with their units, and what they
 * refuse.
 */
#include "check.h"

#include "common/duration.h"

static uint64_t ns_of(const char *s)
{
    uint64_t ns = 12345;
    ASSERT_TRUE(lb_parse_duration(s, &ns));
    return ns;
}

static void test_units(void)
{
    ASSERT_EQ(ns_of("10s"), 10000000000ull);
    ASSERT_EQ(ns_of("10"), 10000000000ull);
    ASSERT_EQ(ns_of("500ms"), 500000000ull);
    ASSERT_EQ(ns_of("1.5m"), 90000000000ull);
    ASSERT_EQ(ns_of("2h"), 7200000000000ull);
    ASSERT_EQ(ns_of("0"), 0);
}

static void test_refused(void)
{
    const char *bad[] = { "", "s", "10x", "-1s", "1 s", "nan", "10ss", "1e9h" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        uint64_t ns = 7;
        ASSERT_FALSE(lb_parse_duration(bad[i], &ns));
    }
    uint64_t ns = 7;
    ASSERT_FALSE(lb_parse_duration(NULL, &ns));
}

CHECK_MAIN(test_units, test_refused)
