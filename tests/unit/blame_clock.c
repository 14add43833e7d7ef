/* Unit tests for the blame clock (src/blame/blame_clock.h) and the blame
 * verbs built on it (src/blame/blame.c).
 *
 * The clock tests drive lb_clock_* with explicit timestamps, so every
 * expected figure is computed here from the rule itself: w waiters over
 * dt ns accrue w*dt; with k accounted holders V advances by w*dt/k and
 * each holder is blamed V(release) - V(acquire); with none, the accrual
 * is hand-off. The verb tests use a real thread record (lb_thread_attach)
 * and the real clock, and check conservation, which holds exactly because
 * each verb uses one timestamp for both the accrual and the wait.
 */
#include "check.h"

#include <pthread.h>
#include <time.h>

#include "blame/blame.h"
#include "blame/blame_clock.h"
#include "blame/object_stats.h"
#include "blame/rwlock_blame.h"
#include "core/thread.h"
#include "locks/monitored.h"

static lb_mon_t mon_storage;

/* A fresh, unheld object whose accrual is up to date at t0. */
static lb_mon_t *fresh_mon(uint64_t t0)
{
    lb_mon_t *mon = &mon_storage;
    memset(mon, 0, sizeof *mon);
    mon->last_event_ns = t0;
    return mon;
}

/* The same, with one holder's accounting begun at t0. */
static lb_mon_t *held_mon(uint64_t t0)
{
    lb_mon_t *mon = fresh_mon(t0);
    lb_clock_hold_begins(mon);
    return mon;
}

static lb_object_stats_t fresh_stats(void)
{
    lb_object_stats_t s;
    memset(&s, 0, sizeof s);
    return s;
}

/* A waiter arrives at `now` (advance first, as every verb does). */
static void waiter_arrives(lb_mon_t *mon, lb_object_stats_t *stats, uint64_t now)
{
    lb_clock_advance(mon, stats, now);
    mon->waiters++;
}

static void waiter_leaves(lb_mon_t *mon, lb_object_stats_t *stats, uint64_t now)
{
    lb_clock_advance(mon, stats, now);
    mon->waiters--;
}

static void test_one_holder_is_blamed_w_times_dt(void)
{
    lb_object_stats_t stats = fresh_stats();
    lb_mon_t *mon = held_mon(1000);
    waiter_arrives(mon, &stats, 1100); /* 1 waiter for 400 ns */
    waiter_arrives(mon, &stats, 1500); /* then 2 waiters for 300 ns */
    lb_clock_advance(mon, &stats, 1800);
    ASSERT_NEAR(mon->clock, 1 * 400 + 2 * 300, 1e-9);
    ASSERT_EQ(mon->clock_moved, 1);
    double blame = lb_clock_hold_ends(mon, &stats);
    ASSERT_NEAR(blame, 1000, 1e-9);
    ASSERT_NEAR(stats.blamed_ns, 1000, 1e-9);
    ASSERT_NEAR(stats.accrued_held_ns, 1000, 1e-9);
    ASSERT_NEAR(stats.handoff_ns, 0, 1e-9);
    ASSERT_EQ(mon->held, 0);
    ASSERT_EQ(mon->clock_moved, 0);
}

/* k shared holders: V moves at w/k, and the k blames add up to what
 * accrued (nothing is counted twice). */
static void test_shared_holders_split_one_over_k(void)
{
    lb_object_stats_t stats = fresh_stats();
    lb_mon_t *mon = fresh_mon(0);
    mon->waiters = 3;
    mon->held = 2; /* readers A and B from t = 0 */
    double a_acquire = mon->clock, b_acquire = mon->clock;
    lb_clock_advance(mon, &stats, 100); /* 3 waiters x 100 ns over 2 holders */
    ASSERT_NEAR(mon->clock, 150, 1e-9);
    double b_blame = mon->clock - b_acquire; /* B releases at 100 */
    mon->held = 1;
    lb_clock_advance(mon, &stats, 200); /* A alone for 100 ns */
    ASSERT_NEAR(mon->clock, 150 + 300, 1e-9);
    double a_blame = mon->clock - a_acquire;
    ASSERT_NEAR(b_blame, 150, 1e-9);
    ASSERT_NEAR(a_blame, 450, 1e-9);
    ASSERT_NEAR(a_blame + b_blame, stats.accrued_held_ns, 1e-9);
    ASSERT_NEAR(stats.accrued_held_ns, 3 * 200, 1e-9);
}

