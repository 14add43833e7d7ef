/* Spin waits measured by CPU samples taken while spinning (thesis ch. 6.4;
 * docs/DESIGN.md "Exact and estimated blame").
 *
 * Why: a spinning waiter sees the lock free only for the few ns between
 * the holder's releasing store and its next acquiring CAS. Any accounting
 * inside the hold (a timestamp, the meta lock, a context look-up: 100-200
 * ns) lets the holder re-take the line first, and the lock almost never
 * changes hands (docs/PERFORMANCE.md, "Hot spin locks"). A sampled
 * wait puts nothing in anyone's hold:
 *   - the spinner, before it spins, counts the wait and notes the lock in
 *     its own record (lb_thread.spin_sampled); after, it clears the note.
 *     The count stays in its own record too (lb_thread.spin_sampled_waits)
 *     until it waits on another lock, exits, or the final write: an atomic
 *     add on the lock's record, a line the other spinner writes as well,
 *     cost ~100 ns before every spin and took the 2-thread spin hand-off
 *     rate from native's 0.36 to 0.25 (docs/PERFORMANCE.md, "Hot spin locks");
 *   - a CPU sample that finds the note adds its period to the wait (the
 *     victim's view, in the sample's calling context) and to the lock:
 *     owed blame if the held bit is set, hand-off latency if not. Owed
 *     blame raises mon->clock_moved, so the holder's release takes the
 *     accounted path and collects it (blame.c, spin_release_collects),
 *     once per sample at most;
 *   - the barging holder and the release see no waiters and do nothing.
 * Accuracy is that of the samples: unbiased for the CPU time spent
 * spinning, which is the wait while the spinner runs (a spinner that is
 * descheduled waits without being sampled).
 *
 * When: LOCKBLAME_SPIN=exact|sampled|auto (default auto), see
 * sampled_mode.h: in auto mode a spin lock turns sampled once its
 * accounted holds come fast enough that exact accounting (100-200 ns in
 * each hold) would starve the spinners.
 * Sampled waits need a thread that is being sampled with a known period;
 * other threads' waits stay exact.
 *
 * Invariants: the sampled fields of lb_object_stats are changed only by
 * atomic adds and exchanges (the handler takes no lock); a thread's
 * spin_sampled_waits (record index << 32 | waits not yet added) changes by
 * its own CAS, or by an exchange to 0 from the final write: every wait is
 * added to its record exactly once; mon->spin_sampled
 * is set under meta and never cleared while the lb_mon lives; the handler
 * writes the interrupted thread's own record and CCT, and of the lock
 * only its record's sampled fields (atomic adds) and mon->clock_moved
 * (one byte store). */
#ifndef LB_BLAME_SPIN_SAMPLED_H
#define LB_BLAME_SPIN_SAMPLED_H
#include <stdbool.h>
#include <stdint.h>

#include "blame/mon.h"
#include "blame/object_stats.h"
#include "blame/sampled_mode.h"
#include "core/thread.h"
#include "sampler/cct.h"

/* Read LOCKBLAME_SPIN (after the sampler's setup: sampled waits need its
 * period); one lockblame: line for a bad value. */
void lb_spin_sampled_setup(void);
/* The mode in force, set once by lb_spin_sampled_setup: LB_SAMPLED_EXACT
 * when samples cannot measure waits. */
extern lb_sampled_mode_t lb_spin_mode;

/* Under meta, at an accounted release of mon at now: in auto mode, turn
 * mon sampled when it is hot (sampled_mode.h). */
void lb_spin_sampled_rate_note(lb_mon_t *mon, lb_object_stats_t *stats, uint64_t now);

/* Should a wait on mon be measured by samples? (LOCKBLAME_SPIN=sampled,
 * or mon turned sampled.) */
static inline bool lb_spin_wait_sampled(const lb_mon_t *mon)
{
    return __atomic_load_n(&mon->spin_sampled, __ATOMIC_RELAXED) ||
           lb_spin_mode == LB_SAMPLED_ALWAYS;
}

/* A wait on mon, about to spin, called at the wrapper's call site `site`
 * (a return address): returns true with the wait counted and noted when
 * samples can measure it (mon sampled, this thread sampled); false: time
 * it exactly. */
bool lb_spin_sampled_wait_begin(lb_thread_t *self, lb_mon_t *mon, uintptr_t site);
/* Add the sampled spin waits thread t still keeps to their record: t
 * itself as it exits, the final write for every thread (which may still
 * be running). */
void lb_spin_sampled_flush(lb_thread_t *t);
/* What a sampled wait replaces in the thread's record while it spins: a
 * wait it interrupted (the program's signal handler spinning while its
 * thread was in a wait) gets both back at the end. */
typedef struct lb_spin_outer {
    lb_mon_t *spin_sampled;
    uint32_t waiting;
} lb_spin_outer_t;

static inline lb_spin_outer_t lb_spin_sampled_outer(const lb_thread_t *self)
{
    return (lb_spin_outer_t){ .spin_sampled = self->spin_sampled, .waiting = self->waiting };
}

/* The spin is over (the lock is this thread's); outer: what
 * lb_spin_sampled_outer returned before lb_spin_sampled_wait_begin. */
static inline void lb_spin_sampled_wait_end(lb_thread_t *self, lb_spin_outer_t outer)
{
    __atomic_store_n(&self->spin_sampled, outer.spin_sampled, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    self->waiting = outer.waiting;
}

/* Signal handler, on a thread whose spin_sampled is set: a sample of ns
 * CPU ns in calling context node, the lock held or not at that moment. */
void lb_spin_sampled_account(lb_thread_t *t, lb_cct_node_t *node, uint64_t ns, bool held);

#endif
