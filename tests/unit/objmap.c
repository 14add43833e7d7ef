/* Unit tests for the address -> lb_mon map of cond/sem/barrier/rwlock
 * objects (src/locks/objmap.c), alone and under concurrent insert and
 * delete. Ground truth is kept by the test: which addresses it last
 * created or retired, and which lb_mon each thread was handed.
 */
#include "check.h"

#include <pthread.h>
#include <semaphore.h>

#include "core/phase.h"
#include "blame/object_stats.h"
#include "core/thread.h"
#include "locks/monitored.h"
#include "locks/objmap.h"

#define THREADS 8
#define SHARED  4096
#define OWN     512
#define ROUNDS  200

/* Their addresses are the keys: the smallest object the map holds. */
static sem_t objects[SHARED + THREADS * OWN];

static void setup(void)
{
    ASSERT_EQ(lb_mon_pool_setup(), 0);
    __atomic_store_n(&lb_runtime_phase, LB_PHASE_RUNNING, __ATOMIC_RELEASE);
}

static void test_get_creates_once(void)
{
    setup();
    void *a = &objects[0];
    ASSERT_NULL(lb_objmap_find(a));
    lb_mon_t *m = lb_objmap_get(a, LB_OBJ_COND);
    ASSERT_NOT_NULL(m);
    ASSERT_PTR_EQ(m->addr, a);
    ASSERT_EQ(m->kind, LB_OBJ_COND);
    ASSERT_PTR_EQ(lb_objmap_get(a, LB_OBJ_COND), m);
    ASSERT_PTR_EQ(lb_objmap_find(a), m);
    ASSERT_EQ(lb_mon_live(), 1);
}

/* Memory reused for another kind without destroy: the old state goes. */
static void test_other_kind_replaces(void)
{
    setup();
    void *a = &objects[1];
    lb_mon_t *cond = lb_objmap_get(a, LB_OBJ_COND);
    ASSERT_NOT_NULL(cond);
    lb_mon_t *sem = lb_objmap_get(a, LB_OBJ_SEM);
    ASSERT_NOT_NULL(sem);
    ASSERT_EQ(sem->kind, LB_OBJ_SEM);
    ASSERT_PTR_EQ(lb_objmap_find(a), sem);
    ASSERT_EQ(lb_mon_live(), 1);
    ASSERT_TRUE(cond == sem || cond->addr == NULL); /* retired (its slot maybe reused) */
}

static void test_retire_then_get_is_fresh(void)
{
    setup();
    void *a = &objects[2];
    lb_mon_t *m = lb_objmap_get(a, LB_OBJ_BARRIER);
    ASSERT_NOT_NULL(m);
    m->waiters = 7; /* state of the old object */
    lb_objmap_retire(a);
    ASSERT_NULL(lb_objmap_find(a));
    ASSERT_EQ(lb_mon_live(), 0);
    lb_objmap_retire(a); /* twice: harmless */
    lb_mon_t *again = lb_objmap_get(a, LB_OBJ_BARRIER);
    ASSERT_NOT_NULL(again);
    ASSERT_EQ(again->waiters, 0);
    ASSERT_EQ(lb_mon_live(), 1);
}

/* Not running (before start, after finish): nothing new is monitored, but
 * objects already monitored keep working. */
static void test_only_running_creates(void)
{
    setup();
    lb_mon_t *m = lb_objmap_get(&objects[3], LB_OBJ_RWLOCK);
    ASSERT_NOT_NULL(m);
    __atomic_store_n(&lb_runtime_phase, LB_PHASE_FINISHED, __ATOMIC_RELEASE);
    ASSERT_NULL(lb_objmap_get(&objects[4], LB_OBJ_RWLOCK));
    ASSERT_PTR_EQ(lb_objmap_get(&objects[3], LB_OBJ_RWLOCK), m);
}

/* An rwlock's lb_mon that never saw a wait survives its destroy (the
 * retire) as a fresh one: same lb_mon, its count folded into the
 * per-kind totals; one that saw a wait is retired. */
static void test_unwaited_rwlock_kept_fresh(void)
{
    setup();
    void *a = &objects[5], *b = &objects[6];
    lb_mon_t *m = lb_objmap_get(a, LB_OBJ_RWLOCK);
    ASSERT_NOT_NULL(m);
    m->acquisitions = 5;
    uint64_t totals = lb_object_totals_unbound(LB_OBJ_RWLOCK);
    uint32_t live = lb_mon_live();
    lb_objmap_retire(a);
    ASSERT_PTR_EQ(lb_objmap_find(a), m);
    ASSERT_EQ(m->acquisitions, 0);
    ASSERT_PTR_EQ(m->addr, a);
    ASSERT_EQ(lb_object_totals_unbound(LB_OBJ_RWLOCK), totals + 5);
    ASSERT_EQ(lb_mon_live(), live);
    lb_objmap_retire(a); /* init after destroy: nothing more to fold */
    ASSERT_EQ(lb_object_totals_unbound(LB_OBJ_RWLOCK), totals + 5);
    lb_mon_t *waited = lb_objmap_get(b, LB_OBJ_RWLOCK);
    ASSERT_NOT_NULL(waited);
    waited->clock = 1000.0; /* V moved: a waiter accrued on it */
    lb_objmap_retire(b);
    ASSERT_NULL(lb_objmap_find(b));
    ASSERT_EQ(lb_mon_live(), live);
}

/* Keys 4 bytes apart (the least alignment of the objects the map holds:
 * spin locks and futex words), in four runs 16 MiB apart (the span of
 * the table's address windows): every one gets an lb_mon of its own,
 * found again. The addresses are keys only (nothing reads them). */
