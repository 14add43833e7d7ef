/*
 * waiters_hint.c - one line under the release-site table when most of the
 * waiting was done by helper threads with little else to do (an I/O
 * thread of zstd or lbzip2 waiting for the next buffer, redis's bio
 * threads parked for the whole run). Their waits are real and blamed by
 * the same rules, so the top rows are right, but a reader should know
 * they are threads waiting for work, not work waiting on a lock. The
 * initial thread is left out (a main that joins its workers is the
 * program's shape, and structural waits say so already).
 */
#include <stdlib.h>

#include "report/cli/views.h"

/* A helper: a thread (not a process's initial one) busy less than this
 * share of its life. */
#define LB_HELPER_BUSY 0.10
/* The line is printed when helpers did at least this share of the wait. */
#define LB_HELPER_WAIT_SHARE 0.5

bool lb_waiters_hint(struct lb_profile *p, struct lb_buf *b)
{
	struct lb_map index = { 0 };
	double *wait = calloc((size_t)p->nthreads + 1, sizeof *wait);
	int32_t *entry = calloc((size_t)p->nthreads + 1, sizeof *entry);
	double total = 0;

	if (!wait || !entry) {
		free(wait);
		free(entry);
		return false;
	}
	lb_thread_entries(p, entry);
	for (int32_t i = 0; i < p->nthreads; i++) {
		bool is_new;
		*lb_map_slot(&index, (uint64_t)p->threads[i].id, &is_new) = i;
	}
	for (int32_t i = 0; i < p->nmrows; i++) {
		const struct lb_mrow *r = &p->mrows[i];
		int32_t k = lb_map_get(&index, (uint64_t)r->thread_id);

		total += r->wait;
		if (k >= 0)
			wait[k] += r->wait;
	}
	double helpers_wait = 0;
	int32_t helpers = 0, first = -1;

	for (int32_t i = 0; i < p->nthreads; i++) {
		const struct lb_thread *t = &p->threads[i];
		double life = t->end_s - t->start_s;

		if (wait[i] <= 0 || life <= 0 || lb_thread_is_initial(p, t) || t->cpu_s >= LB_HELPER_BUSY * life)
			continue;
		helpers_wait += wait[i];
		helpers++;
		if (first < 0 || wait[i] > wait[first])
			first = i;
	}
	bool hint = helpers > 0 && total > 0 && helpers_wait >= LB_HELPER_WAIT_SHARE * total;

	if (hint) {
		/* named as --by-thread names it: what a std::thread ran, else its start routine */
		int32_t f = entry[first] >= 0 ? entry[first] : p->threads[first].start_frame;

		lb_buf_printf(b, "%.0f%% of the wait is by %d thread(s) busy less than %.0f%% of"
				 " their lives (the most: %s): helpers waiting for work, if that is"
				 " their job; --by-thread", 100.0 * helpers_wait / total, helpers,
			      100.0 * LB_HELPER_BUSY, f >= 0 ? lb_frame_label(p, f) : "(unknown)");
	}
	free(entry);
	free(wait);
	lb_map_free(&index);
	return hint;
}
