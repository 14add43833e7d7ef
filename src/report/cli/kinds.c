/*
 * kinds.c - object kinds in reports: the `--kind KINDS` filter, which
 * every view honours because it is applied to the loaded profile, and the
 * structural part of idleness (docs/DESIGN.md rule 6): all blame on joins, and
 * the share of a release site's blame that ended waits parked until
 * shutdown (table structural_wait).
 */
#include <stdlib.h>
#include <string.h>

#include "report/cli/profile.h"

unsigned lb_kinds_parse(const char *list)
{
    unsigned mask = 0;
    char *copy = lb_xstrdup(list), *save = NULL;

    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int k = lb_obj_kind_parse(tok);

        if (k < 0) {
            mask = 0;
            break;
        }
        mask |= 1u << k;
    }
    free(copy);
    return mask;
}

static bool kept(unsigned mask, int kind)
{
    return kind >= 0 && kind < LB_OBJ_KINDS && (mask & (1u << kind));
}

void lb_profile_keep_kinds(struct lb_profile *p, unsigned mask)
{
    for (int32_t i = 0; i < p->nmrows; i++) {
        struct lb_mrow *r = &p->mrows[i];
        bool had = false, has = false;

        for (int k = 0; k < LB_OBJ_KINDS; k++) {
            had |= r->idle[k] > 0;
            if (!kept(mask, k))
                r->idle[k] = 0;
            has |= r->idle[k] > 0;
        }
        if (had && !has)
            r->blamed_count = 0;
    }
    int32_t *remap = lb_xmalloc(((size_t)p->nobjs + 1) * sizeof *remap), n = 0;

    for (int32_t i = 0; i < p->nobjs; i++) {
        remap[i] = kept(mask, p->objs[i].kind) ? n : -1;
        if (remap[i] >= 0)
            p->objs[n++] = p->objs[i];
    }
    p->nobjs = n;
    n = 0;
    for (int32_t i = 0; i < p->noblame; i++) {
        struct lb_objblame b = p->oblame[i];

        b.object = remap[b.object];
        if (b.object >= 0)
            p->oblame[n++] = b;
    }
    p->noblame = n;
    n = 0;
    for (int32_t i = 0; i < p->nstructural; i++) {
        struct lb_structural s = p->structural[i];

        s.object = s.object >= 0 ? remap[s.object] : -1;
        if (kept(mask, s.kind))
            p->structural[n++] = s;
    }
    p->nstructural = n;
    n = 0;
    for (int32_t i = 0; i < p->nsites; i++)
        if (kept(mask, p->sites[i].kind))
            p->sites[n++] = p->sites[i];
    p->nsites = n;
    free(remap);
    lb_profile_totals(p);
}

void lb_node_structural(const struct lb_profile *p, double *out)
{
    memset(out, 0, (size_t)p->nnodes * LB_OBJ_KINDS * sizeof *out);
    for (int32_t i = 0; i < p->nmrows; i++)
        out[(size_t)p->mrows[i].node * LB_OBJ_KINDS + LB_OBJ_JOIN] += p->mrows[i].idle[LB_OBJ_JOIN];
    for (int32_t i = 0; i < p->nstructural; i++) {
        const struct lb_structural *s = &p->structural[i];

        if (s->node >= 0 && !s->open)
            out[(size_t)s->node * LB_OBJ_KINDS + s->kind] += s->blame_s;
    }
}

void lb_node_structural_releases(const struct lb_profile *p, int64_t *out)
{
    struct lb_map seen = { 0 }; /* (node, object) pairs counted */

    memset(out, 0, (size_t)p->nnodes * LB_OBJ_KINDS * sizeof *out);
    for (int32_t i = 0; i < p->nstructural; i++) {
        const struct lb_structural *s = &p->structural[i];
        bool is_new;

        if (s->node < 0 || s->open || s->blame_s <= 0)
            continue;
        /* the parked waits one signal/post ended share it: the object's
         * last one at that node (docs/SCHEMA.md, structural_wait) */
        lb_map_slot(&seen, (uint64_t)s->node << 32 | (uint32_t)s->object, &is_new);
        if (is_new)
            out[(size_t)s->node * LB_OBJ_KINDS + s->kind]++;
    }
    lb_map_free(&seen);
}
