/* `lockblame run`'s merger: while the program runs, a thread of run's
 * adds the run's sealed pending files (common/spool.h) to the database,
 * so that what is left when the program ends is at most the open log and
 * a file or two, not the whole tree's records: the tree's end waits for
 * that merge (run_summary.c), and so does whoever waits for `run`. A
 * batch that fails (the database cannot be made or written, or is not
 * ours) ends the thread without a word: the final merge adds what is
 * left, or says why it cannot, once.
 *
 * Threads and invariants: one merger thread, started after PROG's fork
 * and stopped (woken, then joined) when PROG has ended, before the final
 * merge. It blocks every signal (run's main thread forwards them to
 * PROG), runs at the priority run had, and holds the database's write
 * lock only for one batch's transaction (LB_RUN_MERGE_BATCH records). The
 * stop flag and the wake-up are under one mutex and condition. */
#ifndef LB_CLI_RUN_MERGE_H
#define LB_CLI_RUN_MERGE_H

/* Start merging the spool of the database at path, run key run_key
 * (both copied); nothing when the thread cannot be made (the final merge
 * then adds everything, as before). */
void lb_run_merge_start(const char *path, const char *run_key);
/* Stop: the batch under way ends first. Nothing if none was started.
 * The module files the merger read, and the chains it found, stay for
 * the final merge (common/frame_names.h: they name what that merge adds
 * as they named the batches, which the database holds), unless a batch
 * failed: then its chains may be in no table of the database, and both
 * are released. */
void lb_run_merge_stop(void);
/* After the final merge: what the merger kept for it released. */
void lb_run_merge_release(void);
#endif