/* Between a release and the next accounted hold, waiting is hand-off
 * latency: it goes to handoff_ns and V does not move, so the next holder
 * is not blamed for it. */
static void test_handoff_between_holds(void)
{
    lb_object_stats_t stats = fresh_stats();
    lb_mon_t *mon = held_mon(0);
    waiter_arrives(mon, &stats, 0);
    waiter_arrives(mon, &stats, 0);
    lb_clock_advance(mon, &stats, 500);
    double first = lb_clock_hold_ends(mon, &stats); /* release at 500 */
    ASSERT_NEAR(first, 2 * 500, 1e-9);
    double v_at_release = mon->clock;
    waiter_leaves(mon, &stats, 800); /* the hand-off: 2 waiters x 300 ns */
    ASSERT_NEAR(stats.handoff_ns, 600, 1e-9);
    ASSERT_NEAR(mon->clock, v_at_release, 1e-9);
    ASSERT_EQ(mon->clock_moved, 0);
    lb_clock_hold_begins(mon);           /* the woken waiter holds */
    lb_clock_advance(mon, &stats, 1000); /* 1 waiter x 200 ns */
    double second = lb_clock_hold_ends(mon, &stats);
    ASSERT_NEAR(second, 200, 1e-9);
    /* Conservation: the integral of waiters over time is all accounted. */
    ASSERT_NEAR(stats.accrued_held_ns + stats.handoff_ns, 2 * 800 + 1 * 200, 1e-9);
    ASSERT_NEAR(stats.blamed_ns, first + second, 1e-9);
}

static void test_no_waiters_no_motion(void)
{
    lb_object_stats_t stats = fresh_stats();
    lb_mon_t *mon = held_mon(10);
    lb_clock_advance(mon, &stats, 1000000);
    ASSERT_NEAR(mon->clock, 0, 0);
    ASSERT_EQ(mon->clock_moved, 0);
    ASSERT_EQ(mon->last_event_ns, 1000000);
    ASSERT_NEAR(lb_clock_hold_ends(mon, &stats), 0, 0);
    ASSERT_NEAR(stats.accrued_held_ns + stats.handoff_ns, 0, 0);
}

/* A timestamp taken by another thread before ours may arrive later: it
 * must neither move V backwards nor count any interval twice. */
static void test_late_timestamp_is_ignored(void)
{
    lb_object_stats_t stats = fresh_stats();
    lb_mon_t *mon = held_mon(0);
    waiter_arrives(mon, &stats, 0);
    lb_clock_advance(mon, &stats, 1000);
    lb_clock_advance(mon, &stats, 600); /* late */
    ASSERT_EQ(mon->last_event_ns, 1000);
    ASSERT_NEAR(mon->clock, 1000, 1e-9);
    lb_clock_advance(mon, &stats, 1500);
    ASSERT_NEAR(mon->clock, 1500, 1e-9);
    ASSERT_NEAR(stats.accrued_held_ns, 1500, 1e-9);
}

/* Without stats (out of memory for a record) the clock still runs. */
static void test_without_stats(void)
{
    lb_mon_t *mon = held_mon(0);
    mon->waiters = 4;
    lb_clock_advance(mon, NULL, 25);
    ASSERT_NEAR(lb_clock_hold_ends(mon, NULL), 100, 1e-9);
    lb_clock_advance(mon, NULL, 50); /* hand-off, not recorded anywhere */
    ASSERT_NEAR(mon->clock, 100, 1e-9);
}

/* A mutex acquired while others wait records only the time
 * (hold_pending_ns); the next advance, whoever makes it, begins the hold
 * there: before it the waiting was hand-off, after it the holder's. */
static void test_pending_hold_begins_at_its_time(void)
{
    lb_object_stats_t stats = fresh_stats();
    lb_mon_t *mon = fresh_mon(0);
    mon->kind = LB_OBJ_MUTEX;
    mon->waiters = 2;                    /* two wait, nobody accounted */
    mon->hold_pending_ns = 300;          /* a barging acquisition at 300 */
    lb_clock_advance(mon, &stats, 1000); /* e.g. its own release, or a new waiter */
    ASSERT_EQ(mon->hold_pending_ns, 0);
    ASSERT_EQ(mon->held, 1);
    ASSERT_NEAR(stats.handoff_ns, 2 * 300, 1e-9);
    ASSERT_NEAR(lb_clock_hold_ends(mon, &stats), 2 * 700, 1e-9);
    ASSERT_NEAR(stats.accrued_held_ns + stats.handoff_ns, 2 * 1000, 1e-9);
}

