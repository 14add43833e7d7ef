/* Unit tests for the monitored-lock pool (src/locks/mon_pool.c): slot
 * indexing, reuse through the free list and the per-thread cache, and the
 * reclaiming of orphans (src/locks/mon_gc.c): lb_mons whose lock was
 * freed, zeroed or reused without destroy.
 *
 * The orphans are made by the test itself: it publishes lb_mons for real
 * spin-lock words and mutexes, then overwrites or unmaps some of them, and
 * counts what must be reclaimed.
 */
#include "check.h"

#include <pthread.h>
#include <sys/mman.h>

#include "core/thread.h"
#include "locks/mon_gc.h"
#include "locks/monitored.h"
#include "locks/mutex_ops.h"
#include "locks/spin_ops.h"

static int objects[256];

static void test_no_pool_no_alloc(void)
{
    ASSERT_NULL(lb_mon_alloc(&objects[0], LB_OBJ_MUTEX)); /* before setup */
    ASSERT_EQ(lb_mon_pool_setup(), 0);
    ASSERT_EQ(lb_mon_pool_setup(), 0); /* idempotent */
    ASSERT_NOT_NULL(lb_mon_alloc(&objects[0], LB_OBJ_MUTEX));
}

static void test_alloc_is_fresh_and_indexed(void)
{
    ASSERT_EQ(lb_mon_pool_setup(), 0);
    lb_mon_t *a = lb_mon_alloc(&objects[1], LB_OBJ_SPIN);
    lb_mon_t *b = lb_mon_alloc(&objects[2], LB_OBJ_SEM);
    ASSERT_NOT_NULL(a);
    ASSERT_NOT_NULL(b);
    ASSERT_TRUE(a != b);
    ASSERT_PTR_EQ(a->addr, &objects[1]);
    ASSERT_EQ(a->kind, LB_OBJ_SPIN);
    ASSERT_EQ(b->kind, LB_OBJ_SEM);
    ASSERT_NE(lb_mon_index(a), 0);
    ASSERT_PTR_EQ(lb_mon_at(lb_mon_index(a)), a);
    ASSERT_PTR_EQ(lb_mon_from_ptr((uintptr_t)b), b);
    ASSERT_NULL(lb_mon_at(0));
    ASSERT_NULL(lb_mon_at(LB_MON_SLOTS));
    ASSERT_NULL(lb_mon_from_ptr((uintptr_t)a + 8));                           /* not a slot start */
    ASSERT_NULL(lb_mon_from_ptr((uintptr_t)&objects[0]));                     /* not in the pool */
    ASSERT_NULL(lb_mon_from_ptr((uintptr_t)lb_mon_at(1) - sizeof(lb_mon_t))); /* slot 0 */
    /* A slot handed out again is zeroed. */
    a->waiters = 3;
    a->clock = 1.5;
    lb_mon_free(a);
    ASSERT_NULL(a->addr);
    lb_mon_t *c = lb_mon_alloc(&objects[3], LB_OBJ_MUTEX);
    ASSERT_PTR_EQ(c, a);
    ASSERT_EQ(c->waiters, 0);
    ASSERT_NEAR(c->clock, 0, 0);
    ASSERT_EQ(lb_mon_live(), 2);
}

/* Churn without an attached thread goes through the free list: the pool
 * does not grow. */
static void test_free_list_reuse(void)
{
    ASSERT_EQ(lb_mon_pool_setup(), 0);
    lb_mon_t *m[100];
    for (int i = 0; i < 100; i++)
        m[i] = lb_mon_alloc(&objects[i], LB_OBJ_COND);
    uint32_t used = lb_mon_slots_used();
    ASSERT_EQ(used, 100);
    for (int round = 0; round < 50; round++) {
        for (int i = 0; i < 100; i++)
            lb_mon_free(m[i]);
        for (int i = 0; i < 100; i++) {
            m[i] = lb_mon_alloc(&objects[i], LB_OBJ_COND);
            ASSERT_NOT_NULL(m[i]);
        }
    }
    ASSERT_EQ(lb_mon_slots_used(), used);
    ASSERT_EQ(lb_mon_live(), 100);
}

