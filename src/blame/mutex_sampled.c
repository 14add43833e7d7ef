/* Mutex blame measured by holder samples: see mutex_sampled.h for the
 * rule, its invariants and when it applies. */
#include "blame/mutex_sampled.h"

#include <errno.h>
#include <unistd.h>

#include "blame/context.h"
#include "blame/holder_window.h"
#include "blame/mutex_quiet.h"
#include "blame/wait_deferred.h"
#include "blame/wait_note_ops.h"
#include "core/undirected.h"
#include "sampler/sampler.h"
#include "util/clock.h"

lb_sampled_mode_t lb_mutex_mode = LB_SAMPLED_EXACT;
lb_mutex_hot_t lb_mutex_hot_slots[LB_MUTEX_HOT_SLOTS];
static uint32_t slots_used;   /* high-water mark: the handler scans this many */
static uint32_t slots_missed; /* mutexes that wanted a slot and found none */

/* Signal handler: the most idleness slot's waiters can have accrued so
 * far, at now: the wait they recorded (their pieces), plus per shard its
 * waiters times the time since its episode began (what those still
 * waiting have not recorded yet: each arrived at or after the episode's
 * start). An upper bound, by at most the in-progress waits' recorded
 * pieces, which it counts twice while they last. */
static uint64_t waited_so_far(lb_mutex_hot_t *slot, uint64_t now)
{
    uint64_t bound = 0;
    for (uint32_t k = 0; k <= lb_hot_shard_mask; k++) {
        lb_mutex_hot_shard_t *shard = &slot->shard[k];
        bound += __atomic_load_n(&shard->wait_ns, __ATOMIC_RELAXED);
        uint32_t n = __atomic_load_n(&shard->waiting, __ATOMIC_ACQUIRE);
        if (n == 0 || n > (uint32_t)INT32_MAX)
            continue;
        uint64_t from = __atomic_load_n(&shard->episode_ns, __ATOMIC_ACQUIRE);
        if (now > from)
            bound += (uint64_t)n * (now - from);
    }
    return bound;
}

/* Signal handler: add up to `owed` to slot's charges without taking them
 * past bound; returns what was added. A compare-and-swap, so that two
 * handlers sampling holders of one slot at once (the holder changed
 * between their samples) cannot both pass the bound. */