/* A hold already accounted (a waiter arrived before the time was
 * visible and began it) keeps its start; the late time is dropped. Only
 * mutexes have the field: for other kinds the word is a count. */
static void test_pending_dropped_when_held_or_not_a_mutex(void)
{
    lb_object_stats_t stats = fresh_stats();
    lb_mon_t *mon = held_mon(0);
    mon->kind = LB_OBJ_MUTEX;
    mon->waiters = 1;
    mon->hold_pending_ns = 400;
    lb_clock_advance(mon, &stats, 1000);
    ASSERT_EQ(mon->hold_pending_ns, 0);
    ASSERT_NEAR(lb_clock_hold_ends(mon, &stats), 1000, 1e-9);
    ASSERT_NEAR(stats.handoff_ns, 0, 0);

    lb_object_stats_t spin_stats = fresh_stats();
    lb_mon_t *spin = fresh_mon(0);
    spin->kind = LB_OBJ_SPIN;
    spin->waiters = 1;
    spin->acquisitions = 500;
    lb_clock_advance(spin, &spin_stats, 1000);
    ASSERT_EQ(spin->acquisitions, 500);
    ASSERT_EQ(spin->held, 0);
    ASSERT_NEAR(spin_stats.handoff_ns, 1000, 1e-9);
}

/* ---- the verbs, on a real thread record and the real clock ---- */

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
    nanosleep(&ts, NULL);
}

static lb_thread_t *record(void)
{
    lb_thread_t *self = lb_thread_attach(0, 0, 0);
    ASSERT_NOT_NULL(self);
    self->cct = NULL; /* no calling contexts: nothing here unwinds */
    return self;
}

static lb_mon_t *pool_mon(void)
{
    ASSERT_EQ(lb_mon_pool_setup(), 0);
    static int object;
    lb_mon_t *mon = lb_mon_alloc(&object, LB_OBJ_MUTEX);
    ASSERT_NOT_NULL(mon);
    return mon;
}

/* Mutex hand-off: the holder releases while one thread waits; the waiter
 * then acquires. Blame (holder) + hand-off == the wait the waiter measured,
 * to the nanosecond. */
static void test_verbs_conserve_wait(void)
{
    lb_thread_t *self = record();
    lb_mon_t *mon = pool_mon();
    lb_wait_t wait;
    lb_wait_begin(self, mon, LB_OBJ_MUTEX, &wait); /* a holder is implied */
    ASSERT_EQ(mon->waiters, 1);
    ASSERT_EQ(mon->held, 1);
    ASSERT_EQ(self->waiting, LB_OBJ_MUTEX + 1);
    sleep_ms(20);
    lb_hold_t hold = lb_hold_ends_at(self, mon, 0);
    ASSERT_EQ(hold.was_contended, 0);
    sleep_ms(5);
    lb_wait_end(self, &wait, true);
    ASSERT_EQ(self->waiting, 0);
    ASSERT_EQ(mon->waiters, 0);
    ASSERT_EQ(mon->hold_was_contended, 1);
    lb_object_stats_t *stats = lb_object_stats_at(mon->stats);
    ASSERT_NOT_NULL(stats);
    ASSERT_EQ(stats->contended, 1);
    ASSERT_GE(hold.blame_ns, 20e6);
    ASSERT_GE(stats->handoff_ns, 5e6);
    ASSERT_NEAR(stats->blamed_ns, hold.blame_ns, 1e-6);
    ASSERT_NEAR(stats->accrued_held_ns + stats->handoff_ns, (double)stats->wait_ns, 1.0);
    /* The second hold began with the wait: its release is contended. */
    lb_hold_t second = lb_hold_ends_at(self, mon, 0);
    ASSERT_EQ(second.was_contended, 1);
    ASSERT_NEAR(second.blame_ns, 0, 0);
}

/* cond/sem: each signal collects what accrued since the previous one, and
 * the object stays held, so accrual goes on. */
