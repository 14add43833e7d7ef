/* Run a function on a stack of lockblame's own.
 *
 * The exit-time work (the writer: libdw, SQLite) needs far more stack than
 * a thread the program created on a 16 KiB stack has; it may run on
 * whichever thread ends the process. lb_call_on_own_stack maps a fresh
 * stack with a guard page below it, switches to it (util/stack_switch.h:
 * no system call, the signal mask untouched), runs fn and switches back.
 * With `keep` the stack stays mapped: the final write's call, after which
 * the process ends or execs, and the kernel frees it then without the
 * munmap's TLB flush (an exec that fails leaves it, 8 MiB of address space
 * holding the pages the write touched). Without, it is unmapped when fn
 * returns: a call a process makes again and again (a forking parent's
 * template build, report/writer/profile_db.c), whose stacks, kept, each
 * later fork would copy into its child.
 *
 * lb_call_on_kept_stack is the final write's call: a kept stack with
 * `area` bytes of zeroed, readable and writable memory directly above its
 * top (a guard page above that), in the same mapping, laid out so that
 * the stack's top and the area's start share one 2 MiB block, i.e. one
 * page-table page, where a stack and a mapping of their own took two or
 * three (each a new page-table page, tens of microseconds in a fork child
 * on a VM with shadow page tables). lb_own_stack_area hands the area out
 * once, to the first caller whose `bytes` fit (the write's scratch memory,
 * common/scratch.h, asks for its first chunk); NULL before such a call,
 * after the area went, or when `bytes` exceed it. The area stays mapped
 * as the stack does (never unmapped).
 *
 * lb_kept_stack_reserve maps that stack ahead, once a process, with the
 * same layout and protections and no page touched: a forking parent's
 * call before its first fork (core/runtime.c), so that its children
 * inherit the mapping (an untouched one costs a fork no page table) and
 * each one's exit write, and the parent's own, skips the mmap and the
 * mprotect (~17 us of a PostgreSQL backend's exit). It returns the
 * reserved stack's top (where its area starts); NULL when the kernel
 * refuses, when the process's address space is limited (RLIMIT_AS: then
 * nothing is reserved ahead, as util/pages.h), or once the reservation
 * was taken. The first lb_call_on_kept_stack for the same sizes takes it,
 * by one CAS: at most one call runs on it, any other maps its own, and so
 * does lb_call_on_own_stack always. A process that never reserves maps
 * its kept stack at the call.
 *
 * Failure contract: the calls return 0 after fn ran on the new stack; -1
 * when no stack could be mapped, and then fn has NOT run (the caller
 * decides to run it in place). Not async-signal-safe beyond what fn
 * itself is. fn may call lb_call_on_own_stack again: the inner call maps
 * a stack of its own. Cancellation is disabled while fn runs, and an
 * unwind from fn ends at the switch (its CFI), so nothing inside can
 * unwind across the switched stacks.
 * lb_kept_stack_reserve and lb_own_stack_area are thread-safe. */
#ifndef LB_OWN_STACK_H
#define LB_OWN_STACK_H
#include <stdbool.h>
#include <stddef.h>

#define LB_OWN_STACK_SIZE (8u << 20) /* as a default main-thread stack limit */

int lb_call_on_own_stack(void (*fn)(void *), void *arg, size_t size, bool keep);
int lb_call_on_kept_stack(void (*fn)(void *), void *arg, size_t size, size_t area);
void *lb_kept_stack_reserve(size_t size, size_t area);
void *lb_own_stack_area(size_t bytes);
#endif
