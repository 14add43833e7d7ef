/* The blame verbs of blame.h. See blame_clock.h for the accrual rule and
 * docs/DESIGN.md rules 1-5 for what is blamed on whom.
 *
 * Invariants: mon->meta is held only around accrual updates; unwinding
 * and CCT updates happen outside it, with self->busy raised so the
 * sampler and re-entrant wrapper calls stay out. */
#include "blame/blame.h"

#include <errno.h>

#include "blame/blame_clock.h"
#include "blame/object_blame.h"
#include "blame/object_stats.h"
#include "blame/context.h"
#include "blame/sites.h"
#include "blame/mutex_sampled.h"
#include "blame/signal_sampled.h"
#include "blame/signal_waits.h"
#include "blame/spin_sampled.h"
#include "blame/wait_deferred.h"
#include "blame/wait_note_ops.h"
#include "core/undirected.h"
#include "sampler/cct.h"
#include "util/clock.h"

/* The object's record, created on first contention (under meta). */
static lb_object_stats_t *stats_of(lb_mon_t *mon)
{
    return lb_object_stats_of(mon);
}

/* The calling context of the current wrapper call in self's CCT (cached
 * per thread: no unwind for a context already seen, see context.h). */
static lb_cct_node_t *context_here(lb_thread_t *self)
{
    uint32_t id;
    return lb_context_here(self, &id);
}

/* Under meta: where the accrual that a signal would collect from V now
 * began (*from, 0 unknown) and V then (*base); false: no signal will read
 * V (a sampled object with no measured interval open). On a sampled
 * object only a measured interval's blame reads the clock: the interval
 * open now, if one is (lb_signal_sampled_open); an unmeasured interval's
 * accrual is blamed on nobody anyway. */
static bool collect_from(lb_mon_t *mon, const lb_object_stats_t *stats, uint64_t *from,
                         double *base)
{
    *from = 0;
    *base = mon->clock_at_acquire; /* V at the last collect */
    if (mon->signal_sampled)
        return lb_signal_sampled_open(mon, stats, from, base);
    if (stats)
        *from = stats->last_collect.at_ns;
    return true;
}

/* Under meta: is mon as x's meta part saw it, no collect since (its
 * generation, wait_note.h)? A sampled object's signals that no interval
 * measures leave no trace: the measured interval's blame is its closing
 * signal's anyway, so only a measure counts there. */
static bool expired_same(lb_mon_t *mon, const lb_object_stats_t *stats, const lb_expired_run_t *x)
{
    uint64_t from;
    double base;
    return stats && x->mon == mon && x->stats_index == mon->stats &&
           x->sampled == mon->signal_sampled && x->v_acquire == mon->clock_at_acquire &&
           x->collect_ns == stats->last_collect.at_ns && collect_from(mon, stats, &from, &base) &&
           from == x->from && base == x->base;
}

/* Under meta, accrual brought up to now: a cond, semaphore or futex wait
 * that ran out of time was ended by no signal, post or wake
 * (docs/DESIGN.md rule 3), and its own accrual since the object's last
 * collect (its record's last_collect) is taken back from the clock, so
 * that the next signal, wherever it comes from (the waiter's own, as a
 * timer thread's broadcast after its timed wait), does not collect it: it
 * stays accrued and unblamed (unattributed). On a sampled object, the
 * part inside the measured interval open now (collect_from). The amount
 * is kept in the thread's note (wait_note.h, lb_expired_run_t) with the
 * object's generation: the thread's next wait, if it goes on the run,
 * puts it back (expired_run_goes_on), and if that one runs out too, it
 * takes its own and the carried amount back. */
static void expired_wait_unblamed(lb_thread_t *self, lb_mon_t *mon, const lb_object_stats_t *stats,
                                  const lb_wait_t *wait, uint64_t now)
{
    lb_expired_run_t *x = &self->wait_note->expired;
    if (!lb_obj_kind_is_signalled(wait->kind))
        return;
    double carried = x->carried && expired_same(mon, stats, x) ? x->taken : 0;
    x->taken = 0;
    x->carried = 0;
    if (!wait->timed_out)
        return;
    uint64_t since = wait->start_ns, from;
    double base;
    if (!collect_from(mon, stats, &from, &base))
        return;
    if (from > since)
        since = from;
    double own = (now > since ? (double)(now - since) : 0) + carried;
    double pending = mon->clock - base;
    double taken = own < pending ? own : pending;
    if (taken > 0)
        __atomic_store(&mon->clock, &(double){ mon->clock - taken }, __ATOMIC_RELAXED);
    if (taken > 0 && stats) {
        x->taken = taken;
        x->sampled = mon->signal_sampled;
        x->stats_index = mon->stats;
        x->v_acquire = mon->clock_at_acquire;
        x->collect_ns = stats->last_collect.at_ns;
        x->from = from;
        x->base = base;
    }
}

