/* Call paths with libunwind.
 * Every path is innermost-first and holds only program frames: frames in
 * liblockblame itself are skipped, and the walk stops at lockblame's
 * thread trampoline (the frames above it are libc's thread start).
 * Return addresses are turned into call-instruction addresses (ra - 1),
 * except the interrupted pc of a signal frame, which is kept exact.
 * Callers must hold lb_thread.busy (libunwind is not re-entrant per thread). */
#ifndef LB_UNWIND_H
#define LB_UNWIND_H
#include <stdbool.h>
#include <stdint.h>

/* One-time setup: per-thread caching policy, our own text range. */
void lb_unwind_setup(void);
/* The caller's path, starting at the first program frame. Returns the
 * number of frames (0 if unwinding failed). */
int lb_unwind_here(uintptr_t *pcs, int max);
/* The path interrupted by a signal. *in_sync_code is set when the
 * interrupted pc lies in lockblame or in libc's synchronization code; the
 * path then starts at the program frame that called into it. */
int lb_unwind_signal(void *ucontext, uintptr_t *pcs, int max, bool *in_sync_code);
/* True if pc lies in liblockblame's own text. Always false when the
 * sampler is linked statically into an executable (unit tests, benches):
 * then "our text" would be the whole program. */
bool lb_pc_in_self(uintptr_t pc);
/* Frames whose pc lies in [lo, hi) end every walk: that frame and all above
 * it are dropped. Meant for lockblame's thread trampoline. Call before
 * threads start (plain stores, read without synchronisation). */
void lb_unwind_set_stop_range(uintptr_t lo, uintptr_t hi);
/* How many signal walks could not use the fast trace and fell back to
 * unw_step (slower by an order of magnitude); for diagnostics. */
uint64_t lb_unwind_slow_walks(void);
#endif
