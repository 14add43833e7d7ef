/* A profile as a log of rows: each insert of a process's exit write as
 * its statement's kind and its bound values, in the order the writer
 * made them, replayed later into any schema through the same statements.
 *
 * The writer records its rows here, not in SQLite: a process whose
 * profile waits in the run's spool (common/spool.h) writes the log as its
 * record and never runs SQLite, whose code and heap pages a fork child
 * would otherwise fault in one by one; a process that commits replays the
 * log into its in-memory profile first. Replay runs the statements in
 * the log's order, so an insert that reads earlier rows (an idle helper's
 * structural rows, an upsert) sees what it saw when run directly.
 *
 * Encoding (host byte order: a log is read on the machine that wrote
 * it): a 16-byte header (LB_ROWLOG_MAGIC with its '\0', the schema
 * version as 4 bytes, and the log's whole length as 4 bytes once it is
 * sealed, else 0); then
 * rows, each a kind byte, then its bound values, each a parameter index
 * byte (1..255) and a type byte with its value (int64 and double: 8
 * bytes; text and blob: a 4-byte length and the bytes), then a 0 byte.
 * A parameter not bound is NULL.
 *
 * Memory: a log grows through common/scratch.h (malloc, or scratch
 * memory on the thread of a spooled exit write); a failed allocation
 * marks it failed (lb_rowlog_failed) and later appends are dropped. Not thread-safe: one
 * log is one thread's. Used by the library's writer and by the CLI's
 * merge of pending records. Depends on SQLite (replay) and
 * common/db_merge.h's prepare. */
#ifndef LB_COMMON_ROWLOG_H
#define LB_COMMON_ROWLOG_H
#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/db_merge.h"

/* The statements a log's rows are replayed through. */
enum lb_row_kind {
    LB_ROW_FRAME,
    LB_ROW_MODULE,
    LB_ROW_NODE,
    LB_ROW_METRIC,
    LB_ROW_SITE,
    LB_ROW_BLAME,
    LB_ROW_THREAD,
    LB_ROW_OBJECT,
    LB_ROW_RUN,
    LB_ROW_STRUCTURAL,
    LB_ROW_IDLE_HELPER, /* structural rows from the object_blame rows before it */
    LB_ROW_SYMBOL,
    LB_ROW_FUNCTIONS,
    LB_ROW_META,
    LB_ROW_WINDOW_THREAD, /* a time window's thread row (window_write.c) */
    LB_ROW_WINDOW_OBJECT, /* a time window's sync_object row */
    LB_ROW_KINDS
};

/* The line of a frame row a process left unnamed: its module and offset
 * only, named where its record is merged (common/frame_names.h). A
 * database never holds such a row from a record of this magic: a merger
 * from before names at the merge, which would not name it, rejects the
 * magic (LB_ROWLOG_MAGIC). */
#define LB_ROWLOG_UNNAMED_LINE (-1)

/* kind's statement on the tables of schema, sqlite3_mprintf'd (the
 * caller sqlite3_frees it); NULL when out of memory. */
char *lb_row_sql(enum lb_row_kind kind, const char *schema);
/* ... prepared on db (the caller finalizes it); NULL on failure. */
sqlite3_stmt *lb_row_prepare(sqlite3 *db, enum lb_row_kind kind, const char *schema);
/* kind's statement that adds a record's row to a schema holding other
 * records' (the run's database, common/spool_records.h), its ids shifted as
 * lb_db_merge would shift them in a copy of the record's profile: the
 * shifts bound by lb_row_bind_shifts; a row that carries no ids is
 * added as a merge adds it (a meta row's counter summed, a name the
 * schema lacks). NULL when out of memory. */
char *lb_row_sql_shifted(enum lb_row_kind kind, const char *schema);
sqlite3_stmt *lb_row_prepare_shifted(sqlite3 *db, enum lb_row_kind kind, const char *schema);
/* The first of the parameters a shifted statement takes the shifts from;
 * every value a log holds has an index below it. */
#define LB_ROW_SHIFT_PARAM 21
/* Binds a shifted statement's shifts; a replay unbinds only the values
 * it bound, so they hold for every row until bound again (or until a
 * step fails: its bindings are then cleared whole, to keep the
 * connection's error). */
void lb_row_bind_shifts(sqlite3_stmt *st, const lb_db_shifts_t *s);
/* How many values a row of kind holds (its statement's parameters, ?1
 * to ?N; below LB_ROW_SHIFT_PARAM); 0 for no kind. A replay takes a row
 * that names another parameter for bytes that are not a log. */
int lb_row_values(enum lb_row_kind kind);
/* The table kind's statement inserts into (lb_ddl_tables' name); NULL
 * for no kind. */
const char *lb_row_table(enum lb_row_kind kind);

typedef struct lb_rowlog {
    unsigned char *bytes;
    size_t len, cap;
    bool failed; /* an append found no memory: the log is incomplete */
} lb_rowlog_t;

/* A log's bytes up to the rows: what a record starts with. */
#define LB_ROWLOG_HEADER       16
/* Its magic, and the one before: a merger of an earlier build reads only
 * LB_ROWLOG_MAGIC_BEFORE, and one from before names at the merge would
 * leave a frame left to the merge (LB_ROWLOG_UNNAMED_LINE) in the
 * database as it is; each renames a record of this magic .bad instead.
 * This build reads both (the same encoding). */
#define LB_ROWLOG_MAGIC        "LBROWS2"
#define LB_ROWLOG_MAGIC_BEFORE "LBROWS1"

