/* SQLite, opened at the first exit write (see util/lazy_lib.h for why and
 * for the failure contract; util/lazy_deps.h for where the stubs sit).
 * Each stub has the name and prototype sqlite3.h declares (the compiler
 * checks them against it) and is hidden; lb_sqlite_open is the check
 * before any of them. */
#include "util/lazy_deps.h"

#include <dlfcn.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>

#include "util/lazy_lib.h"

static LB_LAZY_LIB(sqlite_lib, "libsqlite3.so.0");

bool lb_sqlite_open(char *why, unsigned whylen)
{
    return lb_lazy_lib_open(&sqlite_lib, why, whylen);
}

bool lb_sqlite_open_at_exit(char *why, unsigned whylen)
{
    if (__atomic_load_n(&sqlite_lib.handle, __ATOMIC_ACQUIRE))
        return true; /* loaded (and set up) before: as it is */
    /* The program's copy, if loaded: its settings are the program's. The
     * reference this takes is not dropped (a dlclose would go through
     * lockblame's own wrapper, interpose/dlclose.c): the open below takes
     * one on the same copy anyway, and the program has finished. */
    void *programs = dlopen(sqlite_lib.soname, RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
    if (!lb_sqlite_open(why, whylen))
        return false;
    /* Ours alone, not yet initialised, and the program has finished: no
     * memory statistics, which take SQLite's malloc mutex (through
     * lockblame's own pthread_mutex_lock) around every allocation and
     * free. A racing first call may configure too: an initialised SQLite
     * refuses (SQLITE_MISUSE) and keeps its settings. */
    int (*config)(int, ...) = programs ? NULL : lb_lazy_sym(&sqlite_lib, "sqlite3_config");
    if (config)
        config(SQLITE_CONFIG_MEMSTATUS, 0);
    return true;
}

LB_LAZY_FN(sqlite_lib, int, sqlite3_open_v2, (const char *f, sqlite3 **db, int fl, const char *vfs),
           (f, db, fl, vfs))
LB_LAZY_FN(sqlite_lib, int, sqlite3_close, (sqlite3 * db), (db))
LB_LAZY_FN(sqlite_lib, int, sqlite3_exec,
           (sqlite3 * db, const char *sql, int (*cb)(void *, int, char **, char **), void *arg,
            char **err),
           (db, sql, cb, arg, err))
LB_LAZY_FN(sqlite_lib, int, sqlite3_prepare_v2,
           (sqlite3 * db, const char *sql, int n, sqlite3_stmt **st, const char **tail),
           (db, sql, n, st, tail))
LB_LAZY_FN(sqlite_lib, int, sqlite3_step, (sqlite3_stmt * st), (st))
LB_LAZY_FN(sqlite_lib, int, sqlite3_reset, (sqlite3_stmt * st), (st))
LB_LAZY_FN(sqlite_lib, int, sqlite3_finalize, (sqlite3_stmt * st), (st))
LB_LAZY_FN(sqlite_lib, int, sqlite3_clear_bindings, (sqlite3_stmt * st), (st))
LB_LAZY_FN(sqlite_lib, int, sqlite3_bind_double, (sqlite3_stmt * st, int i, double v), (st, i, v))
LB_LAZY_FN(sqlite_lib, int, sqlite3_bind_int, (sqlite3_stmt * st, int i, int v), (st, i, v))
LB_LAZY_FN(sqlite_lib, int, sqlite3_bind_int64, (sqlite3_stmt * st, int i, sqlite3_int64 v),
           (st, i, v))
LB_LAZY_FN(sqlite_lib, int, sqlite3_bind_null, (sqlite3_stmt * st, int i), (st, i))
LB_LAZY_FN(sqlite_lib, int, sqlite3_bind_text,
           (sqlite3_stmt * st, int i, const char *v, int n, void (*free_fn)(void *)),
           (st, i, v, n, free_fn))
LB_LAZY_FN(sqlite_lib, double, sqlite3_column_double, (sqlite3_stmt * st, int i), (st, i))
LB_LAZY_FN(sqlite_lib, int, sqlite3_column_int, (sqlite3_stmt * st, int i), (st, i))
LB_LAZY_FN(sqlite_lib, const void *, sqlite3_column_blob, (sqlite3_stmt * st, int i), (st, i))
LB_LAZY_FN(sqlite_lib, int, sqlite3_column_bytes, (sqlite3_stmt * st, int i), (st, i))
LB_LAZY_FN(sqlite_lib, int, sqlite3_bind_blob,
           (sqlite3_stmt * st, int i, const void *v, int n, void (*d)(void *)), (st, i, v, n, d))
LB_LAZY_FN(sqlite_lib, sqlite3_int64, sqlite3_column_int64, (sqlite3_stmt * st, int i), (st, i))
LB_LAZY_FN(sqlite_lib, const unsigned char *, sqlite3_column_text, (sqlite3_stmt * st, int i),
           (st, i))
LB_LAZY_FN(sqlite_lib, int, sqlite3_blob_open,
           (sqlite3 * db, const char *schema, const char *table, const char *column,
            sqlite3_int64 row, int flags, sqlite3_blob **blob),
           (db, schema, table, column, row, flags, blob))
LB_LAZY_FN(sqlite_lib, int, sqlite3_blob_read, (sqlite3_blob * blob, void *to, int n, int at),
           (blob, to, n, at))
LB_LAZY_FN(sqlite_lib, int, sqlite3_blob_bytes, (sqlite3_blob * blob), (blob))
LB_LAZY_FN(sqlite_lib, int, sqlite3_blob_close, (sqlite3_blob * blob), (blob))
LB_LAZY_FN(sqlite_lib, int, sqlite3_busy_handler, (sqlite3 * db, int (*fn)(void *, int), void *arg),
           (db, fn, arg))
LB_LAZY_FN(sqlite_lib, int, sqlite3_busy_timeout, (sqlite3 * db, int ms), (db, ms))
LB_LAZY_FN(sqlite_lib, int, sqlite3_errcode, (sqlite3 * db), (db))
LB_LAZY_FN(sqlite_lib, const char *, sqlite3_errstr, (int rc), (rc))
LB_LAZY_FN(sqlite_lib, int, sqlite3_bind_parameter_count, (sqlite3_stmt * st), (st))
LB_LAZY_FN(sqlite_lib, int, sqlite3_bind_parameter_index, (sqlite3_stmt * st, const char *name),
           (st, name))
LB_LAZY_FN(sqlite_lib, int, sqlite3_column_count, (sqlite3_stmt * st), (st))
LB_LAZY_FN(sqlite_lib, int, sqlite3_column_type, (sqlite3_stmt * st, int i), (st, i))
LB_LAZY_FN(sqlite_lib, int, sqlite3_get_autocommit, (sqlite3 * db), (db))
LB_LAZY_FN(sqlite_lib, const char *, sqlite3_errmsg, (sqlite3 * db), (db))
LB_LAZY_VOID(sqlite_lib, sqlite3_free, (void *p), (p))
LB_LAZY_FN(sqlite_lib, void *, sqlite3_malloc64, (sqlite3_uint64 n), (n))
LB_LAZY_FN(sqlite_lib, unsigned char *, sqlite3_serialize,
           (sqlite3 * db, const char *schema, sqlite3_int64 *size, unsigned int flags),
           (db, schema, size, flags))
LB_LAZY_FN(sqlite_lib, int, sqlite3_deserialize,
           (sqlite3 * db, const char *schema, unsigned char *data, sqlite3_int64 size,
            sqlite3_int64 buf_size, unsigned flags),
           (db, schema, data, size, buf_size, flags))
LB_LAZY_FN(sqlite_lib, char *, sqlite3_vmprintf, (const char *fmt, va_list ap), (fmt, ap))

/* Variadic: forwarded through the va_list form (SQLite's own %q/%w). */
char *sqlite3_mprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = sqlite3_vmprintf(fmt, ap);
    va_end(ap);
    return s;
}
