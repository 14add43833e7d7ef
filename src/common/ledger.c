/* The tree's ledger of processes (ledger.h). */
#include "common/ledger.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/db_name.h"
#include "common/file_room.h"

void lb_ledger_path(char *buf, size_t size, const char *db_path)
{
    snprintf(buf, size, "%s-procs", db_path);
}

bool lb_ledger_room(const char *db_path, char *why, size_t size)
{
    char dir[PATH_MAX], named[PATH_MAX] = "";
    if (!lb_db_dir(db_path, dir, sizeof dir))
        return true;
    /* a file without a name where the file system makes one (nothing to
     * follow into, nothing left behind by a process killed meanwhile),
     * else one of its own, made here and never through a link */
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) {
        lb_ledger_path(named, sizeof named, db_path);
        size_t n = strlen(named);
        if (n + 24 >= sizeof named)
            return true;
        snprintf(named + n, sizeof named - n, ".room.%d", (int)getpid());
        fd = open(named, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
            return true;
    }
    bool room = lb_file_room(fd, sizeof(lb_ledger_t));
    int err = errno;
    close(fd);
    if (named[0])
        unlink(named);
    if (room || (err != ENOSPC && err != EDQUOT && err != EFBIG))
        return true;
    snprintf(why, size, "no room for the run's ledger of processes (%s)", strerror(err));
    return false;
}

uint64_t lb_ledger_run_hash(const char *run_key)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (const unsigned char *c = (const unsigned char *)run_key; *c; c++)
        h = (h ^ *c) * 0x100000001b3ull;
    return h ? h : 1;
}

bool lb_ledger_of_run(const char *db_path, const char *run_key)
{
    if (!run_key || !*run_key)
        return false;
    char path[PATH_MAX];
    lb_ledger_path(path, sizeof path, db_path);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return false;
    uint64_t run = 0;
    ssize_t got = pread(fd, &run, sizeof run, offsetof(lb_ledger_t, run));
    close(fd);
    return got == (ssize_t)sizeof run && run == lb_ledger_run_hash(run_key);
}

bool lb_ledger_torn_own(int code, const char *db_path, const char *run_key)
{
    code &= 0xff;
    return (code == SQLITE_NOTADB || code == SQLITE_CORRUPT) && lb_ledger_of_run(db_path, run_key);
}

/* "/proc/PID/stat" by hand, not snprintf: vfprintf's frame is pages of an
 * exit write's stack that a short process has not touched (page faults). */
uint64_t lb_proc_start_and_parent(pid_t pid, pid_t *parent)
{
    if (pid <= 0)
        return 0;
    char path[32] = "/proc/", digits[12], buf[1024];
    size_t n = 0, len = strlen(path);
    for (unsigned long v = (unsigned long)pid; v; v /= 10)
        digits[n++] = (char)('0' + v % 10);
    while (n)
        path[len++] = digits[--n];
    memcpy(path + len, "/stat", sizeof "/stat");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t got = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (got <= 0)
        return 0;
    buf[got] = '\0';
    /* Field 3 is the state, 4 the parent, 20 the thread count, 22 the
     * start time; the command (field 2) may hold spaces, so count after
     * the last ')'. The state is the leader thread's: a leader that left
     * by pthread_exit shows as a zombie while the process's other threads
     * run on, and the thread count tells that process from a dead one,
     * whose count is 1. */
    char *paren = strrchr(buf, ')');
    if (!paren || paren[1] != ' ' || paren[2] == 'X')
        return 0;
    long threads = 0;
    char *p = paren;
    for (int field = 2; p && field < 22; field++) {
        p = strchr(p + 1, ' ');
        if (p && field + 1 == 20)
            threads = strtol(p + 1, NULL, 10);
    }
    if (!p || (paren[2] == 'Z' && threads <= 1))
        return 0;
    if (parent)
        *parent = (pid_t)strtol(paren + 3, NULL, 10);
    return strtoull(p + 1, NULL, 10);
}

uint64_t lb_ledger_now_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_BOOTTIME, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t lb_ledger_ticks(uint64_t boot_ns)
{
    long hz = sysconf(_SC_CLK_TCK);
    return hz > 0 ? boot_ns / (1000000000u / (uint64_t)hz) : 0;
}

