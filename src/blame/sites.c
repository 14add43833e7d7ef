#include "blame/sites.h"

#include "util/pages.h"

#define LB_SITE_PROBES 16

lb_site_t *lb_site_lookup_slow(lb_site_table_t *t, uintptr_t key)
{
    size_t home = (key ^ (key >> 9)) & (LB_SITE_SLOTS - 1);
    for (size_t i = 0; i < LB_SITE_PROBES; i++) {
        lb_site_t *s = &t->slot[(home + i) & (LB_SITE_SLOTS - 1)];
        if (s->key == key)
            return s;
        if (s->key == 0) {
            s->key = key;
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
        used += t->slot[i].key != 0;
    *count = 0;
    lb_site_t *kept = used ? lb_arena_alloc(used * sizeof *kept) : NULL;
    if (!kept)
        return NULL;
    for (size_t i = 0; i < LB_SITE_SLOTS; i++) {
        if (t->slot[i].key)
            kept[(*count)++] = t->slot[i];
    }
    return kept;
}
