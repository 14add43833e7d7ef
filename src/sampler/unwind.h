/* Call paths, walked with lockblame's own CFI unwinder (unwind_cfi.h).
 * Every path is innermost-first and holds only program frames: frames in
 * liblockblame itself are skipped, and the walk stops at lockblame's
 * thread trampoline (the frames above it are libc's thread start).
 * Return addresses are turned into call-instruction addresses (ra - 1),
 * except the interrupted pc of a signal frame, which is kept exact.
 *
 * Walks make no system call, take no lock, use no pthread key or file
 * descriptor, and are async-signal-safe; each uses under 400 bytes of
 * stack beyond the caller's pcs array. A walk goes through the kernel's
 * signal frames (a handler's path continues with the code the signal
 * interrupted, below a marker frame, common/marker_frames.h) and stops
 * cleanly at code without usable CFI (JIT code, PLT stubs). */
#ifndef LB_UNWIND_H
#define LB_UNWIND_H
#include <stdbool.h>
#include <stdint.h>

/* Registers a walk starts from: the pc they belong to, rsp and rbp. */
typedef struct lb_regs {
    uintptr_t pc, sp, bp;
} lb_regs_t;

/* The current pc, rsp and rbp at this point of the calling function. The
 * pc is a label between the reads, so the CFI row of that pc describes
 * exactly this rsp. Early-clobber outputs: rbp may itself be an output. */
#define LB_REGS_HERE(r)                                                           \
    __asm__ volatile("leaq 1f(%%rip), %0\n1:\n\tmovq %%rsp, %1\n\tmovq %%rbp, %2" \
                     : "=&r"((r).pc), "=&r"((r).sp), "=&r"((r).bp))

/* The stack slots a walk's result depends on, as byte offsets from its
 * starting sp, innermost first: every return-address slot, and a saved-rbp
 * slot only where a later frame's CFA is computed from that rbp. uses_bp:
 * the starting rbp was used that way. Two walks from the same sp (and rbp,
 * if uses_bp) that find the same values in these slots give the same
 * path. overflow: more slots than max (off then incomplete). */
typedef struct lb_walk_trace {
    uint32_t *off;
    int max, n;
    bool overflow;
    bool uses_bp;
} lb_walk_trace_t;

/* One-time setup: our own text range. */
void lb_unwind_setup(void);
/* The caller's path, starting at the first program frame. Returns the
 * number of frames (0 if unwinding failed). */
int lb_unwind_here(uintptr_t *pcs, int max);
/* The same from registers captured with LB_REGS_HERE in a function of
 * lockblame (its frames are skipped); trace may be NULL. */
int lb_unwind_from(const lb_regs_t *regs, uintptr_t *pcs, int max, lb_walk_trace_t *trace);
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
/* Frames whose pc lies in [lo, hi) are lockblame's own that run program
 * code on behalf of a runtime (the OpenMP share trampoline,
 * locks/omp_region.h): walks go through them without keeping them or
 * counting the sample as synchronization. Same calling rules. */
void lb_unwind_set_pass_range(uintptr_t lo, uintptr_t hi);
/* Walks that ended at a frame without usable CFI before reaching the
 * outermost frame or the stop range; for diagnostics. */
uint64_t lb_unwind_slow_walks(void);
#endif
