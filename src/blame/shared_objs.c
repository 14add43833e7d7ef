/* Synchronization objects shared across a profiled tree (contract and
 * invariants in shared_objs.h). */
#include "blame/shared_objs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <unistd.h>

#include "blame/object_stats.h"
#include "blame/shared_table.h"
#include "common/db_name.h"
#include "common/file_room.h"
#include "core/hooks.h"
#include "core/phase.h"
#include "util/clock.h"
#include "util/common.h"
#include "util/meta_lock.h"
#include "util/raw_mmap.h"

/* A release of the tree counts itself before the real call (nothing runs
 * after it): one counted this long before a wait began may still be on
 * its way to the real post, signal or unlock that ends the wait, so such
 * a wait is not said to be ended from outside the tree. */
#define LB_SHARED_IN_FLIGHT_NS 1000000u

uint32_t lb_shared_objs_on;
static lb_shared_obj_t *records;  /* the table, inherited across fork, mapped again after exec */
static char table_path[PATH_MAX]; /* its file ("": none, the table is anonymous) */
static int32_t self_slot = -1;    /* this process's slot in the tree's part (-1: none) */
/* Whether this process has its slot: a fork child is counted by its
 * parent but takes its slot only at its first wait on a shared object, or
 * before an exec (take_slot), so that a child that never waits on one
 * reads no /proc file and touches no page of the table. */
enum {
    SLOT_NONE,
    SLOT_OWED,
    SLOT_TAKING,
    SLOT_TAKEN
};
static uint32_t slot_state LB_FORK_WRITTEN; /* a fork child's is its own (util/common.h) */
/* This process's threads waiting on each record now: LB_SHARED_RECORDS
 * counts, mapped at its first wait on a shared object (NULL: none waited;
 * a fork child starts with none, its parent's copy unmapped). */
static uint32_t *local_waiting;
/* The address of each record's object in this process, where it knows it. */
static uintptr_t local_addr[LB_SHARED_RECORDS];
/* Atomics; a fork child's start from 0 (forget_waits), on the pages it
 * writes anyway (util/common.h). */
static struct {
    uint64_t outside_ns; /* waits this process saw ended from outside the tree */
    uint64_t outside_waits;
    uint64_t killed_ns; /* waits of processes gone that this process dropped */
    uint64_t killed_waits;
} ended LB_FORK_WRITTEN;

void lb_shared_objs_place(const char *db_path, bool tree_root)
{
    if (lb_shared_table_path(table_path, sizeof table_path, db_path) >= (int)sizeof table_path)
        table_path[0] = '\0';
    else if (tree_root)
        unlink(table_path); /* a table left by an earlier tree that was killed */
}

/* The table's file, opened (created if `create`); -1 if none. */
static int open_table(bool create)
{
    if (!table_path[0])
        return -1;
    int fd = open(table_path, O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0), 0600);
    if (fd >= 0 && !lb_file_room(fd, (off_t)(LB_SHARED_SPAN - 4096))) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* The table: the tree's file (created if `create`), else, with no file, a
 * mapping of this process's own (which forks inherit); NULL if neither. */
