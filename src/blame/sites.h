/* Exact per-call-site operation counts, per thread.
 *
 * Invariants: a table is written only by its owning thread and read by the
 * final write after that thread stopped or sampling was quiesced. The fast
 * path is one probe into a direct-mapped slot; a miss falls to a short
 * linear probe, and a full table counts into the thread's `site_overflow`
 * (never silently dropped). The table is carved from the thread's tables
 * at thread start (core/thread_tables.h) and holds slots only; which of its pages a claim wrote is kept in the thread
 * record (`site_pages`, each page a claimed slot lies on, the one a
 * slot crosses into included), memory the thread has written anyway. A
 * page without its bit holds only free slots and is never read: not when the
 * thread exits and lb_sites_compact keeps the used slots (in arena
 * memory), not by a fork child's reset, not by the final write. On a
 * fresh mapping, or one a fork child inherits untouched, each such read
 * would be a page fault (on the VM measured it maps a page of its own). */
#ifndef LB_SITES_H
#define LB_SITES_H
#include <stdbool.h>
#include <stdint.h>

#include "core/thread.h"
#include "sampler/metrics.h"
#include "util/common.h"

/* Two regions: LB_SITE_FRONT slots, where a key is claimed while one of
 * them is free (all probed from the key's home there), after
 * LB_SITE_BACK slots, where the rest go (LB_SITE_PROBES from their home).
 * A thread's few sites lie in the front, on one page (the page it shares
 * with its first contexts and nodes: core/thread_tables.h). */
#define LB_SITE_BACK  512u /* power of two */
#define LB_SITE_FRONT 16u  /* power of two */
#define LB_SITE_SLOTS (LB_SITE_BACK + LB_SITE_FRONT)
#define LB_SITE_PAGE  4096u /* tables are page-aligned; site_pages has a bit a page */

/* A key's hash: its home slots are hash & (LB_SITE_BACK - 1) in the back
 * and LB_SITE_BACK + (hash & (LB_SITE_FRONT - 1)) in the front. */
static inline uintptr_t lb_site_hash(uintptr_t key)
{
    return key ^ (key >> 9);
}

typedef struct lb_site {
    uintptr_t key; /* call-site return address, kind + 1 in the top byte (lb_site_key); 0 = free */
    uint64_t releases;     /* unlock / signal / broadcast / post calls at this site */
    uint32_t acquisitions; /* completed acquisitions/waits made at this site (slow path only) */
    uint32_t contended;    /* of those, how many had to wait */
} lb_site_t;

typedef struct lb_site_table {
    lb_site_t slot[LB_SITE_SLOTS];
} lb_site_table_t;

_Static_assert(sizeof(lb_site_table_t) <= 32 * LB_SITE_PAGE,
               "site_pages has one bit for each page of the table");

/* Return addresses are never aligned to 8, so keep the kind in the high
 * byte instead: user-space addresses use at most 47 bits. */
static inline uintptr_t lb_site_key(uintptr_t ra, lb_obj_kind kind)
{
    return ra | ((uintptr_t)(kind + 1) << 56);
}
static inline uintptr_t lb_site_ra(uintptr_t key)
{
    return key & ((1ull << 56) - 1);
}
static inline lb_obj_kind lb_site_kind(uintptr_t key)
{
    return (lb_obj_kind)((key >> 56) - 1);
}

/* The bit of a thread's site_pages for the page of slot i (where its
 * key lies). */
static inline uint32_t lb_site_page_bit(uint32_t i)
{
    return 1u << (i * sizeof(lb_site_t) / LB_SITE_PAGE);
}

/* The bits of every page slot i lies on: a slot (24 bytes) may cross into
 * the next page, which a claim then writes too. */
static inline uint32_t lb_site_page_bits(uint32_t i)
{
    return lb_site_page_bit(i) | 1u << (((i + 1) * sizeof(lb_site_t) - 1) / LB_SITE_PAGE);
}

/* Does slot i of t's table hold a site? Reads the slot only when its
 * page is one a claim wrote. */
static inline bool lb_site_in_use(const lb_thread_t *t, uint32_t i)
{
    return (t->site_pages & lb_site_page_bit(i)) && t->sites->slot[i].key != 0;
}

/* t's used slots (t->sites non-NULL), copied into right-sized arena
 * memory; *count gets how many. Returns NULL (count 0) when none are used
 * or memory is short. */
lb_site_t *lb_sites_compact(const lb_thread_t *t, uint32_t *count);

/* Find or claim the slot for key in t's table (t->sites non-NULL); NULL
 * when the table is full (counted in t->site_overflow). */
lb_site_t *lb_site_lookup_slow(lb_thread_t *t, uintptr_t key);

/* The pages of the back's slots in site_pages. */
#define LB_SITE_BACK_PAGES (lb_site_page_bit(LB_SITE_BACK - 1) * 2 - 1)

/* The key's front home slot if it holds the key, else its back home slot
 * if it does, read only when a claim wrote the back; else NULL (no
 * probing). */
static inline lb_site_t *lb_site_probe(const lb_thread_t *t, uintptr_t key)
{
    uintptr_t h = lb_site_hash(key);
    lb_site_t *s = &t->sites->slot[LB_SITE_BACK + (h & (LB_SITE_FRONT - 1))];
    if (lb_likely(s->key == key))
        return s;
    if (!(t->site_pages & LB_SITE_BACK_PAGES))
        return NULL;
    s = &t->sites->slot[h & (LB_SITE_BACK - 1)];
    return s->key == key ? s : NULL;
}

/* lb_site_probe through a one-entry cache, *last_key -> *last, that the
 * caller keeps per thread: a run of releases from one call site (a loop)
 * compares one word instead of hashing. A slot never moves while its
 * table lives, so the cached slot stays right. The cache starts empty
 * (key 0, which no site's key is) and is filled with a slot, never NULL. */
static inline lb_site_t *lb_site_probe_last(const lb_thread_t *t, uintptr_t key,
                                            uintptr_t *last_key, lb_site_t **last)
{
    if (lb_likely(*last_key == key)) {
        lb_site_t *s = *last;
        if (s == NULL)
            __builtin_unreachable();
        return s;
    }
    lb_site_t *s = lb_site_probe(t, key);
    if (lb_likely(s != NULL)) {
        *last_key = key;
        *last = s;
    }
    return s;
}

/* lb_site_probe_last, else the slow look-up (a key away from its home
 * slots: another site's key there), whose slot fills the cache as well,
 * so that a loop's next call compares one word instead of probing again;
 * NULL when the table is full. */
lb_site_t *lb_site_lookup_last_slow(lb_thread_t *t, uintptr_t key, uintptr_t *last_key,
                                    lb_site_t **last);
static inline lb_site_t *lb_site_lookup_last(lb_thread_t *t, uintptr_t key, uintptr_t *last_key,
                                             lb_site_t **last)
{
    lb_site_t *s = lb_site_probe_last(t, key, last_key, last);
    return lb_likely(s != NULL) ? s : lb_site_lookup_last_slow(t, key, last_key, last);
}

static inline lb_site_t *lb_site_lookup(lb_thread_t *t, uintptr_t key)
{
    lb_site_t *s = lb_site_probe(t, key);
    return lb_likely(s != NULL) ? s : lb_site_lookup_slow(t, key);
}

static inline void lb_site_count_release(lb_thread_t *t, uintptr_t ra, lb_obj_kind kind)
{
    lb_site_t *s = lb_site_lookup(t, lb_site_key(ra, kind));
    if (lb_likely(s != NULL))
        s->releases++;
}
#endif
