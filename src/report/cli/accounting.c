/*
 * accounting.c - the "accounting:" header line (see accounting.h).
 * Counts come from the loaded profile: metric rows' blamed_count (releases
 * and signals that carried blame) and sites' contended counts (completed
 * waits: contended acquisitions, cond/sem/barrier waits; joins left out,
 * they are not accounted inside a critical section), per process.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "common/kinds.h"
#include "report/cli/accounting.h"
#include "report/cli/util.h"

struct proc_events {
	int64_t blamed, waits;
};

static int32_t process_of(const struct lb_profile *p, int64_t thread_id)
{
	int32_t t = lb_map_get(&p->thread_index, (uint64_t)thread_id);
	return t >= 0 ? p->threads[t].process : -1;
}

/* A count for the header: 12345 -> "12345", 2345678 -> "2.35M". */
static void print_count(FILE *out, double n)
{
	if (n >= 1e6)
		fprintf(out, "%.2fM", n / 1e6);
	else
		fprintf(out, "%.0f", n);
}

void lb_print_accounting(const struct lb_profile *p, FILE *out)
{
	if (p->nprocs <= 0)
		return;
	struct proc_events *ev = calloc((size_t)p->nprocs, sizeof *ev);
	if (!ev)
		return;
	for (int32_t i = 0; i < p->nmrows; i++) {
		int32_t proc = process_of(p, p->mrows[i].thread_id);
		if (proc >= 0)
			ev[proc].blamed += p->mrows[i].blamed_count;
	}
	for (int32_t i = 0; i < p->nsites; i++) {
		int32_t proc = process_of(p, p->sites[i].thread_id);
		if (proc >= 0 && p->sites[i].kind != LB_OBJ_JOIN)
			ev[proc].waits += p->sites[i].contended;
	}
	int32_t busiest = -1;
	double busiest_rate = -1;
	int64_t blamed = 0, waits = 0;
	for (int32_t i = 0; i < p->nprocs; i++) {
		if (!p->procs[i].selected)
			continue;
		blamed += ev[i].blamed;
		waits += ev[i].waits;
		double d = p->procs[i].duration_s;
		double rate = d > 0 ? (double)(ev[i].blamed + ev[i].waits) / d : 0;
		if (rate > busiest_rate) {
			busiest_rate = rate;
			busiest = i;
		}
	}
	free(ev);
	if (busiest < 0 || blamed + waits == 0)
		return;
	fputs("accounting: ", out);
	print_count(out, (double)(blamed + waits));
	fputs(" contended events (", out);
	print_count(out, (double)blamed);
	fputs(" releases and signals that carried blame, ", out);
	print_count(out, (double)waits);
	fputs(" completed waits), ", out);
	print_count(out, busiest_rate);
	fputs(" a second", out);
	if (p->nselected > 1)
		fprintf(out, " in the busiest process (pid %" PRId64 ")", p->procs[busiest].pid);
	fputc('\n', out);
	if (busiest_rate > LB_ACCOUNTING_WARN_RATE)
		fputs("warning:  at this rate lockblame's own accounting (clock reads inside the"
		      " program's critical sections) lengthens them measurably: contention and blame"
		      " are partly lockblame's; compare the run's time with a native run\n", out);
}
