/* Unit tests for the outside rule of process-shared mutexes
 * (src/blame/shared_objs.c): which acquisitions call the hold before
 * them an outsider's.
 *
 * The record's verbs are driven with explicit times by one thread of a
 * tree of one process (its table anonymous): the tree's release of the
 * mutex at T, a wait that begins at T + 2 ms (past the in-flight window)
 * with the lock word seen taken and naming a given owner, and the
 * acquisition that ends it. A word taken that names no owner is a holder
 * on its way in or out (glibc names the owner after taking the word and
 * clears it before freeing it), or one that freed it after the waiter's
 * trylock: on a loaded machine a cond waiter's release, counted at the
 * cond wait's entry, reaches its real unlock milliseconds later, and a
 * waiter's look at the word then finds it freed. */
#include "check.h"

#include <unistd.h>

#include "blame/mon.h"
#include "blame/object_stats.h"
#include "blame/shared_objs.h"
#include "common/db_name.h"
#include "core/thread.h"
#include "util/clock.h"

#define MS 1000000u

/* Each test's mutex: a record of its own (a record's key is only the
 * object's address), so that no test finds another's last event. */
static pthread_mutex_t objects[3];

/* This thread's record, and the mutex's record and lb_mon, held by the
 * tree since `at` and released by this thread at at + 1 ms. The table's
 * file, beside a database in /tmp, is removed once mapped. */
static lb_shared_obj_t *released_mutex(pthread_mutex_t *object, lb_mon_t *mon, uint64_t at)
{
    lb_thread_t *self = lb_thread_attach(0, 0, 0);
    ASSERT_NOT_NULL(self);
    self->cct = NULL; /* no calling contexts: nothing here unwinds */
    char db[64], table[80];
    snprintf(db, sizeof db, "/tmp/lockblame-unit-shared_objs.%d.db", (int)getpid());
    lb_shared_table_path(table, sizeof table, db);
    lb_shared_objs_place(db, true);
    memset(mon, 0, sizeof *mon);
    mon->kind = LB_OBJ_MUTEX;
    mon->addr = object;
    lb_shared_register(object, LB_OBJ_MUTEX, 0);
    unlink(table);
    lb_shared_obj_t *r = lb_shared_find(object);
    ASSERT_NOT_NULL(r);
    lb_shared_acquired(r, mon, at);
    lb_shared_collect(r, mon, at + MS);
    return r;
}

/* A wait on r begun at `at`, the word seen taken naming owner, ended by
 * this thread's acquisition 3 ms later: how many waits this process then
 * calls ended from outside the tree. */
static uint64_t outside_after_wait(lb_shared_obj_t *r, lb_mon_t *mon, uint64_t at, int32_t owner)
{
    uint64_t before = lb_shared_outside_waits();
    lb_shared_wait_t w = { .r = r, .releases = lb_shared_releases(r) };
    lb_shared_wait_begins(&w, mon, at, true, owner);
    lb_shared_wait_ends(&w, mon, at + 3 * MS, true, true, false);
    return lb_shared_outside_waits() - before;
}

/* The tests' times: a second ahead of the clock, so that a record's own
 * events at the real time (its creation) all come before them however
 * long the test is preempted, and accrual, which ignores a time before a
 * record's last event, takes every one of them. */
static uint64_t test_start(void)
{
    return lb_now_ns() + 1000 * MS;
}

static void test_word_naming_no_owner_is_no_outsider(void)
{
    lb_mon_t mon;
    uint64_t t = test_start();
    lb_shared_obj_t *r = released_mutex(&objects[0], &mon, t);
    ASSERT_EQ(outside_after_wait(r, &mon, t + 3 * MS, 0), 0u);
}

static void test_word_naming_the_last_releaser_is_no_outsider(void)
{
    lb_mon_t mon;
    uint64_t t = test_start();
    lb_shared_obj_t *r = released_mutex(&objects[1], &mon, t);
    ASSERT_EQ(outside_after_wait(r, &mon, t + 3 * MS, (int32_t)gettid()), 0u);
}

static void test_word_naming_another_thread_is_an_outsider(void)
{
    lb_mon_t mon;
    uint64_t t = test_start();
    lb_shared_obj_t *r = released_mutex(&objects[2], &mon, t);
    /* a thread the tree never saw acquire it: its hold's waiting is unattributed */
    ASSERT_EQ(outside_after_wait(r, &mon, t + 3 * MS, 0x3fffffff), 1u);
}

CHECK_MAIN(test_word_naming_no_owner_is_no_outsider,
           test_word_naming_the_last_releaser_is_no_outsider,
           test_word_naming_another_thread_is_an_outsider)
