/* The tree's background merger, under plain LD_PRELOAD (under `lockblame
 * run` the CLI's merger thread does this: report/cli/run_merge.h).
 *
 * A tree of short processes is mostly serial: its forking parent waits
 * for each child. Without a merger the pending records (common/spool.h)
 * are added in series with that work: by a child on the spool bound's
 * duty at its exit (spool_bound.h), whose exit, and its parent's wait,
 * then take tens of milliseconds more, and by the root at its end. So
 * the root, after a fork, when the spool holds the bound less one log's
 * worth (at least LB_MERGER_START records), starts a process of
 * lockblame's own that adds the sealed pending files and ends: the merge
 * runs beside the tree, on a CPU it leaves idle, no child's exit waits
 * for it, and a child's capped commit, at the full bound, comes only
 * where the tree ends processes faster than the merger adds them.
 *
 * The merger is a raw clone of the root without SIGCHLD (exit signal 0):
 * the program's wait(), waitpid(-1) and waitid(P_ALL) never see it (a
 * wait with __WALL or __WCLONE does, and a SIGSTOP sent to the merger's
 * own pid is reported to the root), and its end sends no signal. It
 * blocks every signal from its first instruction, closes every
 * descriptor it inherited (close_range(2); where that is refused it ends
 * at once), so that no pipe of the program stays open through it, opens
 * /dev/null as 0, 1 and 2, and sets itself apart: a process group of its
 * own (a job-control stop of the program's group does not reach it), the
 * name lockblame-merge, `/` as its directory. It ends with exit_group:
 * no exit handler of the program, no profile of its own; status 0 when it
 * added what it found, 1 when it could not work (no close_range, no
 * SQLite, a commit that failed), and then the root starts no other. It
 * holds the spool bound's duty while it merges (one merger at a time,
 * and no capped commit beside it), and its failures are silent: the
 * root's final merge says why what is left cannot be added. Like a fork
 * child, it counts against the user's process limit and a cgroup's
 * pids.max while it runs and until the root reaps it.
 *
 * It starts only where its raw clone is as safe as a fork child's first
 * steps: the root's fork hook in the parent, after glibc released its
 * malloc and stdio locks and lockblame its own, when the root runs one
 * thread only (no other thread holds a lock the copy would inherit
 * held) and malloc is glibc's (a replacement allocator's fork handler,
 * registered after lockblame's, still holds its locks then). Its code
 * calls no fork, pthread_atfork or dlclose.
 *
 * Invariants: only the tree's root (lb_output_tree_root), while
 * lockblame monitors, starts one, and at most one at a time (its pid in
 * this process's memory; a fork child forgets it); the root reaps it
 * (wait4 with __WCLONE): without blocking before and after each later
 * fork, and waiting before its own final write, which then adds what is
 * left (2 s at most: a merger that takes longer, stopped or hung, is
 * killed, and the final write adds what it held). Off where the spool is
 * off or its bound is LB_MERGER_START or less (LOCKBLAME_SPOOL=0,
 * LOCKBLAME_SPOOL_MAX=0 or a small bound), where the user's process
 * limit (RLIMIT_NPROC) is below 4096 (a program that forks until fork
 * fails must fail at its own count), or the root has another thread. */
#ifndef LB_WRITER_MERGER_H
#define LB_WRITER_MERGER_H

/* The fewest pending records that start a merger: two sealed logs'
 * worth. */
#define LB_MERGER_START 32u

/* At start: whether malloc is glibc's (no merger otherwise). */
void lb_merger_setup(void);
/* The root's fork hook before the fork: reaps a merger that ended. */
void lb_merger_fork_prepare(void);
/* The root's fork hook in the parent: reaps a merger that ended, and
 * starts one if the spool holds enough. errno kept. */
void lb_merger_fork_parent(void);
/* A fork child: the parent's merger is not its own. */
void lb_merger_fork_child(void);
/* Before the root's final write (or an exec): waits for its merger to
 * end (killed after 2 s). errno kept. */
void lb_merger_wait(void);
#endif
