/* This process's part in the tree's ledger of processes (common/ledger.h):
 * its slot, claimed at start (the process setup hook: only where
 * lockblame runs) and in a fork child, and its final write's
 * progress; and the count the tree's root makes when it ends.
 * Failure contract: without the ledger (its file cannot be made or
 * mapped) nothing is counted and nothing is said; the profile is written
 * as before. (A tree's maker asks for the ledger's room before profiling
 * anything: common/ledger.h, lb_ledger_room.) */
#ifndef LB_WRITER_LEDGER_H
#define LB_WRITER_LEDGER_H
#include <stdbool.h>
#include <stdint.h>

/* The final write begins (LB_LEDGER_WRITING), has ended (LB_LEDGER_DONE:
 * written, or nothing to write) or could not be made (LB_LEDGER_FAILED,
 * after the line that says why, or with the why left to the tree's
 * summary: lb_ledger_failure_left). */
void lb_ledger_mark(uint32_t state);
/* The process's final write runs (on) or is over (off): the span in
 * which lb_ledger_failure_left may keep a failure's line. */
void lb_ledger_final_write(bool on);
/* Whether a failure of the final write is left to the tree's summary
 * rather than said in a line of this process's own: in a tree whose
 * summary its root (a quiet tree, log.h) or `lockblame run` prints and
 * has not counted yet (the spool open), during the final write
 * (lb_ledger_final_write) of a process that holds a ledger slot, which
 * the summary counts once marked LB_LEDGER_FAILED. `code` (an SQLite
 * result code) becomes the ledger's failure if it has none yet, and the
 * process whose code it became says its line as well: one line even
 * where no summary comes. `code` 0: nothing to keep, and nothing said
 * while the tree's summary is to come. Else false: the caller says its
 * line. */
bool lb_ledger_failure_left(int code);
/* The tree's ledger as this process mapped it, NULL without one: the
 * spool's counters (spool_bound.h) live there. */
struct lb_ledger;
struct lb_ledger *lb_ledger_shared(void);
/* Whether the tree's root still adds pending profiles (common/spool.h)
 * at its end: the ledger is mapped and its root has not closed it. */
bool lb_ledger_spool_open(void);
/* The tree's root, as it ends: processes that end later add their own
 * profiles. */
void lb_ledger_close_spool(void);
/* The tree's root, at its end: the processes gone without writing, said
 * in one line and noted in the database at path with the root's command
 * line (meta root_command); the ledger removed. */
void lb_ledger_settle(const char *path);
#endif
