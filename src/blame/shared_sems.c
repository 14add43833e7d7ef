/* Process-shared semaphores across a profiled tree (contract and
 * invariants in shared_sems.h). */
#include "blame/shared_sems.h"

#include <errno.h>
#include <sys/mman.h>

#include "blame/blame.h"
#include "blame/object_stats.h"
#include "core/hooks.h"
#include "util/clock.h"
#include "util/common.h"
#include "util/meta_lock.h"

#define LB_SHARED_SEM_RECORDS 4096u /* a power of two */
/* The mapping's address space: at least lockblame's least span
 * (util/pages.c: no small hole among the libraries is filled), its last
 * page PROT_NONE. */
#define LB_SHARED_SEM_SPAN    ((size_t)2 << 20)

struct lb_shared_sem {
    uintptr_t addr; /* the semaphore; 0: a free record */
    lb_meta_lock_t lock;
    uint32_t waiters;    /* w: threads of every process waiting on it */
    uint64_t last_ns;    /* accrual is up to date to here */
    double pending_ns;   /* the integral of w since the previous post */
    double accrued_ns;   /* ... since the record began */
    double collected_ns; /* taken by posts */
} __attribute__((aligned(LB_CACHELINE)));

_Static_assert(sizeof(struct lb_shared_sem) * LB_SHARED_SEM_RECORDS <= LB_SHARED_SEM_SPAN - 4096,
               "the records fit below the guard page");

uint32_t lb_shared_sems_on;
static lb_shared_sem_t *records; /* the shared mapping, inherited across fork */
/* This process's threads waiting on each record now (fork child: none). */
static uint32_t local_waiting[LB_SHARED_SEM_RECORDS];

static lb_shared_sem_t *mapping(void)
{
    lb_shared_sem_t *r = __atomic_load_n(&records, __ATOMIC_ACQUIRE);
    if (r)
        return r;
    char *p =
        mmap(NULL, LB_SHARED_SEM_SPAN, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    mprotect(p + LB_SHARED_SEM_SPAN - 4096, 4096, PROT_NONE);
    lb_shared_sem_t *expected = NULL;
    if (!__atomic_compare_exchange_n(&records, &expected, (lb_shared_sem_t *)p, false,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        munmap(p, LB_SHARED_SEM_SPAN);
        return expected;
    }
    __atomic_store_n(&lb_shared_sems_on, 1, __ATOMIC_RELEASE);
    return (lb_shared_sem_t *)p;
}

static uint32_t slot_of(uintptr_t addr)
{
    uint64_t h = (uint64_t)addr * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(h >> 40) & (LB_SHARED_SEM_RECORDS - 1);
}

/* addr's record in table, inserted if `insert`; NULL if absent or full. */
static lb_shared_sem_t *lookup(lb_shared_sem_t *table, uintptr_t addr, bool insert)
{
    uint32_t i = slot_of(addr);
    for (uint32_t probes = 0; probes < LB_SHARED_SEM_RECORDS; probes++) {
        lb_shared_sem_t *r = &table[(i + probes) & (LB_SHARED_SEM_RECORDS - 1)];
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

void lb_shared_sem_register(const void *s)
{
    int saved_errno = errno;
    lb_shared_sem_t *table = mapping();
    lb_shared_sem_t *r = table ? lookup(table, (uintptr_t)s, true) : NULL;
    if (r) { /* sem_init again on the same memory: no waiters now */
        lb_meta_lock(&r->lock);
        r->waiters = 0;
        r->pending_ns = 0;
        r->last_ns = lb_now_ns();
        lb_meta_unlock(&r->lock);
    }
    errno = saved_errno;
}

lb_shared_sem_t *lb_shared_sem_find(const void *s)
{
    lb_shared_sem_t *table = __atomic_load_n(&records, __ATOMIC_ACQUIRE);
    return table ? lookup(table, (uintptr_t)s, false) : NULL;
}

/* Under r->lock: accrual up to now. */
static void accrue(lb_shared_sem_t *r, uint64_t now)
{
    if (now <= r->last_ns)
        return; /* another process's clock read was a little later */
    double accrued = (double)r->waiters * (double)(now - r->last_ns);
    r->last_ns = now;
    r->pending_ns += accrued;
    r->accrued_ns += accrued;
}

static uint32_t index_of(const lb_shared_sem_t *r)
{
    return (uint32_t)(r - records);
}

/* Under nothing: mon's record here belongs to a shared semaphore (the
 * writer writes its blame as its accrual); returns it (NULL if none). */
static lb_object_stats_t *mark_shared(lb_mon_t *mon)
{
    lb_meta_lock(&mon->meta);
    lb_object_stats_t *stats = lb_object_stats_of(mon);
    if (stats)
        stats->shared = 1;
    lb_meta_unlock(&mon->meta);
    return stats;
}

void lb_shared_sem_wait_begins(lb_shared_sem_t *r, lb_mon_t *mon, uint64_t now)
{
    lb_meta_lock(&r->lock);
    accrue(r, now);
    r->waiters++;
    lb_meta_unlock(&r->lock);
    __atomic_add_fetch(&local_waiting[index_of(r)], 1, __ATOMIC_RELAXED);
    mark_shared(mon);
}

void lb_shared_sem_wait_ends(lb_shared_sem_t *r, uint64_t now)
{
    lb_meta_lock(&r->lock);
    accrue(r, now);
    if (r->waiters)
        r->waiters--;
    lb_meta_unlock(&r->lock);
    __atomic_sub_fetch(&local_waiting[index_of(r)], 1, __ATOMIC_RELAXED);
}

void lb_shared_sem_post(lb_thread_t *self, lb_shared_sem_t *r, lb_mon_t *mon, uintptr_t site)
{
    uint64_t now = lb_now_ns();
    lb_meta_lock(&r->lock);
    accrue(r, now);
    double taken = r->pending_ns;
    r->pending_ns = 0;
    r->collected_ns += taken;
    lb_meta_unlock(&r->lock);
    if (taken <= 0)
        return;
    lb_meta_lock(&mon->meta);
    lb_object_stats_t *stats = lb_object_stats_of(mon);
    if (stats) {
        stats->shared = 1;
        stats->blamed_ns += taken;
    }
    lb_hold_t hold = { .blame_ns = taken, .record = stats, .stats = mon->stats };
    lb_meta_unlock(&mon->meta);
    lb_deposit(self, &hold, LB_OBJ_SEM, site);
}

/* The process ends: its threads still waiting wait no more. */
static void leave(const char *reason)
{
    (void)reason;
    lb_shared_sem_t *table = __atomic_load_n(&records, __ATOMIC_ACQUIRE);
    if (!table)
        return;
    uint64_t now = lb_now_ns();
    for (uint32_t i = 0; i < LB_SHARED_SEM_RECORDS; i++) {
        uint32_t n = __atomic_exchange_n(&local_waiting[i], 0, __ATOMIC_ACQ_REL);
        if (!n)
            continue;
        lb_meta_lock(&table[i].lock);
        accrue(&table[i], now);
        table[i].waiters -= n < table[i].waiters ? n : table[i].waiters;
        lb_meta_unlock(&table[i].lock);
    }
}

/* A fork child: the waits in progress were its parent's threads'. */
static void forget_waits(lb_thread_t *self)
{
    (void)self;
    for (uint32_t i = 0; i < LB_SHARED_SEM_RECORDS; i++)
        local_waiting[i] = 0;
}

LB_PROCESS_HOOKS(shared_sems_hooks) = {
    .rank = LB_RANK_BLAME,
    .finish = leave,
    .fork_child = forget_waits,
};
