/*
 * thread_entry.c - what a thread started by a runtime routine ran. Every
 * std::thread starts in libstdc++ (execute_native_thread_routine): the
 * program function the thread ran is the outermost frame of the
 * program's own code on its calling contexts, weighted by the thread's
 * work and waiting there. A pool built on a trampoline of its own
 * (lbzip2's threads all start in one function that calls the task
 * through a pointer) says as little: where threads share a program start
 * routine and ran different functions below it, each is told by the
 * callee of its heaviest contexts. And which thread is a process's
 * initial one, which has no start routine.
 */
#include <stdlib.h>
#include <string.h>

#include "report/cli/views.h"

bool lb_thread_is_initial(const struct lb_profile *p, const struct lb_thread *t)
{
    return t->process >= 0 && t->process < p->nprocs && t->tid == p->procs[t->process].pid;
}

/* The outermost program frame on node's path (or -1), and in *below the
 * program frame just under it (or -1): for a thread a runtime routine
 * started, the function it ran; for one a trampoline of the program
 * started (the outermost frame then; frames of one function differ by
 * line, and in a stripped binary by address), the task it called. */
static int32_t outermost_program_frame(const struct lb_profile *p, int32_t node, int32_t *below)
{
    int32_t outer = -1;

    *below = -1;
    for (int32_t v = node; v >= 0 && v != p->root; v = p->nodes[v].parent)
        if (!lb_frame_is_runtime(p, p->nodes[v].frame)) {
            *below = outer;
            outer = p->nodes[v].frame;
        }
    return outer;
}

/* Per program start routine (a map from its frame to a group): how many
 * threads start there, the callee the first one ran, whether another
 * ran a different one. */
struct start_group {
    int32_t threads, callee;
    bool differ;
};

static struct start_group *group_of(struct lb_map *groups, struct start_group **g, size_t *cap,
                                    int32_t *n, int32_t start)
{
    bool is_new;
    int32_t *slot = lb_map_slot(groups, (uint64_t)(uint32_t)start, &is_new);

    if (is_new) {
        lb_grow((void **)g, cap, (size_t)*n + 1, sizeof **g);
        (*g)[*n] = (struct start_group){ 0, -1, false };
        *slot = (*n)++;
    }
    return &(*g)[*slot];
}

/* The weight (work + wait) of one (thread, frame) pair. */
struct cell {
    int32_t thread, frame;
    double weight;
};

void lb_thread_entries(struct lb_profile *p, int32_t *entry)
{
    struct lb_map cells = { 0 }, groups = { 0 };
    struct cell *cell = NULL;
    struct start_group *g = NULL;
    size_t cap_c = 0, cap_g = 0;
    int32_t ncells = 0, ngroups = 0;
    bool *wanted = calloc((size_t)p->nthreads + 1, sizeof *wanted);
    double *best = calloc((size_t)p->nthreads + 1, sizeof *best);

    for (int32_t i = 0; i < p->nthreads; i++) {
        entry[i] = -1;
        if (p->threads[i].start_frame >= 0)
            group_of(&groups, &g, &cap_g, &ngroups, p->threads[i].start_frame)->threads++;
    }
    for (int32_t i = 0; wanted && i < p->nthreads; i++) {
        const struct lb_thread *t = &p->threads[i];

        wanted[i] = t->start_frame >= 0 && !lb_thread_is_initial(p, t) &&
                    (lb_frame_is_runtime(p, t->start_frame) ||
                     group_of(&groups, &g, &cap_g, &ngroups, t->start_frame)->threads > 1);
    }
    for (int32_t r = 0; wanted && best && r < p->nmrows; r++) {
        const struct lb_mrow *m = &p->mrows[r];
        int32_t i = lb_map_get(&p->thread_index, (uint64_t)m->thread_id);
        double w = m->work + m->wait;

        if (i < 0 || !wanted[i] || w <= 0)
            continue;
        int32_t below, outer = outermost_program_frame(p, m->node, &below);
        int32_t f = lb_frame_is_runtime(p, p->threads[i].start_frame) ? outer : below;

        if (f < 0)
            continue;
        bool is_new;
        int32_t *c = lb_map_slot(&cells, (uint64_t)i << 32 | (uint32_t)f, &is_new);

        if (is_new) {
            lb_grow((void **)&cell, &cap_c, (size_t)ncells + 1, sizeof *cell);
            cell[ncells] = (struct cell){ i, f, 0 };
            *c = ncells++;
        }
        cell[*c].weight += w;
    }
    for (int32_t c = 0; c < ncells; c++) {
        int32_t i = cell[c].thread;

        if (cell[c].weight > best[i]) {
            best[i] = cell[c].weight;
            entry[i] = cell[c].frame;
        }
    }
    /* threads sharing a program start routine keep their callees only
	 * where they differ within the group: else the start routine says it */
    for (int32_t i = 0; i < p->nthreads; i++) {
        int32_t start = p->threads[i].start_frame;

        if (entry[i] < 0 || lb_frame_is_runtime(p, start))
            continue;
        struct start_group *sg = group_of(&groups, &g, &cap_g, &ngroups, start);

        if (sg->callee < 0)
            sg->callee = entry[i];
        else if (sg->callee != entry[i])
            sg->differ = true;
    }
    for (int32_t i = 0; i < p->nthreads; i++) {
        int32_t start = p->threads[i].start_frame;

        if (entry[i] >= 0 && !lb_frame_is_runtime(p, start) &&
            !group_of(&groups, &g, &cap_g, &ngroups, start)->differ)
            entry[i] = -1;
    }
    free(g);
    free(cell);
    free(wanted);
    free(best);
    lb_map_free(&groups);
    lb_map_free(&cells);
}

