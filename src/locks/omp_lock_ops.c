/* OpenMP locks and critical sections: see omp_lock_ops.h.
 *
 * libgomp offers no try for a critical section, so a thread cannot tell
 * from the real call whether it waited. Each lock's `occupants` count
 * (threads between the start of an acquisition and the end of their
 * release) tells it instead: an acquisition that finds it non-zero begins
 * a wait before the real call, as a mutex's contended path does, and ends
 * it holding the lock. The blame clock and its verbs are the mutex's
 * (blame/blame.h); only the lb_mon comes from the object map, with kind
 * mutex and never published (mon_gc.c sweeps published ones only).
 *
 * Invariants: occupants changes by atomic adds only: +1 before a blocking
 * acquisition or after a successful test, -1 after the real release. A
 * nest lock's depth is written by its owner only, while it holds the
 * lock. Both live in a table indexed by the lb_mon's pool index, reserved
 * on first use (untouched pages cost nothing); a recycled lb_mon finds
 * occupants at 0, since every release takes back its acquisition. */
#include "locks/omp_lock_ops.h"

#include "blame/sites.h"
#include "locks/monitored.h"
#include "locks/objmap.h"
#include "util/pages.h"

const char lb_omp_unnamed_critical;

typedef struct {
    uint32_t occupants; /* holding or waiting, atomic adds */
    uint32_t depth;     /* nest locks: the owner's nesting depth */
} lock_state_t;

static void *states; /* lock_state_t[LB_MON_SLOTS], reserved on first use */

/* key's state and lb_mon for the calling thread, or NULL (not monitored:
 * lockblame is not running on it, or no room). */
static lock_state_t *state_of(const void *key, lb_thread_t **self, lb_mon_t **mon)
{
    *self = lb_self;
    if (!*self || (*self)->busy)
        return NULL;
    *mon = lb_objmap_get(key, LB_OBJ_MUTEX);
    lock_state_t *table = __atomic_load_n(&states, __ATOMIC_ACQUIRE);
    if (!table)
        table = lb_pages_reserve_once(&states, (size_t)LB_MON_SLOTS * sizeof(lock_state_t));
    if (!*mon || !table)
        return NULL;
    return &table[lb_mon_index(*mon)];
}

void lb_omp_lock_begin(const void *key, lb_omp_hold_t *h)
{
    lock_state_t *s = state_of(key, &h->self, &h->mon);
    h->waits = false;
    if (!s) {
        h->self = NULL;
        return;
    }
    h->occupants = &s->occupants;
    if (__atomic_fetch_add(&s->occupants, 1, __ATOMIC_ACQ_REL) != 0) {
        lb_wait_begin(h->self, h->mon, LB_OBJ_MUTEX, &h->wait);
        h->waits = true;
    }
}

void lb_omp_lock_end(lb_omp_hold_t *h)
{
    if (h->waits)
        lb_wait_end(h->self, &h->wait, true);
}

void lb_omp_lock_taken(const void *key)
{
    lb_thread_t *self;
    lb_mon_t *mon;
    lock_state_t *s = state_of(key, &self, &mon);
    if (s && __atomic_fetch_add(&s->occupants, 1, __ATOMIC_ACQ_REL) != 0)
        lb_hold_begins(self, mon); /* others wait: their idleness is ours now */
}

void lb_omp_unlock_begin(const void *key, uintptr_t site, lb_omp_hold_t *h)
{
    lock_state_t *s = state_of(key, &h->self, &h->mon);
    if (!s) {
        h->self = NULL;
        return;
    }
    h->occupants = &s->occupants;
    lb_site_count_release(h->self, site, LB_OBJ_MUTEX);
    if (lb_release_needs_accounting(h->mon))
        lb_release_blame(h->self, h->mon, LB_OBJ_MUTEX, site);
}

void lb_omp_unlock_end(lb_omp_hold_t *h)
{
    if (h->self)
        __atomic_fetch_sub(h->occupants, 1, __ATOMIC_ACQ_REL);
}

void lb_omp_nest_depth_set(const void *key, uint32_t depth)
{
    lb_thread_t *self;
    lb_mon_t *mon;
    lock_state_t *s = state_of(key, &self, &mon);
    if (s)
        s->depth = depth;
}

bool lb_omp_nest_unset_frees(const void *key)
{
    lb_thread_t *self;
    lb_mon_t *mon;
    lock_state_t *s = state_of(key, &self, &mon);
    if (!s || s->depth == 0)
        return false;
    return --s->depth == 0;
}
