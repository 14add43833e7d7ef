/* Off-CPU time lockblame did not see as a wait, and when to say so
 * (docs/INTERNALS.md, "Waits it cannot see"). A thread's unseen time is
 * its lifetime less its CPU time, its run delay (runnable, waiting for a
 * CPU) and the waits lockblame timed (thread.unseen_s, written at exit).
 * It is where waits that never call into pthread go: glibc's internal
 * locks (malloc's arenas, stdio's FILE locks), futex and other blocking
 * system calls made inline, sleep, I/O, waiting for child processes.
 * Shared by the exit summary and the report header, so both apply one
 * rule. Depends on nothing. */
#ifndef LB_COMMON_UNSEEN_H
#define LB_COMMON_UNSEEN_H
#include <stdbool.h>
#include <stddef.h>

/* The rule: unseen time worth a line is at least this many seconds, */
#define LB_UNSEEN_MIN_S     0.1
/* this share of the threads' summed lifetimes, */
#define LB_UNSEEN_MIN_SHARE 0.2
/* and more than the waits lockblame saw. */

/* Whether unseen_s (summed over threads) is worth a line, against the
 * threads' summed lifetimes and the waits seen (metric.wait_s summed). */
bool lb_unseen_notable(double unseen_s, double lifetime_s, double seen_wait_s);

/* The line's text (no "lockblame:" prefix, no newline) into buf: how much,
 * its share, what was seen, the likely causes. */
void lb_unseen_text(char *buf, size_t size, double unseen_s, double lifetime_s, double seen_wait_s);
#endif
