/* Unsampled CPU time (docs/DESIGN.md "Metrics": work). A thread that is not
 * sampled for a while (it blocks the sampling signal, or no event could
 * be opened for it) still does work: the CPU time of those intervals is
 * measured with the thread's CPU clock and credited, as work samples, to
 * a node of its own below the thread's start routine:
 *
 *     start_routine -> lockblame_unsampled_cpu
 *
 * so every report shows it, marked, where the thread's work began.
 *
 * Invariants:
 *  - Intervals open and close on the thread itself (mask wrappers, start,
 *    detach). The credit node is inserted by the thread itself (only it
 *    may write its CCT while it runs): when its first interval opens, or
 *    in the handler at its first sample, so that a residue found at the
 *    final write can be credited even while the thread still runs;
 *    afterwards crediting only adds to that node's counter.
 *  - The final credit happens once, claimed by exchanging `credited`:
 *    by the thread at detach, or by the finishing thread in quiesce for a
 *    thread still alive then (its CPU clock read through its tid). */
#include <errno.h>
#include <time.h>

#include "sampler/backend.h"
#include "sampler/cct.h"
#include "sampler/unsampled.h"
#include "util/clock.h"

/* The marker frame. Never called: only its address is stored, and
 * symbolization names it. noinline + used keep it a function of its own. */
__attribute__((noinline, used)) void lockblame_unsampled_cpu(void)
{
    __asm__ volatile("");
}

/* Linux's CPU clock of thread tid (CPUCLOCK_SCHED | per-thread). */
uint64_t lb_unsampled_cpu_of(pid_t tid)
{
    clockid_t clock = (clockid_t)((~(unsigned)tid << 3) | 6);
    struct timespec ts;
    if (clock_gettime(clock, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t lb_unsampled_cpu_used(const lb_thread_t *t)
{
    uint64_t clock = lb_unsampled_cpu_of(lb_thread_os_tid(t));
    return clock > t->cpu_base_ns ? clock - t->cpu_base_ns : 0;
}

void lb_unsampled_prepare(lb_thread_t *self)
{
    if (self->sampler->unsampled_node || !self->cct)
        return;
    uintptr_t pcs[2] = { (uintptr_t)lockblame_unsampled_cpu, self->start_routine };
    lb_enter(self);
    lb_cct_node_t *node = lb_cct_insert(self->cct, pcs, self->start_routine ? 2 : 1);
    self->sampler->unsampled_node = lb_cct_id(self->cct, node);
    lb_leave(self);
}

void lb_unsampled_begin(lb_thread_t *self, lb_unsampled_reason why)
{
    if (self->sampler->unsampled)
        return;
    lb_unsampled_prepare(self);
    self->sampler->unsampled_since = lb_thread_cpu_ns();
    self->sampler->unsampled_why = (uint8_t)why;
    self->sampler->unsampled_seen = true;
    self->sampler->unsampled = true;
}

void lb_unsampled_end(lb_thread_t *self)
{
    if (!self->sampler->unsampled)
        return;
    uint64_t now = lb_thread_cpu_ns();
    if (now > self->sampler->unsampled_since)
        self->sampler->unsampled_ns += now - self->sampler->unsampled_since;
    self->sampler->unsampled = false;
}

void lb_unsampled_add(lb_thread_t *self, uint64_t ns)
{
    self->sampler->unsampled_ns += ns;
    self->sampler->unsampled_seen = true;
}

uint64_t lb_unsampled_credit(lb_thread_t *t, uint64_t cpu_now, bool may_insert)
{
    if (__atomic_exchange_n(&t->sampler->credited, 1, __ATOMIC_ACQ_REL))
        return 0;
    uint64_t ns = t->sampler->unsampled_ns;
    if (t->sampler->unsampled && cpu_now > t->sampler->unsampled_since)
        ns += cpu_now - t->sampler->unsampled_since;
    t->sampler->unsampled = false;
    double per = lb_sampler_ns_per_sample();
    if (per <= 0) {
        t->sampler->unsampled_ns = ns;
        return 0;
    }
    /* The residue: CPU time that no sample accounts for although the
     * thread was being sampled, e.g. a thread that runs in bursts between
     * scheduler ticks, whose CPU-time timer is checked only on a tick it
     * is running at. Only for time events, whose samples are exact periods. */
    if (lb_sampler_period_is_time()) {
        double seen = (double)(t->sampler->samples + t->sampler->dropped) * per + (double)ns;
        double residue = (double)cpu_now - (double)t->cpu_base_ns - seen;
        if (residue > per / 2) { /* at least one sample's worth */
            t->sampler->residue_ns = (uint64_t)residue;
            ns += (uint64_t)residue;
        }
    }
    t->sampler->unsampled_ns = ns; /* the total, for the summary */
    if (ns == 0)
        return 0;
    if (may_insert)
        lb_unsampled_prepare(t);
    lb_cct_node_t *node = t->cct && t->sampler->unsampled_node
                              ? lb_cct_node(t->cct, t->sampler->unsampled_node)
                              : NULL;
    if (!node)
        return 0;
    node->m.work_samples += (uint64_t)((double)ns / per + 0.5);
    return ns;
}
