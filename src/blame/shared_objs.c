/* Synchronization objects shared across a profiled tree (contract and
 * invariants in shared_objs.h). */
#include "blame/shared_objs.h"

#include <errno.h>
#include <sys/mman.h>

#include "blame/object_stats.h"
#include "core/hooks.h"
#include "core/phase.h"
#include "util/clock.h"
#include "util/common.h"
#include "util/meta_lock.h"

#define LB_SHARED_RECORDS      4096u /* a power of two */
/* The mapping's address space: at least lockblame's least span
 * (util/pages.c: no small hole among the libraries is filled), its last
 * page PROT_NONE. */
#define LB_SHARED_SPAN         ((size_t)2 << 20)
/* A release of the tree counts itself before the real call (nothing runs
 * after it): one counted this long before a wait began may still be on
 * its way to the real post, signal or unlock that ends the wait, so such
 * a wait is not said to be ended from outside the tree. */
#define LB_SHARED_IN_FLIGHT_NS 1000000u

struct lb_shared_obj {
    uintptr_t addr; /* the object; 0: a free record */
    lb_meta_lock_t lock;
    uint8_t kind;             /* lb_obj_kind */
    uint8_t held;             /* a mutex: a holder's hold is accounted */
    uint32_t waiters;         /* w: threads of every process waiting on it */
    uint32_t draining;        /* a barrier: waiters of a completed episode still waiting */
    uint32_t barrier_count;   /* a barrier: arrivals per episode (0: unknown) */
    uint32_t barrier_arrived; /* ... so far in this episode */
    uint64_t releases;        /* the tree's releases, posts, signals, completions (read
                               * without the lock too) */
    uint64_t last_ns;         /* accrual is up to date to here */
    uint64_t released_ns;     /* the tree's last release, post, signal or completion */
    uint32_t holders;         /* an rwlock: its holders the tree accounts (k) */
    double clock;             /* an rwlock: idleness per holder so far (V), ns */
    double clock_at_holds;    /* ... the sum of V at its holders' starts */
    double owed_ns;           /* the integral of w owed to the next release */
    double handoff_ns;        /* the integral of w blamed on nobody, not yet taken */
} __attribute__((aligned(LB_CACHELINE)));

/* The tree's part of the mapping, after the records. */
typedef struct lb_shared_tree {
    uint32_t processes; /* processes holding the mapping that have not finished */
} lb_shared_tree_t;

_Static_assert(sizeof(struct lb_shared_obj) * LB_SHARED_RECORDS + sizeof(lb_shared_tree_t) <=
                   LB_SHARED_SPAN - 4096,
               "the records and the tree's count fit below the guard page");

uint32_t lb_shared_objs_on;
static lb_shared_obj_t *records; /* the shared mapping, inherited across fork */
/* This process's threads waiting on each record now (fork child: none). */
static uint32_t local_waiting[LB_SHARED_RECORDS];
static uint64_t outside_ns; /* atomics: waits this process saw ended from outside the tree */
static uint64_t outside_waits;

static lb_shared_tree_t *tree_of(lb_shared_obj_t *table)
{
    return (lb_shared_tree_t *)(table + LB_SHARED_RECORDS);
}

