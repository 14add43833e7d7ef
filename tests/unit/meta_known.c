/* Unit tests for src/common/meta_known.h: a merge that leaves out the
 * meta rows lb_meta_known_changes calls no change leaves dst's meta
 * exactly as running every row's upsert (lb_db_merge_meta_row_sql) does:
 * counters summed (leading zeros, 18 and 19 digits, a zero), settings
 * kept, the version keys untouched, the real-valued keys summed, values
 * that are not text, empty or hold a NUL byte, keys new to dst, and a
 * savepoint's undo after which the view is forgotten, and a key that
 * is not text, stored as its text, after which every row is added. The rows that
 * change nothing (a counter at 0, a setting already there, a version
 * key) are the ones left out. */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/db_merge.h"
#include "common/meta_known.h"
#include "memory_db.h"

static void exec(sqlite3 *db, const char *sql)
{
    char *err = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
        fprintf(stderr, "%s: %s\n", sql, err ? err : "?");
        ASSERT_TRUE(0);
    }
}

static lb_row_value_t text(const char *s)
{
    return (lb_row_value_t){ .type = SQLITE_TEXT,
                             .bytes = (const unsigned char *)s,
                             .n = (uint32_t)strlen(s) };
}

static lb_row_value_t integer(int64_t i)
{
    return (lb_row_value_t){ .type = SQLITE_INTEGER, .i = i };
}

static void bind(sqlite3_stmt *st, int at, const lb_row_value_t *v)
{
    if (v->type == SQLITE_TEXT)
        sqlite3_bind_text(st, at, (const char *)v->bytes, (int)v->n, SQLITE_STATIC);
    else if (v->type == SQLITE_INTEGER)
        sqlite3_bind_int64(st, at, v->i);
    else if (v->type == SQLITE_FLOAT)
        sqlite3_bind_double(st, at, v->d);
    else
        sqlite3_bind_null(st, at);
}

