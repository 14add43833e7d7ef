/* Unit tests for src/common/ledger.h: a ledger slot names its process by
 * pid and the boot-time clock at its claim; the process that has the pid
 * now is the slot's when /proc says it started by then, and another
 * (the pid reused) when it started later. A process records while it
 * holds a slot that is running or writing. */
#include "check.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/ledger.h"

static void test_a_claim_names_its_own_process(void)
{
    uint64_t start = lb_proc_start_of(getpid());
    ASSERT_NE(start, 0);
    ASSERT_UEQ(lb_proc_start_of(0), 0); /* no process */
    ASSERT_TRUE(lb_ledger_same_process(lb_ledger_now_ns(), start));
}

/* A process that started after the claim has the pid of one that ended:
 * not the slot's (the claim is moved back 2 s before this process began,
 * as the claim of an earlier process with this pid would be). */
static void test_a_later_process_is_another(void)
{
    uint64_t start = lb_proc_start_of(getpid());
    long hz = sysconf(_SC_CLK_TCK);
    ASSERT_TRUE(hz > 0);
    uint64_t began_ns = start * (1000000000u / (uint64_t)hz);
    ASSERT_TRUE(began_ns > 2000000000u);
    ASSERT_FALSE(lb_ledger_same_process(began_ns - 2000000000u, start));
}

/* A child's claim, made in the child, names the child while it runs; once
 * it is reaped its pid has no process. */
static void test_a_child_claim(void)
{
    int up[2], down[2]; /* child -> parent: its claim; parent -> child: end */
    ASSERT_EQ(pipe(up), 0);
    ASSERT_EQ(pipe(down), 0);
    pid_t pid = fork();
    ASSERT_TRUE(pid >= 0);
    if (pid == 0) {
        close(up[0]);
        close(down[1]);
        uint64_t claimed = lb_ledger_now_ns();
        if (write(up[1], &claimed, sizeof claimed) != sizeof claimed)
            _exit(1);
        char c;
        (void)!read(down[0], &c, 1); /* until the parent closes its end */
        _exit(0);
    }
    close(up[1]);
    close(down[0]);
    uint64_t claimed = 0;
    ASSERT_EQ(read(up[0], &claimed, sizeof claimed), (ssize_t)sizeof claimed);
    ASSERT_TRUE(lb_ledger_same_process(claimed, lb_proc_start_of(pid)));
    close(down[1]);
    close(up[0]);
    int status;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_FALSE(lb_ledger_same_process(claimed, lb_proc_start_of(pid)));
}

/* lb_ledger_records: this process, by its running or writing slot; not
 * by a slot it is done with, nor another pid's, nor in a ledger that is
 * none (NULL, or a foreign magic), nor as a process that started after
 * its pid's claim. */
static void test_records_by_a_running_slot(void)
{
    lb_ledger_t *l = calloc(1, sizeof *l);
    ASSERT_NOT_NULL(l);
    uint64_t start = lb_proc_start_of(getpid());
    ASSERT_NE(start, 0);
    l->magic = LB_LEDGER_MAGIC;
    l->used = 2;
    l->slot[0] = (lb_ledger_slot_t){ getpid() + 1, LB_LEDGER_RUNNING, lb_ledger_now_ns() };
    l->slot[1] = (lb_ledger_slot_t){ getpid(), LB_LEDGER_DONE, lb_ledger_now_ns() };
    ASSERT_FALSE(lb_ledger_records(l, getpid(), start));
    l->slot[1].state = LB_LEDGER_RUNNING;
    ASSERT_TRUE(lb_ledger_records(l, getpid(), start));
    l->slot[1].state = LB_LEDGER_WRITING;
    ASSERT_TRUE(lb_ledger_records(l, getpid(), start));
    ASSERT_FALSE(lb_ledger_records(NULL, getpid(), start));
    long hz = sysconf(_SC_CLK_TCK);
    ASSERT_TRUE(hz > 0);
    uint64_t later = lb_ledger_now_ns() / (1000000000u / (uint64_t)hz) + 2 * (uint64_t)hz;
    ASSERT_FALSE(lb_ledger_records(l, getpid(), later)); /* its pid reused */
    l->magic = 0;
    ASSERT_FALSE(lb_ledger_records(l, getpid(), start));
    free(l);
}

CHECK_MAIN(test_a_claim_names_its_own_process, test_a_later_process_is_another, test_a_child_claim,
           test_records_by_a_running_slot)
