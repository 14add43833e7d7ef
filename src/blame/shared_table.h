/* The layout of a profiled tree's shared table (blame/shared_objs.h),
 * private to shared_objs.c and shared_procs.c: the records of the tree's
 * process-shared objects, then the tree's part: its count of processes,
 * a slot per process that holds the table, and an entry per wait in
 * progress on a record.
 *
 * Invariants: a record's `used` goes from 0 to 1 once, under the tree's
 * insert lock, after its key and addr are written, and never back: a
 * lookup without the lock that reads used == 1 (acquire) reads a key that
 * never changes. A process slot goes FREE -> CLAIMED (its claimer, by
 * CAS) -> RUNNING (pid and start written before, release) -> FREE, the
 * last step by its process when it ends, or by the one process whose CAS
 * RUNNING -> GONE finds it gone, after dropping its waits; an exec keeps
 * it RUNNING for the next image. A wait entry's proc goes from 0 to a
 * slot's index + 1 by its waiter's CAS, and back to 0 by the waiter, or
 * by the CAS of whoever drops the waits of a process found gone. */
#ifndef LB_BLAME_SHARED_TABLE_H
#define LB_BLAME_SHARED_TABLE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blame/shared_keys.h"
#include "util/common.h"
#include "util/meta_lock.h"

#define LB_SHARED_RECORDS   4096u /* a power of two */
#define LB_SHARED_PROCS     1024u /* processes holding the table at once; more run without a slot */
#define LB_SHARED_WAITS     4096u /* waits in progress at once; more are not dropped if killed */
/* The most slots a process's end reads start times of where it has no
 * child to reap (the thorough sweep, below): a few processes killed
 * together whose pids were reused, or whose zombies another process has
 * not reaped yet, when the tree's last process ends, at a bound of 12
 * system calls per end however large the tree. */
#define LB_SHARED_END_READS 4u
/* The table's address space: at least lockblame's least span
 * (util/pages.c: no small hole among the libraries is filled), its last
 * page PROT_NONE. */
#define LB_SHARED_SPAN      ((size_t)2 << 20)

struct lb_shared_obj {
    uint32_t used; /* 0: a free record */
    lb_meta_lock_t lock;
    lb_shared_key_t key;       /* the object's key (shared_keys.h) */
    uintptr_t addr;            /* its address in the process that registered it */
    uint8_t kind;              /* lb_obj_kind */
    uint8_t held;              /* a mutex: a holder's hold is accounted */
    int32_t unseen_owner;      /* a mutex held by a holder no acquisition of the tree
                               * accounted (held, set by a waiter): the owner its lock
                               * word named then, never 0 (0: a hold the tree accounted,
                               * or none) */
    uint32_t waiters;          /* w: threads of every process waiting on it */
    uint32_t draining;         /* a barrier: waiters of a completed episode still waiting */
    uint32_t barrier_count;    /* a barrier: arrivals per episode (0: unknown) */
    uint32_t barrier_arrived;  /* ... so far in this episode */
    uint64_t releases;         /* the tree's releases, posts, signals, completions (read
                               * without the lock too) */
    uint64_t signals_returned; /* a cond or semaphore: the tree's signals and posts whose
                                * real call has returned (atomics; <= releases) */
    uint64_t last_ns;          /* accrual is up to date to here */
    uint64_t released_ns;      /* the tree's last release, post, signal or completion */
    int32_t released_by;       /* ... the thread that made it */
    uint64_t changed_ns;       /* the accrual's time at the tree's last hold begun or ended */
    uint32_t holders;          /* an rwlock: its holders the tree accounts (k) */
    double clock;              /* an rwlock: idleness per holder so far (V), ns */
    double clock_at_holds;     /* ... the sum of V at its holders' starts */
    double owed_ns;            /* the integral of w owed to the next release */
    double handoff_ns;         /* the integral of w blamed on nobody, not yet taken */
} __attribute__((aligned(LB_CACHELINE)));

enum {
    LB_SHARED_PROC_FREE,
    LB_SHARED_PROC_CLAIMED,
    LB_SHARED_PROC_RUNNING,
    LB_SHARED_PROC_GONE
};

typedef struct lb_shared_proc {
    int32_t pid;
    uint32_t state;
    uint64_t start; /* its kernel start time (/proc/PID/stat field 22) */
} lb_shared_proc_t;