static void test_signal_collects_and_stays_held(void)
{
    lb_thread_t *self = record();
    lb_mon_t *mon = pool_mon();
    mon->kind = LB_OBJ_COND;
    lb_wait_t wait;
    lb_wait_begin(self, mon, LB_OBJ_COND, &wait);
    sleep_ms(10);
    lb_hold_t first = lb_signal_collect(self, mon);
    ASSERT_EQ(mon->held, 1);
    sleep_ms(10);
    lb_hold_t second = lb_signal_collect(self, mon);
    lb_wait_end(self, &wait, false);
    lb_object_stats_t *stats = lb_object_stats_at(mon->stats);
    ASSERT_GE(first.blame_ns, 10e6);
    ASSERT_GE(second.blame_ns, 10e6);
    ASSERT_NEAR(stats->blamed_ns, first.blame_ns + second.blame_ns, 1e-6);
    ASSERT_NEAR(stats->accrued_held_ns + stats->handoff_ns, (double)stats->wait_ns, 1.0);
    ASSERT_EQ(stats->acquisitions, 1); /* a completed cond wait is its acquisition */
}

/* cond/sem: a wait that ran out of time was ended by no signal: the next
 * signal, here by the waiter itself (a timer thread's broadcast after its
 * timed wait), collects none of it; it stays unattributed. Another
 * thread's wait in progress is still collected. */
static void test_timed_out_wait_is_collected_by_no_signal(void)
{
    lb_obj_kind kinds[2] = { LB_OBJ_COND, LB_OBJ_SEM };
    for (int k = 0; k < 2; k++) {
        lb_thread_t *self = record();
        lb_mon_t *mon = pool_mon();
        mon->kind = (uint8_t)kinds[k];
        lb_wait_t timed;
        lb_wait_begin(self, mon, kinds[k], &timed);
        sleep_ms(10);
        timed.timed_out = timed.had_deadline = true;
        lb_wait_end(self, &timed, false);
        lb_hold_t own = lb_signal_collect(self, mon);
        ASSERT_NEAR(own.blame_ns, 0, 0); /* alone: exactly nothing */

        lb_wait_t real, other_timed;
        lb_wait_begin(self, mon, kinds[k], &real);
        sleep_ms(5);
        lb_wait_begin(self, mon, kinds[k], &other_timed);
        sleep_ms(10);
        other_timed.timed_out = true;
        uint64_t ended = lb_wait_end(self, &other_timed, false);
        lb_hold_t hold = lb_signal_collect(self, mon);
        uint64_t after = lb_now_ns();
        lb_wait_end(self, &real, false);
        lb_object_stats_t *stats = lb_object_stats_at(mon->stats);
        printf("# %s: own %.3f ms, with a real waiter %.3f ms (its wait so far <= %.3f ms)\n",
               lb_obj_kind_names[kinds[k]], own.blame_ns / 1e6, hold.blame_ns / 1e6,
               (double)(after - real.start_ns) / 1e6);
        ASSERT_GE(hold.blame_ns, 15e6);                                /* the real wait's sleeps */
        ASSERT_LE(hold.blame_ns, (double)(after - real.start_ns) + 1); /* none of the timed one */
        /* conservation: the timed-out waits' time is accrued and unattributed */
        double unattributed = stats->accrued_held_ns - stats->blamed_ns;
        ASSERT_GE(unattributed + 1, (double)(ended - other_timed.start_ns));
        ASSERT_NEAR(stats->accrued_held_ns + stats->handoff_ns, (double)stats->wait_ns, 1.0);
    }
}

/* A barrier of 3: two arrivals wait, the third collects the episode. */
static void test_barrier_last_arrival_collects(void)
{
    lb_thread_t *self = record();
    lb_mon_t *mon = pool_mon();
    mon->kind = LB_OBJ_BARRIER;
    mon->barrier_count = 3;
    lb_wait_t w1, w2;
    lb_hold_t hold = { 0 };
    ASSERT_FALSE(lb_barrier_arrive(self, mon, &w1, &hold));
    ASSERT_EQ(mon->waiters, 1);
    ASSERT_EQ(self->waiting, LB_OBJ_BARRIER + 1);
    sleep_ms(10);
    ASSERT_FALSE(lb_barrier_arrive(self, mon, &w2, &hold));
    ASSERT_EQ(mon->waiters, 2);
    sleep_ms(10);
    ASSERT_TRUE(lb_barrier_arrive(self, mon, NULL, &hold));
    ASSERT_EQ(mon->barrier_arrived, 0);
    ASSERT_EQ(mon->held, 0);
    lb_wait_end(self, &w1, false);
    lb_wait_end(self, &w2, false);
    lb_object_stats_t *stats = lb_object_stats_at(mon->stats);
    /* 1 waiter x 10 ms, then 2 x 10 ms: at least 30 ms of idleness. */
    ASSERT_GE(hold.blame_ns, 30e6);
    ASSERT_NEAR(stats->accrued_held_ns + stats->handoff_ns, (double)stats->wait_ns, 1.0);
    ASSERT_NEAR(stats->blamed_ns, hold.blame_ns, 1e-6);
}

