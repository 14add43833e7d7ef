/*
 * run_checks.h - `lockblame run`'s checks before the start and its
 * summary after the end (run_checks.c, run_summary.c).
 */
#ifndef LB_CLI_RUN_CHECKS_H
#define LB_CLI_RUN_CHECKS_H

#include <stdbool.h>
#include <sys/types.h>

/* Why PROG cannot be profiled (static, setuid), or NULL. */
const char *lb_run_unprofilable(const char *prog);

enum {
    LB_OUT_NONE,
    LB_OUT_LOCKBLAME,
    LB_OUT_FOREIGN
};
/* What is at path: nothing (or an empty file), a lockblame database, or
 * something else, which run must not touch. */
int lb_run_output_state(const char *path);

/* Remove the ledger of an earlier run at path (common/ledger.h) and its
 * shared table (blame/shared_objs.h), and make the new run's ledger, for
 * the run run_key (the ledger's `run`), which the caller gives only when
 * path passed the run's check (NULL: the ledger names no run). */
void lb_run_fresh_ledger(const char *path, const char *run_key);

/* After PROG ended with wait status `status`: at most 6 lockblame: lines
 * on stderr about the run's database at path (or why there is none).
 * argv is PROG's command line, child its pid; unprofilable: the reason given before the start,
 * or NULL; and the tree's processes that ended without writing
 * (common/ledger.h), noted in the database too. */
/* Called just before the program's fork: what runs as our child from
 * then on is the tree's (lb_run_summary's count of orphans still running). */
void lb_run_tree_begins(void);
void lb_run_summary(const char *path, char *const *argv, pid_t child, int status,
                    const char *unprofilable);
#endif
