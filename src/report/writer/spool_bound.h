/* The bound on a run's pending profiles (common/spool.h). Only commits
 * take records out of the spool: under `lockblame run` the CLI's, which
 * add the sealed files while the program runs (report/cli/run_merge.h)
 * and the rest when it ends; under plain LD_PRELOAD the root's at its
 * end and those of processes that named something new. Should they fall
 * behind (a server that never stops, under plain LD_PRELOAD above all),
 * records would pile up for days. So once the spool holds
 * about LOCKBLAME_SPOOL_MAX records (LB_SPOOL_MAX_DEFAULT; 0: no bound),
 * a process whose profile would wait there commits instead, adding the
 * oldest records with its own, the bound's worth from 64 to 256
 * (lb_spool_duty_batch). One process at a
 * time takes that duty, so that a burst of exits is not a burst of
 * commits queued on the database's lock: the others go on spooling.
 *
 * What is pending is counted in the tree's ledger (common/ledger.h), not
 * by reading the spool's directory in every writer: `spooled` (records
 * written, one atomic add each) less `merged` (records the library's
 * commits, and the CLI's, took out of the spool). It is an estimate: a
 * record of a process that died between writing it and counting it, a
 * claim given back and a record of an earlier build are not counted. A
 * commit that took every
 * record it found corrects it: `merged` then lies between what was
 * written when it began listing and what is written now.
 *
 * Invariants: `spooled` grows by atomic adds; `merged` by
 * compare-and-swaps that add what a commit took, or that correct it to
 * no less than `spooled` as read before the commit listed the spool and
 * no more than `spooled` now (both counters wrap: only differences are
 * read); the duty word is 0 or the holder's pid with its start time, set by a
 * compare-and-swap from 0 or from a holder that is gone, and cleared by
 * its holder alone, after its commit. Nothing here runs at fork: a fork
 * child shares the ledger and touches the counters only in its own final
 * write. Without a ledger (none mapped) nothing is bounded. */
#ifndef LB_WRITER_SPOOL_BOUND_H
#define LB_WRITER_SPOOL_BOUND_H
#include <stdbool.h>
#include <stdint.h>

#include "common/spool.h"

/* The fewest and the most records a process on duty adds besides its
 * own: more than a commit's usual LB_PENDING_BATCH (output.c), so that
 * the spool drains faster than exits fill it while one process commits
 * at a time, and no more than the default bound's worth, so that a large
 * LOCKBLAME_SPOOL_MAX does not make one process's exit wait for
 * thousands of records (~0.3 ms each). */
#define LB_SPOOL_CAPPED_BATCH 64u
#define LB_SPOOL_CAPPED_MOST  LB_SPOOL_MAX_DEFAULT

/* The records a process on duty adds besides its own under a bound of
 * `bound` records: the bound's worth, the oldest, within [64, 256], so
 * that the default bound's spool is about empty after it: a process that
 * commits opens SQLite and the database from nothing, so fewer, larger
 * commits cost less. A tree of 1,600 short processes (bench/forktree 1600
 * 8 0) took about 8% more CPU time with commits of 64 than with no bound,
 * with commits of 256 as much as with none within the runs' spread. */
static inline unsigned lb_spool_duty_batch(unsigned bound)
{
    return bound < LB_SPOOL_CAPPED_BATCH  ? LB_SPOOL_CAPPED_BATCH
           : bound > LB_SPOOL_CAPPED_MOST ? LB_SPOOL_CAPPED_MOST
                                          : bound;
}
/* lb_spool_duty_batch of this process's bound. */
unsigned lb_spool_bound_batch(void);

/* A record was put in the spool: the records put so far (0 without a
 * ledger). */
uint32_t lb_spool_bound_count_record(void);
/* Whether this process, whose profile may wait in the spool, commits it
 * instead: the spool holds about the bound, and this process took the
 * duty. It then releases it after its commit. */
bool lb_spool_bound_take_duty(void);
/* The duty taken whatever the spool holds, by a merger beside the
 * running tree (merger.h): false when another live process holds it. */
bool lb_spool_bound_take_duty_now(void);
/* Whether no live process holds the duty (false without a ledger). */
bool lb_spool_bound_duty_free(void);
/* The records the ledger counts pending (0 without a ledger). */
uint32_t lb_spool_bound_pending(void);
/* The bound in records (LOCKBLAME_SPOOL_MAX; 0: none). */
unsigned lb_spool_bound_max(void);
/* Whether this process holds the duty. */
bool lb_spool_bound_on_duty(void);
/* After the commit (done or failed): the duty, if held, is free again. */
void lb_spool_bound_release(void);
/* Before a commit lists the spool: what it reads later in
 * lb_spool_bound_took. */
uint32_t lb_spool_bound_mark(void);
/* After a commit that took `taken` records out of the spool (added,
 * dropped as added before, or renamed .bad); drained: it took every
 * record it listed, with lb_spool_bound_mark's mark read before. */
void lb_spool_bound_took(uint32_t mark, unsigned taken, bool drained);
#endif
