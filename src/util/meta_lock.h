/* lb_meta_lock: lockblame's own tiny lock for its internal state (an
 * lb_mon's `meta`, the arena, the pool). Named apart from lb_spin*, which
 * in lockblame means the program's pthread spin locks (locks/spin_ops.h).
 *
 * Invariants: it never calls into pthread (so it can never recurse into our
 * own wrappers); critical sections under it are a few dozen instructions
 * with no allocation and no system call. A waiter spins briefly, then
 * yields the CPU between attempts: with more runnable threads than CPUs a
 * descheduled holder would otherwise be waited for by spinning threads for
 * whole time slices. It is not async-signal-safe: the signal handler never
 * takes one. */
#ifndef LB_META_LOCK_H
#define LB_META_LOCK_H
#include <sched.h>
#include <stdint.h>

typedef struct {
    uint32_t locked;
} lb_meta_lock_t;
#define LB_META_LOCK_INIT \
    {                     \
        0                 \
    }

#define LB_META_LOCK_SPINS 128

static inline void lb_meta_lock(lb_meta_lock_t *s)
{
    unsigned spins = 0;
    for (;;) {
        if (!__atomic_exchange_n(&s->locked, 1, __ATOMIC_ACQUIRE))
            return;
        while (__atomic_load_n(&s->locked, __ATOMIC_RELAXED)) {
            if (++spins < LB_META_LOCK_SPINS)
                __builtin_ia32_pause();
            else
                sched_yield();
        }
    }
}

static inline void lb_meta_unlock(lb_meta_lock_t *s)
{
    __atomic_store_n(&s->locked, 0, __ATOMIC_RELEASE);
}
#endif
