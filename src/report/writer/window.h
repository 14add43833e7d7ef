/* Time windows (docs/SCHEMA.md "Time windows"; docs/DESIGN.md "Time
 * windows"): with LOCKBLAME_INTERVAL set, a thread of lockblame's own
 * writes what the process recorded since the last window, every interval
 * and whenever a snapshot is asked for (`lockblame snapshot PID`, or a
 * file named after the pid in the database's snapshot directory, see
 * lb_window_request_path); the final write adds the last window. */
#ifndef LB_WRITER_WINDOW_H
#define LB_WRITER_WINDOW_H
#include <stdbool.h>

/* window_thread.c: the process hooks' parts (report/writer/hooks.c). */
void lb_window_setup(void);
void lb_window_quiesce(void);
void lb_window_finish(const char *reason); /* the exit reason of the last window */
void lb_window_fork_prepare(void);
void lb_window_fork_parent(void);
void lb_window_fork_child(void);

/* window_write.c: write one window now ("interval", "snapshot", or the
 * exit reason); 0 or -1 after one lockblame: line. One caller at a time. */
int lb_window_write(const char *reason);
/* Whether this process wrote a window yet. */
bool lb_window_written(void);
/* A fork child starts its windows afresh. */
void lb_window_forget(void);
#endif
