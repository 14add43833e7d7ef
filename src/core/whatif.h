/* Virtual speedup of one release site (`lockblame whatif`), after coz's
 * causal profiling: when a lock hold (a mutex's, a spin lock's, an
 * rwlock's, read or write) that ends at the selected site
 * lasted h, every other thread is delayed by p*h, so the run's time less
 * the delay inserted is the time it would take had those holds been p
 * shorter (docs/INTERNALS.md, "What-if experiments").
 *
 * Off unless LOCKBLAME_WHATIF_SITE is set at start; then lb_whatif_on is
 * true for the whole run and the exported wrappers route through
 * interpose/whatif_wrap.c. Off, the only cost is the wrappers' one test
 * of lb_whatif_on.
 *
 * A signal site (a signal or post made outside any lock hold) speeds up
 * instead the code that runs before it: the signalling thread's run since
 * its last wake (the return of a blocking call), signal or post, or its
 * start, less what it slept paying delays meanwhile.
 *
 * Accounting (invariants):
 *  - The delay D(t) only grows. A hold of the site's lock that began at
 *    one of the site's own lock or wait calls adds p per ns while it
 *    lasts (coz: delay accrues while the selected code runs); a hold that
 *    began elsewhere and ends at the site adds p*h when it ends, and so
 *    does a signal site's code, of length h, when the signal is made. The
 *    thread that holds (or signals) is not delayed by its own speedup: its
 *    local count gets the same.
 *  - A thread owes D - local. It pays by sleeping at its next lock
 *    operation, before any release, signal or post (so it never wakes
 *    another thread before it has paid), at sampler ticks and at exit;
 *    sleeping past what was owed is kept as `excess` and pays later debts.
 *  - A blocking call that returns because another thread woke it skips
 *    the delay inserted while it blocked (the waker paid it before
 *    waking it), but no more than p times the time it was blocked (one
 *    site hold at a time): the part of a hold's delay that accrued while
 *    this thread still ran is owed. One that timed out pays it all.
 *  - A new thread starts with its creator's local count; a thread first
 *    seen otherwise starts with the delay as it is then.
 *  - Per-thread state is touched only by its own thread; `inside` keeps
 *    the sampler's signal handler out while the thread runs this code.
 *    The delay's terms are a seqlock whose writers spin on a flag (only
 *    while an experiment runs); nothing here allocates or takes a lock of
 *    the program's. */
#ifndef LB_CORE_WHATIF_H
#define LB_CORE_WHATIF_H
#include <stdbool.h>
#include <stdint.h>

extern bool lb_whatif_on;

/* At start: read LOCKBLAME_WHATIF_SITE / _SPEEDUP / _OUT; sets lb_whatif_on. */
void lb_whatif_setup(void);
/* Pay what this thread owes (sleeping). Safe in a signal handler. */
void lb_whatif_pay(void);
/* The sampler's tick on this thread: pay unless whatif code is running. */
void lb_whatif_tick(void);
/* Around a call that may block: pay, then note the delay; after
 * it, woken = true (another thread ended the wait) skips the delay
 * inserted meanwhile. */
void lb_whatif_block_begin(void);
void lb_whatif_block_end(bool woken);
/* Hold bookkeeping: lock was acquired (now) by a call returning to ra,
 * is about to be released at call site ra (pays first; adds p*h when ra
 * is the selected site), or was released inside a condition wait. */
void lb_whatif_acquired(const void *lock, uintptr_t ra);
void lb_whatif_releasing(const void *lock, uintptr_t ra);
void lb_whatif_dropped(const void *lock);
/* Before a signal, broadcast or post by a call returning to ra: pay; if
 * ra is a signal site's, add p times the code that ran before it. */
void lb_whatif_signalling(uintptr_t ra);
/* Thread creation: the creator's count, handed to the new thread. */
uint64_t lb_whatif_local(void);
void lb_whatif_thread_begin(uint64_t creator_local);
/* Process end: pay, then append the results line to LOCKBLAME_WHATIF_OUT. */
void lb_whatif_finish(void);
#endif
