/* Where a call went, read from this process's mapped code (x86-64): the
 * tail-call scan at the final write (report/writer/tailcall.c) and a
 * what-if experiment's release-site test (core/whatif.c) ask the same.
 * System calls (process_vm_readv): not for the signal handler. */
#ifndef LB_UTIL_CALL_DEST_H
#define LB_UTIL_CALL_DEST_H
#include <stdint.h>

/* The destination of the call that ends just before ra (call rel32, call
 * *disp(%rip)), or 0. */
uintptr_t lb_call_dest(uintptr_t ra);
/* The same for the return address of a call this process ran, in code
 * still mapped (the caller knows: a module not unloaded): the call's
 * bytes are read in place where they lie on the page of its last byte,
 * which ran; the rest as lb_call_dest reads. */
uintptr_t lb_call_dest_ran(uintptr_t ra);
/* Follows a PLT stub ([endbr64] [bnd] jmp *disp(%rip)) to the address in
 * its GOT slot, twice at most; returns addr itself when it is no such
 * stub. */
uintptr_t lb_through_plt(uintptr_t addr);
#endif
