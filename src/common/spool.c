/* See spool.h. */
#include "common/spool.h"
#include "common/file_put.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/db_merge.h"
#include "common/ddl.h"
#include "common/frame_names.h"
#include "common/parse_u64.h"
#include "common/rowlog.h"

#define RECORD_SUFFIX ".lbrec"
#define CLAIM_SUFFIX  ".claim"
#define BAD_SUFFIX    ".bad"

void lb_spool_dir(char *buf, size_t size, const char *db_path)
{
    snprintf(buf, size, "%s-spool", db_path);
}

unsigned lb_spool_max_setting(const char *v, char *why, size_t size)
{
    uint64_t max = LB_SPOOL_MAX_DEFAULT;
    why[0] = '\0';
    if (v && *v && !lb_parse_u64(v, 0, UINT32_MAX, &max))
        snprintf(why, size,
                 "LOCKBLAME_SPOOL_MAX wants a number of pending profiles (0: no bound), not"
                 " '%s'; using %u",
                 v, LB_SPOOL_MAX_DEFAULT);
    return (unsigned)max;
}

bool lb_spool_key_ok(const char *run_key)
{
    if (!run_key || !*run_key || strlen(run_key) > 64)
        return false;
    for (const char *p = run_key; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
              *p == '.' || *p == '_' || *p == '-'))
            return false;
    return true;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

/* Whether name is a record of run_key: <run key>.<20 digits>.<pid>.lbrec
 * (a key may hold dots: the fields after it are checked whole). */
static bool record_of(const char *name, const char *run_key)
{
    size_t k = strlen(run_key);
    if (strncmp(name, run_key, k) != 0 || name[k] != '.' || !ends_with(name, RECORD_SUFFIX))
        return false;
    const char *p = name + k + 1;
    for (int i = 0; i < 20; i++, p++)
        if (*p < '0' || *p > '9')
            return false;
    if (*p++ != '.' || *p < '1' || *p > '9')
        return false;
    while (*p >= '0' && *p <= '9')
        p++;
    return strcmp(p, RECORD_SUFFIX) == 0;
}

int lb_spool_put(const char *db_path, const char *run_key, const void *bytes, size_t n)
{
    char dir[PATH_MAX], tmp[PATH_MAX + 64], name[PATH_MAX + 128];
    if (!lb_spool_key_ok(run_key))
        return -1;
    lb_spool_dir(dir, sizeof dir, db_path);
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    unsigned long long ns =
        (unsigned long long)now.tv_sec * 1000000000ull + (unsigned long long)now.tv_nsec;
    int pid = (int)getpid();
    snprintf(tmp, sizeof tmp, "%s/.%d.%llu.tmp", dir, pid, ns);
    snprintf(name, sizeof name, "%s/%s.%020llu.%d" RECORD_SUFFIX, dir, run_key, ns, pid);
    lb_file_part_t record = { bytes, n };
    /* the directory is made by the first record that finds none: every
     * later process saves a mkdir */
    int rc = lb_file_put(tmp, name, &record, 1);
    if (rc != 0 && errno == ENOENT) {
        if (mkdir(dir, 0777) != 0 && errno != EEXIST)
            return -1;
        rc = lb_file_put(tmp, name, &record, 1);
    }
    return rc;
}

static bool orphan_record(const char *name, char record[PATH_MAX]);

