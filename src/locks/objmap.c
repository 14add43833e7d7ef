#include "locks/objmap.h"

#include "common/hash.h"
#include "core/phase.h"
#include "locks/lifecycle.h"
#include "util/pages.h"

#define LB_OBJMAP_BITS   22
#define LB_OBJMAP_SLOTS  (1u << LB_OBJMAP_BITS) /* 64 MiB reserved, touched as used */
#define LB_OBJMAP_PROBES 64

typedef lb_objmap_slot_t slot_t;

static slot_t *table LB_FORK_WRITTEN;
static uint64_t full_misses;

/* The table's pages that ever held a key, a bit each: a look-up for an
 * address that was never monitored (a destroy or init of an object no
 * thread contended on, which a library such as OpenSSL does by the
 * hundred at its start and end) reads this bit, not a slot on a page
 * nothing touched, which would cost a page fault (a fork child's too). A
 * page's bit is set before its first key is claimed, and never cleared. */
#define LB_OBJMAP_PAGE_SLOTS (4096u / sizeof(slot_t))
#define LB_OBJMAP_PAGES      (LB_OBJMAP_SLOTS / LB_OBJMAP_PAGE_SLOTS)
static uint64_t used_pages[LB_OBJMAP_PAGES / 64] LB_FORK_WRITTEN_ARRAY;
_Static_assert(4096 % sizeof(slot_t) == 0 && LB_OBJMAP_PAGES % 64 == 0,
               "a page of the table holds whole slots, and the pages fill the bitmap's words");

static inline bool page_used(uint32_t slot)
{
    uint32_t page = slot / LB_OBJMAP_PAGE_SLOTS;
    return (__atomic_load_n(&used_pages[page / 64], __ATOMIC_ACQUIRE) >> (page % 64)) & 1;
}

static void mark_page(uint32_t slot)
{
    uint32_t page = slot / LB_OBJMAP_PAGE_SLOTS;
    if (!page_used(slot))
        __atomic_fetch_or(&used_pages[page / 64], 1ull << (page % 64), __ATOMIC_SEQ_CST);
}

LB_TLS lb_objmap_slot_t *lb_objmap_recent[LB_OBJMAP_RECENT];

static slot_t *table_get(void)
{
    return lb_pages_reserve_once((void **)&table, (size_t)LB_OBJMAP_SLOTS * sizeof(slot_t));
}

void lb_objmap_reserve(void)
{
    table_get();
}

/* A key's first slot keeps the program's locality: keys within one
 * window of LB_OBJMAP_SLOTS x 4 bytes of address space (16 MiB) lie in
 * the table in their address order, one slot per 4 bytes (the objects it
 * holds are 4-byte aligned, a spin lock's or futex's word the smallest:
 * two keys of a window never share a first slot), at an offset hashed
 * from the window, so that windows do not line up. The locks a library
 * allocates together then share the table's pages: a process that uses
 * or destroys thousands of them (OpenSSL's) touches a page of the table
 * per KiB of its heap, not one per lock. */
#define LB_OBJMAP_GRAIN_BITS 2
static inline uint32_t home(uintptr_t key)
{
    uint32_t window = lb_hash_index(key >> (LB_OBJMAP_BITS + LB_OBJMAP_GRAIN_BITS), LB_OBJMAP_BITS);
    return (uint32_t)((key >> LB_OBJMAP_GRAIN_BITS) + window) & (LB_OBJMAP_SLOTS - 1);
}

/* The slot holding key; claims an empty one when create is set. */
static slot_t *slot_for(slot_t *t, uintptr_t key, bool create)
{
    uint32_t i = home(key);
    for (int probe = 0; probe < LB_OBJMAP_PROBES; probe++, i = (i + 1) & (LB_OBJMAP_SLOTS - 1)) {
        /* no key on that page: slot i is empty, and a claim writes it
         * unread (a read first would map the zero page, then the claim
         * fault again to replace it) */
        bool unused = !page_used(i);
        if (!create && unused)
            return NULL;
        uintptr_t seen = unused ? 0 : __atomic_load_n(&t[i].key, __ATOMIC_ACQUIRE);
        if (seen == key)
            return &t[i];
        if (seen == 0) {
            if (!create)
                return NULL;
            mark_page(i);
            if (__atomic_compare_exchange_n(&t[i].key, &seen, key, false, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE) ||
                seen == key)
                return &t[i];
        }
    }
    if (create)
        __atomic_fetch_add(&full_misses, 1, __ATOMIC_RELAXED);
    return NULL;
}

