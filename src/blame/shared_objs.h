/* Synchronization objects shared by the processes of one profiled tree
 * (in memory the processes share, initialized process-shared: sem_init
 * with pshared != 0, and mutexes, rwlocks, condition variables and
 * barriers with PTHREAD_PROCESS_SHARED): docs/DESIGN.md, "Across
 * processes". A release,
 * post, signal or last arrival in one process ends waits in another, so
 * the idleness it is blamed for accrues over every process's waiters,
 * with the same rules as within a process.
 *
 * How: the first process-shared init of the tree creates its shared
 * table, a file beside the database (common/db_name.h) mapped MAP_SHARED,
 * which every process the tree forks from then on inherits, and which a
 * process that starts later in the tree (an exec'd image: a server's
 * fork + exec'd workers) maps at its start. The table holds one record
 * per object, by its key (blame/shared_keys.h): an object in a shared
 * file mapping (shm_open, a file, a memfd) by the file and its offset in
 * it, which every process that maps the file shares, whatever its
 * addresses; any other (anonymous shared memory, inherited by fork at the
 * same address) by its address. Without a database path, or when the
 * file cannot be made, the table is an anonymous mapping that only forks
 * inherit. A record carries the
 * object's accrual across processes: its waiters w (all processes), the
 * integral of w owed to the next release (since the previous post,
 * signal or episode's end; for a mutex, over the current hold; an
 * rwlock's k holders share it through the blame clock V, each taking V
 * since its own acquisition), and the
 * integral of w while nobody is to blame (a mutex nobody holds, a
 * barrier's released waiters on their way out: hand-off). Each process
 * keeps its own lb_mon and object record for the victims' view (their
 * waits, their counts); a release anywhere takes the record's owed
 * integral as its blame, in the releasing process; waits that end take
 * the hand-off. The writer then writes each process's record as blame +
 * hand-off + outside + expired (object_stats.h), so the tree's rows add
 * up: the waits in one process, the blame in another. A cond or semaphore
 * wait that runs out of time takes its own accrual since the tree's last
 * post or signal back from the owed integral into its process's record
 * (expired_ns, unattributed), as within a process (blame.c,
 * expired_wait_unblamed).
 *
 * Outside the tree: a wait that succeeds without any release by the tree
 * since it began (a sem, cond or barrier), or a mutex acquired while the
 * record still says held (its release was not seen), was ended by a
 * process that is not profiled, unless a release of the tree counted
 * itself within 1 ms before the wait began (it may still be on its way
 * to the real call). A mutex's record says held by a holder the tree did
 * not see acquire it only where a waiter found the lock word taken and
 * naming an owner (glibc names it after taking the word and clears it
 * before freeing it: a taken word that names none is a holder on its way
 * in or out, or one that freed it after the waiter's trylock), and that
 * hold is no outsider's where the owner named is the acquirer or the
 * tree's last releaser. The owed integral of an outsider's hold or
 * release goes to the waiting process's record as `outside_ns`
 * (unattributed, and the header says why).
 *
 * Named semaphores (sem_open) are keyed by their file in the shm
 * directory (interpose/sem_open.c). Not covered: a shared file mapping made before
 * the library's start, moved by mremap, or beyond the 64 a process keeps
 * (address keys); an rwlock's holders that are outside the tree (its k
 * counts the tree's holders only).
 *
 * The tree's end: what the tree still owes when its last process ends
 * (waiters woken by the last signal on their way out, waits in progress,
 * the share of an rwlock's holders still holding, hand-off nobody took)
 * is settled by that process as unattributed, on its own row of each
 * object, so that each object's rows add up to its waits across the
 * tree; it then removes the table's file. The table counts the processes
 * that hold it and have not finished (a fork counts its child before the
 * fork; an exec hands its count on to the next image, which finds its
 * slot by pid and start time).
 *
 * A process killed outright (SIGKILL) never writes: its waits stay in no
 * row (the report's header says how many processes ended without writing,
 * and how many waits on shared objects they left), and the tree drops
 * them. Each process has a slot in the table (pid, kernel start time: a
 * fork child takes it at its first wait on a shared object, or before an
 * exec) and each wait in progress an entry (its process, record, start); a process
 * found gone without ending (kill(pid, 0) fails: it was reaped, looked
 * for at most every 5 ms from a wait that begins on a shared object;
 * at every process's end, by kill(pid, 0) and, where few slots still
 * look alive or it has a child to reap, by /proc start time, reused pids
 * and zombies included: shared_table.h) loses its slot and its count, and each of its waits
 * leaves w with what it accrued since it began, taken from what the
 * record still owes, so the survivors' releases are blamed for their own
 * waiters only and the rows add up to the waits that were written. What a
 * release took of a killed waiter's accrual before it was found stays
 * blamed; so does the holder share of an rwlock (V), and a mutex whose
 * holder was killed stays held until the next acquisition, which calls
 * its wait ended from outside.
 * A cond or semaphore wait that a signal or post wakes without a release
 * of the tree counted since it began ended from outside the tree, unless
 * a release of the tree logged before it had not yet returned from its
 * real call when it began (signals_returned); a signaller killed between
 * the two leaves its object's later waits never counted as outside.
 * A fork that failed, or a fork child killed outright between its
 * parent's count and its own slot (before its first wait on a shared
 * object), leaves the count high, and what is still owed at the end then
 * stays in no row.
 *
 * Invariants: a record's fields but its key change only under its lock, a
 * lb_meta_lock in the shared mapping (plain atomics: it works across
 * processes); its key is written once, before the record is published
 * (shared_table.h). Timestamps from different processes may be a few
 * nanoseconds out of order: accrual ignores a time before the record's
 * last event. Each process counts its own threads' waits in progress per
 * record, and at its end takes them out of w, so that a process that dies
 * with threads waiting leaves no waiters behind. Nothing here runs on a
 * fast path: only objects initialized process-shared have records, and
 * only a process that has the table looks keys up. */