bool lb_ledger_same_process(uint64_t claimed_ns, uint64_t start_ticks)
{
    uint64_t claimed_tick = claimed_ns ? lb_ledger_ticks(claimed_ns) : 0;
    return start_ticks && claimed_tick && start_ticks <= claimed_tick;
}

void lb_ledger_copy(const lb_ledger_t *l, lb_ledger_t *copy)
{
    memset(copy, 0, offsetof(lb_ledger_t, slot));
    if (!l || l->magic != LB_LEDGER_MAGIC)
        return;
    copy->magic = l->magic;
    copy->failure = __atomic_load_n(&l->failure, __ATOMIC_ACQUIRE);
    copy->run = l->run;
    copy->used = __atomic_load_n(&l->used, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < copy->used && i < LB_LEDGER_SLOTS; i++) {
        /* the state first: its claimer stored pid and claimed_ns before it */
        copy->slot[i].state = __atomic_load_n(&l->slot[i].state, __ATOMIC_ACQUIRE);
        copy->slot[i].pid = l->slot[i].pid;
        copy->slot[i].claimed_ns = l->slot[i].claimed_ns;
    }
}

/* lb_ledger_tally over the slots of view, where the state of a slot whose
 * process is gone is read again from live (the state is final then: a
 * process that wrote and ended after view was read is not lost). */
static void tally_view(const lb_ledger_t *view, const lb_ledger_t *live, lb_ledger_tally_t *t)
{
    memset(t, 0, sizeof *t);
    if (!view || view->magic != LB_LEDGER_MAGIC)
        return;
    t->failure = (int)__atomic_load_n(&view->failure, __ATOMIC_ACQUIRE);
    uint32_t used = __atomic_load_n(&view->used, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < used && i < LB_LEDGER_SLOTS; i++) {
        const lb_ledger_slot_t *s = &view->slot[i];
        uint32_t state = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
        if (state != LB_LEDGER_RUNNING && state != LB_LEDGER_WRITING && state != LB_LEDGER_FAILED)
            continue;
        if (state != LB_LEDGER_FAILED &&
            lb_ledger_same_process(s->claimed_ns, lb_proc_start_of(s->pid))) {
            t->running++;
            continue;
        }
        if (live != view && state != LB_LEDGER_FAILED) {
            state = __atomic_load_n(&live->slot[i].state, __ATOMIC_ACQUIRE);
            if (!t->failure)
                t->failure = (int)__atomic_load_n(&live->failure, __ATOMIC_ACQUIRE);
        }
        if (state == LB_LEDGER_FAILED)
            t->failed++;
        else if (state == LB_LEDGER_RUNNING)
            t->before_writing++;
        else if (state == LB_LEDGER_WRITING)
            t->while_writing++;
    }
}

void lb_ledger_tally(const lb_ledger_t *l, lb_ledger_tally_t *t)
{
    tally_view(l, l, t);
}

void lb_ledger_tally_copy(const lb_ledger_t *copy, const lb_ledger_t *live, lb_ledger_tally_t *t)
{
    tally_view(copy, live && live->magic == LB_LEDGER_MAGIC ? live : copy, t);
}

bool lb_ledger_records(const lb_ledger_t *l, pid_t pid, uint64_t start_ticks)
{
    if (!l || l->magic != LB_LEDGER_MAGIC)
        return false;
    uint32_t used = __atomic_load_n(&l->used, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < used && i < LB_LEDGER_SLOTS; i++) {
        const lb_ledger_slot_t *s = &l->slot[i];
        uint32_t state = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
        if ((state == LB_LEDGER_RUNNING || state == LB_LEDGER_WRITING) && s->pid == pid &&
            lb_ledger_same_process(s->claimed_ns, start_ticks))
            return true;
    }
    return false;
}

/* Why the killed ones did not write: "killed before writing it by a signal
 * ...", with the counts before and during their write when there are both. */
