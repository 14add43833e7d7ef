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

#include "report/cli/views.h"

bool lb_thread_is_initial(const struct lb_profile *p, const struct lb_thread *t)
{
	return t->process >= 0 && t->process < p->nprocs && t->tid == p->procs[t->process].pid;
}

/* The outermost program frame on node's path, or -1. */
static int32_t outermost_program_frame(const struct lb_profile *p, int32_t node)
{
	int32_t found = -1;

	for (int32_t v = node; v >= 0 && v != p->root; v = p->nodes[v].parent)
		if (!lb_frame_is_runtime(p, p->nodes[v].frame))
			found = p->nodes[v].frame;
	return found;
}

/* The program frame just below the outermost one on node's path (the
 * outermost is the start routine's own; frames of one function differ by
 * line, and in a stripped binary by address), or -1. */
static int32_t callee_of_start(const struct lb_profile *p, int32_t node)
{
	int32_t outer = -1, below = -1;

	for (int32_t v = node; v >= 0 && v != p->root; v = p->nodes[v].parent)
		if (!lb_frame_is_runtime(p, p->nodes[v].frame)) {
			below = outer;
			outer = p->nodes[v].frame;
		}
	return below;
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

void lb_thread_entries(struct lb_profile *p, int32_t *entry)
{
	struct lb_map index = { 0 }, cells = { 0 };
	double *weight = NULL;
	int32_t *cell_thread = NULL, *cell_frame = NULL, ncells = 0;
	size_t cap_w = 0, cap_t = 0, cap_f = 0;

	struct lb_map groups = { 0 };
	struct start_group *g = NULL;
	size_t cap_g = 0;
	int32_t ngroups = 0;

	for (int32_t i = 0; i < p->nthreads; i++)
		if (p->threads[i].start_frame >= 0)
			group_of(&groups, &g, &cap_g, &ngroups, p->threads[i].start_frame)->threads++;
	for (int32_t i = 0; i < p->nthreads; i++) {
		const struct lb_thread *t = &p->threads[i];
		bool is_new;

		entry[i] = -1;
		if (t->start_frame >= 0 && !lb_thread_is_initial(p, t) &&
		    (lb_frame_is_runtime(p, t->start_frame) ||
		     group_of(&groups, &g, &cap_g, &ngroups, t->start_frame)->threads > 1))
			*lb_map_slot(&index, (uint64_t)t->id, &is_new) = i;
	}
	for (int32_t r = 0; r < p->nmrows; r++) {
		const struct lb_mrow *m = &p->mrows[r];
		int32_t i = lb_map_get(&index, (uint64_t)m->thread_id);
		double w = m->work + m->wait;

		if (i < 0 || w <= 0)
			continue;
		int32_t start = p->threads[i].start_frame;
		int32_t f = lb_frame_is_runtime(p, start) ? outermost_program_frame(p, m->node)
							   : callee_of_start(p, m->node);

		if (f < 0)
			continue;
		bool is_new;
		int32_t *c = lb_map_slot(&cells, (uint64_t)i << 32 | (uint32_t)f, &is_new);

		if (is_new) {
			lb_grow((void **)&weight, &cap_w, (size_t)ncells + 1, sizeof *weight);
			lb_grow((void **)&cell_thread, &cap_t, (size_t)ncells + 1, sizeof *cell_thread);
			lb_grow((void **)&cell_frame, &cap_f, (size_t)ncells + 1, sizeof *cell_frame);
			weight[ncells] = 0;
			cell_thread[ncells] = i;
			cell_frame[ncells] = f;
			*c = ncells++;
		}
		weight[*c] += w;
	}
	double *best = calloc((size_t)p->nthreads + 1, sizeof *best);

	for (int32_t c = 0; best && c < ncells; c++) {
		int32_t i = cell_thread[c];

		if (weight[c] > best[i]) {
			best[i] = weight[c];
			entry[i] = cell_frame[c];
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
	lb_map_free(&groups);
	free(best);
	free(weight);
	free(cell_thread);
	free(cell_frame);
	lb_map_free(&index);
	lb_map_free(&cells);
}

void lb_thread_label(struct lb_profile *p, int32_t i, const int32_t *entry, struct lb_buf *out)
{
	const struct lb_thread *t = &p->threads[i];

	if (lb_thread_is_initial(p, t) || t->id == 0) /* (id 0: the main thread of old profiles) */
		lb_buf_puts(out, "main");
	else if (entry && entry[i] >= 0 && lb_frame_is_runtime(p, t->start_frame))
		lb_buf_puts(out, lb_frame_desc(p, entry[i]));
	else if (entry && entry[i] >= 0)
		lb_buf_printf(out, "%s -> %s", lb_frame_label(p, t->start_frame),
			      lb_frame_desc(p, entry[i]));
	else if (t->start_frame >= 0)
		lb_buf_puts(out, lb_frame_label(p, t->start_frame));
	else
		lb_buf_puts(out, "(unknown)");
}
