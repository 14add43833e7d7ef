/* See spool.h. */
#include "common/spool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "common/parse_u64.h"
#include "common/read_full.h"
#include "common/rowlog.h"
#include "common/spool_records.h"

#define RECORD_SUFFIX ".lbrec"    /* one record, whole (an earlier build's) */
#define SEALED_SUFFIX ".lbframes" /* a sealed log: earlier builds leave it alone */
#define LOG_SUFFIX    ".lblog"
#define CLAIM_SUFFIX  ".claim"
#define BAD_SUFFIX    ".bad"

/* The strings of parts (NULL-terminated) one after another in buf[size],
 * cut short (NUL-terminated) where they do not fit, as snprintf would;
 * their whole length. By hand: a fork child's exit write appends its
 * record through here, and snprintf would be its first use of vfprintf
 * (pages it has not touched: util/decimal.h). */
static size_t join_parts(char *buf, size_t size, const char *const *parts)
{
    size_t len = 0;
    for (; *parts; parts++)
        for (const char *p = *parts; *p; p++, len++)
            if (len + 1 < size)
                buf[len] = *p;
    if (size)
        buf[len < size ? len : size - 1] = '\0';
    return len;
}

void lb_spool_dir(char *buf, size_t size, const char *db_path)
{
    join_parts(buf, size, (const char *const[]){ db_path, "-spool", NULL });
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

/* Whether name is a pending file: a record or a sealed log. */
static bool pending_name(const char *name)
{
    return ends_with(name, RECORD_SUFFIX) || ends_with(name, SEALED_SUFFIX);
}

/* Whether name is a pending file of run_key: <run key>.<20 digits>.<pid>
 * and .lbrec or .lbframes (a key may hold dots: the fields after it are
 * checked whole). */
static bool record_of(const char *name, const char *run_key)
{
    size_t k = strlen(run_key);
    if (strncmp(name, run_key, k) != 0 || name[k] != '.' || !pending_name(name))
        return false;
    const char *p = name + k + 1;
    for (int i = 0; i < 20; i++, p++)
        if (*p < '0' || *p > '9')
            return false;
    if (*p++ != '.' || *p < '1' || *p > '9')
        return false;
    while (*p >= '0' && *p <= '9')
        p++;
    return strcmp(p, RECORD_SUFFIX) == 0 || strcmp(p, SEALED_SUFFIX) == 0;
}

/* A frame of the run's log: a record's bytes follow this header. */
#define FRAME_MAGIC "LBFRAME1"
typedef struct frame_header {
    char magic[8];
    uint64_t length; /* of the record's bytes */
    uint64_t check;  /* frame_check of them */
} frame_header_t;

/* A checksum of a frame's bytes, a word at a time: a frame that a writer
 * could not finish (ENOSPC, killed inside the write) is told from a
 * whole one. */
static uint64_t frame_check(const unsigned char *bytes, size_t n)
{
    const uint64_t mul = 0xff51afd7ed558ccdull;
    uint64_t h = (uint64_t)n * 0x9E3779B97F4A7C15ull, w;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        memcpy(&w, bytes + i, 8);
        h = (h ^ w) * mul;
        h ^= h >> 32;
    }
    w = 0;
    memcpy(&w, bytes + i, n - i);
    h = (h ^ w) * mul;
    return h ^ (h >> 29);
}

/* dir/<run key>.lblog, the run's open log, in buf[PATH_MAX]; false when
 * it does not fit. */
static bool log_path(char *buf, const char *dir, const char *run_key)
{
    return join_parts(buf, PATH_MAX, (const char *const[]){ dir, "/", run_key, LOG_SUFFIX, NULL }) <
           PATH_MAX;
}

/* Whether fd is still the file at path (a merger may have sealed it
 * since it was opened); its size in *size. */
static bool still_named(int fd, const char *path, off_t *size)
{
    struct stat a = { 0 }, b;
    bool same =
        fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
    *size = a.st_size;
    return same;
}

/* A pending file's lock, the writers' and the mergers' alike, taken
 * alone: tries every `step_ns` for at most `tries` tries, never blocked
 * on (a process that forked while it held the lock handed it to its
 * child, which may keep it). false with errno EWOULDBLOCK when it stayed
 * held. */
static bool lock_within(int fd, int tries, long step_ns)
{
    for (int i = 0; i < tries; i++) {
        if (flock(fd, LOCK_EX | LOCK_NB) == 0)
            return true;
        if (errno != EWOULDBLOCK && errno != EINTR)
            return false;
        struct timespec step = { 0, step_ns };
        nanosleep(&step, NULL);
    }
    errno = EWOULDBLOCK;
    return false;
}

