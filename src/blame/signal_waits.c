/* Waits on hot conds and semaphores in shards: see signal_waits.h for the
 * rule and its invariants. */
#include "blame/signal_waits.h"

#include "blame/wait_note.h"
#include "util/fork_pages.h"

lb_signal_hot_t lb_signal_hot_slots[LB_SIGNAL_HOT_SLOTS];
/* High-water mark: only slots below it were ever taken. The others stay
 * untouched pages (136 KiB in all), which a scan of every slot would map
 * in each process and a fork child's reset would copy. */
static uint32_t slots_used;

static inline lb_signal_shard_t *shard_of(lb_signal_hot_t *slot, const lb_thread_t *self)
{
    return &slot->shard[self->id & lb_hot_shard_mask];
}

uint32_t lb_signal_waits_number(const lb_signal_hot_t *slot)
{
    return (uint32_t)(slot - lb_signal_hot_slots + 1) << LB_SIGNAL_SLOT_SHIFT;
}

lb_signal_hot_t *lb_signal_waits_take(lb_mon_t *mon)
{
    for (uint32_t i = 0; i < LB_SIGNAL_HOT_SLOTS; i++) {
        lb_signal_hot_t *slot = &lb_signal_hot_slots[i];
        lb_mon_t *none = NULL;
        if (__atomic_load_n(&slot->mon, __ATOMIC_RELAXED) ||
            !__atomic_compare_exchange_n(&slot->mon, &none, mon, false, __ATOMIC_ACQ_REL,
                                         __ATOMIC_RELAXED))
            continue;
        uint32_t used = __atomic_load_n(&slots_used, __ATOMIC_RELAXED);
        while (used <= i && !__atomic_compare_exchange_n(&slots_used, &used, i + 1, false,
                                                         __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            ;
        slot->stats = mon->stats;
        __atomic_store_n(&slot->gaps, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&slot->last_signal_ns, 0, __ATOMIC_RELAXED); /* no gap before its first */
        return slot; /* its shards and baselines were left equal by forget */
    }
    return NULL;
}

/* The shard's blame clock at t, valid for t no earlier than its last
 * event: I - T = C + n t - S - T (uint64 modular, signal_waits.h). Under
 * the shard's lock. */
static inline uint64_t shard_i(const lb_signal_shard_t *shard, uint64_t t)
{
    return shard->waited_ns + shard->waiting * t - shard->start_sum - shard->taken_ns;
}

/* Under the shard's lock, after a begin or end at t: note the event. */
static void note_event(lb_signal_shard_t *shard, uint64_t t)
{
    uint32_t e = shard->events++ % LB_SIGNAL_SHARD_EVENTS;
    shard->event_ns[e] = t;
    shard->event_i[e] = shard_i(shard, t);
    shard->event_waiting[e] = shard->waiting;
}

void lb_signal_waits_begin(lb_thread_t *self, lb_signal_hot_t *slot, uint64_t start)
{
    lb_signal_shard_t *shard = shard_of(slot, self);
    lb_meta_lock(&shard->lock);
    shard->waiting++;
    shard->start_sum += start;
    if (start > shard->last_ns)
        shard->last_ns = start;
    note_event(shard, start);
    lb_meta_unlock(&shard->lock);
}

/* Under slot->lock: where the interval that a wait ending now ends in
 * began, if a measure will read it (signal_waits.h, "Timed out"); else 0. */
static uint64_t open_interval_from(const lb_signal_hot_t *slot)
{
    uint64_t from = slot->marked ? slot->mark_ns : 0;
    if (__atomic_load_n(&slot->gaps, __ATOMIC_RELAXED)) {
        uint64_t last = __atomic_load_n(&slot->last_signal_ns, __ATOMIC_RELAXED);
        if (last > from)
            from = last;
    }
    return from;
}

/* Under slot->lock: is slot as x's hot part saw it (its generation,
 * wait_note.h): the same object, the same measured interval open (or the
 * same none) and, where it looks for gaps, no signal since? */
static bool expired_same(const lb_signal_hot_t *slot, const lb_expired_run_t *x)
{
    return x->hot == slot && __atomic_load_n(&slot->mon, __ATOMIC_RELAXED) == x->mon &&
           slot->marked == x->hot_marked && slot->mark_ns == x->hot_mark_ns &&
           __atomic_load_n(&slot->last_signal_ns, __ATOMIC_RELAXED) == x->hot_signal_ns;
}

void lb_signal_waits_put_back(lb_thread_t *self, lb_signal_hot_t *slot)
{
    lb_expired_run_t *x = self->wait_note ? &self->wait_note->expired : NULL;
    if (!x || !x->hot_taken)
        return;
    lb_signal_shard_t *shard = shard_of(slot, self);
    lb_meta_lock(&slot->lock);
    if (expired_same(slot, x)) {
        lb_meta_lock(&shard->lock);
        shard->taken_ns -= x->hot_taken; /* (modular, as T's sum) */
        lb_meta_unlock(&shard->lock);
    } else {
        x->hot_taken = 0;
    }
    lb_meta_unlock(&slot->lock);
}

void lb_signal_waits_end(lb_thread_t *self, lb_signal_hot_t *slot, uint64_t start, uint64_t end,
                         bool timed_out)
{
    lb_signal_shard_t *shard = shard_of(slot, self);
    lb_expired_run_t *x = self->wait_note ? &self->wait_note->expired : NULL;
    uint64_t taken = 0;
    if (timed_out) {
        lb_meta_lock(&slot->lock); /* (before the shard's: signal_waits.h's order) */
        uint64_t from = open_interval_from(slot);
        if (from) {
            uint64_t since = from > start ? from : start;
            taken = end > since ? end - since : 0;
            /* the part a run's earlier waits took back and this one's
             * begin put back (wait_note.h), no measure or signal since */
            if (x && x->carried && expired_same(slot, x))
                taken += x->hot_taken;
        }
        if (x) {
            x->hot = slot;
            x->hot_taken = taken;
            x->hot_marked = slot->marked;
            x->hot_mark_ns = slot->mark_ns;
            x->hot_signal_ns = __atomic_load_n(&slot->last_signal_ns, __ATOMIC_RELAXED);
        }
    }
    lb_meta_lock(&shard->lock);
    shard->taken_ns += taken;
    shard->waiting--;
    shard->start_sum -= start;
    shard->waited_ns += end - start;
    shard->waits++;
    if (end > shard->last_ns)
        shard->last_ns = end;
    note_event(shard, end);
    lb_meta_unlock(&shard->lock);
    if (timed_out)
        lb_meta_unlock(&slot->lock);
}

/* I(at), or with at == 0 I at the last event any shard or measurement saw;
 * also the completed waits and their time, and T (*taken). Takes each
 * shard's lock. */
static uint64_t integral(lb_signal_hot_t *slot, uint64_t at, uint64_t *waits, uint64_t *waited,
                         uint64_t *waiting, uint64_t *taken)
{
    uint64_t c = 0, n = 0, s = 0, w = 0, t = 0, last = slot->measured_ns;
    for (uint32_t k = 0; k <= lb_hot_shard_mask; k++) {
        lb_signal_shard_t *shard = &slot->shard[k];
        lb_meta_lock(&shard->lock);
        c += shard->waited_ns;
        n += shard->waiting;
        s += shard->start_sum;
        w += shard->waits;
        t += shard->taken_ns;
        if (shard->last_ns > last)
            last = shard->last_ns;
        lb_meta_unlock(&shard->lock);
    }
    *waits = w;
    *waited = c;
    *taken = t;
    if (waiting)
        *waiting = n;
    return c + n * (at ? at : last) - s;
}

/* A shard's I at `from`, from its events (under its lock); false when
 * every event it keeps is later than `from` (it had more since), with
 * the earliest of them in *known_from: I is known from there on. */
static bool shard_i_at(const lb_signal_shard_t *shard, uint64_t from, uint64_t *i,
                       uint64_t *known_from)
{
    if (shard->last_ns <= from) { /* nothing since: I grows at rate n */
        *i = shard_i(shard, from);
        return true;
    }
    int best = -1, oldest = 0;
    for (int e = 0; e < LB_SIGNAL_SHARD_EVENTS; e++) {
        if (shard->event_ns[e] <= from && (best < 0 || shard->event_ns[e] > shard->event_ns[best]))
            best = e;
        if (shard->event_ns[e] < shard->event_ns[oldest])
            oldest = e;
    }
    if (best < 0) {
        *known_from = shard->event_ns[oldest];
        return false;
    }
    *i = shard->event_i[best] + shard->event_waiting[best] * (from - shard->event_ns[best]);
    return true;
}

/* One pass over the shards: the sum of their I(now) - I(from), or false
 * with *known_from the latest time from which every shard's I is known. */
static bool accrued_since(lb_signal_hot_t *slot, uint64_t from, uint64_t now, uint64_t *accrued,
                          uint64_t *known_from)
{
    uint64_t sum = 0;
    bool known = true;
    *known_from = from;
    for (uint32_t k = 0; k <= lb_hot_shard_mask; k++) {
        lb_signal_shard_t *shard = &slot->shard[k];
        lb_meta_lock(&shard->lock);
        uint64_t i_from = 0, shard_from = from;
        if (shard_i_at(shard, from, &i_from, &shard_from)) {
            int64_t d = (int64_t)(shard_i(shard, now) - i_from);
            sum += d > 0 ? (uint64_t)d : 0;
        } else {
            known = false;
            if (shard_from > *known_from)
                *known_from = shard_from;
        }
        lb_meta_unlock(&shard->lock);
    }
    *accrued = sum;
    return known;
}

bool lb_signal_waits_since(lb_signal_hot_t *slot, uint64_t from, uint64_t now, uint64_t *accrued)
{
    uint64_t known_from;
    if (accrued_since(slot, from, now, accrued, &known_from))
        return true;
    /* A shard had more events than it keeps just after `from` (waiters
     * woken by the signal that began the gap, taking work and waiting
     * again): measure from where every shard's I is known, if that
     * leaves most of the gap; the start's few microseconds stay
     * unattributed. */
    if (known_from >= now || known_from - from > (now - from) / 4)
        return false;
    uint64_t again;
    return accrued_since(slot, known_from, now, accrued, &again);
}

/* Under slot->lock: the accrual up to i_now into stats. */
static void accrue(lb_signal_hot_t *slot, lb_object_stats_t *stats, uint64_t i_now)
{
    if (i_now > slot->i_drained) {
        stats->accrued_held_ns += (double)(i_now - slot->i_drained);
        slot->i_drained = i_now;
    }
}

uint64_t lb_signal_waits_integral(lb_signal_hot_t *slot, lb_object_stats_t *stats, uint64_t now,
                                  uint64_t *waiting)
{
    uint64_t waits, waited, taken;
    uint64_t i_now = integral(slot, now, &waits, &waited, waiting, &taken);
    if (now > slot->measured_ns)
        slot->measured_ns = now;
    if (stats)
        accrue(slot, stats, i_now);
    return i_now - taken;
}

/* The slot's accrual up to its last event, and its completed waits not
 * yet drained, into s (the record of slot's object). */
static void drain_slot(lb_signal_hot_t *slot, lb_object_stats_t *s)
{
    uint64_t waits, waited, taken;
    lb_meta_lock(&slot->lock);
    accrue(slot, s, integral(slot, 0, &waits, &waited, NULL, &taken));
    uint64_t new_waits = waits - slot->drained_waits, new_ns = waited - slot->drained_ns;
    slot->drained_waits = waits;
    slot->drained_ns = waited;
    lb_meta_unlock(&slot->lock);
    /* each completed wait is one acquisition of a cond or semaphore, as
     * lb_wait_end counts them; sampled_contended counts the waits whose
     * attribution was sampled (the final write takes it) */
    s->contended += new_waits;
    s->acquisitions += new_waits;
    s->wait_ns += new_ns;
    __atomic_fetch_add(&s->sampled_contended, new_waits, __ATOMIC_RELAXED);
}

void lb_signal_waits_drain(lb_object_stats_t *s)
{
    uint32_t index = lb_object_stats_index(s);
    uint32_t n = __atomic_load_n(&slots_used, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n && i < LB_SIGNAL_HOT_SLOTS; i++) {
        lb_signal_hot_t *slot = &lb_signal_hot_slots[i];
        if (__atomic_load_n(&slot->mon, __ATOMIC_ACQUIRE) && slot->stats == index)
            drain_slot(slot, s);
    }
}

void lb_signal_waits_forget(lb_mon_t *mon)
{
    lb_signal_hot_t *slot = lb_signal_waits_slot(mon->signal_sampled);
    if (!slot || __atomic_load_n(&slot->mon, __ATOMIC_ACQUIRE) != mon)
        return;
    lb_object_stats_t *s = lb_object_stats_of_mon(slot->stats);
    if (s)
        drain_slot(slot, s);
    /* nobody waits on a destroyed object: the baselines now equal the
     * shards, so the next object to take the slot starts from 0 */
    lb_meta_lock(&slot->lock);
    uint64_t waits, waited, taken;
    slot->i_drained = integral(slot, 0, &waits, &waited, NULL, &taken);
    slot->i_mark = slot->i_drained - taken;
    slot->drained_waits = waits;
    slot->drained_ns = waited;
    slot->marked = 0;
    lb_meta_unlock(&slot->lock);
    __atomic_store_n(&slot->mon, NULL, __ATOMIC_RELEASE);
}

void lb_signal_waits_fork_child(void)
{
    uint32_t n = __atomic_load_n(&slots_used, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n && i < LB_SIGNAL_HOT_SLOTS; i++) {
        lb_signal_hot_t *slot = &lb_signal_hot_slots[i];
        uint64_t waits = 0, waited = 0, taken = 0;
        for (uint32_t k = 0; k < LB_HOT_SHARDS; k++) {
            lb_signal_shard_t *shard = &slot->shard[k];
            LB_STORE_CHANGED(&shard->lock.locked, 0u); /* held by a thread gone here */
            LB_STORE_CHANGED(&shard->waiting, 0u);
            LB_STORE_CHANGED(&shard->start_sum, 0u);
            waits += shard->waits;
            waited += shard->waited_ns;
            taken += shard->taken_ns;
        }
        /* the parent's waits are forgotten (fork_forget.c): no accrual or
         * count left to drain */
        LB_STORE_CHANGED(&slot->lock.locked, 0u);
        LB_STORE_CHANGED(&slot->drained_waits, waits);
        LB_STORE_CHANGED(&slot->drained_ns, waited);
        LB_STORE_CHANGED(&slot->i_drained, waited);
        LB_STORE_CHANGED(&slot->i_mark, waited - taken);
        LB_STORE_CHANGED(&slot->marked, 0u);
    }
}
