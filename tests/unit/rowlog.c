/* Unit tests for src/common/rowlog.h: a profile's rows logged and
 * replayed leave a database exactly as the same statements run directly
 * do (every column's type and bits: integers, doubles, text, blobs,
 * NULL for a parameter not bound), including an upsert that adds to an
 * earlier row, an insert that reads rows before it (an idle helper's
 * structural rows), and a row that breaks a key and is not inserted while
 * the rows after it are. The same log replays into another schema.
 * Bytes that are not a log (another header, a row cut short, an unknown
 * kind or type, a parameter the statement lacks) are SQLITE_CORRUPT.
 * Each kind names the profile table its statement inserts into. A
 * merger's shifted statements add records to a stage as a replay into a
 * profile of their own and lb_db_merge's copy of it would, ids and all. */
#include "check.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ddl.h"
#include "common/rowlog.h"
#include "memory_db.h"

static sqlite3 *open_profile(void)
{
    sqlite3 *db = open_memory_db();
    ASSERT_EQ(lb_ddl_create_profile(db, "main"), SQLITE_OK);
    return db;
}

enum {
    INT = 1,
    DOUBLE,
    TEXT,
    BLOB
};

typedef struct value {
    int index, type;
    long long i;
    double d;
    const char *s; /* text, or a blob's bytes (n of them) */
    int n;
} value_t;

typedef struct row {
    enum lb_row_kind kind;
    value_t v[8];
} row_t;

#define I(k, v)                         \
    {                                   \
        .index = k, .type = INT, .i = v \
    }
#define D(k, v)                            \
    {                                      \
        .index = k, .type = DOUBLE, .d = v \
    }
#define T(k, v)                          \
    {                                    \
        .index = k, .type = TEXT, .s = v \
    }
#define B(k, v, len)                               \
    {                                              \
        .index = k, .type = BLOB, .s = v, .n = len \
    }

/* The rows a small profile's write makes, in its order. */
static const row_t rows[] = {
    { LB_ROW_NODE, { I(1, 0), I(4, 0) } }, /* the root: parent, frame NULL */
    { LB_ROW_MODULE, { I(1, 1), T(2, "/usr/lib/it's.so"), I(3, 4096) } },
    { LB_ROW_FRAME, { I(1, 1), I(2, 1), I(3, 0x1234), T(4, "worker"), I(6, 42) } },
    { LB_ROW_NODE, { I(1, 1), I(2, 0), I(3, 1), I(4, 1) } },
    { LB_ROW_METRIC, { I(1, 1), I(2, 7), D(3, 0.1), D(5, 1.0 / 3) } },
    /* the same (node, thread): breaks metric's key, not inserted */
    { LB_ROW_METRIC, { I(1, 1), I(2, 7), D(3, 9.0) } },
    { LB_ROW_SITE, { I(1, 1), I(2, 7), T(3, "mutex"), I(4, 5), I(6, 2) } },
    { LB_ROW_SITE, { I(1, 1), I(2, 7), T(3, "mutex"), I(4, 3), I(6, 1) } },
    { LB_ROW_BLAME, { I(1, 9), I(2, 1), I(3, 7), D(4, 0.25), I(5, 2) } },
    { LB_ROW_BLAME, { I(1, 9), I(2, 1), I(3, 7), D(4, 1e-9), I(5, 1) } },
    { LB_ROW_BLAME, { I(1, 9), I(2, 0), I(3, 8), D(4, 0.5), I(5, 1) } },
    { LB_ROW_BLAME, { I(1, 3), I(2, 1), I(3, 7), D(4, 0.75), I(5, 1) } },
    { LB_ROW_IDLE_HELPER, { I(1, 8), I(2, 9), T(3, "cond"), D(4, 0.5), D(5, 2.5), D(6, 0.6) } },
    { LB_ROW_FUNCTIONS, { T(1, "ab12"), T(2, "/bin/x"), B(3, "a\0b\0", 4) } },
    { LB_ROW_META, { T(1, "schema_version"), T(2, "9") } },
    { LB_ROW_RUN, { T(1, "prog -x"), I(3, 4242), D(9, 1.7e9), T(17, "k.1") } },
};
#define NROWS (sizeof rows / sizeof *rows)

