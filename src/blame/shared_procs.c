/* The processes of a profiled tree that hold its shared table, and their
 * waits in progress (contract and invariants in shared_table.h; why in
 * shared_objs.h, "A process killed outright").
 *
 * Nothing here runs on a fast path: slots change when a process starts,
 * forks, execs or ends; wait entries when a wait on a process-shared
 * object begins or ends; the sweep at a process's end, and at most once
 * per LB_SHARED_SWEEP_NS over the tree from a wait that begins on such an
 * object. */
#include <errno.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "blame/shared_table.h"
#include "common/ledger.h"
#include "core/phase.h"
#include "util/proc_numbers.h"
#include "util/raw_syscall.h"

/* How often the tree looks for a process gone while it waited. */
#define LB_SHARED_SWEEP_NS 5000000u

int32_t lb_shared_proc_join(lb_shared_tree_t *tree, bool *adopted)
{
    int32_t pid = (int32_t)getpid();
    uint64_t start = lb_runtime_proc_start(pid); /* kept: its fork children's sweeps read it */
    uint32_t used = __atomic_load_n(&tree->procs_used, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < used && i < LB_SHARED_PROCS; i++) {
        lb_shared_proc_t *p = &tree->proc[i];
        if (__atomic_load_n(&p->state, __ATOMIC_ACQUIRE) == LB_SHARED_PROC_RUNNING &&
            p->pid == pid && p->start == start) {
            *adopted = true; /* this process's image before an exec */
            return (int32_t)i;
        }
    }
    for (uint32_t i = 0; i < LB_SHARED_PROCS; i++) {
        lb_shared_proc_t *p = &tree->proc[i];
        uint32_t state = LB_SHARED_PROC_FREE;
        if (!__atomic_compare_exchange_n(&p->state, &state, LB_SHARED_PROC_CLAIMED, false,
                                         __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            continue;
        p->pid = pid;
        p->start = start;
        __atomic_store_n(&p->state, LB_SHARED_PROC_RUNNING, __ATOMIC_RELEASE);
        uint32_t seen = __atomic_load_n(&tree->procs_used, __ATOMIC_RELAXED);
        while (seen < i + 1 && !__atomic_compare_exchange_n(&tree->procs_used, &seen, i + 1, true,
                                                            __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            ;
        return (int32_t)i;
    }
    return -1;
}

uint32_t lb_shared_wait_enter(lb_shared_tree_t *tree, int32_t proc, uint32_t record,
                              uint64_t begun_ns)
{
    if (proc < 0)
        return 0;
    for (uint32_t i = 0; i < LB_SHARED_WAITS; i++) {
        lb_shared_wait_entry_t *e = &tree->wait[i];
        uint32_t free_entry = 0;
        if (__atomic_load_n(&e->proc, __ATOMIC_RELAXED) ||
            !__atomic_compare_exchange_n(&e->proc, &free_entry, UINT32_MAX, false, __ATOMIC_ACQ_REL,
                                         __ATOMIC_RELAXED))
            continue; /* (UINT32_MAX: being filled, no slot's) */
        e->record = record;
        e->begun_ns = begun_ns;
        __atomic_store_n(&e->proc, (uint32_t)proc + 1, __ATOMIC_RELEASE);
        uint32_t seen = __atomic_load_n(&tree->waits_used, __ATOMIC_RELAXED);
        while (seen < i + 1 && !__atomic_compare_exchange_n(&tree->waits_used, &seen, i + 1, true,
                                                            __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            ;
        return i + 1;
    }
    return 0;
}

void lb_shared_wait_leave(lb_shared_tree_t *tree, uint32_t entry)
{
    if (entry)
        __atomic_store_n(&tree->wait[entry - 1].proc, 0, __ATOMIC_RELEASE);
}

void lb_shared_proc_waits_clear(lb_shared_tree_t *tree, int32_t proc)
{
    if (proc < 0)
        return;
    uint32_t used = __atomic_load_n(&tree->waits_used, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < used; i++) {
        uint32_t mine = (uint32_t)proc + 1;
        __atomic_compare_exchange_n(&tree->wait[i].proc, &mine, 0, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_RELAXED);
    }
}

/* Whether p's process was reaped: kill(pid, 0) finds no process (one
 * system call). A zombie, and a process that took the pid since, look
 * alive. errno kept. */
static bool reaped(const lb_shared_proc_t *p)
{
    int saved_errno = errno;
    bool none = kill(p->pid, 0) != 0 && errno == ESRCH;
    errno = saved_errno;
    return none;
}

/* Whether p's process is gone by its kernel start time (an open, a read
 * and a close of /proc/PID/stat; none for this process's parent while it
 * lives, whose start the fork handed down: a PostgreSQL backend's
 * postmaster): its pid names no process, a zombie, or another process
 * that took the pid since. errno kept. */
static bool started_otherwise(const lb_shared_proc_t *p)
{
    int saved_errno = errno;
    uint64_t parents = lb_proc_parent_start_known(p->pid); /* (a pre-fork server's workers) */
    uint64_t start = parents ? parents : lb_proc_start_of(p->pid);
    errno = saved_errno;
    return !start || start != p->start;
}

/* Slot i is found gone: its waits dropped, the slot freed; true if the
 * tree's count of processes reached 0. */
static bool bury(struct lb_shared_obj *table, uint32_t i, uint64_t now)
{
    lb_shared_tree_t *tree = lb_shared_tree_of(table);
    lb_shared_proc_t *p = &tree->proc[i];
    uint32_t running = LB_SHARED_PROC_RUNNING;
    if (!__atomic_compare_exchange_n(&p->state, &running, LB_SHARED_PROC_GONE, false,
                                     __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
        return false; /* it ended, or another process buried it */
    uint32_t used = __atomic_load_n(&tree->waits_used, __ATOMIC_ACQUIRE);
    for (uint32_t k = 0; k < used; k++) {
        lb_shared_wait_entry_t *e = &tree->wait[k];
        uint32_t its = i + 1;
        if (__atomic_load_n(&e->proc, __ATOMIC_ACQUIRE) != its)
            continue;
        uint32_t record = e->record;
        uint64_t begun = e->begun_ns;
        if (__atomic_compare_exchange_n(&e->proc, &its, 0, false, __ATOMIC_ACQ_REL,
                                        __ATOMIC_RELAXED))
            lb_shared_drop_wait(&table[record], begun, now);
    }
    __atomic_store_n(&p->state, LB_SHARED_PROC_FREE, __ATOMIC_RELEASE);
    return __atomic_sub_fetch(&tree->processes, 1, __ATOMIC_ACQ_REL) == 0;
}

/* The other running slots, each looked at with kill(pid, 0) where by_kill
 * (those reaped are buried; *last is set where the count reached 0): how
 * many look alive, the first LB_SHARED_END_READS of them in alive. */
static uint32_t looking_alive(struct lb_shared_obj *table, int32_t self_slot, uint64_t now,
                              bool by_kill, uint32_t alive[LB_SHARED_END_READS], bool *last)
{
    lb_shared_tree_t *tree = lb_shared_tree_of(table);
    uint32_t n = 0;
    uint32_t used = __atomic_load_n(&tree->procs_used, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < used && i < LB_SHARED_PROCS; i++) {
        if ((int32_t)i == self_slot ||
            __atomic_load_n(&tree->proc[i].state, __ATOMIC_ACQUIRE) != LB_SHARED_PROC_RUNNING)
            continue;
        if (by_kill && reaped(&tree->proc[i]))
            *last |= bury(table, i, now);
        else if (n++ < LB_SHARED_END_READS)
            alive[n - 1] = i;
    }
    return n;
}

/* Whether this process has a child that ended and is not reaped (a
 * zombie), left waitable (WNOWAIT): one system call, errno kept. */
static bool has_unreaped_child(void)
{
    int saved_errno = errno;
    siginfo_t info;
    info.si_pid = 0;
    long got = lb_raw_syscall(SYS_waitid, P_ALL, 0, (long)&info, WEXITED | WNOHANG | WNOWAIT, 0, 0);
    errno = saved_errno;
    return got == 0 && info.si_pid != 0;
}

/* Slot i buried if its start time says its process is gone. */
static bool bury_if_started_otherwise(struct lb_shared_obj *table, uint32_t i, uint64_t now)
{
    lb_shared_proc_t *p = &lb_shared_tree_of(table)->proc[i];
    return __atomic_load_n(&p->state, __ATOMIC_ACQUIRE) == LB_SHARED_PROC_RUNNING &&
           started_otherwise(p) && bury(table, i, now);
}

/* A process's end: the other running slots by start time where at most
 * LB_SHARED_END_READS run, or look alive after kill(pid, 0) on every one,
 * or where this process has a child not reaped (shared_table.h says why
 * that suffices). */
static bool sweep_at_end(struct lb_shared_obj *table, int32_t self_slot, uint64_t now)
{
    bool last = false;
    uint32_t alive[LB_SHARED_END_READS];
    uint32_t n = looking_alive(table, self_slot, now, false, alive, &last);
    if (n > LB_SHARED_END_READS)
        n = looking_alive(table, self_slot, now, true, alive, &last);
    if (n <= LB_SHARED_END_READS) {
        for (uint32_t k = 0; k < n; k++)
            last |= bury_if_started_otherwise(table, alive[k], now);
    } else if (has_unreaped_child()) {
        uint32_t used = __atomic_load_n(&lb_shared_tree_of(table)->procs_used, __ATOMIC_ACQUIRE);
        for (uint32_t i = 0; i < used && i < LB_SHARED_PROCS; i++)
            if ((int32_t)i != self_slot)
                last |= bury_if_started_otherwise(table, i, now);
    }
    return last;
}

bool lb_shared_procs_sweep(struct lb_shared_obj *table, int32_t self_slot, uint64_t now,
                           bool thorough)
{
    if (thorough)
        return sweep_at_end(table, self_slot, now);
    lb_shared_tree_t *tree = lb_shared_tree_of(table);
    bool last = false;
    uint64_t due = __atomic_load_n(&tree->next_sweep_ns, __ATOMIC_RELAXED);
    if (now < due ||
        !__atomic_compare_exchange_n(&tree->next_sweep_ns, &due, now + LB_SHARED_SWEEP_NS, false,
                                     __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
        return false;
    uint32_t used = __atomic_load_n(&tree->waits_used, __ATOMIC_ACQUIRE);
    uint32_t checked = UINT32_MAX;
    for (uint32_t k = 0; k < used; k++) {
        uint32_t its = __atomic_load_n(&tree->wait[k].proc, __ATOMIC_ACQUIRE);
        if (!its || its == UINT32_MAX || its - 1 == checked || (int32_t)(its - 1) == self_slot ||
            its > LB_SHARED_PROCS)
            continue;
        checked = its - 1; /* (a run of one process's waits takes one look) */
        lb_shared_proc_t *p = &tree->proc[its - 1];
        if (__atomic_load_n(&p->state, __ATOMIC_ACQUIRE) == LB_SHARED_PROC_RUNNING && reaped(p))
            last |= bury(table, its - 1, now);
    }
    return last;
}
