/* The calling thread's stack bounds, and how much of it is left.
 *
 * lockblame's work in the sampling signal handler needs a fixed amount of
 * stack (measured: see docs/INTERNALS.md, "Stack budget"). A thread the
 * program created on a small stack, or running on a stack it switched to
 * itself (makecontext, coroutines), may not have it. The bounds are
 * recorded per thread when the thread attaches (pthread_getattr_np: the
 * exact usable range, glibc's or the program's own stack) and read with
 * plain TLS loads, so lb_stack_room is async-signal-safe.
 *
 * Invariants: lb_stack_lo/hi are written only by their own thread (at
 * attach, or around lb_call_on_own_stack); lo == 0 means unknown (a thread
 * lockblame did not see start, or pthread_getattr_np failed): callers then
 * behave as before bounds existed. */
#ifndef LB_STACK_BOUNDS_H
#define LB_STACK_BOUNDS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/common.h"

/* Stack the sampling handler needs below its own entry (the kernel's
 * signal frame is already pushed when it checks): at most about 10.8 KiB
 * (14.2 KiB with a 3.4 KiB frame; tests/integration/stack_budget.sh,
 * x86-64, measured with a libunwind walk, which needs more than the CFI
 * walk of sampler/unwind.c), plus room for a program signal without AMX
 * state nesting on top. Below this the sample is dropped. */
#define LB_STACK_BUDGET_HANDLER (16u << 10)

typedef struct {
    uintptr_t lo, hi; /* usable range [lo, hi); lo == 0: unknown */
} lb_stack_bounds_t;

extern LB_TLS lb_stack_bounds_t lb_stack_bounds;

/* Record the calling thread's stack from pthread_getattr_np. Not
 * async-signal-safe (glibc allocates); call at thread start. may_be_main:
 * false for a thread known to be a created one (no look at whether it is
 * the process's first). On failure the bounds stay unknown. errno is
 * preserved. */
void lb_stack_bounds_init(bool may_be_main);

/* Replace the bounds for a while (lockblame's own stack); returns the old. */
static inline lb_stack_bounds_t lb_stack_bounds_push(uintptr_t lo, uintptr_t hi)
{
    lb_stack_bounds_t old = lb_stack_bounds;
    lb_stack_bounds.lo = lo;
    lb_stack_bounds.hi = hi;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    return old;
}

static inline void lb_stack_bounds_pop(lb_stack_bounds_t old)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    lb_stack_bounds = old;
}

/* True if at least `need` bytes of the stack [lo, hi) are left below the
 * caller's frame. lo == 0 (unknown): true (no information, the old
 * behaviour). The stack pointer outside it (a coroutine stack the program
 * switched to, a sigaltstack): false, since its size is unknown and a
 * malloc'd coroutine stack has heap memory, not a guard, below it. */
static inline __attribute__((always_inline)) bool lb_stack_room_in(uintptr_t lo, uintptr_t hi,
                                                                   size_t need)
{
    if (lo == 0)
        return true;
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
    if (sp < lo || sp >= hi)
        return false;
    return sp - lo >= need;
}

/* lb_stack_room_in on the calling thread's known stack. */
static inline __attribute__((always_inline)) bool lb_stack_room(size_t need)
{
    return lb_stack_room_in(lb_stack_bounds.lo, lb_stack_bounds.hi, need);
}

/* True if the caller's frame lies within the known stack. False when the
 * bounds are unknown, or on another stack: a coroutine's, a sigaltstack,
 * or that of a thread started by a raw clone, which shares the thread-local
 * bounds of its creator (sampler/foreign.h). Per-thread caches kept in
 * thread-local storage are used only when this holds. Async-signal-safe. */
static inline __attribute__((always_inline)) bool lb_stack_here_known(void)
{
    /* One unsigned compare: below lo wraps around; unknown is lo = hi = 0. */
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
    return sp - lb_stack_bounds.lo < lb_stack_bounds.hi - lb_stack_bounds.lo;
}

/* The mapping of /proc/self/maps holding addr, as [*lo, *hi): the stack
 * of a thread whose stack lockblame did not see made (one mmap'd region,
 * as a raw clone's usually is). One raw read of the file, no allocation;
 * not async-signal-safe (it opens a file). Returns 0, or -1 with *lo and
 * *hi unchanged. errno is preserved. */
int lb_stack_mapping_of(uintptr_t addr, uintptr_t *lo, uintptr_t *hi);
#endif
