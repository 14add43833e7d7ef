/*
 * taskqueue: a small task runtime that stops scaling, for `make demo`.
 *
 * One central priority queue (a sorted linked list) under ONE pthread mutex,
 * and N workers (argv[1], default 4). Each worker loops:
 *   queue_pop()   take the most urgent task (waits on a condition variable
 *                 while the queue is empty but tasks are still in flight)
 *   compute()     a few microseconds of work on it, outside the lock
 *   queue_push()  insert its follow-up tasks in priority order, retire it
 *
 * The culprit: queue_push() also refreshes a decaying priority histogram
 * (update_priority_stats) while it holds the lock. That bookkeeping costs a
 * few microseconds per push and serializes every worker, so lockblame should
 * put the idleness on queue_push's unlock, not on queue_pop where the
 * workers wait. Moving update_priority_stats() out of the critical section
 * is the fix.
 *
 * `taskqueue --batched N` is that fix by batching: each worker buffers the
 * priorities it pushes and refreshes the histogram once per BATCH pushes
 * (decay once, count them all), so the lock is held a fraction as long.
 * `lockblame compare` of the two modes shows the gain at queue_push.
 *
 * The tasks form a fixed tree (ROOTS roots, each task has two children down
 * to MAX_DEPTH), so the output, a count and an order-independent checksum,
 * is the same for any number of workers.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    ROOTS = 64,           /* initial tasks */
    MAX_DEPTH = 11,       /* tasks at this depth have no children */
    COMPUTE_ROUNDS = 800, /* work per task, outside the lock */
    STAT_BUCKETS = 4096,  /* histogram refreshed inside the lock */
    BATCH = 32,           /* --batched: pushes per histogram refresh */
};

static int batched; /* --batched: refresh the histogram once per BATCH pushes */

struct task {
    struct task *next; /* queue link, protected by queue.lock */
    uint64_t key;      /* input to compute() */
    uint32_t depth;    /* 0 for roots */
    uint32_t prio;     /* smaller runs first */
};

static struct {
    pthread_mutex_t lock;         /* protects everything below */
    pthread_cond_t nonempty;      /* signalled when tasks arrive or all are done */
    struct task *head;            /* sorted by prio, FIFO among equals */
    long outstanding;             /* queued + being computed; 0 means finished */
    uint64_t stats[STAT_BUCKETS]; /* decaying histogram of pushed priorities */
    uint64_t cdf[STAT_BUCKETS];   /* its running sum, for weighted picks */
} queue = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .nonempty = PTHREAD_COND_INITIALIZER,
};

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

static void die(const char *what, int rc)
{
    fprintf(stderr, "taskqueue: %s failed: %s\n", what, strerror(rc));
    exit(1);
}

/* The expensive bookkeeping: decay every bucket, count the new task, and
 * rebuild the running sum. Caller holds queue.lock. */
__attribute__((noinline)) static void update_priority_stats(uint32_t prio)
{
    uint64_t acc = 0;
    uint32_t b = prio % STAT_BUCKETS;
    for (uint32_t i = 0; i < STAT_BUCKETS; i++) {
        uint64_t v = queue.stats[i];
        v = v - (v >> 3) + (i == b ? 1024 : 0);
        queue.stats[i] = v;
        acc += v;
        queue.cdf[i] = acc;
    }
}

/* The batched refresh: decay every bucket once, count the n buffered
 * priorities, rebuild the running sum. Caller holds queue.lock. */
__attribute__((noinline)) static void update_priority_stats_batch(const uint32_t *prio, int n)
{
    uint64_t acc = 0;
    for (uint32_t i = 0; i < STAT_BUCKETS; i++) {
        uint64_t v = queue.stats[i];
        queue.stats[i] = v - (v >> 3);
    }
    for (int k = 0; k < n; k++)
        queue.stats[prio[k] % STAT_BUCKETS] += 1024;
    for (uint32_t i = 0; i < STAT_BUCKETS; i++) {
        acc += queue.stats[i];
        queue.cdf[i] = acc;
    }
}

struct pending { /* --batched: a worker's priorities not yet counted */
    uint32_t prio[BATCH];
    int n;
};

/* Takes the most urgent task, waiting while the queue is empty and tasks are
 * still in flight. Returns NULL when all work is done. */
__attribute__((noinline)) static struct task *queue_pop(void)
{
    int rc = pthread_mutex_lock(&queue.lock);
    if (rc)
        die("pthread_mutex_lock", rc);
    while (queue.head == NULL && queue.outstanding > 0) {
        rc = pthread_cond_wait(&queue.nonempty, &queue.lock);
        if (rc)
            die("pthread_cond_wait", rc);
    }
    struct task *t = queue.head;
    if (t)
        queue.head = t->next;
    rc = pthread_mutex_unlock(&queue.lock);
    if (rc)
        die("pthread_mutex_unlock", rc);
    return t;
}