static lb_shared_obj_t *mapping(void)
{
    lb_shared_obj_t *r = __atomic_load_n(&records, __ATOMIC_ACQUIRE);
    if (r)
        return r;
    char *p = mmap(NULL, LB_SHARED_SPAN, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    mprotect(p + LB_SHARED_SPAN - 4096, 4096, PROT_NONE);
    tree_of((lb_shared_obj_t *)p)->processes = 1; /* this one */
    lb_shared_obj_t *expected = NULL;
    if (!__atomic_compare_exchange_n(&records, &expected, (lb_shared_obj_t *)p, false,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        munmap(p, LB_SHARED_SPAN);
        return expected;
    }
    __atomic_store_n(&lb_shared_objs_on, 1, __ATOMIC_RELEASE);
    return (lb_shared_obj_t *)p;
}

static uint32_t slot_of(uintptr_t addr)
{
    uint64_t h = (uint64_t)addr * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(h >> 40) & (LB_SHARED_RECORDS - 1);
}

/* addr's record in table, inserted if `insert`; NULL if absent or full. */
static lb_shared_obj_t *lookup(lb_shared_obj_t *table, uintptr_t addr, bool insert)
{
    uint32_t i = slot_of(addr);
    for (uint32_t probes = 0; probes < LB_SHARED_RECORDS; probes++) {
        lb_shared_obj_t *r = &table[(i + probes) & (LB_SHARED_RECORDS - 1)];
        uintptr_t seen = __atomic_load_n(&r->addr, __ATOMIC_ACQUIRE);
        if (seen == addr)
            return r;
        if (seen == 0) {
            if (!insert)
                return NULL;
            if (__atomic_compare_exchange_n(&r->addr, &seen, addr, false, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE) ||
                seen == addr)
                return r;
        }
    }
    return NULL;
}

void lb_shared_register(const void *obj, lb_obj_kind kind, uint32_t barrier_count)
{
    int saved_errno = errno;
    lb_shared_obj_t *table = mapping();
    lb_shared_obj_t *r = table ? lookup(table, (uintptr_t)obj, true) : NULL;
    if (r) { /* initialized again on the same memory: no waiters now */
        lb_meta_lock(&r->lock);
        r->kind = (uint8_t)kind;
        r->held = 0;
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

lb_shared_obj_t *lb_shared_find_slow(const void *obj)
{
    lb_shared_obj_t *table = __atomic_load_n(&records, __ATOMIC_ACQUIRE);
    return table ? lookup(table, (uintptr_t)obj, false) : NULL;
}

/* Under r->lock: accrual up to now. A mutex nobody holds, and a barrier's
 * released waiters, accrue hand-off; the rest is owed to the next
 * release. */
static void accrue(lb_shared_obj_t *r, uint64_t now)
{
    if (now <= r->last_ns)
        return; /* another process's clock read was a little later */
    double dt = (double)(now - r->last_ns);
    r->last_ns = now;
    if ((r->kind == LB_OBJ_MUTEX && !r->held) || (r->kind == LB_OBJ_RWLOCK && !r->holders)) {
        r->handoff_ns += (double)r->waiters * dt;
        return;
    }
    if (r->kind == LB_OBJ_RWLOCK) { /* holders share it (rule 3) */
        r->clock += (double)r->waiters * dt / (double)r->holders;
        return;
    }
    uint32_t draining = r->draining < r->waiters ? r->draining : r->waiters;
    r->owed_ns += (double)(r->waiters - draining) * dt;
    r->handoff_ns += (double)draining * dt;
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

static uint32_t index_of(const lb_shared_obj_t *r)
{
    return (uint32_t)(r - records);
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
 * hand-off and outside idleness (ns); returns the record (NULL if none). */
static lb_object_stats_t *local_takes(lb_mon_t *mon, double handoff, double outside)
{
    int saved_errno = errno; /* (a first record may map memory) */
    lb_meta_lock(&mon->meta);
    lb_object_stats_t *stats = lb_object_stats_of(mon);
    if (stats) {
        stats->shared = 1;
        stats->shared_handoff_ns += handoff;
        stats->outside_ns += outside;
    }
    lb_meta_unlock(&mon->meta);
    if (outside > 0) {
        __atomic_fetch_add(&outside_waits, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&outside_ns, (uint64_t)outside, __ATOMIC_RELAXED);
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

void lb_shared_wait_begins(lb_shared_wait_t *w, lb_mon_t *mon, uint64_t now, bool taken)
{
    w->begun_ns = now;
    lb_shared_obj_t *r = w->r;
    lb_meta_lock(&r->lock);
    accrue(r, now);
    if (r->kind == LB_OBJ_MUTEX && taken && !r->held && !release_in_flight(r, now))
        r->held = 1; /* held, by a holder the tree did not see acquire it */
    r->handoff_ns += late_by(r, now);
    r->waiters++;
    lb_meta_unlock(&r->lock);
    __atomic_add_fetch(&local_waiting[index_of(r)], 1, __ATOMIC_RELAXED);
    local_takes(mon, 0, 0);
}

uint64_t lb_shared_releases(const lb_shared_obj_t *r)
{
    return __atomic_load_n(&r->releases, __ATOMIC_ACQUIRE);
}

/* Under r->lock: a mutex's hold begins (acquired by this process);
 * returns the idleness of an unseen hold before it (outside). */
static double hold_begins(lb_shared_obj_t *r)
{
    double outside = r->held ? owed_to_outside(r) : 0; /* its release was not seen */
    r->held = 1;
    r->owed_ns = 0;
    return outside;
}

void lb_shared_wait_ends(const lb_shared_wait_t *w, lb_mon_t *mon, uint64_t now, bool acquired,
                         bool woken)
{
    lb_shared_obj_t *r = w->r;
    double outside = 0;
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
            outside = hold_begins(r);
    } else if (r->kind != LB_OBJ_RWLOCK && woken && r->releases == w->releases &&
               !release_in_flight(r, w->begun_ns)) {
        outside = owed_to_outside(r); /* no release of the tree ended it */
    }
    double handoff = r->handoff_ns;
    r->handoff_ns = 0;
    lb_meta_unlock(&r->lock);
    __atomic_sub_fetch(&local_waiting[index_of(r)], 1, __ATOMIC_RELAXED);
    local_takes(mon, handoff, outside);
}

void lb_shared_acquired(lb_shared_obj_t *r, lb_mon_t *mon, uint64_t now)
{
    lb_meta_lock(&r->lock);
    accrue(r, now);
    double outside = hold_begins(r);
    double handoff = r->handoff_ns;
    r->handoff_ns = 0;
    lb_meta_unlock(&r->lock);
    if (outside > 0 || handoff != 0)
        local_takes(mon, handoff, outside);
}

/* Under r->lock, accrual up to date: the owed integral, taken by a
 * release of the tree. */
static double release_takes(lb_shared_obj_t *r, uint64_t now)
{
    r->released_ns = now;
    double taken = r->owed_ns;
    r->owed_ns = 0;
    r->held = 0;
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
        r->handoff_ns += late_by(r, now);
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
    __atomic_add_fetch(&local_waiting[index_of(r)], 1, __ATOMIC_RELAXED);
    local_takes(mon, 0, 0);
    return false;
}

double lb_shared_rw_acquired(lb_shared_obj_t *r, lb_mon_t *mon, uint64_t now)
{
    lb_meta_lock(&r->lock);
    accrue(r, now);
    r->holders++;
    double at = r->clock;
    r->clock_at_holds += at;
    double handoff = r->handoff_ns;
    r->handoff_ns = 0;
    lb_meta_unlock(&r->lock);
    if (handoff != 0)
        local_takes(mon, handoff, 0);
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
    __atomic_store_n(&r->releases, r->releases + 1, __ATOMIC_RELEASE);
    lb_meta_unlock(&r->lock);
    return collected(mon, taken);
}

uint64_t lb_shared_outside_ns(void)
{
    return __atomic_load_n(&outside_ns, __ATOMIC_RELAXED);
}

uint64_t lb_shared_outside_waits(void)
{
    return __atomic_load_n(&outside_waits, __ATOMIC_RELAXED);
}

/* This process's record of r's object for the idleness the tree still
 * owes at its end: a record of its own waits or releases if it has one
 * (settled_ns is written by nobody else), else a new one. */
static lb_object_stats_t *settling_record(const lb_shared_obj_t *r)
{
    uint32_t count = lb_object_stats_count();
    for (uint32_t i = 1; i < count; i++) {
        lb_object_stats_t *s = lb_object_stats_at(i);
        if (s && s->addr == r->addr && s->kind == r->kind && s->shared)
            return s;
    }
    lb_object_stats_t *s = lb_object_stats_at(lb_object_stats_new(r->addr, (lb_obj_kind)r->kind));
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
        if (!__atomic_load_n(&r->addr, __ATOMIC_ACQUIRE))
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

/* The process ends: its threads still waiting wait no more; the tree's
 * last process settles what the tree still owes. */
static void leave(const char *reason)
{
    (void)reason;
    lb_shared_obj_t *table = __atomic_load_n(&records, __ATOMIC_ACQUIRE);
    if (!table)
        return;
    uint64_t now = lb_now_ns();
    for (uint32_t i = 0; i < LB_SHARED_RECORDS; i++) {
        uint32_t n = __atomic_exchange_n(&local_waiting[i], 0, __ATOMIC_ACQ_REL);
        if (!n)
            continue;
        lb_meta_lock(&table[i].lock);
        accrue(&table[i], now);
        table[i].waiters -= n < table[i].waiters ? n : table[i].waiters;
        table[i].draining -= n < table[i].draining ? n : table[i].draining;
        lb_meta_unlock(&table[i].lock);
    }
    if (__atomic_sub_fetch(&tree_of(table)->processes, 1, __ATOMIC_ACQ_REL) == 0)
        settle(table, now);
}

/* A fork: the child will hold the mapping too (counted before the fork,
 * so that the parent cannot end first and find itself the last). */
static bool fork_counted; /* the fork under way counted its child (a child reads its copy) */
static void counting_child(void)
{
    lb_shared_obj_t *table = __atomic_load_n(&records, __ATOMIC_ACQUIRE);
    fork_counted = table && lb_runtime_monitoring();
    if (fork_counted)
        __atomic_add_fetch(&tree_of(table)->processes, 1, __ATOMIC_ACQ_REL);
}

/* A fork child: the waits in progress were its parent's threads'; it
 * counts itself if the mapping came after its parent's count. */
static void forget_waits(lb_thread_t *self)
{
    (void)self;
    lb_shared_obj_t *table = __atomic_load_n(&records, __ATOMIC_ACQUIRE);
    if (table && !fork_counted && lb_runtime_monitoring())
        __atomic_add_fetch(&tree_of(table)->processes, 1, __ATOMIC_ACQ_REL);
    for (uint32_t i = 0; i < LB_SHARED_RECORDS; i++)
        local_waiting[i] = 0;
    __atomic_store_n(&outside_ns, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&outside_waits, 0, __ATOMIC_RELAXED);
}

LB_PROCESS_HOOKS(shared_objs_hooks) = {
    .rank = LB_RANK_BLAME,
    .finish = leave,
    .fork_prepare = counting_child,
    .fork_child = forget_waits,
};
