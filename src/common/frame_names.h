/* Naming the frames a process left to the merge of its pending profile
 * (common/spool.h): a write whose profile may wait in the spool names
 * what its forking parent handed down and records every other address of
 * a module file as a frame row with its module and offset only, line
 * LB_ROWLOG_UNNAMED_LINE (report/writer/symcache.h). The process that
 * merges the record, the library's or the CLI's, names them: it reads
 * each module file once for all the records it merges, where every
 * profiled process of a tree would otherwise load libdw and read the
 * module itself.
 *
 * Each such frame gets the names a process that maps the module gives the
 * address (common/module_names.h): from the run's database when a process
 * cached its chain there (table symbol), else from the module's file
 * through libdwfl, when the file's build id is still the one recorded.
 * Its inlined calls become frames and nodes of their own as the exit
 * write inserts them (report/writer/cct_merge.c): the address's frames
 * are new rows with consecutive ids, outermost first, what named the old
 * row names the innermost, and each node on it becomes a chain of nodes,
 * outermost first; node depths are counted again. A chain named from a
 * file is cached in the filled schema's table symbol (a merger fills the
 * run's database itself). A frame whose file
 * is gone or was rebuilt stays unnamed: its module and offset, function
 * NULL, line 0.
 *
 * Needs libdw as module_names.h says. Runs on the merging thread; the
 * module files it reads stay open for the next fills, and the chains it
 * found are kept for them (a tree's records leave the same addresses
 * unnamed), until lb_frame_names_release (a
 * merge's end: a process keeps no descriptor of lockblame's between its
 * writes); uses malloc freely. */
#ifndef LB_COMMON_FRAME_NAMES_H
#define LB_COMMON_FRAME_NAMES_H
#include <sqlite3.h>
#include <stdbool.h>

#include "common/db_merge.h"

/* Names schema's unnamed frames, reading cached chains in schema names
 * (NULL: none) first; a frame whose file cannot be read (or libdw not
 * loaded, module_names.h) stays unnamed. Outside the caller's
 * transactions it reads names in a read transaction of its own; it writes
 * schema in a savepoint of its own, left as it is on a failure inside the
 * caller's transaction (the caller rolls back; the error stays the
 * connection's). A merger fills inside its write transaction, its chains
 * read ahead (lb_frame_names_ahead). SQLITE_OK, or the error of a
 * statement that failed (for want of memory or disk). */
int lb_frame_names_fill(sqlite3 *db, const char *schema, const char *names);
/* The statements of a series of fills on the same schemas (a merger's
 * records, one after another), prepared at their first use instead of
 * once a fill: zero-initialized; freed (lb_frame_names_cache_free)
 * before either schema is detached. */
#define LB_FRAME_NAMES_STATEMENTS 24
typedef struct lb_frame_names_cache {
    sqlite3_stmt *st[LB_FRAME_NAMES_STATEMENTS];
} lb_frame_names_cache_t;
/* lb_frame_names_fill through cache (NULL: none), of one record's rows
 * in a schema that holds other records' named already (the run's
 * database, common/spool_records.h): the frames, nodes and threads with ids from those of
 * `above` on, the shifts its rows were added with (NULL: every row). */
int lb_frame_names_fill_with(sqlite3 *db, const char *schema, const char *names,
                             lb_frame_names_cache_t *cache, const lb_db_shifts_t *above);
void lb_frame_names_cache_free(lb_frame_names_cache_t *cache);
/* An address a record leaves to the merge: its module's file and build
 * id, and its offset in the module. */
typedef struct lb_frame_names_address {
    const char *path, *build_id;
    sqlite3_int64 offset;
} lb_frame_names_address_t;
/* The chains of at[0..n) read now, from the cache in schema names (NULL:
 * none) or their modules' files, outside the caller's transactions on
 * names, and kept for the fills after it (until lb_frame_names_release):
 * a merger that fills its records' names inside the run's database's
 * write transaction reads no module file while it holds the lock. Through
 * cache (NULL: none); what cannot be read (memory) is read by the fill,
 * and so is an address none of them names (it stays unnamed). */
void lb_frame_names_ahead(sqlite3 *db, const char *names, const lb_frame_names_address_t *at,
                          size_t n, lb_frame_names_cache_t *cache);
/* The chains read from files ahead (lb_frame_names_ahead) not cached yet
 * into schema's table symbol, for later merges and processes: inside the
 * merger's transaction, before its records. SQLITE_OK or the error of a
 * statement that failed. */
int lb_frame_names_cache_ahead(sqlite3 *db, const char *schema);
/* The chain kept for an address (path, build id, offset in the module)
 * when it is one frame (no inlined calls): its function, file and line,
 * true; the texts live until lb_frame_names_release. A merger names such
 * a frame row as it adds it, where a fill would rename it after. */
bool lb_frame_names_single(const char *path, const char *build_id, sqlite3_int64 offset,
                           const char **function, const char **file, int *line);
/* Closes the module files the fills read, and forgets the chains they
 * found; nothing while they are kept. */
void lb_frame_names_release(void);
/* keep: later releases keep the module files and chains, for a merger
 * that adds batch after batch of one tree's records (`lockblame run`'s,
 * report/cli/run_merge.h: a chain its earlier batch found is in the run's
 * database once that batch committed, and a merger whose batch failed
 * adds no more); !keep: released now. */
void lb_frame_names_keep(bool keep);
#endif
