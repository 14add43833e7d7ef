#include "blame/sites.h"

#include "util/pages.h"

#define LB_SITE_PROBES 16

lb_site_t *lb_site_lookup_slow(lb_thread_t *t, uintptr_t key)
{
    size_t home = (key ^ (key >> 9)) & (LB_SITE_SLOTS - 1);
    for (size_t i = 0; i < LB_SITE_PROBES; i++) {
        size_t at = (home + i) & (LB_SITE_SLOTS - 1);
        lb_site_t *s = &t->sites->slot[at];
        if (s->key == key)
            return s;
        if (s->key == 0) {
            s->key = key;
            t->site_pages |= lb_site_page_bit((uint32_t)at);
            return s;
        }
    }
    t->site_overflow++;
    return NULL;
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