/* The thread begins a wait on mon at now: does it go on the run of its
 * last wait, which ran out of time (wait_note.h)? If not, the note's
 * parts are dropped (what they took back stays taken). */
static bool expired_run_goes_on(lb_thread_t *self, lb_mon_t *mon, uint64_t now)
{
    lb_expired_run_t *x = &self->wait_note->expired;
    if (x->mon == mon && self->expired_mon == mon && !x->carried &&
        lb_note_run_goes_on(x->start_ns, x->end_ns, now))
        return true;
    if (x->mon)
        *x = (lb_expired_run_t){ 0 };
    self->expired_mon = NULL;
    return false;
}

/* Under meta, after wait_begins: the run goes on; the meta part's
 * amount goes back onto V if no collect came since. */
static void expired_put_back(lb_thread_t *self, lb_mon_t *mon)
{
    lb_expired_run_t *x = &self->wait_note->expired;
    if (x->taken > 0 && expired_same(mon, stats_of(mon), x))
        __atomic_store(&mon->clock, &(double){ mon->clock + x->taken }, __ATOMIC_RELAXED);
    else
        x->taken = 0;
}

/* After wait_begins (blame.h). */
void lb_wait_started(lb_thread_t *self, lb_mon_t *mon, lb_obj_kind kind, lb_wait_t *wait)
{
    wait->node = self->cct ? lb_context_here(self, &wait->node_id) : NULL;
    lb_note_wait_begin(self, mon, kind, wait->start_ns, wait->node ? wait->node_id : 0);
    lb_waiting_begin(self, kind);
}

/* Under meta: the calling thread starts waiting on mon at now (w++). */
static void wait_begins(lb_mon_t *mon, lb_obj_kind kind, lb_wait_t *wait, uint64_t now)
{
    lb_clock_advance(mon, stats_of(mon), now);
    wait->mon = mon;
    wait->kind = kind;
    wait->start_ns = now;
    wait->hot = NULL;
    wait->timed_out = false;
    wait->had_deadline = false;
    if (kind == LB_OBJ_MUTEX)
        lb_mutex_sampled_exact_waiter(mon); /* before it counts: mutex_quiet.h */
    mon->waiters++;
    if (!mon->held) /* someone holds it, or we would not wait */
        lb_clock_hold_begins(mon);
}

void lb_wait_begin(lb_thread_t *self, lb_mon_t *mon, lb_obj_kind kind, lb_wait_t *wait)
{
    lb_wait_begin_at(self, mon, kind, wait, lb_now_ns());
}

/* The slot whose shards count waits on mon, a hot cond or semaphore that
 * has one (signal_waits.h); NULL: the meta path. */
static inline struct lb_signal_hot *signal_hot_of(const lb_mon_t *mon, lb_obj_kind kind)
{
    if (!lb_obj_kind_is_signalled(kind)) /* (the field is a union) */
        return NULL;
    return lb_signal_waits_slot(__atomic_load_n(&mon->signal_sampled, __ATOMIC_ACQUIRE));
}

void lb_wait_begin_at(lb_thread_t *self, lb_mon_t *mon, lb_obj_kind kind, lb_wait_t *wait,
                      uint64_t now)
{
    lb_wait_deferred_flush(self); /* the previous wait's end first */
    int saved_errno = errno;
    lb_enter(self);
    bool goes_on = expired_run_goes_on(self, mon, now);
    struct lb_signal_hot *hot = signal_hot_of(mon, kind);
    if (hot) {
        *wait = (lb_wait_t){ .mon = mon, .start_ns = now, .kind = kind, .hot = hot };
        if (goes_on)
            lb_signal_waits_put_back(self, hot);
        lb_signal_waits_begin(self, hot, now);
    } else {
        lb_meta_lock(&mon->meta);
        wait_begins(mon, kind, wait, now);
        if (goes_on)
            expired_put_back(self, mon);
        self->wait_note->expired.hot_taken = 0; /* (its wait ends on this path) */
        lb_meta_unlock(&mon->meta);
    }
    if (goes_on) {
        self->wait_note->expired.carried = 1;
        if (hot)
            self->wait_note->expired.taken = 0;
    }
    lb_wait_started(self, mon, kind, wait);
    lb_leave(self);
    errno = saved_errno;
}

