/* Unit tests for a batch's meta rows (src/common/spool_records.c with
 * src/common/meta_known.h): records spooled through lb_spool_put and
 * merged through lb_spool_stage and lb_spool_merge leave the run's meta
 * as every row's upsert would. A record SQLite refuses (a fractional
 * module id) is undone whole, its meta rows with it, and the merge's
 * view of the meta forgets them: the next record's setting, which the
 * refused one carried first, is added. */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/ddl.h"
#include "common/rowlog.h"
#include "common/spool.h"
#include "memory_db.h"
#include "spool_db.h"

#define RUN_KEY "k1"

/* The run's database made in a fresh directory, as `run` makes it. */
static sqlite3 *fresh_db(char *db, size_t size)
{
    spool_db_fresh(db, size);
    char why[256];
    ASSERT_TRUE(lb_sqlite_open(why, sizeof why));
    sqlite3 *d = NULL;
    ASSERT_EQ(sqlite3_open_v2(db, &d, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL), SQLITE_OK);
    ASSERT_EQ(lb_ddl_create(d, "main"), SQLITE_OK);
    ASSERT_EQ(lb_ddl_meta(d, "main", "lockblame"), SQLITE_OK);
    return d;
}

/* Process pid's record into the spool: its run row, a counter at 0 and
 * a setting; with `refused`, a module row SQLite refuses. */
static void put_record(const char *db, int pid, const char *setting, bool refused)
{
    lb_rowlog_t log = { 0 }, row = { 0 };
    lb_rowlog_reset(&log, true);
    lb_rowlog_reset(&row, false);
    lb_rowlog_text(&row, 1, "spool_meta");
    lb_rowlog_int(&row, 3, pid);
    lb_rowlog_double(&row, 9, 1000.0 + pid);
    lb_rowlog_double(&row, 10, 0.5);
    lb_rowlog_int(&row, 11, 1);
    lb_rowlog_text(&row, 17, RUN_KEY);
    lb_rowlog_add(&log, LB_ROW_RUN, &row);
    lb_rowlog_text(&row, 1, "samples_taken");
    lb_rowlog_text(&row, 2, "0");
    lb_rowlog_add(&log, LB_ROW_META, &row);
    lb_rowlog_text(&row, 1, "a_setting");
    lb_rowlog_text(&row, 2, setting);
    lb_rowlog_add(&log, LB_ROW_META, &row);
    if (refused) {
        lb_rowlog_double(&row, 1, 1.5);
        lb_rowlog_text(&row, 2, "/m");
        lb_rowlog_int(&row, 3, 0);
        lb_rowlog_add(&log, LB_ROW_MODULE, &row);
    }
    lb_rowlog_seal(&log);
    ASSERT_FALSE(lb_rowlog_failed(&log));
    ASSERT_EQ(lb_spool_put(db, RUN_KEY, log.bytes, log.len), 0);
    lb_rowlog_free(&log);
    lb_rowlog_free(&row);
}

static void test_refused_record_meta_forgotten(void)
{
    char db[4096];
    sqlite3 *d = fresh_db(db, sizeof db);
    put_record(db, 101, "from 101", true);
    put_record(db, 102, "from 102", false);
    put_record(db, 103, "from 103", false);
    lb_spool_batch_t b;
    ASSERT_EQ(lb_spool_stage(d, db, RUN_KEY, "main", LB_SPOOL_TAKE_ALL, 0, &b), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(d, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
    ASSERT_EQ(lb_spool_merge(&b), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(d, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    unsigned bad = b.bad;
    lb_spool_finish(&b, true);
    ASSERT_EQ(bad, 1u);
    char *runs =
        memory_db_text(d, "SELECT group_concat(pid) FROM (SELECT pid FROM run ORDER BY id)");
    ASSERT_STR_EQ(runs, "102,103");
    char *setting = memory_db_text(d, "SELECT value FROM meta WHERE key = 'a_setting'");
    ASSERT_STR_EQ(setting, "from 102");
    char *samples = memory_db_text(d, "SELECT value FROM meta WHERE key = 'samples_taken'");
    ASSERT_STR_EQ(samples, "0");
    free(runs);
    free(setting);
    free(samples);
    sqlite3_close(d);
    spool_db_remove(db);
}

CHECK_MAIN(test_refused_record_meta_forgotten)
