/* Private to report/writer: the state of one profile write and the
 * helpers its files share. The write's rows go to a row log
 * (common/rowlog.h) through statement handles: a process whose profile
 * waits in the run's spool writes the log as it is, and one that commits
 * replays it into an in-memory database (`main`, schema common/ddl.h)
 * and copies that into the run's database (output.c). Any SQL run on
 * that database directly (lb_wsql) runs after the rows logged before it.
 * Used only on the finishing thread; uses malloc freely. */
#ifndef LB_WRITER_INT_H
#define LB_WRITER_INT_H
#include <sqlite3.h>
#include <stdint.h>

#include "common/rowlog.h"
#include "core/thread.h"
#include "report/writer/symbolize.h"
#include "report/writer/tailcall.h"
#include "sampler/metrics.h"
#include "common/u64map.h"

/* One statement of the write: the values of the row being built, added
 * to the write's log by lb_wstep. Rows of several statements may be
 * built at once (a thread row's frame is written while the row is). */
typedef struct lb_wstmt {
    struct writer *w;
    lb_rowlog_t values;
    enum lb_row_kind kind;
} lb_wstmt_t;

typedef struct writer {
    sqlite3 *db;                        /* in-memory; the run's file is attached as "out" */
    lb_rowlog_t rows;                   /* logged, not yet in db (with its header) */
    lb_wstmt_t stmts[LB_ROW_KINDS];     /* the handles, by kind */
    sqlite3_stmt *replay[LB_ROW_KINDS]; /* db's statements that take the rows */
    lb_u64map_t metric_keys;            /* (node << 32 | thread) of the metric rows */
    /* the profile goes to db whatever it holds: the log is replayed there as
     * it grows (lb_wstep), its pages reused */
    bool flush_early;
    int error; /* SQLite's code for the first replay that failed, or 0 */
    lb_symbolizer_t *sym;
    struct lb_symcache *cache; /* names other processes of the run resolved (symcache.h) */
    struct lb_symcache *warm;  /* those a forking parent read for this write, or NULL */
    lb_u64map_t frame_of_pc;
    lb_u64map_t module_of_base;
    lb_u64map_t node_of_edge;     /* (parent node << 32 | frame) -> node */
    lb_u64map_t jump_of_pc;       /* call pc -> tail jump, see lb_merge_site_pc */
    lb_tailcall_cache_t tailcall; /* the PLT stubs those look-ups followed, the blocks they read */
    uintptr_t *far_jumps;         /* tail jumps over 1 GiB from their call (another module's) */
    uint32_t nfar, far_cap;
    unsigned long long unloads; /* the loader's unloads when those answers began (modmap.h) */
    uint32_t frames, modules, nodes;
    uint32_t **node_maps;  /* per thread id: local CCT node -> global node, 0 until a row
                           * needs it (the root's is 0: the global root) */
    uint32_t **depth_maps; /* per thread id: global depth of each mapped local node */
    struct lb_cct **ccts;  /* per thread id: the merged thread's CCT */
    uint32_t *node_counts; /* per thread id: its CCT's nodes when merged */
    double *waits_s;       /* per thread id: the wait_s of its metric rows so far */
    uint32_t **leaf_maps;  /* per thread id: local node -> global node of its
                                     * own metrics when a tail call moved them (else 0) */
    uint32_t thread_slots;
    double ns_per_sample;
    uint64_t now;        /* when the profile is taken: open waits close here */
    unsigned empty;      /* LB_MERGE_EMPTY bits of the profile's empty tables */
    bool resolved_names; /* the write resolved names the run's database lacked */
    /* the profile may wait in the spool: addresses the names handed down
     * do not cover are left to its merge (frame_names.h) */
    bool defer_names;
    uint32_t unnamed_frames; /* frame rows so left */
    bool out_attached;       /* the run's database is attached to db as "out" */
    lb_wstmt_t *ins_frame, *ins_module, *ins_node, *ins_metric, *ins_site, *ins_blame;
} writer_t;

/* Run sql on w->db after the rows logged so far; -1 after one
 * lockblame: line on failure. */
int lb_wsql(writer_t *w, const char *sql);
/* The logged rows into w->db (in a transaction of their own unless one
 * is open), the log emptied: 0, or -1 (w->error says why; the caller
 * says so in one line) with the rows lost. */
int lb_wflush(writer_t *w);
/* The logged rows dropped and w->db's transaction rolled back. */
void lb_wrollback(writer_t *w);
/* Empty w's log and start it with its header: before the first row. */
void lb_wopen_log(writer_t *w);
/* Free the log, the handles' values and w->db's replay statements. */
void lb_wclose_log(writer_t *w);
/* kind's handle. */
lb_wstmt_t *lb_wprepare(writer_t *w, enum lb_row_kind kind);
/* The row's values; text NULL binds nothing (NULL). */
static inline void lb_wbind_int(lb_wstmt_t *st, int index, int64_t value)
{
    lb_rowlog_int(&st->values, index, value);
}
static inline void lb_wbind_double(lb_wstmt_t *st, int index, double value)
{
    lb_rowlog_double(&st->values, index, value);
}
static inline void lb_wbind_text(lb_wstmt_t *st, int index, const char *text)
{
    lb_rowlog_text(&st->values, index, text);
}
static inline void lb_wbind_blob(lb_wstmt_t *st, int index, const void *bytes, size_t n)
{
    lb_rowlog_blob(&st->values, index, bytes, n);
}
/* The row into the log; 0, or -1 when the log is out of memory. */
int lb_wstep(lb_wstmt_t *st);
/* A meta row (key, value). */
void lb_wmeta(writer_t *w, const char *key, const char *value);

