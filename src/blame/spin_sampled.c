/* Spin waits measured by CPU samples: see spin_sampled.h for the rule,
 * its invariants and when it applies. */
#include "blame/spin_sampled.h"

#include <errno.h>

#include "blame/context.h"
#include "blame/wait_note_ops.h"
#include "sampler/sampler.h"
#include "util/log.h"

lb_sampled_mode_t lb_spin_mode = LB_SAMPLED_AUTO;

void lb_spin_sampled_setup(void)
{
    lb_spin_mode = lb_sampled_mode_from_env("LOCKBLAME_SPIN", true, "spin waits are timed exactly");
}

void lb_spin_sampled_rate_note(lb_mon_t *mon, lb_object_stats_t *stats, uint64_t now)
{
    if (lb_spin_mode == LB_SAMPLED_AUTO && lb_sampled_rate_is_hot(stats, now))
        __atomic_store_n(&mon->spin_sampled, 1, __ATOMIC_RELAXED);
}

/* The thread's samples arrive now, each standing for a known CPU time. */
static bool thread_is_sampled(const lb_thread_t *self)
{
    const lb_sampler_thread_t *s = self->sampler;
    return self->cct && s && (s->has_perf || s->has_timer) && !s->unsampled;
}

/* The first sampled wait on an object without a record (mode sampled
 * from the start): create it, and name this wait's context as the first
 * waiter's, as an exact wait would. */
LB_COLD static lb_object_stats_t *first_stats(lb_thread_t *self, lb_mon_t *mon)
{
    lb_enter(self);
    lb_meta_lock(&mon->meta);
    lb_object_stats_t *stats = lb_object_stats_of(mon);
    lb_meta_unlock(&mon->meta);
    if (stats) {
        uint32_t id;
        lb_context_here(self, &id);
        lb_object_stats_first_waiter(stats, self->id, id);
    }
    lb_leave(self);
    return stats;
}

enum {
    WAITS_FLUSH_AT = 1u << 31
}; /* a count this high goes to its record */

static void add_waits(uint64_t kept)
{
    lb_object_stats_t *stats = lb_object_stats_of_mon((uint32_t)(kept >> 32));
    if (stats && (uint32_t)kept)
        __atomic_fetch_add(&stats->sampled_contended, (uint32_t)kept, __ATOMIC_RELAXED);
}

/* One sampled wait on the object whose record index is `stats`, counted
 * in the thread's own word (spin_sampled.h): a CAS on a line no other
 * thread writes, but at the final write. The count of another record is
 * added to that record as this one replaces it. */
static void count_wait(lb_thread_t *self, uint32_t stats)
{
    uint64_t kept = __atomic_load_n(&self->spin_sampled_waits, __ATOMIC_RELAXED), next;
    do {
        bool same = kept >> 32 == stats && (uint32_t)kept < WAITS_FLUSH_AT;
        next = same ? kept + 1 : ((uint64_t)stats << 32 | 1);
    } while (!__atomic_compare_exchange_n(&self->spin_sampled_waits, &kept, next, false,
                                          __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    if (next == ((uint64_t)stats << 32 | 1))
        add_waits(kept);
}

void lb_spin_sampled_flush(lb_thread_t *t)
{
    add_waits(__atomic_exchange_n(&t->spin_sampled_waits, 0, __ATOMIC_RELAXED));
}

bool lb_spin_sampled_wait_begin(lb_thread_t *self, lb_mon_t *mon, uintptr_t site)
{
    if (!thread_is_sampled(self))
        return false;
    lb_object_stats_t *stats = lb_object_stats_of_mon(mon->stats);
    if (lb_unlikely(!stats || stats->first_node == 0)) {
        int saved_errno = errno;
        stats = first_stats(self, mon);
        errno = saved_errno;
        if (!stats)
            return false;
    }
    count_wait(self, mon->stats);
    lb_note_lock_site(self, site - 1, LB_OBJ_SPIN);
    /* waiting classifies the samples (overhead: spinning); a sampled wait
     * is not counted in the undirected ratio's waiters (no shared write) */
    self->waiting = (uint32_t)LB_OBJ_SPIN + 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&self->spin_sampled, mon, __ATOMIC_RELAXED);
    return true;
}

void lb_spin_sampled_account(lb_thread_t *t, lb_cct_node_t *node, uint64_t ns, bool held)
{
    lb_mon_t *mon = t->spin_sampled;
    lb_object_stats_t *stats = lb_object_stats_of_mon(mon->stats); /* set before the note */
    node->m.wait_ns += ns;
    __atomic_fetch_add(&stats->sampled_wait_ns, ns, __ATOMIC_RELAXED);
    if (held)
        lb_sampled_owe(mon, stats, ns);
    else
        __atomic_fetch_add(&stats->sampled_handoff_ns, ns, __ATOMIC_RELAXED);
}
