/*
 * accounting.c - the run header's accounting figures (see accounting.h).
 * Counts come from the loaded profile: metric rows' blamed_count (releases
 * and signals that carried blame) and sites' contended counts (completed
 * waits: contended acquisitions, cond/sem/barrier waits; joins left out,
 * they are not accounted inside a critical section), per process. Waits
 * accounted by CPU samples (sync_object.sampled_waits: spin waits measured
 * by them, mutex waits blamed by the holders' samples) are counted apart:
 * nothing of theirs runs inside a critical section. Cond and semaphore
 * waits whose blame was estimated from a random sample of the signal
 * intervals are still timed (counted among the waits) and are named apart
 * too.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "common/kinds.h"
#include "report/cli/accounting.h"

struct proc_events {
    int64_t blamed, waits;
};

bool lb_accounting_of(const struct lb_profile *p, struct lb_accounting *a)
{
    *a = (struct lb_accounting){ .rate = -1, .several = p->nselected > 1 };
    if (p->nprocs <= 0)
        return false;
    struct proc_events *ev = calloc((size_t)p->nprocs, sizeof *ev);
    if (!ev)
        return false;
    for (int32_t i = 0; i < p->nmrows; i++) {
        int32_t proc = lb_thread_process(p, p->mrows[i].thread_id);
        if (proc >= 0)
            ev[proc].blamed += p->mrows[i].blamed_count;
    }
    for (int32_t i = 0; i < p->nsites; i++) {
        int32_t proc = lb_thread_process(p, p->sites[i].thread_id);
        if (proc >= 0 && p->sites[i].kind != LB_OBJ_JOIN)
            ev[proc].waits += p->sites[i].contended;
    }
    for (int32_t i = 0; i < p->nobjs; i++) {
        const struct lb_syncobj *o = &p->objs[i];
        if (o->sampled_waits <= 0)
            continue;
        int32_t proc = o->proc >= 0 ? o->proc : 0;
        bool signalled = lb_obj_kind_is_signalled(o->kind);
        if (!signalled)
            ev[proc].waits -= o->sampled_waits; /* nothing of theirs is timed */
        if (!p->procs[proc].selected)
            continue;
        if (signalled) {
            a->signal_sampled_waits += o->sampled_waits;
            a->signal_sampled_objects++;
        } else {
            bool spin = o->kind == LB_OBJ_SPIN;
            *(spin ? &a->spin_sampled_waits : &a->mutex_sampled_waits) += o->sampled_waits;
            ++*(spin ? &a->spin_sampled_locks : &a->mutex_sampled_locks);
        }
    }
    for (int32_t i = 0; i < p->nprocs; i++) {
        if (!p->procs[i].selected)
            continue;
        a->blamed += ev[i].blamed;
        a->waits += ev[i].waits;
        double d = p->procs[i].duration_s;
        double rate = d > 0 ? (double)(ev[i].blamed + ev[i].waits) / d : 0;
        if (rate > a->rate) {
            a->rate = rate;
            a->busiest_pid = p->procs[i].pid;
        }
    }
    free(ev);
    return a->rate >= 0 && a->blamed + a->waits + a->spin_sampled_waits + a->mutex_sampled_waits +
                                   a->signal_sampled_waits >
                               0;
}

/* A count for the header: 12345 -> "12345", 2345678 -> "2.35M". */
static void count_text(struct lb_buf *b, double n)
{
    if (n >= 1e6)
        lb_buf_printf(b, "%.2fM", n / 1e6);
    else
        lb_buf_printf(b, "%.0f", n);
}

/* "; and N WHAT on K NOUN(s) HOW", if there were any. */
static void sampled_text(struct lb_buf *b, int64_t waits, int64_t objects, const char *what,
                         const char *noun, const char *how)
{
    if (waits <= 0)
        return;
    lb_buf_puts(b, "; and ");
    count_text(b, (double)waits);
    lb_buf_printf(b, " %s on %" PRId64 " %s%s %s", what, objects, noun, objects == 1 ? "" : "s",
                  how);
}

void lb_accounting_text(const struct lb_accounting *a, struct lb_buf *b)
{
    count_text(b, (double)(a->blamed + a->waits));
    lb_buf_puts(b, " contended events (");
    count_text(b, (double)a->blamed);
    lb_buf_puts(b, " releases and signals that carried blame, ");
    count_text(b, (double)a->waits);
    lb_buf_puts(b, " completed waits), ");
    count_text(b, a->rate);
    lb_buf_puts(b, " a second");
    if (a->several)
        lb_buf_printf(b, " in the busiest process (pid %" PRId64 ")", a->busiest_pid);
    sampled_text(b, a->spin_sampled_waits, a->spin_sampled_locks, "spin waits", "lock",
                 "measured by CPU samples, not timed");
    sampled_text(b, a->mutex_sampled_waits, a->mutex_sampled_locks, "mutex waits", "lock",
                 "blamed by CPU samples of their holders");
    sampled_text(b, a->signal_sampled_waits, a->signal_sampled_objects, "cond/sem waits", "object",
                 "whose blame was estimated from sampled signal intervals");
}

const char *lb_accounting_warning(const struct lb_accounting *a)
{
    if (a->rate <= LB_ACCOUNTING_WARN_RATE)
        return NULL;
    return "at this rate lockblame's own accounting (clock reads inside the program's critical"
           " sections) lengthens them measurably: contention and blame are partly lockblame's;"
           " compare the run's time with a native run";
}

void lb_print_accounting(const struct lb_profile *p, FILE *out)
{
    struct lb_accounting a;
    if (!lb_accounting_of(p, &a))
        return;
    struct lb_buf b = { 0 };
    lb_accounting_text(&a, &b);
    fprintf(out, "accounting: %s\n", lb_buf_str(&b));
    lb_buf_free(&b);
    const char *warning = lb_accounting_warning(&a);
    if (warning)
        fprintf(out, "warning:  %s\n", warning);
}