#ifndef LB_BLAME_SHARED_OBJS_H
#define LB_BLAME_SHARED_OBJS_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "blame/blame.h"
#include "blame/mon.h"
#include "core/thread.h"

typedef struct lb_shared_obj lb_shared_obj_t;

/* A wait on a shared object in progress (its record, the tree's release
 * count before it began, when it began, its entry in the table + 1, 0 for
 * none, and whether this process's count of its waits on r holds it). */
typedef struct lb_shared_wait {
    lb_shared_obj_t *r;
    uint64_t releases;
    bool signal_pending; /* a cond's or semaphore's: a signal or post of the tree was
                          * logged and its real call had not returned when the wait
                          * began (it may still wake this wait) */
    uint64_t begun_ns;
    uint32_t entry;
    bool counted;
} lb_shared_wait_t;

/* Nonzero once this process has the shared mapping (its own or inherited):
 * the wrappers look for records only then. */
extern uint32_t lb_shared_objs_on;

/* The tree's table lives beside the database at db_path (the writer's
 * choice, at start); the tree's root removes one an earlier tree left. */
void lb_shared_objs_place(const char *db_path, bool tree_root);
/* The program mapped [addr, addr + len) of fd at off, MAP_SHARED
 * (interpose/mmap.c): its objects there get file keys, and a process
 * without the table joins its tree's. errno kept. */
void lb_shared_file_mapped(void *addr, size_t len, int fd, off_t off);
/* The same for a mapping libc made itself, of the file (dev, ino): a
 * named semaphore (interpose/sem_open.c). errno kept by the caller. */
void lb_shared_file_identified(void *addr, size_t len, dev_t dev, ino_t ino, off_t off);

/* obj was initialized process-shared (kind; a barrier's count): its
 * record, created (with the mapping on first use) or reset; its waiters
 * start at 0. errno kept. */
void lb_shared_register(const void *obj, lb_obj_kind kind, uint32_t barrier_count);
/* An existing process-shared obj (kind) opened by this process (a named
 * semaphore): its record, found or made, keeps its state. errno kept. */
void lb_shared_open(const void *obj, lb_obj_kind kind);
/* obj's record, or NULL: not a process-shared object of this tree. */
lb_shared_obj_t *lb_shared_find_slow(const void *obj);
static inline lb_shared_obj_t *lb_shared_find(const void *obj)
{
    return __atomic_load_n(&lb_shared_objs_on, __ATOMIC_RELAXED) ? lb_shared_find_slow(obj) : NULL;
}