/* An attached thread takes slots in batches into its cache and gives them
 * back when it ends, so another thread reuses them. */
static uint32_t used_by_worker;

static void *cached_worker(void *arg)
{
    lb_thread_t *self = lb_thread_attach(0, 0, 0);
    ASSERT_NOT_NULL(self);
    for (int round = 0; round < 1000; round++) {
        lb_mon_t *m = lb_mon_alloc(&objects[round % 256], LB_OBJ_BARRIER);
        ASSERT_NOT_NULL(m);
        lb_mon_free(m);
    }
    lb_mon_t *kept = lb_mon_alloc(&objects[0], LB_OBJ_BARRIER);
    ASSERT_NOT_NULL(kept);
    used_by_worker = lb_mon_slots_used();
    lb_thread_detach(self); /* flushes the cache */
    return NULL;
}

static void test_thread_cache_reuse(void)
{
    ASSERT_EQ(lb_mon_pool_setup(), 0);
    pthread_t th;
    ASSERT_OK(pthread_create(&th, NULL, cached_worker, NULL));
    ASSERT_OK(pthread_join(th, NULL));
    ASSERT_GT(used_by_worker, 1);  /* it took a batch, */
    ASSERT_LE(used_by_worker, 64); /* not one slot per allocation */
    ASSERT_EQ(lb_mon_live(), 1);
    for (uint32_t i = 1; i < used_by_worker; i++)
        ASSERT_NOT_NULL(lb_mon_alloc(&objects[i % 256], LB_OBJ_BARRIER));
    ASSERT_EQ(lb_mon_slots_used(), used_by_worker); /* all came back */
}

/* While the pool grows, a lock re-converted at the same address (its
 * memory reused without destroy) retires the lb_mon it had before. */
static void *reuse_worker(void *arg)
{
    lb_thread_t *self = lb_thread_attach(0, 0, 0); /* refills grow the pool */
    ASSERT_NOT_NULL(self);
    int *lock = &objects[10]; /* a spin lock's word */
    lb_mon_t *first = lb_mon_alloc(lock, LB_OBJ_SPIN);
    ASSERT_NOT_NULL(first);
    ASSERT_TRUE(lb_mon_pool_growing());
    lb_mon_published(first, lock);
    *lock = LB_SPIN_UNLOCKED; /* the program re-initializes it by hand */
    lb_mon_t *second = lb_mon_alloc(lock, LB_OBJ_SPIN);
    lb_mon_published(second, lock);
    ASSERT_NULL(first->addr);
    ASSERT_PTR_EQ(second->addr, lock);
    ASSERT_EQ(lb_mon_gc_reclaimed(), 1);
    ASSERT_EQ(lb_mon_live(), 1);
    lb_thread_detach(self);
    return NULL;
}

static void test_orphan_at_same_address(void)
{
    ASSERT_EQ(lb_mon_pool_setup(), 0);
    pthread_t th;
    ASSERT_OK(pthread_create(&th, NULL, reuse_worker, NULL));
    ASSERT_OK(pthread_join(th, NULL));
}

/* The sweep: once the pool has grown by 1M slots, every published mutex
 * and spin lb_mon whose object no longer refers to it, or whose memory is
 * gone, is retired; the rest stay. */
#define SPINS   ((1u << 20) + 4096)
#define MUTEXES 64

