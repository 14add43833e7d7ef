#include "blame/sites.h"

#include "util/pages.h"

#define LB_SITE_PROBES 16
#define LB_SITE_PAGE   4096u

_Static_assert(sizeof(lb_site_table_t) <= 32 * LB_SITE_PAGE,
               "used_pages has one bit for each page of the table");

/* The bit of used_pages for slot i's page. */
static uint32_t page_bit(const lb_site_table_t *t, size_t i)
{
    return 1u << (((uintptr_t)&t->slot[i] - (uintptr_t)t) / LB_SITE_PAGE);
}

lb_site_t *lb_site_lookup_slow(lb_site_table_t *t, uintptr_t key)
{
    size_t home = (key ^ (key >> 9)) & (LB_SITE_SLOTS - 1);
    for (size_t i = 0; i < LB_SITE_PROBES; i++) {
        size_t at = (home + i) & (LB_SITE_SLOTS - 1);
        lb_site_t *s = &t->slot[at];
        if (s->key == key)
            return s;
        if (s->key == 0) {
            s->key = key;
            t->used_pages |= page_bit(t, at);
            return s;
        }
    }
    t->overflow++;
    return NULL;
}

lb_site_t *lb_sites_compact(const lb_site_table_t *t, uint32_t *count)
{
    uint32_t used = 0;
    for (size_t i = 0; i < LB_SITE_SLOTS; i++)
        used += (t->used_pages & page_bit(t, i)) && t->slot[i].key != 0;
    *count = 0;
    lb_site_t *kept = used ? lb_arena_alloc(used * sizeof *kept) : NULL;
    if (!kept)
        return NULL;
    for (size_t i = 0; i < LB_SITE_SLOTS; i++) {
        if ((t->used_pages & page_bit(t, i)) && t->slot[i].key)
            kept[(*count)++] = t->slot[i];
    }
    return kept;
}
