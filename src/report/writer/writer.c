/* The exit write of one process: if the process recorded anything, build
 * its profile in an in-memory database (profile_db.h: created here, or the
 * one a forking parent handed down; cct_merge.c, tables.c), add it to
 * the run's database in one transaction (output.c), and print its summary
 * (summary.c).
 *
 * Runs once, on the finishing thread, after lb_sampler_quiesce(); other
 * threads may still run but no longer write CCTs. Uses malloc freely. */
#include "report/writer/writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "blame/mutex_sampled.h"
#include "blame/object_stats.h"
#include "common/frame_names.h"
#include "common/ledger.h"
#include "common/schema.h"
#include "common/scratch.h"
#include "common/spool.h"
#include "common/version.h"
#include "locks/lifecycle.h"
#include "locks/mon_gc.h"
#include "report/writer/ledger.h"
#include "report/writer/merger.h"
#include "report/writer/output.h"
#include "report/writer/profile_db.h"
#include "report/writer/spool_bound.h"
#include "report/writer/structural_write.h"
#include "report/writer/summary.h"
#include "report/writer/writer_int.h"
#include "util/std_fds.h"
#include "sampler/sampler.h"
#include "util/clock.h"
#include "util/decimal.h"
#include "util/lazy_deps.h"
#include "util/log.h"
#include "util/own_stack.h"
#include "util/pages.h"

static int exec(writer_t *w, const char *sql)
{
    char *err = NULL;
    int rc = sqlite3_exec(w->db, sql, NULL, NULL, &err);
    if (rc != SQLITE_OK) {
        if (!lb_ledger_failure_left(rc))
            lb_warn("cannot write profile: %s", err ? err : "sqlite error");
        sqlite3_free(err);
        return -1;
    }
    return 0;
}

int lb_wsql(writer_t *w, const char *sql)
{
    if (lb_wflush(w) != 0) {
        if (!lb_ledger_failure_left(w->error))
            lb_warn("cannot write profile: %s", sqlite3_errstr(w->error));
        return -1;
    }
    return exec(w, sql);
}

static sqlite3_stmt *replay_statement(void *ctx, enum lb_row_kind kind)
{
    writer_t *w = ctx;
    if (!w->replay[kind])
        w->replay[kind] = lb_profile_db_statement(w->db, kind);
    return w->replay[kind];
}

int lb_wflush(writer_t *w)
{
    int rc = SQLITE_OK;
    if (lb_rowlog_failed(&w->rows))
        rc = SQLITE_NOMEM;
    else if (!w->db) /* a write that began without one (lb_profile_db_take) */
        rc = lb_profile_db_new(&w->db);
    if (rc == SQLITE_OK && w->rows.len > LB_ROWLOG_HEADER) {
        bool own = sqlite3_get_autocommit(w->db);
        if (own)
            rc = sqlite3_exec(w->db, "BEGIN", NULL, NULL, NULL);
        if (rc == SQLITE_OK)
            rc = lb_rowlog_replay(w->db, w->rows.bytes, w->rows.len, true, replay_statement, w);
        if (own && rc == SQLITE_OK)
            rc = sqlite3_exec(w->db, "COMMIT", NULL, NULL, NULL);
        if (own && rc != SQLITE_OK)
            sqlite3_exec(w->db, "ROLLBACK", NULL, NULL, NULL);
    }
    /* the rows are in db or lost: either way the log starts again */
    lb_rowlog_reset(&w->rows, true);
    if (rc != SQLITE_OK && !w->error)
        w->error = rc;
    return rc == SQLITE_OK ? 0 : -1;
}

void lb_wrollback(writer_t *w)
{
    lb_rowlog_reset(&w->rows, true);
    sqlite3_exec(w->db, "ROLLBACK", NULL, NULL, NULL);
}

void lb_wopen_log(writer_t *w)
{
    lb_rowlog_reset(&w->rows, true);
}

void lb_wclose_log(writer_t *w)
{
    for (int k = 0; k < LB_ROW_KINDS; k++) {
        sqlite3_finalize(w->replay[k]);
        w->replay[k] = NULL;
        lb_rowlog_free(&w->stmts[k].values);
    }
    lb_rowlog_free(&w->rows);
    lb_u64map_free(&w->metric_keys);
}

