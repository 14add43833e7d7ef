/* Progress point of a what-if experiment: exact counts of the calls of one
 * function, by hardware breakpoints (perf_event_open, PERF_TYPE_BREAKPOINT,
 * HW_BREAKPOINT_X) that count in user mode without sampling. Where
 * breakpoints open but do not count (some virtual machines), by uprobes
 * (the kernel's uprobe PMU: a trap at the function's file offset, counted
 * per thread the same way; it needs the rights perf_event_open asks for
 * uprobes, root in practice).
 *
 * A breakpoint event counts on one thread only: each thread opens its own
 * at its start (its own debug register), and its count is read when it
 * ends, or, for a thread still running, when the process finishes. A
 * forked child starts counting afresh on its one thread.
 *
 * Invariants: the address is set once at setup, before any thread but the
 * first exists. A thread's event fd is in its TLS and in one slot of a
 * fixed table; whoever empties the slot (the thread at its end, or the
 * process's final read) reads it, so no count is read twice or lost, save
 * that of a thread that ends while the final read runs. */
#ifndef LB_CORE_WHATIF_PROGRESS_H
#define LB_CORE_WHATIF_PROGRESS_H
#include <stdbool.h>
#include <stdint.h>

/* Count executions of the instruction at addr on every thread that calls
 * lb_progress_thread_start from now on, the caller first; false (errno set) if neither a breakpoint that
 * counts nor a uprobe can be opened: no debug registers and no uprobe PMU,
 * EACCES, all four debug registers taken. */
bool lb_progress_setup(uintptr_t addr);
/* The calling thread starts and ends counting. */
void lb_progress_thread_start(void);
void lb_progress_thread_stop(void);
/* In a forked child: forget the parent's threads, count on this one. */
void lb_progress_fork_child(void);
/* What one counted call costs the calling thread with the counter chosen
 * (a breakpoint's debug exception, or a uprobe's trap and step), measured
 * at setup on a function of lockblame's; 0 if it could not be measured. */
uint64_t lb_progress_hit_ns(void);
/* The calls counted, summed over the threads; -1 if not counting, or if a
 * thread's breakpoint could not be opened (errno then: why). */
long long lb_progress_calls(void);
#endif
