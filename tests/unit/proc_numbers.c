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
 * bracket them (core/runtime.c: the parent's finding of /proc's numbers,
 * then the clock); each exits 0 when what its fork fixed,
 * if anything, is what /proc says, 2 when it knew nothing (a tick's edge
 * in the fork), 1 when they differ, or when it still had its parent's. */
static void test_fork_child_start_is_procs(void)
{
    lb_own_pid_stamp();
    lb_proc_start_keep(getpid(), lb_proc_start_of(getpid()));
    if (!lb_proc_numbers_own()) {
        printf("# /proc here does not number this process as getpid(): skipped\n");
        return;
    }
    int known = 0, unknown = 0, wrong = 0;
    for (int i = 0; i < 200; i++) {
        lb_proc_numbers_fork_prepare();
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

/* Children forked as in test_fork_child_start_is_procs, where the
 * parent's finding is taken or not; the number that kept a start from
 * their fork. */
static int forks_that_keep_a_start(int forks)
{
    int kept = 0;
    for (int i = 0; i < forks; i++) {
        lb_proc_start_fork_prepare();
        pid_t child = fork();
        ASSERT_TRUE(child >= 0);
        if (child == 0) {
            lb_proc_numbers_fork_child();
            _exit(lb_proc_start_known(getpid()) != 0);
        }
        int status = 0;
        ASSERT_EQ(waitpid(child, &status, 0), child);
        ASSERT_TRUE(WIFEXITED(status));
        kept += WEXITSTATUS(status);
    }
    return kept;
}

/* A child that did not take its parent's finding that /proc numbers it
 * as getpid() does (here: the parent has not looked, as under a /proc of
 * another pid namespace it finds they are not) keeps no start from its
 * fork, however short: /proc/PID, which its exec'd images read, is
 * another process there. The same forks after the parent's finding do
 * keep one. */
static void test_fork_child_without_procs_numbers_keeps_none(void)
{
    /* Under CHECK_NOFORK=1 the earlier tests ran in this process and
     * left their finding: the fork child's hook forgets it, as the
     * finding it holds is this process's, not its parent's. */
    lb_proc_numbers_fork_child();
    lb_own_pid_stamp();
    int without = forks_that_keep_a_start(50);
    if (!lb_proc_numbers_own()) {
        printf("# /proc here does not number this process as getpid(): half skipped\n");
        ASSERT_EQ(without, 0);
        return;
    }
    lb_proc_numbers_fork_prepare();
    int with = forks_that_keep_a_start(50);
    printf("# 50 forks each: a start kept without the finding %d, with it %d\n", without, with);
    ASSERT_EQ(without, 0);
    ASSERT_GE(with, 1);
}

/* A fork child knows its parent's start where the parent kept its own
 * (no /proc read for it), while that parent lives and is its parent; and
 * never for another pid. */
static void test_parent_start_handed_down(void)
{
    pid_t me = getpid();
    uint64_t mine = lb_proc_start_of(me);
    ASSERT_TRUE(mine != 0);
    lb_proc_start_keep(me, mine);
    ASSERT_UEQ(lb_proc_parent_start_known(me), 0); /* not this process's parent */
    lb_proc_start_fork_prepare();
    pid_t child = fork();
    ASSERT_TRUE(child >= 0);
    if (child == 0) {
        lb_proc_numbers_fork_child();
        int bad = lb_proc_parent_start_known(me) != mine ||
                  lb_proc_parent_start_known(getppid() + 1) != 0 ||
                  lb_proc_parent_start_known(getpid()) != 0;
        /* a grandchild: its parent (this child) kept no start of its own
         * unless its fork fixed one; the grandparent's is not handed on */
        pid_t grandchild = fork();
        if (grandchild == 0) {
            lb_proc_numbers_fork_child();
            _exit(lb_proc_parent_start_known(me) != 0);
        }
        int st = 1;
        waitpid(grandchild, &st, 0);
        _exit(bad || !WIFEXITED(st) || WEXITSTATUS(st) != 0);
    }
    int st = 1;
    ASSERT_EQ(waitpid(child, &st, 0), child);
    ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

CHECK_MAIN(test_between_needs_one_tick_with_slack, test_kept_only_for_its_process,
           test_fork_child_start_is_procs, test_fork_child_without_procs_numbers_keeps_none,
           test_parent_start_handed_down)