lb_wstmt_t *lb_wprepare(writer_t *w, enum lb_row_kind kind)
{
    lb_wstmt_t *st = &w->stmts[kind];
    st->w = w;
    st->kind = kind;
    return st;
}

/* A write that commits anyway replays its log this often, so that its
 * memory is a log's worth, not a second copy of the profile. */
#define FLUSH_BYTES 65536

int lb_wstep(lb_wstmt_t *st)
{
    writer_t *w = st->w;
    lb_rowlog_add(&w->rows, st->kind, &st->values);
    if (lb_rowlog_failed(&w->rows))
        return -1;
    if (w->flush_early && w->rows.len >= FLUSH_BYTES)
        lb_wflush(w); /* a failure is in w->error, which the write's end reads */
    return 0;
}

/* docs/DESIGN.md "Process trees": a process recorded something when it had a
 * thread of its own, a sample (or CPU time enough to be sampled, which no
 * sample saw: lb_sampler_ran_sampled_work), a wait, or idleness on a
 * process-shared object that its record carries for the tree (blame its
 * releases took for other processes' waiters, the tree's hand-off or an
 * outsider's idleness its waits took, what it settled as the tree's last)
 * since it started (or forked; the fork child forgot its parent's counts,
 * interpose/fork_forget.c). */
bool lb_write_recorded_something(void)
{
    /* A fork child's registry holds only the forking thread and the
     * threads it created itself (exited ones included). */
    lb_thread_t *first = lb_thread_registry();
    if (first && first->next)
        return true;
    for (lb_thread_t *t = first; t; t = t->next) {
        if (t->sampler->samples || t->sampler->dropped || lb_sampler_ran_sampled_work(t))
            return true;
    }
    uint32_t count = lb_object_stats_count();
    for (uint32_t i = 1; i < count; i++) {
        lb_object_stats_t *s = lb_object_stats_at(i);
        if (s && s->addr &&
            (s->contended || s->wait_ns || s->blamed_ns > 0 || s->shared_handoff_ns != 0 ||
             s->outside_ns > 0 || s->settled_ns > 0))
            return true;
    }
    return false;
}

static uint32_t leaf_node_cb(void *ctx, uint32_t thread, uint32_t local)
{
    return lb_merge_leaf_node(ctx, thread, local);
}

void lb_wmeta(writer_t *w, const char *key, const char *value)
{
    lb_wstmt_t *st = lb_wprepare(w, LB_ROW_META);
    lb_wbind_text(st, 1, key);
    lb_wbind_text(st, 2, value);
    lb_wstep(st);
}

static void put_meta(void *w, const char *key, const char *value)
{
    lb_wmeta(w, key, value);
}

/* The meta rows, their numbers formatted without stdio (util/decimal.h). */
static void meta_number(writer_t *w, const char *key, uint64_t value)
{
    char v[LB_DECIMAL_U64_MAX + 1];
    lb_decimal_u64_str(v, sizeof v, value);
    lb_wmeta(w, key, v);
}

static void meta_rows(writer_t *w)
{
    meta_number(w, "schema_version", LB_SCHEMA_VERSION);
    lb_wmeta(w, "lockblame_version", LB_VERSION);
    meta_number(w, "orphans_reclaimed", lb_mon_gc_reclaimed());
    meta_number(w, "monitored_slots_used", lb_mon_slots_used());
    meta_number(w, "sampled_mutex_no_slot", lb_mutex_sampled_missed());
    lb_sampler_meta_each(put_meta, w);
}