/* A record owned by a thread that has ended (records are never freed):
 * the verbs take the record explicitly, so one test thread can play
 * several. */
static void *attach_one(void *out)
{
    *(lb_thread_t **)out = lb_thread_attach(0, 0, 0);
    return NULL;
}

static lb_thread_t *other_record(void)
{
    lb_thread_t *t = NULL;
    pthread_t th;
    ASSERT_OK(pthread_create(&th, NULL, attach_one, &t));
    ASSERT_OK(pthread_join(th, NULL));
    ASSERT_NOT_NULL(t);
    t->cct = NULL;
    return t;
}

/* rwlock, shared holders (k read from glibc's own rwlock word): readers A
 * and B hold while a writer waits; B leaves first. Each reader is blamed
 * its 1/k share, so the two blames add up to exactly what accrued. */
static void test_rwlock_readers_split_one_over_k(void)
{
    lb_thread_t *a = other_record(), *b = other_record(), *w = other_record();
    lb_mon_t *mon = pool_mon();
    mon->kind = LB_OBJ_RWLOCK;
    pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
    ASSERT_OK(pthread_rwlock_rdlock(&rw)); /* A's read hold */
    lb_rw_acquired(a, mon, &rw, false);
    ASSERT_OK(pthread_rwlock_rdlock(&rw)); /* B's */
    lb_rw_acquired(b, mon, &rw, false);
    lb_wait_t wait;
    lb_rw_wait_begin(w, mon, &rw, false, &wait);
    ASSERT_EQ(mon->held, 2);
    sleep_ms(20);
    lb_hold_t hb, ha;
    ASSERT_TRUE(lb_rw_release_collect(b, mon, &rw, &hb));
    ASSERT_OK(pthread_rwlock_unlock(&rw));
    ASSERT_EQ(mon->held, 1);
    sleep_ms(20);
    ASSERT_TRUE(lb_rw_release_collect(a, mon, &rw, &ha));
    ASSERT_OK(pthread_rwlock_unlock(&rw));
    ASSERT_EQ(mon->held, 0);
    sleep_ms(5);
    lb_rw_wait_end(w, mon, &rw, false, &wait);
    lb_object_stats_t *stats = lb_object_stats_at(mon->stats);
    ASSERT_NOT_NULL(stats);
    printf("# B %.3f ms, A %.3f ms, accrued %.3f ms, hand-off %.3f ms\n", hb.blame_ns / 1e6,
           ha.blame_ns / 1e6, stats->accrued_held_ns / 1e6, stats->handoff_ns / 1e6);
    ASSERT_GE(hb.blame_ns, 10e6);               /* half of >= 20 ms */
    ASSERT_GE(ha.blame_ns - hb.blame_ns, 20e6); /* A alone for >= 20 ms */
    ASSERT_NEAR(ha.blame_ns + hb.blame_ns, stats->accrued_held_ns, 1e-3);
    ASSERT_NEAR(stats->blamed_ns, stats->accrued_held_ns, 1e-3);
    ASSERT_NEAR(stats->accrued_held_ns + stats->handoff_ns, (double)stats->wait_ns, 1.0);
}

CHECK_MAIN(test_one_holder_is_blamed_w_times_dt, test_shared_holders_split_one_over_k,
           test_handoff_between_holds, test_no_waiters_no_motion, test_late_timestamp_is_ignored,
           test_without_stats, test_pending_hold_begins_at_its_time,
           test_pending_dropped_when_held_or_not_a_mutex, test_verbs_conserve_wait,
           test_signal_collects_and_stays_held, test_timed_out_wait_is_collected_by_no_signal,
           test_barrier_last_arrival_collects, test_rwlock_readers_split_one_over_k)