/* The probe for a key the calling thread has not used lately, remembered
 * on success (out of line: the hit path stays a leaf). */
LB_NOINLINE static slot_t *slot_probed(uintptr_t key)
{
    slot_t *t = __atomic_load_n(&table, __ATOMIC_ACQUIRE);
    slot_t *s = t ? slot_for(t, key, false) : NULL;
    if (s)
        lb_objmap_recent[lb_objmap_recent_of(key)] = s;
    return s;
}

/* The slot holding key, if there is one (no claim): the calling
 * thread's recent entry, else the probe. */
static inline slot_t *slot_found(uintptr_t key)
{
    slot_t *s = lb_objmap_recent_slot(key);
    return lb_likely(s != NULL) ? s : slot_probed(key);
}

lb_mon_t *lb_objmap_find(const void *addr)
{
    slot_t *s = slot_found((uintptr_t)addr);
    return s ? __atomic_load_n(&s->mon, __ATOMIC_ACQUIRE) : NULL;
}

/* lb_objmap_get's creating path: the slot is missing or holds no lb_mon
 * of this kind. Out of line, so that the look-up that hits saves no
 * registers for it. */
LB_NOINLINE static lb_mon_t *get_slow(const void *addr, lb_obj_kind kind, slot_t *s)
{
    slot_t *t;
    lb_mon_t *mon;
    if (!lb_runtime_monitoring() || !(t = table_get()))
        return NULL;
    if (!s && !(s = slot_for(t, (uintptr_t)addr, true)))
        return NULL;
    lb_mon_t *fresh = lb_mon_alloc(addr, kind);
    if (!fresh)
        return NULL;
    for (;;) {
        mon = __atomic_load_n(&s->mon, __ATOMIC_ACQUIRE);
        if (mon && mon->kind == kind) {
            lb_mon_free(fresh);
            return mon;
        }
        /* Empty, or left over from an object of another kind at this
         * address (memory reused without destroy): replace it. */
        if (__atomic_compare_exchange_n(&s->mon, &mon, fresh, false, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE)) {
            if (mon)
                lb_mon_retire(mon);
            return fresh;
        }
    }
}

lb_mon_t *lb_objmap_get_probed(const void *addr, lb_obj_kind kind)
{
    slot_t *s = slot_found((uintptr_t)addr);
    lb_mon_t *mon = s ? __atomic_load_n(&s->mon, __ATOMIC_ACQUIRE) : NULL;
    if (lb_likely(mon && mon->kind == kind))
        return mon;
    return get_slow(addr, kind, s);
}

/* An rwlock's lb_mon that never saw a wait: nothing in it but its
 * acquisition count (what lb_mon_alloc makes, plus the count; its
 * fields read without meta: a destroy or init has the object to itself). */
static bool rwlock_unwaited(const lb_mon_t *mon)
{
    return mon->kind == LB_OBJ_RWLOCK && !mon->stats && !mon->waiters && !mon->held &&
           !mon->hold_flags && !mon->rw_waiting_readers && mon->clock == 0 &&
           mon->clock_at_acquire == 0 && !mon->last_event_ns;
}

void lb_objmap_retire(const void *addr)
{
    slot_t *s = slot_found((uintptr_t)addr);
    /* nothing to retire: no write (in a fork child, a copy of the page) */
    lb_mon_t *kept = s ? __atomic_load_n(&s->mon, __ATOMIC_ACQUIRE) : NULL;
    if (!kept)
        return;
    /* An rwlock that never saw a wait keeps its lb_mon, its count folded
     * as a retire folds it: the lb_mon is then what a fresh one would be,
     * and neither the slot's page nor the pool is written (OpenSSL
     * destroys hundreds of rwlocks that a fork child inherited). */
    if (rwlock_unwaited(kept)) {
        if (kept->acquisitions)
            lb_mon_fold_live(kept, NULL);
        return;
    }
    lb_mon_t *mon = __atomic_exchange_n(&s->mon, NULL, __ATOMIC_ACQ_REL);
    if (mon)
        lb_mon_retire(mon);
}