/* The profile's rows into w's log. */
static int build(writer_t *w, const char *reason)
{
    uint64_t samples, dropped;
    w->now = lb_now_ns();
    lb_close_open_waits(w->now);
    w->ns_per_sample = lb_tables_ns_per_sample(&samples, &dropped);
    /* With the names a forking parent read, without a database of its
     * own (lb_profile_db_take), or leaving its names to the merge, the
     * run's database is opened only if the profile needs it (a name
     * missing, or a commit). */
    w->out_attached = !w->warm && !w->defer_names && w->db && lb_output_attach(w->db);
    lb_wopen_log(w);
    if (lb_merge_open(w) != 0)
        return -1;
    w->ins_site = lb_wprepare(w, LB_ROW_SITE);
    w->ins_blame = lb_wprepare(w, LB_ROW_BLAME);
    for (lb_thread_t *t = lb_thread_registry(); t; t = t->next) {
        if (lb_merge_thread(w, t) != 0)
            return -1;
        lb_tables_sites(w, t);
        lb_tables_object_blame(w, t);
    }
    lb_tables_threads(w);
    lb_write_structural(w, w->now, leaf_node_cb, w);
    lb_tables_objects(w);
    lb_tables_run(w, reason, samples, dropped);
    meta_rows(w);
    return lb_rowlog_failed(&w->rows) || w->error ? -1 : 0;
}

/* After the line that said why this process's profile could not be
 * written: its ledger slot says so, and the tree's root still counts its
 * tree (itself included) and prints the tree's summary. Returns -1. */
static int write_failed(bool process_ends)
{
    lb_spool_bound_release();
    lb_ledger_mark(LB_LEDGER_FAILED);
    lb_summary_after_write(NULL, lb_output_path(), process_ends);
    return -1;
}

/* Whether this process's profile may wait in the run's spool for the
 * next process that commits (common/spool.h): it is the last image of its
 * process (an exec'd image's generation follows its predecessor's), and
 * the tree's root has not yet ended (it adds the pending profiles when it
 * does) and is not this process. It then waits there unless the write
 * resolved a name the run's database lacked: a process that did adds its
 * profile now, so that later processes find the names (a name it found
 * in a function table there and keeps as a chain of its own goes in with
 * the pending profile, for the processes after that); or unless the
 * spool is full and this process takes the duty to commit
 * (spool_bound.h). */
static bool may_spool(bool process_ends)
{
    return process_ends && lb_spool_enabled() && !lb_output_tree_root() && lb_ledger_spool_open();
}

/* Whether a write whose profile may wait in the spool leaves what its
 * forking parent did not name to the merge (common/frame_names.h): not
 * when it prints its own summary, which names them, nor, under plain
 * LD_PRELOAD, before the run's database exists: the first processes to
 * end name their frames and add their profiles, so that a tree whose
 * root dies still leaves a database beside its records. `lockblame run`
 * makes the database if no process did (report/cli/run_merge.h). */
static bool may_defer_names(bool spoolable)
{
    struct stat st;
    return spoolable && !lb_summary_reads_own() &&
           (lb_summary_by_run() || (stat(lb_output_path(), &st) == 0 && st.st_size > 0));
}

/* SQLite loaded for the write; false after one line saying why not. */
static bool sqlite_ready(char *why, unsigned size)
{
    if (lb_sqlite_open_at_exit(why, size))
        return true;
    lb_warn("cannot write profile %s: %s", lb_output_path(), why);
    return false;
}

/* The frames the write left to the merge, named here when it commits
 * after all (common/frame_names.h). */
static int name_own_frames(writer_t *w)
{
    if (!w->unnamed_frames)
        return 0;
    int rc = lb_frame_names_fill(w->db, "main", NULL);
    lb_frame_names_release();
    if (rc != SQLITE_OK && !w->error)
        w->error = rc;
    return rc == SQLITE_OK ? 0 : -1;
}

/* The profile as a pending record: true when it is there for the root
 * (or added already). */
static bool spool(writer_t *w)
{
    lb_rowlog_seal(&w->rows);
    if (lb_output_spool(w->rows.bytes, w->rows.len) != 0)
        return false;
    uint32_t put = lb_spool_bound_count_record(); /* 0 without a ledger */
    if (put && put % LB_SPOOL_LOG_RECORDS == 0)
        lb_output_seal_spool(); /* a commit adds about its batch's worth at a time */
    /* the root may have closed the spool since may_spool: then it may not
     * have seen the record, and this process adds it (with any other) */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (!lb_ledger_spool_open()) {
        lb_output_merge_pending();
        lb_output_remove_spool(); /* made again by this record, after the root removed it */
    }
    return true;
}

