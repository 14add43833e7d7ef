/* rwlock blame. See rwlock_blame.h and rw_holds.h.
 *
 * Invariants: lb_mon.held is k for the interval since the last event;
 * every change of the holder set while threads wait is an event (the fast
 * paths divert to these verbs when waiters != 0), so k is exact whenever
 * accrual is non-zero. */
#include "blame/rwlock_blame.h"

#include "blame/blame_clock.h"
#include "blame/rw_holds.h"
#include "util/clock.h"

/* glibc nptl rwlock word (__readers, pthread_rwlock_common.c): bit 0 =
 * write phase, bit 1 = a writer owns it (in a write phase) or one waits
 * for it (in a read phase), readers counted from bit 3. Readers register
 * in that count before they block, so waiting readers are subtracted. */
enum {
    GLIBC_RWLOCK_WRPHASE = 0x1,
    GLIBC_RWLOCK_WRLOCKED = 0x2,
    GLIBC_RWLOCK_READER_SHIFT = 3,
};

/* k: threads holding rw now. Under mon->meta. */
static uint8_t holders_now(const pthread_rwlock_t *rw, const lb_mon_t *mon)
{
    unsigned word = __atomic_load_n(&rw->__data.__readers, __ATOMIC_RELAXED);
    if (word & GLIBC_RWLOCK_WRPHASE)
        return (word & GLIBC_RWLOCK_WRLOCKED) ? 1 : 0;
    unsigned readers = word >> GLIBC_RWLOCK_READER_SHIFT;
    readers = readers > mon->rw_waiting_readers ? readers - mon->rw_waiting_readers : 0;
    return (uint8_t)(readers > 255 ? 255 : readers);
}

/* Under meta: bring accrual up to date and re-read k. */
static void recount(lb_mon_t *mon, const pthread_rwlock_t *rw, int reader_delta)
{
    lb_clock_advance(mon, lb_object_stats_at(mon->stats), lb_now_ns());
    mon->rw_waiting_readers += (uint32_t)reader_delta;
    mon->held = holders_now(rw, mon);
}

void lb_rw_wait_begin(lb_thread_t *self, lb_mon_t *mon, pthread_rwlock_t *rw, bool reader,
                      lb_wait_t *wait)
{
    /* k first: lb_wait_begin then accrues at w/k from its first
     * nanosecond (its own hold_begins only applies when k is 0). */
    lb_meta_lock(&mon->meta);
    recount(mon, rw, reader ? 1 : 0);
    lb_meta_unlock(&mon->meta);
    lb_wait_begin(self, mon, LB_OBJ_RWLOCK, wait);
}

void lb_rw_wait_end(lb_thread_t *self, lb_mon_t *mon, pthread_rwlock_t *rw, bool reader,
                    lb_wait_t *wait)
{
    lb_meta_lock(&mon->meta);
    recount(mon, rw, reader ? -1 : 0);
    lb_meta_unlock(&mon->meta);
    lb_wait_end(self, wait, false);
}

static double clock_of(const lb_mon_t *mon)
{
    double v;
    __atomic_load(&mon->clock, &v, __ATOMIC_RELAXED);
    return v;
}

void lb_rw_acquired(lb_thread_t *self, lb_mon_t *mon, pthread_rwlock_t *rw, bool contended)
{
    double at;
    /* Readers hold together, so the count needs an atomic add (folded
     * into the object's record like the other kinds' counts). */
    __atomic_fetch_add(&mon->acquisitions, 1, __ATOMIC_RELAXED);
    if (__atomic_load_n(&mon->waiters, __ATOMIC_RELAXED) != 0 || contended) {
        uint64_t now = lb_now_ns();
        lb_meta_lock(&mon->meta);
        lb_object_stats_t *stats = lb_object_stats_at(mon->stats);
        lb_clock_advance(mon, stats, now);
        mon->held = holders_now(rw, mon);
        at = mon->clock;
        if (stats && contended)
            stats->contended++;
        lb_meta_unlock(&mon->meta);
    } else {
        at = clock_of(mon);
    }
    lb_rw_hold_push(self, mon, at, contended);
}

void lb_rw_hold_push(lb_thread_t *self, const lb_mon_t *mon, double at, bool contended)
{
    lb_rw_holds_t *h = self->rw_holds;
    if (h->depth < LB_RW_HOLDS)
        h->hold[h->depth++] = (lb_rw_hold_t){ mon, at, contended };
    else
        h->overflow++;
}

bool lb_rw_hold_pop(lb_thread_t *self, const lb_mon_t *mon, lb_rw_hold_t *out)
{
    lb_rw_holds_t *h = self->rw_holds;
    for (uint32_t i = h->depth; i-- > 0;) {
        if (h->hold[i].mon == mon) {
            *out = h->hold[i];
            h->hold[i] = h->hold[--h->depth];
            return true;
        }
    }
    return false;
}

bool lb_rw_release_collect(lb_thread_t *self, lb_mon_t *mon, pthread_rwlock_t *rw, lb_hold_t *hold)
{
    lb_rw_hold_t mine;
    if (!lb_rw_hold_pop(self, mon, &mine))
        return false; /* acquired before monitoring, or stack overflow */
    if (__atomic_load_n(&mon->waiters, __ATOMIC_RELAXED) == 0 && !mine.was_contended &&
        clock_of(mon) == mine.clock_at_acquire)
        return false;
    uint64_t now = lb_now_ns();
    lb_meta_lock(&mon->meta);
    lb_object_stats_t *stats = lb_object_stats_at(mon->stats);
    lb_clock_advance(mon, stats, now);
    *hold = (lb_hold_t){ .blame_ns = mon->clock - mine.clock_at_acquire,
                         .record = stats,
                         .stats = mon->stats,
                         .was_contended = mine.was_contended };
    if (stats)
        stats->blamed_ns += hold->blame_ns;
    uint8_t k = holders_now(rw, mon);
    mon->held = k > 0 ? (uint8_t)(k - 1) : 0; /* we are about to leave */
    lb_meta_unlock(&mon->meta);
    return true;
}
