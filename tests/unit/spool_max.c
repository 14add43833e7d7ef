/* Unit tests for lb_spool_max_setting (src/common/spool.h) and the
 * parser under it (src/common/parse_u64.h): the values LOCKBLAME_SPOOL_MAX
 * accepts, and what a refused one gives (the default, and a line); and
 * the batch a process on the bound's duty adds (report/writer/spool_bound.h).
 */
#include <errno.h>
#include <string.h>

#include "check.h"

#include "common/parse_u64.h"
#include "common/spool.h"
#include "report/writer/spool_bound.h"

static unsigned setting(const char *v, char *why, size_t size)
{
    return lb_spool_max_setting(v, why, size);
}

static void test_accepted(void)
{
    char why[256];
    ASSERT_EQ(setting(NULL, why, sizeof why), LB_SPOOL_MAX_DEFAULT);
    ASSERT_EQ(why[0], '\0');
    ASSERT_EQ(setting("", why, sizeof why), LB_SPOOL_MAX_DEFAULT);
    ASSERT_EQ(why[0], '\0');
    ASSERT_EQ(setting("0", why, sizeof why), 0);
    ASSERT_EQ(why[0], '\0');
    ASSERT_EQ(setting("8", why, sizeof why), 8);
    ASSERT_EQ(why[0], '\0');
    ASSERT_EQ(setting("4294967295", why, sizeof why), 4294967295u);
}

static void test_refused(void)
{
    const char *bad[] = { "8x", "-1", " 8", "+8", "lots", "4294967296", "1e3" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char why[256] = "";
        ASSERT_EQ(setting(bad[i], why, sizeof why), LB_SPOOL_MAX_DEFAULT);
        ASSERT_TRUE(strstr(why, "LOCKBLAME_SPOOL_MAX") != NULL);
        ASSERT_TRUE(strstr(why, bad[i]) != NULL);
    }
}

static void test_parse_keeps_errno(void)
{
    uint64_t v = 7;
    errno = EINTR;
    ASSERT_FALSE(lb_parse_u64("99999999999999999999999", 0, UINT64_MAX, &v));
    ASSERT_EQ(errno, EINTR);
    ASSERT_EQ(v, 7);
    ASSERT_TRUE(lb_parse_u64("42", 1, 100, &v));
    ASSERT_EQ(v, 42);
    ASSERT_FALSE(lb_parse_u64("0", 1, 100, &v));
    ASSERT_FALSE(lb_parse_u64(NULL, 0, 1, &v));
}

/* A process on the bound's duty adds the bound's worth, from 64 to 256. */
static void test_duty_batch(void)
{
    ASSERT_EQ(lb_spool_duty_batch(8), 64);
    ASSERT_EQ(lb_spool_duty_batch(64), 64);
    ASSERT_EQ(lb_spool_duty_batch(100), 100);
    ASSERT_EQ(lb_spool_duty_batch(LB_SPOOL_MAX_DEFAULT), 256);
    ASSERT_EQ(lb_spool_duty_batch(100000), 256);
}

CHECK_MAIN(test_accepted, test_refused, test_parse_keeps_errno, test_duty_batch)