/* A record with a row of every kind and every reference an id: its own
 * root node, frames and nodes, threads, objects, their blame, waits. */
static const row_t record_rows[] = {
    { LB_ROW_META, { T(1, "schema_version"), T(2, "10") } },
    { LB_ROW_META, { T(1, "samples_total"), T(2, "7") } },
    { LB_ROW_META, { T(1, "unsampled_cpu_s"), T(2, "0.25") } },
    { LB_ROW_META, { T(1, "event"), T(2, "timer") } },
    { LB_ROW_RUN,
      { T(1, "prog -x  "), T(2, "/bin/prog"), I(3, 4242), D(9, 1.7e9), I(15, 1), I(16, 99),
        T(17, "k.1") } },
    { LB_ROW_NODE, { I(1, 0), I(4, 0) } },
    { LB_ROW_MODULE, { I(1, 1), T(2, "/usr/lib/x.so"), I(3, 4096), T(4, "ab12") } },
    { LB_ROW_FRAME, { I(1, 1), I(2, 1), I(3, 0x1234), T(4, "worker"), I(6, 42) } },
    { LB_ROW_FRAME, { I(1, 2), I(2, 1), I(3, 0x99), I(6, -1) } },
    { LB_ROW_NODE, { I(1, 1), I(2, 0), I(3, 1), I(4, 1) } },
    { LB_ROW_NODE, { I(1, 2), I(2, 1), I(3, 2), I(4, 2) } },
    { LB_ROW_THREAD, { I(1, 1), I(2, 100), I(3, 1), I(4, 0), D(5, 0.5), I(8, 3), D(10, 0.1) } },
    { LB_ROW_THREAD, { I(1, 2), I(2, 101), I(3, 0), I(4, 2), D(6, 1.5) } },
    { LB_ROW_WINDOW_THREAD, { I(1, 3), I(2, 102), I(3, 2), D(4, 0.25) } },
    { LB_ROW_METRIC, { I(1, 2), I(2, 1), D(3, 0.1), D(5, 1.0 / 3) } },
    { LB_ROW_METRIC, { I(1, 0), I(2, 2), D(3, 0.2) } },
    { LB_ROW_SITE, { I(1, 1), I(2, 1), T(3, "mutex"), I(4, 5), I(6, 2) } },
    { LB_ROW_SITE, { I(1, 1), I(2, 1), T(3, "mutex"), I(4, 3), I(6, 1) } },
    { LB_ROW_SITE, { I(1, 0), I(2, 2), T(3, "cond"), I(4, 1) } },
    { LB_ROW_OBJECT,
      { I(1, 1), T(2, "mutex"), I(3, 0x7000), I(4, 2), I(5, 9), D(7, 0.5), I(11, 4) } },
    { LB_ROW_OBJECT, { I(1, 2), T(2, "cond"), I(3, 0x7100), I(4, 0) } },
    { LB_ROW_WINDOW_OBJECT, { I(1, 3), T(2, "sem"), I(3, 0x7200), I(4, 2), D(6, 0.125) } },
    { LB_ROW_BLAME, { I(1, 1), I(2, 2), I(3, 1), D(4, 0.25), I(5, 2) } },
    { LB_ROW_BLAME, { I(1, 1), I(2, 0), I(3, 2), D(4, 0.5), I(5, 1) } },
    { LB_ROW_STRUCTURAL,
      { I(1, 1), I(2, 2), T(3, "join"), D(4, 0.5), D(5, 2.5), I(6, 0), I(7, 2), I(8, 2) } },
    { LB_ROW_STRUCTURAL, { I(1, 2), I(2, 1), T(3, "cond"), D(4, 0.5), I(6, 1), I(7, 0) } },
    { LB_ROW_IDLE_HELPER, { I(1, 2), I(2, 1), T(3, "cond"), D(4, 0.5), D(5, 2.5), D(6, 0.6) } },
    { LB_ROW_SYMBOL, { T(1, "ab12"), T(2, "/usr/lib/x.so"), I(3, 0x99), I(4, 0), T(5, "f") } },
    { LB_ROW_FUNCTIONS, { T(1, "ab12"), T(2, "/usr/lib/x.so"), B(3, "a\0b\0", 4) } },
};
#define NRECORD (sizeof record_rows / sizeof *record_rows)