/* Inserts the n children in priority order and retires their parent (if
 * any: the roots have none). Wakes waiters: one per child, all at the end.
 * With --batched, priorities go to `pend` (when given) and the histogram is
 * refreshed when it is full or `flush` is set. */
__attribute__((noinline)) static void queue_push(struct task **kids, int n, int retire,
                                                 struct pending *pend, int flush)
{
    int rc = pthread_mutex_lock(&queue.lock);
    if (rc)
        die("pthread_mutex_lock", rc);
    for (int i = 0; i < n; i++) {
        struct task **pp = &queue.head;
        while (*pp && (*pp)->prio <= kids[i]->prio)
            pp = &(*pp)->next;
        kids[i]->next = *pp;
        *pp = kids[i];
        if (!batched || !pend)
            update_priority_stats(kids[i]->prio);
        else
            pend->prio[pend->n++] = kids[i]->prio;
        if (pend && (pend->n == BATCH || (flush && pend->n))) {
            update_priority_stats_batch(pend->prio, pend->n);
            pend->n = 0;
        }
    }
    if (pend && flush && pend->n) {
        update_priority_stats_batch(pend->prio, pend->n);
        pend->n = 0;
    }
    queue.outstanding += n - retire;
    if (queue.outstanding == 0)
        rc = pthread_cond_broadcast(&queue.nonempty);
    else if (n > 0)
        rc = pthread_cond_signal(&queue.nonempty);
    if (rc)
        die("pthread_cond_signal", rc);
    rc = pthread_mutex_unlock(&queue.lock);
    if (rc)
        die("pthread_mutex_unlock", rc);
}

static struct task *new_task(uint64_t key, uint32_t depth)
{
    struct task *t = malloc(sizeof *t);
    if (!t)
        die("malloc", 12);
    t->next = NULL;
    t->key = key;
    t->depth = depth;
    /* Deeper tasks first keeps the queue short; the low bits vary the order. */
    t->prio = (uint32_t)(MAX_DEPTH - depth) << 8 | (uint32_t)(key & 0xff);
    return t;
}

/* The per-task work, outside the lock. */
__attribute__((noinline)) static uint64_t compute(uint64_t key)
{
    uint64_t x = key;
    for (int i = 0; i < COMPUTE_ROUNDS; i++)
        x = mix(x + (uint64_t)i);
    return x;
}

struct worker {
    pthread_t tid;
    uint64_t sum;        /* of compute() results, mod 2^64 */
    long done;           /* tasks completed */
    struct pending pend; /* --batched */
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct task *t;
    while ((t = queue_pop()) != NULL) {
        uint64_t r = compute(t->key);
        w->sum += r;
        w->done++;
        struct task *kids[2];
        int n = 0;
        if (t->depth < MAX_DEPTH) {
            kids[n++] = new_task(mix(r + 1), t->depth + 1);
            kids[n++] = new_task(mix(r + 2), t->depth + 1);
        }
        queue_push(kids, n, 1, &w->pend, 0);
        free(t);
    }
    if (w->pend.n)
        queue_push(NULL, 0, 0, &w->pend, 1);
    return NULL;
}

int main(int argc, char **argv)
{
    int arg = 1;
    if (argc > arg && strcmp(argv[arg], "--batched") == 0) {
        batched = 1;
        arg++;
    }
    int nworkers = argc > arg ? atoi(argv[arg]) : 4;
    if (nworkers < 1 || nworkers > 1024 || argc > arg + 1) {
        fprintf(stderr, "usage: %s [--batched] [WORKERS 1..1024]\n", argv[0]);
        return 2;
    }
    struct task *roots[ROOTS];
    for (int i = 0; i < ROOTS; i++)
        roots[i] = new_task(mix((uint64_t)i + 1), 0);
    queue_push(roots, ROOTS, 0, NULL, 0);

    struct worker *w = calloc((size_t)nworkers, sizeof *w);
    if (!w)
        die("calloc", 12);
    /* main is worker 0, as in most thread pools: its join at the end
     * waits only for the last tasks, not for the whole run. */
    for (int i = 1; i < nworkers; i++) {
        int rc = pthread_create(&w[i].tid, NULL, worker_main, &w[i]);
        if (rc)
            die("pthread_create", rc);
    }
    worker_main(&w[0]);
    uint64_t sum = 0;
    long done = 0;
    for (int i = 0; i < nworkers; i++) {
        int rc = i ? pthread_join(w[i].tid, NULL) : 0;
        if (rc)
            die("pthread_join", rc);
        sum += w[i].sum;
        done += w[i].done;
    }
    printf("taskqueue: tasks=%ld checksum=%016llx\n", done, (unsigned long long)sum);
    free(w);
    return 0;
}