static void test_sweep_reclaims_orphans(void)
{
    ASSERT_EQ(lb_mon_pool_setup(), 0);
    long page = sysconf(_SC_PAGESIZE);
    int *words =
        mmap(NULL, SPINS * sizeof(int), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_TRUE(words != MAP_FAILED);
    static pthread_mutex_t mutexes[MUTEXES];
    lb_mon_t **mons = calloc(SPINS, sizeof *mons);
    lb_mon_t *mutex_mons[MUTEXES];
    ASSERT_NOT_NULL(mons);
    /* The main thread is not attached: no cache, so allocation never
     * sweeps by itself and the test decides when. */
    for (uint32_t i = 0; i < SPINS; i++) {
        mons[i] = lb_mon_alloc(&words[i], LB_OBJ_SPIN);
        ASSERT_NOT_NULL(mons[i]);
        words[i] = lb_spin_word_of_index(lb_mon_index(mons[i]));
        if (i % 5 == 1)
            words[i] |= LB_SPIN_HELD; /* held right now: still referenced */
        lb_mon_published(mons[i], &words[i]);
    }
    for (int i = 0; i < MUTEXES; i++) {
        ASSERT_OK(pthread_mutex_init(&mutexes[i], NULL));
        mutex_mons[i] = lb_mon_alloc(&mutexes[i], LB_OBJ_MUTEX);
        *lb_mutex_stash(&mutexes[i]) = lb_mutex_stash_of(mutex_mons[i]);
        lb_mon_published(mutex_mons[i], &mutexes[i]);
    }
    /* One unpublished lb_mon (a conversion between allocation and its
     * CAS): never touched, whatever its object holds. */
    lb_mon_t *pending = lb_mon_alloc(&objects[20], LB_OBJ_SPIN);
    ASSERT_NOT_NULL(pending);
    uint32_t orphans = 0;
    for (uint32_t i = 0; i < SPINS; i += 3, orphans++)
        words[i] = LB_SPIN_UNLOCKED; /* re-initialized without destroy */
    for (int i = 0; i < MUTEXES; i += 4, orphans++)
        memset(&mutexes[i], 0, sizeof mutexes[i]); /* zeroed */
    /* The last pages of words are unmapped (freed): unreadable objects. */
    uint32_t per_page = (uint32_t)(page / (long)sizeof(int));
    uint32_t first_gone = SPINS - 2 * per_page;
    for (uint32_t i = first_gone; i < SPINS; i++)
        orphans += i % 3 != 0; /* those not already counted */
    ASSERT_EQ(munmap(&words[first_gone], 2 * (size_t)page), 0);
    uint32_t live_before = lb_mon_live();
    ASSERT_EQ(live_before, SPINS + MUTEXES + 1);

    lb_mon_gc_maybe(lb_mon_slots_used());

    printf("# %u lb_mons, %u orphans made, %llu reclaimed\n", live_before, orphans,
           (unsigned long long)lb_mon_gc_reclaimed());
    ASSERT_EQ(lb_mon_gc_reclaimed(), orphans);
    ASSERT_EQ(lb_mon_live(), live_before - orphans);
    ASSERT_PTR_EQ(pending->addr, &objects[20]);
    for (uint32_t i = 0; i < SPINS; i++) {
        bool orphan = i % 3 == 0 || i >= first_gone;
        if (orphan)
            ASSERT_NULL(mons[i]->addr);
        else
            ASSERT_PTR_EQ(mons[i]->addr, &words[i]);
    }
    for (int i = 0; i < MUTEXES; i++) {
        if (i % 4 == 0)
            ASSERT_NULL(mutex_mons[i]->addr);
        else
            ASSERT_PTR_EQ(mutex_mons[i]->addr, &mutexes[i]);
    }
    /* A second call right away does not sweep again (amortized). */
    lb_mon_gc_maybe(lb_mon_slots_used());
    ASSERT_EQ(lb_mon_gc_reclaimed(), orphans);
}

CHECK_MAIN(test_no_pool_no_alloc, test_alloc_is_fresh_and_indexed, test_free_list_reuse,
           test_thread_cache_reuse, test_orphan_at_same_address, test_sweep_reclaims_orphans)
