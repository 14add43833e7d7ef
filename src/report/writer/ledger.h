/* This process's part in the tree's ledger of processes (common/ledger.h):
 * its slot, claimed at start (the process setup hook: only where
 * lockblame runs) and in a fork child, and its final write's
 * progress; and the count the tree's root makes when it ends.
 * Failure contract: without the ledger (its file cannot be made or
 * mapped) nothing is counted and nothing is said; the profile is written
 * as before. */
#ifndef LB_WRITER_LEDGER_H
#define LB_WRITER_LEDGER_H
#include <stdbool.h>

/* The final write begins (writing) or has ended (done). */
void lb_ledger_mark(bool done);
/* The tree's root, at its end: the processes gone without writing, said
 * in one line and noted in the database at path with the root's command
 * line (meta root_command); the ledger removed. */
void lb_ledger_settle(const char *path);
#endif
