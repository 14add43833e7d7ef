/* Unit tests for the sweep at a process's end (src/blame/shared_procs.c,
 * contract in blame/shared_table.h): which running slots it buries.
 *
 * Each test builds a tree's table in anonymous memory with slots of real
 * processes: this test process, its parent, a child it forked and reaped
 * (its pid names no process: kill(pid, 0) fails with ESRCH), and a child
 * that has exited and is not reaped yet (a zombie: kill(pid, 0) finds
 * it). A slot of a live process with a start time other than its own
 * stands for a killed process whose pid that process took since. Which
 * slots stay RUNNING tells which start times were read: a slot of a
 * reused pid or a zombie is buried only by the read. */
#include "check.h"

#include <errno.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "blame/shared_table.h"
#include "common/ledger.h"

static struct lb_shared_obj *new_table(void)
{
    void *table =
        mmap(NULL, LB_SHARED_SPAN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_TRUE(table != MAP_FAILED);
    return table;
}

/* Slot i runs for pid, started at start; it counts in the tree. */
static void put(struct lb_shared_obj *table, uint32_t i, pid_t pid, uint64_t start)
{
    lb_shared_tree_t *tree = lb_shared_tree_of(table);
    tree->proc[i] =
        (lb_shared_proc_t){ .pid = pid, .state = LB_SHARED_PROC_RUNNING, .start = start };
    if (tree->procs_used < i + 1)
        tree->procs_used = i + 1;
    tree->processes++;
}

static uint32_t state_of(struct lb_shared_obj *table, uint32_t i)
{
    return lb_shared_tree_of(table)->proc[i].state;
}

/* A child that exits at once: reaped (its pid then names no process), or
 * left a zombie until reap(). */
static pid_t exited_child(bool reaped)
{
    pid_t child = fork();
    ASSERT_TRUE(child >= 0);
    if (child == 0)
        _exit(0);
    siginfo_t info;
    ASSERT_EQ(waitid(P_PID, (id_t)child, &info, WEXITED | (reaped ? 0 : WNOWAIT)), 0);
    return child;
}

static void reap(pid_t child)
{
    ASSERT_EQ(waitpid(child, NULL, 0), child);
}

/* A zombie of another process: a child forks a grandchild that exits at
 * once, and lives on without reaping it until release_foreign closes
 * *hold. *middle: the child. */
static pid_t foreign_zombie(pid_t *middle, int *hold)
{
    int told[2], held[2];
    ASSERT_EQ(pipe(told), 0);
    ASSERT_EQ(pipe(held), 0);
    *middle = fork();
    ASSERT_TRUE(*middle >= 0);
    if (*middle == 0) {
        close(held[1]);
        pid_t grandchild = exited_child(false);
        char c;
        if (write(told[1], &grandchild, sizeof grandchild) != sizeof grandchild ||
            read(held[0], &c, 1) < 0)
            _exit(1);
        _exit(0);
    }
    close(told[1]);
    close(held[0]);
    pid_t zombie = 0;
    ASSERT_EQ(read(told[0], &zombie, sizeof zombie), (ssize_t)sizeof zombie);
    close(told[0]);
    *hold = held[1];
    return zombie;
}

static void release_foreign(pid_t middle, int hold)
{
    close(hold);
    reap(middle);
}

static uint64_t start_of(pid_t pid)
{
    uint64_t start = lb_proc_start_of(pid);
    ASSERT_UEQ(start != 0, 1);
    return start;
}

/* Few slots run (their start times are read at once): a reaped process,
 * a reused pid and a zombie are buried, a live process with its own start
 * time is kept, and the ending process's own slot is not looked at. errno
 * is kept. */
static void test_end_reads_start_times_where_few_run(void)
{
    struct lb_shared_obj *table = new_table();
    pid_t self = getpid(), parent = getppid();
    pid_t gone = exited_child(true), zombie = exited_child(false);
    put(table, 0, self, 1); /* the ending process: a start no reading gives */
    put(table, 1, gone, start_of(self));
    put(table, 2, self, start_of(self) + 1); /* a killed process whose pid this one took */
    put(table, 3, parent, start_of(parent));
    put(table, 4, zombie, start_of(self));
    errno = EDOM;
    ASSERT_FALSE(lb_shared_procs_sweep(table, 0, 0, true));
    ASSERT_EQ(errno, EDOM);
    ASSERT_UEQ(state_of(table, 0), LB_SHARED_PROC_RUNNING);
    ASSERT_UEQ(state_of(table, 1), LB_SHARED_PROC_FREE);
    ASSERT_UEQ(state_of(table, 2), LB_SHARED_PROC_FREE);
    ASSERT_UEQ(state_of(table, 3), LB_SHARED_PROC_RUNNING);
    ASSERT_UEQ(state_of(table, 4), LB_SHARED_PROC_FREE);
    ASSERT_UEQ(lb_shared_tree_of(table)->processes, 2);
    reap(zombie);
    munmap(table, LB_SHARED_SPAN);
}

/* Slots first to end - 1 of table: the live process alive, with its own
 * start time. Returns end, the slots used. */
static uint32_t put_alive(struct lb_shared_obj *table, uint32_t first, uint32_t end, pid_t alive)
{
    for (uint32_t slot = first; slot < end; slot++)
        put(table, slot, alive, start_of(alive));
    return end;
}

/* More than LB_SHARED_END_READS slots run and still look alive after
 * kill(pid, 0), and the ending process has no child to reap: the reaped
 * process is buried by kill, and no start time is read, so the reused pid
 * and another process's zombie stay running (the live processes end later
 * and look again; the zombie's parent reaps it). */
static void test_end_reads_no_start_where_many_look_alive(void)
{
    struct lb_shared_obj *table = new_table();
    pid_t self = getpid(), parent = getppid(), middle;
    int hold;
    pid_t gone = exited_child(true), zombie = foreign_zombie(&middle, &hold);
    put(table, 0, gone, start_of(self));
    put(table, 1, self, start_of(self) + 1);
    put(table, 2, zombie, start_of(self));
    uint32_t slots =
        put_alive(table, 3, LB_SHARED_END_READS + 2, parent); /* one more than it reads */
    ASSERT_FALSE(lb_shared_procs_sweep(table, -1, 0, true));
    ASSERT_UEQ(state_of(table, 0), LB_SHARED_PROC_FREE);
    for (uint32_t i = 1; i < slots; i++)
        ASSERT_UEQ(state_of(table, i), LB_SHARED_PROC_RUNNING);
    ASSERT_UEQ(lb_shared_tree_of(table)->processes, slots - 1);
    release_foreign(middle, hold);
    munmap(table, LB_SHARED_SPAN);
}

/* Many slots look alive, but the ending process has a child it has not
 * reaped (a parent that killed its workers and ends without waiting for
 * them): every start time is read, so its zombie and the reused pid are
 * buried and the live processes kept. */
static void test_end_with_a_child_to_reap_reads_every_start(void)
{
    struct lb_shared_obj *table = new_table();
    pid_t self = getpid(), parent = getppid();
    pid_t zombie = exited_child(false);
    put(table, 0, self, start_of(self) + 1);
    put(table, 1, zombie, start_of(self));
    uint32_t slots =
        put_alive(table, 2, LB_SHARED_END_READS + 1, parent); /* one more than it reads */
    ASSERT_FALSE(lb_shared_procs_sweep(table, -1, 0, true));
    ASSERT_UEQ(state_of(table, 0), LB_SHARED_PROC_FREE);
    ASSERT_UEQ(state_of(table, 1), LB_SHARED_PROC_FREE);
    for (uint32_t i = 2; i < slots; i++)
        ASSERT_UEQ(state_of(table, i), LB_SHARED_PROC_RUNNING);
    ASSERT_UEQ(lb_shared_tree_of(table)->processes, slots - 2);
    reap(zombie);
    munmap(table, LB_SHARED_SPAN);
}

/* The tree's last process (one without a slot) finds only killed
 * processes' slots, one more than it reads: kill(pid, 0) buries the
 * reaped one, and the start times of the rest (a zombie, reused pids)
 * bury them; it is told the count reached 0, so that it settles the
 * tree. */
static void test_last_end_buries_every_killed_slot(void)
{
    struct lb_shared_obj *table = new_table();
    pid_t self = getpid(), parent = getppid();
    pid_t gone = exited_child(true), zombie = exited_child(false);
    put(table, 0, gone, start_of(self));
    put(table, 1, zombie, start_of(self));
    for (uint32_t i = 2; i < LB_SHARED_END_READS + 1; i++) /* pids reused */
        put(table, i, i % 2 ? parent : self, start_of(i % 2 ? parent : self) - 1);
    ASSERT_TRUE(lb_shared_procs_sweep(table, -1, 0, true));
    for (uint32_t i = 0; i < LB_SHARED_END_READS + 1; i++)
        ASSERT_UEQ(state_of(table, i), LB_SHARED_PROC_FREE);
    ASSERT_UEQ(lb_shared_tree_of(table)->processes, 0);
    reap(zombie);
    munmap(table, LB_SHARED_SPAN);
}

CHECK_MAIN(test_end_reads_start_times_where_few_run, test_end_reads_no_start_where_many_look_alive,
           test_end_with_a_child_to_reap_reads_every_start, test_last_end_buries_every_killed_slot)
