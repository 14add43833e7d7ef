/* A merger's batch of pending records (common/spool.h) added to the run's
 * database: held while the merger claims and reads their files, added
 * inside its write transaction.
 *
 * Outside any transaction a record (a frame's bytes) is read through
 * without SQL (common/rowlog.h lb_rowlog_each): a record whose bytes are
 * not a row log is left out for them; one that is is held as it is, and
 * the addresses it leaves to the merge to name are noted. After the last
 * record the chains of those addresses are read (common/frame_names.h
 * lb_frame_names_ahead: the run's cached chains, the module files), so
 * that no module file is read while the run's database is locked. A
 * record an earlier build wrote whole (an SQLite database) is copied into
 * an attached in-memory schema "pending" then.
 *
 * Inside the write transaction each held record is replayed straight
 * into the run's database, in a savepoint of its own: its rows with their
 * ids shifted past the database's (common/rowlog.h shifted statements,
 * several rows at a time), its meta rows and names (which carry no ids)
 * added as a merge adds them, its unnamed frames named as they are added
 * or, where inlined calls make chains of them, after, in its own rows;
 * nothing if the database holds its process image already. A record
 * whose rows SQLite refuses for their values is rolled back and counted
 * damaged; any other failure is this process's and fails the batch.
 *
 * Not thread-safe: a batch is one thread's. Depends on SQLite,
 * common/rowlog.h, common/db_merge.h, common/frame_names.h. */
#ifndef LB_COMMON_SPOOL_RECORDS_H
#define LB_COMMON_SPOOL_RECORDS_H
#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct lb_spool_records lb_spool_records_t;

/* A batch for schema dst (the run's database, attached to db); NULL
 * without memory. */
lb_spool_records_t *lb_spool_records_new(sqlite3 *db, const char *dst);

/* Outside any transaction: one record, bytes[0..size), of the batch's
 * file `file`, held (its bytes must stay until lb_spool_records_free) or
 * copied into "pending" (an earlier build's). SQLITE_OK; a code for
 * which lb_spool_record_at_fault holds when its bytes are left out; or
 * this process's failure (memory). */
int lb_spool_records_hold(lb_spool_records_t *r, const unsigned char *bytes, size_t size,
                          unsigned file);

/* Whether rc leaves a record out for its own bytes (damaged, or of
 * another schema) rather than for this process's resources (memory,
 * descriptors, disk), which a later merger may have. */
bool lb_spool_record_at_fault(int rc);

/* Outside any transaction, after the last record is held: the chains of
 * the addresses the held records leave to the merge read. */
void lb_spool_records_read_names(lb_spool_records_t *r);

/* Whether the batch holds anything to add. */
bool lb_spool_records_any(const lb_spool_records_t *r);

/* Inside the caller's transaction: the batch into dst. A record whose
 * rows SQLite refuses for their values sets damaged[its file], and moves
 * one from *records to *bad. SQLITE_OK, or this process's failure (the
 * caller rolls back). */
int lb_spool_records_add(lb_spool_records_t *r, bool *damaged, unsigned *records, unsigned *bad);

/* After the caller's transaction: statements finalized, "pending"
 * detached, the module files and chains read released, memory freed.
 * NULL: nothing. */
void lb_spool_records_free(lb_spool_records_t *r);
#endif
