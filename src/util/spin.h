/* lb_spin: lockblame's own tiny lock for its internal state.
 *
 * Invariants: it never calls into pthread (so it can never recurse into our
 * own wrappers); critical sections under it are a few dozen instructions
 * with no allocation and no system call. A waiter spins briefly, then
 * yields the CPU between attempts: with more runnable threads than CPUs a
 * descheduled holder would otherwise be waited for by spinning threads for
 * whole time slices. It is not async-signal-safe: the signal handler never
 * takes one. */
#ifndef LB_SPIN_H
#define LB_SPIN_H
#include <sched.h>
#include <stdint.h>

typedef struct { uint32_t locked; } lb_spin_t;
#define LB_SPIN_INIT { 0 }

#define LB_SPIN_BEFORE_YIELD 128

static inline void lb_spin_lock(lb_spin_t *s)
{
    unsigned spins = 0;
    for (;;) {
        if (!__atomic_exchange_n(&s->locked, 1, __ATOMIC_ACQUIRE))
            return;
        while (__atomic_load_n(&s->locked, __ATOMIC_RELAXED)) {
            if (++spins < LB_SPIN_BEFORE_YIELD)
                __builtin_ia32_pause();
            else
                sched_yield();
        }
    }
}

static inline void lb_spin_unlock(lb_spin_t *s)
{
    __atomic_store_n(&s->locked, 0, __ATOMIC_RELEASE);
}
#endif
