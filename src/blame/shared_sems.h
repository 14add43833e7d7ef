/* Semaphores shared by the processes of one profiled tree (sem_init with
 * pshared != 0, in memory the processes share): docs/DESIGN.md rule 3,
 * "across processes". A post in one process ends waits in another, so the
 * idleness it is blamed for accrues over every process's waiters.
 *
 * How: the first process-shared sem_init of a process creates a shared
 * anonymous mapping (MAP_SHARED), which every process the tree forks from
 * then on inherits at the same address, as it inherits the program's own
 * shared memory: the program's semaphore has one address in all of them,
 * and the mapping holds one record per such address. A record carries the
 * semaphore's accrual across processes: its waiters w (all processes),
 * and the integral of w since the previous post. Each process keeps its
 * own lb_mon and object record for the victims' view (their waits, their
 * counts); a post anywhere takes the record's integral as its blame, in
 * the posting process, instead of its own lb_mon's accrual. The writer
 * then writes each process's record as blame = accrual (its posts), so the
 * tree's rows add up: the waits in one process, the blame in another.
 *
 * Not covered: a process exec'd within the tree (the mapping does not
 * survive exec, and the program's shared memory then has other
 * addresses); named semaphores (sem_open: mapped per process); mutexes,
 * rwlocks, conds and barriers with PTHREAD_PROCESS_SHARED (their waits
 * stay per process, blamed on hand-off or left unattributed). The
 * accrual pending on a shared semaphore when the tree ends (waiters no
 * post ever ended) is in no row.
 *
 * Invariants: a record's fields but addr change only under its lock, a
 * lb_meta_lock in the shared mapping (plain atomics: it works across
 * processes); addr goes from 0 to the semaphore's address once, by CAS,
 * and never back. Timestamps from different processes may be a few
 * nanoseconds out of order: accrual ignores a time before the record's
 * last event. Each process counts its own threads' waits in progress per
 * record, and at its end takes them out of w, so that a process that dies
 * with threads waiting leaves no waiters behind. Nothing here runs in a
 * signal handler. */
#ifndef LB_BLAME_SHARED_SEMS_H
#define LB_BLAME_SHARED_SEMS_H
#include <stdbool.h>
#include <stdint.h>

#include "blame/mon.h"
#include "core/thread.h"

typedef struct lb_shared_sem lb_shared_sem_t;

/* Nonzero once this process has the shared mapping (its own or inherited):
 * the wrappers look for records only then. */
extern uint32_t lb_shared_sems_on;

/* sem_init(s, pshared != 0, ...) succeeded: s's record, created (with the
 * mapping on first use); its waiters start at 0. */
void lb_shared_sem_register(const void *s);
/* s's record, or NULL: not a process-shared semaphore of this tree. */
lb_shared_sem_t *lb_shared_sem_find(const void *s);

/* One of self's threads begins / ends a wait on r at `now` (mon: the
 * semaphore's own lb_mon in this process, whose record is marked shared). */
void lb_shared_sem_wait_begins(lb_shared_sem_t *r, lb_mon_t *mon, uint64_t now);
void lb_shared_sem_wait_ends(lb_shared_sem_t *r, uint64_t now);
/* A post by self at site on r (mon: its lb_mon here): the idleness accrued
 * since the previous post, in any process, is blamed on the post's calling
 * context and counted in this process's record. Before the real post. */
void lb_shared_sem_post(lb_thread_t *self, lb_shared_sem_t *r, lb_mon_t *mon, uintptr_t site);
#endif
