/* Unit tests for the sharded waits of hot conds and semaphores
 * (src/blame/signal_waits.c).
 *
 * Waits are driven with explicit timestamps from two threads whose ids
 * fall in different shards, so every expected figure is the integral of
 * the waiter count, computed here by hand: I(t) is the sum over waits of
 * their time up to t. Times sit near 2^62 ns so that n * t - S wraps in
 * uint64 arithmetic, as it may with real clocks. */
#include "check.h"

#include "blame/object_stats.h"
#include "blame/signal_sampled.h"
#include "blame/signal_waits.h"

#define T0 (UINT64_C(1) << 62)

static lb_thread_t thread_a = { .id = 0 }, thread_b = { .id = 1 };

/* An lb_mon for a cond with a record. */
static void cond_mon(lb_mon_t *mon, uintptr_t addr)
{
    memset(mon, 0, sizeof *mon);
    mon->kind = LB_OBJ_COND;
    mon->addr = (const void *)addr;
    mon->stats = lb_object_stats_new(addr, LB_OBJ_COND);
    ASSERT_NE(mon->stats, 0);
}

/* mon turns sampled and gets a slot, as signal_sampled.c does. */
static lb_signal_hot_t *take(lb_mon_t *mon)
{
    lb_signal_hot_t *slot = lb_signal_waits_take(mon);
    mon->signal_sampled = LB_SIGNAL_SAMPLED | (slot ? lb_signal_waits_number(slot) : 0);
    return slot;
}

/* A measured signal at t: I(t), its accrual moved into the record; the
 * threads waiting then in last_waiting. */
static uint64_t last_waiting;
static uint64_t measure(lb_signal_hot_t *slot, lb_mon_t *mon, uint64_t t)
{
    lb_meta_lock(&slot->lock);
    uint64_t i = lb_signal_waits_integral(slot, lb_object_stats_at(mon->stats), t, &last_waiting);
    lb_meta_unlock(&slot->lock);
    return i;
}

static void test_integral_is_the_waits_time(void)
{
    lb_hot_shard_mask = 1; /* two shards: thread_a's and thread_b's */
    lb_mon_t mon;
    cond_mon(&mon, 0x1000);
    lb_signal_hot_t *slot = take(&mon);
    ASSERT_NOT_NULL(slot);
    ASSERT_PTR_EQ(lb_signal_waits_slot(lb_signal_waits_number(slot) | 1), slot);

    uint64_t base = measure(slot, &mon, T0); /* nobody has waited: I is constant */
    lb_signal_waits_begin(&thread_a, slot, T0 + 100);
    lb_signal_waits_begin(&thread_b, slot, T0 + 200);
    /* at T0+300: a has waited 200, b 100 */
    ASSERT_UEQ(measure(slot, &mon, T0 + 300) - base, 300);
    ASSERT_UEQ(last_waiting, 2);
    lb_signal_waits_end(&thread_a, slot, T0 + 100, T0 + 400, false);
    /* at T0+500: a 300 (done), b 300 */
    ASSERT_UEQ(measure(slot, &mon, T0 + 500) - base, 600);
    ASSERT_UEQ(last_waiting, 1);
    lb_signal_waits_end(&thread_b, slot, T0 + 200, T0 + 600, false);
    ASSERT_UEQ(measure(slot, &mon, T0 + 900) - base, 700); /* nobody waits: constant */

    const lb_object_stats_t *s = lb_object_stats_at(mon.stats);
    ASSERT_NEAR(s->accrued_held_ns, 700.0, 1e-9);
    ASSERT_EQ(s->contended, 0); /* completed waits reach the record when drained */

    lb_signal_waits_forget(&mon);
    ASSERT_EQ(s->contended, 2);
    ASSERT_EQ(s->acquisitions, 2);
    ASSERT_EQ(s->wait_ns, 700);
    ASSERT_EQ(s->sampled_contended, 2);
    ASSERT_NEAR(s->accrued_held_ns, 700.0, 1e-9); /* nothing counted twice */
    ASSERT_NULL(slot->mon);
}

/* A slot freed by a destroy starts the next object from zero, though its
 * shards keep growing. */