static void bind_direct(sqlite3_stmt *st, const value_t *v)
{
    switch (v->type) {
    case INT:
        sqlite3_bind_int64(st, v->index, v->i);
        break;
    case DOUBLE:
        sqlite3_bind_double(st, v->index, v->d);
        break;
    case TEXT:
        sqlite3_bind_text(st, v->index, v->s, -1, SQLITE_STATIC);
        break;
    case BLOB:
        sqlite3_bind_blob(st, v->index, v->s, v->n, SQLITE_STATIC);
        break;
    }
}

static void log_value(lb_rowlog_t *row, const value_t *v)
{
    switch (v->type) {
    case INT:
        lb_rowlog_int(row, v->index, v->i);
        break;
    case DOUBLE:
        lb_rowlog_double(row, v->index, v->d);
        break;
    case TEXT:
        lb_rowlog_text(row, v->index, v->s);
        break;
    case BLOB:
        lb_rowlog_blob(row, v->index, v->s, (size_t)v->n);
        break;
    }
}

static sqlite3_stmt *prepare_kind(sqlite3 *db, enum lb_row_kind kind, const char *schema)
{
    sqlite3_stmt *st = lb_row_prepare(db, kind, schema);
    ASSERT_NOT_NULL(st);
    return st;
}

/* The rows run directly, as the writer ran them before it logged them. */
static void insert_direct(sqlite3 *db)
{
    for (size_t r = 0; r < NROWS; r++) {
        sqlite3_stmt *st = prepare_kind(db, rows[r].kind, "main");
        for (int i = 0; i < 8 && rows[r].v[i].index; i++)
            bind_direct(st, &rows[r].v[i]);
        int rc = sqlite3_step(st);
        ASSERT_TRUE(rc == SQLITE_DONE || (rc & 0xff) == SQLITE_CONSTRAINT);
        sqlite3_finalize(st);
    }
}

static void log_these(lb_rowlog_t *log, const row_t *these, size_t n)
{
    lb_rowlog_t row = { 0 };
    lb_rowlog_reset(log, true);
    for (size_t r = 0; r < n; r++) {
        for (int i = 0; i < 8 && these[r].v[i].index; i++)
            log_value(&row, &these[r].v[i]);
        lb_rowlog_add(log, these[r].kind, &row);
    }
    lb_rowlog_free(&row);
    ASSERT_FALSE(lb_rowlog_failed(log));
}

static void log_rows(lb_rowlog_t *log)
{
    log_these(log, rows, NROWS);
}

typedef struct statements {
    sqlite3 *db;
    const char *schema;
    sqlite3_stmt *st[LB_ROW_KINDS];
} statements_t;

static sqlite3_stmt *statement_of(void *ctx, enum lb_row_kind kind)
{
    statements_t *s = ctx;
    if (!s->st[kind])
        s->st[kind] = prepare_kind(s->db, kind, s->schema);
    return s->st[kind];
}

static int replay(sqlite3 *db, const char *schema, const unsigned char *bytes, size_t n)
{
    statements_t s = { .db = db, .schema = schema };
    int rc = lb_rowlog_replay(db, bytes, n, true, statement_of, &s);
    for (int k = 0; k < LB_ROW_KINDS; k++)
        sqlite3_finalize(s.st[k]);
    return rc;
}

