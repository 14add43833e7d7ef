/* The database contract shared by the writer (library) and the CLI: the
 * schema version of docs/SCHEMA.md. The writer's DDL and the CLI's loader
 * both follow it; change them and docs/SCHEMA.md together. Depends on
 * nothing.
 *
 * Version history: 1 = first release; 2 added metric.idle_undirected_s;
 * 3 holds a process tree: run has a row per process image (ppid, exec_gen,
 * proc_start, run_key), thread and sync_object name their run row (run_id);
 * 4 added sync_object.sampled_waits; 5 added thread.runqueue_s and
 * thread.unseen_s (off-CPU time no seen wait explains) and
 * metric.idle_futex_s (the futex kind's blame); 6 added module.build_id
 * (the GNU build id, hex: names for stripped modules at report time);
 * 7 added the optional table whatif, written by `lockblame whatif` only;
 * 8 added the tables symbol and module_function (the names the run's
 * processes resolved, per module build id and offset, and the function
 * tables of modules named by their symbols alone, which later processes
 * reuse); 9 added the time windows (time_window and the window_*
 * tables); 10 added structural_wait.helper (an idle helper's rows apart
 * from parked waits').
 * The writer writes LB_SCHEMA_VERSION; the CLI reads every version up to
 * it. */
#ifndef LB_COMMON_SCHEMA_H
#define LB_COMMON_SCHEMA_H
#define LB_SCHEMA_VERSION 10
#endif
