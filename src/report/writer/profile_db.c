/* See profile_db.h. */
#include "report/writer/profile_db.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>

#include "common/ddl.h"
#include "core/phase.h"
#include "core/thread.h"
#include "report/writer/exe_alias.h"
#include "report/writer/ledger.h"
#include "report/writer/output.h"
#include "report/writer/symcache.h"
#include "report/writer/writer_int.h"
#include "util/heap_settle.h"
#include "util/lazy_deps.h"
#include "util/log.h"
#include "util/own_stack.h"
#include "util/std_fds.h"

/* The template's life in one process copy; it only moves forward, except
 * in a fork child (lb_profile_db_fork_child). */
enum {
    TEMPLATE_NONE,     /* not built (yet) */
    TEMPLATE_BUILDING, /* being built by the forking thread */
    TEMPLATE_READY,    /* built and unclaimed: template_db is this copy's */
    TEMPLATE_CLAIMED,  /* an exit write took it */
    TEMPLATE_FAILED,   /* could not be built: not tried again */
};

#define TEMPLATE_AT_FORK 2 /* a process that forks once (to exec) builds none */

static int template_state LB_FORK_WRITTEN;
static sqlite3 *template_db;
static lb_symcache_t *template_names; /* the run's names, read with the template (or NULL) */

/* The inserts the template prepares ahead (common/rowlog.h), by kind; a
 * slot is emptied when its statement is handed out. The time windows'
 * own kinds are not the exit write's. */
#define AHEAD LB_ROW_WINDOW_THREAD
static sqlite3_stmt *ahead[AHEAD];
static unsigned forks LB_FORK_WRITTEN; /* fork_prepare calls since the process started or forked */

