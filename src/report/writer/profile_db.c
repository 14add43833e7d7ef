/* See profile_db.h. */
#include "report/writer/profile_db.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/ddl.h"
#include "core/phase.h"
#include "core/thread.h"
#include "util/heap_settle.h"
#include "util/lazy_deps.h"
#include "util/own_stack.h"

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

static int template_state;
static sqlite3 *template_db;
static unsigned forks; /* fork_prepare calls since the process started or forked */

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
    return rc == SQLITE_OK ? lb_ddl_create_profile(*db) : rc;
}

/* A new database for a process's profile: tables created, journal off. */
static int create_for_profile(sqlite3 **db)
{
    int rc = lb_profile_db_create(db);
    return rc == SQLITE_OK ? sqlite3_exec(*db, "PRAGMA main.journal_mode=OFF", NULL, NULL, NULL)
                           : rc;
}

int lb_profile_db_take(sqlite3 **db)
{
    int ready = TEMPLATE_READY;
    if (__atomic_compare_exchange_n(&template_state, &ready, TEMPLATE_CLAIMED, false,
                                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        *db = template_db;
        return SQLITE_OK;
    }
    return create_for_profile(db);
}

static void build_template(void *arg)
{
    (void)arg;
    char why[256];
    sqlite3 *db = NULL;
    if (lb_sqlite_open(why, sizeof why) && create_for_profile(&db) == SQLITE_OK) {
        template_db = db;
        __atomic_store_n(&template_state, TEMPLATE_READY, __ATOMIC_RELEASE);
        return;
    }
    sqlite3_close(db); /* NULL when SQLite is missing: a harmless no-op stub */
    __atomic_store_n(&template_state, TEMPLATE_FAILED, __ATOMIC_RELEASE);
}

void lb_profile_db_fork_prepare(void)
{
    if (__atomic_add_fetch(&forks, 1, __ATOMIC_RELAXED) < TEMPLATE_AT_FORK ||
        !lb_runtime_monitoring())
        return;
    int none = TEMPLATE_NONE;
    if (!__atomic_compare_exchange_n(&template_state, &none, TEMPLATE_BUILDING, false,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return;
    int saved_errno = errno;
    lb_thread_t *self = lb_self;
    if (self)
        lb_enter(self); /* SQLite's and malloc's locking go straight to glibc */
    if (lb_call_on_own_stack(build_template, NULL, LB_OWN_STACK_SIZE) != 0)
        __atomic_store_n(&template_state, TEMPLATE_FAILED, __ATOMIC_RELEASE);
    lb_heap_settle(); /* the build's freed chunks, sorted once, not in each child */
    if (self)
        lb_leave(self);
    errno = saved_errno;
}

void lb_profile_db_fork_child(void)
{
    forks = 0;
    if (template_state != TEMPLATE_READY) {
        /* claimed (in use by the parent's exit write when it forked), being
         * built by another thread, or none: not this copy's to touch */
        template_db = NULL;
        template_state = TEMPLATE_NONE;
    }
}
