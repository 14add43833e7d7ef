/* The lb_mon pool: one MAP_NORESERVE reservation of LB_MON_SLOTS slots,
 * bump-allocated, with a free list for reuse.
 *
 * Invariants: slots are never unmapped, so any index < bump is readable
 * forever. The free list and bump pointer change only under pool_lock,
 * which is taken on conversion and destroy, never on a lock fast path. */
#include "locks/monitored.h"

#include <string.h>

#include "util/pages.h"

lb_mon_t *lb_mon_pool;
#define pool lb_mon_pool
static uint32_t bump = 1;
static uint32_t free_head;
static uint32_t live;
static lb_spin_t pool_lock = LB_SPIN_INIT;

int lb_mon_pool_setup(void)
{
    if (pool)
        return 0;
    pool = lb_pages_reserve((size_t)LB_MON_SLOTS * sizeof(lb_mon_t));
    return pool ? 0 : -1;
}

lb_mon_t *lb_mon_alloc(const void *addr, lb_obj_kind kind)
{
    if (!pool)
        return NULL;
    lb_spin_lock(&pool_lock);
    uint32_t index = free_head;
    if (index)
        free_head = pool[index].free_next;
    else if (bump < LB_MON_SLOTS)
        index = bump++;
    if (index)
        live++;
    lb_spin_unlock(&pool_lock);
    if (!index)
        return NULL;
    lb_mon_t *mon = &pool[index];
    memset(mon, 0, sizeof *mon);
    mon->addr = addr;
    mon->kind = (uint8_t)kind;
    return mon;
}

void lb_mon_free(lb_mon_t *mon)
{
    uint32_t index = lb_mon_index(mon);
    __atomic_store_n(&mon->addr, NULL, __ATOMIC_RELEASE);
    lb_spin_lock(&pool_lock);
    mon->free_next = free_head;
    free_head = index;
    live--;
    lb_spin_unlock(&pool_lock);
}

uint32_t lb_mon_index(const lb_mon_t *mon)
{
    return (uint32_t)(mon - pool);
}

uint32_t lb_mon_slots_used(void)
{
    return __atomic_load_n(&bump, __ATOMIC_RELAXED) - 1;
}

uint32_t lb_mon_live(void)
{
    return __atomic_load_n(&live, __ATOMIC_RELAXED);
}

void lb_mon_for_each(void (*fn)(lb_mon_t *mon, void *arg), void *arg)
{
    uint32_t end = __atomic_load_n(&bump, __ATOMIC_ACQUIRE);
    for (uint32_t i = 1; i < end; i++) {
        if (__atomic_load_n(&pool[i].addr, __ATOMIC_ACQUIRE))
            fn(&pool[i], arg);
    }
}

void lb_mon_fork_prepare(void)
{
    lb_spin_lock(&pool_lock);
}

void lb_mon_fork_parent(void)
{
    lb_spin_unlock(&pool_lock);
}

void lb_mon_fork_child(void)
{
    /* Only the forking thread exists now; no meta lock can be in use. */
    for (uint32_t i = 1; i < bump; i++)
        pool[i].meta.locked = 0;
    lb_spin_unlock(&pool_lock);
}
