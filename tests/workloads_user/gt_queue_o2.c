/*
 * gt_queue_o2: ground truth for release sites in code built the way users
 * build it (gcc -O2 -g: tail calls, inlining, clones; docs/DESIGN.md rule 5).
 *
 * A task queue guarded by one mutex. Every worker loops:
 *   queue_push()  lock, enqueue, compute PUSH_HOLD, unlock: the unlock ends
 *                 the function, so gcc emits it as a tail jump;
 *   queue_pop()   the same with POP_HOLD;
 *   every FLUSH_EVERY loops, queue_flush(): lock, compute FLUSH_HOLD, then
 *                 queue_unlock(), a static inline helper that gcc inlines
 *                 (the release site is the helper, with its file:line), and
 *                 then more work, so the helper is not a tail call.
 * The three functions are static, take the queue as a constant argument
 * and are kept out of line, so gcc may clone them (.constprop.N, .isra.N):
 * the report must name the source functions.
 *
 * Ground truth: each thread logs each lock call [just before, just after]
 * as a wait and each hold [acquired, just before the unlock] at its site;
 * gt_sweep_holders computes the blame per site (docs/DESIGN.md rule 3).
 *
 * Usage: gt_queue_o2 [THREADS [DURATION_MS]]   (defaults 3 and 1000)
 */
#include "gt.h"

enum {
    SITE_PUSH,
    SITE_POP,
    SITE_FLUSH,
    N_SITES
};
static const char *const site_names[N_SITES] = { "queue_push", "queue_pop", "queue_unlock" };

#define PUSH_HOLD_NS  60000
#define POP_HOLD_NS   20000
#define FLUSH_HOLD_NS 400000
#define THINK_NS      30000
#define FLUSH_EVERY   16
#define QCAP          1024

struct queue {
    pthread_mutex_t m;
    int items[QCAP];
    int head, tail;
};

static struct queue q = { .m = PTHREAD_MUTEX_INITIALIZER };
static int64_t deadline;
static volatile long flushes;

static void lock(struct queue *qu, struct gt_log *lg)
{
    int64_t t0 = gt_now();
    int rc = pthread_mutex_lock(&qu->m);
    if (rc)
        gt_die("pthread_mutex_lock", rc);
    gt_log_add(lg, t0, gt_now(), -1);
}

static inline __attribute__((always_inline)) void queue_unlock(struct queue *qu)
{
    pthread_mutex_unlock(&qu->m);
}

static __attribute__((noinline)) void queue_push(struct queue *qu, struct gt_log *lg, int v)
{
    lock(qu, lg);
    int64_t t1 = lg->s[lg->n - 1].t1;
    qu->items[qu->tail++ % QCAP] = v;
    gt_spin_until(t1 + PUSH_HOLD_NS);
    gt_log_add(lg, t1, gt_now(), SITE_PUSH);
    pthread_mutex_unlock(&qu->m);
}

static __attribute__((noinline)) void queue_pop(struct queue *qu, struct gt_log *lg, int *out)
{
    lock(qu, lg);
    int64_t t1 = lg->s[lg->n - 1].t1;
    *out = qu->head != qu->tail ? qu->items[qu->head++ % QCAP] : -1;
    gt_spin_until(t1 + POP_HOLD_NS);
    gt_log_add(lg, t1, gt_now(), SITE_POP);
    pthread_mutex_unlock(&qu->m);
}

static __attribute__((noinline)) void queue_flush(struct queue *qu, struct gt_log *lg)
{
    lock(qu, lg);
    int64_t t1 = lg->s[lg->n - 1].t1;
    gt_spin_until(t1 + FLUSH_HOLD_NS);
    gt_log_add(lg, t1, gt_now(), SITE_FLUSH);
    queue_unlock(qu);
    flushes++;
}

static void *worker(void *arg)
{
    struct gt_log *lg = arg;
    gt_gate_arrive();
    for (long i = 0; gt_now() < deadline; i++) {
        int v;
        queue_push(&q, lg, (int)i);
        gt_spin_until(gt_now() + THINK_NS);
        queue_pop(&q, lg, &v);
        if (i % FLUSH_EVERY == FLUSH_EVERY - 1)
            queue_flush(&q, lg);
        gt_sleep_until(gt_now() + THINK_NS);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int nthreads = argc > 1 ? atoi(argv[1]) : 3;
    int ms = argc > 2 ? atoi(argv[2]) : 1000;
    if (nthreads < 1 || nthreads > 16 || ms < 1) {
        fprintf(stderr, "usage: %s [THREADS 1..16 [DURATION_MS]]\n", argv[0]);
        return 2;
    }
    struct gt_log *logs = gt_alloc((size_t)nthreads, sizeof *logs);
    for (int i = 0; i < nthreads; i++)
        gt_log_init(&logs[i], 6 * (size_t)ms * 1000000 / (PUSH_HOLD_NS + POP_HOLD_NS) + 64);
    pthread_t *tids = gt_alloc((size_t)nthreads, sizeof *tids);
    for (int i = 0; i < nthreads; i++) {
        int rc = pthread_create(&tids[i], NULL, worker, &logs[i]);
        if (rc)
            gt_die("pthread_create", rc);
    }
    int64_t t0 = gt_gate_open(nthreads, &deadline, (int64_t)ms * 1000000);
    for (int i = 0; i < nthreads; i++) {
        int rc = pthread_join(tids[i], NULL);
        if (rc)
            gt_die("pthread_join", rc);
    }
    double duration = (double)(gt_now() - t0) / 1e9;

    struct gt_result res = {
        .workload = "gt_queue_o2",
        .object = "mutex",
        .addresses = { &q.m },
        .naddresses = 1,
        .threads = nthreads,
        .duration_s = duration,
        .nsites = N_SITES,
    };
    for (int s = 0; s < N_SITES; s++)
        res.site_names[s] = site_names[s];
    gt_sweep_holders(&res, logs, nthreads);
    gt_write_json(&res);
    fprintf(stderr, "gt_queue_o2: %ld flushes\n", flushes);
    return 0;
}