/* Empty the log, keeping its memory; with header, start it with the
 * header (a log that is a record), else with nothing (a row's values). */
void lb_rowlog_reset(lb_rowlog_t *log, bool header);
void lb_rowlog_free(lb_rowlog_t *log);
bool lb_rowlog_failed(const lb_rowlog_t *log);

/* Write the log's length into its header: a record (common/spool.h) is
 * sealed, so that one cut short at a row's end is not read as whole. */
void lb_rowlog_seal(lb_rowlog_t *log);

/* One value of the row being built (a log that holds one row's values). */
void lb_rowlog_int(lb_rowlog_t *row, int index, int64_t value);
void lb_rowlog_double(lb_rowlog_t *row, int index, double value);
/* text NULL binds nothing (NULL) */
void lb_rowlog_text(lb_rowlog_t *row, int index, const char *text);
void lb_rowlog_blob(lb_rowlog_t *row, int index, const void *bytes, size_t n);
/* Append a row of kind with the values in row to log; row is emptied. */
void lb_rowlog_add(lb_rowlog_t *log, enum lb_row_kind kind, lb_rowlog_t *row);

/* Where replay finds kind's statement: prepared for its target schema,
 * owned by the caller; NULL on failure. */
typedef sqlite3_stmt *(*lb_row_statement_fn)(void *ctx, enum lb_row_kind kind);

/* Replay the rows in bytes[0..n) (a log's rows, with its header when
 * header is set). A row that breaks a constraint is not inserted, as the
 * statement run directly would not have inserted it. Returns SQLITE_OK;
 * SQLITE_CORRUPT for bytes that are not a log (a wrong header, a sealed
 * log of another length, a row cut short, an unknown kind or type);
 * another SQLite code when a statement could not be prepared or a step
 * failed for want of memory or disk. */
int lb_rowlog_replay(sqlite3 *db, const unsigned char *bytes, size_t n, bool header,
                     lb_row_statement_fn statement, void *ctx);
/* A row's value as a log holds it: type SQLITE_INTEGER, SQLITE_FLOAT,
 * SQLITE_TEXT or SQLITE_BLOB (bytes[0..n) in the log), or 0 where the
 * row binds none (NULL). */
typedef struct lb_row_value {
    int type;
    int64_t i;
    double d;
    const unsigned char *bytes;
    uint32_t n;
} lb_row_value_t;
/* What lb_rowlog_each calls for each row: its kind and its values by
 * parameter index (values[1 .. lb_row_values(kind)]); nonzero stops the
 * walk. */
typedef int (*lb_row_visit_fn)(void *ctx, enum lb_row_kind kind, const lb_row_value_t *values);
/* Walk a log's rows (with its header) without SQL: SQLITE_OK; what
 * visit returned to stop (visit NULL: none); SQLITE_CORRUPT where the
 * bytes are not a log, as lb_rowlog_replay would find before a row. */
int lb_rowlog_each(const unsigned char *bytes, size_t n, lb_row_visit_fn visit, void *ctx);
/* How many rows of a kind a batched replay adds in one statement. */
#define LB_ROW_BATCH 8
/* The statement that adds `rows` rows at once, from `one`'s, a shifted
 * statement of one row (lb_row_sql_shifted) or a plain one of the form
 * INSERT INTO <table> VALUES(...) [upsert]: the rows' values in turn,
 * row j's value ?N as ?N + 32j (the shifts shared), and a row that breaks
 * a key other than an upsert's ignored, as a replay leaves it out.
 * sqlite3_mprintf'd; NULL for a statement of another form, or when out of
 * memory. */
char *lb_row_sql_rows(const char *one, int rows);
/* What a replay calls with each row's values before it binds them
 * (lb_rowlog_replay_rows; values[1 .. lb_row_values(kind)], no others
 * set): it may change them (a text it sets must live until the replay
 * returns). */
typedef void (*lb_row_edit_fn)(void *ctx, enum lb_row_kind kind, lb_row_value_t *values);
/* Whether a replay adds a row, from its values as the log holds them
 * (lb_rowlog_replay_rows; values[1 .. lb_row_values(kind)], no others
 * set): a row it leaves out is as if the log did not hold it. */
typedef bool (*lb_row_keep_fn)(void *ctx, enum lb_row_kind kind, const lb_row_value_t *values);
/* Where a batched replay finds kind's statement for `rows` rows
 * (lb_row_sql_rows; rows a power of two up to LB_ROW_BATCH), owned by the
 * caller; NULL: the kind's rows go one at a time. */
typedef sqlite3_stmt *(*lb_row_rows_fn)(void *ctx, enum lb_row_kind kind, int rows);
/* lb_rowlog_replay, adding the rows of each kind for which `rows` gives
 * a statement of LB_ROW_BATCH rows (NULL: none) several at a time: held
 * until LB_ROW_BATCH of the kind wait, or a row of a kind not held comes
 * (it may read them), or the log ends, then added in the log's order
 * through statements of LB_ROW_BATCH, half as many... rows. The same
 * rows, values and order in each table as lb_rowlog_replay, but for the
 * rows `keep` leaves out (NULL: none; lb_row_keep_fn) and what `edit`
 * (NULL: none; lb_row_edit_fn) changes in a row's values. */
int lb_rowlog_replay_rows(sqlite3 *db, const unsigned char *bytes, size_t n, bool header,
                          lb_row_statement_fn statement, lb_row_rows_fn rows, lb_row_keep_fn keep,
                          lb_row_edit_fn edit, void *ctx);
#endif