static void upsert(sqlite3 *db, const char *schema, const lb_row_value_t *key,
                   const lb_row_value_t *value)
{
    char *sql = lb_db_merge_meta_row_sql(schema);
    sqlite3_stmt *st = NULL;
    ASSERT_EQ(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    bind(st, 1, key);
    bind(st, 2, value);
    ASSERT_EQ(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    sqlite3_free(sql);
}

/* schema's meta rows, each as key|type|value, in key order. */
static char *dump(sqlite3 *db, const char *schema)
{
    char *q = sqlite3_mprintf("SELECT group_concat(key || '|' || typeof(value) || '|' ||"
                              " quote(value), char(10)) FROM (SELECT * FROM \"%w\".meta"
                              " ORDER BY key)",
                              schema);
    char *text = memory_db_text(db, q);
    sqlite3_free(q);
    return text;
}

/* Two schemas with the same meta rows: "all" runs every row, "known"
 * only the rows m calls a change. */
static sqlite3 *two_schemas(void)
{
    sqlite3 *db = open_memory_db();
    exec(db, "ATTACH ':memory:' AS every; ATTACH ':memory:' AS known");
    const char *schemas[] = { "every", "known" };
    for (int s = 0; s < 2; s++) {
        char *q = sqlite3_mprintf(
            "CREATE TABLE \"%w\".meta(key TEXT PRIMARY KEY, value TEXT);"
            "INSERT INTO \"%w\".meta VALUES('schema_version','10'),('writer','liblockblame'),"
            "('samples_taken','33'),('padded','007'),('blank',''),('mechanism','timer'),"
            "('big','123456789012345678'),('bigger','1234567890123456789'),"
            "('unsampled_cpu_s','0.500000'),('none',NULL),('rate','0.0'),('zero','0')",
            schemas[s], schemas[s]);
        exec(db, q);
        sqlite3_free(q);
    }
    return db;
}

/* The row into both schemas, "known" only where m calls it a change;
 * whether it did. */
static bool merge_row(sqlite3 *db, lb_meta_known_t *m, lb_row_value_t key, lb_row_value_t value)
{
    upsert(db, "every", &key, &value);
    bool changes = lb_meta_known_changes(m, db, "known", &key, &value);
    if (changes)
        upsert(db, "known", &key, &value);
    return changes;
}

/* Both schemas' meta the same; then m and db closed. */
static void assert_same_and_close(sqlite3 *db, lb_meta_known_t *m)
{
    char *a = dump(db, "every"), *b = dump(db, "known");
    ASSERT_STR_EQ(a, b);
    free(a);
    free(b);
    lb_meta_known_forget(m);
    sqlite3_close(db);
}

static void test_left_out_rows_change_nothing(void)
{
    sqlite3 *db = two_schemas();
    lb_meta_known_t m = { 0 };
    /* no change: left out */
    ASSERT_FALSE(merge_row(db, &m, text("schema_version"), text("11")));
    ASSERT_FALSE(merge_row(db, &m, text("writer"), text("lockblame")));
    ASSERT_FALSE(merge_row(db, &m, text("lockblame_version"), text("9.9")));
    ASSERT_FALSE(merge_row(db, &m, text("samples_taken"), text("0")));
    ASSERT_FALSE(merge_row(db, &m, text("samples_taken"), text("000")));
    ASSERT_FALSE(merge_row(db, &m, text("mechanism"), text("perf")));
    ASSERT_FALSE(merge_row(db, &m, text("mechanism"), text("7")));
    ASSERT_FALSE(merge_row(db, &m, text("rate"), text("0.0")));
    ASSERT_FALSE(merge_row(db, &m, text("blank"), text("5")));
    ASSERT_FALSE(merge_row(db, &m, text("samples_taken"), text("")));
    ASSERT_FALSE(merge_row(db, &m, text("samples_taken"), text("1.5")));
    ASSERT_FALSE(merge_row(db, &m, text("zero"), text("0")));
    /* changes: added */
    ASSERT_TRUE(merge_row(db, &m, text("samples_taken"), text("7")));
    ASSERT_TRUE(merge_row(db, &m, text("padded"), text("0"))); /* '007' becomes '7' */
    ASSERT_FALSE(merge_row(db, &m, text("padded"), text("0")));
    ASSERT_TRUE(merge_row(db, &m, text("big"), text("900000000000000000")));
    ASSERT_TRUE(merge_row(db, &m, text("bigger"), text("0"))); /* past 18 digits: not known */
    ASSERT_TRUE(merge_row(db, &m, text("bigger"), text("0")));
    ASSERT_TRUE(merge_row(db, &m, text("unsampled_cpu_s"), text("0.250000")));
    ASSERT_TRUE(merge_row(db, &m, text("unsampled_cpu_s"), text("0.000000")));
    ASSERT_TRUE(merge_row(db, &m, text("none"), text("3")));
    ASSERT_TRUE(merge_row(db, &m, text("fresh"), text("12")));
    ASSERT_TRUE(merge_row(db, &m, text("fresh"), text("30")));
    ASSERT_FALSE(merge_row(db, &m, text("fresh"), text("0")));
    ASSERT_TRUE(merge_row(db, &m, text("typed"), integer(5)));
    ASSERT_TRUE(merge_row(db, &m, text("typed"), integer(0)));
    ASSERT_TRUE(merge_row(db, &m, text("samples_taken"), integer(2)));
    ASSERT_TRUE(merge_row(db, &m, text("nulled"), (lb_row_value_t){ 0 }));
    ASSERT_TRUE(merge_row(db, &m, text("nulled"), text("4")));
    lb_row_value_t nul = { .type = SQLITE_TEXT, .bytes = (const unsigned char *)"1\0x", .n = 3 };
    ASSERT_TRUE(merge_row(db, &m, text("samples_taken"), nul));
    ASSERT_TRUE(merge_row(db, &m, text("samples_taken"), text("1")));
    ASSERT_TRUE(merge_row(db, &m, integer(42), text("1")));
    assert_same_and_close(db, &m);
}

/* A key that is not text is stored as its text: the rows after it, a
 * text key naming it among them, are all added. */
static void test_number_key_then_its_text(void)
{
    sqlite3 *db = two_schemas();
    lb_meta_known_t m = { 0 };
    ASSERT_FALSE(merge_row(db, &m, text("samples_taken"), text("0")));
    ASSERT_TRUE(merge_row(db, &m, integer(42), text("5")));
    ASSERT_TRUE(merge_row(db, &m, text("42"), text("abc")));
    ASSERT_TRUE(merge_row(db, &m, text("42"), text("3")));
    ASSERT_TRUE(merge_row(db, &m, text("samples_taken"), text("0")));
    char *d = dump(db, "known");
    ASSERT_NOT_NULL(strstr(d, "42|text|'8'"));
    free(d);
    assert_same_and_close(db, &m);
}

static void test_undo_forgets(void)
{
    sqlite3 *db = two_schemas();
    lb_meta_known_t m = { 0 };
    ASSERT_TRUE(merge_row(db, &m, text("samples_taken"), text("1")));
    exec(db, "SAVEPOINT record");
    ASSERT_TRUE(merge_row(db, &m, text("added_then_undone"), text("1")));
    ASSERT_TRUE(merge_row(db, &m, text("samples_taken"), text("5")));
    exec(db, "ROLLBACK TO record; RELEASE record");
    lb_meta_known_forget(&m);
    /* read again: the key undone is new again, the counter back at 34 */
    ASSERT_TRUE(merge_row(db, &m, text("added_then_undone"), text("0")));
    ASSERT_FALSE(merge_row(db, &m, text("samples_taken"), text("0")));
    ASSERT_TRUE(merge_row(db, &m, text("samples_taken"), text("5")));
    char *d = dump(db, "known");
    ASSERT_NOT_NULL(strstr(d, "samples_taken|text|'39'"));
    ASSERT_NOT_NULL(strstr(d, "added_then_undone|text|'0'"));
    free(d);
    assert_same_and_close(db, &m);
}

static void test_unreadable_dst_keeps_every_row(void)
{
    sqlite3 *db = open_memory_db();
    lb_meta_known_t m = { 0 };
    lb_row_value_t key = text("samples_taken"), zero = text("0");
    ASSERT_TRUE(lb_meta_known_changes(&m, db, "nowhere", &key, &zero));
    ASSERT_TRUE(lb_meta_known_changes(&m, db, "nowhere", &key, &zero));
    lb_meta_known_forget(&m);
    sqlite3_close(db);
}

CHECK_MAIN(test_left_out_rows_change_nothing, test_number_key_then_its_text, test_undo_forgets,
           test_unreadable_dst_keeps_every_row)
