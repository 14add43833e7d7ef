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

/* Threads sharing a program start routine: keep their callees only where
 * they differ within the group (else the start routine says it all). */
static void keep_differing_callees(const struct lb_profile *p, int32_t *entry)
{
	for (int32_t i = 0; i < p->nthreads; i++) {
		int32_t start = p->threads[i].start_frame;
		bool differ = false;

		if (entry[i] < 0 || lb_frame_is_runtime(p, start))
			continue;
		for (int32_t j = 0; j < p->nthreads && !differ; j++)
			differ = j != i && p->threads[j].start_frame == start && entry[j] >= 0 &&
				 entry[j] != entry[i];
		if (!differ)
			entry[i] = -2; /* the same callee as its group: no name of its own */
	}
	for (int32_t i = 0; i < p->nthreads; i++)
		if (entry[i] == -2)
			entry[i] = -1;
}

/* Does thread i's start routine say too little (see the header)? */
static int32_t start_shared(const struct lb_profile *p, int32_t i)
{
	int32_t start = p->threads[i].start_frame, n = 0;

	for (int32_t j = 0; j < p->nthreads; j++)
		n += p->threads[j].start_frame == start;
	return n;
}

void lb_thread_entries(struct lb_profile *p, int32_t *entry)
{
	struct lb_map index = { 0 }, cells = { 0 };
	double *weight = NULL;
	int32_t *cell_thread = NULL, *cell_frame = NULL, ncells = 0;
	size_t cap_w = 0, cap_t = 0, cap_f = 0;

	for (int32_t i = 0; i < p->nthreads; i++) {
		const struct lb_thread *t = &p->threads[i];
		bool is_new;

		entry[i] = -1;
		if (t->start_frame >= 0 && !lb_thread_is_initial(p, t) &&
		    (lb_frame_is_runtime(p, t->start_frame) || start_shared(p, i) > 1))
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
	keep_differing_callees(p, entry);
	free(best);
	free(weight);
	free(cell_thread);
	free(cell_frame);
	lb_map_free(&index);
	lb_map_free(&cells);
}
