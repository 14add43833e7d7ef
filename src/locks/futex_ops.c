/* Futex words (futex_ops.h).
 *
 * A wait: FUTEX_WAIT or FUTEX_WAIT_BITSET, private or shared, on either
 * clock. It begins at the call, before the kernel compares the word, and
 * ends at the return, whatever the reason: woken, the word had already
 * changed (EAGAIN, a wait of a few hundred nanoseconds), a signal (EINTR)
 * or its timeout (ETIMEDOUT: the wait ran out of time, blame.h's
 * timed_out, and its time stays unattributed: no wake ended it). The runtimes' spin before the
 * system call (pause, sched_yield) is not part of it: it is CPU time,
 * work where it is sampled.
 *
 * A wake: FUTEX_WAKE or FUTEX_WAKE_BITSET. It is accounted only on a word
 * that has an lb_mon, one that a monitored thread has waited on: a
 * runtime wakes on every release of some objects (GLib's g_cond_signal)
 * and the object map must not fill with words nobody waited on. So the
 * release count of a wake site counts the wakes on words waited on before.
 *
 * Everything else (requeue, priority inheritance, FUTEX_WAKE_OP, waits
 * on several words) is forwarded untouched. A wake from another process
 * (a word in shared memory) is not seen: the waiting it ends stays with
 * the next wake in this process on that address, or unattributed.
 *
 * Invariants: no lock of our own is taken across the real call; a wait
 * is begun and ended on the calling thread around it (blame.h); the
 * accounting of a wake runs before the real wake, nothing after it (a
 * woken waiter cannot race it). glibc's syscall() is no cancellation
 * point, so no cleanup handler is needed around the wait. */
#include "locks/futex_ops.h"

#include <errno.h>
#include <linux/futex.h>
#include <stdbool.h>
#include <sys/syscall.h>

#include "blame/blame.h"
#include "core/real.h"
#include "core/thread.h"
#include "locks/cond_ops.h"
#include "locks/objmap.h"
#include "sampler/foreign.h"
#include "util/raw_syscall.h"

long lb_syscall_forward(long number, const long a[6])
{
    if (lb_unlikely(lb_real.syscall == NULL) && lb_real_resolve() != 0)
        return lb_raw_syscall(number, a[0], a[1], a[2], a[3], a[4], a[5]);
    long (*real)(long, ...) = lb_real.syscall;
    if (lb_unlikely(real == NULL)) /* (dlsym found none: a static libc cannot be preloaded) */
        return lb_raw_syscall(number, a[0], a[1], a[2], a[3], a[4], a[5]);
    return real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* A wait on the word at a[0]; op's timeout argument a[3]. */
static long futex_wait(lb_thread_t *self, const long a[6])
{
    lb_mon_t *mon = lb_objmap_get((const void *)a[0], LB_OBJ_FUTEX);
    if (!mon)
        return lb_syscall_forward(SYS_futex, a);
    lb_wait_t wait;
    lb_wait_begin(self, mon, LB_OBJ_FUTEX, &wait);
    long rc = lb_syscall_forward(SYS_futex, a);
    int err = errno;
    wait.timed_out = rc == -1 && err == ETIMEDOUT;
    wait.had_deadline = a[3] != 0;
    lb_wait_end(self, &wait, false);
    errno = err;
    return rc;
}

/* A wake on the word at a[0], called from site. */
static long futex_wake(lb_thread_t *self, const long a[6], uintptr_t site)
{
    const void *word = (const void *)a[0];
    lb_mon_t *mon = lb_objmap_find(word);
    if (mon && mon->kind == LB_OBJ_FUTEX)
        lb_signal_account(self, mon, word, LB_OBJ_FUTEX, site); /* before: nothing after */
    return lb_syscall_forward(SYS_futex, a);
}

long lb_futex_call(const long a[6], uintptr_t site)
{
    lb_thread_t *self = lb_thread_current();
    if (!self || self->busy) /* before our start, or our own code: forward */
        return lb_syscall_forward(SYS_futex, a);
    switch ((int)a[1] & FUTEX_CMD_MASK) {
    case FUTEX_WAIT:
    case FUTEX_WAIT_BITSET:
        return futex_wait(self, a);
    case FUTEX_WAKE:
    case FUTEX_WAKE_BITSET:
        return futex_wake(self, a, site);
    default:
        return lb_syscall_forward(SYS_futex, a);
    }
}