/* cct_merge.c: every thread's CCT into one tree keyed by frame. */
int lb_merge_open(writer_t *w); /* prepares the inserts; 0 or -1 */
/* One thread's CCT: the nodes that hold metrics, and their callers,
 * become global nodes; the others only when a row asks for them
 * (lb_merge_mapped_node): a fork child's CCT holds every path its parent
 * had, and most of them hold nothing of the child's. */
int lb_merge_thread(writer_t *w, lb_thread_t *t);
uint32_t lb_merge_frame(writer_t *w, uintptr_t pc); /* innermost frame id */
/* The global node of a thread's local node, mapped (its callers first)
 * at its first use; 0 for a thread not merged. */
uint32_t lb_merge_mapped_node(writer_t *w, uint32_t thread, uint32_t local);
/* The node that holds a local node's own metrics (mapped, or the
 * tail-called function below it). */
uint32_t lb_merge_leaf_node(writer_t *w, uint32_t thread, uint32_t local);
/* Where a path that ended in one of our wrappers was really released
 * from: the tail jump of the function call_pc called, if that function
 * left no frame (tailcall.h), else call_pc itself. Cached while the
 * dynamic loader unloads nothing (lb_merge_forget_unloaded). */
uintptr_t lb_merge_site_pc(writer_t *w, uintptr_t call_pc);
/* Before a later use of w (a time window), the tail-call answers
 * lb_merge_site_pc keeps, with the stubs they followed, dropped if the
 * loader unloaded an object since they began (one dl_iterate_phdr): a
 * module loaded at its addresses since is read as it is then. */
void lb_merge_forget_unloaded(writer_t *w);
/* After the rows: the profile's empty tables (w->empty) and whether it
 * resolved names the run's database lacked (w->resolved_names). */
void lb_merge_finish(writer_t *w);
void lb_merge_close(writer_t *w);
/* Between two uses of w (time windows): libdwfl's files closed, until a
 * later lookup needs them again, and the tail-call look-ups' block copies
 * dropped (tailcall.h). */
void lb_merge_release_files(writer_t *w);
/* The global node of pc below the global node parent at global depth
 * *depth (inlined calls add nodes in between; *depth is advanced). */
uint32_t lb_merge_child(writer_t *w, uint32_t parent, uint32_t *depth, uintptr_t pc);
/* Where a CCT node's metrics m go: its global node g at depth, or the
 * tail-called function below it when its path ended in our wrappers. */
uint32_t lb_merge_metric_node(writer_t *w, uint32_t g, uint32_t depth, uintptr_t pc,
                              const lb_metrics_t *m);
bool lb_merge_metrics_empty(const lb_metrics_t *m);
/* One metric row (w->ins_metric), samples converted with w->ns_per_sample. */
void lb_merge_put_metric(writer_t *w, uint64_t node, uint64_t thread, const lb_metrics_t *m);

/* tables.c: the per-thread, per-object and per-process tables. */
/* Where a thread's time in the profile ends (*end_ns, of lb_now_ns) and
 * the CPU time it ran by then (*cpu_ns), read together so that they
 * agree: an exited thread's at its exit; a live one's where sampling
 * stopped (lb_sampler_quiesce), so that neither holds the final write's
 * own cost, with sampling or without; where quiesce did not read it (a
 * window's write, before quiesce), now and its clock now. */
void lb_tables_span(const lb_thread_t *t, uint64_t now, uint64_t *end_ns, uint64_t *cpu_ns);
/* A thread's CPU time: lb_tables_span's. */
uint64_t lb_tables_cpu_ns(const lb_thread_t *t);
/* The time t was runnable but waiting for a CPU, in seconds, or -1 when
 * unknown or not read: an exited thread's as it read it at exit; a live
 * one's where its unseen time without the delay (unseen_without_s)
 * reaches LB_RUN_DELAY_MIN_UNSEEN_NS (the delay could only lower it),
 * as quiesce read it at the end of its lifetime (lb_tables_span), else
 * now, an open of /proc/self/task/TID/schedstat. */
double lb_tables_run_delay_s(const lb_thread_t *t, double unseen_without_s);
double lb_tables_ns_per_sample(uint64_t *samples, uint64_t *dropped);
void lb_tables_sites(writer_t *w, lb_thread_t *t);
void lb_tables_object_blame(writer_t *w, lb_thread_t *t);
void lb_tables_threads(writer_t *w);
void lb_tables_objects(writer_t *w);
/* A process-shared object's accrual as this process's share of it: held
 * (blamed + ended from outside the tree) and hand-off. */
struct lb_object_stats;
void lb_tables_shared_accrual(const struct lb_object_stats *s, double *held, double *handoff);
void lb_tables_run(writer_t *w, const char *reason, uint64_t samples, uint64_t dropped);
/* This image's executable (/proc/self/exe), read once per image and
 * handed to fork children; own: a buffer for a caller that races the
 * first read. */
const char *lb_tables_executable(char *own, size_t size);
/* This image's command line as it began (argv joined; a process title
 * may rewrite argv later). */
const char *lb_tables_command_line(void);
#endif
