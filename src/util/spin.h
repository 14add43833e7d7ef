/* lb_spin: lockblame's own tiny lock for its internal state.
 *
 * Invariants: it never calls into pthread (so it can never recurse into our
 * own wrappers) and never sleeps; critical sections under it are a few
 * dozen instructions with no allocation and no system call, so spinning is
 * bounded. It is not async-signal-safe: the signal handler never takes one. */
#ifndef LB_SPIN_H
#define LB_SPIN_H
#include <stdint.h>

typedef struct { uint32_t locked; } lb_spin_t;
#define LB_SPIN_INIT { 0 }

static inline void lb_spin_lock(lb_spin_t *s)
{
    for (;;) {
        if (!__atomic_exchange_n(&s->locked, 1, __ATOMIC_ACQUIRE))
            return;
        while (__atomic_load_n(&s->locked, __ATOMIC_RELAXED))
            __builtin_ia32_pause();
    }
}

static inline void lb_spin_unlock(lb_spin_t *s)
{
    __atomic_store_n(&s->locked, 0, __ATOMIC_RELEASE);
}
#endif
