/* Progress point of a what-if experiment: exact counts of the calls of one
 * function, by a hardware breakpoint (perf_event_open, PERF_TYPE_BREAKPOINT,
 * HW_BREAKPOINT_X) that counts in user mode without sampling.
 *
 * One event is opened on the main thread at setup, before the program
 * creates threads, with `inherit`: every thread created afterwards gets
 * its own copy (its own debug register), and a thread's count joins the
 * main thread's event when it exits. So the read at the process's end
 * covers the main thread and every thread that has exited by then;
 * threads still running then are not counted (a fixed-time program joins
 * its workers, or its count ends with them). A forked child inherits it
 * too and adds its count when it exits. */
#ifndef LB_CORE_WHATIF_PROGRESS_H
#define LB_CORE_WHATIF_PROGRESS_H
#include <stdbool.h>
#include <stdint.h>

/* Start counting executions of the instruction at addr; false (errno set)
 * if the breakpoint cannot be opened: no debug registers, EACCES, all
 * four taken. */
bool lb_progress_open(uintptr_t addr);
/* The calls counted so far; -1 if not counting. */
long long lb_progress_calls(void);
#endif