int lb_profile_db_create(sqlite3 **db)
{
    *db = NULL;
    /* NOMUTEX: one thread uses the connection at a time (the exit write,
     * a window write, the template's builder and then its taker), so its
     * API calls need not take the connection's mutex (through
     * lockblame's own pthread_mutex_lock). */
    int rc = sqlite3_open_v2(
        ":memory:", db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    /* Pages of 2 KiB, set before the first table: a small profile's
     * tables share the memory pages a fork child copies on its first
     * write to them (half as many copy-on-write faults as with SQLite's
     * 4 KiB), and a large profile writes as fast. */
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(*db, "PRAGMA main.page_size=2048", NULL, NULL, NULL);
    return rc == SQLITE_OK ? lb_ddl_create_profile(*db, "main") : rc;
}

int lb_profile_db_new(sqlite3 **db)
{
    int rc = lb_profile_db_create(db);
    return rc == SQLITE_OK ? sqlite3_exec(*db, "PRAGMA main.journal_mode=OFF", NULL, NULL, NULL)
                           : rc;
}

sqlite3_stmt *lb_profile_db_statement(sqlite3 *db, enum lb_row_kind kind)
{
    if (db && db == template_db && kind < AHEAD &&
        __atomic_load_n(&template_state, __ATOMIC_ACQUIRE) == TEMPLATE_CLAIMED && ahead[kind]) {
        sqlite3_stmt *st = ahead[kind];
        ahead[kind] = NULL;
        return st;
    }
    return lb_row_prepare(db, kind, "main");
}

int lb_profile_db_take(sqlite3 **db, lb_symcache_t **names, bool lazy)
{
    int ready = TEMPLATE_READY;
    if (__atomic_compare_exchange_n(&template_state, &ready, TEMPLATE_CLAIMED, false,
                                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        *db = template_db;
        *names = template_names;
        return template_db || lazy ? SQLITE_OK : lb_profile_db_new(db);
    }
    *names = NULL;
    *db = NULL;
    return lazy ? SQLITE_OK : lb_profile_db_new(db);
}

/* The run's database as the template's names were read from it: they
 * are read again only when it has changed (a process added names; a
 * pending profile changes nothing there). */
static struct timespec names_mtime;
static off_t names_size;

static bool run_db_changed(void)
{
    struct stat st;
    if (stat(lb_output_path(), &st) != 0)
        return false; /* nothing there (yet): no names to read */
    bool changed = st.st_size != names_size || st.st_mtim.tv_sec != names_mtime.tv_sec ||
                   st.st_mtim.tv_nsec != names_mtime.tv_nsec;
    names_size = st.st_size;
    names_mtime = st.st_mtim;
    return changed;
}

/* Whether this process's fork children leave their profiles in the
 * run's spool (common/spool.h) with what they could not name for the
 * merge to name: under `lockblame run`, whose database only `run` reads
 * and writes (report/cli/run_merge.h), and under plain LD_PRELOAD while
 * the spool is on; while the tree's root has not ended (a process that
 * outlives it, or an image exec'd after it, commits its profile, and so
 * do its children). The template then holds the modules, no database and
 * no names, and this process does not load SQLite for its children
 * (build_template). */
static bool children_spool(void)
{
    return lb_ledger_spool_open() && (lb_summary_by_run() || lb_spool_enabled());
}

/* The run's names into the template, when its database changed; only
 * into a template that holds a database (none where the children spool:
 * children_spool), and so with SQLite loaded. */
static void read_names(void)
{
    if (!template_db || !run_db_changed())
        return;
    lb_symcache_t *fresh = lb_symcache_preload();
    if (!fresh)
        return;
    lb_symcache_close(template_names);
    template_names = fresh;
}

static void build_template(void *arg)
{
    (void)arg;
    char why[256];
    sqlite3 *db = NULL;
    /* Where the children spool, a child leaves its profile pending
     * without a database of its own, and what it cannot name with the
     * template's modules is named by the merge; so the template holds no
     * database and no names, and this process does not load SQLite for
     * its children (every child of a process that has it loaded runs its
     * destructors at exit, copying pages of its data: 6 page faults a
     * child, SQLite's and libm's). A child that commits after all (the
     * first, before the run's database exists; one on the spool bound's
     * duty) makes its own. */
    bool with_db = !children_spool();
    if (!with_db || (lb_sqlite_open(why, sizeof why) && lb_profile_db_new(&db) == SQLITE_OK)) {
        template_db = db;
        for (int kind = 0; db && kind < AHEAD; kind++)
            ahead[kind] = lb_row_prepare(db, (enum lb_row_kind)kind, "main");
        read_names();
        if (!template_names) /* no names yet: the modules, read once for every child */
            template_names = lb_symcache_modules_only();
        char own[PATH_MAX];
        lb_tables_executable(own, sizeof own); /* read once, for every child */
        lb_exe_alias(NULL);                    /* resolved once, for every child */
        __atomic_store_n(&template_state, TEMPLATE_READY, __ATOMIC_RELEASE);
        return;
    }
    sqlite3_close(db); /* NULL when SQLite is missing: a harmless no-op stub */
    __atomic_store_n(&template_state, TEMPLATE_FAILED, __ATOMIC_RELEASE);
}

static void refresh_names(void *arg)
{
    (void)arg;
    read_names();
    __atomic_store_n(&template_state, TEMPLATE_READY, __ATOMIC_RELEASE);
}

/* fn on a stack of lockblame's own, as lockblame (lb_enter), errno kept;
 * -1 when it could not run. */
static int run_as_own(void (*fn)(void *))
{
    int saved_errno = errno;
    lb_thread_t *self = lb_self;
    if (self)
        lb_enter(self); /* SQLite's and malloc's locking go straight to glibc */
    /* the program's closed standard descriptors stay closed: SQLite would
     * put /dev/null there for good (util/std_fds.h) */
    unsigned held = lb_std_fds_hold();
    int rc = lb_call_on_own_stack(fn, NULL, LB_OWN_STACK_SIZE, false);
    lb_std_fds_release(held);
    lb_heap_settle(); /* the freed chunks, sorted once, not in each child */
    if (self)
        lb_leave(self);
    errno = saved_errno;
    return rc;
}

void lb_profile_db_fork_prepare(void)
{
    unsigned n = __atomic_add_fetch(&forks, 1, __ATOMIC_RELAXED);
    if (n < TEMPLATE_AT_FORK || !lb_runtime_monitoring())
        return;
    /* Each state read before the exchange that would change it: an
     * exchange writes its page even when it fails, and a page the last
     * fork shared with its child costs the parent a fault at its first
     * write (lb_fork_written spans two pages). */
    int state = TEMPLATE_NONE;
    if (__atomic_load_n(&template_state, __ATOMIC_ACQUIRE) == TEMPLATE_NONE &&
        __atomic_compare_exchange_n(&template_state, &state, TEMPLATE_BUILDING, false,
                                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        if (run_as_own(build_template) != 0)
            __atomic_store_n(&template_state, TEMPLATE_FAILED, __ATOMIC_RELEASE);
        return;
    }
    /* The names again at the 4th, 8th, 16th... fork, if the run's
     * database changed: children that ended since the template was built
     * may have named what later children need. */
    state = TEMPLATE_READY;
    if ((n & (n - 1)) == 0 && template_db && /* (else no names to refresh) */
        __atomic_compare_exchange_n(&template_state, &state, TEMPLATE_BUILDING, false,
                                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) &&
        run_as_own(refresh_names) != 0)
        __atomic_store_n(&template_state, TEMPLATE_READY, __ATOMIC_RELEASE);
}

void lb_profile_db_fork_child(void)
{
    forks = 0;
    if (template_state != TEMPLATE_READY) {
        /* claimed (in use by the parent's exit write when it forked), being
         * built by another thread, or none: not this copy's to touch */
        template_db = NULL;
        template_names = NULL;
        memset(ahead, 0, sizeof ahead); /* the parent's, if any */
        template_state = TEMPLATE_NONE;
    }
}