/* Under meta: the calling thread stops waiting on mon at now (w--), after
 * waited ns; holds: it acquired mon. Returns mon's record (may be NULL). */
static lb_object_stats_t *wait_ends(lb_thread_t *self, lb_mon_t *mon, const lb_wait_t *wait,
                                    bool holds, uint64_t now, uint64_t waited)
{
    lb_object_stats_t *stats = stats_of(mon);
    lb_clock_advance(mon, stats, now);
    expired_wait_unblamed(self, mon, stats, wait, now);
    mon->waiters--;
    if (holds) {
        lb_clock_hold_begins(mon);
        mon->hold_was_contended = 1;
    }
    if (stats) {
        stats->wait_ns += waited;
        if (holds) {
            stats->contended++;
        } else if (lb_obj_kind_is_signalled(wait->kind) || wait->kind == LB_OBJ_BARRIER) {
            stats->contended++; /* a completed wait is this kind's acquisition */
            stats->acquisitions++;
            if (lb_obj_kind_is_signalled(wait->kind) && mon->signal_sampled)
                /* its blame is estimated (signal_sampled.h; a barrier's
                 * field of the same place is its count) */
                __atomic_fetch_add(&stats->sampled_contended, 1, __ATOMIC_RELAXED);
        }
    }
    lb_note_wait_end(self, wait->kind, stats ? mon->stats : 0, wait->start_ns, now, wait->timed_out,
                     wait->had_deadline);
    return stats;
}

/* The same for a wait its hot object's shards count (signal_waits.h): no
 * meta, and no read of the record, whose line the signallers write (a
 * wait that ran out of time reads the slot's mark instead, and takes its
 * part of a measured interval back in its shard: signal_waits.h). A hot
 * object has had its first waiter long since (it turned hot after
 * hundreds of waits), so the caller has no record to name it in (NULL). */
static lb_object_stats_t *hot_wait_ends(lb_thread_t *self, lb_mon_t *mon, const lb_wait_t *wait,
                                        uint64_t now)
{
    lb_signal_waits_end(self, wait->hot, wait->start_ns, now, wait->timed_out);
    lb_note_wait_end(self, wait->kind, __atomic_load_n(&mon->stats, __ATOMIC_RELAXED),
                     wait->start_ns, now, wait->timed_out, wait->had_deadline);
    return NULL;
}

void lb_wait_ended_at(lb_thread_t *self, const lb_wait_t *wait, bool holds, uint64_t now)
{
    lb_mon_t *mon = wait->mon;
    uint64_t waited = now > wait->start_ns ? now - wait->start_ns : 0;
    lb_object_stats_t *stats;
    if (wait->hot) {
        stats = hot_wait_ends(self, mon, wait, now);
    } else {
        lb_meta_lock(&mon->meta);
        stats = wait_ends(self, mon, wait, holds, now, waited);
        lb_meta_unlock(&mon->meta);
    }
    lb_expired_run_t *x = &self->wait_note->expired;
    if (wait->timed_out && lb_obj_kind_is_signalled(wait->kind)) {
        x->mon = mon; /* a run the next wait may go on (its parts: above) */
        x->start_ns = wait->start_ns;
        x->end_ns = now;
        x->carried = 0;
    } else if (x->mon) {
        *x = (lb_expired_run_t){ 0 };
    }
    if (wait->node) {
        wait->node->m.wait_ns += waited;
        lb_note_lock_site(self, wait->node->pc, wait->kind);
        lb_object_stats_first_waiter(stats, self->id, wait->node_id);
    }
}

uint64_t lb_wait_end(lb_thread_t *self, lb_wait_t *wait, bool holds)
{
    int saved_errno = errno;
    lb_enter(self);
    lb_waiting_end(self);
    uint64_t now = lb_now_ns();
    lb_wait_run_keep(self, wait);
    lb_wait_ended_at(self, wait, holds, now);
    lb_leave(self);
    errno = saved_errno;
    return now;
}

void lb_hold_begins(lb_thread_t *self, lb_mon_t *mon)
{
    uint64_t now = lb_now_ns();
    lb_meta_lock(&mon->meta);
    lb_clock_advance(mon, stats_of(mon), now);
    lb_clock_hold_begins(mon);
    lb_meta_unlock(&mon->meta);
}

