/* Waits on hot conds and semaphores, kept in shards instead of under the
 * object's meta lock (docs/DESIGN.md rule 3; signal_sampled.h is the estimator
 * these waits feed).
 *
 * Why: a cond wait enters and leaves its wait inside the program's hold of
 * the cond's mutex (before glibc releases it, after glibc re-takes it).
 * Under meta, each did a locked exchange on the lb_mon's line and wrote
 * the object's record, two lines that the signalling thread reads or
 * writes too: two cross-core misses inside the hold at each end of each
 * wait. A producer waiting on a full queue's "not full" for most pushes
 * then held the queue's mutex long enough that its consumer found it taken
 * and slept (bench/taskq 1 worker, 500 rounds of work: 1.32-1.35x native;
 * 1.21x with these shards and wait ends that read no record;
 * docs/PERFORMANCE.md, "Hot conds and semaphores").
 *
 * The rule: the blame clock of a cond or semaphore is V(t) = I(t), the
 * integral of its waiter count w over time (it is "held" for good, k = 1:
 * blame_clock.h). I is additive over waiters, so each shard keeps, for
 * the waits of its threads (thread id & the shard mask):
 *   n  waits in progress, S  the sum of their start times,
 *   C  the sum of the completed waits' lengths,
 * and I(t) = sum over shards of C + n * t - S (uint64 modular arithmetic:
 * every term but the result may wrap). A waiter changes only its own
 * shard, under that shard's lock; a measured signal (one in
 * LB_SIGNAL_SAMPLE_EVERY) reads every shard under its lock, so each
 * shard's n and S are seen together.
 *
 * Timed out: a wait that ran out of time was ended by no signal or post,
 * and the blame of the interval it ends in leaves out its part of that
 * interval (docs/DESIGN.md rule 3, blame.c's expired_wait_unblamed for
 * the meta path). Its shard's T takes back end - max(start, the open
 * interval's start): the mark's time while a measured interval is open,
 * the latest signal's time (last_signal_ns) when the object looks for
 * gaps (a gap is measured from there); neither: the interval it ends in
 * is measured by no one and nothing is taken back. The measured
 * intervals and gaps read I - T; the accrual (accrued_held_ns) reads I,
 * so what was taken back stays accrued and unblamed (unattributed). The
 * wait reads the mark under the slot's lock (a wait that timed out is
 * rare and long: the cost of one more lock is nothing beside it).
 *
 * When: a cond or semaphore gets a slot when it turns sampled (under its
 * meta, signal_sampled.c); the slot's number is kept in mon->signal_sampled
 * above the state bits. Waits that began before that stay in V under
 * meta (lb_wait_t.hot is NULL) and end there; measured intervals add both
 * clocks. With every slot taken, new hot objects keep the meta path.
 *
 * Totals: the accrual moves into the record's accrued_held_ns at each
 * measured signal and when the slot's counts are drained (the final
 * write, the object's destroy): up to the last event the slot saw, as the
 * exact clock advances only at events. The completed waits' count and
 * time move into the record then too.
 *
 * Invariants: slot->mon is set (CAS from NULL) under the object's meta,
 * cleared by lb_signal_waits_forget once nobody waits (the object is
 * destroyed); the header's fields below `lock` under it, shard fields
 * under the shard's lock; the order is the object's meta (a measured
 * signal takes it only while waits from before the slot remain), the
 * slot's lock, a shard's lock. The shards only grow (but n and S): what
 * went into records is kept apart, in the header.
 * Nothing here runs in a signal handler. */
#ifndef LB_BLAME_SIGNAL_WAITS_H
#define LB_BLAME_SIGNAL_WAITS_H
#include <stdbool.h>
#include <stdint.h>

#include "blame/mon.h"
#include "blame/object_stats.h"
#include "blame/sampled_mode.h" /* LB_HOT_SHARDS, lb_hot_shard_mask */
#include "core/thread.h"
#include "util/meta_lock.h"

#define LB_SIGNAL_HOT_SLOTS  64
/* signal_sampled values keep the slot's number above the state bits */
#define LB_SIGNAL_SLOT_SHIFT 2
#define LB_SIGNAL_SLOT_MASK  0x3fffu /* (above it: signal_sampled.h's mark bits) */

/* The shard's last events (signal_sampled.h, "Gaps"): enough to know its
 * I at a time a few events back. */
#define LB_SIGNAL_SHARD_EVENTS 8

