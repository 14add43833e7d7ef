/*
 * tree_notes.h - header lines about the profiled tree as a whole, from
 * meta keys its processes or its root wrote:
 *   outside:   waits on process-shared objects (semaphores, mutexes,
 *              condition variables, barriers in shared memory) that a
 *              process outside the profiled tree ended: their idleness is
 *              unattributed (shared_outside_us, shared_outside_waits);
 *   unwritten: processes of the tree that ended without writing their
 *              profile, killed outright (processes_unwritten,
 *              processes_unwritten_writing; common/ledger.h), and the
 *              waits on process-shared objects they left in progress,
 *              which the tree dropped (shared_killed_waits).
 * Both are the whole database's figures.
 */
#ifndef LB_CLI_TREE_NOTES_H
#define LB_CLI_TREE_NOTES_H
#include <stdio.h>

#include "report/cli/profile.h"

/* The header's "outside:" and "unwritten:" lines, each printed only where
 * it has something to say. */
void lb_print_tree_notes(const struct lb_profile *p, FILE *out);
#endif