/* Threads that ran one function are one release site, whatever line of it
 * their heaviest contexts passed through: each entry frame becomes the
 * first entry frame seen of its function (and module). */
void lb_release_entries(struct lb_profile *p, int32_t *entry)
{
    lb_thread_entries(p, entry);
    struct lb_strtab names = { 0 };
    struct lb_map first = { 0 };
    struct lb_buf b = { 0 };

    for (int32_t i = 0; i < p->nthreads; i++) {
        const struct lb_frame *f = entry[i] >= 0 ? &p->frames[entry[i]] : NULL;

        if (!f || !f->function)
            continue;
        bool is_new;

        lb_buf_reset(&b);
        lb_buf_printf(&b, "%d:%s", f->module, f->function);
        int32_t *slot =
            lb_map_slot(&first, (uint64_t)lb_strtab_intern(&names, lb_buf_str(&b)), &is_new);

        if (is_new)
            *slot = entry[i];
        entry[i] = *slot;
    }
    lb_buf_free(&b);
    lb_map_free(&first);
    lb_strtab_free(&names);
}

/* A function's label as a thread's name: a thunk's target (x265's
 * threads start in "non-virtual thunk to x265::Y4MInput::threadMain()"). */
static const char *function_name(struct lb_profile *p, int32_t frame)
{
    static const char *const thunk[] = { "non-virtual thunk to ", "virtual thunk to " };
    const char *label = lb_frame_label(p, frame);

    for (size_t k = 0; k < sizeof thunk / sizeof *thunk; k++)
        if (strncmp(label, thunk[k], strlen(thunk[k])) == 0)
            return label + strlen(thunk[k]);
    return label;
}

void lb_thread_label(struct lb_profile *p, int32_t i, const int32_t *entry, struct lb_buf *out)
{
    const struct lb_thread *t = &p->threads[i];

    if (lb_thread_is_initial(p, t) || t->id == 0) { /* (id 0: the main thread of old profiles) */
        lb_buf_puts(out, "main");
    } else if (entry && entry[i] >= 0) {
        if (!lb_frame_is_runtime(p, t->start_frame))
            lb_buf_printf(out, "%s -> ", function_name(p, t->start_frame));
        /* its file but no line: the line would be that of the
		 * thread's heaviest context, which names no one thing */
        lb_buf_puts(out, function_name(p, entry[i]));
        lb_put_frame_file(out, p, entry[i], false);
    } else if (t->start_frame >= 0) {
        lb_buf_puts(out, function_name(p, t->start_frame));
    } else {
        lb_buf_puts(out, "(unknown)");
    }
}
