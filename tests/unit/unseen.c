/* Unit tests for the unseen-waits rule and text (src/common/unseen.h),
 * the run delay read (src/util/run_delay.h) and which threads' delay the
 * write reads (src/report/writer/tables.c). */
#include "check.h"

#include <string.h>
#include <unistd.h>

#include "common/unseen.h"
#include "report/writer/writer_int.h"
#include "sampler/sampler.h"
#include "util/run_delay.h"

static void test_rule_needs_amount_share_and_more_than_seen(void)
{
    ASSERT_TRUE(lb_unseen_notable(0.5, 1.0, 0.1));
    ASSERT_FALSE(lb_unseen_notable(0.09, 0.1, 0.0)); /* under the 0.1 s minimum */
    ASSERT_FALSE(lb_unseen_notable(0.3, 2.0, 0.0));  /* 15% of the lifetimes */
    ASSERT_TRUE(lb_unseen_notable(0.4, 2.0, 0.0));   /* 20% */
    ASSERT_FALSE(lb_unseen_notable(0.5, 1.0, 0.5));  /* no more than the waits seen */
    ASSERT_FALSE(lb_unseen_notable(0.0, 0.0, 0.0));  /* an older database: nothing */
}

static void test_text_gives_figures_and_causes(void)
{
    char buf[512];
    lb_unseen_text(buf, sizeof buf, 1.5, 3.0, 0.25);
    printf("# %s\n", buf);
    ASSERT_NOT_NULL(strstr(buf, "threads spent 1.500 s (50% of their 3.000 s of lifetime)"));
    ASSERT_NOT_NULL(strstr(buf, "(it saw 0.250 s of waits)"));
    ASSERT_NOT_NULL(strstr(buf, "glibc's internal locks (malloc, stdio)"));
    char small[16];
    lb_unseen_text(small, sizeof small, 1.5, 3.0, 0.25); /* cut, terminated */
    ASSERT_EQ(strlen(small), sizeof small - 1);
}

static void test_run_delay_reads_own_and_by_tid(void)
{
    if (access("/proc/thread-self/schedstat", R_OK) != 0) {
        printf("# no schedstat here: skipped\n");
        return;
    }
    uint64_t own = 0, by_tid = 0, again = 0;
    ASSERT_TRUE(lb_run_delay_ns(0, &own));
    ASSERT_TRUE(lb_run_delay_ns(gettid(), &by_tid));
    ASSERT_TRUE(lb_run_delay_ns(0, &again));
    ASSERT_GE(by_tid, own); /* one counter, read later */
    ASSERT_GE(again, by_tid);
    uint64_t untouched = 12345;
    ASSERT_FALSE(lb_run_delay_ns(0x3fffffff, &untouched)); /* no such thread */
    ASSERT_EQ(untouched, 12345u);
}

/* The write reads a live thread's run delay only where its unseen time
 * without it is 1 ms or more, and takes an exited thread's as the thread
 * read it at its exit (or left it: UINT64_MAX), whatever that time. The
 * live thread is this one, whose schedstat can be read: read, its delay
 * is a figure; left unread, -1. */
static void test_write_reads_live_delay_from_1_ms_unseen(void)
{
    if (access("/proc/thread-self/schedstat", R_OK) != 0) {
        printf("# no schedstat here: skipped\n");
        return;
    }
    const double bound_s = LB_RUN_DELAY_MIN_UNSEEN_NS / 1e9;
    static lb_sampler_thread_t live_sampler;
    static lb_thread_t live = { .sampler = &live_sampler };
    live.tid = gettid();
    ASSERT_TRUE(lb_tables_run_delay_s(&live, 0) < 0);
    ASSERT_TRUE(lb_tables_run_delay_s(&live, bound_s * 0.999) < 0);
    ASSERT_TRUE(lb_tables_run_delay_s(&live, bound_s) >= 0);
    ASSERT_TRUE(lb_tables_run_delay_s(&live, 5.0) >= 0);
    static lb_sampler_thread_t exited_sampler;
    static lb_thread_t exited = { .exited = true,
                                  .run_delay_ns = 2500000,
                                  .sampler = &exited_sampler };
    exited.tid = gettid();
    ASSERT_TRUE(lb_tables_run_delay_s(&exited, 0) == 0.0025);
    ASSERT_TRUE(lb_tables_run_delay_s(&exited, 5.0) == 0.0025);
    exited.run_delay_ns = UINT64_MAX; /* it did not read it */
    ASSERT_TRUE(lb_tables_run_delay_s(&exited, 5.0) < 0);
}

/* Once quiesce has read where a live thread's lifetime ends, the write
 * takes the delay read with it (the write's own runnable time is not
 * in it), under the same 1 ms rule, and reads none of its own. */
static void test_write_takes_live_delay_read_at_quiesce(void)
{
    const double bound_s = LB_RUN_DELAY_MIN_UNSEEN_NS / 1e9;
    static lb_sampler_thread_t stopped = { .at_stop_ns = 1, .run_delay_at_stop_ns = 3000000 };
    static lb_thread_t live = { .sampler = &stopped };
    live.tid = gettid();
    ASSERT_TRUE(lb_tables_run_delay_s(&live, bound_s) == 0.003);
    ASSERT_TRUE(lb_tables_run_delay_s(&live, 5.0) == 0.003);
    ASSERT_TRUE(lb_tables_run_delay_s(&live, bound_s * 0.999) < 0);
    stopped.run_delay_at_stop_ns = UINT64_MAX; /* quiesce did not read it */
    ASSERT_TRUE(lb_tables_run_delay_s(&live, 5.0) < 0);
}

CHECK_MAIN(test_rule_needs_amount_share_and_more_than_seen, test_text_gives_figures_and_causes,
           test_run_delay_reads_own_and_by_tid, test_write_reads_live_delay_from_1_ms_unseen,
           test_write_takes_live_delay_read_at_quiesce)
