/* The lb_mon pool: one MAP_NORESERVE reservation of LB_MON_SLOTS slots,
 * bump-allocated, with a free list for reuse.
 *
 * Invariants: slots are never unmapped, so any index < slots.bump is
 * readable forever. The free list and the bump pointer change only under
 * slots.lock (the three share a cache line), which is taken on conversion
 * and destroy, never on a lock fast path.
 * The per-thread cache below is used only on the thread's known stack. */
#include "locks/monitored.h"

#include <string.h>

#include "blame/object_stats.h"
#include "locks/mon_gc.h"
#include "util/common.h"
#include "util/pages.h"
#include "util/stack_bounds.h"

lb_mon_pool_t lb_mon_pool;
#define pool lb_mon_pool.base
/* The lock and what it guards, on one cache line. */
static struct {
    lb_meta_lock_t lock;
    uint32_t bump;      /* the next slot never handed out */
    uint32_t free_head; /* the free list, linked through free_next; 0 = empty */
} slots LB_FORK_WRITTEN = { .lock = LB_META_LOCK_INIT, .bump = 1 };

int lb_mon_pool_setup(void)
{
    if (pool)
        return 0;
    /* the object records below the first slot: a process's first
     * contention writes one of each, on one page table (util/pages.h);
     * else (a limited address space, or the kernel refused) the pool
     * alone, the records in a mapping of their own at the first
     * contention */
    size_t bytes = (size_t)LB_MON_SLOTS * sizeof(lb_mon_t);
    pool = lb_pages_reserve_split(lb_object_stats_bytes(), bytes);
    if (pool)
        lb_object_stats_place(pool);
    else
        pool = lb_pages_reserve(bytes);
    return pool ? 0 : -1;
}

/* Per-thread cache of free slots, so that lock churn (init, first use,
 * destroy) does not take slots.lock each time. Enabled only on attached
 * threads, which flush it when they exit; others use the pool directly. */
#define LB_MON_CACHE 64
#define LB_MON_BATCH 32
static LB_TLS struct {
    bool enabled;
    uint32_t n;
    uint32_t slot[LB_MON_CACHE];
} cache;

void lb_mon_cache_enable(void)
{
    cache.enabled = true;
}

/* Per thread: whether this thread's last slots came from growing the
 * pool (free list empty) rather than from locks it or others destroyed.
 * Only then are orphans (locks freed without destroy) worth looking for. */
static LB_TLS bool growing;

bool lb_mon_pool_growing(void)
{
    return growing;
}

void lb_mon_pool_keep_growing(void)
{
    growing = true;
}

/* Move up to `count` free slots into the cache (under slots.lock). */
static void refill(uint32_t count)
{
    uint32_t first = cache.n;
    lb_meta_lock(&slots.lock);
    bool grew = false;
    while (cache.n < count) {
        uint32_t index = slots.free_head;
        if (index) {
            slots.free_head = pool[index].free_next;
        } else if (slots.bump < LB_MON_SLOTS) {
            index = slots.bump++;
            grew = true;
        } else {
            break;
        }
        cache.slot[cache.n++] = index;
    }
    lb_meta_unlock(&slots.lock);
    growing = grew;
    /* Hand the new slots out in ascending order (the cache pops from the
     * top): locks created in a row then get lb_mons in a row, which the
     * hardware prefetcher follows when they are used or destroyed in that
     * order again (churn 10M/300K: 3-5% faster). */
    for (uint32_t i = first, j = cache.n; i + 1 < j; i++, j--) {
        uint32_t t = cache.slot[i];
        cache.slot[i] = cache.slot[j - 1];
        cache.slot[j - 1] = t;
    }
}

/* Return cached slots beyond `keep` to the pool (under slots.lock). */
static void drain(uint32_t keep)
{
    lb_meta_lock(&slots.lock);
    while (cache.n > keep) {
        uint32_t index = cache.slot[--cache.n];
        pool[index].free_next = slots.free_head;
        slots.free_head = index;
    }
    lb_meta_unlock(&slots.lock);
}

void lb_mon_cache_flush(void)
{
    if (cache.n)
        drain(0);
    cache.enabled = false;
}

static uint32_t take_slot(void)
{
    /* Off the thread's known stack this may be a raw clone sharing the
     * cache's thread-local storage with its creator (sampler/foreign.h):
     * the pool directly then. */
    if (cache.enabled && lb_stack_here_known()) {
        if (cache.n == 0) {
            refill(LB_MON_BATCH);
            lb_mon_gc_maybe(lb_mon_slots_used()); /* the pool may have grown */
        }
        return cache.n ? cache.slot[--cache.n] : 0;
    }
    uint32_t index = 0;
    lb_meta_lock(&slots.lock);
    index = slots.free_head;
    if (index)
        slots.free_head = pool[index].free_next;
    else if (slots.bump < LB_MON_SLOTS)
        index = slots.bump++;
    lb_meta_unlock(&slots.lock);
    return index;
}

lb_mon_t *lb_mon_alloc(const void *addr, lb_obj_kind kind)
{
    if (!pool)
        return NULL;
    uint32_t index = take_slot();
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
    growing = false; /* a slot came back: this thread is recycling */
    if (cache.enabled && lb_stack_here_known()) {
        if (cache.n == LB_MON_CACHE)
            drain(LB_MON_CACHE - LB_MON_BATCH);
        cache.slot[cache.n++] = index;
        return;
    }
    lb_meta_lock(&slots.lock);
    mon->free_next = slots.free_head;
    slots.free_head = index;
    lb_meta_unlock(&slots.lock);
}

uint32_t lb_mon_index(const lb_mon_t *mon)
{
    return (uint32_t)(mon - pool);
}

uint32_t lb_mon_slots_used(void)
{
    return __atomic_load_n(&slots.bump, __ATOMIC_RELAXED) - 1;
}

uint32_t lb_mon_live(void)
{
    uint32_t end = __atomic_load_n(&slots.bump, __ATOMIC_ACQUIRE), live = 0;
    for (uint32_t i = 1; i < end; i++)
        live += __atomic_load_n(&pool[i].addr, __ATOMIC_RELAXED) != NULL;
    return live;
}

void lb_mon_for_each(void (*fn)(lb_mon_t *mon, void *arg), void *arg)
{
    uint32_t end = __atomic_load_n(&slots.bump, __ATOMIC_ACQUIRE);
    for (uint32_t i = 1; i < end; i++) {
        if (__atomic_load_n(&pool[i].addr, __ATOMIC_ACQUIRE))
            fn(&pool[i], arg);
    }
}

void lb_mon_fork_prepare(void)
{
    lb_meta_lock(&slots.lock);
}

void lb_mon_fork_parent(void)
{
    lb_meta_unlock(&slots.lock);
}

void lb_mon_fork_child(void)
{
    /* Only the forking thread exists now; no meta lock can be in use. */
    for (uint32_t i = 1; i < slots.bump; i++)
        if (pool[i].meta.locked) /* an unwritten page stays the parent's */
            pool[i].meta.locked = 0;
    lb_meta_unlock(&slots.lock);
}
