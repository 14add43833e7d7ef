#include "blame/sites.h"

#include "util/pages.h"

#define LB_SITE_PROBES 16

/* Slot at of t's table if it holds key or is free (then claimed for
 * key), else NULL. Slots are never freed: a probe that meets a free slot
 * has seen every slot before it where the key could be. */
static inline lb_site_t *claim(lb_thread_t *t, size_t at, uintptr_t key)
{
    lb_site_t *s = &t->sites->slot[at];
    if (s->key == key)
        return s;
    if (s->key != 0)
        return NULL;
    s->key = key;
    /* every page it lies on: they are the ones zeroed for the next owner */
    t->site_pages |= lb_site_page_bits((uint32_t)at);
    return s;
}

/* The front first, all of it from the key's home there: a key goes to
 * the back only once the front is full. */
lb_site_t *lb_site_lookup_slow(lb_thread_t *t, uintptr_t key)
{
    uintptr_t h = lb_site_hash(key);
    for (size_t i = 0; i < LB_SITE_FRONT; i++) {
        lb_site_t *s = claim(t, LB_SITE_BACK + ((h + i) & (LB_SITE_FRONT - 1)), key);
        if (s)
            return s;
    }
    for (size_t i = 0; i < LB_SITE_PROBES; i++) {
        lb_site_t *s = claim(t, (h + i) & (LB_SITE_BACK - 1), key);
        if (s)
            return s;
    }
    t->site_overflow++;
    return NULL;
}

lb_site_t *lb_site_lookup_last_slow(lb_thread_t *t, uintptr_t key, uintptr_t *last_key,
                                    lb_site_t **last)
{
    lb_site_t *s = lb_site_lookup_slow(t, key);
    if (s) {
        *last_key = key;
        *last = s;
    }
    return s;
}

lb_site_t *lb_sites_compact(const lb_thread_t *t, uint32_t *count)
{
    uint32_t used = 0;
    for (uint32_t i = 0; i < LB_SITE_SLOTS; i++)
        used += lb_site_in_use(t, i);
    *count = 0;
    lb_site_t *kept = used ? lb_arena_alloc(used * sizeof *kept) : NULL;
    if (!kept)
        return NULL;
    for (uint32_t i = 0; i < LB_SITE_SLOTS; i++) {
        if (lb_site_in_use(t, i))
            kept[(*count)++] = t->sites->slot[i];
    }
    return kept;
}
