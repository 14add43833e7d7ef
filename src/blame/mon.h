/* lb_mon: the monitored state of one synchronization object (64 bytes).
 * The type lives in the blame layer, which keeps its accrual state; the
 * pool that hands lb_mons out, and the conversion of native objects, are
 * the locks layer's (locks/monitored.h).
 *
 * Field ownership:
 *   - waiters, held, clock, clock_at_acquire, last_event_ns, stats: written
 *     only under `meta` (contended paths); the fast paths read waiters and
 *     clock without it (aligned 4/8-byte loads are atomic on x86-64).
 *   - acquisitions: written by the holder while it holds an exclusive
 *     lock, so the lock itself serializes it; for rwlocks (readers hold
 *     together) and semaphores (no holder) with a relaxed atomic add;
 *     hot spin locks' and semaphores' fast acquisitions are counted by
 *     each thread and added here later (locks/acq_counts.h).
 *   - hold_pending_ns (mutexes, the same word): stored by the holder
 *     without meta; taken under meta, with an atomic exchange to 0 by
 *     other threads, with a plain load and store by the holder's own
 *     release (nobody else stores one while it holds the lock).
 *   - addr, kind: written once at conversion, before the CAS publishes
 *     the lb_mon. */
#ifndef LB_BLAME_MON_H
#define LB_BLAME_MON_H
#include <stdint.h>

#include "common/kinds.h"
#include "util/meta_lock.h"

typedef struct lb_mon {
    /* hot: read by every operation */
    union {
        uint32_t barrier_count;  /* barriers: threads per episode (0 = unknown) */
        uint32_t spin_sampled;   /* spin locks: 1 once new waits are measured by
                                 * samples (blame/spin_sampled.h); set under meta */
        uint32_t mutex_sampled;  /* mutexes: whether new waits are blamed by holder
                                 * samples, and their slot (blame/mutex_sampled.h) */
        uint32_t signal_sampled; /* conds, semaphores: 0 (exact), or one signal
                                  * interval in N measured, and whether one is
                                  * being measured (blame/signal_sampled.h); under meta */
    };
    uint32_t waiters; /* threads waiting on the object (w), under meta */
    uint8_t kind;     /* lb_obj_kind */
    uint8_t held;     /* k accounted holders (readers); >0: accrual goes to V, 0: hand-off */
    union {
        struct {
            uint8_t hold_was_contended; /* current hold began after a wait (for site counts) */
            uint8_t clock_moved;        /* V moved since the current hold's accounting began */
        };
        uint16_t hold_flags; /* both at once, for the release's one test (blame.h) */
    };
    lb_meta_lock_t meta; /* guards the accrual state */
    union {
        uint64_t acquisitions;    /* exclusive acquisitions, written by the holder */
        uint64_t hold_pending_ns; /* mutexes (which count acquisitions in the mutex,
                                   * folding them in here only as the lb_mon dies):
                                   * when a hold that began with waiters present
                                   * began, not yet accounted (blame_clock.h); 0: none */
    };
    double clock;            /* blame clock V: idleness per holder so far, ns; under meta */
    double clock_at_acquire; /* V when the current hold's accounting began; under meta */
    uint64_t last_event_ns;  /* time accrual was last brought up to date */
    const void *addr;        /* the native object this state belongs to */
    uint32_t stats;          /* lb_object_stats index, 0 until first contention */
    union {
        uint32_t free_next;          /* pool free-list link while free */
        uint32_t barrier_arrived;    /* barriers: arrivals in this episode, under meta */
        uint32_t rw_waiting_readers; /* rwlocks: readers inside our wait, under meta */
        uint32_t published;   /* mutexes, spin locks: 1 once installed in the object (mon_gc.c) */
        uint32_t sem_counted; /* semaphores: 1 once a thread counts acquisitions in its own
                               * table (locks/acq_counts.h) */
    };
} lb_mon_t;

_Static_assert(sizeof(lb_mon_t) == 64, "lb_mon must stay one cache line");
#endif