/* Appends to a malloc'd string. */
static void append(char **all, size_t *len, const char *fmt, ...)
{
    char piece[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(piece, sizeof piece, fmt, ap);
    va_end(ap);
    ASSERT_TRUE(n >= 0 && (size_t)n < sizeof piece);
    *all = realloc(*all, *len + (size_t)n + 1);
    ASSERT_NOT_NULL(*all);
    memcpy(*all + *len, piece, (size_t)n + 1);
    *len += (size_t)n;
}

/* Every row of every profile table in schema, each column's type and
 * exact value, one string (compared whole; the caller frees it). */
static char *dump(sqlite3 *db, const char *schema)
{
    char *all = NULL;
    size_t len = 0;
    append(&all, &len, "%s", "");
    for (int t = 0; lb_ddl_tables[t] && strcmp(lb_ddl_tables[t], LB_DDL_PROFILE_END); t++) {
        char *q = sqlite3_mprintf("SELECT * FROM \"%w\".%s", schema, lb_ddl_tables[t]);
        sqlite3_stmt *st = NULL;
        ASSERT_EQ(sqlite3_prepare_v2(db, q, -1, &st, NULL), SQLITE_OK);
        sqlite3_free(q);
        while (sqlite3_step(st) == SQLITE_ROW) {
            append(&all, &len, "%s:", lb_ddl_tables[t]);
            for (int c = 0; c < sqlite3_column_count(st); c++) {
                int type = sqlite3_column_type(st, c);
                if (type == SQLITE_FLOAT)
                    append(&all, &len, " f%a", sqlite3_column_double(st, c));
                else if (type == SQLITE_INTEGER)
                    append(&all, &len, " i%lld", (long long)sqlite3_column_int64(st, c));
                else if (type == SQLITE_NULL)
                    append(&all, &len, " null");
                else
                    append(&all, &len, " t%d'%.*s'", type, sqlite3_column_bytes(st, c),
                           (const char *)sqlite3_column_blob(st, c));
            }
            append(&all, &len, "\n");
        }
        sqlite3_finalize(st);
    }
    return all;
}

static void test_replay_equals_direct(void)
{
    sqlite3 *direct = open_profile(), *replayed = open_profile();
    insert_direct(direct);
    lb_rowlog_t log = { 0 };
    log_rows(&log);
    ASSERT_EQ(replay(replayed, "main", log.bytes, log.len), SQLITE_OK);
    char *a = dump(direct, "main"), *b = dump(replayed, "main");
    ASSERT_STR_EQ(a, b);
    /* what the rows themselves say: the upserts added, the second metric
     * row kept out, the idle helper's rows made from object 9's blame */
    ASSERT_NOT_NULL(strstr(a, "site: i1 i7 t3'mutex' i8 null i3\n"));
    ASSERT_NOT_NULL(strstr(a, "metric: i1 i7 f0x1.999999999999ap-4"));
    ASSERT_NULL(strstr(a, "f0x1.2p+3")); /* 9.0: the row that broke the key */
    ASSERT_NOT_NULL(strstr(a, "structural_wait: i8 i9 t3'cond' f0x1p-1 f0x1.4p+1 i0 i1 i7"));
    ASSERT_NOT_NULL(strstr(a, "structural_wait: i8 i9 t3'cond' f0x1p-1 f0x1.4p+1 i0 null null"));
    ASSERT_NULL(strstr(a, "structural_wait: i8 i3")); /* object 3 is not the helper's */
    ASSERT_NOT_NULL(strstr(a, "module_function: t3'ab12' t3'/bin/x' t4'a"));
    free(a);
    free(b);
    /* another schema takes the same log */
    ASSERT_EQ(sqlite3_exec(replayed, "ATTACH ':memory:' AS spool", NULL, NULL, NULL), SQLITE_OK);
    ASSERT_EQ(lb_ddl_create_profile(replayed, "spool"), SQLITE_OK);
    ASSERT_EQ(replay(replayed, "spool", log.bytes, log.len), SQLITE_OK);
    a = dump(direct, "main");
    b = dump(replayed, "spool");
    ASSERT_STR_EQ(a, b);
    free(a);
    free(b);
    lb_rowlog_free(&log);
    sqlite3_close(direct);
    sqlite3_close(replayed);
}

/* The shifted statements into schema "b". */
typedef struct shifted {
    sqlite3 *db;
    lb_db_shifts_t shifts;
    sqlite3_stmt *st[LB_ROW_KINDS];
} shifted_t;

static sqlite3_stmt *shifted_of(void *ctx, enum lb_row_kind kind)
{
    shifted_t *s = ctx;
    if (!s->st[kind]) {
        s->st[kind] = lb_db_prepare_sql(s->db, lb_row_sql_shifted(kind, "b"));
        ASSERT_NOT_NULL(s->st[kind]);
    }
    lb_row_bind_shifts(s->st[kind], &s->shifts);
    return s->st[kind];
}

static void exec(sqlite3 *db, const char *sql)
{
    ASSERT_EQ(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
}

/* Three records added to "a" by a replay into "spool" and a merge each,
 * and to "b" by the shifted statements: the same rows, ids, exec
 * generations, meta sums and names. */
static void test_shifted_equals_merge(void)
{
    sqlite3 *db = open_memory_db();
    exec(db, "ATTACH ':memory:' AS a");
    exec(db, "ATTACH ':memory:' AS b");
    exec(db, "ATTACH ':memory:' AS spool");
    ASSERT_EQ(lb_ddl_create(db, "a"), SQLITE_OK);
    ASSERT_EQ(lb_ddl_create(db, "b"), SQLITE_OK);
    exec(db, "INSERT INTO b.node VALUES(0, NULL, NULL, 0)");
    lb_rowlog_t log = { 0 };
    log_these(&log, record_rows, NRECORD);
    shifted_t sh = { .db = db };
    for (int r = 0; r < 3; r++) {
        exec(db, "DETACH spool");
        exec(db, "ATTACH ':memory:' AS spool");
        ASSERT_EQ(lb_ddl_create_profile(db, "spool"), SQLITE_OK);
        ASSERT_EQ(replay(db, "spool", log.bytes, log.len), SQLITE_OK);
        ASSERT_EQ(lb_db_merge(db, "spool", "a", 0), SQLITE_OK);

        ASSERT_EQ(lb_db_merge_shifts(db, "b", &sh.shifts, NULL), SQLITE_OK);
        ASSERT_TRUE(r == 0 || sh.shifts.node > 1);
        ASSERT_EQ(lb_rowlog_replay(db, log.bytes, log.len, true, shifted_of, &sh), SQLITE_OK);
    }
    /* a frame row's value 10: past a frame's 6 values, though the shifted
     * statement takes parameters up to its shifts' */
    unsigned char bad[LB_ROWLOG_HEADER + 12] = { 0 };
    memcpy(bad, log.bytes, LB_ROWLOG_HEADER);
    unsigned char row[] = { LB_ROW_FRAME, 10, INT, 1, 0, 0, 0, 0, 0, 0, 0, 0 };
    memcpy(bad + LB_ROWLOG_HEADER, row, sizeof row);
    ASSERT_EQ(lb_rowlog_replay(db, bad, sizeof bad, true, shifted_of, &sh), SQLITE_CORRUPT);
    for (int k = 0; k < LB_ROW_KINDS; k++)
        sqlite3_finalize(sh.st[k]);
    char *a = dump(db, "a"), *b = dump(db, "b");
    ASSERT_STR_EQ(a, b);
    /* what the copies say: the third image of the process, its command
     * trimmed, the counters summed, references shifted */
    ASSERT_NOT_NULL(strstr(a, "t3'prog -x' t3'/bin/prog' i4242"));
    ASSERT_NOT_NULL(strstr(a, " i1 i2 i99 t3'k.1'\n"));
    ASSERT_NOT_NULL(strstr(a, "meta: t3'samples_total' t3'21'\n"));
    ASSERT_NOT_NULL(strstr(a, "meta: t3'unsampled_cpu_s' t3'0.750000'\n"));
    ASSERT_NULL(strstr(a, "schema_version"));
    ASSERT_NOT_NULL(strstr(a, "symbol: t3'ab12' t3'/usr/lib/x.so' i153 i0 t3'f' null null\n"));
    free(a);
    free(b);
    lb_rowlog_free(&log);
    sqlite3_close(db);
}

/* Plain statements of several rows into schema "b" (lb_row_sql_rows). */
typedef struct batched {
    statements_t one; /* first: statement_of takes a batch's context */
    sqlite3_stmt *rows[LB_ROW_KINDS][LB_ROW_BATCH + 1];
    int edits; /* rows an edit saw */
} batched_t;

static void batched_free(batched_t *b)
{
    for (int k = 0; k < LB_ROW_KINDS; k++) {
        sqlite3_finalize(b->one.st[k]);
        for (int r = 0; r <= LB_ROW_BATCH; r++)
            sqlite3_finalize(b->rows[k][r]);
    }
}

/* How many kinds a statement of n rows was asked for (those of fewer
 * than LB_ROW_BATCH rows only where held rows were added through one). */
static int kinds_with(const batched_t *b, int n)
{
    int kinds = 0;
    for (int k = 0; k < LB_ROW_KINDS; k++)
        kinds += b->rows[k][n] != NULL;
    return kinds;
}

static sqlite3_stmt *batched_rows(void *ctx, enum lb_row_kind kind, int count)
{
    batched_t *b = ctx;
    ASSERT_TRUE(count >= 2 && count <= LB_ROW_BATCH);
    if (!b->rows[kind][count]) {
        char *one = lb_row_sql(kind, "b");
        char *sql = lb_row_sql_rows(one, count);
        sqlite3_free(one);
        if (!sql)
            return NULL; /* not of the form (an idle helper's) */
        b->rows[kind][count] = lb_db_prepare_sql(b->one.db, sql);
        ASSERT_NOT_NULL(b->rows[kind][count]);
    }
    return b->rows[kind][count];
}

/* A log whose kinds come in runs longer than a batch, with keys broken
 * inside a batch, upserts across batches, an idle helper between blame
 * rows, replayed a row at a time into "a" and in batches into "b": the
 * same rows in the same order. */
static void test_batched_equals_single(void)
{
    row_t many[80];
    size_t n = 0;
    for (int i = 1; i <= 15; i++) /* 8 + 4 + 2 + 1; node 5's row twice */
        many[n++] = (row_t){ LB_ROW_NODE, { I(1, i == 9 ? 5 : i), I(2, i - 1), I(3, i), I(4, i) } };
    for (int i = 0; i < 13; i++) /* two threads' sites, upserts across batches */
        many[n++] =
            (row_t){ LB_ROW_SITE, { I(1, i % 5), I(2, 7), T(3, "mutex"), I(4, i), I(6, 1) } };
    for (int i = 0; i < 6; i++)
        many[n++] =
            (row_t){ LB_ROW_BLAME, { I(1, 9), I(2, i % 3), I(3, 7), D(4, 0.25 * i), I(5, 1) } };
    many[n++] = (row_t){ LB_ROW_IDLE_HELPER,
                         { I(1, 8), I(2, 9), T(3, "cond"), D(4, 0.5), D(5, 2.5), D(6, 0.5) } };
    for (int i = 0; i < 9; i++) /* after the helper: not in its rows */
        many[n++] = (row_t){ LB_ROW_BLAME, { I(1, 9), I(2, 10 + i), I(3, 7), D(4, 1), I(5, 1) } };
    for (int i = 0; i < 10; i++)
        many[n++] = (row_t){ LB_ROW_METRIC, { I(1, i % 7), I(2, 7), D(3, 0.1 * i) } };
    many[n++] = (row_t){ LB_ROW_RUN, { T(1, "prog"), I(3, 42), T(17, "k.1") } };
    ASSERT_TRUE(n <= sizeof many / sizeof *many);
    lb_rowlog_t log = { 0 };
    log_these(&log, many, n);

    sqlite3 *db = open_memory_db();
    exec(db, "ATTACH ':memory:' AS a");
    exec(db, "ATTACH ':memory:' AS b");
    ASSERT_EQ(lb_ddl_create_profile(db, "a"), SQLITE_OK);
    ASSERT_EQ(lb_ddl_create_profile(db, "b"), SQLITE_OK);
    ASSERT_EQ(replay(db, "a", log.bytes, log.len), SQLITE_OK);
    batched_t b = { .one = { .db = db, .schema = "b" } };
    ASSERT_EQ(lb_rowlog_replay_rows(db, log.bytes, log.len, true, statement_of, batched_rows, NULL,
                                    NULL, &b),
              SQLITE_OK);
    char *da = dump(db, "a"), *dbb = dump(db, "b");
    ASSERT_STR_EQ(da, dbb);
    ASSERT_TRUE(kinds_with(&b, 8) > 0 && kinds_with(&b, 4) > 0 && kinds_with(&b, 2) > 0);
    /* the helper saw the 6 blame rows before it (3 contexts with blame),
     * not the 9 after it */
    int helper_rows = 0;
    for (const char *p = da; (p = strstr(p, "structural_wait: i8 i9 t3'cond'")); p++)
        helper_rows++;
    ASSERT_EQ(helper_rows, 3);
    batched_free(&b);
    free(da);
    free(dbb);
    lb_rowlog_free(&log);
    sqlite3_close(db);
}

/* An edit that names frame 2 and takes frame 3's file away. */
static void edit_frames(void *ctx, enum lb_row_kind kind, lb_row_value_t *v)
{
    ((batched_t *)ctx)->edits++;
    if (kind == LB_ROW_FRAME && v[1].i == 2) {
        v[4] = (lb_row_value_t){ .type = SQLITE_TEXT,
                                 .bytes = (const unsigned char *)"named",
                                 .n = 5 };
        v[6].i = 9;
    } else if (kind == LB_ROW_FRAME && v[1].i == 3) {
        v[5] = (lb_row_value_t){ 0 };
    }
}

/* A replay's edit changes what is bound, one row alone or in a batch:
 * a value set, one left unbound (NULL, not the row before's). */
static void test_replay_edit(void)
{
    row_t frames[12];
    for (int i = 0; i < 12; i++) /* 8 + 4 */
        frames[i] =
            (row_t){ LB_ROW_FRAME, { I(1, i + 1), I(2, 1), I(3, 16 * i), T(5, "f.c"), I(6, -1) } };
    lb_rowlog_t log = { 0 };
    log_these(&log, frames, 12);
    sqlite3 *db = open_memory_db();
    exec(db, "ATTACH ':memory:' AS b");
    ASSERT_EQ(lb_ddl_create_profile(db, "b"), SQLITE_OK);
    batched_t b = { .one = { .db = db, .schema = "b" } };
    ASSERT_EQ(lb_rowlog_replay_rows(db, log.bytes, log.len, true, statement_of, batched_rows, NULL,
                                    edit_frames, &b),
              SQLITE_OK);
    ASSERT_EQ(b.edits, 12);
    char *d = dump(db, "b");
    ASSERT_NOT_NULL(strstr(d, "frame: i2 i1 i16 t3'named' t3'f.c' i9\n"));
    ASSERT_NOT_NULL(strstr(d, "frame: i3 i1 i32 null null i-1\n"));
    ASSERT_NOT_NULL(strstr(d, "frame: i4 i1 i48 null t3'f.c' i-1\n"));
    ASSERT_TRUE(b.rows[LB_ROW_FRAME][4] && !b.rows[LB_ROW_FRAME][2]); /* 8 + 4 */
    batched_free(&b);
    free(d);
    lb_rowlog_free(&log);
    sqlite3_close(db);
}

/* Statements of several rows: each row's values numbered past the rows
 * before it, bare or numbered, the shifts shared, a key broken ignored
 * but an upsert's conflict updating. */
static void test_rows_sql(void)
{
    char *sql = lb_row_sql_rows("INSERT INTO \"s\".t VALUES(?,?)", 2);
    ASSERT_STR_EQ(sql, "INSERT OR IGNORE INTO \"s\".t VALUES(?1,?2), (?33,?34)");
    sqlite3_free(sql);
    sql = lb_row_sql_rows("INSERT INTO t VALUES(?1 + ?21, f(?2, ?25)) ON CONFLICT DO NOTHING", 3);
    ASSERT_STR_EQ(sql, "INSERT INTO t VALUES(?1 + ?21, f(?2, ?25)), (?33 + ?21, f(?34, ?25)),"
                       " (?65 + ?21, f(?66, ?25)) ON CONFLICT DO NOTHING");
    sqlite3_free(sql);
    ASSERT_NULL(lb_row_sql_rows("INSERT INTO t SELECT ?1", 2));
}

/* bytes that are not a log: SQLITE_CORRUPT, and nothing of a bad header's
 * log replayed */
static void test_not_a_log(void)
{
    lb_rowlog_t log = { 0 };
    log_rows(&log);
    sqlite3 *db = open_profile();
    unsigned char *copy = malloc(log.len + 8);
    ASSERT_NOT_NULL(copy);

    memcpy(copy, log.bytes, log.len);
    copy[0] ^= 1; /* another magic */
    ASSERT_EQ(replay(db, "main", copy, log.len), SQLITE_CORRUPT);
    char *empty = dump(db, "main");
    ASSERT_STR_EQ(empty, "");
    free(empty);

    memcpy(copy, log.bytes, log.len);
    ASSERT_EQ(replay(db, "main", copy, log.len - 3), SQLITE_CORRUPT); /* cut short */

    memcpy(copy, log.bytes, LB_ROWLOG_HEADER);
    copy[LB_ROWLOG_HEADER] = LB_ROW_KINDS; /* an unknown kind */
    copy[LB_ROWLOG_HEADER + 1] = 0;
    ASSERT_EQ(replay(db, "main", copy, LB_ROWLOG_HEADER + 2), SQLITE_CORRUPT);

    unsigned char bad_type[] = { LB_ROW_META, 1, 9, 0 }; /* type 9 */
    memcpy(copy + LB_ROWLOG_HEADER, bad_type, sizeof bad_type);
    ASSERT_EQ(replay(db, "main", copy, LB_ROWLOG_HEADER + sizeof bad_type), SQLITE_CORRUPT);

    unsigned char bad_index[] = { LB_ROW_META, 3, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0 }; /* meta has 2 */
    memcpy(copy + LB_ROWLOG_HEADER, bad_index, sizeof bad_index);
    ASSERT_EQ(replay(db, "main", copy, LB_ROWLOG_HEADER + sizeof bad_index), SQLITE_CORRUPT);

    ASSERT_EQ(replay(db, "main", log.bytes, LB_ROWLOG_HEADER - 1), SQLITE_CORRUPT); /* no header */
    ASSERT_EQ(replay(db, "main", log.bytes, LB_ROWLOG_HEADER), SQLITE_OK);          /* no rows */

    /* a sealed log cut at a row's end: its length says it is not whole */
    size_t whole = log.len, row_end = 0;
    lb_rowlog_t one = { 0 }, first = { 0 };
    lb_rowlog_reset(&first, true);
    lb_rowlog_int(&one, 1, 0);
    lb_rowlog_int(&one, 4, 0);
    lb_rowlog_add(&first, LB_ROW_NODE, &one);
    row_end = first.len;
    ASSERT_EQ(memcmp(first.bytes, log.bytes, row_end), 0); /* the log's first row */
    lb_rowlog_seal(&log);
    ASSERT_EQ(replay(db, "main", log.bytes, row_end), SQLITE_CORRUPT);
    ASSERT_EQ(replay(db, "main", log.bytes, whole), SQLITE_OK);
    lb_rowlog_free(&one);
    lb_rowlog_free(&first);

    free(copy);
    lb_rowlog_free(&log);
    sqlite3_close(db);
}

/* each kind's table is the one its statement inserts into, a profile's
 * table (a merger of records empties only the tables they filled) */
static void test_row_tables(void)
{
    for (int k = 0; k < LB_ROW_KINDS; k++) {
        const char *table = lb_row_table((enum lb_row_kind)k);
        ASSERT_NOT_NULL(table);
        char *sql = lb_row_sql((enum lb_row_kind)k, "s");
        char *into = sqlite3_mprintf("INTO \"s\".%s ", table);
        ASSERT_NOT_NULL(sql);
        ASSERT_NOT_NULL(into);
        ASSERT_NOT_NULL(strstr(sql, into));
        int t = 0;
        while (lb_ddl_tables[t] && strcmp(lb_ddl_tables[t], LB_DDL_PROFILE_END) != 0 &&
               strcmp(lb_ddl_tables[t], table) != 0)
            t++;
        ASSERT_STR_EQ(lb_ddl_tables[t], table);
        sqlite3_free(into);
        sqlite3_free(sql);
        /* a row's values are its statement's parameters, below the shifts */
        sqlite3 *db = open_profile();
        sqlite3_stmt *st = prepare_kind(db, (enum lb_row_kind)k, "main");
        ASSERT_EQ(sqlite3_bind_parameter_count(st), lb_row_values((enum lb_row_kind)k));
        ASSERT_TRUE(lb_row_values((enum lb_row_kind)k) < LB_ROW_SHIFT_PARAM);
        sqlite3_finalize(st);
        sqlite3_close(db);
    }
    ASSERT_EQ(lb_row_table(LB_ROW_KINDS), NULL);
}

CHECK_MAIN(test_replay_equals_direct, test_shifted_equals_merge, test_batched_equals_single,
           test_replay_edit, test_rows_sql, test_not_a_log, test_row_tables)