static lb_shared_obj_t *map_table(bool create)
{
    int saved_errno = errno;
    int fd = open_table(create);
    if (fd < 0 && !create) { /* no table to join yet */
        errno = saved_errno;
        return NULL;
    }
    char *p = fd >= 0 ? lb_mmap(NULL, LB_SHARED_SPAN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                      : lb_mmap(NULL, LB_SHARED_SPAN, PROT_READ | PROT_WRITE,
                                MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (fd >= 0)
        close(fd);
    errno = saved_errno;
    if (p == MAP_FAILED)
        return NULL;
    mprotect(p + LB_SHARED_SPAN - 4096, 4096, PROT_NONE);
    return (lb_shared_obj_t *)p;
}

/* This process takes its part in table (now its own): a slot, and a count
 * unless it adopted its previous image's, counted before the exec. */
static void join_tree(lb_shared_obj_t *table)
{
    lb_shared_tree_t *tree = lb_shared_tree_of(table);
    bool adopted = false;
    self_slot = lb_shared_proc_join(tree, &adopted);
    __atomic_store_n(&slot_state, SLOT_TAKEN, __ATOMIC_RELEASE);
    if (!adopted)
        __atomic_add_fetch(&tree->processes, 1, __ATOMIC_ACQ_REL);
}

/* A fork child counted by its parent takes its slot now, once (another
 * thread taking it meanwhile is waited for: a few system calls). */
static void take_slot(void)
{
    uint32_t state = SLOT_OWED;
    if (__atomic_compare_exchange_n(&slot_state, &state, SLOT_TAKING, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
        int saved_errno = errno;
        bool adopted = false; /* (never: a fork child has a pid of its own) */
        self_slot = lb_shared_proc_join(lb_shared_tree_of(records), &adopted);
        errno = saved_errno;
        __atomic_store_n(&slot_state, SLOT_TAKEN, __ATOMIC_RELEASE);
        return;
    }
    while (state == SLOT_TAKING) {
        sched_yield();
        state = __atomic_load_n(&slot_state, __ATOMIC_ACQUIRE);
    }
}

/* This process's counts of its threads' waits per record, mapped on
 * first use; NULL if that fails (its waits then stay in w if it dies with
 * threads waiting, as a killed process's do until the tree drops them). */
static uint32_t *waiting_counts(void)
{
    uint32_t *counts = __atomic_load_n(&local_waiting, __ATOMIC_ACQUIRE);
    if (counts)
        return counts;
    size_t size = LB_SHARED_RECORDS * sizeof *counts;
    int saved_errno = errno;
    void *p = lb_mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        errno = saved_errno;
        return NULL;
    }
    if (!__atomic_compare_exchange_n(&local_waiting, &counts, (uint32_t *)p, false,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        lb_munmap(p, size); /* another thread's came first: counts is it */
        errno = saved_errno;
        return counts;
    }
    errno = saved_errno;
    return (uint32_t *)p;
}

/* The table, mapped on first use (created if `create`); NULL if none. */
static lb_shared_obj_t *mapping(bool create)
{
    lb_shared_obj_t *r = __atomic_load_n(&records, __ATOMIC_ACQUIRE);
    if (r)
        return r;
    lb_shared_obj_t *p = map_table(create);
    if (!p)
        return NULL;
    lb_shared_obj_t *expected = NULL;
    if (!__atomic_compare_exchange_n(&records, &expected, p, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        lb_munmap(p, LB_SHARED_SPAN);
        return expected;
    }
    join_tree(p);
    __atomic_store_n(&lb_shared_objs_on, 1, __ATOMIC_RELEASE);
    return p;
}

void lb_shared_file_mapped(void *addr, size_t len, int fd, off_t off)
{
    int saved_errno = errno;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        lb_shared_file_identified(addr, len, st.st_dev, st.st_ino, off);
    errno = saved_errno;
}

void lb_shared_file_identified(void *addr, size_t len, dev_t dev, ino_t ino, off_t off)
{
    if (lb_self && lb_self->busy)
        return; /* (lockblame's own: SQLite's, at the final write) */
    lb_shared_keys_add(addr, len, dev, ino, off);
    mapping(false); /* an exec'd process maps the tree's shared memory: its table too */
}

static uint32_t slot_of(const lb_shared_key_t *key)
{
    uint64_t h = (key->at ^ key->ino * 0xff51afd7ed558ccdull ^ key->file * 0xc4ceb9fe1a85ec53ull) *
                 0x9e3779b97f4a7c15ull;
    return (uint32_t)(h >> 40) & (LB_SHARED_RECORDS - 1);
}

/* key's record in table, NULL if absent (or, inserting, if full). A new
 * record is made under the tree's insert lock, so that two processes
 * inserting one key make one record. */
static lb_shared_obj_t *lookup(lb_shared_obj_t *table, const lb_shared_key_t *key, uintptr_t addr,
                               bool insert)
{
    uint32_t i = slot_of(key);
    for (uint32_t probes = 0; probes < LB_SHARED_RECORDS; probes++) {
        lb_shared_obj_t *r = &table[(i + probes) & (LB_SHARED_RECORDS - 1)];
        if (!__atomic_load_n(&r->used, __ATOMIC_ACQUIRE)) {
            if (!insert)
                return NULL;
            lb_meta_lock_t *lock = &lb_shared_tree_of(table)->insert;
            lb_meta_lock(lock);
            lb_shared_obj_t *found = lookup(table, key, addr, false);
            if (!found && !__atomic_load_n(&r->used, __ATOMIC_ACQUIRE)) {
                r->key = *key;
                r->addr = addr;
                __atomic_store_n(&r->used, 1, __ATOMIC_RELEASE);
                found = r;
            }
            lb_meta_unlock(lock);
            if (found)
                return found;
            continue; /* another key took r meanwhile */
        }
        if (lb_shared_key_eq(&r->key, key))
            return r;
    }
    return NULL;
}

static uint32_t index_of(const lb_shared_obj_t *r)
{
    return (uint32_t)(r - records);
}

/* r is obj's record: this process knows obj's address. */
static lb_shared_obj_t *known_at(lb_shared_obj_t *r, const void *obj)
{
    if (r && local_addr[index_of(r)] != (uintptr_t)obj)
        local_addr[index_of(r)] = (uintptr_t)obj;
    return r;
}

/* obj's record, found or made (with the table, on first use); NULL if
 * the table cannot be mapped or is full. */
static lb_shared_obj_t *record_of(const void *obj)
{
    lb_shared_obj_t *table = mapping(true);
    lb_shared_key_t key = lb_shared_key_of(obj);
    return table ? known_at(lookup(table, &key, (uintptr_t)obj, true), obj) : NULL;
}

void lb_shared_register(const void *obj, lb_obj_kind kind, uint32_t barrier_count)
{
    int saved_errno = errno;
    lb_shared_obj_t *r = record_of(obj);
    if (r) { /* initialized again on the same memory: no waiters now */
        lb_meta_lock(&r->lock);
        r->kind = (uint8_t)kind;
        r->held = 0;
        r->unseen_owner = 0;
        r->released_by = 0;
        r->changed_ns = 0;
        r->waiters = 0;
        r->draining = 0;
        r->barrier_count = barrier_count;
        r->barrier_arrived = 0;
        r->owed_ns = 0;
        r->handoff_ns = 0;
        r->released_ns = 0;
        r->holders = 0;
        r->clock = 0;
        r->clock_at_holds = 0;
        r->last_ns = lb_now_ns();
        lb_meta_unlock(&r->lock);
    }
    errno = saved_errno;
}

void lb_shared_open(const void *obj, lb_obj_kind kind)
{
    int saved_errno = errno;
    lb_shared_obj_t *r = record_of(obj);
    if (r) {
        lb_meta_lock(&r->lock);
        if (!r->last_ns) { /* made now: its creator is outside the tree */
            r->kind = (uint8_t)kind;
            r->last_ns = lb_now_ns();
        }
        lb_meta_unlock(&r->lock);
    }
    errno = saved_errno;
}

lb_shared_obj_t *lb_shared_find_slow(const void *obj)
{
    lb_shared_obj_t *table = __atomic_load_n(&records, __ATOMIC_ACQUIRE);
    if (!table)
        return NULL;
    lb_shared_key_t key = lb_shared_key_of(obj);
    return known_at(lookup(table, &key, (uintptr_t)obj, false), obj);
}

/* Processes of the tree gone while they waited, at most once per sweep
 * interval (shared_table.h), from a wait that begins: killed waiters leave
 * their records before the next release, as far as waits begin in the
 * tree between the two. Not from a release: a post may run in a signal
 * handler. errno kept. */
static void sweep_gone(void)
{
    int saved_errno = errno;
    lb_shared_procs_sweep(records, self_slot, lb_now_ns(), false);
    errno = saved_errno;
}

/* Under r->lock: accrual up to now. A mutex nobody holds, and a barrier's
 * released waiters, accrue hand-off; the rest is owed to the next
 * release. */
static void accrue_waiters(lb_shared_obj_t *r, uint32_t waiters, uint32_t draining, double dt)
{
    if ((r->kind == LB_OBJ_MUTEX && !r->held) || (r->kind == LB_OBJ_RWLOCK && !r->holders)) {
        r->handoff_ns += (double)waiters * dt;
        return;
    }
    if (r->kind == LB_OBJ_RWLOCK) { /* holders share it (rule 3) */
        r->clock += (double)waiters * dt / (double)r->holders;
        return;
    }
    r->owed_ns += (double)(waiters - draining) * dt;
    r->handoff_ns += (double)draining * dt;
}

static void accrue(lb_shared_obj_t *r, uint64_t now)
{
    if (now <= r->last_ns)
        return; /* another process's clock read was a little later */
    double dt = (double)(now - r->last_ns);
    r->last_ns = now;
    accrue_waiters(r, r->waiters, r->draining < r->waiters ? r->draining : r->waiters, dt);
}

/* Under r->lock, accrual up to date: how far a waiter's own clock read,
 * `now`, lies before the time the accrual reached (another process's
 * event came between the read and the lock). Its wait, as it measures
 * it, begins or ends that much earlier than the accrual counts it: the
 * difference goes to the hand-off, so that the tree's rows still add up
 * to the measured waits. */
static double late_by(const lb_shared_obj_t *r, uint64_t now)
{
    return now < r->last_ns ? (double)(r->last_ns - now) : 0;
}

/* Under r->lock, accrual up to date: a waiter whose wait began at `now`
 * joins w late (its thread was descheduled, or yielded for r->lock,
 * between its clock read and here, while another process's event moved
 * the accrual on). With no hold begun or ended in the tree in between,
 * the object's state is the one it waited in: the late part accrues as
 * the rest of its wait will (owed to the release that ends it, or the
 * rwlock holders' share), not as hand-off. */
static void joins_late(lb_shared_obj_t *r, uint64_t now)
{
    double late = late_by(r, now);
    if (late <= 0)
        return;
    if (r->changed_ns > now)
        r->handoff_ns += late; /* holds changed between: whose it was is unknown */
    else
        accrue_waiters(r, 1, 0, late);
}

/* Under r->lock: the owed integral goes to nobody in the tree (a release
 * by a process outside it); returned, ns. */
static double owed_to_outside(lb_shared_obj_t *r)
{
    double owed = r->owed_ns;
    r->owed_ns = 0;
    return owed;
}

/* This process's record for mon (a shared object's), marked shared, takes
 * hand-off, outside and expired idleness (ns); returns the record (NULL if
 * none). */
static lb_object_stats_t *local_takes(lb_mon_t *mon, double handoff, double outside, double expired)
{
    int saved_errno = errno; /* (a first record may map memory) */
    lb_meta_lock(&mon->meta);
    lb_object_stats_t *stats = lb_object_stats_of(mon);
    if (stats) {
        stats->shared = 1;
        stats->shared_handoff_ns += handoff;
        stats->outside_ns += outside;
        stats->expired_ns += expired;
    }
    lb_meta_unlock(&mon->meta);
    if (outside > 0) {
        __atomic_fetch_add(&ended.outside_waits, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&ended.outside_ns, (uint64_t)outside, __ATOMIC_RELAXED);
    }
    errno = saved_errno;
    return stats;
}

/* Under r->lock: the tree's last release may not have reached its real
 * call yet at `at` (LB_SHARED_IN_FLIGHT_NS). */
static bool release_in_flight(const lb_shared_obj_t *r, uint64_t at)
{
    return r->released_ns && at < r->released_ns + LB_SHARED_IN_FLIGHT_NS;
}

/* A wait of this process on r, begun at `now` and counted in w: its
 * entry, which lets the tree drop it if the process is killed; then, the
 * thread being about to block, a look for processes gone (after the
 * record's update: system calls between the wait's clock read and the
 * update would make its start late). */
static void waiting(lb_shared_wait_t *w, lb_shared_obj_t *r, uint64_t now)
{
    uint32_t *counts = waiting_counts();
    if (counts)
        __atomic_add_fetch(&counts[index_of(r)], 1, __ATOMIC_RELAXED);
    w->counted = counts != NULL;
    if (lb_unlikely(__atomic_load_n(&slot_state, __ATOMIC_ACQUIRE) != SLOT_TAKEN))
        take_slot();
    w->entry = lb_shared_wait_enter(lb_shared_tree_of(records), self_slot, index_of(r), now);
    sweep_gone();
}

/* ... and its end, before it leaves w. */
static void done_waiting(const lb_shared_wait_t *w)
{
    lb_shared_wait_leave(lb_shared_tree_of(records), w->entry);
    if (w->counted)
        __atomic_sub_fetch(&local_waiting[index_of(w->r)], 1, __ATOMIC_RELAXED);
}

/* The calling thread's expired run (wait_note.h) if it is on mon: its
 * last wait there ran out of time (and the wait now open, if any, went on
 * its run); else NULL. */
static lb_expired_run_t *expired_run_of(const lb_mon_t *mon)
{
    lb_expired_run_t *x = lb_self && lb_self->wait_note ? &lb_self->wait_note->expired : NULL;
    return x && x->mon == mon ? x : NULL;
}

/* Under r->lock: is x's shared part r as it saw it, no release of the
 * tree since (its generation, wait_note.h)? */
static bool expired_same(const lb_expired_run_t *x, const lb_shared_obj_t *r)
{
    return x->shared == r && x->shared_releases == r->releases;
}

/* Under r->lock: a wait of the calling thread begins on r and went on the
 * run of its last one, which ran out of time (its begin said so: carried,
 * blame.c): what that one took back from owed_ns into expired_ns goes
 * back (returned, ns), if no release of the tree came since. */
static double expired_put_back(lb_shared_obj_t *r, const lb_mon_t *mon)
{
    lb_expired_run_t *x = expired_run_of(mon);
    if (!x || !x->carried || x->shared != r || x->shared_taken <= 0)
        return 0;
    if (!expired_same(x, r)) {
        x->shared_taken = 0;
        return 0;
    }
    r->owed_ns += x->shared_taken;
    x->shared_carried = 1;
    return x->shared_taken;
}

void lb_shared_wait_begins(lb_shared_wait_t *w, lb_mon_t *mon, uint64_t now, bool taken,
                           int32_t owner)
{
    w->begun_ns = now;
    lb_shared_obj_t *r = w->r;
    lb_meta_lock(&r->lock);
    accrue(r, now);
    /* A word seen taken names its holder, unless that holder is on its
     * way in or out (glibc names the owner after taking the word and
     * clears it before freeing it) or freed it after the word was seen
     * taken (a wait's clock read and look-ups come between): owner 0
     * names nobody the tree did not see, and the record stays as it is. */
    if (r->kind == LB_OBJ_MUTEX && taken && owner && !r->held && !release_in_flight(r, now)) {
        r->held = 1; /* held, by a holder the tree did not see acquire it */
        r->unseen_owner = owner;
    }
    joins_late(r, now);
    r->waiters++;
    double put_back = expired_put_back(r, mon);
    lb_meta_unlock(&r->lock);
    waiting(w, r, now);
    local_takes(mon, 0, 0, -put_back);
}

uint64_t lb_shared_releases(const lb_shared_obj_t *r)
{
    return __atomic_load_n(&r->releases, __ATOMIC_ACQUIRE);
}

bool lb_shared_signal_pending(const lb_shared_obj_t *r)
{
    uint64_t returned = __atomic_load_n(&r->signals_returned, __ATOMIC_ACQUIRE);
    return returned < __atomic_load_n(&r->releases, __ATOMIC_ACQUIRE);
}

void lb_shared_signal_returned(lb_shared_obj_t *r)
{
    __atomic_add_fetch(&r->signals_returned, 1, __ATOMIC_ACQ_REL);
}

/* Under r->lock: a mutex's hold begins (acquired by this process's
 * thread tid); returns the idleness of an unseen hold before it
 * (outside). A hold a waiter marked unseen is no outsider's where its
 * lock word named a thread of the tree: tid itself (its acquisition
 * came before its accounting, a preemption between them: its release
 * takes what accrued), or the tree's last releaser (its release was
 * counted, its real unlock came later: what accrued since is hand-off,
 * as in any gap between holds). */
static double hold_begins(lb_shared_obj_t *r, int32_t tid)
{
    bool unseen = r->held && r->unseen_owner;
    bool own = unseen && r->unseen_owner == tid;
    if (unseen && !own && r->unseen_owner == r->released_by) {
        r->handoff_ns += r->owed_ns;
        r->owed_ns = 0;
    }
    double outside = r->held && !own ? owed_to_outside(r) : 0; /* its release was not seen */
    r->held = 1;
    r->unseen_owner = 0;
    r->changed_ns = r->last_ns;
    if (!own)
        r->owed_ns = 0;
    return outside;
}

/* The calling thread's id, as a mutex's lock word names its owner. */
static int32_t self_tid(void)
{
    return lb_self ? (int32_t)lb_self->tid : 0;
}

/* Under r->lock, accrual up to date: a cond or semaphore wait begun at
 * begun that ran out of time at now takes its own accrual since the
 * tree's last release back from what the next release would take
 * (returned, ns: unattributed), and what its run's earlier waits took
 * and its begin put back (carried: the thread's expired run, wait_note.h). */
static double expired_takes(lb_shared_obj_t *r, uint64_t begun, uint64_t now, double carried)
{
    uint64_t since = r->released_ns > begun ? r->released_ns : begun;
    double own = (now > since ? (double)(now - since) : 0) + carried;
    double taken = own < r->owed_ns ? own : (r->owed_ns > 0 ? r->owed_ns : 0);
    r->owed_ns -= taken;
    return taken;
}

void lb_shared_wait_ends(const lb_shared_wait_t *w, lb_mon_t *mon, uint64_t now, bool acquired,
                         bool woken, bool timed_out)
{
    lb_shared_obj_t *r = w->r;
    double outside = 0, expired = 0;
    done_waiting(w);
    lb_meta_lock(&r->lock);
    accrue(r, now);
    if (r->waiters) {
        r->waiters--;
        r->handoff_ns -= late_by(r, now);
    }
    if (r->draining)
        r->draining--;
    if (r->kind == LB_OBJ_MUTEX) {
        if (acquired)
            outside = hold_begins(r, self_tid());
    } else if (r->kind != LB_OBJ_RWLOCK && woken && r->releases == w->releases &&
               !w->signal_pending && !release_in_flight(r, w->begun_ns)) {
        /* no release of the tree ended it: none came after the wait began,
         * and none logged before it was still on its way to its real call
         * (a signaller preempted there for longer than the in-flight
         * window wakes a wait begun after its log) */
        outside = owed_to_outside(r);
    } else if (lb_obj_kind_is_signalled(r->kind) && timed_out) {
        lb_expired_run_t *x = expired_run_of(mon);
        double carried = x && x->shared_carried && expired_same(x, r) ? x->shared_taken : 0;
        expired = expired_takes(r, w->begun_ns, now, carried);
        if (x) {
            x->shared = r;
            x->shared_taken = expired;
            x->shared_releases = r->releases;
            x->shared_carried = 0;
        }
    }
    double handoff = r->handoff_ns;
    r->handoff_ns = 0;
    lb_meta_unlock(&r->lock);
    local_takes(mon, handoff, outside, expired);
}

void lb_shared_acquired(lb_shared_obj_t *r, lb_mon_t *mon, uint64_t now)
{
    lb_meta_lock(&r->lock);
    accrue(r, now);
    double outside = hold_begins(r, self_tid());
    double handoff = r->handoff_ns;
    r->handoff_ns = 0;
    lb_meta_unlock(&r->lock);
    if (outside > 0 || handoff != 0)
        local_takes(mon, handoff, outside, 0);
}

void lb_shared_acquisition(lb_thread_t *self, lb_mon_t *mon)
{
    uint32_t index = __atomic_load_n(&mon->stats, __ATOMIC_ACQUIRE);
    if (lb_unlikely(index == 0)) {
        int saved_errno = errno; /* (a first record may map memory) */
        lb_meta_lock(&mon->meta);
        lb_object_stats_t *stats = lb_object_stats_of(mon);
        if (stats)
            stats->shared = 1;
        index = mon->stats;
        lb_meta_unlock(&mon->meta);
        errno = saved_errno;
    }
    lb_object_stats_t *stats = lb_object_stats_at(index);
    if (stats)
        __atomic_fetch_add(&stats->acquisitions, 1, __ATOMIC_RELAXED);
    else
        ++self->unrecorded_acquisitions[LB_OBJ_MUTEX];
}

/* Under r->lock, accrual up to date: the owed integral, taken by a
 * release of the tree. */
static double release_takes(lb_shared_obj_t *r, uint64_t now)
{
    r->released_ns = now;
    r->changed_ns = r->last_ns;
    r->released_by = self_tid();
    double taken = r->owed_ns;
    r->owed_ns = 0;
    r->held = 0;
    r->unseen_owner = 0;
    __atomic_store_n(&r->releases, r->releases + 1, __ATOMIC_RELEASE); /* (read unlocked) */
    return taken;
}

static lb_hold_t collected(lb_mon_t *mon, double taken)
{
    if (taken <= 0)
        return (lb_hold_t){ .blame_ns = 0 };
    int saved_errno = errno;
    lb_meta_lock(&mon->meta);
    lb_object_stats_t *stats = lb_object_stats_of(mon);
    if (stats) {
        stats->shared = 1;
        stats->blamed_ns += taken;
    }
    lb_hold_t hold = { .blame_ns = taken, .record = stats, .stats = mon->stats };
    lb_meta_unlock(&mon->meta);
    errno = saved_errno;
    return hold;
}

lb_hold_t lb_shared_collect(lb_shared_obj_t *r, lb_mon_t *mon, uint64_t now)
{
    lb_meta_lock(&r->lock);
    accrue(r, now);
    double taken = release_takes(r, now);
    lb_meta_unlock(&r->lock);
    return collected(mon, taken);
}

void lb_shared_blame(lb_thread_t *self, lb_shared_obj_t *r, lb_mon_t *mon, lb_obj_kind kind,
                     uintptr_t site)
{
    lb_hold_t hold = lb_shared_collect(r, mon, lb_now_ns());
    lb_deposit(self, &hold, kind, site);
}

bool lb_shared_barrier_arrive(lb_shared_wait_t *w, lb_shared_obj_t *r, lb_mon_t *mon, uint64_t now,
                              lb_hold_t *hold)
{
    lb_meta_lock(&r->lock);
    accrue(r, now);
    bool last = r->barrier_count && ++r->barrier_arrived >= r->barrier_count;
    double taken = 0;
    if (last) {
        taken = release_takes(r, now);
        r->barrier_arrived = 0;
        r->draining = r->waiters; /* released: on their way out, hand-off */
    } else {
        joins_late(r, now);
        r->waiters++;
        w->r = r;
        w->begun_ns = now;
        w->releases = r->releases;
    }
    lb_meta_unlock(&r->lock);
    if (last) {
        *hold = collected(mon, taken);
        return true;
    }
    waiting(w, r, now);
    local_takes(mon, 0, 0, 0);
    return false;
}

double lb_shared_rw_acquired(lb_shared_obj_t *r, lb_mon_t *mon, uint64_t now)
{
    lb_meta_lock(&r->lock);
    accrue(r, now);
    r->holders++;
    r->changed_ns = r->last_ns;
    double at = r->clock;
    r->clock_at_holds += at;
    double handoff = r->handoff_ns;
    r->handoff_ns = 0;
    lb_meta_unlock(&r->lock);
    if (handoff != 0)
        local_takes(mon, handoff, 0, 0);
    return at;
}

lb_hold_t lb_shared_rw_released(lb_shared_obj_t *r, lb_mon_t *mon, uint64_t now, double at)
{
    lb_meta_lock(&r->lock);
    accrue(r, now);
    double taken = r->clock - at;
    if (r->holders) {
        r->holders--;
        r->clock_at_holds -= at;
    }
    r->released_ns = now;
    r->changed_ns = r->last_ns;
    __atomic_store_n(&r->releases, r->releases + 1, __ATOMIC_RELEASE);
    lb_meta_unlock(&r->lock);
    return collected(mon, taken);
}

uint64_t lb_shared_outside_ns(void)
{
    return __atomic_load_n(&ended.outside_ns, __ATOMIC_RELAXED);
}

uint64_t lb_shared_outside_waits(void)
{
    return __atomic_load_n(&ended.outside_waits, __ATOMIC_RELAXED);
}

uint64_t lb_shared_killed_ns(void)
{
    return __atomic_load_n(&ended.killed_ns, __ATOMIC_RELAXED);
}

uint64_t lb_shared_killed_waits(void)
{
    return __atomic_load_n(&ended.killed_waits, __ATOMIC_RELAXED);
}

void lb_shared_drop_wait(lb_shared_obj_t *r, uint64_t begun_ns, uint64_t now)
{
    lb_meta_lock(&r->lock);
    accrue(r, now);
    /* It accrued up to the record's last event, which another process's
     * later clock read may have put after `now`. */
    double unseen = r->last_ns > begun_ns ? (double)(r->last_ns - begun_ns) : 0;
    if (r->waiters)
        r->waiters--;
    if (r->draining > r->waiters)
        r->draining = r->waiters;
    /* What it accrued since it began is in no process's waits: it leaves
     * what the tree owes, as far as no release took it yet. */
    double from_owed = unseen < r->owed_ns ? unseen : (r->owed_ns > 0 ? r->owed_ns : 0);
    r->owed_ns -= from_owed;
    double rest = unseen - from_owed;
    r->handoff_ns -= rest < r->handoff_ns ? rest : (r->handoff_ns > 0 ? r->handoff_ns : 0);
    lb_meta_unlock(&r->lock);
    __atomic_fetch_add(&ended.killed_waits, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&ended.killed_ns, (uint64_t)unseen, __ATOMIC_RELAXED);
}

/* This process's record of r's object for the idleness the tree still
 * owes at its end: a record of its own waits or releases if it has one
 * (settled_ns is written by nobody else), else a new one. */
static lb_object_stats_t *settling_record(const lb_shared_obj_t *r)
{
    uintptr_t addr = local_addr[index_of(r)] ? local_addr[index_of(r)] : r->addr;
    uint32_t count = lb_object_stats_count();
    for (uint32_t i = 1; i < count; i++) {
        lb_object_stats_t *s = lb_object_stats_at(i);
        if (s && s->addr == addr && s->kind == r->kind && s->shared)
            return s;
    }
    lb_object_stats_t *s = lb_object_stats_at(lb_object_stats_new(addr, (lb_obj_kind)r->kind));
    if (s)
        s->shared = 1;
    return s;
}

/* The tree's last process ends: what every shared object still owes (the
 * idleness of waiters that no release of the tree took: waiters woken by
 * the last signal on their way out, waits still in progress, the share
 * of an rwlock's holders still holding) and its hand-off nobody took are
 * settled here as unattributed, so that each object's rows add up to its
 * waits across the tree. */
static void settle(lb_shared_obj_t *table, uint64_t now)
{
    for (uint32_t i = 0; i < LB_SHARED_RECORDS; i++) {
        lb_shared_obj_t *r = &table[i];
        if (!__atomic_load_n(&r->used, __ATOMIC_ACQUIRE))
            continue;
        lb_meta_lock(&r->lock);
        accrue(r, now);
        double held = (double)r->holders * r->clock - r->clock_at_holds;
        double owed = r->owed_ns + r->handoff_ns + (held > 0 ? held : 0);
        r->owed_ns = 0;
        r->handoff_ns = 0;
        r->clock_at_holds = (double)r->holders * r->clock;
        lb_meta_unlock(&r->lock);
        lb_object_stats_t *s = owed != 0 ? settling_record(r) : NULL;
        if (s)
            s->settled_ns += owed;
    }
}

/* The process ends: its threads still waiting wait no more; it looks for
 * processes of the tree killed outright, and the tree's last process
 * settles what the tree still owes and removes the table's file. An exec
 * hands its slot and its count on to the next image. */
static void leave(const char *reason)
{
    lb_shared_obj_t *table = __atomic_load_n(&records, __ATOMIC_ACQUIRE);
    if (!table)
        return;
    uint64_t now = lb_now_ns();
    uint32_t *counts = __atomic_load_n(&local_waiting, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; counts && i < LB_SHARED_RECORDS; i++) {
        uint32_t n = __atomic_exchange_n(&counts[i], 0, __ATOMIC_ACQ_REL);
        if (!n)
            continue;
        lb_meta_lock(&table[i].lock);
        accrue(&table[i], now);
        table[i].waiters -= n < table[i].waiters ? n : table[i].waiters;
        table[i].draining -= n < table[i].draining ? n : table[i].draining;
        lb_meta_unlock(&table[i].lock);
    }
    lb_shared_tree_t *tree = lb_shared_tree_of(table);
    lb_shared_proc_waits_clear(tree, self_slot);
    if (strcmp(reason, "exec") == 0) {
        /* the next image adopts this slot, and with it the count */
        if (__atomic_load_n(&slot_state, __ATOMIC_ACQUIRE) != SLOT_TAKEN)
            take_slot();
        return;
    }
    lb_shared_procs_sweep(table, self_slot, now, true);
    if (self_slot >= 0)
        __atomic_store_n(&tree->proc[self_slot].state, LB_SHARED_PROC_FREE, __ATOMIC_RELEASE);
    self_slot = -1;
    if (__atomic_sub_fetch(&tree->processes, 1, __ATOMIC_ACQ_REL) == 0) {
        settle(table, now);
        if (table_path[0])
            unlink(table_path);
    }
}

/* A fork: the child will hold the mapping too (counted before the fork,
 * so that the parent cannot end first and find itself the last). */
static bool fork_counted
    LB_FORK_WRITTEN; /* the fork under way counted its child (a child reads its copy) */
static void counting_child(void)
{
    lb_shared_obj_t *table = __atomic_load_n(&records, __ATOMIC_ACQUIRE);
    fork_counted = table && lb_runtime_monitoring();
    if (fork_counted)
        __atomic_add_fetch(&lb_shared_tree_of(table)->processes, 1, __ATOMIC_ACQ_REL);
}

/* A fork child: the waits in progress were its parent's threads' (their
 * counts go, unmapped); it owes itself a slot, taken at its first wait on
 * a shared object (take_slot), and counts itself if the mapping came
 * after its parent's count. */
static void forget_waits(lb_thread_t *self)
{
    (void)self;
    lb_shared_obj_t *table = __atomic_load_n(&records, __ATOMIC_ACQUIRE);
    if (!table)
        return; /* (nothing written: its parent had no table either) */
    self_slot = -1;
    slot_state = SLOT_NONE;
    if (lb_runtime_monitoring()) {
        slot_state = SLOT_OWED;
        if (!fork_counted)
            __atomic_add_fetch(&lb_shared_tree_of(table)->processes, 1, __ATOMIC_ACQ_REL);
    }
    if (local_waiting) {
        lb_munmap(local_waiting, LB_SHARED_RECORDS * sizeof *local_waiting);
        local_waiting = NULL;
    }
    __atomic_store_n(&ended.outside_ns, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&ended.outside_waits, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&ended.killed_ns, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&ended.killed_waits, 0, __ATOMIC_RELAXED);
}

/* An exec'd image of the tree (or any later process of it) joins the
 * table its tree made, if there is one: its objects in shared files have
 * the same keys here. */
static void join_existing(void)
{
    int saved_errno = errno;
    if (table_path[0] && access(table_path, F_OK) == 0)
        mapping(false);
    errno = saved_errno;
}

LB_PROCESS_HOOKS(shared_objs_hooks) = {
    .rank = LB_RANK_BLAME,
    .setup = join_existing,
    .finish = leave,
    .fork_prepare = counting_child,
    .fork_child = forget_waits,
};
