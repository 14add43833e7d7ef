/*
 * gt_rwlock_writer: ground truth for rwlock blame with a slow writer
 * (docs/DESIGN.md rule 3: idleness accrued while a holder holds is blamed on the
 * call site where it releases; k readers holding together share it 1/k).
 *
 * One writer: thinks 1 ms off the CPU, takes the write lock, computes 3 ms
 * holding it, and releases at writer_release_site. READERS readers (default
 * 2): take the read lock, compute 50 us, release at reader_release_site,
 * think 100 us off the CPU. While the writer holds, the readers wait: most
 * of the idleness is the writer's. The writer in turn waits for readers
 * that hold (one or two at a time).
 *
 * Ground truth: every thread logs each lock call [just before, just after
 * it returns] as a wait and each hold [acquired, just before the unlock] at
 * its release site; gt_sweep_holders splits w(t) over the k holders at t.
 *
 * Usage: gt_rwlock_writer [READERS [DURATION_MS]]   (defaults 2 and 1000)
 */
#include "gt.h"

enum {
    SITE_WRITER,
    SITE_READER,
    N_SITES
};
static const char *const site_names[N_SITES] = { "writer_release_site", "reader_release_site" };

#define WRITER_HOLD_NS  3000000
#define WRITER_THINK_NS 1000000
#define READER_HOLD_NS  50000
#define READER_THINK_NS 100000

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static int64_t deadline;

__attribute__((noipa)) void writer_release_site(void);
__attribute__((noipa)) void reader_release_site(void);

void writer_release_site(void)
{
    int rc = pthread_rwlock_unlock(&rw);
    if (rc)
        gt_die("pthread_rwlock_unlock (writer)", rc);
}

void reader_release_site(void)
{
    int rc = pthread_rwlock_unlock(&rw);
    if (rc)
        gt_die("pthread_rwlock_unlock (reader)", rc);
}

static void *writer(void *arg)
{
    struct gt_log *lg = arg;
    gt_gate_arrive();
    for (;;) {
        gt_sleep_until(gt_now() + WRITER_THINK_NS);
        int64_t t0 = gt_now();
        if (t0 >= deadline)
            break;
        int rc = pthread_rwlock_wrlock(&rw);
        int64_t t1 = gt_now();
        if (rc)
            gt_die("pthread_rwlock_wrlock", rc);
        gt_log_add(lg, t0, t1, -1);
        gt_spin_until(t1 + WRITER_HOLD_NS);
        gt_log_add(lg, t1, gt_now(), SITE_WRITER);
        writer_release_site();
    }
    return NULL;
}

static void *reader(void *arg)
{
    struct gt_log *lg = arg;
    gt_gate_arrive();
    for (;;) {
        int64_t t0 = gt_now();
        if (t0 >= deadline)
            break;
        int rc = pthread_rwlock_rdlock(&rw);
        int64_t t1 = gt_now();
        if (rc)
            gt_die("pthread_rwlock_rdlock", rc);
        gt_log_add(lg, t0, t1, -1);
        gt_spin_until(t1 + READER_HOLD_NS);
        gt_log_add(lg, t1, gt_now(), SITE_READER);
        reader_release_site();
        gt_sleep_until(gt_now() + READER_THINK_NS);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int nreaders = argc > 1 ? atoi(argv[1]) : 2;
    int ms = argc > 2 ? atoi(argv[2]) : 1000;
    if (nreaders < 1 || nreaders > 16 || ms < 1) {
        fprintf(stderr, "usage: %s [READERS 1..16 [DURATION_MS]]\n", argv[0]);
        return 2;
    }
    int nthreads = nreaders + 1;
    struct gt_log *logs = gt_alloc((size_t)nthreads, sizeof *logs);
    /* Two entries (wait, hold) per loop; a loop takes at least hold+think. */
    gt_log_init(&logs[0], 2 * (size_t)ms * 1000000 / (WRITER_HOLD_NS + WRITER_THINK_NS) + 16);
    for (int i = 1; i < nthreads; i++)
        gt_log_init(&logs[i], 2 * (size_t)ms * 1000000 / (READER_HOLD_NS + READER_THINK_NS) + 16);
    pthread_t *tids = gt_alloc((size_t)nthreads, sizeof *tids);
    for (int i = 0; i < nthreads; i++) {
        int rc = pthread_create(&tids[i], NULL, i == 0 ? writer : reader, &logs[i]);
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
        .workload = "gt_rwlock_writer",
        .object = "rwlock",
        .addresses = { &rw },
        .naddresses = 1,
        .threads = nthreads,
        .duration_s = duration,
        .nsites = N_SITES,
    };
    for (int s = 0; s < N_SITES; s++)
        res.site_names[s] = site_names[s];
    int max_k = gt_sweep_holders(&res, logs, nthreads);
    gt_write_json(&res);
    fprintf(stderr, "gt_rwlock_writer: at most %d holders at once\n", max_k);
    return 0;
}