static void test_dense_keys_across_windows(void)
{
    setup();
    enum {
        KEYS = 3000,
        WINDOWS = 4
    };
    static lb_mon_t *got[WINDOWS][KEYS];
    const uintptr_t base = (uintptr_t)0x7e0000000000ull, span = (uintptr_t)16 << 20;
    for (int w = 0; w < WINDOWS; w++)
        for (int i = 0; i < KEYS; i++) {
            got[w][i] = lb_objmap_get((void *)(base + w * span + (uintptr_t)i * 4), LB_OBJ_COND);
            ASSERT_NOT_NULL(got[w][i]);
        }
    for (int w = 0; w < WINDOWS; w++)
        for (int i = 0; i < KEYS; i++) {
            void *key = (void *)(base + w * span + (uintptr_t)i * 4);
            ASSERT_PTR_EQ(lb_objmap_find(key), got[w][i]);
            ASSERT_PTR_EQ(got[w][i]->addr, key);
        }
    for (int w = 0; w < WINDOWS; w++)
        for (int i = 0; i < KEYS; i++)
            lb_objmap_retire((void *)(base + w * span + (uintptr_t)i * 4));
}

/* ---- concurrency ---- */

static pthread_barrier_t start;
static lb_mon_t *seen[THREADS][SHARED];

/* Every thread gets every shared address at once, in its own order: all
 * must be handed the same lb_mon, and exactly one per address exists. */
static void *get_all(void *arg)
{
    long t = (long)arg;
    pthread_barrier_wait(&start);
    for (long k = 0; k < SHARED; k++) {
        long i = (k * 7 + t * 977) % SHARED;
        seen[t][i] = lb_objmap_get(&objects[i], LB_OBJ_SEM);
    }
    return NULL;
}

static void test_concurrent_get_agrees(void)
{
    setup();
    ASSERT_OK(pthread_barrier_init(&start, NULL, THREADS));
    pthread_t th[THREADS];
    for (long t = 0; t < THREADS; t++)
        ASSERT_OK(pthread_create(&th[t], NULL, get_all, (void *)t));
    for (int t = 0; t < THREADS; t++)
        ASSERT_OK(pthread_join(th[t], NULL));
    for (int i = 0; i < SHARED; i++) {
        ASSERT_NOT_NULL(seen[0][i]);
        ASSERT_PTR_EQ(seen[0][i]->addr, &objects[i]);
        for (int t = 1; t < THREADS; t++)
            ASSERT_PTR_EQ(seen[t][i], seen[0][i]);
    }
    ASSERT_EQ(lb_mon_live(), SHARED);
}

/* Each thread creates and retires its own addresses over and over (the
 * pool recycles their slots, through the per-thread cache of an attached
 * thread), while all of them look up a shared set nobody retires. */
static bool live_at_end[THREADS * OWN];

static void *churn(void *arg)
{
    long t = (long)arg;
    lb_thread_t *self = lb_thread_attach(0, 0, 0); /* enables the slot cache */
    ASSERT_NOT_NULL(self);
    sem_t *own = &objects[SHARED + t * OWN];
    pthread_barrier_wait(&start);
    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < OWN; i++) {
            lb_mon_t *m = lb_objmap_get(&own[i], LB_OBJ_COND);
            ASSERT_NOT_NULL(m);
            ASSERT_PTR_EQ(m->addr, &own[i]);
            ASSERT_EQ(m->kind, LB_OBJ_COND);
        }
        for (int i = round & 1; i < OWN; i += 2)
            lb_objmap_retire(&own[i]);
        for (int k = 0; k < 64; k++) {
            int i = (round * 64 + k) % SHARED;
            ASSERT_PTR_EQ(lb_objmap_get(&objects[i], LB_OBJ_SEM), seen[0][i]);
        }
    }
    for (int i = 0; i < OWN; i++)
        live_at_end[t * OWN + i] = (i & 1) != ((ROUNDS - 1) & 1);
    lb_thread_detach(self); /* gives the cached slots back */
    return NULL;
}

static void test_concurrent_insert_delete(void)
{
    setup();
    for (int i = 0; i < SHARED; i++) {
        seen[0][i] = lb_objmap_get(&objects[i], LB_OBJ_SEM);
        ASSERT_NOT_NULL(seen[0][i]);
    }
    ASSERT_OK(pthread_barrier_init(&start, NULL, THREADS));
    pthread_t th[THREADS];
    for (long t = 0; t < THREADS; t++)
        ASSERT_OK(pthread_create(&th[t], NULL, churn, (void *)t));
    for (int t = 0; t < THREADS; t++)
        ASSERT_OK(pthread_join(th[t], NULL));
    uint32_t expect_live = SHARED;
    for (int i = 0; i < THREADS * OWN; i++) {
        lb_mon_t *m = lb_objmap_find(&objects[SHARED + i]);
        if (live_at_end[i]) {
            ASSERT_NOT_NULL(m);
            ASSERT_PTR_EQ(m->addr, &objects[SHARED + i]);
            expect_live++;
        } else {
            ASSERT_NULL(m);
        }
    }
    /* No lb_mon leaked or handed out twice: the live slots are exactly
     * the mapped ones, and recycling kept the pool small. */
    ASSERT_EQ(lb_mon_live(), expect_live);
    printf("# %u live, %u slots used for %d creations\n", lb_mon_live(), lb_mon_slots_used(),
           SHARED + THREADS * (OWN + ROUNDS * OWN / 2));
    ASSERT_LE(lb_mon_slots_used(), SHARED + THREADS * OWN + THREADS * 64);
}

CHECK_MAIN(test_get_creates_once, test_other_kind_replaces, test_retire_then_get_is_fresh,
           test_only_running_creates, test_unwaited_rwlock_kept_fresh,
           test_dense_keys_across_windows, test_concurrent_get_agrees,
           test_concurrent_insert_delete)
