/* Unit tests for this process's start as /proc gives it
 * (src/util/proc_numbers.h): the tick a fork's bracket fixes, against the
 * kernel's /proc/PID/stat in fork children, and the figure kept for its
 * process only. */
#include "check.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/ledger.h"
#include "util/proc_numbers.h"

static void test_between_needs_one_tick_with_slack(void)
{
    const uint64_t tick = 10000000; /* 100 Hz */
    /* well inside tick 42 */
    ASSERT_EQ(lb_proc_start_between(42 * tick + 1000000, 42 * tick + 2000000, 100), 42u);
    /* across an edge, or within the slack of one */
    ASSERT_EQ(lb_proc_start_between(42 * tick + 9000000, 43 * tick + 1000000, 100), 0u);
    ASSERT_EQ(
        lb_proc_start_between(42 * tick + LB_PROC_START_SLACK_NS - 1, 42 * tick + 2000000, 100),
        0u);
    ASSERT_EQ(lb_proc_start_between(42 * tick + 1000000, 43 * tick - LB_PROC_START_SLACK_NS, 100),
              0u);
    ASSERT_EQ(lb_proc_start_between(42 * tick + LB_PROC_START_SLACK_NS,
                                    43 * tick - LB_PROC_START_SLACK_NS - 1, 100),
              42u);
    /* no reading before the fork, a span backwards, ticks no second holds whole */
    ASSERT_EQ(lb_proc_start_between(0, 42 * tick + 2000000, 100), 0u);
    ASSERT_EQ(lb_proc_start_between(42 * tick + 2000000, 42 * tick + 1000000, 100), 0u);
    ASSERT_EQ(lb_proc_start_between(42 * tick + 1000000, 42 * tick + 2000000, 1024), 0u);
    ASSERT_EQ(lb_proc_start_between(42 * tick + 1000000, 42 * tick + 2000000, 0), 0u);
}

static void test_kept_only_for_its_process(void)
{
    pid_t pid = getpid();
    ASSERT_EQ(lb_proc_start_known(pid), 0u); /* nothing kept yet */
    lb_proc_start_keep(pid, 0);              /* a failed read is not kept */
    ASSERT_EQ(lb_proc_start_known(pid), 0u);
    lb_proc_start_keep(pid, 12345);
    ASSERT_EQ(lb_proc_start_known(pid), 12345u);
    ASSERT_EQ(lb_proc_start_known(pid + 1), 0u);
    ASSERT_EQ(lb_proc_start_known(0), 0u);
}

/* Fork children one after another, as lockblame's fork steps would
 * bracket them (core/runtime.c); each exits 0 when what its fork fixed,
 * if anything, is what /proc says, 2 when it knew nothing (a tick's edge
 * in the fork), 1 when they differ, or when it still had its parent's. */
static void test_fork_child_start_is_procs(void)
{
    lb_own_pid_stamp();
    lb_proc_start_keep(getpid(), lb_proc_start_of(getpid()));
    int known = 0, unknown = 0, wrong = 0;
    for (int i = 0; i < 200; i++) {
        lb_proc_start_fork_prepare();
        pid_t child = fork();
        ASSERT_TRUE(child >= 0);
        if (child == 0) {
            lb_proc_numbers_fork_child();
            uint64_t fixed = lb_proc_start_known(getpid());
            uint64_t proc = lb_proc_start_of(getpid());
            if (lb_proc_start_known(getppid()) != 0)
                _exit(1);
            _exit(!fixed ? 2 : fixed == proc && proc ? 0 : 1);
        }
        int status = 0;
        ASSERT_EQ(waitpid(child, &status, 0), child);
        ASSERT_TRUE(WIFEXITED(status));
        known += WEXITSTATUS(status) == 0;
        unknown += WEXITSTATUS(status) == 2;
        wrong += WEXITSTATUS(status) == 1;
    }
    printf("# 200 forks: start fixed by the fork %d, left to /proc %d, wrong %d\n", known, unknown,
           wrong);
    ASSERT_EQ(wrong, 0);
    ASSERT_GE(known, 1);
}

CHECK_MAIN(test_between_needs_one_tick_with_slack, test_kept_only_for_its_process,
           test_fork_child_start_is_procs)
