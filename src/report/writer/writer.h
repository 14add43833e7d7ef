/* Writing the profile: each process of a run adds its profile to the run's
 * one SQLite database (docs/SCHEMA.md, output.h) at exit, _exit, on fatal
 * signals and before exec, if it recorded anything.
 *
 * Failure contract: lb_write_profile returns 0 (written, or nothing to
 * write), or -1 after printing one lockblame: line; it never changes the
 * program's exit status, and the database is left as it was. */
#ifndef LB_WRITER_H
#define LB_WRITER_H
#include <stdbool.h>

/* The one entry point: build, add to the run's database, print the
 * summary. reason: "exit", "_exit", "exec", "signal SIGTERM", ... */
int lb_write_profile(const char *reason);
/* Whether this process recorded anything (a thread of its own, a sample
 * or a wait, or CPU time enough to be sampled that no sample saw): what
 * decides that it writes a profile. */
bool lb_write_recorded_something(void);
#endif
