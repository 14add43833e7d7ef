/* Unit tests for src/common/ledger.h: a ledger slot names its process by
 * pid and the boot-time clock at its claim; the process that has the pid
 * now is the slot's when /proc says it started by then, and another
 * (the pid reused) when it started later. A process records while it
 * holds a slot that is running or writing. A copy of the ledger is one
 * view of it for every count. */
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

/* A reaped child's pid: no process has it (until the kernel hands it out
 * again, after cycling through all the others). */
static pid_t gone_pid(void)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    int status;
    return pid > 0 && waitpid(pid, &status, 0) == pid ? pid : 0;
}

/* lb_ledger_copy: counts made from the copy agree with each other while
 * the live ledger changes. A slot claimed after the copy is in neither
 * count; a live process whose slot is marked done after the copy is still
 * running in the tally and records by the copy (counted once, not twice);
 * a gone process's slot has its final state read from the live ledger (done
 * since the copy: not lost; failed: failed). */
static void test_a_copy_is_one_view(void)
{
    lb_ledger_t *live = calloc(1, sizeof *live), *copy = calloc(1, sizeof *copy);
    ASSERT_NOT_NULL(live);
    ASSERT_NOT_NULL(copy);
    uint64_t start = lb_proc_start_of(getpid());
    pid_t done = gone_pid(), failed = gone_pid(), killed = gone_pid();
    ASSERT_TRUE(start && done && failed && killed);
    uint64_t now = lb_ledger_now_ns();
    live->magic = LB_LEDGER_MAGIC;
    live->used = 4;
    live->slot[0] = (lb_ledger_slot_t){ getpid(), LB_LEDGER_WRITING, now };
    live->slot[1] = (lb_ledger_slot_t){ done, LB_LEDGER_WRITING, now };
    live->slot[2] = (lb_ledger_slot_t){ failed, LB_LEDGER_WRITING, now };
    live->slot[3] = (lb_ledger_slot_t){ killed, LB_LEDGER_RUNNING, now };
    lb_ledger_copy(live, copy);
    live->slot[0].state = LB_LEDGER_DONE;
    live->slot[1].state = LB_LEDGER_DONE;
    live->slot[2].state = LB_LEDGER_FAILED;
    live->failure = SQLITE_FULL;
    live->slot[4] = (lb_ledger_slot_t){ getpid(), LB_LEDGER_RUNNING, now };
    live->used = 5;
    lb_ledger_tally_t t;
    lb_ledger_tally_copy(copy, live, &t);
    ASSERT_EQ(t.running, 1);
    ASSERT_EQ(t.before_writing, 1);
    ASSERT_EQ(t.while_writing, 0);
    ASSERT_EQ(t.failed, 1);
    ASSERT_EQ(t.failure, SQLITE_FULL);
    ASSERT_TRUE(lb_ledger_records(copy, getpid(), start));
    lb_ledger_tally(live, &t); /* the live ledger: the later slot instead */
    ASSERT_EQ(t.running, 1);
    ASSERT_EQ(t.failed, 1);
    live->slot[4].state = LB_LEDGER_DONE;
    ASSERT_FALSE(lb_ledger_records(live, getpid(), start));
    ASSERT_TRUE(lb_ledger_records(copy, getpid(), start));
    live->magic = 0;
    lb_ledger_copy(live, copy);
    ASSERT_FALSE(lb_ledger_records(copy, getpid(), start));
    lb_ledger_tally_copy(copy, NULL, &t);
    ASSERT_EQ(t.running + t.before_writing + t.while_writing + t.failed, 0);
    free(live);
    free(copy);
}

CHECK_MAIN(test_a_claim_names_its_own_process, test_a_later_process_is_another, test_a_child_claim,
           test_records_by_a_running_slot, test_a_copy_is_one_view)