/* The tree's releases of r so far: a wait's w->releases, read before the
 * wait's last attempt that could succeed without waiting (a semaphore's
 * trywait), so that a release between the two counts as the one that
 * ended it. */
uint64_t lb_shared_releases(const lb_shared_obj_t *r);
/* A cond's or semaphore's: whether a signal or post of the tree is logged
 * whose real call has not returned (taken with lb_shared_releases). */
bool lb_shared_signal_pending(const lb_shared_obj_t *r);
/* After the real call of a signal or post that lb_shared_blame logged. */
void lb_shared_signal_returned(lb_shared_obj_t *r);
/* A thread of this process begins a wait on w->r at `now` (mon: the
 * object's own lb_mon here, whose record is marked shared), w->releases
 * read already. taken: a mutex whose lock word was seen taken (a holder
 * the record may not know: one outside the tree, or one of the tree
 * between its real acquisition and its accounting), owner: the thread
 * the word names as its holder, read after `now` (0: none named, and the
 * record is left as it is: a holder on its way in or out of its real
 * call, or one that freed the word since it was seen taken). */
void lb_shared_wait_begins(lb_shared_wait_t *w, lb_mon_t *mon, uint64_t now, bool taken,
                           int32_t owner);
/* ... and ends it at `now`: acquired (a mutex: it holds it now), woken
 * (a sem, cond or barrier: the real call succeeded, so some release
 * ended it; not one that timed out or was interrupted), timed_out (a sem
 * or cond: it ran out of time, and no release ended it: its own accrual
 * since the tree's last release leaves what the next one takes and stays
 * unattributed, in this process's record: docs/DESIGN.md rule 3). */
void lb_shared_wait_ends(const lb_shared_wait_t *w, lb_mon_t *mon, uint64_t now, bool acquired,
                         bool woken, bool timed_out);
/* A mutex acquired without waiting: its hold begins. */
void lb_shared_acquired(lb_shared_obj_t *r, lb_mon_t *mon, uint64_t now);
/* One acquisition of a process-shared mutex (mon, this process's lb_mon
 * of it) by self, nested ones too: counted in this process's record of
 * the object, made at its first acquisition, so that its row counts every
 * acquisition here, as a private mutex's does (its lb_mon has no word to
 * keep a count in until then: a mutex's acquisitions word is its pending
 * hold time, blame/mon.h). Into self's per-kind total if no record can be
 * made. errno is preserved. */
void lb_shared_acquisition(lb_thread_t *self, lb_mon_t *mon);
/* A release (mutex), post (sem) or signal/broadcast (cond) on r: the
 * idleness owed, accrued in any process, collected into this process's
 * record (mon's), to be deposited on the release's calling context.
 * Before the real call. */
lb_hold_t lb_shared_collect(lb_shared_obj_t *r, lb_mon_t *mon, uint64_t now);
/* collect, then deposit at site (a post, signal or release by self). */
void lb_shared_blame(lb_thread_t *self, lb_shared_obj_t *r, lb_mon_t *mon, lb_obj_kind kind,
                     uintptr_t site);
/* An arrival at barrier r: true if it completes the episode (the
 * episode's idleness collected in *hold), else its wait begun in *w. */
bool lb_shared_barrier_arrive(lb_shared_wait_t *w, lb_shared_obj_t *r, lb_mon_t *mon, uint64_t now,
                              lb_hold_t *hold);
/* An rwlock's hold by this process begins (after the real acquire):
 * returns the blame clock V at its start, which the holder keeps (the
 * thread's rwlock holds, rw_holds.h); k holders share what accrues. */
double lb_shared_rw_acquired(lb_shared_obj_t *r, lb_mon_t *mon, uint64_t now);
/* ... and ends (before the real unlock): V since `at`, collected. */
lb_hold_t lb_shared_rw_released(lb_shared_obj_t *r, lb_mon_t *mon, uint64_t now, double at);
/* Waits on shared objects ended by processes outside the tree, in this
 * process: their idleness, ns, and their number (the writer's meta). */
uint64_t lb_shared_outside_ns(void);
uint64_t lb_shared_outside_waits(void);
/* Waits in progress of processes killed outright that this process
 * dropped from the tree's records (never written): their idleness until
 * then, ns, and their number (the writer's meta). */
uint64_t lb_shared_killed_ns(void);
uint64_t lb_shared_killed_waits(void);
#endif