typedef struct lb_signal_shard {
    lb_meta_lock_t lock;
    uint32_t waiting;   /* n */
    uint64_t start_sum; /* S, ns */
    uint64_t waited_ns; /* C */
    uint64_t waits;     /* completed waits */
    uint64_t taken_ns;  /* T: the timed-out waits' parts taken back ("Timed out" above) */
    uint64_t last_ns;   /* the latest begin or end */
    /* the last LB_SIGNAL_SHARD_EVENTS begins and ends: each one's time,
     * the shard's I and n just after it; entry (events - 1) % the size is
     * the newest (an entry never written reads time 0, I 0, n 0: the
     * shard's state before its first event) */
    uint32_t events;
    uint32_t event_waiting[LB_SIGNAL_SHARD_EVENTS];
    uint64_t event_ns[LB_SIGNAL_SHARD_EVENTS];
    uint64_t event_i[LB_SIGNAL_SHARD_EVENTS];
} __attribute__((aligned(LB_CACHELINE))) lb_signal_shard_t;

/* The header: read by the object's signals, written by its measured
 * signals (signal_sampled.c) under `lock`; the waits read none of it. */
typedef struct lb_signal_hot {
    lb_mon_t *mon;           /* NULL: free */
    uint32_t stats;          /* mon's record */
    lb_meta_lock_t lock;     /* the fields below */
    uint32_t marked;         /* a measured interval is open (signal_sampled.h) */
    uint32_t mark_log2;      /* ... and stands for 2^mark_log2 intervals */
    uint32_t gaps;           /* 1: its signals look for gaps (signal_sampled.h, "Gaps"); on
                              * marked's line, which every signal reads */
    uint64_t mark_ns;        /* when it began */
    double v_mark;           /* the meta clock V at its mark */
    uint64_t i_mark;         /* I - T at its mark */
    uint64_t i_drained;      /* I already in the record's accrued_held_ns */
    uint64_t measured_ns;    /* when I was last read */
    uint64_t last_signal_ns; /* then the latest signal's time (to a grain), stored by
                              * the signals, relaxed, no lock */
    uint64_t drained_waits, drained_ns; /* completed waits already in the record */
    lb_signal_shard_t shard[LB_HOT_SHARDS];
} __attribute__((aligned(LB_CACHELINE))) lb_signal_hot_t;

extern lb_signal_hot_t lb_signal_hot_slots[LB_SIGNAL_HOT_SLOTS];

/* Under mon's meta, mon turning sampled: a slot for it, or NULL. mon's
 * record must exist. */
lb_signal_hot_t *lb_signal_waits_take(lb_mon_t *mon);
/* The slot that signal_sampled value v names, or NULL. */
static inline lb_signal_hot_t *lb_signal_waits_slot(uint32_t v)
{
    uint32_t n = (v >> LB_SIGNAL_SLOT_SHIFT) & LB_SIGNAL_SLOT_MASK;
    return n - 1 < LB_SIGNAL_HOT_SLOTS ? &lb_signal_hot_slots[n - 1] : NULL;
}
/* The slot of a value v known to name one (a signal memo's: no range
 * test). */
static inline lb_signal_hot_t *lb_signal_waits_named(uint32_t v)
{
    return &lb_signal_hot_slots[((v >> LB_SIGNAL_SLOT_SHIFT) & LB_SIGNAL_SLOT_MASK) - 1];
}
/* The slot number to keep in signal_sampled (see signal_sampled.h). */
uint32_t lb_signal_waits_number(const lb_signal_hot_t *slot);

/* self begins / ends a wait on slot's object at start / end; timed_out:
 * it ran out of time ("Timed out" above). */
void lb_signal_waits_begin(lb_thread_t *self, lb_signal_hot_t *slot, uint64_t start);
void lb_signal_waits_end(lb_thread_t *self, lb_signal_hot_t *slot, uint64_t start, uint64_t end,
                         bool timed_out);
/* self's wait about to begin on slot's object goes on the run of its last
 * one, which ran out of time (wait_note.h): the part that wait took back
 * into T goes back out of it, if the same interval is open and no signal
 * came since. Before lb_signal_waits_begin. */
void lb_signal_waits_put_back(lb_thread_t *self, lb_signal_hot_t *slot);

/* A measured signal at now, holding slot->lock: I(now) - T(now), the
 * blame clock that its intervals read, and the accrual I since the last
 * one moved into stats; *waiting (if not NULL): the threads waiting then
 * (I grows at that rate while none begins or ends). */
uint64_t lb_signal_waits_integral(lb_signal_hot_t *slot, lb_object_stats_t *stats, uint64_t now,
                                  uint64_t *waiting);

/* Holding slot->lock: the idleness that accrued on slot's object from
 * `from` to `now` (the integral of its waiters, less what waits that ran
 * out of time in between took back), into *accrued; false if a shard had
 * too many events since `from` to tell. */
bool lb_signal_waits_since(lb_signal_hot_t *slot, uint64_t from, uint64_t now, uint64_t *accrued);

/* The final write (and a fork child): the counts of the slot that
 * belongs to record s into it. */
void lb_signal_waits_drain(lb_object_stats_t *s);
/* mon's object is destroyed or re-initialized: its slot's counts into its
 * record, and the slot freed. */
void lb_signal_waits_forget(lb_mon_t *mon);
/* Fork child: nobody waits any more. */
void lb_signal_waits_fork_child(void);
#endif
