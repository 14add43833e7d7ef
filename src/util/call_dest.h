/* Where a call went, read from this process's mapped code (x86-64): the
 * tail-call scan at the final write (report/writer/tailcall.c) and a
 * what-if experiment's release-site test (core/whatif.c) ask the same.
 * Each read goes through `blocks` (util/own_blocks.h: the copies a run of
 * look-ups shares), or through lb_read_own where it is NULL: system calls
 * (process_vm_readv), not for the signal handler. */
#ifndef LB_UTIL_CALL_DEST_H
#define LB_UTIL_CALL_DEST_H
#include <stdint.h>

#include "util/own_blocks.h"

/* The destination of the call that ends just before ra (call rel32, call
 * *disp(%rip)), or 0. */
uintptr_t lb_call_dest(lb_own_blocks_t *blocks, uintptr_t ra);
/* The same for the return address of a call this process ran, in code
 * still mapped (the caller knows: a module not unloaded): the call's
 * bytes are read in place where they lie on the page of its last byte,
 * which ran; the rest as lb_call_dest reads. */
uintptr_t lb_call_dest_ran(lb_own_blocks_t *blocks, uintptr_t ra);
/* Follows a PLT stub ([endbr64] [bnd] jmp *disp(%rip)) to the address in
 * its GOT slot; returns addr itself when it is no such stub. */
uintptr_t lb_plt_hop(lb_own_blocks_t *blocks, uintptr_t addr);
/* lb_plt_hop twice at most: through a stub to where it leads. */
uintptr_t lb_through_plt(lb_own_blocks_t *blocks, uintptr_t addr);
#endif
