/*
 * site_frame.c - which frame of a path is the release site (docs/DESIGN.md
 * rule 5): the innermost frame of the program's own code. Inline frames
 * from system headers (gthr-default.h, std::lock_guard, std::mutex) and
 * frames in the C/C++ runtime libraries are not the site; they stay in
 * the call path, below it.
 */
#include <string.h>

#include "common/runtime_frames.h"
#include "report/cli/profile.h"

bool lb_frame_is_runtime(const struct lb_profile *p, int32_t frame)
{
    if (frame < 0)
        return false;
    if (p->frame_runtime) /* (string tests, once per frame: lb_profile_runtime_frames) */
        return p->frame_runtime[frame];
    const struct lb_frame *f = &p->frames[frame];

    return lb_runtime_frame(f->function, f->file, lb_frame_module(p, frame));
}

/* The writer stores the source frames of one address with consecutive
 * ids, outermost (the real function) first. */
int32_t lb_frame_program(const struct lb_profile *p, int32_t frame)
{
    int32_t f = frame;

    while (f > 0 && lb_frame_is_runtime(p, f)) {
        const struct lb_frame *a = &p->frames[f], *b = &p->frames[f - 1];

        if (b->id != a->id - 1 || b->module != a->module || b->offset != a->offset)
            return frame;
        f--;
    }
    return lb_frame_is_runtime(p, f) ? frame : f;
}

int32_t lb_site_node(const struct lb_profile *p, int32_t node)
{
    for (int32_t v = node; v >= 0 && v != p->root; v = p->nodes[v].parent)
        if (!lb_frame_is_runtime(p, p->nodes[v].frame))
            return v;
    return node;
}

int32_t lb_release_frame(struct lb_profile *p, int32_t node, int64_t thread_id,
                         const int32_t *entry)
{
    int32_t f = p->nodes[lb_site_node(p, node)].frame;

    if (!entry || !lb_frame_is_runtime(p, f))
        return f;
    int32_t t = lb_map_get(&p->thread_index, (uint64_t)thread_id);

    return t >= 0 && entry[t] >= 0 ? entry[t] : f;
}

void lb_profile_runtime_frames(struct lb_profile *p)
{
    uint8_t *is = lb_xmalloc((size_t)p->nframes + 1);

    for (int32_t f = 0; f < p->nframes; f++)
        is[f] = lb_frame_is_runtime(p, f);
    p->frame_runtime = is;
}