bool lb_spool_has_records(const char *db_path, const char *run_key)
{
    char dir[PATH_MAX], record[PATH_MAX];
    lb_spool_dir(dir, sizeof dir, db_path);
    DIR *d = opendir(dir);
    if (!d)
        return false;
    bool found = false;
    for (struct dirent *e; !found && (e = readdir(d));) {
        /* a claim of a merger that is gone is pending again */
        const char *name = orphan_record(e->d_name, record) ? record : e->d_name;
        found = run_key ? record_of(name, run_key) : ends_with(name, RECORD_SUFFIX);
    }
    closedir(d);
    return found;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* dir/name in buf[PATH_MAX]; false when it does not fit. */
static bool join(char *buf, const char *dir, const char *name)
{
    int n = snprintf(buf, PATH_MAX, "%s/%s", dir, name);
    return n > 0 && n < PATH_MAX;
}

/* dir/from renamed to dir/to: 0 or -1. */
static int rename_in(const char *dir, const char *from, const char *to)
{
    char a[PATH_MAX], b[PATH_MAX];
    return join(a, dir, from) && join(b, dir, to) ? rename(a, b) : -1;
}

static void unlink_in(const char *dir, const char *name)
{
    char a[PATH_MAX];
    if (join(a, dir, name))
        unlink(a);
}

static bool gone(long pid)
{
    return pid > 0 && pid != (long)getpid() && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* A record's claim by this process: <record>.<pid>.claim. */
static void claim_name(char *buf, size_t size, const char *record)
{
    snprintf(buf, size, "%s.%d" CLAIM_SUFFIX, record, (int)getpid());
}

/* Whether name is a claim <record>.<pid>.claim whose merger is gone; its
 * record's name in record. */
static bool orphan_record(const char *name, char record[PATH_MAX])
{
    if (!ends_with(name, CLAIM_SUFFIX))
        return false;
    size_t n = strlen(name) - strlen(CLAIM_SUFFIX);
    const char *dot = NULL;
    for (const char *p = name; p < name + n; p++)
        if (*p == '.')
            dot = p;
    if (!dot || dot == name || dot - name >= PATH_MAX || !gone(strtol(dot + 1, NULL, 10)))
        return false;
    snprintf(record, PATH_MAX, "%.*s", (int)(dot - name), name);
    return true;
}

/* A claim whose merger is gone: given back. (A merger that ended between
 * its commit and the removal of its claims added them already: the next
 * merger finds their processes in the database and drops them.) */
static void give_back_orphan(const char *dir, const char *name)
{
    char record[PATH_MAX];
    if (orphan_record(name, record))
        rename_in(dir, name, record);
}

/* A record half-written (.<pid>.<ns>.tmp) by a process that is gone. */
static void remove_orphan_tmp(const char *dir, const char *name)
{
    if (name[0] == '.' && ends_with(name, ".tmp") && gone(strtol(name + 1, NULL, 10)))
        unlink_in(dir, name);
}

/* The names of run_key's records, sorted (oldest first); stale records
 * of other runs removed. NULL when there are none. */
static char **list_records(const char *dir, const char *run_key, unsigned *count)
{
    *count = 0;
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    for (struct dirent *e; (e = readdir(d));) {
        give_back_orphan(dir, e->d_name);
        remove_orphan_tmp(dir, e->d_name);
    }
    rewinddir(d);
    char **names = NULL;
    unsigned n = 0, cap = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (!ends_with(e->d_name, RECORD_SUFFIX))
            continue;
        if (!record_of(e->d_name, run_key)) {
            unlink_in(dir, e->d_name); /* another run's: that run is gone from the database */
            continue;
        }
        if (n == cap) {
            unsigned grown = cap ? 2 * cap : 64;
            char **more = realloc(names, grown * sizeof *names);
            if (!more)
                break;
            names = more;
            cap = grown;
        }
        if (!(names[n] = strdup(e->d_name)))
            break;
        n++;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, by_name);
    *count = n;
    return names;
}

/* The whole file dir/name in malloc'd memory; NULL on failure,
 * with *sized false when the file itself is too small or too large to be
 * a record (else the failure was this process's: no descriptor, memory,
 * or a read error). */
static unsigned char *read_record(const char *dir, const char *name, size_t *size, bool *sized)
{
    char path[PATH_MAX];
    int fd = join(path, dir, name) ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    struct stat st;
    unsigned char *bytes = NULL;
    *sized = true;
    if (fd >= 0 && fstat(fd, &st) == 0)
        *sized = st.st_size >= LB_ROWLOG_HEADER && st.st_size < (1ll << 31);
    if (fd >= 0 && *sized)
        bytes = malloc((size_t)st.st_size);
    size_t got = 0;
    while (bytes && got < (size_t)st.st_size) {
        ssize_t r = read(fd, bytes + got, (size_t)st.st_size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    if (fd >= 0)
        close(fd);
    if (bytes && got != (size_t)st.st_size) {
        free(bytes);
        bytes = NULL;
    }
    *size = bytes ? got : 0;
    return bytes;
}

static int sql(sqlite3 *db, const char *text)
{
    return sqlite3_exec(db, text, NULL, NULL, NULL);
}

/* "pending" (all tables, the version row) and "spool" (a profile's
 * tables, each record's rows in turn) attached. */
static int attach_stage(sqlite3 *db)
{
    int rc = sql(db, "ATTACH ':memory:' AS pending");
    if (rc == SQLITE_OK)
        rc = lb_ddl_create(db, "pending");
    if (rc == SQLITE_OK) {
        char *q = sqlite3_mprintf("INSERT INTO pending.meta VALUES('schema_version','%d')",
                                  LB_SCHEMA_VERSION);
        rc = q ? sql(db, q) : SQLITE_NOMEM;
        sqlite3_free(q);
    }
    if (rc == SQLITE_OK)
        rc = sql(db, "ATTACH ':memory:' AS spool");
    if (rc == SQLITE_OK)
        rc = lb_ddl_create_profile(db, "spool");
    if (rc != SQLITE_OK) {
        sql(db, "DETACH spool");
        sql(db, "DETACH pending");
    }
    return rc;
}

#define SPOOL_TABLES 32 /* at least a profile's tables (common/ddl.h) */

/* A stage's statements on the "spool" schema, prepared at first use and
 * finalized before it is detached. */
typedef struct stage_sql {
    sqlite3 *db;
    const char *dst;
    sqlite3_stmt *rows[LB_ROW_KINDS];
    sqlite3_stmt *empty[SPOOL_TABLES]; /* DELETE FROM spool.<table> */
    sqlite3_stmt *merged_before;
    lb_db_merge_cache_t merge; /* "spool" into "pending" */
} stage_sql_t;

static sqlite3_stmt *row_statement(void *ctx, enum lb_row_kind kind)
{
    stage_sql_t *q = ctx;
    if (!q->rows[kind])
        q->rows[kind] = lb_row_prepare(q->db, kind, "spool");
    return q->rows[kind];
}

static void finalize_stage(stage_sql_t *q)
{
    for (int k = 0; k < LB_ROW_KINDS; k++)
        sqlite3_finalize(q->rows[k]);
    for (int t = 0; t < SPOOL_TABLES; t++)
        sqlite3_finalize(q->empty[t]);
    sqlite3_finalize(q->merged_before);
    lb_db_merge_cache_free(&q->merge);
    lb_frame_names_release();
    memset(q->rows, 0, sizeof q->rows);
    memset(q->empty, 0, sizeof q->empty);
    q->merged_before = NULL;
}

/* step a statement that returns no rows, and reset it */
static int run(sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* The previous record's rows out of "spool". */
static int empty_spool(stage_sql_t *q)
{
    for (int t = 0;
         t < SPOOL_TABLES && lb_ddl_tables[t] && strcmp(lb_ddl_tables[t], LB_DDL_PROFILE_END) != 0;
         t++) {
        if (!q->empty[t])
            q->empty[t] =
                lb_db_prepare_sql(q->db, sqlite3_mprintf("DELETE FROM spool.%s", lb_ddl_tables[t]));
        int rc = q->empty[t] ? run(q->empty[t]) : sqlite3_errcode(q->db);
        if (rc != SQLITE_OK)
            return rc;
    }
    return SQLITE_OK;
}

/* Whether the process image in "spool" is in dst already (a merger
 * that ended after its commit, before removing its claims): its pid,
 * start and run key, and its image's start time. */
static bool merged_before(stage_sql_t *q)
{
    if (!q->merged_before)
        q->merged_before = lb_db_prepare_sql(
            q->db, sqlite3_mprintf("SELECT 1 FROM spool.run r, \"%w\".run d WHERE d.run_key IS"
                                   " r.run_key AND d.pid = r.pid AND d.proc_start IS r.proc_start"
                                   " AND d.start_unix = r.start_unix LIMIT 1",
                                   q->dst));
    bool found = q->merged_before && sqlite3_step(q->merged_before) == SQLITE_ROW;
    if (q->merged_before)
        sqlite3_reset(q->merged_before);
    return found;
}

/* A record an earlier build wrote, an SQLite database of the profile's
 * tables (a run whose processes a library upgrade split): it becomes
 * "spool" itself, writable, for the records after it to empty. */
static int take_sqlite_record(stage_sql_t *q, const unsigned char *bytes, size_t size)
{
    unsigned char *copy = sqlite3_malloc64(size);
    if (!copy)
        return SQLITE_NOMEM;
    memcpy(copy, bytes, size);
    return sqlite3_deserialize(q->db, "spool", copy, (sqlite3_int64)size, (sqlite3_int64)size,
                               SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE);
}

/* One record: replayed into "spool" (whole or not at all), its unnamed
 * frames named there, then merged into "pending" (whole or not at all);
 * nothing if dst holds it already. The names are read between the two
 * savepoints: the run's database is locked only for each statement that
 * reads it, not while a module file is read. */
static int stage_one(stage_sql_t *q, const unsigned char *bytes, size_t size)
{
    bool old = lb_db_sqlite_header(bytes, size);
    int rc = old ? take_sqlite_record(q, bytes, size) : SQLITE_OK;
    if (rc == SQLITE_OK)
        rc = sql(q->db, "SAVEPOINT record");
    if (rc != SQLITE_OK)
        return rc;
    if (!old)
        rc = empty_spool(q);
    if (rc == SQLITE_OK && !old)
        rc = lb_rowlog_replay(q->db, bytes, size, true, row_statement, q);
    bool merge = rc == SQLITE_OK && !merged_before(q);
    if (rc != SQLITE_OK)
        sql(q->db, "ROLLBACK TO record");
    sql(q->db, "RELEASE record");
    if (merge && !old)
        rc = lb_frame_names_fill(q->db, "spool", q->dst);
    if (!merge || rc != SQLITE_OK)
        return rc;
    rc = sql(q->db, "SAVEPOINT record");
    if (rc != SQLITE_OK)
        return rc;
    rc = lb_db_merge_with(q->db, "spool", "pending", 0, &q->merge);
    if (rc != SQLITE_OK)
        sql(q->db, "ROLLBACK TO record");
    sql(q->db, "RELEASE record");
    return rc;
}

static void give_back(lb_spool_batch_t *b)
{
    char claim[PATH_MAX + 64];
    for (unsigned i = 0; i < b->n; i++) {
        claim_name(claim, sizeof claim, b->claimed[i]);
        rename_in(b->dir, claim, b->claimed[i]);
    }
}

static void free_batch(lb_spool_batch_t *b)
{
    for (unsigned i = 0; i < b->n; i++)
        free(b->claimed[i]);
    free(b->claimed);
    b->claimed = NULL;
    b->n = b->cap = 0;
}

/* Whether a record's own bytes made stage_one fail (it is damaged, or of
 * another schema), not this process's resources (memory, descriptors,
 * disk), which a later merger may have. */
static bool record_at_fault(int rc)
{
    rc &= 0xff;
    return rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB || rc == SQLITE_MISMATCH ||
           rc == SQLITE_ERROR || rc == SQLITE_FORMAT || rc == SQLITE_RANGE;
}

int lb_spool_stage(sqlite3 *db, const char *db_path, const char *run_key, const char *dst,
                   unsigned most, lb_spool_batch_t *b)
{
    memset(b, 0, sizeof *b);
    if (!lb_spool_key_ok(run_key))
        return SQLITE_OK;
    lb_spool_dir(b->dir, sizeof b->dir, db_path);
    unsigned count;
    char **names = list_records(b->dir, run_key, &count);
    if (!names)
        return SQLITE_OK;
    if (most && count > most) { /* the oldest; the rest wait for the next commit */
        for (unsigned i = most; i < count; i++)
            free(names[i]);
        b->left = count - most;
        count = most;
    }
    b->claimed = names; /* claimed ones are moved to the front */
    b->cap = count;
    stage_sql_t q = { .db = db, .dst = dst };
    int rc = SQLITE_OK;
    char claim[PATH_MAX + 64];
    for (unsigned i = 0; i < count; i++) {
        claim_name(claim, sizeof claim, names[i]);
        if (rc != SQLITE_OK || rename_in(b->dir, names[i], claim) != 0) {
            free(names[i]); /* another merger's now, or not wanted */
            continue;
        }
        if (!b->staged) {
            if ((rc = attach_stage(db)) != SQLITE_OK) {
                rename_in(b->dir, claim, names[i]);
                free(names[i]);
                continue;
            }
            b->staged = true;
        }
        size_t size;
        bool sized;
        unsigned char *bytes = read_record(b->dir, claim, &size, &sized);
        int one = bytes ? stage_one(&q, bytes, size) : sized ? SQLITE_IOERR : SQLITE_CORRUPT;
        free(bytes);
        if (one != SQLITE_OK && !record_at_fault(one)) {
            rc = one; /* ours, not the record's: give it back below */
            b->claimed[b->n++] = names[i];
            continue;
        }
        if (one != SQLITE_OK) {
            char bad[PATH_MAX + 64];
            snprintf(bad, sizeof bad, "%s" BAD_SUFFIX, names[i]);
            rename_in(b->dir, claim, bad);
            b->bad++;
            free(names[i]);
            continue;
        }
        b->claimed[b->n++] = names[i];
    }
    finalize_stage(&q);
    if (b->staged)
        sql(db, "DETACH spool");
    if (rc != SQLITE_OK) {
        lb_spool_finish(db, b, false);
        return rc;
    }
    if (b->n == 0 && b->staged) {
        sql(db, "DETACH pending");
        b->staged = false;
    }
    return SQLITE_OK;
}

int lb_spool_merge(sqlite3 *db, const char *dst, const lb_spool_batch_t *b)
{
    return b->staged && b->n ? lb_db_merge(db, "pending", dst, 0) : SQLITE_OK;
}

void lb_spool_finish(sqlite3 *db, lb_spool_batch_t *b, bool committed)
{
    char claim[PATH_MAX + 64];
    for (unsigned i = 0; committed && i < b->n; i++) {
        claim_name(claim, sizeof claim, b->claimed[i]);
        unlink_in(b->dir, claim);
    }
    if (!committed)
        give_back(b);
    if (b->staged)
        sql(db, "DETACH pending");
    b->staged = false;
    free_batch(b);
}

void lb_spool_remove_dir(const char *db_path)
{
    char dir[PATH_MAX];
    lb_spool_dir(dir, sizeof dir, db_path);
    rmdir(dir); /* fails while a record or a claim is there: kept */
}