static void killed_text(const lb_ledger_tally_t *t, char *buf, size_t size)
{
    char parts[160] = "";
    if (t->before_writing && t->while_writing)
        snprintf(parts, sizeof parts, "%d before their final write began, %d during it",
                 t->before_writing, t->while_writing);
    snprintf(buf, size,
             "killed %s by a signal that cannot be caught (SIGKILL, as a server's immediate"
             " shutdown sends when its grace period runs out)",
             parts[0]           ? parts
             : t->while_writing ? "while writing it"
                                : "before writing it");
}

void lb_ledger_text(const lb_ledger_tally_t *t, char *buf, size_t size)
{
    int killed = t->before_writing + t->while_writing;
    int n = killed + t->failed;
    if (n <= 0) {
        buf[0] = '\0';
        return;
    }
    char killed_why[400], failed_why[160], why[640];
    killed_text(t, killed_why, sizeof killed_why);
    /* the failures' reason: the first one left to this summary, else each
     * process's own line ("it" only where it stands alone) */
    if (t->failure)
        snprintf(failed_why, sizeof failed_why, "%s%s", sqlite3_errstr(t->failure),
                 t->failed == 1 ? "" : ", the first of them");
    else
        snprintf(failed_why, sizeof failed_why, "%s said why in a lockblame: line",
                 !killed && t->failed == 1 ? "it" : "each");
    if (!t->failed)
        snprintf(why, sizeof why, "%s", killed_why);
    else if (!killed)
        snprintf(why, sizeof why, "%s write failed (%s)", t->failed == 1 ? "its" : "their",
                 failed_why);
    else
        snprintf(why, sizeof why, "%d %s; %d whose write failed (%s)", killed, killed_why,
                 t->failed, failed_why);
    snprintf(buf, size,
             "%d process%s of the tree ended without writing %s profile: %s; %s work and waits"
             " are not in the database",
             n, n == 1 ? "" : "es", n == 1 ? "its" : "their", why, n == 1 ? "its" : "their");
}

void lb_ledger_note(const char *path, const lb_ledger_tally_t *t, const char *root_command)
{
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK) {
        sqlite3_busy_timeout(db, 120000); /* other writers of the tree may be committing */
        /* no fsync, as the merges (report/cli/pending.c) */
        sqlite3_exec(db, "PRAGMA main.synchronous=OFF", NULL, NULL, NULL);
        int lost = t->before_writing + t->while_writing + t->failed;
        char *q = sqlite3_mprintf("INSERT INTO meta VALUES('root_command',%Q) ON CONFLICT(key) DO"
                                  " UPDATE SET value = excluded.value",
                                  root_command ? root_command : "");
        if (q && root_command)
            sqlite3_exec(db, q, NULL, NULL, NULL);
        sqlite3_free(q);
        q = lost ? sqlite3_mprintf("INSERT INTO meta VALUES('processes_unwritten','%d'),"
                                   "('processes_unwritten_writing','%d'),"
                                   "('processes_unwritten_failed','%d'),"
                                   "('processes_unwritten_failure','%d') ON CONFLICT(key) DO"
                                   " UPDATE SET value = excluded.value",
                                   lost, t->while_writing, t->failed, t->failure)
                 : NULL;
        if (q)
            sqlite3_exec(db, q, NULL, NULL, NULL);
        sqlite3_free(q);
    }
    sqlite3_close(db);
}

uint32_t lb_ledger_spool_mark(lb_ledger_t *l)
{
    return __atomic_load_n(&l->spooled, __ATOMIC_SEQ_CST);
}

void lb_ledger_spool_took(lb_ledger_t *l, uint32_t mark, unsigned taken, bool drained)
{
    if (!taken && !drained)
        return;
    uint32_t merged = __atomic_load_n(&l->merged, __ATOMIC_SEQ_CST), want;
    do {
        want = merged + taken;
        if (drained) {
            /* every record counted by the mark was listed (a writer
             * counts its record after its write, and the commit sealed
             * the log before it listed), so none of them is pending;
             * none can be that was not written */
            uint32_t now = __atomic_load_n(&l->spooled, __ATOMIC_SEQ_CST);
            if ((int32_t)(mark - want) > 0)
                want = mark;
            if ((int32_t)(want - now) > 0)
                want = now;
        }
    } while (!__atomic_compare_exchange_n(&l->merged, &merged, want, false, __ATOMIC_SEQ_CST,
                                          __ATOMIC_SEQ_CST));
}
