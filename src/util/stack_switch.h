/* Call a function on another stack: the switch under own_stack.c.
 *
 * lb_stack_switch_call(fn, arg, top) points rsp at top (rounded down to
 * 16 bytes, as the ABI wants it at a call), calls fn(arg) there and, once
 * fn returns, returns on the caller's stack. It makes no system call and
 * leaves the signal mask alone; of the callee-saved registers it uses rbp
 * (saved and restored), fn keeps the others as the ABI requires. The
 * memory below top must hold fn's deepest frame, signal frames included:
 * nothing checks it (own_stack.c puts a guard page there).
 *
 * An unwinder walking up from fn (sampler/unwind_cfi.c, gdb, libgcc's)
 * ends at this routine's frame, as at a thread's first frame: its return
 * address is undefined from the switch to the switch back
 * (stack_switch.c says why). Thread-safe and async-signal-safe as fn is;
 * x86-64 only. */
#ifndef LB_STACK_SWITCH_H
#define LB_STACK_SWITCH_H
#include <stdint.h>

void lb_stack_switch_call(void (*fn)(void *), void *arg, uintptr_t top);
#endif
