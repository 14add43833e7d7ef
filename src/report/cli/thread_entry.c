/*
 * thread_entry.c - what a thread started by a runtime routine ran. Every
 * std::thread starts in libstdc++ (execute_native_thread_routine), and
 * the start routine of a pool built on a generic trampoline says as
 * little; the program function the thread ran is the outermost frame of
 * the program's own code on its calling contexts, weighted by the
 * thread's work and waiting there. And which thread is a process's
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
		if (t->start_frame >= 0 && lb_frame_is_runtime(p, t->start_frame))
			*lb_map_slot(&index, (uint64_t)t->id, &is_new) = i;
	}
	for (int32_t r = 0; r < p->nmrows; r++) {
		const struct lb_mrow *m = &p->mrows[r];
		int32_t i = lb_map_get(&index, (uint64_t)m->thread_id);
		double w = m->work + m->wait;

		if (i < 0 || w <= 0)
			continue;
		int32_t f = outermost_program_frame(p, m->node);

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
	free(best);
	free(weight);
	free(cell_thread);
	free(cell_frame);
	lb_map_free(&index);
	lb_map_free(&cells);
}
