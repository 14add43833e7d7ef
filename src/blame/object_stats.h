/* lb_object_stats: the permanent record of one contended sync object.
 *
 * Created on an object's first contention (the first waiter), it outlives
 * the object's lb_mon so that the per-lock view still shows destroyed
 * locks. Objects that were never contended get no record; their
 * acquisitions go into per-kind totals instead.
 *
 * Invariants: the accrual fields are written under the owning lb_mon's
 * meta lock (each record on lines of its own); `acquisitions` is added to
 * (atomically) when the lb_mon is freed or at the final write, and for a
 * process-shared mutex at each acquisition (blame/shared_objs.h). Records
 * live in one reservation and are never freed; record i is the i-th below
 * lb_object_stats_top (they grow downward: the lock pool's reservation
 * holds them below its first slot, locks/mon_pool.c, so that a process's
 * first lock record and first object record share a page table).
 * Conservation per object: accrued_held_ns + handoff_ns is the integral of
 * the number of waiters over time; blamed_ns <= accrued_held_ns, and the
 * difference is reported as unattributed. */
#ifndef LB_OBJECT_STATS_H
#define LB_OBJECT_STATS_H
#include <stddef.h>
#include <stdint.h>

#include "blame/mon.h"
#include "blame/wait_note.h"
#include "sampler/metrics.h"
#include "util/common.h"

typedef struct lb_object_stats {
    uintptr_t addr;                 /* the object's address */
    uint32_t kind;                  /* lb_obj_kind */
    uint32_t first_thread;          /* thread that first waited on it */
    uint32_t first_node;            /* that waiter's context in its CCT (0 until known) */
    uint32_t retired;               /* 1 once its lb_mon was freed (destroy/re-init) */
    uint32_t shared;                /* 1: an object shared by the tree's processes, whose
                                 * blame here is taken from the accrual of every
                                 * process's waiters (blame/shared_objs.h) */
    uint32_t acquisitions_lost;     /* 1: a mutex whose memory was reused before its count
                                 * was read (a std::mutex that went out of scope:
                                 * no destroy call); acquisitions is then unknown */
    uint64_t acquisitions;          /* exclusive acquisitions (snapshot from lb_mon) */
    uint64_t contended;             /* acquisitions/waits that had to wait */
    uint64_t wait_ns;               /* total waiting, as measured by the waiters */
    double accrued_held_ns;         /* integral of waiters while held (to be blamed) */
    double blamed_ns;               /* handed to release/signal sites */
    double handoff_ns;              /* integral of waiters while nobody held it */
    double shared_handoff_ns;       /* shared: the tree's hand-off this process's waits took */
    double outside_ns;              /* shared: idleness of waits here that a process outside
                                     * the tree ended (unattributed) */
    double settled_ns;              /* shared: idleness still owed when the tree ended, which
                                     * this process, the tree's last, settled (unattributed) */
    double expired_ns;              /* shared: idleness of cond/sem waits here that ran out of
                                     * time, since the tree's last release (unattributed) */
    lb_collect_note_t last_collect; /* cond/sem: the last signal/post (wait_note.h) */
    lb_collect_note_t most_collect; /* ... and the one that collected the most */
    /* Spin waits measured by samples (blame/spin_sampled.h): atomic adds,
     * from spinners and their sampling handlers (no meta there); the
     * owed blame is taken by the holder's release, under meta. Folded
     * into the fields above by the final write. */
    uint64_t sampled_contended;  /* sampled waits begun */
    uint64_t sampled_wait_ns;    /* their samples, as time */
    uint64_t sampled_held_ns;    /* of that, taken while the lock was held */
    uint64_t sampled_owed_ns;    /* held samples not yet taken by a release */
    uint64_t sampled_handoff_ns; /* samples while nobody held it */
    uint64_t rate_window_ns;     /* spin locks, auto mode: when the current */
    uint32_t rate_window_waits;  /* rate measurement began, and its waits; under meta */
    uint64_t signal_mark_ns;     /* a sampled cond/sem without a slot: when its latest
                                  * marked interval began (blame/signal_sampled.c); under meta */
} __attribute__((aligned(LB_CACHELINE))) lb_object_stats_t;
/* Aligned: records are written under their own object's meta lock on
 * every contended operation, so two objects' records sharing a line
 * would make unrelated contended locks slow each other down. */

/* A fresh record, or 0 when out of memory (the object is then tracked
 * without a per-object record; its blame still reaches the CCT). */
uint32_t lb_object_stats_new(uintptr_t addr, lb_obj_kind kind);
lb_object_stats_t *lb_object_stats_at(uint32_t index); /* NULL for 0 */
/* The records' reservation: bytes, and its placement with its top at
 * `top` (before the first record; without it the first record reserves
 * a mapping of its own). */
size_t lb_object_stats_bytes(void);
void lb_object_stats_place(void *top);
/* The same for an index read from an lb_mon (0, or one that
 * lb_object_stats_new returned, so in range): no bound check, inline for
 * the contended paths. The mapping is reserved before the first index is
 * handed out and never moves. */
extern lb_object_stats_t *lb_object_stats_top;
static inline lb_object_stats_t *lb_object_stats_slot(uint32_t index)
{
    return lb_object_stats_top - index;
}
static inline uint32_t lb_object_stats_index(const lb_object_stats_t *s)
{
    return (uint32_t)(lb_object_stats_top - s);
}
static inline lb_object_stats_t *lb_object_stats_of_mon(uint32_t index)
{
    return index ? lb_object_stats_slot(index) : NULL;
}
uint32_t lb_object_stats_count(void); /* highest index + 1 */

/* Under mon->meta: the object's record, created on first use (NULL when
 * out of memory). */
static inline lb_object_stats_t *lb_object_stats_of(lb_mon_t *mon)
{
    if (lb_unlikely(mon->stats == 0))
        mon->stats = lb_object_stats_new((uintptr_t)mon->addr, (lb_obj_kind)mon->kind);
    return lb_object_stats_of_mon(mon->stats);
}

/* A wait by thread `thread`, in its CCT node `node`, names the object's
 * first waiter if it has none yet (where the per-lock view says the
 * object was first seen). */
static inline void lb_object_stats_first_waiter(lb_object_stats_t *s, uint32_t thread,
                                                uint32_t node)
{
    if (s && s->first_node == 0) {
        s->first_thread = thread;
        s->first_node = node;
    }
}

/* The final write: move the sampled spin-wait figures into the exact
 * ones (waits, accrual, hand-off); the blame they carried is in
 * blamed_ns already, and what no release took is unattributed. Returns
 * the number of sampled waits folded (sync_object.sampled_waits; for a
 * cond or semaphore, its waits whose blame was estimated from sampled
 * signal intervals, blame/signal_sampled.h). */
uint64_t lb_object_stats_fold_sampled(lb_object_stats_t *s);

/* Per-kind totals of the acquisitions that are in no record: those of
 * retired objects without one; for mutexes, every acquisition as it
 * happens (locks/mutex_ops.h), less the counts later folded into a
 * record (taken back out here). An attached thread binds its own array
 * (lb_thread.unrecorded_acquisitions); other threads add to a shared one.
 * The writer sums both; a thread's own sum may run below 0 (modulo 2^64)
 * when it folds counts that other threads made. */
void lb_object_totals_bind(uint64_t *per_thread);
void lb_object_totals_add(lb_obj_kind kind, uint64_t acquisitions);
void lb_object_totals_take(lb_obj_kind kind, uint64_t acquisitions);
uint64_t lb_object_totals_unbound(lb_obj_kind kind);
#endif
