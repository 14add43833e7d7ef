/* See own_stack.h. The stack is mapped MAP_NORESERVE (untouched pages cost
 * nothing) with one PROT_NONE guard page at its low end. */
#include "util/own_stack.h"

#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "util/raw_mmap.h"
#include "util/stack_bounds.h"

#define LB_GUARD 4096u

typedef struct {
    void (*fn)(void *);
    void *arg;
} lb_own_call_t;

/* makecontext passes int arguments only: the call block's address comes
 * in two halves. */
static void trampoline(unsigned hi, unsigned lo)
{
    lb_own_call_t *call = (lb_own_call_t *)(((uintptr_t)hi << 32) | (uintptr_t)lo);
    call->fn(call->arg);
}

int lb_call_on_own_stack(void (*fn)(void *), void *arg, size_t size, bool keep)
{
    size = (size + LB_GUARD - 1) & ~(size_t)(LB_GUARD - 1);
    char *base = lb_mmap(NULL, size + LB_GUARD, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED)
        return -1;
    mprotect(base, LB_GUARD, PROT_NONE);
    int cancel_state;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
    lb_own_call_t call = { fn, arg };
    ucontext_t back, there;
    getcontext(&there);
    there.uc_stack.ss_sp = base + LB_GUARD;
    there.uc_stack.ss_size = size;
    there.uc_link = &back;
    uintptr_t p = (uintptr_t)&call;
    makecontext(&there, (void (*)(void))trampoline, 2, (unsigned)(p >> 32), (unsigned)p);
    lb_stack_bounds_t saved =
        lb_stack_bounds_push((uintptr_t)base + LB_GUARD, (uintptr_t)base + LB_GUARD + size);
    swapcontext(&back, &there);
    lb_stack_bounds_pop(saved);
    pthread_setcancelstate(cancel_state, NULL);
    if (!keep)
        lb_munmap(base, size + LB_GUARD);
    return 0;
}