/* Under meta, a spin lock's or mutex's release, after its hold's
 * accounting ended (clock_moved cleared: see lb_spin_sampled_account and
 * mutex_sampled.c's holder_sample): the rate that may turn it sampled,
 * and the blame its sampled waiters owe (returned, ns). Out of line and
 * outside collect, which must stay inline in the mutex release (inlined,
 * it saves ~48 instructions a contended hold). */
LB_NOINLINE static double sampled_release_collects(lb_mon_t *mon, lb_object_stats_t *stats,
                                                   uint64_t now)
{
    if (mon->kind == LB_OBJ_SPIN)
        lb_spin_sampled_rate_note(mon, stats, now);
    else
        lb_mutex_sampled_rate_note(mon, stats, now);
    double owed = lb_sampled_owed_take(stats);
    if (stats)
        stats->blamed_ns += owed;
    if (mon->kind == LB_OBJ_MUTEX)
        lb_mutex_sampled_released(mon); /* its fast paths may skip it again */
    return owed;
}

/* Under meta: bring accrual up to now and end the current hold's
 * accounting. keep_held: the object stays "held" afterwards (cond/sem:
 * accrual since this signal belongs to the next one). by_holder: the
 * caller holds the lock (a release), see lb_clock_take_own_pending. */
static LB_ALWAYS_INLINE lb_hold_t collect(lb_mon_t *mon, uint64_t now, bool keep_held,
                                          bool by_holder)
{
    lb_object_stats_t *stats = stats_of(mon);
    if (by_holder) {
        lb_clock_take_own_pending(mon, stats);
        lb_clock_accrue(mon, stats, now);
    } else {
        lb_clock_advance(mon, stats, now);
    }
    lb_hold_t hold = { .blame_ns = lb_clock_hold_ends(mon, stats),
                       .record = stats,
                       .stats = mon->stats,
                       .was_contended = mon->hold_was_contended };
    mon->hold_was_contended = 0;
    if (keep_held)
        mon->held = 1;
    return hold;
}

/* now: the release's time if the caller has read it, else 0 (read here
 * only if needed). */
static LB_ALWAYS_INLINE lb_hold_t hold_ends(lb_mon_t *mon, uint64_t now)
{
    /* Nobody waits and V has not moved since this hold's accounting began:
     * its blame is 0, and with w == 0 nothing accrues until the next
     * waiter arrives, whose wait_begin brings the clock up to date. Only
     * the site's contended count is owed (the hold began with a wait). So
     * no timestamp and no meta: `held` may stay set, which is harmless
     * while w == 0 (see blame_clock.h), and hold_was_contended is written
     * only by the holder. A waiter arriving now races exactly as with the
     * caller's own needs-accounting test. */
    if (__atomic_load_n(&mon->waiters, __ATOMIC_RELAXED) == 0 &&
        __atomic_load_n(&mon->clock_moved, __ATOMIC_RELAXED) == 0) {
        lb_hold_t hold = { .blame_ns = 0,
                           .record = NULL,
                           .stats = mon->stats,
                           .was_contended = mon->hold_was_contended };
        __atomic_store_n(&mon->hold_was_contended, 0, __ATOMIC_RELAXED);
        return hold;
    }
    if (!now)
        now = lb_now_ns();
    lb_meta_lock(&mon->meta);
    lb_hold_t hold = collect(mon, now, false, true);
    if (mon->kind == LB_OBJ_SPIN || mon->kind == LB_OBJ_MUTEX)
        hold.blame_ns += sampled_release_collects(mon, hold.record, now);
    lb_meta_unlock(&mon->meta);
    return hold;
}

lb_hold_t lb_hold_ends_at(lb_thread_t *self, lb_mon_t *mon, uint64_t now)
{
    return hold_ends(mon, now);
}

/* Both deposits; node NULL: find the context here. kind is the object's
 * own (only cond and sem keep a collect note). Nothing here sets errno:
 * the context lookup and the object table restore it on their slow paths. */
static inline void deposit(lb_thread_t *self, const lb_hold_t *hold, lb_obj_kind kind,
                           uintptr_t site, lb_cct_node_t *node, uint32_t node_id)
{
    if (hold->blame_ns <= 0 || !self->cct)
        return;
    lb_enter(self);
    if (!node)
        node = lb_context_here(self, &node_id);
    node->m.idle_ns[kind] += hold->blame_ns;
    node->m.blamed_count++;
    if (hold->stats) {
        lb_object_blame_add(self->object_blame, hold->stats, node_id, hold->blame_ns);
        if (lb_obj_kind_is_signalled(kind))
            lb_note_deposit(self, hold->record, node_id);
    }
    lb_leave(self);
}

