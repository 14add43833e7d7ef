/* The stderr summary at the end of a profiled process tree.
 *
 * Under `lockblame run` the run prints one summary for the whole database
 * and the processes print none (util/log.h, lb_summary_by_run). Under
 * plain LD_PRELOAD the tree is quiet too but for the process that started
 * it (output.h, lb_output_tree_root): when it ends, it prints the summary
 * of the database as the tree's processes have written it by then, its
 * own profile included, whether or not it recorded anything itself (a
 * shell running profiled programs). LOCKBLAME_QUIET=0 instead has every
 * process that wrote print its own. At most five lockblame: lines each. */
#ifndef LB_WRITER_SUMMARY_H
#define LB_WRITER_SUMMARY_H
#include <sqlite3.h>
#include <stdbool.h>

/* At setup: read LOCKBLAME_QUIET (0 or 1; anything else: one line, 1). */
void lb_summary_setup(void);
/* After this process's profile was written (own: its profile in an
 * in-memory database's main schema), or when it had nothing to write or
 * its write failed (own NULL): the summary, if this process prints one;
 * and when the tree's root ends, the tree's end: the pending profiles
 * added, the ledger settled, the spool directory removed. process_ends:
 * false for the write before an exec (the process goes on in its new
 * image). */
void lb_summary_after_write(sqlite3 *own, const char *path, bool process_ends);
/* Whether lb_summary_after_write reads own: this process prints a
 * summary of its own profile. */
bool lb_summary_reads_own(void);
#endif
