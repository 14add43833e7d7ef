/* One-line diagnostics on stderr, always prefixed "lockblame: ".
 * Formats into a stack buffer and write(2)s it: no stdio lock, no malloc,
 * errno preserved. Not for the signal handler (vsnprintf is not listed as
 * async-signal-safe). */
#ifndef LB_LOG_H
#define LB_LOG_H
#include <stdbool.h>

__attribute__((format(printf, 1, 2))) void lb_warn(const char *fmt, ...);
/* A line about the value of setting `name` (a LOCKBLAME_* variable), said
 * once for the process tree: not by an image whose predecessors in the
 * tree said one about it. LOCKBLAME_SAID lists the settings said, and
 * exec'd images inherit it (a fork child inherits the setting read, and
 * reads none). For the images' setup, before the program runs threads:
 * it sets the variable. */
__attribute__((format(printf, 2, 3))) void lb_warn_setting(const char *name, const char *fmt, ...);
/* Like lb_warn, but only the first call with the same once-flag prints. */
__attribute__((format(printf, 2, 3))) void lb_warn_once(int *once, const char *fmt, ...);
/* Whether `lockblame run` prints the run's summary for the whole process
 * tree (LOCKBLAME_SUMMARY=run): the processes then print no exit summary
 * lines of their own. */
bool lb_summary_by_run(void);
/* Whether this process leaves its exit lines to its tree's root: under
 * plain LD_PRELOAD with LOCKBLAME_QUIET not 0, every process but the root
 * (report/writer/summary.c prints the tree's summary from the root). */
bool lb_summary_by_root(void);
/* A state that cannot happen: print and abort. */
__attribute__((format(printf, 1, 2), noreturn)) void lb_die(const char *fmt, ...);
#endif