typedef struct lb_shared_wait_entry {
    uint32_t proc;   /* its process's slot + 1; 0: a free entry */
    uint32_t record; /* the record it waits on */
    uint64_t begun_ns;
} lb_shared_wait_entry_t;

/* The tree's part of the table, after the records. */
typedef struct lb_shared_tree {
    uint32_t processes;     /* processes holding the table that have not finished */
    lb_meta_lock_t insert;  /* new records */
    uint32_t procs_used;    /* slots' high-water mark */
    uint32_t waits_used;    /* wait entries' high-water mark */
    uint64_t next_sweep_ns; /* the next look for processes gone while waiting */
    lb_shared_proc_t proc[LB_SHARED_PROCS];
    lb_shared_wait_entry_t wait[LB_SHARED_WAITS];
} lb_shared_tree_t;

_Static_assert(sizeof(struct lb_shared_obj) * LB_SHARED_RECORDS + sizeof(lb_shared_tree_t) <=
                   LB_SHARED_SPAN - 4096,
               "the records and the tree's part fit below the guard page");

static inline lb_shared_tree_t *lb_shared_tree_of(struct lb_shared_obj *table)
{
    return (lb_shared_tree_t *)(table + LB_SHARED_RECORDS);
}

/* shared_procs.c: the tree's processes. */
/* This process takes a slot, or adopts its previous image's after an
 * exec (*adopted); its index, or -1 when none is free. */
int32_t lb_shared_proc_join(lb_shared_tree_t *tree, bool *adopted);
/* A wait on record index `record` begun at begun_ns by process slot
 * `proc` (-1: none): its entry + 1, or 0 when none is free. */
uint32_t lb_shared_wait_enter(lb_shared_tree_t *tree, int32_t proc, uint32_t record,
                              uint64_t begun_ns);
void lb_shared_wait_leave(lb_shared_tree_t *tree, uint32_t entry);
/* The entries of slot proc are freed (its waits were taken out of w
 * otherwise: the process ends or execs). */
void lb_shared_proc_waits_clear(lb_shared_tree_t *tree, int32_t proc);
/* Look for processes of the tree gone without ending (SIGKILL): each one
 * found loses its slot, its waits in progress are dropped from w with
 * what they accrued (shared_objs.c: lb_shared_drop_wait), and it leaves
 * the count of processes; returns true if that count reached 0. errno
 * kept.
 *
 * thorough (a process's end): where more than LB_SHARED_END_READS other
 * slots run, each by kill(pid, 0), a system call that finds a reaped
 * process gone; then, where at most LB_SHARED_END_READS slots run or still
 * look alive, or where this process has a child it has not reaped (waitid
 * WNOWAIT: one system call), each slot that still looks alive by its
 * kernel start time (/proc/PID/stat: an open, a read, a close), which also
 * finds gone a killed process whose pid another process took since, and a
 * killed process's zombie. That suffices for the tree to settle: every
 * other process that really lives ends later and sweeps again, so the
 * tree's last process to end finds running only the slots of killed
 * processes (and of processes ending beside it), reads their start times,
 * buries them, and settles the tree and removes the table's file when the
 * count reaches 0. A zombie is its parent's child until reaped (a parent
 * that ends first hands it to one that reaps it), so a parent that kills
 * more than LB_SHARED_END_READS of its children and ends without reaping
 * them reads them all. A process's end beside N > LB_SHARED_END_READS live
 * slotted processes costs N kill calls, a waitid and no /proc read. Left:
 * where more than LB_SHARED_END_READS killed processes whose pids were
 * reused by live processes look alive at the last end (with the processes
 * ending beside it), they stay counted and the tree does not settle (what
 * it still owes stays in no row; `lockblame run` removes the file): the
 * same best effort as for a process killed before it took a slot.
 *
 * Else (a wait that begins), at most once per LB_SHARED_SWEEP_NS over the
 * tree, the slots with waits in progress, by kill(pid, 0). */
bool lb_shared_procs_sweep(struct lb_shared_obj *table, int32_t self_slot, uint64_t now,
                           bool thorough);
/* shared_objs.c: a wait in progress of a process gone, on r, begun at
 * begun_ns, dropped at now. */
void lb_shared_drop_wait(struct lb_shared_obj *r, uint64_t begun_ns, uint64_t now);
#endif