/* The log's lock, for its writers, one at a time: ~100 ms at most. */
static bool lock_log(int fd)
{
    return lock_within(fd, 1000, 100000);
}

/* Whether `more` bytes appended at `size` stay within the process's file
 * size limit: past it, the kernel would end the process (SIGXFSZ). */
static bool within_file_limit(off_t size, size_t more)
{
    struct rlimit limit;
    return getrlimit(RLIMIT_FSIZE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY ||
           (uint64_t)size + more <= (uint64_t)limit.rlim_cur;
}

static void seal_log(const char *dir, const char *run_key);

int lb_spool_put(const char *db_path, const char *run_key, const void *bytes, size_t n)
{
    char dir[PATH_MAX], log[PATH_MAX];
    if (!lb_spool_key_ok(run_key))
        return -1;
    lb_spool_dir(dir, sizeof dir, db_path);
    if (!log_path(log, dir, run_key))
        return -1;
    frame_header_t h = { .length = n, .check = frame_check(bytes, n) };
    memcpy(h.magic, FRAME_MAGIC, sizeof h.magic);
    struct iovec parts[2] = { { &h, sizeof h }, { (void *)bytes, n } };
    bool made_dir = false;
    for (int tries = 0; tries < 8; tries++) {
        int fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
        if (fd < 0 && errno == ENOENT && !made_dir) {
            /* the directory is made by the first record that finds none */
            made_dir = true;
            if (mkdir(dir, 0777) == 0 || errno == EEXIST)
                continue;
        }
        if (fd < 0)
            return -1;
        /* The writers one at a time, so the size read is where the frame
         * goes. A merger reads a log only sealed and claimed, under the
         * same lock (read_record): a writer that opened the log before
         * it was sealed finds its name taken by the next log, and writes
         * there. */
        off_t size;
        if (!lock_log(fd)) {
            close(fd);
            return -1;
        }
        if (!still_named(fd, log, &size)) {
            close(fd);
            continue;
        }
        if (!within_file_limit(size, sizeof h + n)) {
            close(fd);
            if (size == 0)
                return -1;          /* the record alone is too large: the caller commits it */
            seal_log(dir, run_key); /* the next log starts empty */
            continue;
        }
        ssize_t wrote = writev(fd, parts, 2);
        bool whole = wrote == (ssize_t)(sizeof h + n);
        /* A part written (no space left) is cut off again, still under
         * the lock, so that no merger finds a damaged frame of a profile
         * the caller adds itself. */
        if (!whole && wrote > 0 && ftruncate(fd, size) != 0) {
            /* the part stays: a damaged frame that mergers skip */
        }
        /* a log that grew large is sealed: a merger reads a sealed log
         * whole */
        if (whole && (uint64_t)size + (uint64_t)wrote >= LB_SPOOL_LOG_BYTES)
            seal_log(dir, run_key);
        close(fd);
        return whole ? 0 : -1;
    }
    return -1;
}

/* The clock a pending file's name gives its sealing time by. */
static uint64_t seal_clock_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

/* The run's open log renamed to a pending file of its own,
 * <run key>.<ns>.<pid>.lbframes: later records go to a new log. */
static void seal_log(const char *dir, const char *run_key)
{
    char log[PATH_MAX], sealed[PATH_MAX];
    int n = snprintf(sealed, sizeof sealed, "%s/%s.%020llu.%d" SEALED_SUFFIX, dir, run_key,
                     (unsigned long long)seal_clock_ns(), (int)getpid());
    if (log_path(log, dir, run_key) && n > 0 && n < (int)sizeof sealed)
        rename(log, sealed);
}

void lb_spool_seal(const char *db_path, const char *run_key)
{
    char dir[PATH_MAX];
    if (!lb_spool_key_ok(run_key))
        return;
    lb_spool_dir(dir, sizeof dir, db_path);
    seal_log(dir, run_key);
}

static bool orphan_record(const char *name, char record[PATH_MAX]);

/* Whether name is run_key's open log, <run key>.lblog. */
static bool log_of(const char *name, const char *run_key)
{
    size_t k = strlen(run_key);
    return strncmp(name, run_key, k) == 0 && strcmp(name + k, LOG_SUFFIX) == 0;
}

/* The spool's records of run_key (NULL: of any run): pending files and
 * claims of mergers that are gone, and (with logs) open logs; all of them
 * counted, or up to the first (first_only). *oldest_ns: the earliest
 * time a pending file of run_key was sealed (UINT64_MAX: none). */
static unsigned scan(const char *db_path, const char *run_key, bool logs, bool first_only,
                     uint64_t *oldest_ns)
{
    char dir[PATH_MAX], record[PATH_MAX];
    lb_spool_dir(dir, sizeof dir, db_path);
    *oldest_ns = UINT64_MAX;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    unsigned found = 0;
    for (struct dirent *e; !(first_only && found) && (e = readdir(d));) {
        /* a claim of a merger that is gone is pending again */
        const char *name = orphan_record(e->d_name, record) ? record : e->d_name;
        bool pending = run_key ? record_of(name, run_key) : pending_name(name);
        found +=
            pending || (logs && (run_key ? log_of(name, run_key) : ends_with(name, LOG_SUFFIX)));
        if (pending && run_key) {
            uint64_t ns = strtoull(name + strlen(run_key) + 1, NULL, 10); /* record_of: 20 digits */
            *oldest_ns = ns < *oldest_ns ? ns : *oldest_ns;
        }
    }
    closedir(d);
    return found;
}

bool lb_spool_has_records(const char *db_path, const char *run_key)
{
    uint64_t oldest;
    return scan(db_path, run_key, true, true, &oldest) > 0;
}

unsigned lb_spool_sealed(const char *db_path, const char *run_key, uint64_t *oldest_age_ns)
{
    uint64_t oldest;
    unsigned files = scan(db_path, run_key, false, false, &oldest);
    uint64_t now = seal_clock_ns();
    *oldest_age_ns = files && oldest < now ? now - oldest : 0;
    return files;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* dir/name in buf[PATH_MAX]; false when it does not fit. */
static bool join(char *buf, const char *dir, const char *name)
{
    return join_parts(buf, PATH_MAX, (const char *const[]){ dir, "/", name, NULL }) < PATH_MAX;
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
        if (ends_with(e->d_name, LOG_SUFFIX) && !log_of(e->d_name, run_key))
            unlink_in(dir, e->d_name); /* another run's: that run is gone from the database */
    }
    rewinddir(d);
    char **names = NULL;
    unsigned n = 0, cap = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (!pending_name(e->d_name))
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

enum read_result {
    READ_OK,
    READ_EMPTY,    /* a log sealed before its first write ended */
    READ_SIZE,     /* too small or too large to hold a record */
    READ_BUSY,     /* a writer still holds it: left for a later merger */
    READ_RESOURCE, /* this process's failure: descriptors, memory, a read error */
};

/* Up to ~200 ms for a write under way to a sealed log to end: a writer
 * holds the lock for one write. */
static bool lock_alone(int fd)
{
    return lock_within(fd, 200, 1000000);
}

/* The whole file dir/name in malloc'd *bytes (READ_OK), once no writer
 * is writing to it. */
static enum read_result read_record(const char *dir, const char *name, unsigned char **bytes,
                                    size_t *size)
{
    char path[PATH_MAX];
    *bytes = NULL;
    *size = 0;
    int fd = join(path, dir, name) ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    struct stat st;
    if (fd >= 0 && !lock_alone(fd)) {
        bool busy = errno == EWOULDBLOCK;
        close(fd);
        return busy ? READ_BUSY : READ_RESOURCE;
    }
    if (fd < 0 || fstat(fd, &st) != 0) {
        if (fd >= 0)
            close(fd);
        return READ_RESOURCE;
    }
    enum read_result result = st.st_size == 0 ? READ_EMPTY
                              : st.st_size < LB_ROWLOG_HEADER || st.st_size >= (1ll << 31)
                                  ? READ_SIZE
                                  : READ_OK;
    unsigned char *b = result == READ_OK ? malloc((size_t)st.st_size) : NULL;
    size_t got = b ? lb_read_full(fd, b, (size_t)st.st_size) : 0;
    close(fd);
    if (result == READ_OK && (!b || got != (size_t)st.st_size)) {
        free(b);
        return READ_RESOURCE;
    }
    *bytes = b;
    *size = got;
    return result;
}

/* The frame at bytes[p], if it is whole: its record in *record, *len. */
static bool frame_at(const unsigned char *bytes, size_t size, size_t p,
                     const unsigned char **record, size_t *len)
{
    frame_header_t h;
    if (size - p < sizeof h)
        return false;
    memcpy(&h, bytes + p, sizeof h);
    if (memcmp(h.magic, FRAME_MAGIC, sizeof h.magic) != 0 || h.length > size - p - sizeof h)
        return false;
    *record = bytes + p + sizeof h;
    *len = (size_t)h.length;
    return frame_check(*record, *len) == h.check;
}

/* Where the first frame after the one at p may start: the next magic. */
static size_t next_frame(const unsigned char *bytes, size_t size, size_t p)
{
    const unsigned char *m = memmem(bytes + p + 1, size - p - 1, FRAME_MAGIC, 8);
    return m ? (size_t)(m - bytes) : size;
}

/* Whether rc leaves a record out for its own bytes (counted in
 * *damaged) rather than failing the batch. */
static bool count_record(int rc, unsigned *taken, unsigned *damaged)
{
    if (rc == SQLITE_OK)
        (*taken)++;
    else if (lb_spool_record_at_fault(rc))
        (*damaged)++;
    return rc == SQLITE_OK || lb_spool_record_at_fault(rc);
}

/* A pending file's records held (common/spool_records.h): a sealed log's
 * frames in turn, or a record written whole (by an earlier build).
 * SQLITE_OK, or this process's failure, after which the batch is given
 * back; *taken counts the records held (or found merged before), *damaged
 * those left out for their bytes. */
static int stage_file(lb_spool_records_t *r, const unsigned char *bytes, size_t size, bool framed,
                      unsigned file, unsigned *taken, unsigned *damaged)
{
    *taken = *damaged = 0;
    if (!framed) {
        int rc = lb_spool_records_hold(r, bytes, size, file);
        return count_record(rc, taken, damaged) ? SQLITE_OK : rc;
    }
    bool whole = true; /* the bytes before p were whole frames */
    for (size_t p = 0; p < size;) {
        const unsigned char *record;
        size_t len;
        if (!frame_at(bytes, size, p, &record, &len)) {
            /* a write cut short, counted once however many magics its
             * stretch holds: the frames after it are whole */
            *damaged += whole;
            whole = false;
            p = next_frame(bytes, size, p);
            continue;
        }
        whole = true;
        int rc = lb_spool_records_hold(r, record, len, file);
        if (!count_record(rc, taken, damaged))
            return rc;
        p += sizeof(frame_header_t) + len;
    }
    return SQLITE_OK;
}

static void give_back(lb_spool_batch_t *b)
{
    char claim[PATH_MAX + 64];
    for (unsigned i = 0; i < b->n; i++) {
        claim_name(claim, sizeof claim, b->claimed[i]);
        rename_in(b->dir, claim, b->claimed[i]);
    }
}

static void free_names(char **names, unsigned count)
{
    for (unsigned i = 0; names && i < count; i++)
        free(names[i]);
    free(names);
}

static void free_batch(lb_spool_batch_t *b)
{
    free_names(b->claimed, b->n);
    for (unsigned i = 0; b->bytes && i < b->n; i++)
        free(b->bytes[i]);
    free(b->bytes);
    free(b->damaged);
    b->claimed = NULL;
    b->bytes = NULL;
    b->damaged = NULL;
    b->n = b->cap = 0;
}

/* Whether run_key's open log holds anything. */
static bool log_holds_records(const char *dir, const char *run_key)
{
    char log[PATH_MAX];
    struct stat st;
    return log_path(log, dir, run_key) && stat(log, &st) == 0 && st.st_size > 0;
}

int lb_spool_stage(sqlite3 *db, const char *db_path, const char *run_key, const char *dst,
                   enum lb_spool_take take, unsigned most, lb_spool_batch_t *b)
{
    memset(b, 0, sizeof *b);
    if (!lb_spool_key_ok(run_key))
        return SQLITE_OK;
    lb_spool_dir(b->dir, sizeof b->dir, db_path);
    /* Looked at before the listing: a writer that seals the log after
     * the look makes a file the listing finds, so an empty log here
     * means every record counted before it is listed (spool_bound.h) */
    bool log_held = log_holds_records(b->dir, run_key);
    unsigned count;
    char **names = list_records(b->dir, run_key, &count);
    /* The open log is sealed and listed too by a merger that takes all,
     * or the oldest and finds nothing else (a writer counts its record
     * after its write: spool_bound.h); a capped merger takes the sealed
     * files first, which are older, and does not make a file of a log of
     * a record or two at every commit. */
    if (take == LB_SPOOL_TAKE_ALL || (take == LB_SPOOL_TAKE_OLDEST && !names)) {
        free_names(names, count);
        seal_log(b->dir, run_key);
        names = list_records(b->dir, run_key, &count);
    } else if (log_held) {
        b->left++; /* not drained */
    }
    if (!names)
        return SQLITE_OK;
    b->claimed = names; /* claimed ones are moved to the front */
    b->cap = count;
    b->damaged = calloc(count, sizeof *b->damaged);
    b->bytes = calloc(count, sizeof *b->bytes);
    if (!b->damaged || !b->bytes) {
        free_names(names, count);
        free(b->damaged);
        free(b->bytes);
        b->claimed = NULL;
        b->damaged = NULL;
        b->bytes = NULL;
        return SQLITE_NOMEM;
    }
    int rc = SQLITE_OK;
    char claim[PATH_MAX + 64], bad[PATH_MAX + 64];
    for (unsigned i = 0; i < count; i++) {
        /* the oldest `most` records; the files after them wait for the
         * next commit */
        bool capped = most && b->records + b->bad >= most;
        b->left += rc == SQLITE_OK && capped;
        claim_name(claim, sizeof claim, names[i]);
        if (rc != SQLITE_OK || capped || rename_in(b->dir, names[i], claim) != 0) {
            free(names[i]); /* another merger's now, or not wanted */
            continue;
        }
        if (!b->held && !(b->held = lb_spool_records_new(db, dst))) {
            rc = SQLITE_NOMEM;
            rename_in(b->dir, claim, names[i]);
            free(names[i]);
            continue;
        }
        unsigned char *bytes;
        size_t size;
        enum read_result got = read_record(b->dir, claim, &bytes, &size);
        if (got == READ_BUSY) { /* a later merger's */
            rename_in(b->dir, claim, names[i]);
            free(names[i]);
            b->left++;
            continue;
        }
        unsigned taken = 0, damaged = got == READ_SIZE;
        bool framed = ends_with(names[i], SEALED_SUFFIX);
        int one = got == READ_OK ? stage_file(b->held, bytes, size, framed, b->n, &taken, &damaged)
                  : got == READ_RESOURCE ? SQLITE_IOERR
                                         : SQLITE_OK;
        if (one != SQLITE_OK) {
            rc = one; /* ours, not the file's: given back below */
            b->bytes[b->n] = bytes;
            b->claimed[b->n++] = names[i];
            continue;
        }
        b->records += taken;
        b->bad += damaged;
        snprintf(bad, sizeof bad, "%s" BAD_SUFFIX, names[i]);
        if (!taken) { /* nothing to add: kept as .bad if damaged, else empty */
            if (damaged)
                rename_in(b->dir, claim, bad);
            else
                unlink_in(b->dir, claim);
            free(bytes);
            free(names[i]);
            continue;
        }
        b->damaged[b->n] = damaged > 0; /* kept as .bad after the commit */
        b->bytes[b->n] = bytes;         /* its records are held */
        b->claimed[b->n++] = names[i];
    }
    if (rc != SQLITE_OK || b->n == 0) { /* (nothing claimed: nothing to add or remove) */
        lb_spool_finish(b, rc == SQLITE_OK);
        return rc;
    }
    /* the names the records leave to the merge read now, with no lock
     * of the run's database held */
    lb_spool_records_read_names(b->held);
    b->staged = true;
    return SQLITE_OK;
}

const char *lb_spool_error(sqlite3 *db, int rc)
{
    return sqlite3_errcode(db) != SQLITE_OK ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
}

int lb_spool_merge(lb_spool_batch_t *b)
{
    return b->staged ? lb_spool_records_add(b->held, b->damaged, &b->records, &b->bad) : SQLITE_OK;
}

void lb_spool_finish(lb_spool_batch_t *b, bool committed)
{
    char claim[PATH_MAX + 64];
    char bad[PATH_MAX + 64];
    for (unsigned i = 0; committed && i < b->n; i++) {
        claim_name(claim, sizeof claim, b->claimed[i]);
        snprintf(bad, sizeof bad, "%s" BAD_SUFFIX, b->claimed[i]);
        if (b->damaged[i])
            rename_in(b->dir, claim, bad);
        else
            unlink_in(b->dir, claim);
    }
    if (!committed)
        give_back(b);
    lb_spool_records_free(b->held);
    b->held = NULL;
    b->staged = false;
    free_batch(b);
}

void lb_spool_remove_dir(const char *db_path)
{
    char dir[PATH_MAX];
    lb_spool_dir(dir, sizeof dir, db_path);
    rmdir(dir); /* fails while a record or a claim is there: kept */
}