void lb_deposit(lb_thread_t *self, const lb_hold_t *hold, lb_obj_kind kind, uintptr_t site)
{
    deposit(self, hold, kind, site, NULL, 0);
}

void lb_release_blame(lb_thread_t *self, lb_mon_t *mon, lb_obj_kind kind, uintptr_t site)
{
    lb_hold_t hold = hold_ends(mon, 0);
    deposit(self, &hold, kind, site, NULL, 0);
}

void lb_deposit_at(lb_thread_t *self, const lb_hold_t *hold, lb_obj_kind kind, uintptr_t site,
                   lb_cct_node_t *node, uint32_t node_id)
{
    deposit(self, hold, kind, site, node, node_id);
}

static inline lb_hold_t signal_collect(lb_thread_t *self, lb_mon_t *mon)
{
    uint64_t now = lb_now_ns();
    lb_meta_lock(&mon->meta);
    lb_hold_t hold = collect(mon, now, true, false);
    if (lb_signal_mode != LB_SAMPLED_EXACT) /* may turn it sampled (signal_sampled.h) */
        lb_signal_sampled_rate_note(mon, hold.record, now);
    lb_note_collect(self, hold.record, now, hold.blame_ns);
    lb_meta_unlock(&mon->meta);
    return hold;
}

lb_hold_t lb_signal_collect(lb_thread_t *self, lb_mon_t *mon)
{
    return signal_collect(self, mon);
}

void lb_signal_blame(lb_thread_t *self, lb_mon_t *mon, lb_obj_kind kind, uintptr_t site)
{
    lb_wait_deferred_flush(self); /* its own wait's end, if still deferred, counts first */
    lb_hold_t hold = signal_collect(self, mon);
    deposit(self, &hold, kind, site, NULL, 0);
}

bool lb_barrier_arrive(lb_thread_t *self, lb_mon_t *mon, lb_wait_t *wait, lb_hold_t *hold)
{
    lb_wait_deferred_flush(self); /* a cond wait's end first (wait_deferred.h) */
    int saved_errno = errno;
    lb_enter(self);
    uint64_t now = lb_now_ns();
    lb_meta_lock(&mon->meta);
    bool last = mon->barrier_count && ++mon->barrier_arrived >= mon->barrier_count;
    if (last) {
        *hold = collect(mon, now, false, false);
        mon->barrier_arrived = 0;
    } else {
        wait_begins(mon, LB_OBJ_BARRIER, wait, now);
    }
    lb_meta_unlock(&mon->meta);
    if (!last)
        lb_wait_started(self, mon, LB_OBJ_BARRIER, wait);
    lb_leave(self);
    errno = saved_errno;
    return last;
}

void lb_direct_blame(lb_thread_t *victim, uintptr_t object, lb_obj_kind kind, uint64_t wait_ns,
                     lb_thread_t *culprit, uintptr_t culprit_pc)
{
    int saved_errno = errno;
    lb_enter(victim);
    uint32_t index = lb_object_stats_new(object, kind);
    lb_object_stats_t *stats = lb_object_stats_at(index);
    if (stats) {
        stats->contended = 1;
        stats->acquisitions = 1;
        stats->wait_ns = wait_ns;
        stats->accrued_held_ns = (double)wait_ns;
        stats->blamed_ns = culprit && culprit->cct ? (double)wait_ns : 0;
        stats->first_thread = victim->id;
    }
    if (victim->cct) {
        lb_cct_node_t *node = context_here(victim);
        node->m.wait_ns += wait_ns;
        lb_note_lock_site(victim, node->pc, kind);
        if (stats)
            stats->first_node = lb_cct_id(victim->cct, node);
    }
    if (culprit && culprit->cct) {
        /* The culprit has exited: its CCT has no other writer now. */
        lb_cct_node_t *node = lb_cct_insert(culprit->cct, &culprit_pc, 1);
        node->m.idle_ns[kind] += (double)wait_ns;
        node->m.blamed_count++;
        if (index)
            lb_object_blame_add(culprit->object_blame, index, lb_cct_id(culprit->cct, node),
                                (double)wait_ns);
    }
    lb_leave(victim);
    errno = saved_errno;
}
