/*
 * cut_paths.c - the header's "cut paths:" line (cut_paths.h).
 */
#include "report/cli/cut_paths.h"

#include "report/cli/views.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define CUT_MARKER_PREFIX "[unknown: no unwind info"

static bool frame_is_cut_marker(const struct lb_profile *p, int32_t frame)
{
    const char *f = frame >= 0 ? p->frames[frame].function : NULL;
    return f && strncmp(f, CUT_MARKER_PREFIX, sizeof CUT_MARKER_PREFIX - 1) == 0;
}

void lb_print_cut_paths(const struct lb_profile *p, FILE *out)
{
    bool any = false;
    for (int32_t i = 0; i < p->nframes && !any; i++)
        any = frame_is_cut_marker(p, i);
    if (!any)
        return;
    /* Per node: does its path hold a cut marker (0 not known yet, 1 no,
     * 2 yes)? Found by walking up to a node already known or a marker,
     * and kept for every node passed on the way. */
    uint8_t *cut = calloc((size_t)p->nnodes, 1);
    if (!cut)
        return;
    double work = 0, blame = 0, total_work = 0, total_blame = 0;
    for (int32_t m = 0; m < p->nmrows; m++) {
        const struct lb_mrow *r = &p->mrows[m];
        int32_t n = r->node;
        if (!cut[n]) {
            int32_t up = n;
            while (up >= 0 && !cut[up] && !frame_is_cut_marker(p, p->nodes[up].frame))
                up = p->nodes[up].parent;
            uint8_t v = up < 0 ? 1 : cut[up] ? cut[up] : 2;
            for (int32_t k = n; k != up; k = p->nodes[k].parent)
                cut[k] = v;
            if (up >= 0)
                cut[up] = v;
        }
        double idle = lb_mrow_idleness(r);
        total_work += r->work;
        total_blame += idle;
        if (cut[n] == 2) {
            work += r->work;
            blame += idle;
        }
    }
    free(cut);
    fprintf(out,
            "cut paths: %.3f s of work (%.1f%%) and %.3f s of blame (%.1f%%) have call paths that"
            " end at code without unwind information: their callers are not known"
            " ([unknown: no unwind info in MODULE] frames)\n",
            work, 100 * lb_share(work, total_work), blame, 100 * lb_share(blame, total_blame));
}