static void test_reused_slot_starts_from_zero(void)
{
    lb_hot_shard_mask = 1;
    lb_mon_t first, second;
    cond_mon(&first, 0x2000);
    lb_signal_hot_t *slot = take(&first);
    ASSERT_NOT_NULL(slot);
    lb_signal_waits_begin(&thread_a, slot, T0 + 10);
    lb_signal_waits_end(&thread_a, slot, T0 + 10, T0 + 60, false);
    lb_signal_waits_forget(&first);
    ASSERT_EQ(lb_object_stats_at(first.stats)->wait_ns, 50);

    cond_mon(&second, 0x3000);
    ASSERT_PTR_EQ(take(&second), slot);
    lb_signal_waits_begin(&thread_b, slot, T0 + 1000);
    lb_signal_waits_end(&thread_b, slot, T0 + 1000, T0 + 1025, false);
    lb_object_stats_t *s = lb_object_stats_at(second.stats);
    lb_signal_waits_drain(s); /* the final write's path */
    ASSERT_EQ(s->contended, 1);
    ASSERT_EQ(s->wait_ns, 25);
    ASSERT_NEAR(s->accrued_held_ns, 25.0, 1e-9);
    lb_signal_waits_drain(s); /* a second drain adds nothing */
    ASSERT_EQ(s->contended, 1);
    ASSERT_NEAR(s->accrued_held_ns, 25.0, 1e-9);
    lb_signal_waits_forget(&second);
}

/* The idleness since a time in the past (a gap's start, signal_sampled.h
 * "Gaps"), from each shard's recent events: exact while a shard kept the
 * event before that time, measured from a later start when it has had
 * more events since than it keeps, and unknown when that start would
 * leave out over a quarter of the gap. */
static void test_idleness_since(void)
{
    lb_hot_shard_mask = 1;
    lb_mon_t mon;
    cond_mon(&mon, 0x4000);
    lb_signal_hot_t *slot = take(&mon);
    ASSERT_NOT_NULL(slot);
    uint64_t accrued = 0;
    lb_signal_waits_begin(&thread_a, slot, T0 + 100); /* a waits from 100 */
    lb_signal_waits_begin(&thread_b, slot, T0 + 500); /* b waits 500 .. 900 */
    lb_signal_waits_end(&thread_b, slot, T0 + 500, T0 + 900, false);
    lb_signal_waits_begin(&thread_b, slot, T0 + 1200); /* and from 1200 */
    /* since 300, at 2000: a 1700, b 400 + 800 */
    ASSERT_TRUE(lb_signal_waits_since(slot, T0 + 300, T0 + 2000, &accrued));
    ASSERT_UEQ(accrued, 2900);
    /* since 1000 (b between its waits): a 1000, b 800 */
    ASSERT_TRUE(lb_signal_waits_since(slot, T0 + 1000, T0 + 2000, &accrued));
    ASSERT_UEQ(accrued, 1800);
    lb_signal_waits_end(&thread_b, slot, T0 + 1200, T0 + 2100, false);

    /* b's shard: LB_SIGNAL_SHARD_EVENTS + 2 more events, one wait of 10
     * in each 100 ns from 3000; the first wait's two are no longer kept */
    for (int k = 0; k < LB_SIGNAL_SHARD_EVENTS / 2 + 1; k++) {
        uint64_t t = T0 + 3000 + (uint64_t)k * 100;
        lb_signal_waits_begin(&thread_b, slot, t);
        lb_signal_waits_end(&thread_b, slot, t, t + 10, false);
    }
    /* since 2950, at 5000: measured from b's oldest kept event (3100,
     * 150 ns in): a 1900, and b's waits from 3100 on */
    ASSERT_TRUE(lb_signal_waits_since(slot, T0 + 2950, T0 + 5000, &accrued));
    ASSERT_UEQ(accrued, 1900 + (LB_SIGNAL_SHARD_EVENTS / 2) * 10);
    /* since 2950, at 3200: 150 ns is over a quarter of the 250: unknown */
    ASSERT_FALSE(lb_signal_waits_since(slot, T0 + 2950, T0 + 3200, &accrued));
    lb_signal_waits_end(&thread_a, slot, T0 + 100, T0 + 6000, false);
    lb_signal_waits_forget(&mon);
}

/* A mark opens a measured interval at `at`, I - T then `i` (as
 * signal_sampled.c's mark_at_end sets it). */
static void open_mark(lb_signal_hot_t *slot, uint64_t at, uint64_t i)
{
    lb_meta_lock(&slot->lock);
    slot->mark_ns = at;
    slot->i_mark = i;
    slot->marked = 1;
    lb_meta_unlock(&slot->lock);
}