static int write_profile(const char *reason);

/* The write, with the program's closed standard descriptors held while
 * SQLite runs (util/std_fds.h): an image that execs hands its descriptors
 * on, and the program's exit handlers may open files after it. */
int lb_write_profile(const char *reason)
{
    lb_merger_wait(); /* the root's merger ends first: this write adds what is left */
    unsigned held = lb_std_fds_hold();
    lb_ledger_final_write(true);
    int rc = write_profile(reason);
    lb_ledger_final_write(false);
    lb_std_fds_release(held);
    return rc;
}

/* The final write's failure: the log's, else the database's (SQLite is
 * asked only here: its pages stay untouched in a write that succeeds). */
static void say_failed(const writer_t *w)
{
    if (w->error)
        lb_output_cannot_write(w->error, sqlite3_errstr(w->error));
    else if (w->db && sqlite3_errcode(w->db) != SQLITE_OK)
        lb_output_cannot_write(sqlite3_errcode(w->db), sqlite3_errmsg(w->db));
    else
        lb_output_cannot_write(SQLITE_NOMEM, "out of memory");
}

/* The scratch memory's chunks: the first the area above the final
 * write's own stack (core/runtime.c), on the page table of the stack's
 * top, the rest reservations of their own. */
static void *scratch_chunk(size_t bytes)
{
    void *area = lb_own_stack_area(bytes);
    return area ? area : lb_pages_reserve(bytes);
}

static int write_profile(const char *reason)
{
    bool process_ends = strcmp(reason, "exec") != 0; /* an exec hands on */
    if (process_ends && lb_output_tree_root())
        lb_ledger_close_spool(); /* the tree ends with this write: see summary.c */
    if (!lb_write_recorded_something()) {
        /* nothing to write; the tree's root still adds the pending
         * profiles and says what its tree wrote (summary.c) */
        lb_summary_after_write(NULL, lb_output_path(), process_ends);
        return 0;
    }
    bool spoolable = may_spool(process_ends);
    if (spoolable)
        lb_scratch_on(scratch_chunk); /* the process ends after this write (common/scratch.h) */
    writer_t w = { .flush_early = !spoolable, .defer_names = may_defer_names(spoolable) };
    /* a write that leaves its names to the merge needs SQLite only if it
     * commits after all */
    char why[256];
    if (!w.defer_names && !sqlite_ready(why, sizeof why))
        return write_failed(process_ends);
    int rc = -1;
    if (lb_profile_db_take(&w.db, &w.warm, spoolable) == SQLITE_OK) /* profile_db.h */
        rc = build(&w, reason);
    lb_merge_finish(&w);
    /* a full spool: one process at a time commits instead (spool_bound.h) */
    bool may_wait = rc == 0 && spoolable && !w.resolved_names && lb_ledger_spool_open();
    bool on_duty = may_wait && lb_spool_bound_take_duty();
    bool spooled = may_wait && !on_duty && spool(&w);
    if (rc == 0 && !spooled && w.defer_names && !sqlite_ready(why, sizeof why)) {
        /* without SQLite a process on the bound's duty leaves its record
         * pending as it would have (the line said why) */
        lb_spool_bound_release();
        if (!on_duty || !spool(&w))
            return write_failed(process_ends);
        spooled = true;
    }
    if (rc == 0 && !spooled && (lb_wflush(&w) != 0 || name_own_frames(&w) != 0))
        rc = -1;
    if (rc != 0) /* one line: the log's failure, else the database's */
        say_failed(&w);
    else if (!spooled)
        rc = lb_output_commit(w.db, w.out_attached, w.empty);
    lb_spool_bound_release();
    /* a pending profile is in the database only for its own summary */
    bool own = !spooled || (lb_summary_reads_own() && lb_wflush(&w) == 0);
    if (rc == 0)
        lb_summary_after_write(own ? w.db : NULL, lb_output_path(), process_ends);
    if (spooled)
        return 0; /* the process ends: its memory is not freed page by page */
    lb_merge_close(&w);
    lb_wclose_log(&w);
    sqlite3_close(w.db);
    return rc == 0 ? 0 : write_failed(process_ends);
}