static uint64_t charge_within(lb_mutex_hot_t *slot, uint64_t owed, uint64_t bound)
{
    uint64_t charged = __atomic_load_n(&slot->charged_ns, __ATOMIC_RELAXED);
    for (;;) {
        uint64_t left = bound > charged ? bound - charged : 0;
        uint64_t take = owed < left ? owed : left;
        if (take == 0 || __atomic_compare_exchange_n(&slot->charged_ns, &charged, charged + take,
                                                     false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            return take;
    }
}

/* Signal handler (sampler.h's holder hook): a sample of ns CPU ns of
 * thread t (a CPU-time timer's, at a scheduler tick: at_tick). For every
 * hot mutex t owns while others wait in a sampled wait, w waiters stand
 * for w * ns of idleness owed by t's hold, up to what they can have
 * waited and no sample has owed yet; a timer sample for no more than
 * holder_window.h allows. */
static void holder_sample(lb_thread_t *t, uint64_t ns, bool at_tick)
{
    uint32_t n = __atomic_load_n(&slots_used, __ATOMIC_ACQUIRE);
    if (n == 0)
        return;
    uint64_t now = lb_now_ns();
    if (at_tick)
        ns = lb_holder_window_take(&t->holder_window, ns, now);
    if (ns == 0)
        return;
    for (uint32_t i = 0; i < n; i++) {
        lb_mutex_hot_t *slot = &lb_mutex_hot_slots[i];
        uint32_t w = 0;
        for (uint32_t k = 0; k <= lb_hot_shard_mask; k++)
            w += __atomic_load_n(&slot->shard[k].waiting, __ATOMIC_ACQUIRE);
        if (w == 0 || w > (uint32_t)INT32_MAX)
            continue;
        /* a waiter is inside the program's lock call: the mutex is live */
        const int *owner = __atomic_load_n(&slot->owner, __ATOMIC_ACQUIRE);
        lb_mon_t *mon = __atomic_load_n(&slot->mon, __ATOMIC_ACQUIRE);
        if (!owner || !mon || __atomic_load_n(owner, __ATOMIC_RELAXED) != t->tid)
            continue;
        uint64_t owed = charge_within(slot, (uint64_t)w * ns, waited_so_far(slot, now));
        if (owed) {
            lb_sampled_owe(mon, lb_object_stats_of_mon(slot->stats), owed);
            /* after clock_moved (mutex_quiet.h); a waiter keeps the
             * mutex live */
            lb_mutex_quiet_clear(lb_mutex_stash(slot->mutex), slot->named);
        }
    }
}

void lb_mutex_sampled_setup(void)
{
    lb_mutex_mode =
        lb_sampled_mode_from_env("LOCKBLAME_MUTEX", true, "mutex blame is timed exactly");
    if (lb_mutex_mode != LB_SAMPLED_EXACT)
        lb_sampler_holder_hook = holder_sample;
}

uint32_t lb_mutex_sampled_missed(void)
{
    return __atomic_load_n(&slots_missed, __ATOMIC_RELAXED);
}

/* mon's slot (mon a mutex's lb_mon), NULL if it has none. */
static lb_mutex_hot_t *slot_of(const lb_mon_t *mon)
{
    uint32_t v = __atomic_load_n(&mon->mutex_sampled, __ATOMIC_ACQUIRE);
    return v - 1 < LB_MUTEX_HOT_SLOTS ? &lb_mutex_hot_slots[v - 1] : NULL;
}

void lb_mutex_sampled_exact_waiter(const lb_mon_t *mon)
{
    lb_mutex_hot_t *slot = slot_of(mon);
    if (slot)
        lb_mutex_quiet_clear(lb_mutex_stash(slot->mutex), slot->named);
}

void lb_mutex_sampled_released(const lb_mon_t *mon)
{
    lb_mutex_hot_t *slot = slot_of(mon);
    if (slot)
        lb_mutex_quiet_settle(mon, lb_mutex_stash(slot->mutex), slot->named);
}

void lb_mutex_sampled_rate_note(lb_mon_t *mon, lb_object_stats_t *stats, uint64_t now)
{
    if (lb_mutex_mode == LB_SAMPLED_AUTO && mon->mutex_sampled == 0 &&
        lb_sampled_rate_is_hot(stats, now))
        __atomic_store_n(&mon->mutex_sampled, LB_MUTEX_HOT_WANTED, __ATOMIC_RELAXED);
}

/* Under mon->meta: a free slot for mon (mutex m's, which its stash names
 * as `named`), or NULL. */
static lb_mutex_hot_t *take_slot(lb_mon_t *mon, pthread_mutex_t *m, uintptr_t named, uint32_t stats)
{
    for (uint32_t i = 0; i < LB_MUTEX_HOT_SLOTS; i++) {
        lb_mutex_hot_t *slot = &lb_mutex_hot_slots[i];
        lb_mon_t *none = NULL;
        if (__atomic_load_n(&slot->mon, __ATOMIC_RELAXED) ||
            !__atomic_compare_exchange_n(&slot->mon, &none, mon, false, __ATOMIC_ACQ_REL,
                                         __ATOMIC_RELAXED))
            continue;
        slot->stats = stats;
        slot->mutex = m;
        slot->named = named;
        __atomic_store_n(&slot->charged_ns, 0, __ATOMIC_RELAXED); /* (its shards start empty) */
        /* before any sample can owe: none waits in the slot yet */
        lb_mutex_quiet_settle(mon, lb_mutex_stash(m), named);
        __atomic_store_n(&slot->owner, &m->__data.__owner, __ATOMIC_RELEASE);
        uint32_t used = __atomic_load_n(&slots_used, __ATOMIC_RELAXED);
        while (used <= i && !__atomic_compare_exchange_n(&slots_used, &used, i + 1, false,
                                                         __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            ;
        __atomic_store_n(&mon->mutex_sampled, i + 1, __ATOMIC_RELEASE);
        return slot;
    }
    __atomic_store_n(&mon->mutex_sampled, LB_MUTEX_HOT_NO_SLOT, __ATOMIC_RELAXED);
    __atomic_fetch_add(&slots_missed, 1, __ATOMIC_RELAXED);
    return NULL;
}

lb_mutex_hot_t *lb_mutex_sampled_enlist(lb_thread_t *self, lb_mon_t *mon, pthread_mutex_t *m,
                                        uintptr_t named)
{
    int saved_errno = errno;
    lb_enter(self);
    lb_meta_lock(&mon->meta);
    uint32_t v = mon->mutex_sampled;
    lb_mutex_hot_t *slot = NULL;
    if (v - 1 < LB_MUTEX_HOT_SLOTS) {
        slot = &lb_mutex_hot_slots[v - 1]; /* another waiter enlisted it */
    } else if (v == LB_MUTEX_HOT_WANTED || (v == 0 && lb_mutex_mode == LB_SAMPLED_ALWAYS)) {
        lb_object_stats_of(mon);
        if (mon->stats)
            slot = take_slot(mon, m, named, mon->stats);
    }
    lb_meta_unlock(&mon->meta);
    lb_leave(self);
    errno = saved_errno;
    return slot;
}

/* A sampled wait's context found (node, NULL without a CCT): its call
 * site's count and the object's first waiter. */
static void note_waiter(lb_thread_t *self, const lb_mutex_hot_t *slot, const lb_cct_node_t *node,
                        uint32_t node_id)
{
    if (!node)
        return;
    lb_note_lock_site(self, node->pc, LB_OBJ_MUTEX);
    lb_object_stats_first_waiter(lb_object_stats_of_mon(slot->stats), self->id, node_id);
}

/* The calling thread's context as a sampled waiter (NULL without a CCT),
 * noted as note_waiter does. */
static lb_cct_node_t *waiter_here(lb_thread_t *self, const lb_mutex_hot_t *slot)
{
    uint32_t node_id = 0;
    lb_cct_node_t *node = self->cct ? lb_context_here(self, &node_id) : NULL;
    note_waiter(self, slot, node, node_id);
    return node;
}

/* waited ns of a sampled wait, to its context (node, if any) and to the
 * waiter's shard of the slot. */
static void credit(lb_thread_t *self, lb_mutex_hot_t *slot, lb_cct_node_t *node, uint64_t waited)
{
    if (node)
        node->m.wait_ns += waited;
    lb_holder_window_waited(&self->holder_window, waited);
    __atomic_fetch_add(&lb_mutex_hot_shard(slot, self)->wait_ns, waited, __ATOMIC_RELAXED);
}

void lb_mutex_sampled_wait_begin(lb_thread_t *self, lb_mon_t *mon, lb_mutex_hot_t *slot,
                                 lb_wait_t *wait, uint64_t start)
{
    lb_wait_deferred_flush(self); /* a cond wait's end first (wait_deferred.h) */
    int saved_errno = errno;
    lb_enter(self);
    *wait = (lb_wait_t){ .mon = mon, .start_ns = start, .kind = LB_OBJ_MUTEX };
    lb_wait_started(self, mon, LB_OBJ_MUTEX, wait);
    lb_holder_window_in_wait(&self->holder_window, 1);
    note_waiter(self, slot, wait->node, wait->node_id);
    lb_leave(self);
    errno = saved_errno;
}

void lb_mutex_sampled_wait_brief(lb_thread_t *self, lb_mutex_hot_t *slot, uint64_t start,
                                 uint64_t tried)
{
    lb_wait_deferred_flush(self); /* a cond wait's end first (wait_deferred.h) */
    int saved_errno = errno;
    lb_enter(self);
    credit(self, slot, waiter_here(self, slot), tried > start ? tried - start : 0);
    lb_mutex_sampled_leave(self, slot);
    lb_leave(self);
    errno = saved_errno;
}

void lb_mutex_sampled_took_at_once(lb_thread_t *self, lb_mutex_hot_t *slot, uintptr_t site)
{
    __atomic_fetch_add(&lb_mutex_hot_shard(slot, self)->waits, 1, __ATOMIC_RELAXED);
    lb_object_stats_t *stats = lb_object_stats_of_mon(slot->stats);
    if (lb_likely(stats && stats->first_node != 0)) {
        lb_note_lock_site(self, site - 1, LB_OBJ_MUTEX);
        return;
    }
    lb_wait_deferred_flush(self); /* a cond wait's end first (wait_deferred.h) */
    int saved_errno = errno;
    lb_enter(self);
    if (!waiter_here(self, slot))
        lb_note_lock_site(self, site - 1, LB_OBJ_MUTEX); /* no context: the call's site */
    lb_leave(self);
    errno = saved_errno;
}

void lb_mutex_sampled_wait_piece(lb_thread_t *self, lb_mutex_hot_t *slot, lb_wait_t *wait,
                                 uint64_t now)
{
    uint64_t piece = now > wait->start_ns ? now - wait->start_ns : 0;
    wait->start_ns = now;
    credit(self, slot, wait->node, piece);
}

void lb_mutex_sampled_wait_end(lb_thread_t *self, lb_mutex_hot_t *slot)
{
    lb_mutex_sampled_leave(self, slot);
    lb_holder_window_in_wait(&self->holder_window, 0);
    lb_waiting_end(self);
    lb_note_wait_end(self, LB_OBJ_MUTEX, 0, 0, 0, false, false);
}

/* The slot's counts, into its record (which slot->stats names). */
static void drain_slot(lb_mutex_hot_t *slot, lb_object_stats_t *s)
{
    for (uint32_t k = 0; k < LB_HOT_SHARDS; k++) {
        lb_mutex_hot_shard_t *shard = &slot->shard[k];
        __atomic_fetch_add(&s->sampled_contended,
                           __atomic_exchange_n(&shard->waits, 0, __ATOMIC_ACQ_REL),
                           __ATOMIC_RELAXED);
        __atomic_fetch_add(&s->sampled_wait_ns,
                           __atomic_exchange_n(&shard->wait_ns, 0, __ATOMIC_ACQ_REL),
                           __ATOMIC_RELAXED);
    }
}

/* Nobody waits on slot any more (its mutex is gone, or a fork child). */
static void no_waiters(lb_mutex_hot_t *slot)
{
    for (uint32_t k = 0; k < LB_HOT_SHARDS; k++)
        __atomic_store_n(&slot->shard[k].waiting, 0, __ATOMIC_RELAXED);
}

void lb_mutex_sampled_drain(lb_object_stats_t *s)
{
    uint32_t index = lb_object_stats_index(s);
    uint32_t n = __atomic_load_n(&slots_used, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n; i++) {
        lb_mutex_hot_t *slot = &lb_mutex_hot_slots[i];
        if (__atomic_load_n(&slot->mon, __ATOMIC_ACQUIRE) && slot->stats == index)
            drain_slot(slot, s);
    }
}

void lb_mutex_sampled_forget(lb_mon_t *mon)
{
    uint32_t v = mon->mutex_sampled;
    mon->mutex_sampled = 0;
    if (v - 1 >= LB_MUTEX_HOT_SLOTS)
        return;
    lb_mutex_hot_t *slot = &lb_mutex_hot_slots[v - 1];
    lb_object_stats_t *s = lb_object_stats_of_mon(slot->stats);
    if (s)
        drain_slot(slot, s);
    __atomic_store_n(&slot->owner, NULL, __ATOMIC_RELEASE);
    no_waiters(slot);
    __atomic_store_n(&slot->mon, NULL, __ATOMIC_RELEASE);
}

void lb_mutex_sampled_fork_child(void)
{
    if (lb_self)
        lb_holder_window_fork_child(&lb_self->holder_window);
    /* only slots ever taken hold anything: the others stay the parent's
     * pages, unwritten */
    uint32_t n = __atomic_load_n(&slots_used, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n && i < LB_MUTEX_HOT_SLOTS; i++) {
        no_waiters(&lb_mutex_hot_slots[i]);
        /* the parent's waits are drained (fork_forget.c): so are its charges */
        __atomic_store_n(&lb_mutex_hot_slots[i].charged_ns, 0, __ATOMIC_RELAXED);
    }
}