/* A wait that ran out of time takes its part of the measured interval
 * open at its end back (signal_waits.h, "Timed out"): the interval's
 * measure leaves it out, the accrual keeps it. With no interval open
 * (no mark, no gap looks) nothing is taken; with gap looks, its part
 * since the latest signal, and a gap measured from there leaves it out. */
static void test_timed_out_wait_leaves_the_interval(void)
{
    lb_hot_shard_mask = 1;
    lb_mon_t mon;
    cond_mon(&mon, 0x5000);
    lb_signal_hot_t *slot = take(&mon);
    ASSERT_NOT_NULL(slot);
    uint64_t base = measure(slot, &mon, T0);
    lb_signal_waits_begin(&thread_a, slot, T0 + 100); /* a: a timed wait */
    lb_signal_waits_begin(&thread_b, slot, T0 + 200); /* b: one a signal ends */
    uint64_t at_mark = measure(slot, &mon, T0 + 1000);
    ASSERT_UEQ(at_mark - base, 900 + 800);
    open_mark(slot, T0 + 1000, at_mark);
    lb_signal_waits_end(&thread_b, slot, T0 + 200, T0 + 1500, false);
    lb_signal_waits_end(&thread_a, slot, T0 + 100, T0 + 1600, true); /* 600 in the interval */
    /* the interval [1000, 2000] holds b's 500 only */
    ASSERT_UEQ(measure(slot, &mon, T0 + 2000) - at_mark, 500);
    const lb_object_stats_t *s = lb_object_stats_at(mon.stats);
    ASSERT_NEAR(s->accrued_held_ns, 1500.0 + 1300.0, 1e-9); /* every wait's whole time */
    lb_meta_lock(&slot->lock);
    slot->marked = 0; /* (the measure that ended it clears it) */
    lb_meta_unlock(&slot->lock);

    /* no interval open: nothing taken back */
    uint64_t before = measure(slot, &mon, T0 + 3000);
    lb_signal_waits_begin(&thread_a, slot, T0 + 3000);
    lb_signal_waits_end(&thread_a, slot, T0 + 3000, T0 + 3400, true);
    ASSERT_UEQ(measure(slot, &mon, T0 + 3500) - before, 400);

    /* gap looks: taken back since the latest signal, left out of the gap */
    __atomic_store_n(&slot->gaps, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->last_signal_ns, T0 + 4000, __ATOMIC_RELAXED);
    lb_signal_waits_begin(&thread_a, slot, T0 + 3800); /* timed: 1000 after the signal */
    lb_signal_waits_begin(&thread_b, slot, T0 + 4100); /* b: 900 up to 5000 */
    lb_signal_waits_end(&thread_a, slot, T0 + 3800, T0 + 5000, true);
    uint64_t accrued = 0;
    ASSERT_TRUE(lb_signal_waits_since(slot, T0 + 4000, T0 + 5000, &accrued));
    ASSERT_UEQ(accrued, 900);
    lb_signal_waits_end(&thread_b, slot, T0 + 4100, T0 + 5000, false);
    lb_signal_waits_forget(&mon);
    ASSERT_NEAR(s->accrued_held_ns, 2800.0 + 400.0 + 1200.0 + 900.0, 1e-9);
    ASSERT_EQ(s->wait_ns, 2800 + 400 + 1200 + 900);
}

/* Every slot taken: the next hot object keeps the meta path (NULL). */
static void test_slots_run_out(void)
{
    static lb_mon_t mons[LB_SIGNAL_HOT_SLOTS + 1];
    int taken = 0;
    for (int i = 0; i <= LB_SIGNAL_HOT_SLOTS; i++) {
        cond_mon(&mons[i], 0x10000 + (uintptr_t)i * 64);
        taken += take(&mons[i]) != NULL;
    }
    ASSERT_EQ(taken, LB_SIGNAL_HOT_SLOTS);
    lb_signal_waits_forget(&mons[0]);
    ASSERT_NOT_NULL(take(&mons[LB_SIGNAL_HOT_SLOTS]));
}

CHECK_MAIN(test_integral_is_the_waits_time, test_reused_slot_starts_from_zero, test_idleness_since,
           test_timed_out_wait_leaves_the_interval, test_slots_run_out)
